"""A large logdir loaded a slice of runs at a time, each slice by a TensorBoard data server of its own.

TensorBoard's data server keeps every point of every run it loads (about 55 bytes per point, twice
that while it loads). For one computation over a large logdir, the runs are split into slices of
about ``slice_bytes`` of event files; each slice is loaded by its own data server, from a folder of
links to the slice's event files (so every run keeps its name), read into numpy arrays, and that
server is stopped; the next slice loads meanwhile. What stays is the arrays (at most 24 bytes per
point: steps shared between runs that share them, values kept as float32 when that is exact),
served by :class:`SnapshotProvider`.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
from tensorboard import context as tb_context
from tensorboard.data import provider as tb_provider

from . import grpc_read
from .source import HPARAMS, SCALARS, Series, Source, array_reader

# A logdir with more event-file bytes than this is loaded in slices of about this size: a slice's
# data server then peaks at about 70 MB (files of one event per step hold ~25 bytes per point).
SLICE_BYTES = 16 * 2**20


def event_files(logdir: str) -> dict[str, dict[str, int]]:
    """``{run: {event file path: bytes}}``, found as TensorBoard's data server finds them.

    Every file whose name contains ``tfevents``, links followed (a link back to a folder above is
    not followed again); its run is its folder relative to ``logdir``, ``.`` for ``logdir`` itself.
    Folders that cannot be read are passed over, as the data server passes over them.
    """
    root = os.path.abspath(logdir)
    above: dict[str, frozenset[str]] = {root: frozenset([os.path.realpath(root)])}
    runs: dict[str, dict[str, int]] = {}
    for folder, dirs, files in os.walk(root, followlinks=True):
        chain = above.pop(folder, frozenset())
        kept = []
        for name in sorted(dirs):
            real = os.path.realpath(os.path.join(folder, name))
            if real not in chain:  # else a loop
                above[os.path.join(folder, name)] = chain | {real}
                kept.append(name)
        dirs[:] = kept
        rel = os.path.relpath(folder, root)
        run = "." if rel == "." else rel.replace(os.sep, "/")
        for name in sorted(files):
            path = os.path.join(folder, name)
            if "tfevents" not in name or not os.path.isfile(path):
                continue
            try:
                runs.setdefault(run, {})[path] = os.path.getsize(path)
            except OSError:  # the data server will fail on it too, and the health check says why
                runs.setdefault(run, {})[path] = 0
    return runs


def plan(run_bytes: Mapping[str, int], slice_bytes: int) -> list[list[str]]:
    """The runs in slices of about ``slice_bytes`` each, in name order.

    A run and the runs inside its folder stay in one slice: the hparams that PyTorch and tensorboardX
    write into a child run (``run/<timestamp>``) are attributed to the parent run.
    """
    units: list[list[str]] = []
    for run in sorted(run_bytes, key=lambda r: r.split("/")):
        if units and run.startswith(units[-1][0] + "/"):
            units[-1].append(run)
        else:
            units.append([run])
    slices: list[list[str]] = []
    size = 0
    for unit in units:
        unit_bytes = sum(run_bytes[r] for r in unit)
        if not slices or size + unit_bytes > slice_bytes:
            slices.append([])
            size = 0
        slices[-1].extend(unit)
        size += unit_bytes
    return slices


def load(
    runs: Mapping[str, Mapping[str, int]],
    slices: Iterable[list[str]],
    start_server: Callable[[str], Any],
    meanwhile: Iterable[Callable[[], object]] = (),
) -> SnapshotProvider:
    """Every point of the runs of each slice, each slice loaded by a server ``start_server(folder)``
    whose ``wait()`` gives the loaded logdir (a :class:`loading.LoadedLogdir`) and whose
    ``close(wait=True)`` stops it.

    The next slice's server starts loading while this one is read (reading keeps one core busy,
    loading both), so at most two run at once. The calls ``meanwhile`` are made one before each wait
    for a slice (the first while the first slice loads); any left, after the last.
    """
    snapshot = SnapshotProvider()
    tasks = iter(meanwhile)  # taken one at a time: a caller may make the ones left itself
    with contextlib.ExitStack() as stack:

        def start(names: list[str]) -> tuple[Any, tempfile.TemporaryDirectory]:
            links = tempfile.TemporaryDirectory(prefix="tb_aggregate_slice_")
            stack.callback(links.cleanup)  # also when an error or Ctrl-C comes first
            _link_event_files(runs, names, links.name)
            server = start_server(links.name)
            stack.callback(server.close)
            return server, links

        pending = iter(slices)
        following = start(next(pending))
        while following is not None:
            task = next(tasks, None)
            if task is not None:
                task()
            server, links = following
            loaded = server.wait()
            names = next(pending, None)
            following = start(names) if names is not None else None
            if loaded.stub is not None:
                snapshot.take(None, stub=loaded.stub)
            else:
                snapshot.take(loaded.provider)
            # Stopped now, while the next slice loads; its exit (freeing its memory) is waited for
            # at the end, so this thread goes on reading meanwhile.
            server.close(wait=False)
            links.cleanup()
        for task in tasks:
            task()
    return snapshot


def _link_event_files(runs: Mapping[str, Mapping[str, int]], names: list[str], folder: str) -> None:
    """Links in ``folder`` to the event files of the runs ``names``, each in its run's folder."""
    for run in names:
        target = folder if run == "." else os.path.join(folder, *run.split("/"))
        os.makedirs(target, exist_ok=True)
        for path in runs[run]:
            os.symlink(path, os.path.join(target, os.path.basename(path)))


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

    def take(self, provider: tb_provider.DataProvider | None, experiment_id: str = "", *, stub=None) -> None:
        """Copy every scalar point and the hparams listing of ``provider``'s experiment, or of the
        data server whose gRPC ``stub`` is given (then ``provider`` is not used)."""
        ctx = tb_context.RequestContext()

        def hparams() -> dict:
            try:
                if stub is not None:
                    return grpc_read.tensor_listing(stub, experiment_id, HPARAMS)
                return provider.list_tensors(ctx, experiment_id=experiment_id, plugin_name=HPARAMS)
            except Exception:  # a provider without hparams: as Source.hparams treats it
                return {}

        # One request for every point, and the hparams listing meanwhile: a data server's answer can
        # wait 40 ms for a TCP acknowledgement, so fewer requests, and waits that overlap.
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            tensors = pool.submit(hparams)
            reader = grpc_read.scalar_reader(stub) if stub is not None else array_reader(provider)
            if reader is not None:
                series = reader(experiment_id, None)
                listing: dict[str, dict[str, tb_provider.ScalarTimeSeries]] = {}
                # Unfiltered, it also answers series it does not list (no valid point): left out.
                series = {key: s for key, s in series.items() if len(s)}
                for (run, tag), s in series.items():
                    listing.setdefault(run, {})[tag] = _listed(s)
            else:
                listing = provider.list_scalars(ctx, experiment_id=experiment_id, plugin_name=SCALARS)
                source = Source(provider, experiment_id, max_cache_points=0, max_memo_bytes=0)
                series = source.read({run: list(tags) for run, tags in listing.items()})
            self._hparams.update(tensors.result())
        self._scalars.update(listing)
        for (run, tag), s in series.items():
            step = self._steps.get(tag)
            if step is None or not np.array_equal(step, s.step):
                step = self._steps[tag] = s.step
            narrow = s.value.astype(np.float32)  # how most writers store a scalar
            value = narrow if np.array_equal(narrow, s.value, equal_nan=True) else s.value
            self._series[(run, tag)] = Series(step, s.wall, value)

    # -- the DataProvider interface ----------------------------------------------------------------

    def list_runs(self, ctx=None, *, experiment_id):
        return [tb_provider.Run(run_id=run, run_name=run, start_time=None) for run in sorted(self._scalars)]

    def list_scalars(self, ctx=None, *, experiment_id, plugin_name, run_tag_filter=None):
        return _filtered(self._scalars, run_tag_filter) if plugin_name == SCALARS else {}

    def list_tensors(self, ctx=None, *, experiment_id, plugin_name, run_tag_filter=None):
        return _filtered(self._hparams, run_tag_filter) if plugin_name == HPARAMS else {}

    def read_scalar_arrays(self, experiment_id: str, run_tag_filter) -> dict[tuple[str, str], Series]:
        """``{(run, tag): Series}`` of every point of the filtered scalar series."""
        wanted = _filtered(self._scalars, run_tag_filter)
        out = {}
        for run, tags in wanted.items():
            for tag in tags:
                s = self._series[(run, tag)]
                out[(run, tag)] = Series(s.step, s.wall, s.value.astype(np.float64, copy=False))
        return out

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
