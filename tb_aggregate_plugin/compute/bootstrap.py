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
  gather of the middle values): no loop over points.
* Most of the time goes to the percentiles, a partial sort of each point's ``reps`` statistics. Only
  the draws that can hold a point's 2.5% lowest or highest statistics *whatever its values* are
  computed and sorted (:func:`_tail_draws`: when 50 other draws each take at least as many of the k
  smallest values as a draw does, for every k, that draw is at or above all 50 at every point, so it
  is never needed for the lowest 50). It is exact, found once per run count (cached), and leaves about
  350 + 350 of 2,000 draws with 10 runs, 100 + 100 with 5; beyond about 17 runs every draw is used.
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

# Bootstrap statistics held at once (points of a block x draws): 8 MB of float64.
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
    reps, seed = int(reps), int(seed)
    ordered, m = _sorted_finite(values)
    lo = np.full(ordered.shape[1], np.nan)
    hi = np.full(ordered.shape[1], np.nan)
    for size in np.unique(m[m >= 2]):
        size = int(size)
        cols = np.flatnonzero(m == size)
        counts = _counts(size, reps, seed)
        draws, parts, picks = _layout(size, reps, seed, level)
        if draws is not None:
            counts = counts[draws]
        if center == "median":
            first, second = _middle(counts)
        else:
            weights_t = np.ascontiguousarray(_weights(counts, center).T)  # m x draws
        step = max(1, _CHUNK_VALUES // len(counts))
        for start in range(0, len(cols), step):
            block = cols[start : start + step]
            # block x draws, each row one point's statistics (a row for the partial sort)
            if center != "median":
                stat = ordered[:size, block].T @ weights_t
            else:
                by_point = np.ascontiguousarray(ordered[:size, block].T)
                stat = by_point[:, first]
                if size % 2 == 0:  # np.median's mean of the two middle values: (a + b) / 2
                    stat += by_point[:, second]
                    stat /= 2.0
            lo[block], hi[block] = _bounds(stat, parts, picks)
    return lo, hi


# A layout: which draws to compute (None: all), the column ranges of the statistics to partially sort
# with the ranks each needs (start, stop, kth), and per bound the columns of its two neighbouring order
# statistics with the interpolation weight between them (below, next, gamma).
Layout = tuple[np.ndarray | None, list[tuple[int, int, list[int]]], list[tuple[int, int, float]]]


def _plain_layout(reps: int, level: float) -> Layout:
    """Every draw, one partial sort at the ranks of both bounds (numpy's percentile arithmetic)."""
    percents = np.array([50.0 * (1.0 - level), 50.0 * (1.0 + level)])
    virtual = (reps - 1) * (percents / 100.0)  # as np.percentile computes its virtual index
    below = np.floor(virtual)
    gamma = virtual - below
    ranks = np.minimum(below.astype(np.intp), reps - 1).tolist()
    nexts = [min(rank + 1, reps - 1) for rank in ranks]
    kth = sorted(set(ranks) | set(nexts))
    return None, [(0, reps, kth)], list(zip(ranks, nexts, gamma.tolist()))


def _layout(m: int, reps: int, seed: int, level: float) -> Layout:
    """:func:`_plain_layout`, restricted to the draws that can reach either tail when that is known."""
    plain = _plain_layout(reps, level)
    (lo_rank, lo_next, lo_gamma), (hi_rank, hi_next, hi_gamma) = plain[2]
    tails = _tail_draws(m, reps, seed, lo_next + 1, reps - hi_rank)
    if tails is None:
        return plain
    low, high = tails
    # Columns: the lowest draws, then the highest. The lowest hold the same lowest order statistics
    # as all draws; the highest the same highest: rank r of all is rank r - (reps - len(high)) of them.
    n_low, shift = len(low), len(low) + len(high) - reps
    hi_cols = (hi_rank + shift, hi_next + shift)
    parts = [
        (0, n_low, sorted({lo_rank, lo_next})),
        (n_low, n_low + len(high), sorted({col - n_low for col in hi_cols})),
    ]
    picks = [(lo_rank, lo_next, lo_gamma), (*hi_cols, hi_gamma)]
    return np.concatenate([low, high]), parts, picks


def _bounds(stat: np.ndarray, parts: list[tuple[int, int, list[int]]], picks: list) -> list[np.ndarray]:
    """The bounds from ``stat`` (points x draws) as laid out (:data:`Layout`), partially sorted in
    place: ``np.percentile(stat, percents, axis=1)`` byte for byte for the plain layout (numpy's own
    also places the minimum and the maximum and looks for NaN, a fifth more time)."""
    for start, stop, kth in parts:
        stat[:, start:stop].partition(kth, axis=1)
    out = []
    for below, nxt, gamma in picks:
        a, b = stat[:, below], stat[:, nxt]
        diff = b - a  # numpy's lerp, exact at both ends
        out.append(b - diff * (1.0 - gamma) if gamma >= 0.5 else a + diff * gamma)
    return out


# Largest search for the draws of the tails (distinct draws squared x (m - 1) comparisons): a few
# tens of ms at 2,000 draws of 17 runs, once (cached). Beyond it (more runs, or many more draws; and
# little to gain there) every draw is used.
_DOMINANCE_BUDGET = 2000 * 2000 * 16


@functools.lru_cache(maxsize=64)
def _tail_draws(m: int, reps: int, seed: int, lowest: int, highest: int) -> tuple[np.ndarray, ...] | None:
    """The draws that can be among the ``lowest`` lowest, and among the ``highest`` highest, statistics
    of a point, whatever its values and whichever center; None when not worth finding.

    Draw ``j`` is at most draw ``i`` at every point when ``cumsum(w_j) >= cumsum(w_i)`` elementwise:
    ``j`` takes at least as many of the k smallest values for every k, so each order statistic of its
    sample is at most ``i``'s, and the mean, the median and the IQM grow with each order statistic.
    Keeping only the draws with fewer than ``lowest`` others at most them (copies of the same counts
    not counted) keeps the ``lowest`` lowest statistics of every point: each dropped draw is at or
    above ``lowest`` kept ones, its own if none of them is dropped, else those of the first dropped
    one among them in decreasing order of ``sum(cumsum(w))`` (an order that puts every draw after the
    draws at most it). The same upside down for the highest.
    """
    if not 100 <= reps < 2**24:  # few draws: nothing to gain; the counts below are summed in float32
        return None
    counts = _counts(m, reps, seed)
    upto = np.cumsum(counts[:, :-1], axis=1, dtype=np.int32)  # the last is m for every draw
    distinct, which, copies = np.unique(upto, axis=0, return_inverse=True, return_counts=True)
    if len(distinct) ** 2 * max(m - 1, 1) > _DOMINANCE_BUDGET:
        return None
    columns = np.ascontiguousarray(distinct.T)
    below = np.ones((len(distinct),) * 2, dtype=bool)  # [i, j]: draws like j are at most draws like i
    step = np.empty_like(below)
    for column in columns:
        np.greater_equal(column[None, :], column[:, None], out=step)
        below &= step
    as_float = below.astype(np.float32)  # sums of counts of draws: exact below 2**24
    copies_f = copies.astype(np.float32)
    others_below = as_float @ copies_f - copies
    others_above = copies_f @ as_float - copies
    which = which.ravel()
    low = np.flatnonzero((others_below < lowest)[which])
    high = np.flatnonzero((others_above < highest)[which])
    if len(low) + len(high) > reps * 3 // 4:  # little to gain
        return None
    low.flags.writeable = high.flags.writeable = False  # shared by every call (cached)
    return low, high
