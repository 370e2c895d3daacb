"""A newcomer's first ten minutes: what the outputs hold, what a mistake says, runs named the usual ways.

Event files are written by real writers (TensorBoard's, tensorboardX, and raw float64 tensor events
framed by TensorBoard's own event file writer); expected numbers come from numpy/scipy over the raw
records (tests/rawread.py), never from the code under test.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import numpy as np
import pandas as pd
import pytest
import requests
from rawread import read_logdir
from scipy import stats as sps
from server import tensorboard
from test_cli import cli
from writers import noisy_curve, write_run

import tb_aggregate_plugin as tba
from tb_aggregate_plugin.compute.grouping import group_runs
from tb_aggregate_plugin.query import Query

STEPS = list(range(0, 20, 2))  # 10 points
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLUGIN = "/data/plugin/aggregate"


def _write_configs(logdir: str, configs: dict[str, int], writer: str = "tb") -> None:
    """``{config: seeds}``: runs ``<config>/seed_<k>`` with tags loss and acc, 10 steps each."""
    for c, (config, seeds) in enumerate(configs.items()):
        for k in range(seeds):
            write_run(
                logdir,
                f"{config}/seed_{k}",
                {"loss": (STEPS, noisy_curve(10, 10 * c + k)), "acc": (STEPS, 1 - noisy_curve(10, 50 + k))},
                writer=writer if k else "tbx",  # both writers in every group
                hparams={"lr": float(config.split("=")[1]), "optimizer": "adam"} if "=" in config else None,
            )


@pytest.fixture(scope="module")
def two_configs(tmp_path_factory) -> str:
    """lr=0.1 and lr=0.01, three seeds each, tags loss and acc."""
    logdir = str(tmp_path_factory.mktemp("two_configs") / "logs")
    _write_configs(logdir, {"lr=0.1": 3, "lr=0.01": 3})
    return logdir


@pytest.fixture(scope="module")
def five_seeds(tmp_path_factory) -> str:
    """Two configs of five seeds each."""
    logdir = str(tmp_path_factory.mktemp("five_seeds") / "logs")
    _write_configs(logdir, {"a": 5, "b": 5})
    return logdir


def _values(logdir: str, tag: str, prefix: str = "") -> np.ndarray:
    """Runs x steps of ``tag`` for the runs whose name starts with ``prefix``, from the raw records."""
    raw = read_logdir(logdir)
    runs = sorted(r for r in raw if r.startswith(prefix) and tag in raw[r])
    return np.array([[v for _, _, v in raw[r][tag]] for r in runs])


# -- 1. the table carries the drawn line and band edges, named after what they are ------------------


def test_table_columns_are_the_line_the_band_edges_then_the_other_reductions(two_configs):
    df = tba.aggregate(two_configs, band="ci95", center="median")
    ids = ["tag", "group", "step", "wall_time", "n"]
    assert list(df.columns) == ids + ["median", "ci95_lo", "ci95_hi", "mean", "std", "min", "max"]
    rows = df[(df["tag"] == "loss") & (df["group"] == "lr=0.1")]
    values = _values(two_configs, "loss", "lr=0.1/")
    n = len(values)
    half = sps.t.ppf(0.975, n - 1) * values.std(axis=0, ddof=1) / np.sqrt(n)
    np.testing.assert_allclose(rows["median"], np.median(values, axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(rows["ci95_lo"], values.mean(axis=0) - half, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rows["ci95_hi"], values.mean(axis=0) + half, rtol=0, atol=1e-12)

    # The defaults: band std around the mean; count (always n) is no longer one of them.
    df = tba.aggregate(two_configs)
    assert list(df.columns) == ids + ["mean", "mean-std", "mean+std", "std", "min", "max", "median"]
    rows = df[(df["tag"] == "loss") & (df["group"] == "lr=0.1")]
    mean, std = values.mean(axis=0), values.std(axis=0, ddof=1)
    np.testing.assert_allclose(rows["mean-std"], mean - std, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rows["mean+std"], mean + std, rtol=0, atol=1e-12)

    # Each name once; band none adds no edge; count still there when asked for.
    df = tba.aggregate(two_configs, band="minmax", reductions="min,max,mean,count")
    assert list(df.columns) == ids + ["mean", "min", "max", "count"]
    assert (df["count"] == df["n"]).all()
    np.testing.assert_allclose(df[df["group"] == "lr=0.1"].query("tag == 'loss'")["max"], values.max(axis=0))
    df = tba.aggregate(two_configs, band="none", center="median", reductions="mean")
    assert list(df.columns) == ids + ["median", "mean"]
    df = tba.aggregate(two_configs, band="sem", x="relative", reductions="sem")
    assert list(df.columns) == ["tag", "group", "relative", "n", "mean", "mean-sem", "mean+sem", "sem"]


def test_command_line_files_carry_the_line_and_band(two_configs, tmp_path):
    out = tmp_path / "a.csv"
    cli(two_configs, "--band", "ci95", "--center", "median", "-o", out, check=0)
    got = pd.read_csv(out)
    expected = tba.aggregate(two_configs, band="ci95", center="median")
    assert list(got.columns) == list(expected.columns)
    np.testing.assert_array_equal(got["ci95_hi"], expected["ci95_hi"])
    out = tmp_path / "a.json"
    cli(two_configs, "-o", out, check=0)
    assert list(json.loads(out.read_text())["rows"][0])[5:8] == ["mean", "mean-std", "mean+std"]
    text = " ".join(cli("--help", check=0).stdout.split())  # as words: the terminal's width wraps it
    assert "the line, the band's edges, other statistics" in text and "count is always n" in text


# -- 2. --format tb writes the line and the band's edges, reductions only when asked -------------------


def _runs_written(out) -> set[str]:
    return {os.path.relpath(r, out) for r, _, names in os.walk(out) if any("tfevents" in n for n in names)}


def test_tb_format_writes_what_help_says(two_configs, tmp_path):
    out = tmp_path / "agg"
    cli(two_configs, "--format", "tb", "-o", out, check=0)
    assert _runs_written(out) == {
        f"lr={lr}/{s}" for lr in ("0.1", "0.01") for s in ("mean", "mean-std", "mean+std")
    }
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.util import tensor_util

    acc = EventAccumulator(str(out / "lr=0.01" / "mean+std"), size_guidance={"tensors": 0})
    acc.Reload()
    got = [float(tensor_util.make_ndarray(e.tensor_proto)) for e in acc.Tensors("loss")]
    values = _values(two_configs, "loss", "lr=0.01/")
    want = values.mean(axis=0) + values.std(axis=0, ddof=1)
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-6, atol=1e-7)

    out = tmp_path / "agg2"
    cli(two_configs, "--format", "tb", "--band", "ci95", "--reductions", "mean,q25", "-o", out, check=0)
    stats = ("mean", "ci95_lo", "ci95_hi", "q25")
    assert _runs_written(out) == {f"lr={lr}/{s}" for lr in ("0.1", "0.01") for s in stats}
    text = " ".join(cli("--help", check=0).stdout.split())
    assert "one per statistic of --reductions only when --reductions is given" in text


# -- 3. min_runs that leaves nothing says why --------------------------------------------------------


def test_min_runs_above_the_group_size_says_so(five_seeds, tmp_path):
    proc = cli(five_seeds, "--min-runs", "9", "-o", tmp_path / "a.csv", check=2)
    assert proc.stderr == (
        "tb-aggregate: error: nothing to write: every point has fewer than 9 runs (--min-runs=9): "
        "the groups have 5 runs each; set --min-runs to 5 or less\n"
    )
    df = tba.aggregate(five_seeds, min_runs=9)
    assert df.empty
    assert df.attrs["notes"][0] == (
        "every point has fewer than 9 runs (min_runs=9): the groups have 5 runs each; "
        "set min_runs to 5 or less"
    )
    # One group too small: named, the other one kept.
    df = tba.aggregate(five_seeds, min_runs=4, runs="^a/|^b/seed_[012]$")
    assert set(df["group"]) == {"a"}
    assert (
        "loss: group 'b' left out: every point has fewer than 4 runs (min_runs=4); at most 3 at one point"
        in (df.attrs["notes"])
    )


# -- 4. runs named PPO_1, PPO_2, ...; every group of one run ------------------------------------------


@pytest.mark.parametrize(
    "runs, groups",
    [
        (["PPO_1", "PPO_2", "PPO_3"], {"PPO": ["PPO_1", "PPO_2", "PPO_3"]}),
        (["PPO_2", "PPO_3", "A2C_1", "A2C_2"], {"PPO": ["PPO_2", "PPO_3"], "A2C": ["A2C_1", "A2C_2"]}),
        (["exp-1", "exp-2"], {"exp": ["exp-1", "exp-2"]}),
        (["PPO_1/train", "PPO_2/train"], {"PPO/train": ["PPO_1/train", "PPO_2/train"]}),
        (["resnet_50"], {"resnet_50": ["resnet_50"]}),  # a lone one stays whole
        (["resnet_50", "resnet_101"], {"resnet_50": ["resnet_50"], "resnet_101": ["resnet_101"]}),  # configs
        (["PPO_1", "PPO_3"], {"PPO_1": ["PPO_1"], "PPO_3": ["PPO_3"]}),  # not consecutive
        (["12-30-45", "12-30-46"], {"12-30-45": ["12-30-45"], "12-30-46": ["12-30-46"]}),  # times
        (
            ["x_1/seed_0", "x_1/seed_1", "x_2/seed_0"],
            {"x_1": ["x_1/seed_0", "x_1/seed_1"], "x_2": ["x_2/seed_0"]},
        ),
    ],
)
def test_a_trailing_index_is_a_repetition_when_runs_differ_only_in_it(runs, groups):
    placed, _ = group_runs(runs, "auto")
    got: dict[str, list[str]] = {}
    for run in runs:
        got.setdefault(placed[run], []).append(run)
    assert got == groups


def test_runs_named_ppo_1_2_3_form_one_group(tmp_path):
    logdir = str(tmp_path / "logs")
    for k in range(3):
        write_run(logdir, f"PPO_{k + 1}", {"rollout/ep_rew_mean": (STEPS, noisy_curve(10, k))}, writer="tbx")
    proc = cli(logdir, "-o", tmp_path / "a.csv", check=0)
    assert proc.stdout.startswith("3 runs, 1 group, 1 tag") and proc.stderr == ""
    got = pd.read_csv(tmp_path / "a.csv")
    values = _values(logdir, "rollout/ep_rew_mean")
    assert set(got["group"]) == {"PPO"} and (got["n"] == 3).all()
    np.testing.assert_allclose(got["std"], values.std(axis=0, ddof=1), rtol=1e-10)


def test_every_group_of_one_run_says_so_with_the_fix(tmp_path):
    logdir = str(tmp_path / "logs")
    for k, name in enumerate(("alpha", "beta", "gamma")):
        write_run(logdir, name, {"loss": (STEPS, noisy_curve(10, k))})
    proc = cli(logdir, "-o", tmp_path / "a.csv", check=0)
    note = (
        "tb-aggregate: note: every group has one run (3 runs, 3 groups): nothing is reduced across runs and "
        "there is no band; see the groups (--list) and group the runs with --group-by, e.g. "
        "--group-by=parent or --group-by=regex:PATTERN\n"
    )
    assert proc.stderr == note
    assert cli(logdir, "--list", check=0).stderr == note
    api_note = tba.aggregate(logdir).attrs["notes"][0]
    assert api_note.startswith("every group has one run (3 runs, 3 groups)")
    assert (
        'see the groups (attrs["groups"]) and group the runs with group_by, e.g. group_by=parent' in api_note
    )
    # Groups of several runs: no such note.
    assert not any("one run" in n for n in tba.aggregate(logdir, group_by="none").attrs["notes"])


# -- 5. a filter that selects nothing is an error that lists what there is -----------------------------


def test_nothing_selected_is_the_same_error_in_the_api_and_the_cli(tmp_path):
    logdir = str(tmp_path / "logs")
    tags = {f"train/metric_{i:02d}": (STEPS, noisy_curve(10, i)) for i in range(25)}
    for k in range(2):
        write_run(logdir, f"run_{k}", tags, hparams={"learning_rate": 0.1, "batch_size": 32})
    said = (
        "'^nope/' matches no scalar tag of the selected runs; their tags are "
        + ", ".join(f"train/metric_{i:02d}" for i in range(20))
        + " (and 5 more)"
    )
    with pytest.raises(tba.SelectionError) as caught:
        tba.aggregate(logdir, tags="^nope/")
    assert str(caught.value) == f"tags: {said}"
    assert isinstance(caught.value, ValueError) and caught.value.option == "tags"
    proc = cli(logdir, "--tags", "^nope/", "-o", tmp_path / "a.csv", check=2)
    assert proc.stderr == f"tb-aggregate: error: --tags: {said}\n"

    said = (
        "hparam 'learning_rat' is in none of the selected runs; their hparams are batch_size, learning_rate"
    )
    with pytest.raises(tba.SelectionError, match="^group_by: " + said + "; did you mean learning_rate\\?$"):
        tba.aggregate(logdir, group_by="hparam:learning_rat")
    proc = cli(logdir, "--group-by", "hparam:learning_rat", "-o", tmp_path / "a.csv", check=2)
    assert proc.stderr.startswith(f"tb-aggregate: error: --group-by: {said}")
    with pytest.raises(tba.SelectionError) as caught:
        tba.aggregate(logdir, group_by="regex:^x")
    assert (
        str(caught.value) == "group_by: 'regex:^x' matches none of the selected runs; they are run_0, run_1"
    )
    assert not os.path.exists(tmp_path / "a.csv")


# -- 6. float64 scalar tensors --------------------------------------------------------------------------


def _write_float64_run(path: str, values: np.ndarray) -> None:
    """Scalars stored as DT_DOUBLE tensors with the scalars plugin's metadata, as a float64 writer does."""
    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
    from tensorboard.plugins.scalar import metadata
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(path)
    for step, value in zip(STEPS, values):
        tensor = tensor_pb2.TensorProto(
            dtype=types_pb2.DT_DOUBLE,
            double_val=[float(value)],
            tensor_shape=tensor_shape_pb2.TensorShapeProto(),
        )
        summary = summary_pb2.Summary(
            value=[
                summary_pb2.Summary.Value(
                    tag="loss", tensor=tensor, metadata=metadata.create_summary_metadata("loss", "")
                )
            ]
        )
        writer.add_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summary))
    writer.close()


def test_float64_scalars_are_read_with_the_python_loader(tmp_path):
    logdir = str(tmp_path / "logs")
    for k in range(3):
        # Values float32 cannot hold: read back exactly, they were read as float64.
        _write_float64_run(os.path.join(logdir, f"seed_{k}"), noisy_curve(10, k) + 1e-9 * k)
    values = _values(logdir, "loss")
    df = tba.aggregate(logdir)
    np.testing.assert_array_equal(df["mean"], values.mean(axis=0))
    assert df.attrs["notes"] == [
        "TensorBoard's data server found no scalars in these event files (it leaves out scalars stored as "
        "float64 tensors): read with loader=python instead"
    ]
    proc = cli(logdir, "--list", check=0)
    assert proc.stdout.splitlines()[-1] == "3 runs of 3 selected, 1 group, 1 tag"
    assert "read with --loader=python instead" in proc.stderr

    # Asked for the data server: nothing, and the way out.
    proc = cli(logdir, "--loader", "rust", "-o", tmp_path / "a.csv", check=1)
    assert proc.stderr == (
        f"tb-aggregate: error: cannot read {logdir}: no TensorBoard runs with scalars in it; TensorBoard's "
        "data server found no scalars in these event files (it leaves out scalars stored as float64 "
        "tensors): try --loader=python\n"
    )
    proc = cli(logdir, "--loader", "rust", "--list", check=0)
    assert proc.stdout.splitlines()[-1] == "0 runs of 0 selected, 0 groups, 0 tags"
    assert "try --loader=python" in proc.stderr


# -- 7. run folders as the runs, as tensorboard-reducer takes them ----------------------------------------


def test_run_folders_are_the_runs(five_seeds, tmp_path):
    folders = [os.path.join(five_seeds, "a", f"seed_{k}") for k in range(5)]
    before = sorted(os.walk(five_seeds))
    proc = cli(*folders, "-o", tmp_path / "a.csv", check=0)
    assert proc.stdout.startswith("5 runs, 1 group, 2 tags")
    got = pd.read_csv(tmp_path / "a.csv")
    assert set(got["group"]) == {"all"}  # seed_0 ... seed_4: one configuration
    values = _values(five_seeds, "loss", "a/")
    loss = got[got["tag"] == "loss"]
    np.testing.assert_allclose(loss["mean"], values.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(loss["std"], values.std(axis=0, ddof=1), rtol=1e-10)
    assert sorted(os.walk(five_seeds)) == before  # nothing written among the runs

    # The API takes the same list; the same names clash: named from their common parent.
    both = [os.path.join(five_seeds, g, "seed_0") for g in ("a", "b")] + [
        os.path.join(five_seeds, "b", "seed_1")
    ]
    df = tba.aggregate(both, tags="loss")
    assert df.attrs["groups"] == {"a": ["a/seed_0"], "b": ["b/seed_0", "b/seed_1"]}
    expected = tba.aggregate(five_seeds, tags="loss", runs="^(a/seed_0|b/seed_[01])$")
    pd.testing.assert_frame_equal(df, expected)
    listing = cli(*both, "--list", check=0).stdout
    assert "3 runs of 3 selected, 2 groups, 2 tags" in listing

    # A folder inside another one given too would count twice.
    proc = cli(five_seeds, folders[0], "-o", tmp_path / "b.csv", check=2)
    assert proc.stderr.startswith(
        f"tb-aggregate: error: LOGDIR: {folders[0]} is inside {five_seeds}, given too"
    )
    proc = cli(folders[0], tmp_path / "missing", "-o", tmp_path / "b.csv", check=1)
    assert proc.stderr == f"tb-aggregate: error: cannot read {tmp_path / 'missing'}: no such folder\n"


def test_the_guide_maps_every_flag_of_tensorboard_reducer():
    with open(os.path.join(REPO, "docs", "coming-from-tensorboard-reducer.md"), encoding="utf-8") as f:
        guide = f.read()
    text = subprocess.run(["tb-reducer", "--help"], capture_output=True, text=True, timeout=60).stdout
    flags = {word.strip("[],.") for word in text.split() if word.startswith("-") and len(word) > 1}
    flags = {flag.split("=")[0] for flag in flags} - {"-h", "--help"}
    assert {"-o", "--outpath", "-r", "--reduce-ops", "-f", "--overwrite", "--lax-steps"} <= flags
    missing = sorted(flag for flag in flags if f"`{flag}" not in guide)
    assert not missing, missing
    for ours in ("--reductions", "--force", "--dup-steps", "--min-runs", "--group-by none"):
        assert ours in guide


# -- 8. one rule for option values: any case for fixed values, "did you mean" for a near miss ------------


@pytest.mark.parametrize(
    "given, expected",
    [
        ({"band": "CI95"}, {"band": "ci95"}),
        ({"center": "Median"}, {"center": "median"}),
        ({"align": "EXACT"}, {"align": "exact"}),
        ({"x": "Step"}, {"x": "step"}),
        ({"dup_steps": "LAST"}, {"dup_steps": "last"}),
        ({"reductions": "MEAN,Q05"}, {"reductions": ("mean", "q05")}),
        ({"group_by": "Parent"}, {"group_by": "parent"}),
        ({"group_by": "REGEX:(LR=[^/]+)"}, {"group_by": "regex:(LR=[^/]+)"}),  # the pattern as it is
        ({"group_by": "HParam:LR"}, {"group_by": "hparam:LR"}),  # hparam names as they are
        ({"runs": "SEED"}, {"runs": "SEED"}),  # regular expressions stay case-sensitive
    ],
)
def test_fixed_values_in_any_case_are_lower_cased(given, expected):
    query = Query(**given)
    for option, value in expected.items():
        assert getattr(query, option) == value


@pytest.mark.parametrize(
    "option, value, said",
    [
        (
            "band",
            "ci59",
            "band: 'ci59' is not one of std, sem, ci95, minmax, iqr, boot95, none; did you mean ci95?",
        ),
        ("center", "meen", "center: 'meen' is not one of mean, median, iqm; did you mean mean?"),
        ("x", "steps", "x: 'steps' is not one of step, relative, wall, tag:NAME; did you mean step?"),
        ("reductions", "mean,meadian", "; did you mean median?"),
        ("group_by", "parnet", "; did you mean parent?"),
        ("group_by", "regex", "; did you mean regex:PATTERN?"),
        ("band", "wide", "band: 'wide' is not one of std, sem, ci95, minmax, iqr, boot95, none"),
    ],
)
def test_a_near_miss_says_what_was_meant(option, value, said):
    with pytest.raises(tba.OptionError) as caught:
        Query(**{option: value})
    assert said in str(caught.value)
    if value == "wide":  # nothing close: no guess
        assert "did you mean" not in str(caught.value)


def test_regular_expressions_stay_case_sensitive(two_configs):
    with pytest.raises(tba.SelectionError):
        tba.aggregate(two_configs, runs="SEED_0")
    assert set(tba.aggregate(two_configs, runs="seed_0")["n"]) == {1}


def test_command_line_options_in_any_case(two_configs, tmp_path):
    out = tmp_path / "a.csv"
    cli(
        two_configs,
        "--band",
        "CI95",
        "--center",
        "MEDIAN",
        "--format",
        "CSV",
        "--loader",
        "Python",
        "-o",
        out,
        check=0,
    )
    assert out.read_text().splitlines()[0].startswith("tag,group,step,wall_time,n,median,ci95_lo,ci95_hi,")
    proc = cli(two_configs, "--band", "ci59", "-o", tmp_path / "b.csv", check=2)
    assert proc.stderr == (
        "tb-aggregate: error: --band: 'ci59' is not one of std, sem, ci95, minmax, iqr, boot95, none; "
        "did you mean ci95?\n"
    )
    proc = cli(two_configs, "--loader", "rusty", "-o", tmp_path / "b.csv", check=2)
    assert "--loader: 'rusty' is not one of auto, rust, python; did you mean rust?" in proc.stderr
    proc = cli(two_configs, "--format", "cvs", "-o", tmp_path / "b", check=2)
    assert (
        "--format: 'cvs' is not one of csv, csv.gz, json, xlsx, parquet, md, tex, pdf, svg, png, tb; "
        "did you mean csv?" in proc.stderr
    )


# -- the tab: the same columns, notes and errors, from a real tensorboard ---------------------------------


@pytest.fixture(scope="module")
def tab(tmp_path_factory):
    """A tensorboard on three runs of one group each (alpha, beta, gamma) and two of a second tag."""
    logdir = str(tmp_path_factory.mktemp("tab") / "logs")
    for k, name in enumerate(("alpha", "beta", "gamma")):
        write_run(logdir, name, {"loss": (STEPS, noisy_curve(10, k))}, hparams={"lr": 0.1 * (k + 1)})
    with tensorboard(logdir) as base:
        yield base, logdir


@pytest.mark.server
def test_the_tab_exports_notes_and_errors_as_the_api(tab):
    base, logdir = tab
    response = requests.get(f"{base}{PLUGIN}/export", params={"band": "CI95", "center": "median"}, timeout=60)
    assert response.status_code == 200, response.text
    header = response.content.decode().splitlines()[0]
    assert header == "tag,group,step,wall_time,n,median,ci95_lo,ci95_hi,mean,std,min,max"

    chart = requests.get(f"{base}{PLUGIN}/aggregate", params={"tag": "loss"}, timeout=60).json()
    one_run = [n for n in chart["notes"] if n.startswith("every group has one run (3 runs, 3 groups)")]
    assert one_run and "see the groups (the side panel's list of runs by group)" in one_run[0]
    summary = requests.get(f"{base}{PLUGIN}/summary", timeout=60).json()
    assert any(n.startswith("every group has one run") for n in summary["notes"])

    chart = requests.get(
        f"{base}{PLUGIN}/aggregate", params={"tag": "loss", "group_by": "none", "min_runs": 9}, timeout=60
    ).json()
    assert chart["notes"][0] == (
        "every point has fewer than 9 runs (min_runs=9): the group has 3 runs; set min_runs to 3 or less"
    )

    for route, params, said in [
        (
            "/export",
            {"tags": "^nope/"},
            "tags: '^nope/' matches no scalar tag of the selected runs; their tags are loss",
        ),
        ("/summary", {"tags": "^nope/"}, "tags: '^nope/' matches no scalar tag of the selected runs"),
        (
            "/aggregate",
            {"tag": "loss", "runs": "^x"},
            "runs: '^x' matches no run; the runs are alpha, beta, gamma",
        ),
        (
            "/export",
            {"group_by": "hparam:nope"},
            "group_by: hparam 'nope' is in none of the selected runs; their hparams are lr",
        ),
        (
            "/export",
            {"band": "ci59"},
            "band: 'ci59' is not one of std, sem, ci95, minmax, iqr, boot95, none; did you mean ci95?",
        ),
        ("/export", {"format": "JSON", "tags": "x"}, "tags: 'x' matches no scalar tag"),
    ]:
        response = requests.get(f"{base}{PLUGIN}{route}", params=params, timeout=60)
        assert response.status_code == 400, (route, params, response.text)
        assert response.text.startswith(said) and response.text.count("\n") == 1, response.text
    # The export format, too, in any case.
    assert requests.get(f"{base}{PLUGIN}/export", params={"format": "JSON"}, timeout=60).json()["rows"]
