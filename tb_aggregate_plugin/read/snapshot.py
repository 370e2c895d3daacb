"""A logdir's scalars held in memory as numpy arrays, served as a TensorBoard DataProvider.

Filled slice by slice (:mod:`.sliced`) from the data servers that loaded each slice.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Mapping

import numpy as np
from tensorboard import context as tb_context
from tensorboard.data import provider as tb_provider

from ..series import HPARAMS, SCALARS, Series
from . import grpc_fast
from .pool import ArrayPool
from .source import Source


class SnapshotProvider(tb_provider.DataProvider):
    """Scalars and the hparams listing of one experiment, held in memory as numpy arrays.

    Filled with :meth:`take` from live providers; ``read_scalar_arrays`` gives :class:`Source` the
    arrays themselves, the public ``read_scalars`` one object per point as any provider does.
    """

    def __init__(self) -> None:
        self._scalars: dict[str, dict[str, tb_provider.ScalarTimeSeries]] = {}
        self._hparams: dict[str, dict[str, tb_provider.TensorTimeSeries]] = {}
        self._series: dict[tuple[str, str], Series] = {}
        self._steps: dict[str, np.ndarray] = {}  # tag -> the last step array kept, shared when equal
        self._pool = ArrayPool()  # where the arrays kept are, apart from the short-lived ones

    def take(
        self,
        provider: tb_provider.DataProvider | None,
        experiment_id: str = "",
        *,
        stub=None,
        runs: Mapping[str, str] | None = None,
    ) -> None:
        """Copy every scalar point and the hparams listing of ``provider``'s experiment, or of the
        data server whose gRPC ``stub`` is given (then ``provider`` is not used). With a ``stub``,
        ``runs`` (``{the server's name of a run: the name to keep it under}``) reads only those runs."""
        ctx = tb_context.RequestContext()

        def hparams() -> dict:
            try:
                if stub is not None:
                    listing = grpc_fast.tensor_listing(stub, experiment_id, HPARAMS)
                    return listing if runs is None else {runs[r]: t for r, t in listing.items() if r in runs}
                return provider.list_tensors(ctx, experiment_id=experiment_id, plugin_name=HPARAMS)
            except Exception:  # a provider without hparams: as Source.hparams treats it
                return {}

        # One request for every point, and the hparams listing meanwhile: a data server's answer can
        # wait 40 ms for a TCP acknowledgement, so fewer requests, and waits that overlap.
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            tensors = pool.submit(hparams)
            reader = grpc_fast.scalar_reader(stub) if stub is not None else grpc_fast.array_reader(provider)
            if reader is not None:
                wanted = None if runs is None else tb_provider.RunTagFilter(runs=sorted(runs))
                series = reader(experiment_id, wanted)
                listing: dict[str, dict[str, tb_provider.ScalarTimeSeries]] = {}
                # Unfiltered by tag, it also answers series it does not list (no valid point): left out.
                series = {key: s for key, s in series.items() if len(s)}
                if runs is not None:
                    series = {(runs[run], tag): s for (run, tag), s in series.items() if run in runs}
                for (run, tag), s in series.items():
                    listing.setdefault(run, {})[tag] = _listed(s)
            else:
                listing = provider.list_scalars(ctx, experiment_id=experiment_id, plugin_name=SCALARS)
                source = Source(
                    provider, experiment_id, max_cache_points=0, max_memo_bytes=0, fold_children=False
                )
                series = source.read({run: list(tags) for run, tags in listing.items()})
            self._hparams.update(tensors.result())
        self._scalars.update(listing)
        # Kept in the pool's blocks, read-only: read_scalar_arrays hands them out as they are. Equal
        # arrays are kept once: the steps of a tag that runs share, and the wall times of a run's tags
        # logged in the same events (a writer that logs its metrics together: 8 of 12 bytes a point).
        walls: dict[tuple, list[np.ndarray]] = {}  # (run, length, first, last) -> wall arrays kept
        for (run, tag), s in series.items():
            step = self._steps.get(tag)
            if step is None or not np.array_equal(step, s.step):
                step = self._steps[tag] = self._pool.copy(s.step)
            narrow = s.value.astype(np.float32)  # how most writers store a scalar
            value = narrow if np.array_equal(narrow, s.value, equal_nan=True) else s.value
            wall = self._kept_once(walls, run, s.wall)
            self._series[(run, tag)] = Series(step, wall, self._pool.copy(value))

    def _kept_once(self, kept: dict[tuple, list[np.ndarray]], run: str, wall: np.ndarray) -> np.ndarray:
        """The wall times of one of ``run``'s series: an equal array already in ``kept``, else a copy."""
        key = (run, len(wall), float(wall[0]), float(wall[-1])) if len(wall) else (run, 0)
        for candidate in kept.get(key, ()):
            if np.array_equal(candidate, wall):
                return candidate
        copy = self._pool.copy(wall)
        kept.setdefault(key, []).append(copy)
        return copy

    # -- the DataProvider interface ----------------------------------------------------------------

    def list_runs(self, ctx=None, *, experiment_id):
        return [tb_provider.Run(run_id=run, run_name=run, start_time=None) for run in sorted(self._scalars)]

    def list_scalars(self, ctx=None, *, experiment_id, plugin_name, run_tag_filter=None):
        return _filtered(self._scalars, run_tag_filter) if plugin_name == SCALARS else {}

    def list_tensors(self, ctx=None, *, experiment_id, plugin_name, run_tag_filter=None):
        return _filtered(self._hparams, run_tag_filter) if plugin_name == HPARAMS else {}

    def read_scalar_arrays(self, experiment_id: str, run_tag_filter) -> dict[tuple[str, str], Series]:
        """``{(run, tag): Series}`` of every point of the filtered scalar series: the arrays held,
        read-only, values as float32 where that is exact (no copy: the engine widens them to float64
        as it stacks them, a block at a time for large groups)."""
        wanted = _filtered(self._scalars, run_tag_filter)
        return {(run, tag): self._series[(run, tag)] for run, tags in wanted.items() for tag in tags}

    def read_scalars(self, ctx=None, *, experiment_id, plugin_name, downsample=None, run_tag_filter=None):
        out: dict[str, dict[str, list[tb_provider.ScalarDatum]]] = {}
        for (run, tag), s in self.read_scalar_arrays(experiment_id, run_tag_filter).items():
            keep = np.arange(len(s))
            if downsample is not None and len(s) > downsample:  # evenly spaced, the last one kept
                keep = np.unique(np.linspace(0, len(s) - 1, max(downsample, 0)).round().astype(int))
            out.setdefault(run, {})[tag] = [
                tb_provider.ScalarDatum(step=int(step), wall_time=float(wall), value=float(value))
                for step, wall, value in zip(s.step[keep], s.wall[keep], s.value[keep])
            ]
        return out

    def read_last_scalars(self, ctx=None, *, experiment_id, plugin_name, run_tag_filter=None):
        out: dict[str, dict[str, tb_provider.ScalarDatum]] = {}
        for (run, tag), s in self.read_scalar_arrays(experiment_id, run_tag_filter).items():
            if len(s):
                out.setdefault(run, {})[tag] = tb_provider.ScalarDatum(
                    step=int(s.step[-1]), wall_time=float(s.wall[-1]), value=float(s.value[-1])
                )
        return out


def _listed(series: Series) -> tb_provider.ScalarTimeSeries:
    """The listing entry of a series read without a listing: its largest step and wall time."""
    return tb_provider.ScalarTimeSeries(
        max_step=int(series.step.max()),
        max_wall_time=float(series.wall.max()),
        plugin_content=b"",
        description="",
        display_name="",
    )


def _filtered(listing: Mapping[str, Mapping[str, object]], rtf) -> dict[str, dict[str, object]]:
    runs = None if rtf is None or rtf.runs is None else set(rtf.runs)
    tags = None if rtf is None or rtf.tags is None else set(rtf.tags)
    out = {}
    for run, by_tag in listing.items():
        if runs is not None and run not in runs:
            continue
        kept = {tag: ts for tag, ts in by_tag.items() if tags is None or tag in tags}
        if kept:
            out[run] = kept
    return out
