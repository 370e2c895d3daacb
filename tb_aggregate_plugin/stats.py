"""Smoothing and reductions across runs, vectorised over points with numpy/scipy."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

# scipy is imported where it is needed (t quantiles, Welch's test): importing scipy.stats costs a
# fifth of a second, a good part of the start-up time of a one-shot command.

# What each band needs (lower, upper); "center" stands for the chosen center statistic.
BAND_BOUNDS = {
    "std": ("center-std", "center+std"),
    "sem": ("center-sem", "center+sem"),
    "ci95": ("ci95_lo", "ci95_hi"),
    "minmax": ("min", "max"),
    "iqr": ("q25", "q75"),
    "none": ("center", "center"),
}


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

    TensorBoard's debiased average after k values, ``(1 - w) * sum(w**(k-i) * v_i) / (1 - w**k)``, is
    the weighted mean ``sum(w**(k-i) * v_i) / sum(w**(k-i))``: pandas' adjusted exponentially
    weighted mean, which skips NaN when told to (``ignore_na``). All rows go in one call.
    """
    if weight == 0.0 or values.size == 0:
        return values
    finite = np.isfinite(values)
    present = np.where(finite, values, np.nan)
    frame = pd.DataFrame(present.T, copy=False)  # one column per run
    ema = frame.ewm(alpha=1.0 - weight, adjust=True, ignore_na=True).mean().to_numpy().T
    out = np.where(finite, ema, values)  # non-finite values pass through
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # rows without any finite value
        constant = np.nanmin(present, axis=1) == np.nanmax(present, axis=1)
    out[constant] = values[constant]  # exactly constant, as TensorBoard keeps them
    return out


def quantile_level(name: str) -> float:
    """``q05`` -> 0.05."""
    return int(name[1:]) / 100.0


def needed_for(reductions: tuple[str, ...], center: str, band: str) -> list[str]:
    """The statistics to compute for a table with ``reductions`` and a chart with center and band."""
    names = list(reductions) + [center]
    for bound in BAND_BOUNDS[band]:
        for part in bound.replace("+", " ").replace("-", " ").split():
            if part != "center" and part not in names:
                names.append(part)
    return list(dict.fromkeys(names))


def reduce(values: np.ndarray, names: list[str]) -> dict[str, np.ndarray]:
    """Statistics over runs (axis 0) at each point of ``values`` (runs x points), NaN left out.

    Always returns ``n`` (finite values per point). ``std``/``var`` use the n-1 denominator and are
    NaN for n < 2; ``ci95_lo/hi`` are ``mean -/+ t(0.975, n-1) * sem``.
    """
    n = np.isfinite(values).sum(axis=0)
    out: dict[str, np.ndarray] = {"n": n}
    # Without NaN (the usual case) numpy's plain reductions give the same numbers several times faster.
    has_nan = bool(np.isnan(values).any())
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if not len(values):
            mean = np.full(values.shape[1], np.nan)
        else:
            mean = np.nanmean(values, axis=0) if has_nan else values.mean(axis=0)
        var = np.nanvar(values, axis=0, ddof=1) if has_nan else values.var(axis=0, ddof=1)
        var[n < 2] = np.nan
        std = np.sqrt(var)
        sem = std / np.sqrt(n)
        stats = {"mean": mean, "var": var, "std": std, "sem": sem}
        ordered = None  # values sorted along runs, shared by the median and the quantiles
        for name in names:
            if name in out:
                continue
            if name in stats:
                out[name] = stats[name]
            elif name == "count":
                out[name] = n
            elif name in ("min", "max"):
                if has_nan:
                    out[name] = np.nanmin(values, axis=0) if name == "min" else np.nanmax(values, axis=0)
                else:
                    out[name] = values.min(axis=0) if name == "min" else values.max(axis=0)
            elif name == "median" or name.startswith("q"):
                if ordered is None:
                    ordered = sorted_runs(values)
                level = 0.5 if name == "median" else quantile_level(name)
                out[name] = ordered_quantile(*ordered, level)
            elif name in ("ci95_lo", "ci95_hi"):
                from scipy import stats as sps

                half = sps.t.ppf(0.975, np.maximum(n - 1, 1)) * sem
                out["ci95_lo"], out["ci95_hi"] = mean - half, mean + half
            else:  # validated upstream; a new name must be added here
                raise KeyError(name)
    return out


def sorted_runs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values`` (runs x points) sorted along runs, NaN last, and the non-NaN count per point.

    One sort serves the median and every quantile: several times faster than ``np.nanmedian`` or
    ``np.nanquantile``, which copy and mask the array once per statistic.
    """
    return np.sort(values, axis=0), np.count_nonzero(~np.isnan(values), axis=0)


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


def nanmedian(values: np.ndarray) -> np.ndarray:
    """Median over runs (axis 0) at each point, NaN left out (NaN where a point has no value)."""
    return ordered_quantile(*sorted_runs(values), 0.5)


def band_bounds(stats: dict[str, np.ndarray], center: str, band: str) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper edge of the chosen band around the chosen center."""
    c = stats[center]
    edges = []
    for bound in BAND_BOUNDS[band]:
        if bound == "center":
            edges.append(c)
        elif bound.startswith("center"):
            sign = 1.0 if bound[6] == "+" else -1.0
            edges.append(c + sign * stats[bound[7:]])
        else:
            edges.append(stats[bound])
    return edges[0], edges[1]


def welch_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided Welch's t-test p-value of two samples (NaN left out); NaN when either has < 2."""
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if len(a) < 2 or len(b) < 2:
        return float("nan")
    from scipy import stats as sps

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(sps.ttest_ind(a, b, equal_var=False).pvalue)
