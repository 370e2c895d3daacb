"""Smoothing and reductions across runs, vectorised over points with numpy/scipy."""

from __future__ import annotations

import warnings

import numpy as np
from scipy import signal
from scipy import stats as sps

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
    finite = np.isfinite(values)
    v = values[finite]
    if len(v) == 0 or np.all(v == v[0]):
        return values
    ema = signal.lfilter([1.0 - weight], [1.0, -weight], v)
    debias = 1.0 - weight ** np.arange(1, len(v) + 1)
    out = values.copy()
    out[finite] = ema / debias
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
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(values, axis=0) if len(values) else np.full(values.shape[1], np.nan)
        var = np.nanvar(values, axis=0, ddof=1)
        var[n < 2] = np.nan
        std = np.sqrt(var)
        sem = std / np.sqrt(n)
        stats = {"mean": mean, "var": var, "std": std, "sem": sem}
        for name in names:
            if name in out:
                continue
            if name in stats:
                out[name] = stats[name]
            elif name == "count":
                out[name] = n
            elif name == "median":
                out[name] = np.nanmedian(values, axis=0)
            elif name == "min":
                out[name] = np.nanmin(values, axis=0)
            elif name == "max":
                out[name] = np.nanmax(values, axis=0)
            elif name in ("ci95_lo", "ci95_hi"):
                half = sps.t.ppf(0.975, np.maximum(n - 1, 1)) * sem
                out["ci95_lo"], out["ci95_hi"] = mean - half, mean + half
            elif name.startswith("q"):
                out[name] = np.nanquantile(values, quantile_level(name), axis=0)
            else:  # validated upstream; a new name must be added here
                raise KeyError(name)
    return out


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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(sps.ttest_ind(a, b, equal_var=False).pvalue)
