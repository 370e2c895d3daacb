"""Several run folders read as one logdir: each folder is a run, named after the folder.

TensorBoard's loaders read one logdir. Given several folders (``runs/seed_*``, as tensorboard-reducer
takes its runs), a temporary folder of links to their event files is that logdir: each folder's event
files under its run name, and the runs inside a folder under ``<name>/<run>``. Nothing is written
into the folders themselves; the links are removed once read. Only the standard library.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Sequence

from ..query import OptionError
from .sliced import link_event_files
from .walk import event_files


def run_names(folders: Sequence[str]) -> dict[str, str]:
    """``{run name: folder}``, in the order given: each folder's own name (``runs/seed_1`` ->
    ``seed_1``); when two folders have the same name, every folder is named by its path relative to
    the folders' common parent (``a/seed_1``, ``b/seed_1``). A folder given twice counts once.

    Raises:
        FileNotFoundError: a folder does not exist or is not a folder.
        OptionError: a folder is inside another one given too (its runs would count twice).
    """
    unique: dict[str, str] = {}  # real path -> absolute path as given
    for folder in folders:
        if not os.path.isdir(folder):
            raise FileNotFoundError(f"logdir {folder!r} is not a directory")
        unique.setdefault(os.path.realpath(folder), os.path.abspath(folder))
    reals = sorted(unique)
    for outer in reals:
        for inner in reals:
            if inner != outer and inner.startswith(outer.rstrip(os.sep) + os.sep):
                raise OptionError(
                    "logdir",
                    f"{unique[inner]} is inside {unique[outer]}, given too: give each run folder once",
                )
    paths = list(unique.values())
    names = [os.path.basename(p.rstrip(os.sep)) or p for p in paths]
    if len(set(names)) < len(names):
        parent = os.path.commonpath(paths)
        names = [os.path.relpath(p, parent).replace(os.sep, "/") for p in paths]
    return dict(zip(names, paths))


@contextlib.contextmanager
def linked(folders: Sequence[str]) -> Iterator[str]:
    """A temporary logdir of links to the event files of ``folders``, each under its run name (see
    :func:`run_names`); removed on exit.

    Raises:
        FileNotFoundError, OptionError: see :func:`run_names`.
    """
    runs: dict[str, dict[str, int]] = {}
    for name, folder in run_names(folders).items():
        for run, paths in event_files(folder).runs.items():
            runs[name if run == "." else f"{name}/{run}"] = paths
    with tempfile.TemporaryDirectory(prefix="tb_aggregate_runs_") as logdir:
        link_event_files(runs, list(runs), logdir)
        yield logdir
