"""Reused work never changes an answer: a Source that has served other requests gives the same
table as a fresh one, new data is never met with an old result, and the memo stays bounded."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from writers import noisy_curve, write_run

from tb_aggregate_plugin.compute import engine, stats
from tb_aggregate_plugin.query import Query
from tb_aggregate_plugin.read.logdir import open_logdir
from tb_aggregate_plugin.read.source import Source

QUERIES = [
    {},
    {"smoothing": 0.6},
    {"smoothing": 0.6, "band": "minmax"},
    {"smoothing": 0.6, "center": "median", "band": "iqr"},
    {"smoothing": 0.9, "band": "ci95", "reductions": "mean,q05,q95"},
    {"align": "exact"},
    {"align": "interpolate", "smoothing": 0.3},
    {"x": "relative", "smoothing": 0.5},
    {"min_runs": 3, "band": "sem"},
    {},
]


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    """Two groups: one whose runs share their steps (one with a NaN), one on different strides."""
    root = tmp_path_factory.mktemp("memo_logs")
    for i in range(4):
        values = noisy_curve(120, i)
        if i == 1:
            values[30] = math.nan
        write_run(
            str(root), f"same/seed_{i}", {"loss": (np.arange(120), values), "acc": (np.arange(120), -values)}
        )
        steps = np.arange(0, 200 + 10 * i, 2 + i)
        write_run(
            str(root), f"strided/seed_{i}", {"loss": (steps, noisy_curve(len(steps), 10 + i))}, writer="tbx"
        )
    return root


@pytest.mark.parametrize("loader", ["rust", "python"])
def test_a_used_source_answers_as_a_fresh_one(logdir, loader):
    with open_logdir(str(logdir), loader=loader) as loaded:
        used = Source(loaded.provider)
        for options in QUERIES:
            query = Query(**options)
            for tag in (None, "loss"):
                fresh = engine.run(query, Source(loaded.provider), tag=tag)
                again = engine.run(query, used, tag=tag)
                pd.testing.assert_frame_equal(again.frame, fresh.frame, check_exact=True)
                assert [b.finals for b in again.blocks] == [b.finals for b in fresh.blocks]
                assert [b.nonfinite for b in again.blocks] == [b.nonfinite for b in fresh.blocks]


def test_new_points_are_never_met_with_an_old_result(tmp_path):
    from tensorboard.summary import Writer

    writer = Writer(str(tmp_path / "g/seed_0"))
    for step in range(10):
        writer.add_scalar("loss", float(step), step)
    writer.flush()
    with open_logdir(str(tmp_path), loader="python") as loaded:
        source = Source(loaded.provider)
        query = Query(smoothing=0.5)
        before = engine.run(query, source).frame
        assert before["step"].tolist() == list(range(10))
        for step in range(10, 15):
            writer.add_scalar("loss", 100.0, step)
        writer.close()
        loaded.provider._multiplexer.Reload()
        after = engine.run(query, source).frame
        assert after["step"].tolist() == list(range(15))
        assert after["mean"].iloc[-1] > before["mean"].iloc[-1] + 10


def test_the_memo_stays_within_its_bound(logdir):
    with open_logdir(str(logdir), loader="python") as loaded:
        source = Source(loaded.provider, max_memo_bytes=20_000)
        for weight in (0.1, 0.2, 0.3, 0.4, 0.5):
            engine.run(Query(smoothing=weight), source)
            assert 0 < source.memo.size <= 20_000
            assert source.memo.size == sum(size for _, size in source.memo._entries.values())


def test_rows_smoothed_together_equal_each_run_smoothed_alone():
    rng = np.random.default_rng(5)
    values = rng.normal(size=(6, 50))
    values[2, [0, 7, 8]] = math.nan  # NaN at the start and inside
    values[3] = 4.25  # a constant run stays exactly constant
    values[4, 10] = math.inf
    for weight in (0.0, 0.5, 0.95):
        together = stats.smooth_rows(values, weight)
        alone = np.vstack([stats.smooth(row, weight) for row in values])
        np.testing.assert_array_equal(together, alone)


def test_stacking_shared_steps_equals_resolving_then_aligning():
    from tb_aggregate_plugin.compute import align
    from tb_aggregate_plugin.series import Series

    rng = np.random.default_rng(2)
    steps = np.arange(0, 300, 3)

    def run(values, at=steps):
        return Series(np.asarray(at, np.int64), 1.7e9 + rng.random(len(at)).cumsum(), np.asarray(values))

    runs = [run(rng.normal(size=100)) for _ in range(4)]
    runs[1].value[[0, 50]] = [math.nan, math.inf]
    runs.append(run(rng.normal(size=100).astype(np.float32)))
    for how in ("auto", "exact", "interpolate"):
        stacked = align.stack_shared(runs, how)
        resolved = align.align([align.resolve_repeats(r, "last") for r in runs], how)
        np.testing.assert_array_equal(stacked.grid, resolved.grid)
        np.testing.assert_array_equal(stacked.values, resolved.values)
        np.testing.assert_array_equal(stacked.walls, resolved.walls)
        assert stacked.method == resolved.method and stacked.values.dtype == np.float64
    # Anything else takes the general path.
    other = [
        [run(np.ones(100)), run(np.ones(99), steps[:99])],  # different lengths
        [run(np.ones(100)), run(np.ones(100), steps + 1)],  # different steps
        [run(np.ones(100), np.r_[steps[:50], steps[49:99]])],  # a repeated step
        [run(np.ones(100), steps[::-1])],  # not in order
    ]
    for runs in other:
        assert align.stack_shared(runs, "auto") is None
