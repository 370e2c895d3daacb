"""A large logdir loaded a slice of runs at a time gives what one load of the whole logdir gives.

Real event files from both writers, real Rust data servers (one per slice, and one for the whole
logdir); the raw event records (tests/rawread.py) say what every series must hold.
"""

from __future__ import annotations

import glob
import os
import tempfile

import numpy as np
import pytest
from rawread import read_logdir
from writers import noisy_curve, write_run

from tb_aggregate_plugin import Query, compute
from tb_aggregate_plugin.read import logdir as loading
from tb_aggregate_plugin.read import sliced, snapshot, walk
from tb_aggregate_plugin.read.source import Source


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    """Nested and ragged runs, a run inside a run's folder, hparams in a child run, NaN values."""
    root = tmp_path_factory.mktemp("sliced_logs")
    for i in range(7):
        steps = np.arange(0, 200 + 30 * i, 1 + i % 2)
        values = noisy_curve(len(steps), i)
        if i == 3:
            values[4] = np.nan
        scalars = {"loss": (steps, values), "acc": (steps, 1 - values / 4)}
        if i % 3 == 0:
            scalars["val/loss"] = (steps[::7], values[::7])
        write_run(str(root), f"lr={0.1 * (1 + i % 2)}/seed_{i}", scalars, writer="tbx" if i % 2 else "tb")
    # A run with a run inside its folder, and PyTorch's way of writing hparams: into a child run.
    write_run(str(root), "parent", {"loss": (np.arange(50), noisy_curve(50, 9))})
    write_run(str(root), "parent/inner", {"loss": (np.arange(40), noisy_curve(40, 10))})
    write_run(str(root), "hp/1700000000.1", {}, hparams={"lr": 0.5, "opt": "sgd"})
    write_run(str(root), "hp", {"loss": (np.arange(30), noisy_curve(30, 11))})
    return root


def _sizes(logdir) -> dict[str, int]:
    return {run: sum(files.values()) for run, files in walk.event_files(str(logdir)).runs.items()}


def _everything(source: Source):
    listing = source.list_scalars()
    return source.read({run: list(tags) for run, tags in listing.items()}, listing)


def test_event_files_are_found_as_the_data_server_finds_runs(logdir):
    runs = walk.event_files(str(logdir)).runs
    with loading.open_logdir(str(logdir), loader="rust", slice_bytes=None) as whole:
        listed = Source(whole.provider).list_scalars()
    assert set(listed) <= set(runs)  # every run with scalars; the hparams-only child has none
    assert set(runs) - set(listed) == {"hp/1700000000.1"}
    for run, files in runs.items():
        on_disk = glob.glob(os.path.join(str(logdir), *run.split("/"), "*tfevents*"))
        assert sorted(files) == sorted(on_disk)
        assert all(size == os.path.getsize(path) for path, size in files.items())


def test_a_link_back_up_is_not_followed_forever(tmp_path):
    write_run(str(tmp_path), "a", {"loss": ([0, 1], [1.0, 2.0])})
    os.symlink(str(tmp_path), str(tmp_path / "a" / "loop"))
    os.symlink(str(tmp_path / "a"), str(tmp_path / "again"))  # a second name for a run: two runs
    assert sorted(walk.event_files(str(tmp_path)).runs) == ["a", "again"]


def test_plan_keeps_order_and_size_and_a_run_with_the_runs_inside_it():
    sizes = {"a": 5, "a/x": 5, "a-b": 10, "b": 4, "c": 4, "c/d/e": 4, "d": 30}
    slices = sliced.plan(sizes, 12)
    assert [run for s in slices for run in s] == ["a", "a/x", "a-b", "b", "c", "c/d/e", "d"]
    assert slices == [["a", "a/x"], ["a-b"], ["b", "c", "c/d/e"], ["d"]]
    assert sliced.plan(sizes, 10**9) == [sorted(sizes, key=lambda r: r.split("/"))]
    assert sliced.plan({}, 10) == []


def test_plan_puts_at_least_so_many_runs_in_a_slice():
    sizes = {"a": 50, "b": 50, "b/x": 5, "c": 50, "d": 1, "e": 50}
    assert sliced.plan(sizes, 12, min_runs=2) == [["a", "b", "b/x"], ["c", "d"], ["e"]]
    assert sliced.plan(sizes, 60, min_runs=2) == [["a", "b", "b/x"], ["c", "d"], ["e"]]
    assert sliced.plan(sizes, 10**9, min_runs=2) == [["a", "b", "b/x", "c", "d", "e"]]


def test_kept_arrays_are_copied_into_a_few_blocks():
    from tb_aggregate_plugin.read.pool import ArrayPool

    pool = ArrayPool(block_bytes=1024)
    arrays = [np.arange(10, dtype=np.int64), np.linspace(0, 1, 7, dtype=np.float32), np.arange(3.0)]
    copies = [pool.copy(a) for a in arrays]
    for original, copy in zip(arrays, copies):
        assert copy.dtype == original.dtype and np.array_equal(copy, original)
        assert not copy.flags.writeable and not np.shares_memory(copy, original)
        assert copy.ctypes.data % 16 == 0
    assert copies[0].base is copies[1].base is copies[2].base  # one block
    big = pool.copy(np.arange(200, dtype=np.float64))  # over a quarter of a block: its own array
    assert big.base is None and np.array_equal(big, np.arange(200))


def test_wall_times_logged_in_one_event_are_held_once(tmp_path):
    """A writer that logs a step's metrics in one event gives them one wall time: held once per run.
    Tags logged one event each keep their own wall times. Every point is the raw record's."""
    from tensorboardX import FileWriter
    from tensorboardX.proto.summary_pb2 import Summary

    writer = FileWriter(str(tmp_path / "together"))
    for step in range(50):
        values = [Summary.Value(tag=t, simple_value=float(step * k)) for k, t in enumerate(("a", "b", "c"))]
        writer.add_summary(Summary(value=values), step, walltime=1.7e9 + 0.3 * step)
    writer.close()
    write_run(
        str(tmp_path),
        "apart",
        {t: (np.arange(50), noisy_curve(50, k)) for k, t in enumerate("ab")},
        writer="tbx",
    )
    write_run(str(tmp_path), "more", {"a": (np.arange(5), noisy_curve(5, 3))})  # two slices at least
    with loading.open_logdir(str(tmp_path), loader="rust", slice_bytes=1) as parts:
        assert isinstance(parts.provider, snapshot.SnapshotProvider)
        got = _everything(Source(parts.provider))
    assert got[("together", "a")].wall is got[("together", "b")].wall is got[("together", "c")].wall
    assert got[("apart", "a")].wall is not got[("apart", "b")].wall
    raw = read_logdir(str(tmp_path))
    for (run, tag), series in got.items():
        steps, walls, values = (np.array(column) for column in zip(*raw[run][tag]))
        np.testing.assert_array_equal(series.step, steps)
        np.testing.assert_array_equal(series.wall, walls)
        np.testing.assert_array_equal(series.value, values.astype(np.float32))


def test_sliced_load_holds_every_point_of_every_run(logdir):
    sizes = _sizes(logdir)
    slice_bytes = max(sizes.values()) + 1  # several slices, none empty
    assert len(sliced.plan(sizes, slice_bytes)) >= 4
    with loading.open_logdir(str(logdir), loader="rust", slice_bytes=slice_bytes) as parts:
        assert isinstance(parts.provider, snapshot.SnapshotProvider)
        source = Source(parts.provider)
        assert source.uses_fast_path
        got = _everything(source)
        hparams = source.hparams()
    raw = read_logdir(str(logdir))
    assert sorted(got) == sorted((run, tag) for run in raw for tag in raw[run])
    for (run, tag), series in got.items():
        steps, walls, values = (np.array(column) for column in zip(*raw[run][tag]))
        np.testing.assert_array_equal(series.step, steps)
        np.testing.assert_allclose(series.wall, walls, rtol=0, atol=1e-6)
        np.testing.assert_array_equal(series.value, values.astype(np.float32).astype(np.float64))
    assert hparams["hp"] == {"lr": 0.5, "opt": "sgd"}


def test_sliced_and_whole_loads_give_the_same_listing_series_hparams_and_result(logdir):
    query = Query(group_by="auto", reductions=("mean", "std", "median", "min", "max", "count"))
    slice_bytes = max(_sizes(logdir).values()) + 1
    with loading.open_logdir(str(logdir), loader="rust", slice_bytes=slice_bytes) as parts:
        a = Source(parts.provider)
        a_series, a_hparams = _everything(a), a.hparams()
        a_table = compute(a, query).table()
    with loading.open_logdir(str(logdir), loader="rust", slice_bytes=None) as whole:
        b = Source(whole.provider)
        b_series, b_hparams = _everything(b), b.hparams()
        b_listing = b.list_scalars()
        b_table = compute(b, query).table()
    assert sorted(a_series) == sorted(b_series)
    for key in a_series:
        for field in ("step", "wall", "value"):
            np.testing.assert_array_equal(getattr(a_series[key], field), getattr(b_series[key], field))
    assert {r: sorted(t) for r, t in a.list_scalars().items()} == {r: sorted(t) for r, t in b_listing.items()}
    for run, tags in b_listing.items():  # the listing's largest step and wall time agree
        for tag, info in tags.items():
            assert a.list_scalars()[run][tag].max_step == info.max_step
            assert a.list_scalars()[run][tag].max_wall_time == pytest.approx(info.max_wall_time, abs=1e-6)
    assert a_hparams == b_hparams
    assert a_table.equals(b_table)


def test_runs_sharing_their_steps_share_one_array(tmp_path):
    for i, steps in enumerate([np.arange(0, 90, 3), np.arange(0, 90, 3), np.arange(0, 91, 3)]):
        write_run(str(tmp_path), f"seed_{i}", {"loss": (steps, noisy_curve(len(steps), i))}, writer="tbx")
    with loading.open_logdir(str(tmp_path), loader="rust", slice_bytes=1) as parts:  # slices of 2 runs
        got = _everything(Source(parts.provider))
    a, b, c = (got[(f"seed_{i}", "loss")].step for i in range(3))
    assert a is b and np.array_equal(a, np.arange(0, 90, 3))
    assert c is not a and np.array_equal(c, np.arange(0, 91, 3))


def test_public_read_scalars_of_the_snapshot(logdir):
    with loading.open_logdir(str(logdir), loader="rust", slice_bytes=1) as parts:
        fast, public = Source(parts.provider), Source(parts.provider, fast_path=False)
        a, b = _everything(fast), _everything(public)
        last = parts.provider.read_last_scalars(experiment_id="", plugin_name="scalars")
    assert sorted(a) == sorted(b)
    for key in a:
        np.testing.assert_array_equal(a[key].value, b[key].value)
        assert last[key[0]][key[1]].step == a[key].step[-1]


def _leftovers() -> tuple[list[str], list[int]]:
    folders = glob.glob(os.path.join(tempfile.gettempdir(), "tb_aggregate_*"))
    me = str(os.getpid())
    children = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat") as f:
                if pid.isdigit() and f.read().rsplit(")", 1)[1].split()[1] == me:
                    children.append(int(pid))
        except OSError:
            continue
    return folders, children


def test_a_failure_while_reading_a_slice_stops_every_server_and_removes_the_links(logdir, monkeypatch):
    before = _leftovers()
    calls = []

    def failing_take(self, provider, experiment_id="", **kwargs):
        calls.append(provider)
        if len(calls) == 2:
            raise RuntimeError("reading failed")
        return original(self, provider, experiment_id, **kwargs)

    original = snapshot.SnapshotProvider.take
    monkeypatch.setattr(snapshot.SnapshotProvider, "take", failing_take)
    with pytest.raises(RuntimeError, match="reading failed"):
        loading.open_logdir(str(logdir), loader="rust", slice_bytes=1)
    assert len(calls) == 2
    folders, children = _leftovers()
    assert set(folders) <= set(before[0])
    assert [pid for pid in children if pid not in before[1] and os.path.exists(f"/proc/{pid}")] == []


def test_values_that_need_float64_keep_it(tmp_path):
    """float32 values (what most writers store) are held narrow; float64 ones stay exact. TensorBoard's
    data server drops float64 tensor scalars, so the snapshot is taken from its Python loader here
    (through the public interface: no array reader there)."""
    from tensorboard.compat.proto import summary_pb2
    from tensorboard.plugins.scalar import metadata
    from tensorboard.util import tensor_util
    from tensorboardX import FileWriter
    from writers import _tbx_summary

    precise = [0.1, 1 / 3, 1e-300, 2.0**60 + 1, np.nan]
    writer = FileWriter(str(tmp_path / "f64"))
    for step, value in enumerate(precise):
        summary = summary_pb2.Summary()
        tensor = tensor_util.make_tensor_proto(value, np.float64)
        summary.value.add(tag="x", metadata=metadata.create_summary_metadata("", ""), tensor=tensor)
        writer.add_summary(_tbx_summary(summary), step)
    writer.close()
    narrow = [0.1, 0.25, np.nan, 3.0, -2.5]
    write_run(str(tmp_path), "f32", {"x": (np.arange(5), narrow)}, writer="tbx")
    held = snapshot.SnapshotProvider()
    with loading.open_logdir(str(tmp_path), loader="python") as python_loader:
        held.take(python_loader.provider)
    got = _everything(Source(held))
    np.testing.assert_array_equal(got[("f64", "x")].value, np.array(precise))
    np.testing.assert_array_equal(got[("f32", "x")].value, np.float32(narrow).astype(float))
    # Read as held, without a float64 copy of every value: the engine widens them as it stacks them.
    assert got[("f64", "x")].value.dtype == np.float64 and got[("f32", "x")].value.dtype == np.float32
    kept = held._series
    assert kept[("f64", "x")].value.dtype == np.float64 and kept[("f32", "x")].value.dtype == np.float32
    # Handed out as they are, so nobody may write into them.
    for series in got.values():
        for array in (series.step, series.wall, series.value):
            with pytest.raises(ValueError, match="read-only"):
                array[0] = 0


def test_series_the_data_server_does_not_list_are_left_out(tmp_path):
    """A float64 tensor scalar: the data server lists no such series and has no points for it."""
    from tensorboard.compat.proto import summary_pb2
    from tensorboard.plugins.scalar import metadata
    from tensorboard.util import tensor_util
    from tensorboardX import FileWriter
    from writers import _tbx_summary

    writer = FileWriter(str(tmp_path / "f64"))
    summary = summary_pb2.Summary()
    tensor = tensor_util.make_tensor_proto(0.5, np.float64)
    summary.value.add(tag="x", metadata=metadata.create_summary_metadata("", ""), tensor=tensor)
    writer.add_summary(_tbx_summary(summary), 0)
    writer.close()
    for run in ("f32", "g32"):
        write_run(str(tmp_path), run, {"x": (np.arange(5), noisy_curve(5, 0))}, writer="tbx")
    with loading.open_logdir(str(tmp_path), loader="rust", slice_bytes=1) as parts:
        assert isinstance(parts.provider, snapshot.SnapshotProvider)  # two slices at least
        sliced_listing = Source(parts.provider).list_scalars()
    with loading.open_logdir(str(tmp_path), loader="rust", slice_bytes=None) as whole:
        whole_listing = Source(whole.provider).list_scalars()
    assert sorted(sliced_listing) == sorted(whole_listing) == ["f32", "g32"]


def test_broken_event_files_are_read_and_named_as_in_one_load(tmp_path):
    """A cut-off file, an empty one and one of random bytes, beside good runs: sliced or not, the same
    points are read and the same files are named."""
    for i in range(3):
        write_run(str(tmp_path), f"good/seed_{i}", {"loss": (np.arange(40), noisy_curve(40, i))})
    path = write_run(str(tmp_path), "trunc/seed_0", {"loss": (np.arange(40), noisy_curve(40, 5))})
    (name,) = os.listdir(path)
    os.truncate(os.path.join(path, name), os.path.getsize(os.path.join(path, name)) - 7)
    os.makedirs(tmp_path / "empty")
    (tmp_path / "empty" / "events.out.tfevents.1.host").write_bytes(b"")
    os.makedirs(tmp_path / "junk")
    (tmp_path / "junk" / "events.out.tfevents.1.host").write_bytes(np.random.default_rng(0).bytes(3000))
    query = Query(group_by="none", reductions=("mean", "count"))
    tables, notes = [], []
    for slice_bytes in (1, None):
        with loading.open_logdir(str(tmp_path), loader="rust", slice_bytes=slice_bytes) as loaded:
            result = compute(Source(loaded.provider, logdir=str(tmp_path)), query)
            tables.append(result.table())
            notes.append(result.notes())
    assert tables[0].equals(tables[1])
    assert notes[0] == notes[1]
    assert any("trunc/seed_0" in n and "cut off" in n for n in notes[0])
    assert tables[0]["count"].max() == 4  # the 3 good runs and the cut-off one's whole records


def test_a_sliced_load_needs_neither_tensorboards_grpc_provider_nor_its_tensorflow_stand_in(logdir):
    """Their imports (0.05-0.15 s) would come before the first slice can be read. In a fresh process,
    a sliced load with the framing check reads every point without them."""
    import subprocess
    import sys

    code = f"""
import sys
from tb_aggregate_plugin.read import logdir as loading
from tb_aggregate_plugin.read.health import LogdirHealth
from tb_aggregate_plugin.read.source import Source
health = LogdirHealth({str(logdir)!r})
with loading.open_logdir({str(logdir)!r}, slice_bytes=1, meanwhile=[health.problems]) as loaded:
    source = Source(loaded.provider, health=health)
    listing = source.list_scalars()
    points = sum(len(s) for s in source.read({{r: list(t) for r, t in listing.items()}}, listing).values())
    print(loaded.loader, points, source.problems())
heavy = ("tensorboard.data.grpc_provider", "tensorboard.compat.tensorflow_stub")
print(sorted(m for m in sys.modules if m.startswith(heavy)))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    summary, modules = done.stdout.strip().splitlines()
    with loading.open_logdir(str(logdir), loader="rust", slice_bytes=None) as whole:
        expected = sum(len(s) for s in _everything(Source(whole.provider)).values())
    assert summary == f"rust {expected} {{}}"
    assert modules == "[]"
