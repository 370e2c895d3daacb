"""Comparing groups and robust curves, end to end: the API, the command line, the routes of a real
TensorBoard. Every number is checked against scipy / statsmodels on scores computed with numpy from
the raw event records (the pure statistics themselves are checked in test_statistics.py)."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
import requests
from rawread import read_logdir
from scipy import stats as sps
from server import tensorboard
from statsmodels.stats.multitest import multipletests
from writers import noisy_curve, write_run

import tb_aggregate_plugin as tba
from tb_aggregate_plugin.cli import main as cli_main

TAG = "val/accuracy"
LOSS = "train/loss"
STEPS = list(range(0, 60, 2))
GROUPS = {"lr=0.1": 0.30, "lr=0.01": 0.0, "lr=0.001": -0.05}


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    """Three groups of 5 seeds; one run of lr=0.001 diverges to NaN half-way (its best is before)."""
    root = tmp_path_factory.mktemp("compare")
    for g, (group, shift) in enumerate(GROUPS.items()):
        for seed in range(5):
            rng = np.random.default_rng([g, seed])
            acc = np.linspace(0.1, 0.6 + shift, len(STEPS)) + rng.normal(0, 0.05, len(STEPS))
            loss = noisy_curve(len(STEPS), 10 * g + seed) - shift
            if group == "lr=0.001" and seed == 4:
                loss[len(STEPS) // 2 :] = np.nan
            write_run(str(root), f"{group}/seed_{seed}", {TAG: (STEPS, acc), LOSS: (STEPS, loss)})
    return root


def _raw_scores(logdir, tag: str, how: str) -> dict[str, np.ndarray]:
    """Each run's score from its raw records, with numpy: the independent computation."""
    raw = read_logdir(str(logdir))
    out: dict[str, list[float]] = {}
    for run in sorted(raw):
        values = np.array([p[2] for p in raw[run][tag]])
        finite = values[np.isfinite(values)]
        if how == "final":
            score = finite[-1]
        elif how == "best":
            score = finite.min() if "loss" in tag else finite.max()
        else:
            raise ValueError(how)
        out.setdefault(run.split("/")[0], []).append(float(score))
    return {g: np.array(v) for g, v in out.items()}


@pytest.mark.parametrize(("tag", "how"), [(TAG, "final"), (LOSS, "best")])
def test_compare_matches_scipy_and_statsmodels_on_raw_scores(logdir, tag, how):
    got = tba.compare(str(logdir), tag, score=how)
    scores = _raw_scores(logdir, tag, how)
    names = sorted(scores)
    assert list(got.attrs["groups"]["group"]) == names
    groups = got.attrs["groups"].set_index("group")
    for name in names:
        x = scores[name]
        np.testing.assert_allclose(groups.loc[name, "mean"], x.mean(), rtol=1e-12)
        np.testing.assert_allclose(groups.loc[name, "std"], x.std(ddof=1), rtol=1e-12)
        np.testing.assert_allclose(groups.loc[name, "iqm"], sps.trim_mean(x, 0.25), rtol=1e-12)
        assert groups.loc[name, "runs"] == len(x)
    expected_p = []
    for row in got.itertuples(index=False):
        a, b = scores[row.a], scores[row.b]
        welch = sps.ttest_ind(a, b, equal_var=False)
        ci = welch.confidence_interval(0.95)
        expected = [a.mean() - b.mean(), ci.low, ci.high]
        np.testing.assert_allclose([row.diff, row.diff_lo, row.diff_hi], expected, rtol=1e-9)
        np.testing.assert_allclose([row.t, row.p], [welch.statistic, welch.pvalue], rtol=1e-9)
        np.testing.assert_allclose(row.p_mwu, sps.mannwhitneyu(a, b).pvalue, rtol=1e-9)
        u = sum((ai > bi) + 0.5 * (ai == bi) for ai in a for bi in b)
        np.testing.assert_allclose(row.p_improve, u / (len(a) * len(b)), rtol=1e-12)
        expected_p.append(welch.pvalue)
    np.testing.assert_allclose(got["p_holm"], multipletests(expected_p, method="holm")[1], rtol=1e-9)
    assert got.attrs["direction"] == ("lower is better" if "loss" in tag else "higher is better")


def test_best_of_a_diverged_run_is_its_best_before_it_diverged(logdir):
    got = tba.compare(str(logdir), LOSS, score="best")
    diverged = got.attrs["scores"]["lr=0.001"]["lr=0.001/seed_4"]
    raw = read_logdir(str(logdir))["lr=0.001/seed_4"][LOSS]
    values = np.array([p[2] for p in raw])
    assert np.isfinite(diverged) and diverged == np.nanmin(values)


def test_baseline_compares_each_group_with_it_and_sentences_name_the_better(logdir):
    got = tba.compare(str(logdir), TAG, baseline="lr=0.01")
    assert sorted(zip(got["a"], got["b"])) == [("lr=0.001", "lr=0.01"), ("lr=0.1", "lr=0.01")]
    sentence = next(s for s in got.attrs["sentences"] if "lr=0.1" in s and "lr=0.001" not in s)
    assert sentence.startswith("lr=0.1 > lr=0.01 on val/accuracy (final): +")
    assert "Holm" in sentence and "P(A>B)=" in sentence
    with pytest.raises(tba.OptionError, match="baseline: 'nope' is not a group"):
        tba.compare(str(logdir), TAG, baseline="nope")


def test_one_run_group_and_identical_groups(tmp_path):
    for seed in range(3):
        write_run(str(tmp_path), f"same_a/seed_{seed}", {"acc": ([0, 1], [0.5, 0.7])})
        write_run(str(tmp_path), f"same_b/seed_{seed}", {"acc": ([0, 1], [0.5, 0.7])})
    write_run(str(tmp_path), "alone/seed_0", {"acc": ([0, 1], [0.1, 0.2])})
    got = tba.compare(str(tmp_path), "acc").set_index(["a", "b"])
    same = got.loc[("same_a", "same_b")]
    assert same["p"] == 1.0 and same["t"] == 0.0 and same["p_improve"] == 0.5
    alone = got.loc[("alone", "same_a")]
    assert np.isnan(alone["p"]) and np.isnan(alone["diff"])
    assert any("'alone'" in note and "no test" in note for note in got.attrs["notes"])
    groups = got.attrs["groups"].set_index("group")
    assert groups.loc["alone", "runs"] == 1 and np.isnan(groups.loc["alone", "std"])


def test_iqm_center_and_boot95_band_in_the_table(logdir):
    table = tba.aggregate(
        str(logdir), tags=f"^{TAG}$", center="iqm", band="boot95", reductions="iqm,boot95_lo,boot95_hi"
    )
    raw = read_logdir(str(logdir))
    runs = sorted(r for r in raw if r.startswith("lr=0.1/"))
    values = np.array([[p[2] for p in raw[r][TAG]] for r in runs])
    mine = table[table["group"] == "lr=0.1"]
    np.testing.assert_allclose(mine["iqm"], sps.trim_mean(values, 0.25, axis=0), rtol=1e-12)
    assert (mine["boot95_lo"] <= mine["iqm"] + 1e-12).all() and (
        mine["iqm"] <= mine["boot95_hi"] + 1e-12
    ).all()
    again = tba.aggregate(
        str(logdir), tags=f"^{TAG}$", center="iqm", band="boot95", reductions="iqm,boot95_lo,boot95_hi"
    )
    pd.testing.assert_frame_equal(table, again, check_exact=True)  # same seed: same numbers
    # Another seed draws other resamples. (An IQM's bootstrap over 5 runs takes few distinct values,
    # so its percentiles can coincide across seeds; a mean's takes many more.)
    means = [
        tba.aggregate(str(logdir), tags=f"^{TAG}$", band="boot95", reductions="boot95_lo", seed=seed)
        for seed in (0, 1)
    ]
    assert not np.array_equal(means[0]["boot95_lo"].to_numpy(), means[1]["boot95_lo"].to_numpy())


def test_cli_compare_writes_pairs_and_groups(logdir, tmp_path, capsys):
    out = tmp_path / "cmp.csv"
    assert cli_main([str(logdir), "--compare", TAG, "--baseline", "lr=0.01", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    pairs = pd.read_csv(out)
    groups = pd.read_csv(tmp_path / "cmp.groups.csv")
    api = tba.compare(str(logdir), TAG, baseline="lr=0.01")
    pd.testing.assert_frame_equal(pairs, api.reset_index(drop=True), check_exact=False, rtol=1e-12)
    assert list(groups["group"]) == list(api.attrs["groups"]["group"])
    assert "lr=0.1 > lr=0.01" in printed and "higher is better" in printed
    js = tmp_path / "cmp.json"
    assert cli_main([str(logdir), "--compare", TAG, "--score", "auc", "-o", str(js), "-q"]) == 0
    doc = json.loads(js.read_text())
    assert {"meta", "groups", "pairs"} <= set(doc) and doc["meta"]["query"]["score"] == "auc"
    assert cli_main([str(logdir), "--compare", TAG, "--score", "nope", "-o", str(tmp_path / "x.csv")]) == 2


@pytest.mark.server
@pytest.mark.parametrize("load_fast", [True, False])
def test_compare_route_and_along_the_curve(logdir, load_fast):
    with tensorboard(str(logdir), load_fast=load_fast) as base:
        url = f"{base}/data/plugin/aggregate"
        body = requests.get(f"{url}/compare", params={"tag": TAG, "score": "final"}, timeout=60).json()
        api = tba.compare(str(logdir), TAG)
        assert [r["a"] for r in body["pairs"]] == list(api["a"])
        np.testing.assert_allclose([r["p_holm"] for r in body["pairs"]], api["p_holm"], rtol=1e-12)
        assert body["sentences"] == api.attrs["sentences"] and body["direction"] == "higher is better"
        csv = requests.get(
            f"{url}/compare", params={"tag": TAG, "format": "csv", "table": "groups"}, timeout=60
        )
        assert csv.status_code == 200 and csv.text.startswith("group,runs,mean,std,ci95_lo")
        for params, code in [
            ({"tag": TAG, "score": "nope"}, 400),
            ({"tag": TAG, "baseline": "nope"}, 400),
            ({"tag": TAG, "table": "nope", "format": "csv"}, 400),
            ({}, 400),
            ({"tag": "no/such"}, 404),
        ]:
            response = requests.get(f"{url}/compare", params=params, timeout=60)
            assert response.status_code == code, (params, response.text)
            assert "Traceback" not in response.text
        chart = requests.get(
            f"{url}/aggregate",
            params={"tag": TAG, "compare_a": "lr=0.1", "compare_b": "lr=0.001"},
            timeout=60,
        ).json()
        along = chart["along"]
        raw = read_logdir(str(logdir))
        a = np.array([[p[2] for p in raw[r][TAG]] for r in sorted(raw) if r.startswith("lr=0.1/")])
        b = np.array([[p[2] for p in raw[r][TAG]] for r in sorted(raw) if r.startswith("lr=0.001/")])
        p_bh = sps.false_discovery_control(sps.ttest_ind(a, b, equal_var=False, axis=0).pvalue)
        differ = np.array(STEPS)[p_bh < 0.05]
        covered = [s for s in STEPS if any(lo <= s <= hi for lo, hi in along["ranges"])]
        assert covered == differ.tolist() and along["differ"] == len(differ) > 0
        assert "Benjamini-Hochberg" in along["test"]


@pytest.mark.server
def test_compare_and_summary_tables_as_markdown_and_latex(logdir, tmp_path):
    """Copy as Markdown / LaTeX in the tab: both tables of a comparison (groups, then pairs) and the
    summary table, as the text that is pasted (text/plain, UTF-8)."""
    with tensorboard(str(logdir)) as base:
        url = f"{base}/data/plugin/aggregate"
        texts = {}
        for fmt in ("md", "tex"):
            for baseline in ("", "lr=0.01"):
                response = requests.get(
                    f"{url}/compare", params={"tag": TAG, "format": fmt, "baseline": baseline}, timeout=60
                )
                assert response.status_code == 200, response.text
                assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
                texts[fmt, baseline] = response.text
        md = texts["md", ""]
        # The caption first (the direction stated), then the groups table, then the pairs table.
        assert md.startswith(f"{TAG}, score: final value of each run (higher is better)")
        groups_at, pairs_at = md.index("| group | runs |"), md.index("| a | b |")
        assert groups_at < pairs_at and "p (Holm)" in md[pairs_at:]
        for group in GROUPS:
            assert f"| {group} |" in md[groups_at:pairs_at] and f"| {group} |" in md[pairs_at:]
        assert md.count("| a | b |") == 1 and "Holm-adjusted" in md
        # With a baseline, each group against it: a dagger marks the groups that differ from it.
        assert "†" in texts["md", "lr=0.01"] and "against lr=0.01" in texts["md", "lr=0.01"]
        tex = texts["tex", ""]
        assert tex.count(r"\begin{table}") == 2 and tex.count(r"\toprule") == 2
        assert "p (Holm)" in tex and "Holm-adjusted" in tex and "higher is better" in tex
        for group in GROUPS:
            assert group in tex  # "=" and "." need no escaping in LaTeX
        _compiles(texts["tex", "lr=0.01"], tmp_path)
        bad = requests.get(f"{url}/compare", params={"tag": TAG, "format": "docx"}, timeout=60)
        assert bad.status_code == 400 and bad.text.startswith("format: ")

        summary_md = requests.get(f"{url}/summary", params={"format": "md"}, timeout=60)
        assert summary_md.status_code == 200 and summary_md.headers["Content-Type"].startswith("text/plain")
        lines = summary_md.text.splitlines()
        assert lines[0].startswith("| tag | group | runs | final |")
        body = [line for line in lines[2:] if line.startswith("|")]
        assert len(body) == 2 * len(GROUPS)  # train/loss and val/accuracy, per group
        assert all(any(f"| {g} |" in line for line in body) for g in GROUPS)
        summary_tex = requests.get(f"{url}/summary", params={"format": "tex"}, timeout=60).text
        assert r"\begin{tabular}" in summary_tex and "val/accuracy" in summary_tex
        json_body = requests.get(f"{url}/summary", timeout=60).json()
        assert "compare" not in json_body and len(json_body["rows"]) == 2 * len(GROUPS)
        # The summary's old Welch test on final values is gone: its parameters are unknown options.
        gone = requests.get(f"{url}/summary", params={"compare_a": "lr=0.1"}, timeout=60)
        assert gone.status_code == 400 and gone.text.startswith("compare_a: unknown option")


def _compiles(tables: str, folder) -> None:
    """The LaTeX as pasted into a paper: pdflatex with booktabs makes a PDF of it."""
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        pytest.fail("pdflatex not found: bash scripts/test.sh installs it (Debian package)")
    document = "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n" + tables
    (folder / "doc.tex").write_text(document + "\\end{document}\n", encoding="utf-8")
    out = subprocess.run(
        [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout[-3000:]
