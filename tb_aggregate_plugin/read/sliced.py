"""A large logdir loaded a slice of runs at a time by one TensorBoard data server, fed slice after slice.

TensorBoard's data server keeps every point of every run it loads (about 50 bytes per point), and
while it reads a run it holds about 400 bytes per point of that run. For one computation over a
large logdir, the runs are split into slices of about ``slice_bytes`` of event files; the server
(:class:`fed.FedServer`) is given one slice after another, each as a folder of links to the slice's
event files (so every run keeps its name), and drops each slice once it has been read into numpy
arrays; the next slice loads meanwhile. What stays is the arrays (at most 12 bytes per point: wall
time, value as float32 when that is exact, steps shared between runs that share them), served by
:class:`snapshot.SnapshotProvider`.

Only the standard library is imported here: the command line starts the server before numpy and
TensorBoard's modules are imported (0.05 s), which then load while the first slice does.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .snapshot import SnapshotProvider

# A logdir with more event-file bytes than this is loaded in slices of about this size (files of one
# event per step hold about 25 bytes per point): the server then holds about 2 slices' points, and
# the points of the runs it is reading (see docs/performance.md for what was measured).
SLICE_BYTES = 12 * 2**20
# ... and of at least this many runs: the server loads the runs of a slice on two threads.
SLICE_RUNS = 2


def plan(run_bytes: Mapping[str, int], slice_bytes: int, min_runs: int = 1) -> list[list[str]]:
    """The runs in slices of about ``slice_bytes`` each, in name order, each of at least ``min_runs``
    runs (the last one aside) however large they are.

    A run and the runs inside its folder stay in one slice (and count as one run here): the hparams
    that PyTorch and tensorboardX write into a child run (``run/<timestamp>``) are attributed to the
    parent run.
    """
    units: list[list[str]] = []
    for run in sorted(run_bytes, key=lambda r: r.split("/")):
        if units and run.startswith(units[-1][0] + "/"):
            units[-1].append(run)
        else:
            units.append([run])
    slices: list[list[str]] = []
    size = count = 0
    for unit in units:
        unit_bytes = sum(run_bytes[r] for r in unit)
        if not slices or (size + unit_bytes > slice_bytes and count >= min_runs):
            slices.append([])
            size = count = 0
        slices[-1].extend(unit)
        size += unit_bytes
        count += 1
    return slices


def load(
    runs: Mapping[str, Mapping[str, int]],
    slices: Iterable[list[str]],
    start_server: Callable[[Callable[[list[str], str], None]], Any] | None = None,
    meanwhile: Iterable[Callable[[], object]] = (),
) -> SnapshotProvider:
    """Every point of the runs of each slice, loaded by one data server fed a slice at a time:
    ``start_server(link)`` (a :class:`fed.FedServer` by default) with ``link(names, folder)`` making
    the links of a slice's runs.

    The next slice loads while this one is read (reading keeps one core busy, loading both). The
    calls ``meanwhile`` are made one before each wait for a slice (the first while the first slice
    loads); any left, after the last.
    """
    if start_server is None:
        from .fed import FedServer as start_server
    tasks = iter(meanwhile)  # taken one at a time: a caller may make the ones left itself
    with contextlib.ExitStack() as stack:
        server = start_server(lambda names, folder: link_event_files(runs, names, folder))
        stack.callback(server.close)  # also when an error or Ctrl-C comes first
        pending = ((f"s{i}", names) for i, names in enumerate(slices))
        following = next(pending, None)
        if following is not None:
            server.add(*following)
        from .snapshot import SnapshotProvider  # numpy, TensorBoard: imported while it loads

        snapshot = SnapshotProvider()
        while following is not None:
            task = next(tasks, None)
            if task is not None:
                task()
            key, names = following
            stub = server.wait(key)
            following = next(pending, None)
            if following is not None:
                server.add(*following)  # loads while this slice is read
            snapshot.take(None, stub=stub, runs=server.served(key, names))
            server.remove(key)
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
