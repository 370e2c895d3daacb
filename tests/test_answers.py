"""While the data are unchanged, nothing is listed, read or computed again: the tab's answers are kept
under the data's version, and a settled listing of the data server is reused until a file changes.

The servers are TensorBoard's own loaders over event files written by its own writer; what is counted
is the provider's listings and the engine's runs (the real ones, counted on their way through).
"""

from __future__ import annotations

import argparse
import threading
import time

import numpy as np
import pytest
from counted import CountedProvider
from tensorboard.plugins import base_plugin
from tensorboard.summary import Writer
from werkzeug.test import Client

from tb_aggregate_plugin.plugin import AggregatePlugin
from tb_aggregate_plugin.read import source as source_mod
from tb_aggregate_plugin.read.logdir import open_logdir
from tb_aggregate_plugin.read.source import Source

PLUGIN = "/data/plugin/aggregate"


def _write(root, steps: range, *, writers=None) -> dict:
    writers = writers if writers is not None else {}
    for i in range(3):
        writer = writers.setdefault(i, Writer(str(root / f"g/seed_{i}")))
        for step in steps:
            writer.add_scalar("loss", float(step * (i + 1)), step)
        writer.flush()
    return writers


class Counting(CountedProvider):
    """A real provider whose scalar listings are counted (through either way of listing), with the
    names of the threads that asked for them."""

    def __init__(self, inner):
        super().__init__(inner, "list_scalars", "ListScalars")

    @property
    def listings(self) -> int:
        return self.calls


@pytest.mark.parametrize("loader", ["rust", "python"])
def test_summary_is_not_recomputed_while_nothing_changed(tmp_path, loader, monkeypatch):
    from tb_aggregate_plugin import plugin as plugin_mod

    writers = _write(tmp_path, range(5))
    runs = []
    real_run = plugin_mod.engine.run
    monkeypatch.setattr(plugin_mod.engine, "run", lambda *a, **k: runs.append(1) or real_run(*a, **k))
    with open_logdir(str(tmp_path), loader=loader) as loaded:
        flags = argparse.Namespace(samples_per_plugin={"scalars": 0}, reload_interval=5)
        plugin = AggregatePlugin(base_plugin.TBContext(data_provider=loaded.provider, flags=flags))
        apps = plugin.get_plugin_apps()

        def fetch(route, **params):
            response = Client(apps[route]).get(f"{PLUGIN}{route}", query_string=params)
            assert response.status_code == 200, response.get_data(as_text=True)
            return response.json

        first = fetch("/summary")
        version = fetch("/runs")["version"]
        time.sleep(source_mod.LISTING_TTL + 0.1)  # a new listing, the same data
        assert fetch("/summary") == first
        assert fetch("/runs")["version"] == version
        fetch("/aggregate", tag="loss")
        fetch("/aggregate", tag="loss")
        assert len(runs) == 2, "the summary and the chart are each computed once"
        final = {row["group"]: row["final"] for row in first["rows"]}
        assert final == {"g": pytest.approx(np.mean([4.0, 8.0, 12.0]))}

        if loader == "python":  # this loader can be told to look again; the data server here loads once
            _write(tmp_path, range(5, 7), writers=writers)
            loaded.provider._multiplexer.Reload()
            assert fetch("/runs")["version"] != version
            again = fetch("/summary")
            assert {row["group"]: row["final"] for row in again["rows"]} == {
                "g": pytest.approx(np.mean([6.0, 12.0, 18.0]))
            }
            assert len(runs) == 3


def test_a_settled_listing_is_reused_until_a_file_changes(tmp_path, monkeypatch):
    monkeypatch.setattr(source_mod, "LISTING_TTL", 0.2)
    writers = _write(tmp_path, range(5))
    with open_logdir(str(tmp_path), loader="rust") as loaded:
        provider = Counting(loaded.provider)
        source = Source(provider, logdir=str(tmp_path), settle_seconds=0.5)
        assert source.uses_fast_path
        listing = source.list_scalars()
        version = source.version
        assert provider.listings == 1
        assert source.list_scalars() is listing and provider.listings == 1  # within LISTING_TTL

        time.sleep(0.6)  # the same listing again, the files unchanged since the first: settled
        assert source.list_scalars() == listing and provider.listings == 2
        for _ in range(3):
            time.sleep(0.25)
            assert source.list_scalars() == listing
        assert provider.listings == 2, "a settled listing is not asked for again"
        assert source.version == version

        _write(tmp_path, range(5, 6), writers=writers)  # a file grows: ask the data server again
        time.sleep(0.25)
        source.list_scalars()
        assert provider.listings == 3
        time.sleep(0.25)
        source.list_scalars()  # not settled again yet: the server may not have loaded it
        assert provider.listings == 4
        # This data server loaded once: the same data, the same version, whatever the files say.
        assert source.version == version


def test_a_chart_takes_the_listing_at_hand_and_looks_for_news_in_the_background(tmp_path, monkeypatch):
    """A request that draws (``held``) waits for nothing once there is a listing: the look at the event
    files and a new listing (when a file changed, or when the listing is HELD_REFRESH_AFTER old and not
    settled) are done in the background for the next request. Without ``held`` it waits for them."""
    monkeypatch.setattr(source_mod, "LISTING_TTL", 0.2)
    monkeypatch.setattr(source_mod, "HELD_REFRESH_AFTER", 0.5)
    walks = []
    real_fingerprint = source_mod.fingerprint

    def fingerprint(logdir):
        walks.append(threading.current_thread().name == "tb-aggregate-check")  # in the background?
        return real_fingerprint(logdir)

    monkeypatch.setattr(source_mod, "fingerprint", fingerprint)
    writers = _write(tmp_path, range(5))
    with open_logdir(str(tmp_path), loader="rust") as loaded:
        provider = Counting(loaded.provider)
        source = Source(provider, logdir=str(tmp_path), settle_seconds=60)  # never settled here
        main, background = threading.current_thread().name, "tb-aggregate-check"

        def background_done():
            deadline = time.monotonic() + 10
            while source._checking.locked():
                assert time.monotonic() < deadline, "the background look did not end"
                time.sleep(0.01)

        first = source.fixed(held=True)  # nothing at hand yet: it waits
        assert provider.threads == [main] and walks == [False]

        time.sleep(0.3)  # the look at the files is old, the listing is not due
        held = source.fixed(held=True)
        assert held.version == first.version and held.list_scalars() == first.list_scalars()
        assert provider.threads == [main] and walks.count(False) == 1  # nothing waited for
        background_done()
        assert walks == [False, True] and provider.listings == 1

        time.sleep(0.6)  # the listing is due: asked for in the background
        assert source.fixed(held=True).version == first.version
        background_done()
        assert provider.threads == [main, background]

        time.sleep(0.3)
        source.fixed()  # the tab's poll of the runs: it waits for a new look and a new listing
        assert provider.threads[-1] == main and walks[-1] is False and provider.listings == 3

        _write(tmp_path, range(5, 6), writers=writers)  # a file grows
        time.sleep(0.3)
        count = provider.listings
        source.fixed(held=True)  # answered at once; the look finds the change and lists
        assert provider.listings == count
        background_done()
        assert provider.listings == count + 1 and provider.threads[-1] == background
        series = source.fixed(held=True).read({"g/seed_1": ["loss"]})[("g/seed_1", "loss")]
        np.testing.assert_array_equal(series.value, np.arange(5) * 2.0)  # this server loaded once


def test_a_view_holds_one_listing(tmp_path):
    writers = _write(tmp_path, range(5))
    with open_logdir(str(tmp_path), loader="python") as loaded:
        source = Source(loaded.provider, logdir=str(tmp_path))
        view = source.fixed()
        _write(tmp_path, range(5, 8), writers=writers)
        loaded.provider._multiplexer.Reload()
        assert source.list_scalars()["g/seed_0"]["loss"].max_step == 7
        assert view.list_scalars()["g/seed_0"]["loss"].max_step == 4
        assert view.version != source.version
