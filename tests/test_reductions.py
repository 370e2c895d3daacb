"""The engine's fast reductions (one sort for median and quantiles, plain numpy when there is no NaN)
give numpy's own nan-aware numbers, whatever the pattern of missing values."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from reference import tensorboard_smoothing

from tb_aggregate_plugin.compute import stats

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


@pytest.mark.parametrize("name", list(matrices()))
def test_reductions_warn_nothing(name, monkeypatch):
    """Points no run or one run reaches give NaN without a warning, and without silencing one: the
    reductions run on several threads at once (engine.run), and warnings.catch_warnings changes the
    filters of the whole process, so threads entering and leaving it can undo each other's."""

    def process_wide(*args, **kwargs):
        raise AssertionError("warnings.catch_warnings used in a reduction")

    stats.reduce(matrices()[name], ["ci95_lo"])  # scipy.stats imported (its import uses the filters)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with monkeypatch.context() as patched:
            patched.setattr(warnings, "catch_warnings", process_wide)
            stats.reduce(matrices()[name], NAMES + ["ci95_lo", "ci95_hi"])
    assert [str(w.message) for w in caught] == []


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


# -- smoothing against TensorBoard's own loop ----------------------------------------------------


CONSTANT_ROWS = [3, 4, 7]


def smoothing_rows():
    rng = np.random.default_rng(11)
    rows = 50.0 + rng.normal(size=(11, 300)).cumsum(axis=1) * 0.1
    rows[1, [0, 1, 40, 299]] = np.nan  # NaN at the start, inside and at the end
    rows[2, [5, 6, 200]] = [np.inf, -np.inf, np.nan]  # passed through, the average does not move
    rows[3] = 2.5  # a constant run stays exactly constant
    rows[4] = 2.5
    rows[4, [0, 10, 299]] = np.nan  # constant where finite: kept as it is too
    rows[5] = np.nan  # nothing finite at all
    rows[6, -1] = rows[6, 0]  # ends on the value it starts with, yet not constant
    rows[7] = 0.0
    rows[7, ::2] = -0.0  # zeros of both signs are equal: constant
    rows[8] *= 1e-300  # tiny and huge values
    rows[9] *= 1e300
    rows[10, :-1] = np.nan  # one finite value, at the end
    return rows


@pytest.mark.parametrize("weight", [0.3, 0.6, 0.9, 0.999])
def test_smoothing_is_tensorboards_loop_on_every_kind_of_row(weight):
    values = smoothing_rows()
    before = values.copy()
    got = stats.smooth_rows(values, weight)
    want = np.array([tensorboard_smoothing(list(row), weight) for row in values])
    np.testing.assert_array_equal(values, before)  # the input is left as it was
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, equal_nan=True)
    # Exactly the input where TensorBoard keeps it: non-finite values and constant runs.
    kept = ~np.isfinite(values)
    kept[CONSTANT_ROWS] = True
    np.testing.assert_array_equal(got[kept], values[kept])
    # Each row alone (smooth) gives the same numbers as all rows at once.
    for row, smoothed in zip(values, got):
        np.testing.assert_array_equal(stats.smooth(row, weight), smoothed)


def test_smoothing_of_long_runs_and_of_float32():
    # Far past the point where 1 - w**k rounds to 1, and an input that is not float64.
    values = 1.0 + np.random.default_rng(4).random((3, 5000)).astype(np.float32)
    for weight in (0.6, 0.999):
        got = stats.smooth_rows(values, weight)
        assert got.dtype == np.float64
        want = np.array([tensorboard_smoothing(row.astype(np.float64).tolist(), weight) for row in values])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_smoothing_weight_zero_and_empty_rows():
    values = smoothing_rows()
    assert stats.smooth_rows(values, 0.0) is values
    for shape in ((3, 0), (0, 5)):
        empty = np.empty(shape)
        assert stats.smooth_rows(empty, 0.6).shape == shape
    assert stats.smooth(np.empty(0), 0.6).shape == (0,)


# -- reductions done a few runs at a time --------------------------------------------------------


@pytest.mark.parametrize("shape", [(300, 1000), (3, 200_000), (1, 10), (0, 4)])
def test_variance_in_chunks_matches_numpy(shape):
    values = 1e3 + np.random.default_rng(9).normal(size=shape)
    got = stats.reduce(values, ["mean", "var", "std", "sem"])
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        var = values.var(axis=0, ddof=1) if shape[0] > 1 else np.full(shape[1], np.nan)
        mean = values.mean(axis=0)
    np.testing.assert_array_equal(got["n"], np.full(shape[1], shape[0]))
    np.testing.assert_allclose(got["mean"], mean, rtol=1e-14, atol=0, equal_nan=True)
    np.testing.assert_allclose(got["var"], var, rtol=1e-12, atol=0, equal_nan=True)
    np.testing.assert_allclose(got["sem"], np.sqrt(var) / np.sqrt(shape[0]), rtol=1e-12, equal_nan=True)


def test_only_the_statistics_asked_for_are_returned():
    values = np.random.default_rng(2).normal(size=(5, 8))
    assert set(stats.reduce(values, ["mean"])) == {"n", "mean"}
    assert set(stats.reduce(values, ["std", "q25"])) == {"n", "std", "q25"}
    values[1, 2] = np.inf  # no NaN but not finite: counted out of n, the plain mean is inf
    got = stats.reduce(values, ["mean", "count"])
    assert got["n"][2] == 4 and got["count"][2] == 4 and got["mean"][2] == np.inf
