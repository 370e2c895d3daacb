"""Smoothing, reductions across runs and band edges, vectorised over points with numpy/scipy."""

from __future__ import annotations

import numpy as np

# scipy is imported where it is needed (t quantiles, Welch's test, smoothing): importing scipy.stats
# costs a fifth of a second and scipy.signal half a second, a good part of the start-up time of a
# one-shot command. The plugin imports them when it is constructed (warm_up), not at a request.

# Values per temporary array of a reduction done a few runs at a time (512 kB of float64).
_CHUNK_VALUES = 1 << 16

# Each band's (lower, upper) edge as (statistic, sign): sign 0 is the statistic itself, -1 and +1 the
# chosen center minus and plus it; no statistic is the center itself. Read only through the functions
# below, so a band's edges are spelled in this one place.
BAND_EDGES: dict[str, tuple[tuple[str | None, int], tuple[str | None, int]]] = {
    "std": (("std", -1), ("std", +1)),
    "sem": (("sem", -1), ("sem", +1)),
    "ci95": (("ci95_lo", 0), ("ci95_hi", 0)),
    "minmax": (("min", 0), ("max", 0)),
    "iqr": (("q25", 0), ("q75", 0)),
    "boot95": (("boot95_lo", 0), ("boot95_hi", 0)),
    "none": ((None, 0), (None, 0)),
}


def edge_names(center: str, band: str) -> tuple[str, str]:
    """The names of the band's edges around ``center``: ``mean-std``/``mean+std``, ``ci95_lo``/``ci95_hi``,
    ``min``/``max``; the center's own name twice for ``none``."""
    names = []
    for stat, sign in BAND_EDGES[band]:
        if stat is None:
            names.append(center)
        else:
            names.append(stat if sign == 0 else f"{center}{'+' if sign > 0 else '-'}{stat}")
    return names[0], names[1]


def smooth(values: np.ndarray, weight: float) -> np.ndarray:
    """TensorBoard's debiased exponential moving average of one run, in step order.

    Same as the scalar dashboard: ``last = last * w + (1 - w) * v``, divided by ``1 - w**k`` after k
    finite values; non-finite values are passed through and do not move the average; a constant
    series stays exactly constant.
    """
    if weight == 0.0 or len(values) == 0:
        return values
    return smooth_rows(values[np.newaxis, :], weight)[0]


def smooth_rows(values: np.ndarray, weight: float) -> np.ndarray:
    """:func:`smooth` of each row of ``values`` (runs x steps, each row one run in step order).

    All rows go through one recursive filter (TensorBoard's own recurrence, in C). A row with
    non-finite values is done again packed to its finite values, so they neither move the average
    nor count in ``k``, and they come back unchanged at their place. A row whose finite values are
    all equal is returned as it is.
    """
    if weight == 0.0 or values.size == 0:
        return values
    values = np.asarray(values, dtype=np.float64)
    out = _ema(values, weight)
    # A NaN or an infinity carries to the end of its row's average (finite values end there only
    # if the average overflows, and doing such a row again gives the same): the last column tells
    # which rows have any, without another pass over every value.
    dirty = np.flatnonzero(~np.isfinite(out[:, -1]))
    if len(dirty):
        out[dirty], lo, hi = _ema_of_finite(values[dirty], weight)
        constant = dirty[lo == hi]
        out[constant] = values[constant]
    # Constant runs stay exactly constant, as in TensorBoard: only a row that ends on the value it
    # starts with can be one, and only those are compared in full.
    maybe = np.flatnonzero(values[:, 0] == values[:, -1])
    if len(maybe):
        constant = maybe[(values[maybe] == values[maybe, :1]).all(axis=1)]
        out[constant] = values[constant]
    return out


def _ema(values: np.ndarray, weight: float) -> np.ndarray:
    """Debiased EMA of each row of finite ``values`` (a new array)."""
    from scipy.signal import lfilter  # imported ahead by the plugin (warm_up): it takes half a second

    # y[k] = w * y[k-1] + (1 - w) * x[k] from y = 0: the same operations as TensorBoard's loop.
    out = lfilter([1.0 - weight], [1.0, -weight], values, axis=1)
    debias = 1.0 - weight ** np.arange(1, values.shape[1] + 1, dtype=np.float64)
    # 1 - w**k rounds to 1 after some steps (about 70 at w=0.6): only the columns before need dividing.
    short = int(np.searchsorted(debias, 1.0))
    out[:, :short] /= debias[:short]
    return out


def _ema_of_finite(values: np.ndarray, weight: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows with non-finite values: the EMA over each row's finite values only (the others left as
    they are), and the min and max of those finite values (inf and -inf for a row without any)."""
    finite = np.isfinite(values)
    out = values.copy()
    lo = np.where(finite, values, np.inf).min(axis=1)
    hi = np.where(finite, values, -np.inf).max(axis=1)
    rows, cols = np.nonzero(finite)
    if len(rows):
        # Each finite value moves left over the gaps before it: its column becomes its k - 1.
        packed_col = (np.cumsum(finite, axis=1) - 1)[rows, cols]
        packed = np.zeros((len(values), int(packed_col.max()) + 1))  # zeros after a row's end: unused
        packed[rows, packed_col] = values[rows, cols]
        out[rows, cols] = _ema(packed, weight)[rows, packed_col]
    return out, lo, hi


def warm_up() -> None:
    """Import what smoothing needs ahead of the first request that smooths (about half a second)."""
    import scipy.signal  # noqa: F401


def quantile_level(name: str) -> float:
    """``q05`` -> 0.05."""
    return int(name[1:]) / 100.0


def needed_for(reductions: tuple[str, ...], center: str, band: str) -> list[str]:
    """The statistics to compute for a table with ``reductions`` and a chart with center and band."""
    names = list(reductions) + [center] + [stat for stat, _ in BAND_EDGES[band] if stat is not None]
    return list(dict.fromkeys(names))


def reduce(
    values: np.ndarray,
    names: list[str],
    *,
    center: str = "mean",
    boot_reps: int = 2000,
    seed: int = 0,
    width: int | None = None,
) -> dict[str, np.ndarray]:
    """Statistics over runs (axis 0) at each point of ``values`` (runs x points), NaN left out.

    Always returns ``n`` (finite values per point). ``std``/``var`` use the n-1 denominator and are
    NaN for n < 2; ``ci95_lo/hi`` are ``mean -/+ t(0.975, n-1) * sem``; ``iqm`` is the interquartile
    mean; ``boot95_lo/hi`` the 95% percentile-bootstrap CI of ``center`` (``boot_reps`` resamples
    drawn from ``seed``; NaN for n < 2). Only what ``names`` needs is computed (no variance for
    ``mean``, no sort without a median or quantile).

    ``width``: when ``values`` is a block of at least two columns of a wider array, that array's
    number of columns. Every statistic but the bootstrap's is then the same, bit for bit, as the
    whole array's at those columns (sums over runs go in run order either way; the sums of squares
    are made as many runs at a time as for the whole array).
    """
    with np.errstate(all="ignore"):
        sums = values.sum(axis=0)  # also the mean's sums
    # Every value finite: a NaN or an inf carries into its point's sum (an overflow only takes the
    # longer way below, which gives the same numbers).
    all_finite = bool(np.isfinite(sums).all())
    if all_finite:
        n = np.full(values.shape[1], values.shape[0], dtype=np.int_)
        has_nan = False
    else:
        n = np.isfinite(values).sum(axis=0)
        has_nan = bool(np.isnan(values).any())
    out: dict[str, np.ndarray] = {"n": n}
    done: dict[str, np.ndarray] = {}  # moments computed once, for whichever names need them

    def moment(name: str) -> np.ndarray:
        if name not in done:
            # Without NaN (the usual case) numpy's plain reductions give the same numbers faster.
            if name == "mean":
                if not len(values):
                    done[name] = np.full(values.shape[1], np.nan)
                elif has_nan:  # np.nanmean's own arithmetic, without its warning for an empty point
                    done[name] = np.where(np.isnan(values), 0.0, values).sum(axis=0) / n
                else:  # values.mean(axis=0) divides the same sums the same way
                    done[name] = sums / len(values)
            elif name == "var":  # np.nanvar(ddof=1)'s arithmetic, a few runs at a time
                squares = _sum_of_squares(values, moment("mean"), has_nan, width or values.shape[1])
                var = squares / np.maximum(n - 1, 1)
                var[n < 2] = np.nan
                done[name] = var
            elif name == "std":
                done[name] = np.sqrt(moment("var"))
            else:  # sem
                done[name] = moment("std") / np.sqrt(n)
        return done[name]

    # No warnings to silence: nothing here warns (NaN-aware minima and maxima are fmin/fmax, as in
    # np.nanmin/np.nanmax, without their warning for an empty point), and floating-point errors are
    # ignored through np.errstate, which is per thread: warnings.catch_warnings is not, and tags are
    # reduced on several threads (engine.run).
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ordered = None  # values sorted along runs, shared by the median and the quantiles
        for name in names:
            if name in out:
                continue
            if name in ("mean", "var", "std", "sem"):
                out[name] = moment(name)
            elif name == "count":
                out[name] = n
            elif name in ("min", "max"):
                if has_nan:
                    out[name] = (np.fmin if name == "min" else np.fmax).reduce(values, axis=0)
                else:
                    out[name] = values.min(axis=0) if name == "min" else values.max(axis=0)
            elif name == "median" or name.startswith("q"):
                if ordered is None:  # all finite: every value is present, no need to count them
                    ordered = (np.sort(values, axis=0), n) if all_finite else sorted_runs(values)
                level = 0.5 if name == "median" else quantile_level(name)
                out[name] = ordered_quantile(*ordered, level)
            elif name == "iqm":
                from .bootstrap import iqm

                out[name] = iqm(values)
            elif name in ("boot95_lo", "boot95_hi"):
                from .bootstrap import boot_ci

                out["boot95_lo"], out["boot95_hi"] = boot_ci(values, center, reps=boot_reps, seed=seed)
            elif name in ("ci95_lo", "ci95_hi"):
                # scipy.stats.t.ppf is this function; scipy.special alone imports in a third of the time.
                from scipy.special import stdtrit

                mean, half = moment("mean"), stdtrit(np.maximum(n - 1, 1), 0.975) * moment("sem")
                out["ci95_lo"], out["ci95_hi"] = mean - half, mean + half
            else:  # validated upstream; a new name must be added here
                raise KeyError(name)
    return out


def _sum_of_squares(values: np.ndarray, mean: np.ndarray, skip_nan: bool, width: int) -> np.ndarray:
    """``((values - mean) ** 2).sum(axis=0)``, NaN values counted as no deviation when ``skip_nan``
    (as np.nanvar does), a few runs at a time: the squares of every value at once would be a new
    array as large as ``values`` (two reducing threads, two of them), and fresh memory is slow.
    How many runs at a time is set by ``width``, the columns of the whole array ``values`` is part
    of: the partial sums, and so the last bits, do not depend on how the columns are cut."""
    out = np.zeros(values.shape[1])
    step = max(1, _CHUNK_VALUES // max(width, 1))
    for start in range(0, len(values), step):
        rows = values[start : start + step]
        part = rows - mean
        if skip_nan:
            part[np.isnan(rows)] = 0.0
        part *= part
        out += part.sum(axis=0)
    return out


def sorted_runs(values: np.ndarray, *, overwrite: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``values`` (runs x points) sorted along runs, NaN last, and the non-NaN count per point.
    ``overwrite``: sort ``values`` itself rather than a copy (its contents are then lost).

    One sort serves the median and every quantile: several times faster than ``np.nanmedian`` or
    ``np.nanquantile``, which copy and mask the array once per statistic.
    """
    present = np.count_nonzero(~np.isnan(values), axis=0)
    if not overwrite:
        return np.sort(values, axis=0), present
    values.sort(axis=0)
    return values, present


def ordered_quantile(ordered: np.ndarray, present: np.ndarray, level: float) -> np.ndarray:
    """Per point, the ``level`` quantile of its non-NaN values, as ``np.nanquantile`` (linear) and
    ``np.nanmedian`` compute it; NaN where a point has no value."""
    if ordered.shape[0] == 0:
        return np.full(ordered.shape[1], np.nan)
    last = np.maximum(present - 1, 0)
    if level == 0.5:  # the median: mean of the two middle values, as np.median
        lo = np.take_along_axis(ordered, (last // 2)[None, :], axis=0)[0]
        hi = np.take_along_axis(ordered, ((present // 2).clip(max=last))[None, :], axis=0)[0]
        result = (lo + hi) / 2.0
    else:
        virtual = level * last
        below = np.floor(virtual)
        gamma = virtual - below
        below = below.astype(np.intp)
        a = np.take_along_axis(ordered, below[None, :], axis=0)[0]
        b = np.take_along_axis(ordered, np.minimum(below + 1, last)[None, :], axis=0)[0]
        diff = b - a  # numpy's lerp, exact at both ends
        result = np.where(gamma >= 0.5, b - diff * (1.0 - gamma), a + diff * gamma)
    result[present == 0] = np.nan
    return result


def nanmedian(values: np.ndarray, *, overwrite: bool = False) -> np.ndarray:
    """Median over runs (axis 0) at each point, NaN left out (NaN where a point has no value).
    ``overwrite``: sort ``values`` itself rather than a copy (its contents are then lost)."""
    return ordered_quantile(*sorted_runs(values, overwrite=overwrite), 0.5)


def last_finite(values: np.ndarray) -> np.ndarray:
    """Per run (row of ``values``, runs x points), its last finite value; NaN for a run with none."""
    if values.shape[1] and np.isfinite(values[:, -1]).all():  # the usual case: one column to look at
        return values[:, -1]
    finite = np.isfinite(values)
    last = values.shape[1] - 1 - np.argmax(finite[:, ::-1], axis=1)
    return np.where(finite.any(axis=1), values[np.arange(len(values)), last], np.nan)


def band_bounds(stats: dict[str, np.ndarray], center: str, band: str) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper edge of the chosen band around the chosen center."""
    c = stats[center]
    edges = [
        c if stat is None else (stats[stat] if sign == 0 else c + sign * stats[stat])
        for stat, sign in BAND_EDGES[band]
    ]
    return edges[0], edges[1]
