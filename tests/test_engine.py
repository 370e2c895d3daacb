"""The engine on real event files written by real writers, checked against numpy on raw values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from rawread import read_logdir
from reference import tensorboard_smoothing
from scipy import stats as sps
from writers import noisy_curve, write_run

import tb_aggregate_plugin as tba
from tb_aggregate_plugin.compute.grouping import auto_key

LOADERS = ["rust", "python"]


def raw_matrix(logdir, tag, runs=None):
    """Values of ``tag`` per run (rows) from the independent reader, in step order."""
    raw = read_logdir(str(logdir))
    runs = runs or sorted(raw)
    return np.array([[v for _, _, v in sorted(raw[r][tag], key=lambda p: p[0])] for r in runs])


# -- tensorboard-reducer's reference numbers and numpy ------------------------------------------


@pytest.mark.parametrize("loader", LOADERS)
def test_strict_matches_tensorboard_reducer_and_numpy(real_logs, loader):
    import tensorboard_reducer as tbr

    logdir = real_logs / "strict"
    df = tba.aggregate(str(logdir), loader=loader)
    ops = ["mean", "std", "min", "max", "median"]
    reference = tbr.reduce_events(tbr.load_tb_events([str(logdir / f"run_{i}") for i in (1, 2, 3)]), ops)
    assert list(df["step"]) == list(reference["mean"]["strict/foo"].index)
    for op in ops:
        np.testing.assert_allclose(
            df[op].to_numpy(), reference[op]["strict/foo"].to_numpy(), rtol=0, atol=1e-9
        )
    values = raw_matrix(logdir, "strict/foo")
    np.testing.assert_allclose(df["std"], values.std(axis=0, ddof=1), rtol=0, atol=1e-12)
    np.testing.assert_allclose(df["median"], np.median(values, axis=0), rtol=0, atol=1e-12)
    assert (df["n"] == 3).all() and "count" not in df.columns  # count is n: only when asked for
    assert df.attrs["groups"] == {"all": ["run_1", "run_2", "run_3"]}
    assert set(df.attrs["alignment"].values()) == {"exact"}


# -- repeated steps ------------------------------------------------------------------------------


def expected_dedup(points, how):
    by_step: dict[int, list[float]] = {}
    for step, _, value in points:
        by_step.setdefault(step, []).append(value)
    pick = {"first": lambda v: v[0], "last": lambda v: v[-1], "mean": lambda v: float(np.mean(v))}[how]
    return {s: pick(v) for s, v in sorted(by_step.items())}


@pytest.mark.parametrize("how", ["last", "first", "mean"])
def test_duplicate_steps(real_logs, how):
    logdir = real_logs / "duplicate_steps"
    raw = read_logdir(str(logdir))
    assert all(len(raw[r]["dup_steps/foo"]) == 210 for r in raw)  # the fixture really repeats steps
    df = tba.aggregate(str(logdir), tags="foo", dup_steps=how)
    assert len(df) == 200 and list(df["step"]) == list(range(200))
    expected = np.array([list(expected_dedup(raw[r]["dup_steps/foo"], how).values()) for r in sorted(raw)])
    np.testing.assert_allclose(df["mean"], expected.mean(axis=0), rtol=0, atol=1e-9)
    np.testing.assert_allclose(df["max"], expected.max(axis=0), rtol=0, atol=1e-9)


def test_duplicate_step_choices_differ(real_logs):
    logdir = str(real_logs / "duplicate_steps")
    steps = [s for s, _, _ in read_logdir(logdir)["run_1"]["dup_steps/foo"]]
    repeated = sorted({s for s in steps if steps.count(s) > 1})
    assert len(repeated) == 10
    first, last = (tba.aggregate(logdir, tags="foo", dup_steps=h) for h in ("first", "last"))
    differs = first["mean"].to_numpy() != last["mean"].to_numpy()
    assert list(np.flatnonzero(differs)) == repeated


def test_resumed_run_written_twice(tmp_path):
    # A run resumed from a checkpoint at step 5 logs steps 5..9 again with new values.
    write_run(str(tmp_path), "a", {"loss": ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], np.arange(10.0))})
    write_run(str(tmp_path), "a", {"loss": ([5, 6, 7, 8, 9], 100 + np.arange(5.0))})
    for how, tail in [
        ("last", 100 + np.arange(5.0)),
        ("first", np.arange(5.0, 10.0)),
        ("mean", (np.arange(5.0, 10.0) + 100 + np.arange(5.0)) / 2),
    ]:
        df = tba.aggregate(str(tmp_path), dup_steps=how)
        np.testing.assert_array_equal(df["step"], np.arange(10))
        np.testing.assert_allclose(df["mean"].to_numpy()[5:], tail)


# -- ragged runs, tags in some runs, different strides -------------------------------------------


@pytest.mark.parametrize("loader", LOADERS)
def test_lax_runs_of_different_length(real_logs, loader):
    logdir = real_logs / "lax"
    raw = read_logdir(str(logdir))
    df = tba.aggregate(str(logdir), loader=loader)
    foo = df[df["tag"] == "lax/foo"]
    lengths = sorted(len(raw[r]["lax/foo"]) for r in raw)
    assert lengths == [110, 120, 130]
    assert list(foo["n"]) == [3] * 110 + [2] * 10 + [1] * 10
    # Each step's mean over the runs that reach it, from the raw values.
    by_step: dict[int, list[float]] = {}
    for r in raw:
        for step, _, v in raw[r]["lax/foo"]:
            by_step.setdefault(step, []).append(v)
    np.testing.assert_allclose(foo["mean"], [np.mean(by_step[s]) for s in foo["step"]], rtol=0, atol=1e-9)
    # A tag present in some runs is reduced over those runs only.
    for tag in ("lax/bar_1", "lax/bar_2", "lax/bar_3", "lax/bar_4"):
        having = [r for r in raw if tag in raw[r]]
        assert 0 < len(having) < 3 or tag == "lax/bar_4" or len(having) == 3
        assert df[df["tag"] == tag]["n"].max() == len(having)


def test_different_logging_strides_cover_the_whole_range(tmp_path):
    a_steps, b_steps = np.arange(0, 1001, 10), np.arange(0, 1001, 25)
    write_run(str(tmp_path), "seed_0", {"loss": (a_steps, np.sin(a_steps / 100.0))})
    write_run(str(tmp_path), "seed_1", {"loss": (b_steps, np.cos(b_steps / 100.0))}, writer="tbx")
    df = tba.aggregate(str(tmp_path))
    grid = np.union1d(a_steps, b_steps)
    np.testing.assert_array_equal(df["step"], grid)
    assert (df["n"] == 2).all() and df.attrs["alignment"] == {"loss | all": "interpolate"}
    a = np.interp(grid, a_steps, np.sin(a_steps / 100.0).astype(np.float32))
    b = np.interp(grid, b_steps, np.cos(b_steps / 100.0).astype(np.float32))
    np.testing.assert_allclose(df["mean"], (a + b) / 2, rtol=0, atol=1e-6)
    np.testing.assert_allclose(df["std"], np.std([a, b], axis=0, ddof=1), rtol=0, atol=1e-6)


def test_exact_alignment_never_interpolates(tmp_path):
    write_run(str(tmp_path), "seed_0", {"loss": ([0, 10, 20], [1.0, 2.0, 3.0])})
    write_run(str(tmp_path), "seed_1", {"loss": ([0, 5, 20], [3.0, 4.0, 5.0])})
    df = tba.aggregate(str(tmp_path), align="exact")
    assert list(df["step"]) == [0, 5, 10, 20]
    assert list(df["n"]) == [2, 1, 1, 2]
    np.testing.assert_allclose(df["mean"], [2.0, 4.0, 2.0, 4.0])


def test_interpolation_never_extrapolates(tmp_path):
    write_run(str(tmp_path), "seed_0", {"loss": ([0, 100], [0.0, 10.0])})
    write_run(str(tmp_path), "seed_1", {"loss": ([50, 200], [5.0, 20.0])})
    df = tba.aggregate(str(tmp_path), align="interpolate")
    assert list(df["step"]) == [0, 50, 100, 200]
    assert list(df["n"]) == [1, 2, 2, 1]
    np.testing.assert_allclose(df["mean"], [0.0, 5.0, 10.0, 20.0])


# -- writers, formats and grouping ---------------------------------------------------------------


@pytest.mark.parametrize("loader", LOADERS)
def test_tf2_tensor_and_tf1_simple_value_scalars_keras_layout(tmp_path, loader):
    steps = np.arange(50)
    for seed, writer in enumerate(["tb", "tbx", "tb"]):
        for split, offset in (("train", 0.0), ("validation", 1.0)):
            write_run(
                str(tmp_path),
                f"seed_{seed}/{split}",
                {"epoch_loss": (steps, noisy_curve(50, seed) + offset)},
                writer=writer,
            )
    df = tba.aggregate(str(tmp_path), loader=loader)
    assert df.attrs["groups"] == {
        "train": ["seed_0/train", "seed_1/train", "seed_2/train"],
        "validation": ["seed_0/validation", "seed_1/validation", "seed_2/validation"],
    }
    for split in ("train", "validation"):
        values = raw_matrix(tmp_path, "epoch_loss", [f"seed_{s}/{split}" for s in range(3)])
        got = df[df["group"] == split]
        np.testing.assert_allclose(got["mean"], values.mean(axis=0), rtol=0, atol=1e-9)
        assert (got["n"] == 3).all()


@pytest.mark.parametrize(
    "run,key",
    [
        ("lr=0.1/seed_3", "lr=0.1"),
        ("seed_0/train", "train"),
        ("lr=0.1_seed3", "lr=0.1"),
        ("adam/run-2", "adam"),
        ("cfg_a/trial_7", "cfg_a"),
        ("cfg_a_rep1", "cfg_a"),
        ("fold_4/val", "val"),
        ("bert/version_0", "bert"),
        ("sweep/lr=0.01/3", "sweep/lr=0.01"),
        ("seed_2", "all"),
        ("resnet50", "resnet50"),
    ],
)
def test_auto_grouping_drops_the_repetition_index(run, key):
    assert auto_key(run) == key


def test_group_by_modes(tmp_path):
    steps = np.arange(5)
    for lr in ("0.1", "0.01"):
        for seed in range(2):
            write_run(
                str(tmp_path),
                f"lr={lr}/seed_{seed}",
                {"loss": (steps, steps * float(lr) + seed)},
                hparams={"lr": float(lr), "seed": seed},
            )
    write_run(str(tmp_path), "baseline", {"loss": (steps, steps * 0.0)})
    logdir = str(tmp_path)
    assert set(tba.aggregate(logdir, group_by="parent").attrs["groups"]) == {"lr=0.1", "lr=0.01", "."}
    assert tba.aggregate(logdir, group_by="none").attrs["groups"] == {
        "all": ["baseline", "lr=0.01/seed_0", "lr=0.01/seed_1", "lr=0.1/seed_0", "lr=0.1/seed_1"]
    }
    df = tba.aggregate(logdir, group_by=r"regex:lr=([\d.]+)")
    assert set(df.attrs["groups"]) == {"0.1", "0.01"}
    assert "baseline" in df.attrs["unplaced"]
    assert any("baseline" in n for n in df.attrs["notes"])
    df = tba.aggregate(logdir, group_by="hparam:lr")
    assert df.attrs["groups"] == {
        "lr=0.01": ["lr=0.01/seed_0", "lr=0.01/seed_1"],
        "lr=0.1": ["lr=0.1/seed_0", "lr=0.1/seed_1"],
    }
    assert df.attrs["unplaced"] == {"baseline": "has no hparam 'lr'"}
    got = df[df["group"] == "lr=0.1"]
    np.testing.assert_allclose(got["mean"], steps * np.float32(0.1) + 0.5, atol=1e-6)


def test_hparams_written_by_add_hparams_into_a_child_run(tmp_path):
    from tensorboardX import SummaryWriter

    for seed, lr in enumerate([0.1, 0.1, 0.5]):
        w = SummaryWriter(str(tmp_path / f"run{seed}"))
        for step in range(3):
            w.add_scalar("acc", lr * step, step)
        w.add_hparams({"lr": lr}, {"hparam/acc": lr})  # PyTorch-style: writes into run<seed>/<timestamp>
        w.close()
    df = tba.aggregate(str(tmp_path), group_by="hparam:lr", tags="^acc$")
    assert df.attrs["groups"] == {"lr=0.1": ["run0", "run1"], "lr=0.5": ["run2"]}


# -- statistics ----------------------------------------------------------------------------------


def test_all_reductions_against_numpy_and_scipy(tmp_path):
    steps = np.arange(30)
    for seed in range(5):
        write_run(str(tmp_path), f"seed_{seed}", {"loss": (steps, noisy_curve(30, seed))})
    reductions = "mean,median,std,var,sem,min,max,count,ci95_lo,ci95_hi,q05,q25,q95"
    df = tba.aggregate(str(tmp_path), reductions=reductions)
    # The line and the band's edges (band std around the mean) first, then the other reductions.
    others = [r for r in reductions.split(",") if r != "mean"]
    drawn = ["mean", "mean-std", "mean+std"]
    assert list(df.columns) == ["tag", "group", "step", "wall_time", "n"] + drawn + others
    v = raw_matrix(tmp_path, "loss")
    sem = v.std(axis=0, ddof=1) / np.sqrt(5)
    half = sps.t.ppf(0.975, 4) * sem
    expected = {
        "mean": v.mean(0),
        "median": np.median(v, 0),
        "std": v.std(0, ddof=1),
        "var": v.var(0, ddof=1),
        "sem": sem,
        "min": v.min(0),
        "max": v.max(0),
        "count": np.full(30, 5),
        "ci95_lo": v.mean(0) - half,
        "ci95_hi": v.mean(0) + half,
        "q05": np.percentile(v, 5, axis=0),
        "q25": np.percentile(v, 25, axis=0),
        "q95": np.percentile(v, 95, axis=0),
    }
    for name, values in expected.items():
        np.testing.assert_allclose(df[name], values, rtol=0, atol=1e-12, err_msg=name)


def test_ci95_uses_student_t_not_z(tmp_path):
    for seed, value in enumerate([1.0, 2.0, 4.0]):
        write_run(str(tmp_path), f"seed_{seed}", {"x": ([0], [value])})
    row = tba.aggregate(str(tmp_path), reductions="mean,sem,ci95_hi").iloc[0]
    assert row["ci95_hi"] - row["mean"] == pytest.approx(4.302652729 * row["sem"], rel=1e-9)
    assert row["sem"] == pytest.approx(np.std([1, 2, 4], ddof=1) / math.sqrt(3))


@pytest.mark.parametrize("weight", [0.0, 0.6, 0.95])
def test_smoothing_is_tensorboards_debiased_ema_per_run(tmp_path, weight):
    steps = np.arange(40)
    for seed in range(3):
        values = noisy_curve(40, seed)
        if seed == 1:
            values[10] = np.nan
        write_run(str(tmp_path), f"seed_{seed}", {"loss": (steps, values)})
    df = tba.aggregate(str(tmp_path), smoothing=weight)
    v = raw_matrix(tmp_path, "loss")
    smoothed = np.array([tensorboard_smoothing(list(row), weight) for row in v])
    np.testing.assert_allclose(df["mean"], np.nanmean(smoothed, axis=0), rtol=0, atol=1e-9)
    assert df["n"].tolist()[10] == 2


# -- NaN, one-run groups, empty selections, options ---------------------------------------------


@pytest.mark.parametrize("loader", LOADERS)
def test_nan_and_inf_are_left_out_and_counted(tmp_path, loader):
    steps = np.arange(6)
    write_run(str(tmp_path), "seed_0", {"loss": (steps, [1.0, np.nan, 3.0, np.inf, 5.0, np.nan])})
    write_run(str(tmp_path), "seed_1", {"loss": (steps, [2.0, 2.0, -np.inf, 4.0, 6.0, np.nan])})
    df = tba.aggregate(str(tmp_path), loader=loader)
    # Step 5 is NaN in every run: no finite value stands behind it, so no row (min_runs=1).
    assert list(df["step"]) == [0, 1, 2, 3, 4]
    assert list(df["n"]) == [2, 1, 1, 1, 2]
    np.testing.assert_allclose(df["mean"], [1.5, 2.0, 3.0, 4.0, 5.5])
    assert df.attrs["nonfinite"] == {"loss | seed_0": 3, "loss | seed_1": 2}
    assert any("3 NaN/inf" in n and "seed_0" in n for n in df.attrs["notes"])


def test_diverged_run_in_demo_logs(demo_logs):
    df = tba.aggregate(demo_logs, tags="^train/loss$", group_by="hparam:lr")
    lr01 = df[df["group"] == "lr=0.1"]
    assert lr01[lr01["step"] < 250]["n"].eq(5).all() and lr01[lr01["step"] >= 250]["n"].eq(4).all()
    lr003 = df[df["group"] == "lr=0.03"]
    assert lr003[lr003["step"] <= 220]["n"].eq(5).all() and lr003[lr003["step"] > 220]["n"].eq(4).all()


def test_group_of_one_run_has_nan_std(tmp_path):
    write_run(str(tmp_path), "only", {"loss": ([0, 1], [1.0, 2.0])})
    df = tba.aggregate(str(tmp_path), reductions="mean,std,sem,ci95_lo")
    assert df["std"].isna().all() and df["sem"].isna().all() and df["ci95_lo"].isna().all()
    np.testing.assert_allclose(df["mean"], [1.0, 2.0])


def test_min_runs_drops_thin_points(real_logs):
    df = tba.aggregate(str(real_logs / "lax"), tags="^lax/foo$", min_runs=2)
    assert len(df) == 120 and df["n"].min() == 2


def test_a_filter_that_selects_nothing_says_what_there_is(real_logs):
    """As the command line (exit 2) and the tab (400): an error naming the option and listing the
    runs or tags there are, not an empty table."""
    logdir = str(real_logs / "strict")
    said = r"^runs: 'no-such-run' matches no run; the runs are run_1, run_2, run_3$"
    with pytest.raises(tba.SelectionError, match=said):
        tba.aggregate(logdir, runs="no-such-run")
    said = r"^tags: 'no-such-tag' matches no scalar tag of the selected runs; their tags are strict/foo$"
    with pytest.raises(tba.SelectionError, match=said):
        tba.aggregate(logdir, tags="no-such-tag")
    assert issubclass(tba.SelectionError, tba.OptionError) and issubclass(tba.SelectionError, ValueError)


def test_a_20000_step_run_keeps_every_point(tmp_path):
    steps = np.arange(20_000)
    write_run(str(tmp_path), "long", {"loss": (steps, np.sin(steps / 1000.0))}, writer="tbx")
    for loader in LOADERS:
        df = tba.aggregate(str(tmp_path), loader=loader)
        assert len(df) == 20_000
        np.testing.assert_allclose(df["mean"], np.sin(steps / 1000.0).astype(np.float32), atol=1e-7)


def test_time_axes_interpolate_on_an_even_grid(tmp_path):
    steps = np.arange(11)
    write_run(
        str(tmp_path), "seed_0", {"loss": (steps, steps * 1.0)}, wall_times={"loss": 1000.0 + steps * 2}
    )
    write_run(
        str(tmp_path),
        "seed_1",
        {"loss": (steps[:6], steps[:6] * 3.0)},
        wall_times={"loss": 5000.0 + steps[:6] * 4},
    )
    df = tba.aggregate(str(tmp_path), x="relative")
    assert list(df.columns[:4]) == ["tag", "group", "relative", "n"]
    np.testing.assert_allclose(df["relative"], np.linspace(0, 20, 11))
    # seed_1 lasts 20 s too (5 steps x 4 s): value 3 * t / 4; seed_0 is t / 2.
    t = np.linspace(0, 20, 11)
    np.testing.assert_allclose(df["mean"], (t / 2 + 3 * t / 4) / 2, atol=1e-9)
    wall = tba.aggregate(str(tmp_path), x="wall")
    assert wall["wall"].iloc[0] == 1000.0 and wall["wall"].iloc[-1] == 5020.0
    assert wall["n"].max() == 1  # the two runs never overlap in wall time


@pytest.mark.parametrize(
    "options,option",
    [
        ({"band": "bogus"}, "band"),
        ({"center": "mode"}, "center"),
        ({"align": "nearest"}, "align"),
        ({"x": "epoch"}, "x"),
        ({"dup_steps": "max"}, "dup_steps"),
        ({"smoothing": 1.0}, "smoothing"),
        ({"smoothing": -0.1}, "smoothing"),
        ({"smoothing": "abc"}, "smoothing"),
        ({"smoothing": float("nan")}, "smoothing"),
        ({"min_runs": 0}, "min_runs"),
        ({"min_runs": "two"}, "min_runs"),
        ({"reductions": "mean,mode"}, "reductions"),
        ({"reductions": "q5"}, "reductions"),
        ({"reductions": ""}, "reductions"),
        ({"runs": "("}, "runs"),
        ({"tags": "[a-"}, "tags"),
        ({"group_by": "folder"}, "group_by"),
        ({"group_by": "regex:("}, "group_by"),
        ({"group_by": "regex:"}, "group_by"),
        ({"group_by": "hparam:"}, "group_by"),
    ],
)
def test_invalid_options_name_the_option(real_logs, options, option):
    with pytest.raises(tba.OptionError) as info:
        tba.aggregate(str(real_logs / "strict"), **options)
    assert info.value.option == option and str(info.value).startswith(f"{option}: ")
    assert isinstance(info.value, ValueError)


def test_unknown_option_is_an_error():
    with pytest.raises(TypeError):
        tba.Query(colour="red")
    with pytest.raises(tba.OptionError, match="colour: unknown option"):
        tba.Query.from_mapping({"colour": "red"})


def test_result_is_a_tidy_frame(real_logs):
    df = tba.aggregate(str(real_logs / "lax"))
    assert isinstance(df, pd.DataFrame)
    assert df["step"].dtype == np.int64 and df["n"].dtype.kind == "i"
    assert not df.duplicated(["tag", "group", "step"]).any()
    assert df.attrs["query"]["group_by"] == "auto"


@pytest.mark.parametrize("option", ["runs", "tags", "group_by"])
def test_pathological_regex_is_stopped_with_a_clear_error(tmp_path, option):
    # (a|aa)+$ backtracks exponentially on "aaaa...!"; matching stops at the time budget.
    name = "a" * 200 + "!"
    write_run(str(tmp_path), name, {name: ([0, 1], [1.0, 2.0])})
    value = "regex:(a|aa)+$" if option == "group_by" else "(a|aa)+$"
    with pytest.raises(tba.OptionError, match=f"^{option}: .*takes too long"):
        tba.aggregate(str(tmp_path), **{option: value})
    # The classic (a+)+$ is handled by the regex engine without blowing up: no match, no error.
    with pytest.raises(tba.SelectionError, match=r"^runs: '\(a\+\)\+\$' matches no run"):
        tba.aggregate(str(tmp_path), runs="(a+)+$")


@pytest.mark.parametrize("loader", LOADERS)
def test_messy_logdir_keeps_good_runs_and_names_what_was_skipped(tmp_path, loader):
    import os

    steps = np.arange(50)
    for seed in range(3):
        write_run(str(tmp_path), f"seed_{seed}", {"loss": (steps, steps + seed * 1.0)})
    cut = write_run(str(tmp_path), "seed_3", {"loss": (steps, steps + 3.0)})
    (event_file,) = os.listdir(cut)
    data = (tmp_path / "seed_3" / event_file).read_bytes()
    (tmp_path / "seed_3" / event_file).write_bytes(data[: len(data) - 10])  # cut inside the last record
    (tmp_path / "zero").mkdir()
    (tmp_path / "zero" / "events.out.tfevents.1.zero").write_bytes(b"")
    (tmp_path / "noise").mkdir()
    (tmp_path / "noise" / "events.out.tfevents.1.noise").write_bytes(np.random.default_rng(0).bytes(4096))
    df = tba.aggregate(str(tmp_path), loader=loader)
    assert df.attrs["groups"] == {"all": ["seed_0", "seed_1", "seed_2", "seed_3"]}
    # seed_3 lost its last point only; the good runs are all there.
    assert list(df["n"]) == [4] * 49 + [3]
    np.testing.assert_allclose(df["mean"].to_numpy()[:49], steps[:49] + 1.5)
    skipped = df.attrs["skipped"]
    assert set(skipped) == {"seed_3", "zero", "noise"}
    assert (
        "cut off" in skipped["seed_3"]
        and "empty" in skipped["zero"]
        and "not an event file" in skipped["noise"]
    )
    assert sum("skipped" in n for n in df.attrs["notes"]) == 3


# -- what a chart and the summary are given (drawn_only) -----------------------------------------


@pytest.fixture(scope="module")
def two_groups(tmp_path_factory):
    """Two groups of runs on shared steps (one run with a NaN and an inf), one on other strides."""
    root = tmp_path_factory.mktemp("drawn_logs")
    for i in range(4):
        values = noisy_curve(150, i)
        if i == 1:
            values[[20, 90]] = [math.nan, math.inf]
        write_run(str(root), f"lr=0.1/seed_{i}", {"loss": (np.arange(150), values)})
        steps = np.arange(0, 160 + 10 * i, 2 + i)
        write_run(str(root), f"lr=0.3/seed_{i}", {"loss": (steps, noisy_curve(len(steps), 10 + i))})
    return root


DRAWN_QUERIES = [
    {},
    {"smoothing": 0.6},
    {"smoothing": 0.6, "band": "minmax"},
    {"smoothing": 0.9, "center": "median", "band": "iqr"},
    {"smoothing": 0.5, "band": "ci95", "min_runs": 2},
    {"smoothing": 0.999, "band": "sem", "x": "relative"},
]


@pytest.mark.parametrize("options", DRAWN_QUERIES)
def test_drawn_only_gives_the_chart_and_summary_of_the_whole_result(two_groups, options):
    from tb_aggregate_plugin.compute import engine, summary
    from tb_aggregate_plugin.read.logdir import open_logdir
    from tb_aggregate_plugin.read.source import Source
    from tb_aggregate_plugin.write import chart

    query = tba.Query(**options)
    with open_logdir(str(two_groups), loader="rust") as loaded:
        whole = engine.run(query, Source(loaded.provider), tag="loss", keep_runs=True)
        drawn = engine.run(query, Source(loaded.provider), tag="loss", keep_runs=True, drawn_only=True)
    kwargs = {"max_points": 40, "include_runs": True}
    assert chart.chart(drawn, "loss", **kwargs) == chart.chart(whole, "loss", **kwargs)
    pd.testing.assert_frame_equal(summary.summary(drawn), summary.summary(whole), check_exact=True)
    if query.smoothing:  # only the center and band were computed: there is no table to give
        with pytest.raises(ValueError, match="drawn_only"):
            drawn.table()
    else:  # unsmoothed: the table's reductions were computed too, for every route to reuse
        pd.testing.assert_frame_equal(drawn.table(), whole.table(), check_exact=True)


def test_individual_runs_are_smoothed_again_when_the_reductions_are_reused(two_groups):
    from tb_aggregate_plugin.compute import engine
    from tb_aggregate_plugin.read.logdir import open_logdir
    from tb_aggregate_plugin.read.source import Source

    query = tba.Query(smoothing=0.7, group_by="none", runs="lr=0.1")
    values = raw_matrix(two_groups, "loss", [f"lr=0.1/seed_{i}" for i in range(4)])
    expected = np.array([tensorboard_smoothing(list(row), 0.7) for row in values])
    with open_logdir(str(two_groups), loader="rust") as loaded:
        source = Source(loaded.provider)
        engine.run(query, source, tag="loss")  # fills the memo: the reductions, not the curves
        again = engine.run(query, source, tag="loss", keep_runs=True)
    smoothed = np.where(np.isfinite(expected), expected, np.nan)  # the engine holds NaN for inf too
    np.testing.assert_allclose(again.blocks[0].aligned.values, smoothed, rtol=1e-12, equal_nan=True)
    with np.errstate(all="ignore"):
        mean = np.nanmean(smoothed, axis=0)
    np.testing.assert_allclose(again.frame["mean"], mean, rtol=1e-12)


def test_chart_json_is_the_document_tensorboard_would_send():
    import gzip
    import json

    from tensorboard.backend import json_util
    from werkzeug.test import EnvironBuilder
    from werkzeug.wrappers import Request

    from tb_aggregate_plugin import plugin

    def body(payload, headers):
        response = plugin._json(Request(EnvironBuilder(headers=headers).get_environ()), payload)
        data = b"".join(response.response)
        if response.headers.get("Content-Encoding") == "gzip":
            data = gzip.decompress(data)
        return response.headers["Content-Type"], data

    payload = {"x": [0, 1, 2], "center": [0.1, None, 1e-300], "runs": ["a\u00e9", "<b>"], "n": {"a": 1}}
    expected = json.dumps(json_util.Cleanse(payload)).encode()
    for headers in ({"Accept-Encoding": "gzip"}, {}):  # a client without gzip gets it unpacked
        assert body(payload, headers) == ("application/json", expected)
    odd = {"value": math.nan, "set": {2, 1}}  # not JSON as it is: TensorBoard's way, as before
    assert json.loads(body(odd, {})[1]) == {"value": "NaN", "set": [1, 2]}
