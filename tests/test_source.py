"""Reading: the data server's fast gRPC path and the public ``read_scalars`` give the same series.

Both read the same logdir from one real Rust data server; the raw event records (tests/rawread.py) say
what every series must hold.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from rawread import read_logdir
from writers import noisy_curve, write_run

from tb_aggregate_plugin.read.logdir import open_logdir
from tb_aggregate_plugin.read.source import Source

TAGS = ("train/loss", "train/acc", "val/loss")


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    """Ragged runs from both writers: different lengths, strides, a tag in some runs, NaN and inf."""
    root = tmp_path_factory.mktemp("source_logs")
    for i in range(6):
        steps = np.arange(0, 300 + 40 * i, 1 + i % 3)
        values = noisy_curve(len(steps), i)
        if i == 2:
            values[[5, 17]] = [math.nan, math.inf]
        scalars = {"train/loss": (steps, values), "train/acc": (steps, 1 - values / 3)}
        if i % 2:
            scalars["val/loss"] = (steps[::10], values[::10] + 0.1)
        write_run(str(root), f"lr={0.1 / (1 + i % 2)}/seed_{i}", scalars, writer="tbx" if i % 2 else "tb")
    return root


@pytest.fixture(scope="module")
def loaded(logdir):
    with open_logdir(str(logdir), loader="rust") as lo:
        yield lo


def _everything(source: Source):
    listing = source.list_scalars()
    return source.read({run: list(tags) for run, tags in listing.items()}, listing)


def _assert_same(a, b):
    assert sorted(a) == sorted(b)
    for key in a:
        np.testing.assert_array_equal(a[key].step, b[key].step, err_msg=str(key))
        np.testing.assert_array_equal(a[key].wall, b[key].wall, err_msg=str(key))
        np.testing.assert_array_equal(a[key].value, b[key].value, err_msg=str(key))  # NaN == NaN here
        assert a[key].step.dtype == np.int64 and a[key].value.dtype == np.float64


def test_fast_path_and_public_read_scalars_give_identical_series(loaded, logdir):
    fast = Source(loaded.provider)
    public = Source(loaded.provider, fast_path=False)
    assert fast.uses_fast_path and not public.uses_fast_path
    got_fast, got_public = _everything(fast), _everything(public)
    assert fast.uses_fast_path  # it did not silently fall back
    _assert_same(got_fast, got_public)
    # And both hold exactly the points the event files hold.
    raw = read_logdir(str(logdir))
    assert sorted(got_fast) == sorted((run, tag) for run in raw for tag in raw[run])
    for (run, tag), series in got_fast.items():
        steps, walls, values = (np.array(column) for column in zip(*raw[run][tag]))
        np.testing.assert_array_equal(series.step, steps)
        np.testing.assert_allclose(series.wall, walls, rtol=0, atol=1e-6)
        np.testing.assert_array_equal(series.value, values.astype(np.float32).astype(np.float64))


def test_fast_path_reads_a_subset_per_tag(loaded):
    fast, public = Source(loaded.provider), Source(loaded.provider, fast_path=False)
    listing = fast.list_scalars()
    wanted = {run: ["val/loss"] if "seed_1" in run else ["train/acc"] for run in listing}
    wanted = {run: [t for t in tags if t in listing[run]] for run, tags in wanted.items()}
    got = fast.read(wanted, listing)
    assert sorted(got) == sorted((run, tag) for run, tags in wanted.items() for tag in tags)
    _assert_same(got, public.read(wanted, listing))


def test_a_failing_fast_path_falls_back_to_read_scalars(loaded):
    source = Source(loaded.provider)
    expected = _everything(Source(loaded.provider, fast_path=False))

    def broken(*args, **kwargs):
        raise RuntimeError("the data server's fast path went away")

    source._fast_reader = broken  # a provider whose fast path fails at read time
    _assert_same(_everything(source), expected)
    assert not source.uses_fast_path


def test_python_loader_has_no_fast_path_and_reads_the_same(loaded, logdir):
    with open_logdir(str(logdir), loader="python") as multiplexer:
        source = Source(multiplexer.provider)
        assert not source.uses_fast_path
        _assert_same(_everything(source), _everything(Source(loaded.provider)))


def test_a_complete_series_at_the_sample_limit_is_not_called_downsampled(tmp_path):
    """TensorBoard's default keeps 1,000 points per series: a run of exactly 1,000 steps comes back
    whole (no warning), a run of 1,500 comes back thinned at random (warned)."""
    from tensorboard.backend.event_processing import data_provider, plugin_event_multiplexer

    from tb_aggregate_plugin.compute.engine import run
    from tb_aggregate_plugin.query import Query

    write_run(str(tmp_path), "whole", {"loss": (range(1000), np.linspace(1, 0, 1000))})
    write_run(str(tmp_path), "strided", {"loss": (range(0, 5000, 5), np.linspace(1, 0, 1000))})
    write_run(str(tmp_path), "long", {"loss": (range(1500), np.linspace(1, 0, 1500))})
    multiplexer = plugin_event_multiplexer.EventMultiplexer(
        tensor_size_guidance={"scalars": 1000}, purge_orphaned_data=False
    )
    multiplexer.AddRunsFromDirectory(str(tmp_path))
    multiplexer.Reload()
    provider = data_provider.MultiplexerDataProvider(multiplexer, str(tmp_path))
    source = Source(provider, sample_limit=1000)
    result = run(Query(group_by="none"), source)
    (block,) = result.blocks
    assert sorted(block.runs) == ["long", "strided", "whole"]
    assert block.downsampled == ["long"]
    assert sum("downsampled" in note for note in result.notes()) == 1
