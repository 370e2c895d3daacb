"""Reduced curves written back as TensorBoard runs: per group, a run for the line and one per band edge.

``OUT/<group>/mean``, ``OUT/<group>/mean-std``, ``OUT/<group>/mean+std`` (``ci95_lo`` and ``ci95_hi``,
...; and one run per reduction when the reductions are asked for): each run holds every tag under
its own name, at the table's steps and with the median wall time of the source runs, so
``tensorboard --logdir`` shows them next to the originals. Written with TensorBoard's own
``tensorboard.summary.Writer``. A ``.tb-aggregate.json`` file records what each
run is (group names from logs can need escaping to become folder names).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..query import OptionError, Query, ref
from ..version import __version__

if TYPE_CHECKING:
    from ..compute.result import Result

MANIFEST = ".tb-aggregate.json"
# Characters that are not safe (or not portable) in a folder name.
_UNSAFE = re.compile(r'[\x00-\x1f\x7f<>:"|?*\\]')
_MAX_COMPONENT_BYTES = 200


def check_query(query: Query) -> None:
    """Raise :class:`OptionError` when ``query``'s curves cannot become event files (indexed by step)."""
    if query.x != "step":
        raise OptionError(
            "x",
            f"{ref('format')} tb needs {ref('x')} step (event files are indexed by step), "
            f"not {ref('x')} {query.x}",
        )


def statistics(result: Result, reductions: bool = False) -> list[tuple[str, str]]:
    """``(run name, frame column)`` of each statistic written: the line and the band's edges, named
    as in the table (``mean``, ``mean-std``, ``mean+std``; ``ci95_lo``...), and with ``reductions``
    the query's other reductions too."""
    return result.statistic_columns(reductions)


def safe_component(name: str) -> str:
    """One path component for a folder name: no separators, controls, leading dot or overlong name."""
    name = _UNSAFE.sub("_", name).strip(" ")
    if not name:
        return "_"
    if name.startswith("."):
        name = "_" + name
    encoded = name.encode("utf-8")
    if len(encoded) > _MAX_COMPONENT_BYTES:
        name = encoded[:_MAX_COMPONENT_BYTES].decode("utf-8", "ignore")
    return name


def group_folders(groups: list[str]) -> dict[str, str]:
    """A distinct relative folder (``/``-separated) for each group name; ``/`` in a name nests folders."""
    folders: dict[str, str] = {}
    used: set[str] = set()
    for group in groups:
        parts = [safe_component(p) for p in group.split("/") if p]
        base = "/".join(parts) or "_"
        folder, k = base, 2
        while folder.lower() in used:  # also distinct on case-insensitive filesystems
            folder, k = f"{base}~{k}", k + 1
        used.add(folder.lower())
        folders[group] = folder
    return folders


def is_previous_output(path: str) -> bool:
    """Whether ``path`` is a folder this module wrote (it has the manifest)."""
    try:
        with open(os.path.join(path, MANIFEST), encoding="utf-8") as f:
            return json.load(f).get("written_by") == "tb-aggregate"
    except (OSError, ValueError, AttributeError):
        return False


def write_runs(
    result: Result,
    folder: str,
    *,
    logdir: str | list[str] = "",
    reductions: bool = False,
    on_run: Callable[[int, int], None] | None = None,
) -> dict:
    """Write one TensorBoard run per group and statistic under ``folder`` (which must exist): the
    line and the band's edges, and with ``reductions`` the query's reductions (see :func:`statistics`).

    Non-finite values (e.g. the std of a group of one run) are left out of the run. ``on_run(done,
    total)`` is called after each run. Returns the manifest written (``runs``: run -> group, statistic).

    Raises:
        OptionError: the result's x axis is not ``step`` (see :func:`check_query`).
    """
    from tensorboard.summary import Writer

    check_query(result.query)
    frame = result.frame
    stats = statistics(result, reductions)
    groups = list(dict.fromkeys(frame["group"]))
    folders = group_folders(groups)
    manifest: dict = {
        "written_by": "tb-aggregate",
        "version": __version__,
        "logdir": logdir,
        "query": result.attrs()["query"],
        "groups": {g: list(result.groups.get(g, [])) for g in groups},
        "runs": {},
    }
    total, done = len(groups) * len(stats), 0
    for group, rows in frame.groupby("group", sort=False):
        tags = rows["tag"].to_numpy()
        steps = rows["step"].to_numpy(np.int64)
        walls = rows["wall_time"].to_numpy(np.float64)
        for name, column in stats:
            run = f"{folders[group]}/{safe_component(name)}"
            values = rows[column].to_numpy(np.float64)
            keep = np.isfinite(values)
            done += 1
            if keep.any():  # e.g. the std of a group of one run has no value: no empty run for it
                _write_run(Writer(os.path.join(folder, *run.split("/"))), tags, steps, walls, values, keep)
                manifest["runs"][run] = {"group": group, "statistic": name}
            if on_run is not None:
                on_run(done, total)
    with open(os.path.join(folder, MANIFEST), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, default=str)
    return manifest


def _write_run(writer, tags, steps, walls, values, keep) -> None:
    try:
        for tag, step, wall, value in zip(tags[keep], steps[keep], walls[keep], values[keep]):
            # A step without a known wall time (not seen with real runs) gets the writer's clock.
            when = float(wall) if np.isfinite(wall) else None
            writer.add_scalar(str(tag), value, int(step), wall_time=when)
    finally:
        writer.close()
