"""Putting the runs of one group on one x grid: repeated steps first, then exact or interpolated.

Every function works on whole arrays; the only Python loops are over runs, never over points.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..series import Series


def resolve_repeats(series: Series, how: str) -> Series:
    """Sort by step and keep one value per step: the ``last`` write, the ``first``, or their ``mean``.

    Non-finite values become NaN. A stable sort keeps file order among writes of the same step.
    The returned arrays may be the input's own (never modified): treat them as read-only.
    """
    step, wall, value = series.step, series.wall, series.value.astype(np.float64, copy=False)
    if np.any(step[1:] < step[:-1]):  # loaders return steps in order: sort only when they are not
        order = np.argsort(step, kind="stable")
        step, wall, value = step[order], wall[order], value[order]
    finite = np.isfinite(value)
    if not finite.all():  # a copy: the input may be a cached series, never written to
        value = np.where(finite, value, np.nan)
    if len(step) < 2 or np.all(step[1:] != step[:-1]):
        return Series(step, wall, value)
    unique, first_index, counts = np.unique(step, return_index=True, return_counts=True)
    if how == "first":
        keep = first_index
    elif how == "last":
        keep = first_index + counts - 1
    else:  # mean over the finite writes of each step; NaN only if none is finite
        finite = np.isfinite(value)
        sums = np.add.reduceat(np.where(finite, value, 0.0), first_index)
        n = np.add.reduceat(finite.astype(np.int64), first_index)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(n > 0, sums / np.maximum(n, 1), np.nan)
        walls = np.add.reduceat(wall, first_index) / counts
        return Series(unique, walls, mean)
    return Series(step[keep], wall[keep], value[keep])


@dataclasses.dataclass
class Aligned:
    """The runs of a group on one grid: ``values[i, j]`` is run i at ``grid[j]`` (NaN: no value)."""

    grid: np.ndarray
    values: np.ndarray
    walls: np.ndarray  # wall time of run i at grid[j] (NaN outside the run); step axis only
    method: str  # "exact" or "interpolate"


def shared_steps(runs: list[Series]) -> np.ndarray | None:
    """The step array every run holds, when all hold the same strictly increasing steps (the usual
    case: nothing repeated, nothing to sort or interpolate); else ``None``."""
    first = runs[0].step
    if len(first) == 0 or any(len(s.step) != len(first) for s in runs):
        return None
    if np.any(first[1:] <= first[:-1]):
        return None
    # Loaders that share one step array between runs (a sliced load does) need no comparison.
    if not all(s.step is first for s in runs) and not (np.vstack([s.step for s in runs]) == first).all():
        return None
    return first


def stack_shared(runs: list[Series], how: str) -> Aligned | None:
    """The runs stacked as they are, when all hold the same strictly increasing steps (see
    :func:`shared_steps`); else ``None``. Non-finite values become NaN.

    The same result as :func:`resolve_repeats` then :func:`align` on the step axis, in a few calls
    for all runs instead of several per run.
    """
    first = shared_steps(runs)
    if first is None:
        return None
    # One new float64 array, whatever the runs' dtype (float32 values are widened as they are copied).
    values = np.vstack([s.value for s in runs], dtype=np.float64)
    values[~np.isfinite(values)] = np.nan
    return Aligned(first.astype(np.float64), values, np.vstack([s.wall for s in runs]), stacked_method(how))


def stacked_method(how: str) -> str:
    """How runs on the same steps are said to be aligned: as asked, ``exact`` for ``auto``."""
    return "interpolate" if how == "interpolate" else "exact"


@dataclasses.dataclass
class Paired:
    """One run's series with its x from another tag: ``series`` holds the steps where the run logged
    both, ``x`` the other tag's value there (finite and strictly increasing); ``dropped`` counts the
    points left out because x was not finite or did not increase."""

    series: Series
    x: np.ndarray
    dropped: int


def pair_with_x(series: Series, x_series: Series) -> Paired:
    """``series`` (resolved: sorted, one value per step) at the steps where ``x_series`` (resolved too)
    has a value, with that value as its x. Points whose x is not finite, or not above every earlier x
    of the run, are left out: x must increase strictly, and a point that goes back is not drawn."""
    common, at, at_x = np.intersect1d(series.step, x_series.step, assume_unique=True, return_indices=True)
    xs = x_series.value[at_x]
    finite = np.isfinite(xs)
    # Strictly above the largest x before it (the points already left out never exceed that maximum).
    before = np.maximum.accumulate(np.where(finite, xs, -np.inf))
    before = np.concatenate(([-np.inf], before[:-1]))
    keep = finite & (xs > before)
    at = at[keep]
    paired = Series(common[keep], series.wall[at], series.value[at])
    return Paired(paired, xs[keep], int(len(keep) - np.count_nonzero(keep)))


def _x_of(series: Series, x: str) -> np.ndarray:
    if x == "step":
        return series.step.astype(np.float64)
    if x == "relative":
        return series.wall - series.wall.min()
    return series.wall


def align(runs: list[Series], how: str, x: str = "step", xs: list[np.ndarray] | None = None) -> Aligned:
    """Align a group's runs (already resolved with :func:`resolve_repeats`, none empty).

    ``how``: ``exact`` puts each value at its own step on the union of the runs' steps;
    ``interpolate`` interpolates linearly onto that union, each run only inside its own first..last
    step (never extrapolated); ``auto`` is exact when all runs share their steps, else interpolate.
    Any other axis (``relative``, ``wall``, or ``tag:NAME`` with each run's x given as ``xs``, see
    :func:`pair_with_x`) is always interpolated onto an evenly spaced grid spanning the runs' x, with
    as many points as the longest run.
    """
    if x != "step":
        xs = xs if xs is not None else [_x_of(s, x) for s in runs]
        orders = [np.argsort(v, kind="stable") for v in xs]
        lo = min(v.min() for v in xs)
        hi = max(v.max() for v in xs)
        grid = np.linspace(lo, hi, max(len(v) for v in xs)) if hi > lo else np.array([lo])
        values = np.vstack([_interp_inside(grid, v[o], s.value[o]) for v, o, s in zip(xs, orders, runs)])
        return Aligned(grid, values, np.full_like(values, np.nan), "interpolate")

    first = runs[0].step
    shared = all(len(s.step) == len(first) and np.array_equal(s.step, first) for s in runs[1:])
    if how == "auto":
        how = "exact" if shared else "interpolate"
    if shared:  # the same steps: stack as they are (exact and interpolate agree here)
        grid = first.astype(np.float64)
        return Aligned(grid, np.vstack([s.value for s in runs]), np.vstack([s.wall for s in runs]), how)

    grid_steps = np.unique(np.concatenate([s.step for s in runs]))
    grid = grid_steps.astype(np.float64)
    values = np.full((len(runs), len(grid)), np.nan)
    walls = np.full((len(runs), len(grid)), np.nan)
    for i, s in enumerate(runs):
        at = np.searchsorted(grid_steps, s.step)
        if how == "interpolate":
            xs = s.step.astype(np.float64)
            values[i] = _interp_inside(grid, xs, s.value)
            walls[i] = _interp_inside(grid, xs, s.wall)
        values[i, at] = s.value  # a run's own points are exact, even next to a NaN
        walls[i, at] = s.wall
    return Aligned(grid, values, walls, how)


def _interp_inside(grid: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Linear interpolation of (xs, ys) at grid, NaN outside [xs[0], xs[-1]] and next to NaN values."""
    out = np.interp(grid, xs, ys)
    out[(grid < xs[0]) | (grid > xs[-1])] = np.nan
    return out
