"""Does group A beat group B? One score per run, then tests between groups of runs.

* :func:`score_run` turns a run's curve into one number (``final``, ``best``, ``tail``, ``auc``).
* :func:`group_table` summarises each group's scores: mean with a Student t 95% CI, median, and the
  interquartile mean with its percentile-bootstrap CI.
* :func:`pair_table` compares groups two by two: difference of means with Welch's 95% CI, Welch's
  t-test (p adjusted by Holm over the table), Mann-Whitney, the probability of improvement P(A > B)
  with its stratified bootstrap CI, and the runs per group that 80% power would need.
* :func:`along_curve` runs Welch's test at every point of two aligned curves, with p-values adjusted
  by Benjamini-Hochberg across the points.

Edge cases have plain answers rather than exceptions or warnings: a group with fewer than 2 finite
scores takes part in no test (NaN, and a line in ``DataFrame.attrs["notes"]``); two groups of equal
constant scores differ by nothing (t = 0, p = 1, P(A > B) = 0.5); zero variance with different means
is a certain difference (t = +-inf, p = 0). Floating-point warnings are off in every public function
(``bootstrap.quiet``: ``np.errstate`` per call, per thread).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

import numpy as np

from ..query import SCORES
from .bootstrap import boot_ci, iqm, quiet

if TYPE_CHECKING:
    import pandas as pd

# Tags whose best value is the lowest one (losses, errors, distances).
LOWER_IS_BETTER = re.compile(r"loss|err|perplexity|ppl|mse|mae|nll|cost|regret|wer|cer|distance", re.I)

GROUP_COLUMNS = ["group", "runs", "mean", "std", "ci95_lo", "ci95_hi", "median", "iqm", "iqm_lo", "iqm_hi"]
PAIR_COLUMNS = [
    "a", "b", "diff", "diff_lo", "diff_hi", "t", "df", "p", "p_holm", "p_mwu",
    "p_improve", "p_improve_lo", "p_improve_hi", "runs_needed",
]  # fmt: skip

ALPHA = 0.05  # two-sided level of every test and of the power analysis
POWER = 0.8


def is_lower_better(tag: str) -> bool:
    """Whether a tag's best value is its lowest (losses, errors) rather than its highest."""
    return bool(LOWER_IS_BETTER.search(tag))


@quiet
def score_run(x: np.ndarray, y: np.ndarray, how: str, lower_is_better: bool) -> float:
    """One run's score from its curve (``x`` increasing, ``y`` its values; NaN or inf = no value).

    ``final``: the last finite value. ``best``: the lowest finite value if ``lower_is_better``, else the
    highest (a run that diverged keeps the best value it reached before). ``tail``: the mean of the
    finite values among the run's last 10% of points (``ceil(len / 10)``, at least one). ``auc``: the
    mean of the curve over its own x range, ``trapezoid(y, x) / (x[-1] - x[0])`` over the points where
    both are finite (a single point gives its value). NaN when there is no finite value to use.
    """
    if how not in SCORES:
        raise ValueError(f"score must be one of {SCORES}, got {how!r}")
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or y.ndim != 1:
        raise ValueError(f"x and y must be 1-D of the same length, got {x.shape} and {y.shape}")
    finite = np.isfinite(y)
    if not finite.any():
        return float("nan")
    if how == "final":
        return float(y[finite][-1])
    if how == "best":
        return float(y[finite].min() if lower_is_better else y[finite].max())
    if how == "tail":
        # ceil(len / 10) in integers: 0.1 * 30 is 3.0000000000000004 in floating point, ceil 4.
        tail = y[-max(1, -(-len(y) // 10)) :]
        tail = tail[np.isfinite(tail)]
        return float(tail.mean()) if len(tail) else float("nan")
    both = finite & np.isfinite(x)
    xs, ys = x[both], y[both]
    if len(ys) == 0:
        return float("nan")
    span = xs[-1] - xs[0]
    if span == 0:  # one point, or every point at the same x: the curve's mean is its value
        return float(ys.mean())
    return float(np.trapezoid(ys, xs) / span)


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment of the finite p-values in ``p`` (NaN stays NaN): the i-th smallest of
    m is multiplied by m - i (i from 0), made non-decreasing in that order, and capped at 1."""
    p = np.asarray(p, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    idx = np.flatnonzero(np.isfinite(p))
    if len(idx):
        order = idx[np.argsort(p[idx], kind="stable")]
        m = len(order)
        adjusted = np.maximum.accumulate(p[order] * np.arange(m, 0, -1))
        out[order] = np.minimum(adjusted, 1.0)
    return out


def _finite(scores: np.ndarray) -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64).ravel()
    return scores[np.isfinite(scores)]


def _welch(diff, var_a, n_a, var_b, n_b):
    """Welch's t, degrees of freedom, two-sided p and standard error (arrays, any shape; called with
    floating-point warnings off).

    Zero standard error has a plain answer: no difference gives t = 0 and p = 1, a difference gives
    t = +-inf and p = 0. The degrees of freedom are NaN where both variances are zero (undefined).
    """
    from scipy import stats as sps

    va, vb = np.asarray(var_a, dtype=np.float64) / n_a, np.asarray(var_b, dtype=np.float64) / n_b
    se = np.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (n_a - 1) + vb**2 / (n_b - 1))
    t = np.where(se > 0, diff / se, np.where(diff == 0, 0.0, np.sign(diff) * np.inf))
    p = np.where(se > 0, 2.0 * sps.t.sf(np.abs(t), df), np.where(diff == 0, 1.0, 0.0))
    return t, df, p, se


def _runs_needed(d: float) -> float:
    """Runs per group that give a two-sided two-sample t-test at ``ALPHA`` a power of ``POWER`` for a
    true effect of Cohen's ``d``: the smallest integer n >= 2 (the ceiling of the real solution),
    from the noncentral t distribution. NaN for d == 0 or undefined; inf beyond 2**62 runs."""
    if math.isnan(d) or d == 0:
        return float("nan")
    if math.isinf(d):  # zero variance, different means: any test of 2 runs a group finds it
        return 2.0
    from scipy import stats as sps

    def power(n: int) -> float:
        df, nc = 2.0 * n - 2.0, d * math.sqrt(n / 2.0)
        upper, lower = sps.t.isf(ALPHA / 2, df), sps.t.ppf(ALPHA / 2, df)
        return float(sps.nct.sf(upper, df, nc) + sps.nct.cdf(lower, df, nc))

    if power(2) >= POWER:
        return 2.0
    lo, hi = 2, 4  # power(lo) < POWER <= power(hi): the power grows with n
    while not power(hi) >= POWER:  # (a NaN power counts as not enough)
        if hi >= 2**62:
            return float("inf")
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if power(mid) >= POWER else (mid, hi)
    return float(hi)


def _percentile_ci(stat: np.ndarray) -> tuple[float, float]:
    lo, hi = np.percentile(stat, [2.5, 97.5])
    return float(lo), float(hi)


def probability_of_improvement(a: np.ndarray, b: np.ndarray) -> float:
    """P(A > B) = U / (n_a n_b): the share of pairs (one run of each) where A's score is higher, ties
    counting 1/2 (0.5 for identical samples). NaN when either is empty."""
    a, b = _finite(a), _finite(b)
    if not len(a) or not len(b):
        return float("nan")
    return float(_ties_half(a, b).mean())


def _ties_half(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``n_a x n_b``: 1 where a_i > b_j, 1/2 where equal, 0 below."""
    return (a[:, None] > b[None, :]) + 0.5 * (a[:, None] == b[None, :])


def _improvement_ci(a: np.ndarray, b: np.ndarray, reps: int, seed: int) -> tuple[float, float]:
    """Stratified percentile-bootstrap 95% CI of P(A > B): A's and B's runs resampled separately.

    A draw is a pair of multinomial count vectors (how often each run is drawn), so P(A > B) of the
    draw is ``w_a @ K @ w_b / (n_a n_b)`` with ``K`` from :func:`_ties_half`: all ``reps`` at once.
    """
    rng = np.random.default_rng([seed, len(a), len(b)])  # independent streams for A and B
    w_a = rng.multinomial(len(a), np.full(len(a), 1.0 / len(a)), size=reps)
    w_b = rng.multinomial(len(b), np.full(len(b), 1.0 / len(b)), size=reps)
    stat = ((w_a @ _ties_half(a, b)) * w_b).sum(axis=1) / (len(a) * len(b))
    return _percentile_ci(stat)


def _run_count_note(name: str, total: int, n: int) -> list[str]:
    notes = []
    if total > n:
        notes.append(f"group {name!r}: {total - n} of {total} runs without a finite score left out")
    if n < 2:
        have = "1 run" if n == total == 1 else f"{'no' if n == 0 else 1} run with a finite score"
        notes.append(f"group {name!r} has {have}: it takes part in no test")
    return notes


@quiet
def group_table(scores: dict[str, np.ndarray], *, reps: int = 2000, seed: int = 0) -> pd.DataFrame:
    """One row per group (in the dict's order) summarising its runs' scores.

    Columns: ``group, runs, mean, std, ci95_lo, ci95_hi, median, iqm, iqm_lo, iqm_hi``. Non-finite
    scores are left out and not counted in ``runs``. ``std`` has the n - 1 denominator, ``ci95`` is
    ``mean -+ t(0.975, n - 1) * std / sqrt(n)``, ``iqm`` is the 25% trimmed mean with a 95%
    percentile-bootstrap CI (``reps`` resamples from ``seed``). One run: std and CIs are NaN.
    Edge cases are described in ``attrs["notes"]``.
    """
    import pandas as pd
    from scipy import stats as sps

    rows, notes = [], []
    for name, raw in scores.items():
        x = _finite(raw)
        n = len(x)
        notes += _run_count_note(name, np.size(raw), n)
        row = dict.fromkeys(GROUP_COLUMNS, np.nan) | {"group": name, "runs": n}
        if n:
            row["mean"], row["median"] = float(x.mean()), float(np.median(x))
            row["iqm"] = float(iqm(x[:, None])[0])
        if n >= 2:
            std = float(x.std(ddof=1))
            half = float(sps.t.ppf(0.975, n - 1)) * std / math.sqrt(n)
            row |= {"std": std, "ci95_lo": row["mean"] - half, "ci95_hi": row["mean"] + half}
            lo, hi = boot_ci(x[:, None], "iqm", reps=reps, seed=seed)
            row["iqm_lo"], row["iqm_hi"] = float(lo[0]), float(hi[0])
        rows.append(row)
    table = pd.DataFrame(rows, columns=GROUP_COLUMNS).astype({"runs": np.int64})
    table.attrs["notes"] = notes
    return table


def _pairs(names: list[str], baseline: str | None) -> list[tuple[str, str]]:
    if baseline is None:
        return [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))]
    if baseline not in names:
        raise ValueError(f"baseline {baseline!r} is not one of the groups {names}")
    return [(name, baseline) for name in names if name != baseline]


@quiet
def pair_table(
    scores: dict[str, np.ndarray], *, baseline: str | None = None, reps: int = 2000, seed: int = 0
) -> pd.DataFrame:
    """One row per pair of groups: A minus B, whatever the direction of "better".

    Pairs: every pair (i < j in the dict's order), or each other group (A) against ``baseline`` (B).
    Columns: ``a, b, diff, diff_lo, diff_hi`` (mean(A) - mean(B), Welch's 95% CI), ``t, df, p``
    (Welch's two-sided test), ``p_holm`` (Holm's adjustment over the table's rows), ``p_mwu``
    (Mann-Whitney two-sided), ``p_improve, p_improve_lo, p_improve_hi`` (P(A > B) with its stratified
    percentile-bootstrap 95% CI, ``reps`` resamples from ``seed``), ``runs_needed`` (runs per group for
    80% power at alpha 0.05 for the observed Cohen's d, d = |diff| / sqrt((var_a + var_b) / 2)).
    A group with fewer than 2 finite scores takes part in no test: its rows are NaN after a and b.
    Edge cases are described in ``attrs["notes"]``.
    """
    import pandas as pd
    from scipy import stats as sps

    names = list(scores)
    pairs = _pairs(names, baseline)
    finite = {name: _finite(scores[name]) for name in names}
    notes = []
    for name in names:
        notes += _run_count_note(name, np.size(scores[name]), len(finite[name]))
    rows = []
    for a_name, b_name in pairs:
        a, b = finite[a_name], finite[b_name]
        row = dict.fromkeys(PAIR_COLUMNS, np.nan) | {"a": a_name, "b": b_name}
        rows.append(row)
        if len(a) < 2 or len(b) < 2:
            continue
        diff = float(a.mean() - b.mean())
        var_a, var_b = float(a.var(ddof=1)), float(b.var(ddof=1))
        t, df, p, se = (float(v) for v in _welch(diff, var_a, len(a), var_b, len(b)))
        half = float(sps.t.ppf(1 - ALPHA / 2, df)) * se if se > 0 else 0.0  # se > 0: df is finite
        if se == 0:
            same = "the same in both: no difference (t = 0, p = 1)" if diff == 0 else "t is infinite, p = 0"
            notes.append(f"{a_name!r} vs {b_name!r}: within each group every run has the same score, {same}")
        pooled = math.sqrt((var_a + var_b) / 2)
        d = abs(diff) / pooled if pooled > 0 else (0.0 if diff == 0 else math.inf)
        both = np.concatenate([a, b])
        # All scores equal: Mann-Whitney's normal approximation divides by a zero variance (older
        # scipy warns and gives NaN); no difference at all is p = 1.
        p_mwu = 1.0 if both.min() == both.max() else float(sps.mannwhitneyu(a, b).pvalue)
        improve_lo, improve_hi = _improvement_ci(a, b, reps, seed)
        row |= {
            "diff": diff, "diff_lo": diff - half, "diff_hi": diff + half, "t": t, "df": df, "p": p,
            "p_mwu": p_mwu, "p_improve": probability_of_improvement(a, b),
            "p_improve_lo": improve_lo, "p_improve_hi": improve_hi, "runs_needed": _runs_needed(d),
        }  # fmt: skip
    table = pd.DataFrame(rows, columns=PAIR_COLUMNS)
    table["p_holm"] = holm(table["p"].to_numpy(dtype=np.float64))
    table.attrs["notes"] = notes
    return table


def _moments(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Finite count, mean and variance (n - 1) over runs at each point (NaN where undefined; called
    with floating-point warnings off)."""
    values = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(values)
    n = finite.sum(axis=0)
    mean = np.where(finite, values, 0.0).sum(axis=0) / n
    dev = np.where(finite, values - mean, 0.0)
    var = (dev * dev).sum(axis=0) / (n - 1)
    return n, mean, var


@quiet
def along_curve(a_values: np.ndarray, b_values: np.ndarray, *, q: float = 0.05) -> dict:
    """Where two groups' curves differ: Welch's test at every point, adjusted across the points.

    ``a_values`` and ``b_values`` are ``runs x points`` on the same points (NaN allowed). Returns
    ``p`` (two-sided Welch p per point, NaN where either side has fewer than 2 finite values),
    ``p_bh`` (those p adjusted by Benjamini-Hochberg over the points that have one), ``differ``
    (``p_bh < q``) and ``ranges``: ``(start, end)`` index pairs, both inclusive, of consecutive
    differing points. Never unadjusted: over hundreds of points some unadjusted p fall below q by
    chance alone.
    """
    a_values, b_values = np.asarray(a_values, dtype=np.float64), np.asarray(b_values, dtype=np.float64)
    if a_values.ndim != 2 or b_values.ndim != 2 or a_values.shape[1] != b_values.shape[1]:
        raise ValueError(f"both must be runs x points on the same points: {a_values.shape}, {b_values.shape}")
    n_a, mean_a, var_a = _moments(a_values)
    n_b, mean_b, var_b = _moments(b_values)
    tested = (n_a >= 2) & (n_b >= 2)
    p = np.full(a_values.shape[1], np.nan)
    if tested.any():
        _, _, p[tested], _ = _welch(
            mean_a[tested] - mean_b[tested], var_a[tested], n_a[tested], var_b[tested], n_b[tested]
        )
    p_bh = np.full_like(p, np.nan)
    has_p = np.isfinite(p)
    if has_p.any():
        from scipy import stats as sps

        p_bh[has_p] = sps.false_discovery_control(p[has_p])
    differ = p_bh < q  # NaN compares False
    # Runs of True: starts where it turns on, ends where it turns off (a padded difference).
    edges = np.diff(np.concatenate([[0], differ.astype(np.int8), [0]]))
    ranges = list(zip(np.flatnonzero(edges == 1).tolist(), (np.flatnonzero(edges == -1) - 1).tolist()))
    return {"p": p, "p_bh": p_bh, "differ": differ, "ranges": ranges}
