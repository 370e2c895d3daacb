"""The Aggregate plugin's routes, fetched from a real ``tensorboard`` process in both loading modes.

Every expected number comes from numpy/scipy over the raw event values (``rawread``), never from the
code under test. One server per loading mode is shared by the tests of the static logdir; a second
one (TensorBoard's default sample limit, a live run) serves the downsampling and live-run tests.
"""

from __future__ import annotations

import csv
import gzip
import http.client
import io
import json
import os
import re
import urllib.parse
import warnings

import numpy as np
import pandas as pd
import pytest
import requests
from counted import CountedProvider
from rawread import read_logdir
from scipy import stats as sps
from server import tensorboard, wait_for
from writers import noisy_curve, write_run

import tb_aggregate_plugin as tba

pytestmark = pytest.mark.server

PLUGIN = "/data/plugin/aggregate"
MODES = ["rust", "python"]
DANGEROUS_TAGS = ["@at", "-neg", "+plus", "=SUM(1,2)", "\ttab", "\rcr"]
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
STEPS = list(range(0, 61, 2))  # 31 points


# -- logdirs --------------------------------------------------------------------------------------


def _write_main_logdir(root: str) -> None:
    """Four groups that cover exact and interpolated alignment, NaN/inf, an early stop, a single run,
    hparams (and runs without), and names a spreadsheet would run as formulas."""
    for i in range(3):
        write_run(
            root,
            f"a/seed_{i}",
            {"loss": (STEPS, noisy_curve(31, i)), "acc": (STEPS, 1 - noisy_curve(31, 10 + i, start=0.9))},
            writer="tb",
            hparams={"lr": 0.1, "opt": "adam", "seed": i},
        )
    for i in range(4):
        loss = noisy_curve(31, 20 + i, start=2.5)
        acc = 1 - noisy_curve(31, 30 + i, start=0.95, end=0.4)
        steps = STEPS
        if i == 1:
            loss[5], loss[10] = np.nan, np.inf  # steps 10 and 20
        if i == 3:  # stops early at step 40
            steps, loss, acc = STEPS[:21], loss[:21], acc[:21]
        write_run(
            root,
            f"b/seed_{i}",
            {"loss": (steps, loss), "acc": (steps, acc)},
            writer="tbx",
            hparams={"lr": 0.01, "opt": "sgd", "seed": i},
        )
    # Different step grids: interpolated onto the union of steps.
    write_run(
        root,
        "c/seed_0",
        {"loss": (list(range(0, 61, 3)), noisy_curve(21, 40))},
        writer="tbx_tensor",
        hparams={"lr": 0.001},
    )
    write_run(
        root,
        "c/seed_1",
        {"loss": (list(range(5, 51, 5)), noisy_curve(10, 41))},
        writer="tbx_tensor",
        hparams={"lr": 0.001},
    )
    write_run(root, "d/seed_0", {"loss": (STEPS, noisy_curve(31, 50))}, writer="tb")  # no hparams
    for i in range(2):
        tags = {"loss": (STEPS, noisy_curve(31, 60 + i))}
        tags.update({t: (STEPS[:5], np.arange(5.0) + i) for t in DANGEROUS_TAGS})
        write_run(root, f"=cmd/seed_{i}", tags, writer="tb")


LIVE_START = 10
LONG_POINTS = 1500


def _write_live_logdir(root: str):
    """A run longer than TensorBoard's default sample limit, a short one, and a live run left open."""
    from tensorboard.summary import Writer

    write_run(root, "long/seed_0", {"long": (list(range(LONG_POINTS)), noisy_curve(LONG_POINTS, 70))})
    write_run(root, "short/seed_0", {"short": (STEPS, noisy_curve(31, 71))})
    writer = Writer(os.path.join(root, "live", "seed_0"))
    for step in range(LIVE_START):
        writer.add_scalar("live", float(np.sin(step)), step)
    writer.flush()
    return writer


# -- expected values, from numpy over the raw events ------------------------------------------------


def raw_series(raw, run: str, tag: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Steps, wall times and values of one run, sorted by step, last write of a step kept."""
    points = raw[run][tag]
    by_step = {}
    for step, wall, value in points:
        by_step[step] = (wall, value)
    steps = np.array(sorted(by_step), dtype=np.int64)
    walls = np.array([by_step[s][0] for s in steps])
    values = np.array([by_step[s][1] for s in steps], dtype=np.float64)
    values[~np.isfinite(values)] = np.nan
    return steps, walls, values


def ema(values: np.ndarray, weight: float) -> np.ndarray:
    """TensorBoard's debiased EMA written as the scalar dashboard's loop; non-finite values pass through."""
    out, last, k = values.copy(), 0.0, 0
    if weight == 0 or np.all(values[np.isfinite(values)] == values[np.isfinite(values)][0]):
        return out
    for i, v in enumerate(values):
        if not np.isfinite(v):
            continue
        last = last * weight + (1 - weight) * v
        k += 1
        out[i] = last / (1 - weight**k)
    return out


def expected_group(raw, runs: list[str], tag: str, smoothing: float = 0.0) -> dict:
    """Union-of-steps grid, each run interpolated only inside its own range, reduced with numpy."""
    series = [raw_series(raw, r, tag) for r in runs if tag in raw[r]]
    grid = np.unique(np.concatenate([s for s, _, _ in series]))
    rows = []
    for steps, _, values in series:
        values = ema(values, smoothing)
        row = np.full(len(grid), np.nan)
        inside = (grid >= steps[0]) & (grid <= steps[-1])
        row[inside] = np.interp(grid[inside], steps, values)
        row[np.searchsorted(grid, steps)] = values  # own points exactly (a NaN stays a NaN)
        rows.append(row)
    m = np.array(rows)
    n = np.isfinite(m).sum(axis=0)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns are expected
        mean = np.nanmean(m, axis=0)
        std = np.where(n > 1, np.nanstd(m, axis=0, ddof=1), np.nan)
        out = {
            "x": grid,
            "n": n,
            "mean": mean,
            "std": std,
            "median": np.nanmedian(m, axis=0),
            "min": np.nanmin(m, axis=0),
            "max": np.nanmax(m, axis=0),
            "sem": std / np.sqrt(n),
            "matrix": m,
        }
    half = sps.t.ppf(0.975, np.maximum(n - 1, 1)) * out["sem"]
    out["ci95_lo"], out["ci95_hi"] = mean - half, mean + half
    return out


def auto_groups(raw) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for run in sorted(raw):
        groups.setdefault(run.split("/")[0], []).append(run)
    return groups


def inert(name: str) -> str:
    return "'" + name if name.startswith(FORMULA_START) else name


def as_array(values) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def close(actual, expected, what: str) -> None:
    np.testing.assert_allclose(
        as_array(actual), expected, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=what
    )


# -- servers --------------------------------------------------------------------------------------


def wait_loaded(base: str, raw, limit: int | None = None) -> None:
    """Wait until the server holds every raw point (a first load can be partial): each run as its own
    group, every tag's curve must reach the run's last step with all its points (up to ``limit``)."""
    tags = sorted({t for run_tags in raw.values() for t in run_tags})

    def loaded():
        for tag in tags:
            response = get(base, "/aggregate", tag=tag, group_by="regex:(.*)", max_points="1000000")
            if response.status_code != 200:
                return False
            got = {g["group"]: g["x"] for g in response.json()["groups"]}
            for run, run_tags in raw.items():
                if tag not in run_tags:
                    continue
                steps, _, values = raw_series(raw, run, tag)
                steps = steps[np.isfinite(values)]  # a point with no finite value is no point
                x = got.get(run)
                if not x or x[-1] != steps[-1] or len(x) != min(len(steps), limit or len(steps)):
                    return False
        return True

    wait_for(loaded, timeout=120, what="the logdir to be fully loaded")


@pytest.fixture(scope="module", params=MODES)
def main(request, tmp_path_factory):
    """``(base_url, logdir, raw)`` of a server reading every point (``--samples_per_plugin scalars=0``)."""
    logdir = str(tmp_path_factory.mktemp(f"main_{request.param}"))
    _write_main_logdir(logdir)
    raw = read_logdir(logdir)
    with tensorboard(logdir, load_fast=request.param == "rust", samples=0) as base:
        wait_loaded(base, raw)
        yield base, logdir, raw


@pytest.fixture(scope="module", params=MODES)
def live(request, tmp_path_factory):
    """``(base_url, logdir, writer)`` of a server with TensorBoard's default samples and a live run."""
    logdir = str(tmp_path_factory.mktemp(f"live_{request.param}"))
    writer = _write_live_logdir(logdir)
    try:
        with tensorboard(logdir, load_fast=request.param == "rust", samples=None, reload_interval=1) as base:
            wait_loaded(base, read_logdir(logdir), limit=1000)
            yield base, logdir, writer
    finally:
        writer.close()


def get(base: str, route: str, **params) -> requests.Response:
    return requests.get(f"{base}{PLUGIN}{route}", params=params, timeout=60)


def get_json(base: str, route: str, **params) -> dict:
    response = get(base, route, **params)
    assert response.status_code == 200, response.text
    return response.json()


# -- /runs ----------------------------------------------------------------------------------------


def test_tab_is_listed_and_enabled(main):
    base, _, _ = main
    listing = requests.get(f"{base}/data/plugins_listing", timeout=30).json()["aggregate"]
    assert listing["enabled"] is True
    assert listing["tab_name"] == "Aggregate"
    assert listing["loading_mechanism"]["module_path"] == f"{PLUGIN}/static/index.js"


def test_runs_lists_runs_groups_tags_and_hparams(main):
    base, _, raw = main
    body = get_json(base, "/runs")
    runs = {r["run"]: r for r in body["runs"]}
    assert sorted(runs) == sorted(raw)
    groups = auto_groups(raw)
    assert body["groups"] == groups
    for run, entry in runs.items():
        assert entry["group"] == run.split("/")[0]
        assert entry["excluded"] is None
        assert entry["tags"] == sorted(raw[run])
    assert body["tags"] == sorted({t for tags in raw.values() for t in tags})
    assert runs["a/seed_2"]["hparams"] == {"lr": 0.1, "opt": "adam", "seed": 2}
    assert runs["b/seed_0"]["hparams"] == {"lr": 0.01, "opt": "sgd", "seed": 0}
    assert runs["d/seed_0"]["hparams"] == {}
    assert body["sample_limit"] is None  # started with --samples_per_plugin scalars=0


def test_runs_under_hparam_grouping_and_filters(main):
    base, _, raw = main
    body = get_json(base, "/runs", group_by="hparam:lr", runs="^(a|b|d)/", tags="^loss$")
    runs = {r["run"]: r for r in body["runs"]}
    assert sorted(runs) == sorted(r for r in raw if r[0] in "abd")
    assert body["groups"] == {
        "lr=0.01": [f"b/seed_{i}" for i in range(4)],
        "lr=0.1": [f"a/seed_{i}" for i in range(3)],
    }
    assert runs["d/seed_0"]["group"] is None
    assert "lr" in runs["d/seed_0"]["excluded"]
    assert body["unplaced"] == {"d/seed_0": runs["d/seed_0"]["excluded"]}
    assert body["tags"] == ["loss"]
    # The chart says which runs were left out and why.
    chart = get_json(base, "/aggregate", tag="loss", group_by="hparam:lr")
    assert sorted(g["group"] for g in chart["groups"]) == ["lr=0.001", "lr=0.01", "lr=0.1"]
    assert sorted(chart["unplaced"]) == ["=cmd/seed_0", "=cmd/seed_1", "d/seed_0"]
    assert any("d/seed_0" in note and "no hparam 'lr'" in note for note in chart["notes"])


# -- /aggregate -----------------------------------------------------------------------------------


@pytest.mark.parametrize("tag", ["loss", "acc"])
def test_aggregate_matches_numpy(main, tag):
    base, _, raw = main
    body = get_json(base, "/aggregate", tag=tag)
    assert (body["tag"], body["x"], body["center"], body["band"]) == (tag, "step", "mean", "std")
    got = {g["group"]: g for g in body["groups"]}
    groups = {g: [r for r in runs if tag in raw[r]] for g, runs in auto_groups(raw).items()}
    groups = {g: runs for g, runs in groups.items() if runs}
    assert sorted(got) == sorted(groups)
    for group, runs in groups.items():
        want, entry = expected_group(raw, runs, tag), got[group]
        assert entry["runs"] == runs
        assert entry["x"] == want["x"].tolist()
        assert entry["n"] == want["n"].tolist()
        close(entry["center"], want["mean"], f"{group} center")
        close(entry["lo"], want["mean"] - want["std"], f"{group} lo")
        close(entry["hi"], want["mean"] + want["std"], f"{group} hi")
        assert isinstance(entry["notes"], list) and entry["notes"]
    if tag == "loss":
        assert got["c"]["alignment"] == "interpolate"
        assert got["a"]["alignment"] == "exact"
        assert got["b"]["nonfinite"] == {"b/seed_1": 2}
        assert any("b/seed_1" in note and "NaN/inf" in note for note in body["notes"])
        assert got["d"]["lo"] == [None] * len(STEPS)  # one run: no band, not a crash
        assert min(got["b"]["n"]) == 3  # the NaN, the inf and the early stop each leave 3 runs


def test_aggregate_other_center_band_and_smoothing(main):
    base, _, raw = main
    runs = auto_groups(raw)["b"]
    cases = [
        ({"center": "median", "band": "minmax"}, "median", "min", "max"),
        ({"band": "ci95"}, "mean", "ci95_lo", "ci95_hi"),
        ({"band": "sem", "smoothing": "0.6"}, "mean", None, None),
    ]
    for options, center, lo, hi in cases:
        body = get_json(base, "/aggregate", tag="loss", runs="^b/", **options)
        (entry,) = body["groups"]
        want = expected_group(raw, runs, "loss", smoothing=float(options.get("smoothing", 0)))
        close(entry["center"], want[center], f"{options} center")
        if lo is None:
            lo_values, hi_values = want["mean"] - want["sem"], want["mean"] + want["sem"]
        else:
            lo_values, hi_values = want[lo], want[hi]
        close(entry["lo"], lo_values, f"{options} lo")
        close(entry["hi"], hi_values, f"{options} hi")


def test_aggregate_min_runs_drops_thin_points(main):
    base, _, raw = main
    want = expected_group(raw, auto_groups(raw)["b"], "loss")
    (entry,) = get_json(base, "/aggregate", tag="loss", runs="^b/", min_runs="4")["groups"]
    keep = want["n"] >= 4
    assert entry["x"] == want["x"][keep].tolist()
    close(entry["center"], want["mean"][keep], "min_runs center")


def test_include_runs_adds_each_run(main):
    base, _, raw = main
    body = get_json(base, "/aggregate", tag="loss", include_runs="1")
    for entry in body["groups"]:
        want = expected_group(raw, entry["runs"], "loss")
        assert [i["run"] for i in entry["individual"]] == entry["runs"]
        for row, individual in zip(want["matrix"], entry["individual"]):
            assert individual["x"] == want["x"].tolist()
            close(individual["y"], row, individual["run"])
    assert all("individual" not in g for g in get_json(base, "/aggregate", tag="loss")["groups"])


def test_max_points_thins_for_drawing_only(main):
    base, _, raw = main
    full = {g["group"]: g for g in get_json(base, "/aggregate", tag="loss", include_runs="1")["groups"]}
    thin = get_json(base, "/aggregate", tag="loss", include_runs="1", max_points="5")
    for entry in thin["groups"]:
        whole = full[entry["group"]]
        # About max_points, plus the points where the number of runs changes.
        changes = int(np.count_nonzero(np.diff(whole["n"])))
        assert 2 <= len(entry["x"]) <= 5 + changes < len(whole["x"])
        assert entry["x"][0] == whole["x"][0] and entry["x"][-1] == whole["x"][-1]
        at = [whole["x"].index(x) for x in entry["x"]]
        for key in ("center", "lo", "hi", "n"):
            assert entry[key] == [whole[key][i] for i in at]
        for individual in entry["individual"]:
            assert len(individual["x"]) <= 5


# -- /summary -------------------------------------------------------------------------------------


def test_summary_final_best(main):
    base, _, raw = main
    groups = auto_groups(raw)
    body = get_json(base, "/summary", tags="^(loss|acc)$")
    rows = {(r["tag"], r["group"]): r for r in body["rows"]}
    for (tag, group), row in rows.items():
        want = expected_group(raw, [r for r in groups[group] if tag in raw[r]], tag)
        assert row["final_x"] == want["x"][-1]
        assert row["final"] == pytest.approx(want["mean"][-1], rel=1e-12)
        best = np.nanargmin(want["mean"]) if tag == "loss" else np.nanargmax(want["mean"])
        assert row["best_x"] == want["x"][best]
        assert row["best"] == pytest.approx(want["mean"][best], rel=1e-12)
        assert row["best_is"] == ("min" if tag == "loss" else "max")
    assert sorted(rows) == sorted(
        (t, g) for g, runs in groups.items() for t in ("loss", "acc") if any(t in raw[r] for r in runs)
    )
    assert "compare" not in body  # groups are compared by /compare (test_compare.py)


# -- /export --------------------------------------------------------------------------------------


def _engine_table(logdir: str, **options) -> pd.DataFrame:
    table = tba.aggregate(logdir, **options)
    for column in ("tag", "group"):
        table[column] = table[column].map(inert)
    return table


def _assert_same_table(csv_bytes: bytes, expected: pd.DataFrame) -> None:
    loaded = pd.read_csv(io.BytesIO(csv_bytes))  # plain, as a user would
    assert list(loaded.columns) == list(expected.columns)
    assert len(loaded) == len(expected)
    for column in expected.columns:
        got, want = loaded[column], expected[column]
        if want.dtype.kind in "iu":
            assert got.dtype.kind in "iu" and got.tolist() == want.tolist(), column
        elif want.dtype.kind == "f":
            np.testing.assert_array_equal(got.to_numpy(float), want.to_numpy(float), err_msg=column)
        else:
            assert got.astype(str).tolist() == want.astype(str).tolist(), column
    # Round-trip floats: Python's own float() of every cell gives back the very same float64.
    rows = list(csv.reader(io.StringIO(csv_bytes.decode("utf-8"), newline="")))
    assert rows[0] == list(expected.columns) and len(rows) == len(expected) + 1
    for i, column in enumerate(expected.columns):
        if expected[column].dtype.kind == "f":
            cells = np.array([float(row[i]) if row[i] else np.nan for row in rows[1:]])
            np.testing.assert_array_equal(cells, expected[column].to_numpy(float), err_msg=column)


# What the tab sends for its download link when nothing was changed (frontend/state.js DEFAULTS).
TAB_DEFAULTS = {
    "runs": "",
    "tags": "",
    "group_by": "auto",
    "center": "mean",
    "band": "std",
    "smoothing": "0",
    "x": "step",
    "min_runs": "1",
    "format": "csv",
}


def test_export_csv_from_defaults_equals_engine(main):
    base, logdir, _ = main
    before = pd.Timestamp.now(tz="UTC").floor("s")
    response = get(base, "/export", **TAB_DEFAULTS)
    after = pd.Timestamp.now(tz="UTC")
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"].startswith("text/csv")
    match = re.fullmatch(
        r'attachment; filename="aggregate-all-(\d{8}T\d{6}Z)\.csv"', response.headers["Content-Disposition"]
    )
    assert match, response.headers["Content-Disposition"]
    stamp = pd.Timestamp(match.group(1))
    assert before <= stamp <= after
    assert "X-Aggregate-Warning" not in response.headers
    _assert_same_table(response.content, _engine_table(logdir))
    assert get(base, "/export").content == response.content  # no options at all: the same defaults


def test_export_one_tag_with_options_equals_engine(main):
    base, logdir, _ = main
    options = {
        "runs": "^(a|b|c)/",
        "reductions": "mean,q05,q95,ci95_lo,ci95_hi,sem",
        "smoothing": "0.3",
        "min_runs": "2",
    }
    response = get(base, "/export", tag="loss", **options)
    assert response.status_code == 200, response.text
    assert re.fullmatch(
        r'attachment; filename="aggregate-loss-\d{8}T\d{6}Z\.csv"', response.headers["Content-Disposition"]
    )
    _assert_same_table(response.content, _engine_table(logdir, tags="^loss$", **options))


def test_export_json_equals_engine(main):
    base, logdir, _ = main
    response = get(base, "/export", format="json", tag="=SUM(1,2)")
    assert response.status_code == 200, response.text
    assert re.fullmatch(
        r'attachment; filename="aggregate-SUM_1_2-\d{8}T\d{6}Z\.json"',
        response.headers["Content-Disposition"],
    )
    body = json.loads(response.content)
    expected = _engine_table(logdir, tags=r"^=SUM\(1,2\)$")
    assert [list(row) for row in body["rows"]] == [list(expected.columns)] * len(expected)
    for column in expected.columns:
        got = [row[column] for row in body["rows"]]
        if expected[column].dtype.kind == "f":
            np.testing.assert_array_equal(as_array(got), expected[column].to_numpy(float))
        else:
            assert got == expected[column].tolist()
    assert body["meta"]["groups"] == {"=cmd": ["=cmd/seed_0", "=cmd/seed_1"]}


def test_export_names_are_inert(main):
    base, _, _ = main
    table = pd.read_csv(io.BytesIO(get(base, "/export").content))
    tags = set(table["tag"])
    assert {"'" + t for t in DANGEROUS_TAGS} <= tags
    for column in ("tag", "group"):
        assert not any(str(v).startswith(FORMULA_START) for v in table[column]), column
    assert set(table["group"]) == {"a", "b", "c", "d", "'=cmd"}


# -- errors ---------------------------------------------------------------------------------------

BAD_OPTIONS = [
    ("runs", "("),
    ("tags", "[a-"),
    ("group_by", "folder"),
    ("group_by", "regex:("),
    ("group_by", "regex:"),
    ("group_by", "hparam:"),
    ("center", "mode"),
    ("band", "2sigma"),
    ("reductions", "mean,mode"),
    ("reductions", ","),
    ("align", "nearest"),
    ("x", "epoch"),
    ("smoothing", "1"),
    ("smoothing", "nan"),
    ("smoothing", "much"),
    ("min_runs", "0"),
    ("min_runs", "1.5"),
    ("dup_steps", "max"),
    ("boot_reps", "0"),
    ("seed", "-1"),
    ("score", "mean"),
    ("colour", "red"),
]


@pytest.mark.parametrize("route", ["/runs", "/aggregate", "/export", "/summary", "/compare"])
def test_bad_option_is_400_naming_it(main, route):
    base, _, _ = main
    extra = {"tag": "loss"} if route in ("/aggregate", "/compare") else {}
    for option, value in BAD_OPTIONS:
        response = get(base, route, **extra, **{option: value})
        assert response.status_code == 400, (route, option, value, response.status_code)
        text = response.text
        assert text.endswith("\n") and text.count("\n") == 1, text
        assert text.startswith(f"{option}: "), text
    # The message says what is allowed.
    assert "std, sem, ci95, minmax, iqr, boot95, none" in get(base, route, **extra, band="x").text


@pytest.mark.parametrize(
    "route, params, option",
    [
        ("/aggregate", {}, "tag"),
        ("/aggregate", {"tag": "loss", "max_points": "many"}, "max_points"),
        ("/aggregate", {"tag": "loss", "max_points": "1"}, "max_points"),
        ("/aggregate", {"tag": "loss", "max_points": "-5"}, "max_points"),
        ("/aggregate", {"tag": "loss", "include_runs": "yes please"}, "include_runs"),
        ("/export", {"format": "xlsx"}, "format"),
        ("/export", {"format": "cvs"}, "format"),  # (any case is fine: CSV is csv)
        ("/aggregate", {"tag": "loss", "runs": "^nomatch$"}, "runs"),  # selects nothing: as the CLI
        ("/summary", {"compare_a": "a"}, "compare_a"),
        ("/summary", {"format": "csv"}, "format"),
        ("/compare", {"tag": "acc", "format": "xlsx"}, "format"),
        ("/runs", {"tag": "loss"}, "tag"),
    ],
)
def test_bad_route_parameter_is_400(main, route, params, option):
    base, _, _ = main
    response = get(base, route, **params)
    assert response.status_code == 400, response.text
    assert response.text.startswith(f"{option}: ") and response.text.count("\n") == 1, response.text


@pytest.mark.parametrize(
    "route, params",
    [
        ("/aggregate", {"tag": "nope"}),
        ("/export", {"tag": "nope"}),
        ("/compare", {"tag": "nope"}),
        ("/compare", {"tag": "nope", "format": "md"}),
    ],
)
def test_unknown_tag_or_group_is_404(main, route, params):
    base, _, _ = main
    response = get(base, route, **params)
    assert response.status_code == 404, response.text
    assert response.text.count("\n") == 1


def test_control_characters_never_split_the_message(main):
    base, _, _ = main
    response = get(base, "/aggregate", tag="loss", **{"bad\r\nX-Injected: 1": "1"})
    assert response.status_code == 400
    assert "X-Injected" not in response.headers
    assert response.text.count("\n") == 1 and "\r" not in response.text


NASTY = [
    "",
    " ",
    "(",
    "((a+)+)+$",
    "\x00",
    "%",
    "\u00fc\u2603",
    "nan",
    "inf",
    "-inf",
    "-1",
    "0",
    "1e309",
    "99999999999999999999",
    "regex:",
    "regex:(x)?",
    "hparam:nope",
    "hparam:lr,opt",
    "q00,q99",
    "a" * 1500,
    "../../etc/passwd",
    "<script>alert(1)</script>",
    "=cmd",
    "1,2,3",
]
FUZZED = [
    "runs",
    "tags",
    "group_by",
    "center",
    "band",
    "reductions",
    "align",
    "x",
    "smoothing",
    "min_runs",
    "dup_steps",
    "tag",
    "max_points",
    "include_runs",
    "format",
    "score",
    "baseline",
    "compare_a",
    "compare_b",
]


@pytest.mark.parametrize("route", ["/runs", "/aggregate", "/export", "/summary", "/compare"])
def test_nothing_typed_gives_a_500(main, route):
    base, _, _ = main
    for name in FUZZED:
        for value in NASTY:
            params = {name: value}
            if route in ("/aggregate", "/compare") and name != "tag":
                params["tag"] = "loss"
            if route == "/aggregate" and name in ("compare_a", "compare_b"):
                params.update({"compare_a": "a", "compare_b": "b", name: value})
            response = get(base, route, **params)
            assert response.status_code in (200, 400, 404), (route, params, response.status_code)
            if response.status_code == 400:
                assert response.text.count("\n") == 1 and ": " in response.text, response.text


# -- /static --------------------------------------------------------------------------------------


def _raw_get(base: str, path: str, headers: dict | None = None) -> tuple[int, dict, bytes]:
    """A request whose path is sent exactly as written (no client-side normalisation of .. or %2F)."""
    host, port = urllib.parse.urlsplit(base).netloc.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.putrequest("GET", path, skip_accept_encoding=True)
        for key, value in (headers or {}).items():
            conn.putheader(key, value)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


TRAVERSALS = [
    "../plugin.py",
    "../../tb_aggregate_plugin/plugin.py",
    "%2e%2e/plugin.py",
    "%2E%2E%2Fplugin.py",
    "..%2Fplugin.py",
    "..%2f..%2f..%2f..%2f..%2fetc%2fpasswd",
    "%2Fetc%2Fpasswd",
    "/etc/passwd",
    "//etc/passwd",
    "..\\plugin.py",
    "..%5Cplugin.py",
    "C:%5Cwindows%5Cwin.ini",
    "__init__.py",
    ".",
    "./index.js",
    "sub/../index.js",
    "index.js%00.png",
    "",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_static_traversal_is_404(main, path):
    base, _, _ = main
    status, _, body = _raw_get(base, f"{PLUGIN}/static/{path}")
    assert status == 404, (path, status)
    assert b"import" not in body and b"root:" not in body


def test_static_serves_the_tab_and_a_cacheable_plotly(main):
    base, _, _ = main
    import plotly
    import tb_aggregate_plugin.static as static

    with open(os.path.join(os.path.dirname(static.__file__), "index.js"), "rb") as f:
        index = f.read()
    status, headers, body = _raw_get(base, f"{PLUGIN}/static/index.js")
    assert (status, body) == (200, index)
    assert headers["Content-Type"].startswith("text/javascript")

    bundled = os.path.join(os.path.dirname(plotly.__file__), "package_data", "plotly.min.js")
    with open(bundled, "rb") as f:
        plotly_js = f.read()
    status, headers, body = _raw_get(base, f"{PLUGIN}/static/plotly.min.js")  # no gzip asked
    assert (status, body) == (200, plotly_js)
    assert re.search(r"max-age=\d{4,}", headers["Cache-Control"])
    assert headers["Content-Type"].startswith("text/javascript")
    status, headers, body = _raw_get(base, f"{PLUGIN}/static/plotly.min.js", {"Accept-Encoding": "gzip"})
    assert status == 200 and headers.get("Content-Encoding") == "gzip"
    assert gzip.decompress(body) == plotly_js


# -- default sample limit and a live run ------------------------------------------------------------


def test_downsampled_series_is_flagged(live):
    base, logdir, _ = live
    raw = read_logdir(logdir)
    body = get_json(base, "/aggregate", tag="long")
    (entry,) = body["groups"]
    assert body["sample_limit"] == 1000
    assert entry["downsampled"] == ["long/seed_0"]
    assert len(entry["x"]) == 1000 < LONG_POINTS
    steps, _, values = raw_series(raw, "long/seed_0", "long")
    at = np.searchsorted(steps, entry["x"])
    close(entry["center"], values[at], "downsampled points are real points")
    assert any("--samples_per_plugin scalars=1000000" in note for note in body["notes"])
    assert any("downsampled" in note for note in entry["notes"])

    short = get_json(base, "/aggregate", tag="short")
    assert short["groups"][0]["downsampled"] == []
    assert not any("downsampled" in note for note in short["notes"])

    response = get(base, "/export", tag="long")
    assert "--samples_per_plugin scalars=" in response.headers["X-Aggregate-Warning"]
    assert "X-Aggregate-Warning" not in get(base, "/export", tag="short").headers


def test_live_run_shows_new_steps_on_next_request(live):
    base, logdir, writer = live
    first = get_json(base, "/aggregate", tag="live")
    assert first["groups"][0]["x"] == list(range(LIVE_START))
    smoothed = get_json(base, "/aggregate", tag="live", smoothing="0.5")  # served from the cache
    assert smoothed["groups"][0]["x"] == list(range(LIVE_START))

    for step in range(LIVE_START, 2 * LIVE_START):
        writer.add_scalar("live", float(np.sin(step)), step)
    writer.flush()
    want = list(range(2 * LIVE_START))
    body = wait_for(
        lambda: (b := get_json(base, "/aggregate", tag="live"))["groups"][0]["x"] == want and b,
        timeout=60,
        what="the new steps of the live run",
    )
    steps, _, values = raw_series(read_logdir(logdir), "live/seed_0", "live")
    assert steps.tolist() == want
    close(body["groups"][0]["center"], values, "live values")
    # Every route sees them (the cached series was replaced, not just the chart).
    table = pd.read_csv(io.BytesIO(get(base, "/export", tag="live").content))
    assert table["step"].tolist() == want
    (row,) = get_json(base, "/summary", tags="^live$")["rows"]
    assert row["final_x"] == want[-1]


# -- the cache, in process: a new option never reads again; a new step does --------------------------


class CountingProvider(CountedProvider):
    """A real provider that counts the reads of scalar series (through either read path)."""

    def __init__(self, inner):
        super().__init__(inner, "read_scalars", "ReadScalars")

    @property
    def reads(self) -> int:
        return self.calls


@pytest.mark.parametrize("loader", MODES)
def test_cache_reads_once_per_change(tmp_path, loader):
    import argparse

    from tensorboard.plugins import base_plugin
    from tensorboard.summary import Writer
    from werkzeug.test import Client

    from tb_aggregate_plugin.plugin import AggregatePlugin
    from tb_aggregate_plugin.read.logdir import open_logdir

    writers = {}
    for i in range(2):
        writers[i] = Writer(str(tmp_path / f"g/seed_{i}"))
        for step in range(5):
            writers[i].add_scalar("loss", float(step + i), step)
        writers[i].flush()
    with open_logdir(str(tmp_path), loader=loader) as loaded:
        provider = CountingProvider(loaded.provider)
        flags = argparse.Namespace(samples_per_plugin={"scalars": 0})
        plugin = AggregatePlugin(base_plugin.TBContext(data_provider=provider, flags=flags))
        apps = plugin.get_plugin_apps()

        def fetch(route, **params):
            response = Client(apps[route]).get(f"{PLUGIN}{route}", query_string=params)
            assert response.status_code == 200, response.get_data(as_text=True)
            return response

        assert fetch("/aggregate", tag="loss").json["groups"][0]["x"] == list(range(5))
        assert provider.reads == 1
        fetch("/aggregate", tag="loss", smoothing="0.5", band="minmax", center="median", include_runs="1")
        fetch("/aggregate", tag="loss", group_by="none", align="interpolate", reductions="q05,q95")
        fetch("/export", tag="loss")
        fetch("/summary")
        assert provider.reads == 1, "changing an option must not read the series again"
        for i in range(2):
            writers[i].add_scalar("loss", 9.0, 5)
            writers[i].close()
        if loader == "python":  # this loader can be told to look again; the data server here loads once
            loaded.provider._multiplexer.Reload()
            body = fetch("/aggregate", tag="loss").json
            assert body["groups"][0]["x"] == list(range(6)) and body["groups"][0]["center"][-1] == 9.0
            assert provider.reads == 2
            fetch("/aggregate", tag="loss", smoothing="0.3")
            assert provider.reads == 2
