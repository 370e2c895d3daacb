"""The engine's fast reductions (one sort for median and quantiles, plain numpy when there is no NaN)
give numpy's own nan-aware numbers, whatever the pattern of missing values."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tb_aggregate_plugin import stats

NAMES = ["mean", "median", "std", "var", "sem", "min", "max", "count", "q05", "q25", "q50", "q75", "q95"]


def matrices():
    rng = np.random.default_rng(7)
    full = rng.normal(size=(9, 40))
    ragged = full.copy()
    ragged[rng.random(ragged.shape) < 0.3] = np.nan  # holes anywhere
    ragged[:, 0] = np.nan  # a point no run reaches
    ragged[1:, 1] = np.nan  # a point only one run reaches
    ragged[2:, 2] = np.nan  # two runs
    ties = np.round(full, 1)  # repeated values
    return {"full": full, "ragged": ragged, "ties": ties, "one run": full[:1], "two runs": ragged[:2]}


@pytest.mark.parametrize("name", list(matrices()))
def test_reductions_match_numpy_nan_functions(name):
    values = matrices()[name]
    got = stats.reduce(values, NAMES)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        n = np.sum(~np.isnan(values), axis=0)
        var = np.nanvar(values, axis=0, ddof=1)
        var[n < 2] = np.nan
        expected = {
            "mean": np.nanmean(values, axis=0),
            "median": np.nanmedian(values, axis=0),
            "var": var,
            "std": np.sqrt(var),
            "sem": np.sqrt(var) / np.sqrt(n),
            "min": np.nanmin(values, axis=0),
            "max": np.nanmax(values, axis=0),
            "count": n,
        }
        for q in (5, 25, 50, 75, 95):
            expected[f"q{q:02d}"] = np.nanquantile(values, q / 100, axis=0)
    np.testing.assert_array_equal(got["n"], n)
    for key, want in expected.items():
        np.testing.assert_allclose(got[key], want, rtol=1e-12, atol=1e-14, equal_nan=True, err_msg=key)


def test_nanmedian_of_wall_times_matches_numpy():
    walls = 1.7e9 + np.cumsum(np.random.default_rng(3).random((5, 30)), axis=1)
    walls[3, 10:] = np.nan
    walls[:, 29] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(stats.nanmedian(walls), np.nanmedian(walls, axis=0))


def test_smoothing_leaves_its_input_as_it_was():
    values = np.random.default_rng(1).normal(size=50)
    values[[3, 9]] = [np.nan, np.inf]
    before = values.copy()
    first = stats.smooth(values, 0.6)
    np.testing.assert_array_equal(values, before)
    np.testing.assert_array_equal(stats.smooth(values, 0.6), first)
