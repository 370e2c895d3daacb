"""One data server fed slice after slice: a slice waited for is there whole, a slice taken away is
dropped by the server, and a server that stops is said to have stopped. A real data server, real
event files; the raw records (tests/rawread.py) say what every series holds."""

from __future__ import annotations

import os

import numpy as np
import pytest
from rawread import read_logdir
from tensorboard.data.proto import data_provider_pb2
from writers import noisy_curve, write_run

from tb_aggregate_plugin.read import fed, grpc_fast, sliced, walk
from tb_aggregate_plugin.read.server_process import DataServerFailed


@pytest.fixture
def logdir(tmp_path):
    """A run at the top of the logdir, nested runs, and a long run (its load takes a while)."""
    write_run(str(tmp_path), ".", {"top": (np.arange(30), noisy_curve(30, 0))}, writer="tbx")
    for i in range(4):
        write_run(
            str(tmp_path), f"lr/seed_{i}", {"loss": (np.arange(200), noisy_curve(200, i))}, writer="tbx"
        )
    steps = np.arange(30_000)
    write_run(str(tmp_path), "long", {"loss": (steps, noisy_curve(len(steps), 9))}, writer="tbx")
    return tmp_path


def _listed(stub) -> set[str]:
    return {run.name for run in stub.ListRuns(data_provider_pb2.ListRunsRequest(experiment_id="")).runs}


def test_each_slice_is_read_whole_and_dropped_once_taken_away(logdir):
    runs = walk.event_files(str(logdir)).runs
    raw = read_logdir(str(logdir))
    slices = {"s0": [".", "lr/seed_0"], "s1": ["long", "lr/seed_1"], "s2": ["lr/seed_2", "lr/seed_3"]}
    server = fed.FedServer(lambda names, folder: sliced.link_event_files(runs, names, folder))
    try:
        keys = list(slices)
        server.add(keys[0], slices[keys[0]])
        for i, key in enumerate(keys):
            stub = server.wait(key)
            if i + 1 < len(keys):
                server.add(keys[i + 1], slices[keys[i + 1]])  # loads while this one is read
            served = server.served(key, slices[key])
            assert served == {(key if r == "." else f"{key}/{r}"): r for r in slices[key]}
            got = grpc_fast.scalar_reader(stub)("", None)
            for (name, tag), series in got.items():
                if name in served:
                    steps = [point[0] for point in raw[served[name]][tag]]
                    np.testing.assert_array_equal(series.step, steps)
            assert {served[name] for name, _ in got if name in served} == set(slices[key])
            if i >= 2:  # taken away before the slice before this one was added: dropped by now
                gone = keys[i - 2]
                assert not any(name == gone or name.startswith(f"{gone}/") for name in _listed(stub))
            server.remove(key)
    finally:
        server.close()


def test_a_server_that_stops_is_said_to_have_stopped(logdir):
    runs = walk.event_files(str(logdir)).runs
    server = fed.FedServer(lambda names, folder: sliced.link_event_files(runs, names, folder))
    try:
        server.add("s0", ["lr/seed_0"])
        server.wait("s0")
        server.add("s1", ["long"])
        server._proc.kill()
        with pytest.raises(DataServerFailed, match="status"):
            server.wait("s1")
    finally:
        server.close()
    assert not os.path.exists(server._tmp.name)  # its folders are gone
