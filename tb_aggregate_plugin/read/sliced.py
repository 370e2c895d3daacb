"""A large logdir loaded a slice of runs at a time, each slice by a TensorBoard data server of its own.

TensorBoard's data server keeps every point of every run it loads (about 55 bytes per point, twice
that while it loads). For one computation over a large logdir, the runs are split into slices of
about ``slice_bytes`` of event files; each slice is loaded by its own data server, from a folder of
links to the slice's event files (so every run keeps its name), read into numpy arrays, and that
server is stopped; the next slice loads meanwhile. What stays is the arrays (at most 24 bytes per
point: steps shared between runs that share them, values kept as float32 when that is exact),
served by :class:`snapshot.SnapshotProvider`.

Only the standard library is imported here: the command line starts the first slice's server before
numpy and TensorBoard's modules are imported (0.05 s), which then load while that slice does.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .snapshot import SnapshotProvider

# A logdir with more event-file bytes than this is loaded in slices of about this size: a slice's
# data server then peaks at about 70 MB (files of one event per step hold ~25 bytes per point).
SLICE_BYTES = 16 * 2**20


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
    whose ``wait()`` gives the loaded logdir (a :class:`logdir.LoadedLogdir`) and whose
    ``close(wait=True)`` stops it.

    The next slice's server starts loading while this one is read (reading keeps one core busy,
    loading both), so at most two run at once. The calls ``meanwhile`` are made one before each wait
    for a slice (the first while the first slice loads); any left, after the last.
    """
    tasks = iter(meanwhile)  # taken one at a time: a caller may make the ones left itself
    with contextlib.ExitStack() as stack:

        def start(names: list[str]) -> tuple[Any, tempfile.TemporaryDirectory]:
            links = tempfile.TemporaryDirectory(prefix="tb_aggregate_slice_")
            stack.callback(links.cleanup)  # also when an error or Ctrl-C comes first
            link_event_files(runs, names, links.name)
            server = start_server(links.name)
            stack.callback(server.close)
            return server, links

        pending = iter(slices)
        following = start(next(pending))
        from .snapshot import SnapshotProvider  # numpy, TensorBoard: imported while it loads

        snapshot = SnapshotProvider()
        stopping = None  # the previous slice's server, stopped, its exit not yet waited for
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
            # Stopped now, while the next slice loads; its exit (freeing its memory) is waited for a
            # slice later, when it is long done, so this thread goes on reading meanwhile.
            server.close(wait=False)
            links.cleanup()
            if stopping is not None:
                stopping.close()
            stopping = server
        for task in tasks:
            task()
    return snapshot


def link_event_files(runs: Mapping[str, Mapping[str, int]], names: list[str], folder: str) -> None:
    """Links in ``folder`` to the event files of the runs ``names``, each in its run's folder."""
    for run in names:
        target = folder if run == "." else os.path.join(folder, *run.split("/"))
        os.makedirs(target, exist_ok=True)
        for path in runs[run]:
            os.symlink(path, os.path.join(target, os.path.basename(path)))
