"""A large group reduced a block of steps at a time gives numpy's numbers on the raw values, and
the very bits of the whole group stacked at once: whichever way the engine takes, the table is the same.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from tensorboard.data import provider as tb_provider

from tb_aggregate_plugin.compute import blocks, engine
from tb_aggregate_plugin.query import Query
from tb_aggregate_plugin.read.source import Source
from tb_aggregate_plugin.series import Series

RUNS, STEPS = 7, 1001  # blocks of 50 steps below: the last step alone would be a block of one
NAMES = ["mean", "std", "var", "sem", "min", "max", "median", "q05", "q75", "count", "iqm", "ci95_lo"]


def raw_series(runs: int = RUNS, steps: int = STEPS) -> dict[str, Series]:
    """Float32 values (as a sliced load holds them) on one shared step array, with NaN and infinities,
    a run that ends on NaN, a point no run reaches, and wall times that differ between runs."""
    rng = np.random.default_rng(11)
    step = np.arange(0, 3 * steps, 3)
    out = {}
    for i in range(runs):
        value = (rng.normal(size=steps) * 10.0 ** rng.integers(-3, 4, size=steps)).astype(np.float32)
        value[rng.random(steps) < 0.05] = np.nan
        if i == 1:
            value[[5, 17]] = [np.inf, -np.inf]
            value[-40:] = np.nan  # its last finite value comes well before the end
        value[400] = np.nan if i != 0 else value[400]  # one run only
        value[401] = np.nan  # no run
        wall = 1.7e9 + 100.0 * i + np.cumsum(rng.random(steps))
        out[f"run_{i}"] = Series(step, wall, value)
    return out


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 50 steps for 7 runs, and every group taken in blocks."""
    monkeypatch.setattr(blocks, "BLOCK_VALUES", RUNS * 50)
    monkeypatch.setattr(blocks, "BLOCKED_ABOVE", 0)


def test_blocks_cover_every_step_at_least_two_at_a_time(small_blocks):
    cut = blocks._blocks(STEPS, RUNS)
    assert cut[0][0] == 0 and cut[-1][1] == STEPS
    assert all(a[1] == b[0] for a, b in zip(cut, cut[1:]))
    assert min(stop - start for start, stop in cut) >= 2
    assert blocks._blocks(1, RUNS) == [(0, 1)]


def test_reduced_in_blocks_matches_numpy_on_the_raw_values(small_blocks):
    runs = list(raw_series().values())
    got = blocks.reduce_shared(runs, NAMES)
    values = np.vstack([s.value for s in runs]).astype(np.float64)
    values[~np.isfinite(values)] = np.nan
    walls = np.vstack([s.wall for s in runs])
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        n = np.sum(~np.isnan(values), axis=0)
        var = np.nanvar(values, axis=0, ddof=1)
        var[n < 2] = np.nan
        ordered = np.sort(values, axis=0)
        g = n // 4
        rank = np.arange(len(values))[:, None]
        iqm = np.where((rank >= g) & (rank < n - g), ordered, 0.0).sum(axis=0) / (n - 2 * g)
        want = {
            "n": n,
            "count": n,
            "mean": np.nanmean(values, axis=0),
            "var": var,
            "std": np.sqrt(var),
            "sem": np.sqrt(var) / np.sqrt(n),
            "min": np.nanmin(values, axis=0),
            "max": np.nanmax(values, axis=0),
            "median": np.nanmedian(values, axis=0),
            "q05": np.nanquantile(values, 0.05, axis=0),
            "q75": np.nanquantile(values, 0.75, axis=0),
            "iqm": iqm,
        }
        wall_time = np.nanmedian(walls, axis=0)
    exact = ("n", "count", "min", "max", "median")
    for name, expected in want.items():
        if name in exact:
            np.testing.assert_array_equal(got.reduced[name], expected, err_msg=name)
        else:
            np.testing.assert_allclose(got.reduced[name], expected, rtol=1e-12, equal_nan=True, err_msg=name)
    np.testing.assert_array_equal(got.wall_time, wall_time)
    assert got.nonfinite == (~np.isfinite(values)).sum(axis=1).tolist()
    last = [row[np.isfinite(row)][-1] for row in values]
    assert got.finals == last and got.finals[1] == values[1, -41]


def test_the_bootstrap_is_never_cut_into_blocks():
    with pytest.raises(ValueError):
        blocks.reduce_shared(list(raw_series().values()), ["mean", "boot95_lo"])


class ArraysProvider(tb_provider.DataProvider):
    """Scalar series held as arrays, served as a sliced load serves them (read_scalar_arrays)."""

    def __init__(self, series: dict[tuple[str, str], Series]):
        self._series = series

    def list_runs(self, ctx=None, *, experiment_id):
        return [
            tb_provider.Run(run_id=r, run_name=r, start_time=None)
            for r in sorted({r for r, _ in self._series})
        ]

    def list_scalars(self, ctx=None, *, experiment_id, plugin_name, run_tag_filter=None):
        out: dict = {}
        for (run, tag), s in self._series.items():
            out.setdefault(run, {})[tag] = tb_provider.ScalarTimeSeries(
                max_step=int(s.step[-1]),
                max_wall_time=float(s.wall.max()),
                plugin_content=b"",
                description="",
                display_name="",
            )
        return out

    def list_tensors(self, ctx=None, *, experiment_id, plugin_name, run_tag_filter=None):
        return {}

    def read_scalars(self, ctx=None, *, experiment_id, plugin_name, downsample=None, run_tag_filter=None):
        raise AssertionError("read through read_scalar_arrays")

    read_last_scalars = read_scalars

    def read_scalar_arrays(self, experiment_id, rtf):
        runs = None if rtf is None or rtf.runs is None else set(rtf.runs)
        tags = None if rtf is None or rtf.tags is None else set(rtf.tags)
        return {
            (r, t): s
            for (r, t), s in self._series.items()
            if (runs is None or r in runs) and (tags is None or t in tags)
        }


OPTIONS = [
    {"reductions": "mean,std,min,max,median"},
    {"band": "ci95"},
    {"center": "median", "band": "iqr", "reductions": "q05,q95,iqm,count"},
    {"group_by": "regex:run_([0-3])", "min_runs": 2},
    {"band": "boot95", "boot_reps": 200},  # the bootstrap needs the whole matrix: not in blocks
    {"smoothing": 0.6},  # smoothing goes along each run: not in blocks
]


@pytest.mark.parametrize("options", OPTIONS)
def test_a_table_reduced_in_blocks_is_the_table_stacked_whole(options, monkeypatch):
    raw = raw_series()
    series = {(r, "loss"): s for r, s in raw.items()}
    series.update({(r, "acc"): Series(s.step, s.wall, -s.value) for r, s in raw.items()})
    query = Query(**{"group_by": "none", **options})

    def table() -> pd.DataFrame:
        return engine.run(query, Source(ArraysProvider(series), max_cache_points=0, max_memo_bytes=0)).table()

    whole = table()
    monkeypatch.setattr(blocks, "BLOCK_VALUES", RUNS * 50)
    monkeypatch.setattr(blocks, "BLOCKED_ABOVE", 0)
    calls = []
    reduce_shared = blocks.reduce_shared
    monkeypatch.setattr(blocks, "reduce_shared", lambda *a, **k: calls.append(1) or reduce_shared(*a, **k))
    cut = table()
    pd.testing.assert_frame_equal(cut, whole, check_exact=True)
    assert cut.attrs == whole.attrs
    assert bool(calls) == ("boot_reps" not in options and "smoothing" not in options)
