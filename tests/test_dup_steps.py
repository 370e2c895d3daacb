"""Repeated steps (a resumed run) resolved by ``dup_steps`` first or mean need a reader that keeps
every write. The rule lives in the reading layer and the Query, so the API, the command line and the
tab's backend all obey it: they read with a loader that keeps repeats, or refuse, naming both options.
"""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from rawread import read_logdir as read_raw
from tensorboard.plugins import base_plugin
from werkzeug.test import Client

import tb_aggregate_plugin as tba
from tb_aggregate_plugin.plugin import AggregatePlugin
from tb_aggregate_plugin.read.logdir import open_logdir

PLUGIN = "/data/plugin/aggregate"
TAG = "dup_steps/foo"


def _numpy_mean_of_writes(logdir) -> dict[int, float]:
    """Per step, the mean over runs of each run's mean of its writes at that step (from raw records)."""
    raw = read_raw(str(logdir))
    per_run = []
    for run in sorted(raw):
        steps = np.array([p[0] for p in raw[run][TAG]])
        values = np.array([p[2] for p in raw[run][TAG]])
        per_run.append({int(s): values[steps == s].mean() for s in np.unique(steps)})
    return {s: float(np.mean([r[s] for r in per_run])) for s in per_run[0]}


def test_api_reads_repeats_with_the_loader_that_keeps_them(real_logs):
    logdir = real_logs / "duplicate_steps"
    expected = _numpy_mean_of_writes(logdir)
    got = tba.aggregate(str(logdir), tags=f"^{TAG}$", dup_steps="mean", reductions="mean")
    assert dict(zip(got["step"].tolist(), got["mean"].tolist())) == pytest.approx(expected, rel=1e-12)
    # The last write only differs at the repeated steps: the numbers are not those of "last".
    last = tba.aggregate(str(logdir), tags=f"^{TAG}$", reductions="mean")
    assert not np.allclose(got["mean"].to_numpy(), last["mean"].to_numpy())


def test_api_refuses_the_rust_loader_for_repeats_naming_both_options(real_logs):
    with pytest.raises(tba.OptionError) as caught:
        tba.aggregate(str(real_logs / "duplicate_steps"), dup_steps="mean", loader="rust")
    assert caught.value.option == "dup_steps"
    assert "loader python or auto" in str(caught.value) and "loader rust" in str(caught.value)


def test_cli_refuses_the_rust_loader_for_repeats_before_loading(real_logs, tmp_path, capsys):
    from tb_aggregate_plugin.cli import main

    status = main(
        [
            str(real_logs / "duplicate_steps"),
            "--loader",
            "rust",
            "--dup-steps",
            "first",
            "-o",
            str(tmp_path / "out.csv"),
        ]
    )
    assert status == 2
    err = capsys.readouterr().err
    assert "--dup-steps: 'first' needs --loader python or auto" in err and "(--loader rust)" in err
    assert not (tmp_path / "out.csv").exists()


def _plugin(provider, purge: bool) -> dict:
    flags = argparse.Namespace(samples_per_plugin={"scalars": 0}, purge_orphaned_data=purge)
    return AggregatePlugin(base_plugin.TBContext(data_provider=provider, flags=flags)).get_plugin_apps()


def test_tab_backend_refuses_repeats_a_data_server_dropped(real_logs):
    with open_logdir(str(real_logs / "duplicate_steps"), loader="rust") as loaded:
        apps = _plugin(loaded.provider, purge=False)
        response = Client(apps["/aggregate"]).get(
            f"{PLUGIN}/aggregate", query_string={"tag": TAG, "dup_steps": "mean"}
        )
        assert response.status_code == 400
        line = response.get_data(as_text=True)
        assert line.startswith("dup_steps: 'mean' needs every write of a repeated step")
        assert "--load_fast=false --purge_orphaned_data=false" in line
        ok = Client(apps["/aggregate"]).get(f"{PLUGIN}/aggregate", query_string={"tag": TAG})
        assert ok.status_code == 200  # dup_steps=last is what this reader gives


def test_tab_backend_refuses_repeats_a_purging_loader_dropped(real_logs):
    with open_logdir(str(real_logs / "duplicate_steps"), loader="python", keep_repeated_steps=True) as loaded:
        apps = _plugin(loaded.provider, purge=True)  # TensorBoard's default
        response = Client(apps["/export"]).get(f"{PLUGIN}/export", query_string={"dup_steps": "first"})
        assert response.status_code == 400


def test_tab_backend_resolves_repeats_a_loader_kept(real_logs):
    logdir = real_logs / "duplicate_steps"
    expected = _numpy_mean_of_writes(logdir)
    with open_logdir(str(logdir), loader="python", keep_repeated_steps=True) as loaded:
        apps = _plugin(loaded.provider, purge=False)
        response = Client(apps["/aggregate"]).get(
            f"{PLUGIN}/aggregate", query_string={"tag": TAG, "dup_steps": "mean", "band": "none"}
        )
        assert response.status_code == 200, response.get_data(as_text=True)
        group = response.json["groups"][0]
        assert dict(zip(group["x"], group["center"])) == pytest.approx(expected, rel=1e-12)


def test_plugin_impls_work_without_http(real_logs):
    """As TensorBoard's scalars plugin: a route parses, an impl computes, and can be called directly."""
    from tensorboard import context

    with open_logdir(str(real_logs / "strict"), loader="python") as loaded:
        flags = argparse.Namespace(samples_per_plugin={"scalars": 0})
        plugin = AggregatePlugin(base_plugin.TBContext(data_provider=loaded.provider, flags=flags))
        ctx = context.RequestContext()
        listing = plugin.runs_impl(ctx, "", tba.Query())
        assert listing["options"]["band"]["default"] == "std"
        assert [v for v, _ in listing["options"]["band"]["values"]] == list(tba.query.BANDS)
        chart = plugin.aggregate_impl(
            ctx, "", tba.Query(group_by="none"), "strict/foo", max_points=2000, include_runs=False
        )
        raw = read_raw(str(real_logs / "strict"))
        values = np.array([[p[2] for p in raw[run]["strict/foo"]] for run in sorted(raw)])
        np.testing.assert_allclose(chart["groups"][0]["center"], values.mean(axis=0), rtol=1e-12)
        body, content_type, _ = plugin.export_impl(ctx, "", tba.Query(), "strict/foo", "csv")
        assert content_type == "text/csv" and body.startswith(b"tag,group,step,wall_time,n,")
        with pytest.raises(tba.OptionError):
            plugin.export_impl(ctx, "", tba.Query(), None, "xml")
