"""The statistics of "A beats B" (compute.bootstrap, compute.compare) against independent references
computed on the raw values: scipy.stats, statsmodels and rliable, never our own code (one test also
checks that the bootstrap's shortcut, computing only the draws that can reach a tail, changes nothing).

Monte-Carlo tolerances: two percentile bootstraps of the same data with different random draws agree
only up to their sampling error. The 2.5% quantile of R resamples has a standard error of about
sqrt(0.025 * 0.975 / R) / f(x) ~ 2.7 sd / sqrt(R) for a near-normal bootstrap distribution of
standard deviation sd: 0.012 sd at R = 50,000, 0.017 sd for the difference of two such estimates.
Bounds are compared within 0.1 sd (about 6 standard errors) at R = 50,000: a wrong statistic, a
wrong resample size or a wrong percentile moves a bound by far more.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import pytest
from rliable import metrics as rly
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestIndPower

from tb_aggregate_plugin.compute import bootstrap, compare, stats
from tb_aggregate_plugin.compute.bootstrap import boot_ci, iqm
from tb_aggregate_plugin.compute.compare import along_curve, group_table, pair_table, score_run

# Nothing here may warn: a warning raised anywhere in these tests fails them.
pytestmark = pytest.mark.filterwarnings("error")

REFERENCE_STAT = {
    "mean": np.mean,
    "median": np.median,
    "iqm": lambda x, axis=-1: sps.trim_mean(x, 0.25, axis=axis),
}
BIG_REPS = 50_000


def ragged(seed: int = 0, runs: int = 13, points: int = 120) -> np.ndarray:
    """runs x points with holes, an infinity, and points with 0, 1, 2, 3, 4 and 5 runs."""
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(runs, points))
    values[rng.random(values.shape) < 0.25] = np.nan
    for present in range(6):
        values[present:, present] = np.nan
    values[0, 10] = np.inf
    values[:, 20] = np.round(values[:, 20], 0)  # ties
    return values


def finite(column: np.ndarray) -> np.ndarray:
    return column[np.isfinite(column)]


def rliable_library():
    """rliable.library (its interval estimates), or None when it cannot be imported here."""
    try:
        from rliable import library
    except Exception:  # its bootstrap dependency fails to import with some versions of pandas
        return None
    return library


# --- IQM and bootstrap intervals of a curve -----------------------------------------------------------


def test_iqm_is_trim_mean_of_each_points_finite_values():
    values = ragged()
    got = iqm(values)
    for j, column in enumerate(values.T):
        x = finite(column)
        if len(x) == 0:
            assert np.isnan(got[j])
        else:
            assert got[j] == pytest.approx(sps.trim_mean(x, 0.25), rel=1e-13, abs=1e-15)
            assert got[j] == pytest.approx(rly.aggregate_iqm(x[:, None]), rel=1e-13, abs=1e-15)


def test_iqm_keeps_the_precision_of_small_values_after_large_ones():
    values = np.array([[1e17, 1.0, 2.0, 3.0, -1e17, 4.0, 5.0, 6.0]]).T  # keeps 1..6
    assert iqm(values)[0] == sps.trim_mean(values[:, 0], 0.25) == 3.5


@pytest.mark.parametrize("center", list(REFERENCE_STAT))
def test_boot_ci_is_the_percentile_bootstrap_of_each_points_values(center):
    """Each point's bounds are the percentiles of the statistic of its resampled values: the draws
    are rebuilt as arrays of raw values and the reference statistic computed on each."""
    values, reps, seed = ragged(), 300, 5
    lo, hi = boot_ci(values, center, reps=reps, seed=seed)
    reference = REFERENCE_STAT[center]
    for j, column in enumerate(values.T):
        x = np.sort(finite(column))
        if len(x) < 2:
            assert np.isnan(lo[j]) and np.isnan(hi[j])
            continue
        draws = np.array([np.repeat(x, w) for w in bootstrap._counts(len(x), reps, seed)])
        expected = np.percentile(reference(draws, axis=1), [2.5, 97.5])
        assert [lo[j], hi[j]] == pytest.approx(expected, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("level", [0.95, 0.8, 0.99])
def test_only_the_draws_that_can_reach_a_tail_give_the_same_bounds(level, monkeypatch):
    """The draws that cannot be among a point's lowest or highest statistics, whatever its values, are
    left out (bootstrap._tail_draws): heavy-tailed values and every small run count, against all."""
    rng = np.random.default_rng(21)
    values = rng.standard_cauchy(size=(17, 400))
    for runs in range(2, 18):
        values[runs:, (runs - 2) * 25 : (runs - 1) * 25] = np.nan
    values[:, -20:] = np.round(values[:, -20:])  # ties
    pruned = {center: boot_ci(values, center, seed=3, level=level) for center in REFERENCE_STAT}
    assert any(bootstrap._layout(m, 2000, 3, level)[0] is not None for m in range(2, 18))
    monkeypatch.setattr(bootstrap, "_tail_draws", lambda *args: None)
    for center, (lo, hi) in pruned.items():
        all_lo, all_hi = boot_ci(values, center, seed=3, level=level)
        np.testing.assert_allclose(lo, all_lo, rtol=1e-14, atol=1e-300)
        np.testing.assert_allclose(hi, all_hi, rtol=1e-14, atol=1e-300)


def test_percentiles_are_numpys_byte_for_byte():
    rng = np.random.default_rng(3)
    for reps in (1, 2, 3, 40, 2000, 2001):
        for level in (0.95, 0.9, 0.5, 0.999):
            stat = np.round(rng.normal(size=(20, reps)), 1)  # ties too
            percents = [50 * (1 - level), 50 * (1 + level)]
            got = bootstrap._bounds(stat.copy(), *bootstrap._plain_layout(reps, level)[1:])
            expected = np.percentile(stat, percents, axis=1)
            assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])


@pytest.mark.parametrize("center", list(REFERENCE_STAT))
def test_boot_ci_agrees_with_scipy_bootstrap(center):
    x = np.random.default_rng(11).gamma(2.0, size=30)  # skewed: the percentile CI is not symmetric
    lo, hi = boot_ci(x[:, None], center, reps=BIG_REPS, seed=1)
    ref = sps.bootstrap(
        (x,), REFERENCE_STAT[center], n_resamples=BIG_REPS, method="percentile", rng=np.random.default_rng(2)
    )
    tolerance = 0.1 * ref.standard_error  # see the module docstring
    assert lo[0] == pytest.approx(ref.confidence_interval.low, abs=tolerance)
    assert hi[0] == pytest.approx(ref.confidence_interval.high, abs=tolerance)


def test_iqm_ci_agrees_with_rliable_interval_estimates():
    library = rliable_library()
    if library is None:
        pytest.skip("rliable.library cannot be imported in this environment (scipy's bootstrap is the check)")
    x = np.random.default_rng(12).gamma(2.0, size=(30, 1))
    try:
        _, intervals = library.get_interval_estimates(
            {"x": x}, lambda s: np.array([rly.aggregate_iqm(s)]), reps=BIG_REPS, random_state=None
        )
    except TypeError as error:  # a version of its bootstrap dependency with another signature
        pytest.skip(f"rliable.library does not run here: {error}")
    lo, hi = boot_ci(x, "iqm", reps=BIG_REPS, seed=1)
    ref = sps.bootstrap((x[:, 0],), REFERENCE_STAT["iqm"], n_resamples=2000, rng=np.random.default_rng(2))
    assert [lo[0], hi[0]] == pytest.approx(intervals["x"][:, 0], abs=0.1 * ref.standard_error)


def test_boot_ci_is_deterministic_and_depends_only_on_each_points_values():
    values = ragged(1)
    for center in REFERENCE_STAT:
        a = boot_ci(values, center, reps=500, seed=7)
        b = boot_ci(values.copy(), center, reps=500, seed=7)
        assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()
        c = boot_ci(values, center, reps=500, seed=8)
        has = ~np.isnan(a[0])
        assert not np.array_equal(a[0][has], c[0][has])
        # A point alone has the same interval as among the others: the same draws (the matrix
        # product's rounding may differ in the last bit with its shapes).
        for j in (6, 30, 77):
            alone = boot_ci(values[:, j : j + 1], center, reps=500, seed=7)
            assert [alone[0][0], alone[1][0]] == pytest.approx([a[0][j], a[1][j]], rel=1e-14, abs=1e-15)


def test_boot_ci_needs_two_values_and_stays_in_range():
    values = np.array([[1.0, np.nan, 2.0, 5.0], [np.nan, np.nan, 4.0, 5.0], [np.nan, np.nan, np.nan, 5.0]])
    for center in REFERENCE_STAT:
        lo, hi = boot_ci(values, center)
        assert np.isnan(lo[:2]).all() and np.isnan(hi[:2]).all()
        assert 2.0 <= lo[2] <= hi[2] <= 4.0
        assert lo[3] == hi[3] == 5.0
    lo, hi = boot_ci(np.empty((0, 3)), "mean")
    assert np.isnan(lo).all() and np.isnan(hi).all()


def test_boot_ci_rejects_bad_options():
    for kwargs in ({"center": "mode"}, {"center": "mean", "reps": 0}, {"center": "mean", "seed": -1}):
        with pytest.raises(ValueError):
            boot_ci(np.ones((3, 2)), **kwargs)


def test_boot_ci_is_fast_and_works_a_block_at_a_time():
    values = np.random.default_rng(0).normal(size=(10, 5000))
    start = time.perf_counter()
    boot_ci(values, "mean", reps=2000)
    # The target is well under 0.5 s on two cores (see benchmarks/bootstrap.py); 3 s leaves room for a
    # busy test machine while still catching a loop over points and resamples (tens of seconds).
    assert time.perf_counter() - start < 3.0


# --- Coverage ----------------------------------------------------------------------------------------


def coverage(lo: np.ndarray, hi: np.ndarray, truth: float = 0.0) -> float:
    return float(np.mean((lo <= truth) & (truth <= hi)))


def test_student_ci95_covers_the_true_mean_95_percent_of_the_time():
    trials = np.random.default_rng(2024).normal(size=(5, 4000))  # 5 runs x 4,000 trials
    got = stats.reduce(trials, ["ci95_lo", "ci95_hi"])
    share = coverage(got["ci95_lo"], got["ci95_hi"])
    print(f"ci95 (Student t) coverage at n=5: {share:.4f}")
    assert abs(share - 0.95) <= 0.015  # binomial sd at 4,000 trials is 0.0034: this is 4.4 sd


def test_bootstrap_ci_of_the_mean_under_covers_at_few_runs():
    """The percentile bootstrap is too narrow with few runs (it uses the n, not n - 1, variance and
    normal rather than t quantiles): about 0.85 at 5 runs, near 0.95 only with many runs."""
    shares = {}
    for n in (5, 20):
        trials = np.random.default_rng(2025 + n).normal(size=(n, 4000))
        shares[n] = coverage(*boot_ci(trials, "mean", reps=2000, seed=0))
        print(f"boot95 (mean) coverage at n={n}: {shares[n]:.4f}")
    assert 0.80 <= shares[5] <= 0.93
    assert shares[5] < shares[20] <= 0.97


# --- One score per run -------------------------------------------------------------------------------


def test_scores_of_a_run():
    x = np.arange(10.0) * 100
    y = np.array([5.0, 4.0, 3.0, np.nan, 2.5, 2.0, 2.2, 2.1, np.nan, 1.9])
    assert score_run(x, y, "final", True) == 1.9
    assert score_run(x, y, "best", True) == 1.9
    assert score_run(x, y, "best", False) == 5.0
    assert score_run(x, y, "tail", True) == 1.9  # last ceil(10 / 10) = 1 point
    ok = np.isfinite(y)
    assert score_run(x, y, "auc", True) == pytest.approx(np.trapezoid(y[ok], x[ok]) / 900.0, rel=1e-15)
    y30 = np.arange(30.0)
    assert score_run(np.arange(30.0), y30, "tail", False) == np.mean([27.0, 28.0, 29.0])  # 3 points, not 4
    assert score_run(np.arange(31.0), np.arange(31.0), "tail", False) == np.mean(np.arange(27.0, 31.0))


def test_a_diverged_run_keeps_its_best_value():
    x = np.arange(6.0)
    loss = np.array([3.0, 2.0, 1.5, 40.0, np.inf, np.nan])
    assert score_run(x, loss, "best", True) == 1.5
    assert score_run(x, loss, "final", True) == 40.0
    assert np.isnan(score_run(x, loss, "tail", True))  # its last 10% has no finite value
    reward = np.array([1.0, 5.0, 7.0, -np.inf, np.nan, np.nan])
    assert score_run(x, reward, "best", False) == 7.0


def test_scores_of_degenerate_runs():
    assert score_run(np.array([7.0]), np.array([0.3]), "auc", False) == 0.3
    for how in compare.SCORES:
        assert np.isnan(score_run(np.arange(3.0), np.full(3, np.nan), how, True))
        assert np.isnan(score_run(np.array([]), np.array([]), how, True))
    with pytest.raises(ValueError):
        score_run(np.arange(3.0), np.arange(3.0), "last", True)


def test_lower_is_better_follows_the_tag():
    assert compare.is_lower_better("train/loss") and compare.is_lower_better("val/Error_rate")
    assert compare.is_lower_better("eval/perplexity") and compare.is_lower_better("wer")
    assert not compare.is_lower_better("eval/accuracy") and not compare.is_lower_better("episode_return")


# --- Per group ---------------------------------------------------------------------------------------


def groups():
    rng = np.random.default_rng(42)
    return {
        "base": rng.normal(0.0, 1.0, 10),
        "wide": np.append(rng.normal(0.8, 2.0, 7), [np.nan, np.inf]),
        "tight": rng.normal(1.5, 0.3, 12),
        "solo": np.array([2.0, np.nan]),
    }


def test_group_table_against_references():
    scores = groups()
    table = group_table(scores, reps=BIG_REPS, seed=3)
    assert list(table.columns) == compare.GROUP_COLUMNS
    assert list(table["group"]) == list(scores)
    for _, row in table.iterrows():
        x = finite(scores[row["group"]])
        assert row["runs"] == len(x)
        assert row["mean"] == pytest.approx(np.mean(x)) and row["median"] == pytest.approx(np.median(x))
        assert row["iqm"] == pytest.approx(rly.aggregate_iqm(x[:, None]), rel=1e-13)
        if len(x) < 2:
            assert np.isnan(row[["std", "ci95_lo", "ci95_hi", "iqm_lo", "iqm_hi"]].astype(float)).all()
            continue
        assert row["std"] == pytest.approx(np.std(x, ddof=1))
        ci = sps.t.interval(0.95, len(x) - 1, loc=np.mean(x), scale=sps.sem(x))
        assert [row["ci95_lo"], row["ci95_hi"]] == pytest.approx(ci, rel=1e-12)
        rng = np.random.default_rng(4)
        ref = sps.bootstrap((x,), REFERENCE_STAT["iqm"], n_resamples=BIG_REPS, method="percentile", rng=rng)
        tolerance = 0.1 * ref.standard_error
        assert row["iqm_lo"] == pytest.approx(ref.confidence_interval.low, abs=tolerance)
        assert row["iqm_hi"] == pytest.approx(ref.confidence_interval.high, abs=tolerance)
    assert table.attrs["notes"] == [
        "group 'wide': 2 of 9 runs without a finite score left out",
        "group 'solo': 1 of 2 runs without a finite score left out",
        "group 'solo' has 1 run with a finite score: it takes part in no test",
    ]


def test_group_table_of_nothing():
    table = group_table({"none": np.array([np.nan]), "one": np.array([4.0])})
    assert list(table["runs"]) == [0, 1]
    assert np.isnan(table.loc[0, "mean"]) and table.loc[1, "iqm"] == 4.0
    assert "group 'one' has 1 run: it takes part in no test" in table.attrs["notes"]
    assert list(group_table({}).columns) == compare.GROUP_COLUMNS


# --- Per pair ----------------------------------------------------------------------------------------


def test_pair_table_against_references():
    scores = groups()
    table = pair_table(scores, reps=2000, seed=0)
    assert list(table.columns) == compare.PAIR_COLUMNS
    names = list(scores)
    assert list(zip(table["a"], table["b"])) == [
        (names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))
    ]
    tested = table[table["p"].notna()]
    assert len(tested) == 3  # every pair with 'solo' (one finite score) is left out
    assert np.allclose(tested["p_holm"], multipletests(tested["p"], method="holm")[1], rtol=1e-12)
    for _, row in tested.iterrows():
        a, b = finite(scores[row["a"]]), finite(scores[row["b"]])
        welch = sps.ttest_ind(a, b, equal_var=False)
        ci = welch.confidence_interval()
        assert row["diff"] == pytest.approx(np.mean(a) - np.mean(b), rel=1e-12)
        assert [row["diff_lo"], row["diff_hi"]] == pytest.approx([ci.low, ci.high], rel=1e-12)
        expected = [welch.statistic, welch.df, welch.pvalue]
        assert [row["t"], row["df"], row["p"]] == pytest.approx(expected, rel=1e-10)
        mwu = sps.mannwhitneyu(a, b, alternative="two-sided")
        assert row["p_mwu"] == pytest.approx(mwu.pvalue, rel=1e-12)
        improve = rly.probability_of_improvement(a[:, None], b[:, None])
        assert row["p_improve"] == pytest.approx(improve, rel=1e-12)
        d = abs(np.mean(a) - np.mean(b)) / math.sqrt((np.var(a, ddof=1) + np.var(b, ddof=1)) / 2)
        power = TTestIndPower().solve_power(effect_size=d, alpha=0.05, power=0.8, ratio=1)
        assert row["runs_needed"] == math.ceil(power)
    for _, row in table[table["p"].isna()].iterrows():
        assert "solo" in (row["a"], row["b"])
        assert row.drop(["a", "b"]).isna().all()


def test_probability_of_improvement_ci_agrees_with_a_stratified_scipy_bootstrap():
    rng = np.random.default_rng(8)
    a, b = rng.normal(0.5, 1.0, 12), rng.normal(0.0, 1.0, 9)

    def improvement(x, y, axis=-1):
        x, y = np.moveaxis(x, axis, -1), np.moveaxis(y, axis, -1)
        greater = (x[..., :, None] > y[..., None, :]) + 0.5 * (x[..., :, None] == y[..., None, :])
        return greater.mean(axis=(-2, -1))

    # Two samples, not paired: scipy resamples each one separately (stratified by group).
    ref = sps.bootstrap(
        (a, b), improvement, n_resamples=20_000, method="percentile", rng=np.random.default_rng(9), batch=2000
    )
    row = pair_table({"a": a, "b": b}, reps=20_000, seed=0).iloc[0]
    tolerance = 0.15 * ref.standard_error  # 20,000 resamples: 0.027 sd apart expected (module docstring)
    assert row["p_improve_lo"] == pytest.approx(ref.confidence_interval.low, abs=tolerance)
    assert row["p_improve_hi"] == pytest.approx(ref.confidence_interval.high, abs=tolerance)


def test_pair_table_against_a_baseline():
    scores = groups()
    table = pair_table(scores, baseline="tight")
    assert list(zip(table["a"], table["b"])) == [("base", "tight"), ("wide", "tight"), ("solo", "tight")]
    tested = table[table["p"].notna()]
    assert np.allclose(tested["p_holm"], multipletests(tested["p"], method="holm")[1], rtol=1e-12)
    with pytest.raises(ValueError):
        pair_table(scores, baseline="nope")
    assert list(pair_table({"only": np.ones(3)}).columns) == compare.PAIR_COLUMNS


def test_tables_are_deterministic():
    rng = np.random.default_rng(13)
    scores = {"a": rng.normal(0.0, 1.0, 20), "b": rng.normal(0.3, 1.0, 20), "c": rng.normal(0.1, 1.0, 25)}
    for table in (group_table, pair_table):
        first = table(scores, seed=4)
        again = table({k: v.copy() for k, v in scores.items()}, seed=4)
        assert first.to_csv(float_format="%.17g") == again.to_csv(float_format="%.17g")
        other = table(scores, seed=5).select_dtypes("number").to_numpy()
        assert not np.array_equal(first.select_dtypes("number").to_numpy(), other)


def test_identical_groups_do_not_differ():
    for values in ([1.0, 2.0, 3.0], [2.0, 2.0, 2.0]):
        row = pair_table({"a": np.array(values), "b": np.array(values)}).iloc[0]
        assert row["diff"] == 0 and row["t"] == 0 and row["p"] == 1 and row["p_holm"] == 1
        assert row["p_mwu"] == 1 and row["p_improve"] == 0.5
        assert row["p_improve"] == rly.probability_of_improvement(np.c_[values], np.c_[values])
        assert np.isnan(row["runs_needed"])
    table = pair_table({"a": np.full(3, 2.0), "b": np.full(4, 2.0)})
    assert table.loc[0, "diff_lo"] == table.loc[0, "diff_hi"] == 0.0
    assert table.attrs["notes"] == [
        "'a' vs 'b': within each group every run has the same score, the same in both: "
        "no difference (t = 0, p = 1)"
    ]


def test_zero_variance_with_different_means_is_a_certain_difference():
    table = pair_table({"low": np.full(3, 1.0), "high": np.full(4, 2.0)})
    row = table.iloc[0]
    assert row["t"] == -np.inf and row["p"] == 0 and row["diff"] == -1.0
    assert row["diff_lo"] == row["diff_hi"] == -1.0
    assert row["p_improve"] == row["p_improve_lo"] == row["p_improve_hi"] == 0.0
    assert row["runs_needed"] == 2
    # One side constant only: an ordinary Welch test.
    a, b = np.full(3, 1.0), np.array([2.0, 2.5, 3.5])
    row = pair_table({"a": a, "b": b}).iloc[0]
    with warnings.catch_warnings():  # the reference warns of a constant sample (ours must not)
        warnings.simplefilter("ignore", RuntimeWarning)
        welch = sps.ttest_ind(a, b, equal_var=False)
    assert [row["t"], row["p"]] == pytest.approx([welch.statistic, welch.pvalue], rel=1e-12)


def test_holm_matches_statsmodels():
    rng = np.random.default_rng(6)
    for m in (1, 2, 5, 40):
        p = rng.random(m) ** 3
        p[: m // 3] = p[-1]  # ties
        assert np.allclose(compare.holm(p), multipletests(p, method="holm")[1], rtol=1e-14, atol=0)
    p = np.array([0.01, np.nan, 0.04, 0.03])
    expected = multipletests(p[~np.isnan(p)], method="holm")[1]
    assert np.allclose(compare.holm(p)[[0, 2, 3]], expected) and np.isnan(compare.holm(p)[1])


@pytest.mark.parametrize("d", [0.05, 0.2, 0.5, 0.8, 1.0, 1.3, 2.0, 3.0, 5.0])
def test_runs_needed_matches_statsmodels_power(d):
    power = TTestIndPower().solve_power(effect_size=d, alpha=0.05, power=0.8, ratio=1)
    assert compare._runs_needed(d) == math.ceil(power)


def test_runs_needed_edge_cases():
    assert np.isnan(compare._runs_needed(0.0)) and np.isnan(compare._runs_needed(float("nan")))
    assert compare._runs_needed(float("inf")) == 2 and compare._runs_needed(40.0) == 2


# --- Along the curve ---------------------------------------------------------------------------------


def test_along_curve_against_references():
    rng = np.random.default_rng(10)
    a, b = rng.normal(size=(6, 200)), rng.normal(size=(5, 200))
    b[:, 60:90] += 2.5
    b[:4, 150:] = np.nan  # one run left there: no test
    a[:, 5] = np.nan
    got = along_curve(a, b)
    expected = np.full(200, np.nan)
    for j in range(200):
        x, y = finite(a[:, j]), finite(b[:, j])
        if len(x) >= 2 and len(y) >= 2:
            expected[j] = sps.ttest_ind(x, y, equal_var=False).pvalue
    assert np.allclose(got["p"], expected, rtol=1e-10, equal_nan=True)
    tested = ~np.isnan(expected)
    assert np.allclose(got["p_bh"][tested], sps.false_discovery_control(expected[tested]), rtol=1e-12)
    assert np.isnan(got["p_bh"][~tested]).all()
    assert np.array_equal(got["differ"], np.nan_to_num(got["p_bh"], nan=1.0) < 0.05)
    # The ranges are the runs of consecutive differing points.
    rebuilt = np.zeros(200, dtype=bool)
    for start, end in got["ranges"]:
        assert start <= end and not rebuilt[start : end + 1].any()
        rebuilt[start : end + 1] = True
    assert np.array_equal(rebuilt, got["differ"])
    assert all(e + 1 < s for (_, e), (s, _) in zip(got["ranges"], got["ranges"][1:]))
    assert any(s <= 60 and 89 <= e for s, e in got["ranges"]) or sum(got["differ"][60:90]) >= 20


def test_along_curve_ranges_and_edge_cases():
    same = np.tile(np.arange(5.0), (3, 1))
    got = along_curve(same, same.copy())
    assert (got["p"] == 1).all() and got["ranges"] == [] and not got["differ"].any()
    low, high = np.zeros((3, 6)), np.zeros((4, 6))
    high[:, [0, 2, 3, 5]] = 1.0  # zero variance, different means: p = 0 there
    got = along_curve(low, high)
    assert got["ranges"] == [(0, 0), (2, 3), (5, 5)]
    got = along_curve(np.ones((1, 4)), np.ones((3, 4)))
    assert np.isnan(got["p"]).all() and np.isnan(got["p_bh"]).all() and got["ranges"] == []
    with pytest.raises(ValueError):
        along_curve(np.ones((2, 3)), np.ones((2, 4)))


def test_nothing_warns_on_degenerate_inputs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nasty = np.array([[np.nan, 1.0, np.inf, 2.0], [np.nan, np.nan, -np.inf, 2.0]])
        iqm(nasty)
        for center in REFERENCE_STAT:
            boot_ci(nasty, center)
        scores = {"none": np.array([np.nan]), "one": np.array([1.0]), "flat": np.ones(3), "also": np.ones(2)}
        group_table(scores)
        pair_table(scores)
        along_curve(nasty, nasty)
        for how in compare.SCORES:
            score_run(np.zeros(3), np.array([np.nan, 1.0, np.nan]), how, True)
        # Huge values (a run about to diverge): sums overflow to infinities, quietly.
        huge = np.array([[1e308, -1e308, 1e308, 5.0], [1e308, 1e308, 1e307, 6.0], [1e308, -1e308, 1e308, 7]])
        iqm(huge)
        for center in REFERENCE_STAT:
            boot_ci(huge, center)
        group_table({"a": huge[:, 0], "b": huge[:, 1]})
        pair_table({"a": huge[:, 0], "b": huge[:, 1], "c": huge[:, 2]})
        along_curve(huge, huge[::-1])
        for how in compare.SCORES:
            score_run(np.arange(3.0), huge[:, 0], how, False)
