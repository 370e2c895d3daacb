"""Logs as people write them: ``add_hparams`` child runs folded into their parent run.

PyTorch's ``SummaryWriter.add_hparams`` (tensorboardX's when PyTorch is not installed: the same layout)
writes the hparams and each metric into a child run named by the time, ``lr=0.1/seed_0/1795372541.36``.
Expected numbers come from numpy over the raw event values (tests/rawread.py).
"""

from __future__ import annotations

import argparse
import os
import re

import numpy as np
import pytest
from rawread import read_logdir
from tensorboard import context
from tensorboard.plugins import base_plugin
from test_cli import cli
from writers import noisy_curve, write_run

import tb_aggregate_plugin as tba
from tb_aggregate_plugin.compute.grouping import auto_key
from tb_aggregate_plugin.plugin import AggregatePlugin
from tb_aggregate_plugin.read.logdir import open_logdir

LRS = (0.1, 0.01)
SEEDS = range(5)
STEPS = np.arange(0, 40, 2)
METRIC = "hparam/accuracy"
LOADERS = ["rust", "python"]


def summary_writer():
    """PyTorch's SummaryWriter when installed, else tensorboardX's (which writes the same layout)."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        from tensorboardX import SummaryWriter
    return SummaryWriter


def accuracy(lr: float, seed: int) -> float:
    return 0.5 + lr + 0.013 * seed


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> str:
    """2 learning rates x 5 seeds, each run logging ``loss`` and then ``add_hparams`` once."""
    root = str(tmp_path_factory.mktemp("add_hparams") / "runs")
    writer_class = summary_writer()
    for lr in LRS:
        for seed in SEEDS:
            writer = writer_class(os.path.join(root, f"lr={lr}", f"seed_{seed}"))
            for step, value in zip(STEPS, noisy_curve(len(STEPS), seed + int(lr * 100))):
                writer.add_scalar("loss", float(value), int(step))
            writer.add_hparams({"lr": lr, "batch": 32}, {METRIC: accuracy(lr, seed)})
            writer.close()
    return root


def _children(logdir: str) -> dict[str, str]:
    """``{child run: parent run}`` as written on disk (the raw reader's run names)."""
    return {
        run: run.rsplit("/", 1)[0]
        for run in read_logdir(logdir)
        if re.fullmatch(r"\d{9,}\.\d+", run.rsplit("/", 1)[-1])
    }


def test_the_writer_makes_one_child_run_per_run(sweep):
    children = _children(sweep)
    assert len(children) == 10
    assert sorted(set(children.values())) == sorted(f"lr={lr}/seed_{s}" for lr in LRS for s in SEEDS)


@pytest.mark.parametrize("loader", LOADERS)
def test_group_by_hparam_gives_two_groups_of_five_runs(sweep, loader):
    df = tba.aggregate(sweep, group_by="hparam:lr", loader=loader)
    assert df.attrs["groups"] == {f"lr={lr}": [f"lr={lr}/seed_{s}" for s in SEEDS] for lr in sorted(LRS)}
    assert df.attrs["unplaced"] == {}
    # The child's metric is its parent's: five runs stand behind it, with numpy's numbers.
    raw = read_logdir(sweep)
    children = _children(sweep)
    for lr in LRS:
        values = np.array(
            [
                raw[child][METRIC][0][2]
                for child, parent in sorted(children.items(), key=lambda c: c[1])
                if parent.startswith(f"lr={lr}/")
            ]
        )
        assert len(values) == 5
        np.testing.assert_allclose(values, [accuracy(lr, s) for s in SEEDS], rtol=1e-6)  # float32
        row = df[(df["tag"] == METRIC) & (df["group"] == f"lr={lr}")]
        assert len(row) == 1 and int(row["n"].iloc[0]) == 5
        np.testing.assert_allclose(row["mean"], values.mean(), rtol=1e-12)
        np.testing.assert_allclose(row["std"], values.std(ddof=1), rtol=1e-10)
        np.testing.assert_allclose(row["median"], np.median(values), rtol=1e-12)
        loss = np.array([[v for _, _, v in raw[f"lr={lr}/seed_{s}"]["loss"]] for s in SEEDS])
        rows = df[(df["tag"] == "loss") & (df["group"] == f"lr={lr}")]
        np.testing.assert_array_equal(rows["step"], STEPS)
        np.testing.assert_allclose(rows["mean"], loss.mean(axis=0), rtol=1e-12)


@pytest.mark.parametrize("loader", LOADERS)
def test_auto_grouping_gives_two_groups_and_no_child_is_a_run(sweep, loader):
    df = tba.aggregate(sweep, loader=loader)
    assert sorted(df.attrs["groups"]) == ["lr=0.01", "lr=0.1"]
    assert all(len(runs) == 5 for runs in df.attrs["groups"].values())
    assert set(df["tag"]) == {"loss", METRIC}
    assert (df[df["tag"] == METRIC]["n"] == 5).all()


def test_auto_key_ignores_a_timestamp_component():
    assert auto_key("lr=0.1/seed_0/1795372541.3668559") == "lr=0.1"
    assert auto_key("lr=0.1/1795372541.3668559") == "lr=0.1"
    assert auto_key("exp/1.5") == "exp/1.5"  # a short number with a fraction is no timestamp


def test_the_command_line_and_the_tab_see_the_same_runs(sweep):
    listed = cli(sweep, "--list", "--group-by", "hparam:lr", check=0).stdout
    assert "10 runs of 10 selected, 2 groups, 2 tags" in listed
    assert not re.search(r"\d{9,}\.\d+", listed)
    with open_logdir(sweep, loader="python") as loaded:
        flags = argparse.Namespace(samples_per_plugin={"scalars": 0})
        plugin = AggregatePlugin(base_plugin.TBContext(data_provider=loaded.provider, flags=flags))
        listing = plugin.runs_impl(context.RequestContext(), "", tba.Query(group_by="hparam:lr"))
    assert listing["total_runs"] == 10
    assert sorted(r["run"] for r in listing["runs"]) == sorted(
        f"lr={lr}/seed_{s}" for lr in LRS for s in SEEDS
    )
    for run in listing["runs"]:
        assert run["tags"] == ["hparam/accuracy", "loss"]
        assert run["hparams"] == {"lr": float(run["run"][3:].split("/")[0]), "batch": 32}
        assert run["group"] == f"lr={run['hparams']['lr']}"
    assert listing["hparams"] == ["batch", "lr"]


@pytest.mark.parametrize("loader", LOADERS)
def test_what_is_not_a_child_stays_a_run(tmp_path, loader):
    """A run named by the time that trained (many points) stays a run; a child at the top of the
    logdir belongs to the logdir's own run ``.``; a child without hparams is a run as any other."""
    logdir = str(tmp_path)
    steps = np.arange(30)
    # Named by the time, holding hparams, but trained: 30 points. Its sibling folder is a real parent.
    write_run(logdir, "exp/1795372541.3668559", {"loss": (steps, steps * 1.0)}, hparams={"lr": 0.5})
    write_run(logdir, "exp", {"loss": (steps, steps * 2.0)})
    # A run at the top of the logdir and its add_hparams child.
    writer = summary_writer()(logdir)
    for step in steps:
        writer.add_scalar("loss", float(step) * 3, int(step))
    writer.add_hparams({"lr": 0.25}, {METRIC: 0.75})
    writer.close()
    # Named by the time, one point, but no hparams: not written by add_hparams.
    write_run(logdir, "other/1795372541.5", {METRIC: ([0], [0.5])})
    df = tba.aggregate(logdir, group_by="none", loader=loader)
    assert df.attrs["groups"] == {"all": [".", "exp", "exp/1795372541.3668559", "other/1795372541.5"]}
    by_hparam = tba.aggregate(logdir, group_by="hparam:lr", loader=loader)
    assert by_hparam.attrs["groups"] == {"lr=0.25": ["."], "lr=0.5": ["exp/1795372541.3668559"]}
    got = by_hparam[(by_hparam["group"] == "lr=0.25") & (by_hparam["tag"] == METRIC)]
    assert got["mean"].tolist() == [0.75] and got["n"].tolist() == [1]


def test_the_session_start_tag_is_tensorboards():
    from tensorboard.plugins.hparams import metadata

    from tb_aggregate_plugin.read.hparams import SESSION_START_INFO_TAG

    assert SESSION_START_INFO_TAG == metadata.SESSION_START_INFO_TAG


@pytest.mark.parametrize("loader", LOADERS)
def test_a_tag_of_both_parent_and_child_holds_the_points_of_both(tmp_path, loader):
    """The parent logs the metric itself too (at step 5); the child's point (step 0) joins it."""
    writer = summary_writer()(str(tmp_path / "seed_0"))
    writer.add_scalar(METRIC, 0.25, 5)
    writer.add_hparams({"lr": 0.1}, {METRIC: 0.75})
    writer.close()
    df = tba.aggregate(str(tmp_path), loader=loader, reductions="mean")
    assert df.attrs["groups"] == {"all": ["seed_0"]}
    assert df["step"].tolist() == [0, 5] and df["mean"].tolist() == [0.75, 0.25]
