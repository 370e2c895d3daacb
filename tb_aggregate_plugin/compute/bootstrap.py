"""Interquartile mean and percentile-bootstrap intervals of a group's curve, at every point at once.

A curve is ``values``: a ``runs x points`` float array, NaN where a run has no value at a point.
Each point is summarised over its *finite* values only (an infinity counts as no value, like NaN).

How the bootstrap is vectorised (the decision, and why it is exact):

* A percentile bootstrap of one point draws, ``reps`` times, ``m`` of its ``m`` finite values with
  replacement, computes the statistic, and takes the 2.5 and 97.5 percentiles of the ``reps``
  statistics. A draw is fully described by how many times each value is drawn: a multinomial count
  vector ``w`` (``m`` trials, ``m`` equally likely cells).
* The counts are exchangeable: which cell gets which count does not change their distribution, so
  ``w`` may be applied to the point's values *sorted*, ``s``. The k-th smallest value of the draw is
  then ``s[i]`` for the ``i`` with ``cumsum(w)[i-1] < k <= cumsum(w)[i]``, whatever the values: the
  median of the draw is the mean of ``s`` at one or two such indices; the mean is ``w @ s / m``; the
  IQM keeps ranks ``g+1 .. m-g`` (``g = m // 4``), so ``s[i]`` counts ``cumsum(w)[i] - cumsum(w)[i-1]``
  times with both clipped to ``[g, m - g]``: a weighted sum of ``s`` too.
* Points with the same number ``m`` of finite values (one or two counts in practice: all runs, and
  fewer runs where some stopped early) therefore share one count matrix ``W`` (``reps x m``), and a
  statistic at all of them is one matrix product ``weights(W) @ sorted values`` (for the median, one
  gather of the middle values): no loop over points. Most of the time goes to the percentiles, a
  partial sort of each point's ``reps`` statistics.
* Each point's interval is exactly a percentile bootstrap of that point's values. Points that share
  ``W`` have correlated Monte-Carlo errors (the band's small wiggles follow the data rather than the
  random draws); nothing here uses the joint distribution across points, only each point's own.
* ``W`` comes from ``np.random.default_rng([seed, m])``: the same array, ``reps``, ``seed`` and ``level``
  give the same bytes (also whatever the number of BLAS threads), and a point's interval depends only
  on its own values, not on the other points of the array (adding a run elsewhere does not move it;
  alone or among other points it may differ in the last bit, as the matrix product's rounding depends
  on the shapes it is given).
* Memory is bounded: the ``points x reps`` statistics are made a block of points at a time
  (:data:`_CHUNK_VALUES` values), never ``reps x runs x points``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import numpy as np

F = TypeVar("F", bound=Callable)

CENTERS = ("mean", "median", "iqm")

# Bootstrap statistics held at once (points of a block x reps): 8 MB of float64.
_CHUNK_VALUES = 1 << 20


def quiet(func: F) -> F:
    """``func`` run with numpy's floating-point warnings off (an overflow of huge values, a 0 / 0 where a
    point has no value: each has its answer in the result). A new ``np.errstate`` per call: it is per
    thread, ``warnings.catch_warnings`` is not, and one shared instance is not reentrant."""

    @functools.wraps(func)
    def run(*args, **kwargs):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return func(*args, **kwargs)

    return run  # type: ignore[return-value]


def _sorted_finite(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values`` (runs x points) as float64 sorted along runs with non-finite values last (as NaN),
    and the count of finite values per point."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"values must be a runs x points array, got shape {values.shape}")
    finite = np.isfinite(values)
    return np.sort(np.where(finite, values, np.nan), axis=0), finite.sum(axis=0)


@quiet
def iqm(values: np.ndarray) -> np.ndarray:
    """Interquartile mean over runs at each point: ``scipy.stats.trim_mean(x, 0.25)`` of the point's
    finite values ``x`` (drops ``m // 4`` values at each end, ``m`` the finite count); NaN where m == 0.

    One sort along runs; the kept ranks are summed with a mask rather than as a difference of cumulative
    sums, which would lose the precision of small values that follow large ones.
    """
    ordered, m = _sorted_finite(values)
    g = m // 4  # int(0.25 * m): 0.25 * m is exact in float64
    rank = np.arange(ordered.shape[0])[:, None]
    kept = (rank >= g) & (rank < m - g)
    return np.where(kept, ordered, 0.0).sum(axis=0) / (m - 2 * g)  # 0 / 0 = NaN where m == 0


def _weights(counts: np.ndarray, center: str) -> np.ndarray:
    """Per bootstrap draw (rows of ``counts``, reps x m), the weight of each *sorted* value in the
    draw's mean or IQM: the statistic of a draw is ``weights @ sorted values``."""
    m = counts.shape[1]
    if center == "mean":
        return counts / m
    upto = np.cumsum(counts, axis=1)  # draws up to and including each sorted value
    g = m // 4  # IQM: ranks g+1 .. m-g of the draw are kept
    return (np.clip(upto, g, m - g) - np.clip(upto - counts, g, m - g)) / (m - 2 * g)


def _middle(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per bootstrap draw (rows of ``counts``, reps x m), the indices of the sorted values at the
    draw's middle ranks (the same twice for odd m): its median is their mean."""
    m = counts.shape[1]
    upto = np.cumsum(counts, axis=1)
    # The value holding rank r (1-based) comes after every value whose draws end before r.
    return np.count_nonzero(upto < (m + 1) // 2, axis=1), np.count_nonzero(upto < m // 2 + 1, axis=1)


def _counts(m: int, reps: int, seed: int) -> np.ndarray:
    """``reps`` multinomial draws of ``m`` values among ``m`` (reps x m), from ``seed`` and ``m`` only."""
    rng = np.random.default_rng([seed, m])
    return rng.multinomial(m, np.full(m, 1.0 / m), size=reps)


def _check(center: str, reps: int, seed: int, level: float) -> None:
    if center not in CENTERS:
        raise ValueError(f"center must be one of {CENTERS}, got {center!r}")
    if int(reps) != reps or reps < 1:
        raise ValueError(f"reps must be a positive integer, got {reps!r}")
    if int(seed) != seed or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be between 0 and 1, got {level!r}")


@quiet
def boot_ci(
    values: np.ndarray, center: str, *, reps: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Per point, the percentile-bootstrap confidence interval of ``center`` of its finite values.

    ``values`` is ``runs x points``; ``center`` is ``"mean"``, ``"median"`` or ``"iqm"``. Each point's
    ``m`` finite values are resampled ``reps`` times (with replacement, ``m`` at a time); the bounds are
    the ``(1 - level) / 2`` and ``(1 + level) / 2`` percentiles of the ``reps`` statistics, numpy's
    default (linear) percentile. Returns ``(lo, hi)``, NaN where a point has fewer than 2 values.
    Deterministic: the same values, ``reps``, ``seed`` and ``level`` give the same bytes.
    """
    _check(center, reps, seed, level)
    ordered, m = _sorted_finite(values)
    lo = np.full(ordered.shape[1], np.nan)
    hi = np.full(ordered.shape[1], np.nan)
    percents = [50.0 * (1.0 - level), 50.0 * (1.0 + level)]
    step = max(1, _CHUNK_VALUES // reps)
    for size in np.unique(m[m >= 2]):
        size = int(size)
        cols = np.flatnonzero(m == size)
        counts = _counts(size, reps, seed)
        if center == "median":
            first, second = _middle(counts)
        else:
            weights_t = np.ascontiguousarray(_weights(counts, center).T)  # m x reps
        for start in range(0, len(cols), step):
            block = cols[start : start + step]
            # block x reps, each row one point's statistics (a row of reps for the partial sort)
            if center != "median":
                stat = ordered[:size, block].T @ weights_t
            else:
                by_point = np.ascontiguousarray(ordered[:size, block].T)
                stat = by_point[:, first]
                if size % 2 == 0:  # np.median's mean of the two middle values: (a + b) / 2
                    stat += by_point[:, second]
                    stat /= 2.0
            lo[block], hi[block] = _percentiles(stat, percents)
    return lo, hi


def _percentiles(stat: np.ndarray, percents: list[float]) -> list[np.ndarray]:
    """``np.percentile(stat, percents, axis=1)`` (linear, the default), byte for byte, with one partial
    sort of ``stat`` in place at the four ranks it needs; numpy's own also places the minimum and the
    maximum and looks for NaN, which costs a fifth more here."""
    n = stat.shape[1]
    virtual = (n - 1) * (np.asarray(percents, dtype=np.float64) / 100.0)  # numpy's arithmetic
    below = np.floor(virtual)
    gamma = virtual - below
    ranks = np.minimum(below.astype(np.intp), n - 1)
    nexts = np.minimum(ranks + 1, n - 1)
    stat.partition(np.unique(np.concatenate([ranks, nexts])), axis=1)
    out = []
    for rank, nxt, g in zip(ranks, nexts, gamma):
        a, b = stat[:, rank], stat[:, nxt]
        diff = b - a  # numpy's lerp, exact at both ends
        out.append(b - diff * (1.0 - g) if g >= 0.5 else a + diff * g)
    return out
