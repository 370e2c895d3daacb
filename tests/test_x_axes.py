"""x from another metric (``x=tag:NAME``) and gaps on the evenly spaced grids (time axes, ``tag:NAME``).

Every expected number is computed here by hand with numpy (np.interp) from the raw event values
(tests/rawread.py), never by the code under test. The API, the command line and the tab's routes
(in process, through werkzeug) get the same options by the same names.
"""

from __future__ import annotations

import argparse
import io
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from rawread import read_logdir
from reference import tensorboard_smoothing
from tensorboard.plugins import base_plugin
from test_cli import cli
from werkzeug.test import Client
from writers import noisy_curve, write_run

import tb_aggregate_plugin as tba
from tb_aggregate_plugin.plugin import AggregatePlugin
from tb_aggregate_plugin.read.logdir import open_logdir

PLUGIN = "/data/plugin/aggregate"
X = "tag:samples"


@pytest.fixture(scope="module")
def logdir(tmp_path_factory) -> str:
    """One group of four runs: ``loss`` against ``samples`` (samples seen, a run's own batch size).

    seed_0 and seed_1 log both tags at every step (different batch sizes: different x); seed_2 logs
    ``samples`` only every third step and goes back once (a restart that reset the counter), where
    the points must be left out; seed_3 has no ``samples`` at all and is left out.
    """
    root = str(tmp_path_factory.mktemp("x_tag") / "runs")
    steps = np.arange(0, 60)
    write_run(root, "cfg/seed_0", {"loss": (steps, noisy_curve(60, 0)), "samples": (steps, steps * 32.0)})
    write_run(
        root, "cfg/seed_1", {"loss": (steps, noisy_curve(60, 1)), "samples": (steps, steps * 48.0 + 100)}
    )
    x2 = steps[::3] * 40.0
    x2[12:14] = [200.0, 260.0]  # steps 36 and 39 go back below what was seen before
    write_run(
        root,
        "cfg/seed_2",
        {"loss": (steps, noisy_curve(60, 2)), "samples": (steps[::3], x2)},
        writer="tbx",
    )
    write_run(root, "cfg/seed_3", {"loss": (steps, noisy_curve(60, 3))})
    return root


def _by_hand(logdir: str, tag: str, smoothing: float = 0.0) -> dict[str, np.ndarray]:
    """The group's curve of ``tag`` against ``samples``, computed here from the raw values."""
    raw = read_logdir(logdir)
    xs, ys = [], []
    for run in sorted(raw):
        if "samples" not in raw[run]:
            continue
        y_at = {s: v for s, _, v in raw[run][tag]}
        x_at = {s: v for s, _, v in raw[run]["samples"]}
        steps = sorted(set(y_at) & set(x_at))
        x = np.array([x_at[s] for s in steps])
        y = np.array([y_at[s] for s in steps])
        keep = x > np.concatenate(([-np.inf], np.maximum.accumulate(x)[:-1]))  # strictly above all before
        y = tensorboard_smoothing(list(y[keep]), smoothing) if smoothing else y[keep]
        xs.append(x[keep])
        ys.append(y)
    grid = np.linspace(min(x.min() for x in xs), max(x.max() for x in xs), max(len(x) for x in xs))
    values = np.vstack(
        [np.where((grid >= x[0]) & (grid <= x[-1]), np.interp(grid, x, y), np.nan) for x, y in zip(xs, ys)]
    )
    n = np.isfinite(values).sum(axis=0)
    with warnings.catch_warnings():  # the std of one value is NaN, and numpy says so
        warnings.simplefilter("ignore", RuntimeWarning)
        return {
            "x": grid,
            "n": n,
            "mean": np.nanmean(values, axis=0),
            "std": np.nanstd(values, axis=0, ddof=1),
            "min": np.nanmin(values, axis=0),
        }


@pytest.mark.parametrize("loader", ["rust", "python"])
def test_x_from_another_tag_matches_np_interp_on_raw_values(logdir, loader):
    df = tba.aggregate(logdir, x=X, tags="^loss$", reductions="mean,std,min", loader=loader)
    # n, the line and the band's edges (every table has them), then the other reductions.
    assert list(df.columns) == ["tag", "group", X, "n", "mean", "mean-std", "mean+std", "std", "min"]
    expected = _by_hand(logdir, "loss")
    np.testing.assert_allclose(df[X], expected["x"], rtol=1e-12)
    np.testing.assert_array_equal(df["n"], expected["n"])
    np.testing.assert_allclose(df["mean"], expected["mean"], rtol=1e-9)
    np.testing.assert_allclose(df["std"], expected["std"], rtol=1e-9)
    np.testing.assert_allclose(df["min"], expected["min"], rtol=1e-9)
    assert df.attrs["groups"] == {"cfg": ["cfg/seed_0", "cfg/seed_1", "cfg/seed_2"]}
    assert df.attrs["unplaced"] == {"cfg/seed_3": "has no scalar tag 'samples' to use as x"}
    notes = df.attrs["notes"]
    assert "run 'cfg/seed_3' left out: has no scalar tag 'samples' to use as x (x=tag:samples)" in notes
    assert any(
        n.startswith("loss: 2 point(s) of run 'cfg/seed_2' left out: 'samples'") and "increase" in n
        for n in notes
    )


def test_smoothing_goes_by_each_runs_own_points_before_the_grid(logdir):
    df = tba.aggregate(logdir, x=X, tags="^loss$", smoothing=0.6, reductions="mean")
    np.testing.assert_allclose(df["mean"], _by_hand(logdir, "loss", smoothing=0.6)["mean"], rtol=1e-9)


def test_command_line_and_tab_give_the_same_table(logdir, tmp_path):
    expected = tba.aggregate(logdir, x=X)
    out = tmp_path / "x.csv"
    cli(logdir, "--x", X, "-o", out, check=0)
    got = pd.read_csv(out)
    assert list(got.columns) == list(expected.columns)
    np.testing.assert_allclose(got[X], expected[X], rtol=1e-15)
    np.testing.assert_allclose(got["mean"], expected["mean"], rtol=1e-15)
    with open_logdir(logdir, loader="rust") as loaded:
        flags = argparse.Namespace(samples_per_plugin={"scalars": 0})
        apps = AggregatePlugin(
            base_plugin.TBContext(data_provider=loaded.provider, flags=flags)
        ).get_plugin_apps()
        response = Client(apps["/export"]).get(f"{PLUGIN}/export", query_string={"x": X, "format": "csv"})
        assert response.status_code == 200, response.get_data(as_text=True)
        assert response.get_data() == out.read_bytes()
        chart = Client(apps["/aggregate"]).get(f"{PLUGIN}/aggregate", query_string={"x": X, "tag": "loss"})
        payload = json.loads(chart.get_data())
        assert payload["x"] == X
        rows = expected[expected["tag"] == "loss"]
        np.testing.assert_allclose(payload["groups"][0]["x"], rows[X], rtol=1e-15)
        listing = json.loads(Client(apps["/runs"]).get(f"{PLUGIN}/runs", query_string={"x": X}).get_data())
        assert listing["unplaced"] == {"cfg/seed_3": "has no scalar tag 'samples' to use as x"}
        bad = Client(apps["/aggregate"]).get(f"{PLUGIN}/aggregate", query_string={"x": "tag:", "tag": "loss"})
        assert bad.status_code == 400 and bad.get_data(as_text=True).startswith("x: tag: needs the name")


def test_new_tensorboard_runs_are_refused_against_another_tag(logdir, tmp_path):
    proc = cli(logdir, "--x", X, "--format", "tb", "-o", tmp_path / "out", check=2)
    assert proc.stderr.strip() == (
        "tb-aggregate: error: --x: --format tb needs --x step (event files are indexed by step), "
        "not --x tag:samples"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["tag:", "epoch", "tags:samples", 3])
def test_invalid_x_names_the_option(value):
    with pytest.raises(tba.OptionError) as info:
        tba.Query(x=value)
    assert info.value.option == "x"
    assert "tag:NAME" in str(info.value) or "needs the name of a scalar tag" in str(info.value)


def test_a_tag_no_run_has_leaves_every_run_out_with_a_note(logdir):
    df = tba.aggregate(logdir, x="tag:nope")
    assert df.empty and len(df.attrs["unplaced"]) == 4
    assert all("(x=tag:nope)" in n for n in df.attrs["notes"])


# -- gaps on the evenly spaced grids ---------------------------------------------------------------


@pytest.fixture(scope="module")
def apart(tmp_path_factory) -> str:
    """Two runs of one group that never overlap in wall time: 1000..1040 s and 5000..5040 s."""
    root = str(tmp_path_factory.mktemp("apart") / "runs")
    steps = np.arange(21)
    write_run(root, "seed_0", {"loss": (steps, steps * 1.0)}, wall_times={"loss": 1000.0 + steps * 2})
    write_run(root, "seed_1", {"loss": (steps, steps * 3.0)}, wall_times={"loss": 5000.0 + steps * 2})
    return root


def _chart(logdir: str, **params) -> tuple[dict, pd.DataFrame]:
    """The tab's chart payload and its CSV export for the same parameters."""
    with open_logdir(logdir, loader="python") as loaded:
        flags = argparse.Namespace(samples_per_plugin={"scalars": 0})
        apps = AggregatePlugin(
            base_plugin.TBContext(data_provider=loaded.provider, flags=flags)
        ).get_plugin_apps()
        response = Client(apps["/aggregate"]).get(f"{PLUGIN}/aggregate", query_string=params)
        assert response.status_code == 200, response.get_data(as_text=True)
        options = {k: v for k, v in params.items() if k not in ("include_runs", "max_points")}
        csv = Client(apps["/export"]).get(f"{PLUGIN}/export", query_string=options)
        assert csv.status_code == 200, csv.get_data(as_text=True)
        return json.loads(response.get_data()), pd.read_csv(io.BytesIO(csv.get_data()))


def test_against_wall_time_the_line_breaks_where_no_run_has_data(apart):
    payload, table = _chart(apart, tag="loss", x="wall", group_by="none", include_runs=1)
    group = payload["groups"][0]
    x, center, n = np.array(group["x"], float), group["center"], group["n"]
    # The grid: 21 points from 1000 to 5040 (each run covers [1000, 1040] or [5000, 5040]).
    grid = np.linspace(1000, 5040, 21)
    covered = (grid <= 1040) | (grid >= 5000)
    # The table (and CSV) has rows only where a run has data, as before.
    np.testing.assert_allclose(table["wall"], grid[covered])
    assert (table["n"] == 1).all()
    # The chart has one point without a value between the two stretches, so the line breaks there.
    breaks = [i for i, value in enumerate(center) if value is None]
    assert len(breaks) == 1
    (i,) = breaks
    assert x[i - 1] == grid[covered][0] and x[i + 1] == grid[covered][-1]
    assert x[i - 1] < x[i] < x[i + 1] and n[i] == 0
    assert group["lo"][i] is None and group["hi"][i] is None
    assert [v for v in center if v is not None] == pytest.approx(table["mean"].tolist())
    # Each run's own faint line has no value outside the run either.
    for run in group["individual"]:
        assert None in run["y"]


def test_against_relative_time_a_stretch_left_out_by_min_runs_breaks_the_line(tmp_path):
    """Two runs with a NaN stretch in one: with min_runs=2 the middle has no point, and no line."""
    steps = np.arange(21)
    values = steps * 1.0
    values[8:13] = np.nan
    write_run(str(tmp_path), "seed_0", {"loss": (steps, values)}, wall_times={"loss": 10.0 + steps})
    write_run(str(tmp_path), "seed_1", {"loss": (steps, steps * 2.0)}, wall_times={"loss": 500.0 + steps})
    payload, table = _chart(str(tmp_path), tag="loss", x="relative", group_by="none", min_runs=2)
    center = payload["groups"][0]["center"]
    assert center.count(None) == 1
    assert len(table) == len(center) - 1  # every other point is a row of the table
    # On the step axis nothing changes: the points are the table's rows, and none is added.
    payload, table = _chart(str(tmp_path), tag="loss", group_by="none", min_runs=2)
    assert None not in payload["groups"][0]["center"] and len(payload["groups"][0]["x"]) == len(table)


def test_gaps_survive_thinning_for_drawing(apart):
    payload, _ = _chart(apart, tag="loss", x="wall", group_by="none", max_points=4)
    center = payload["groups"][0]["center"]
    assert center.count(None) == 1
