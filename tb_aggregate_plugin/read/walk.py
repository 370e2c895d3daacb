"""The one walk of a logdir: its event files by run, found as TensorBoard's data server finds them.

Shared by sliced loading (which runs go into which slice) and the health check (which files the
loaders skip). Only the standard library: the command line walks before numpy is imported.
"""

from __future__ import annotations

import dataclasses
import os


@dataclasses.dataclass
class EventFiles:
    """A logdir's event files: ``runs`` is ``{run: {path: bytes}}``; ``unreadable`` is ``{run: [reason]}``
    for folders that could not be listed (the loaders pass over them without a word)."""

    logdir: str
    runs: dict[str, dict[str, int]]
    unreadable: dict[str, list[str]]


def run_of(logdir: str, folder: str) -> str:
    """The run name of ``folder``: its path relative to ``logdir`` with ``/``, ``.`` for ``logdir`` itself."""
    rel = os.path.relpath(folder, logdir)
    return "." if rel == "." else rel.replace(os.sep, "/")


def event_files(logdir: str) -> EventFiles:
    """Every file whose name contains ``tfevents`` under ``logdir``, links followed (a link back to a
    folder above is not followed again); its run is its folder (:func:`run_of`). A file whose size
    cannot be read counts 0 bytes: the loader fails on it too, and the health check says why.
    """
    root = os.path.abspath(logdir)
    above: dict[str, frozenset[str]] = {root: frozenset([os.path.realpath(root)])}
    runs: dict[str, dict[str, int]] = {}
    unreadable: dict[str, list[str]] = {}

    def cannot_list(error: OSError) -> None:
        run = run_of(root, error.filename or root)
        unreadable.setdefault(run, []).append(f"folder cannot be read ({error.strerror})")

    for folder, dirs, files in os.walk(root, onerror=cannot_list, followlinks=True):
        chain = above.pop(folder, frozenset())
        kept = []
        for name in sorted(dirs):
            real = os.path.realpath(os.path.join(folder, name))
            if real not in chain:  # else a loop
                above[os.path.join(folder, name)] = chain | {real}
                kept.append(name)
        dirs[:] = kept
        run = run_of(root, folder)
        for name in sorted(files):
            path = os.path.join(folder, name)
            if "tfevents" not in name or not os.path.isfile(path):
                continue
            try:
                runs.setdefault(run, {})[path] = os.path.getsize(path)
            except OSError:
                runs.setdefault(run, {})[path] = 0
    return EventFiles(root, runs, unreadable)


def fingerprint(logdir: str) -> dict[str, tuple[int, int] | None]:
    """``{path: (bytes, modification time in ns)}`` of every event file under ``logdir`` (``None`` for
    a folder or file that cannot be read): what tells that the logs changed, at the least cost.

    One ``scandir`` per folder and one ``stat`` per event file and folder, 5 times quicker than
    :func:`event_files` (40 ms for 2,000 runs): a running tab asks at every poll. Links are followed,
    each folder walked once.
    """
    found: dict[str, tuple[int, int] | None] = {}
    seen: set[tuple[int, int]] = set()
    folders = [os.path.abspath(logdir)]
    while folders:
        folder = folders.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            found[folder] = None
            continue
        with entries:
            for entry in entries:
                try:
                    if entry.is_dir():
                        st = entry.stat()
                        if (st.st_dev, st.st_ino) not in seen:
                            seen.add((st.st_dev, st.st_ino))
                            folders.append(entry.path)
                    elif "tfevents" in entry.name:
                        st = entry.stat()
                        found[entry.path] = (st.st_size, st.st_mtime_ns)
                except OSError:
                    found[entry.path] = None
    return found
