"""The tab's chart payload for one tag: per group x, center, band edges and n, thinned for drawing only."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..compute.result import Result, api_spelling, group_notes
from ..query import LABELS
from .table_text import json_values

DEFAULT_MAX_POINTS = 2000


def thin_indices(length: int, max_points: int, keep: np.ndarray | None = None) -> np.ndarray:
    """About ``max_points`` evenly spaced indices of ``range(length)``, first and last included,
    plus the indices in ``keep`` (where the number of runs changes, so a drop in n stays visible)."""
    if length <= max_points:
        return np.arange(length)
    picks = np.linspace(0, length - 1, max(max_points, 2)).round().astype(np.int64)
    picks = picks[np.concatenate(([True], picks[1:] != picks[:-1]))]  # sorted: drop repeats in one pass
    if keep is not None and len(keep):
        picks = np.union1d(picks, keep[: max_points // 4])
    return picks


def _with_gaps(rows: dict[str, np.ndarray], pick: np.ndarray, gap: np.ndarray, x: str) -> dict:
    """``rows`` with a point without a value (no center, no band, n 0, at the middle of its two
    neighbours' x) between two drawn points with a gap between them, so the chart breaks its line
    there instead of drawing a straight one across the stretch where no run has data."""
    seen = np.cumsum(gap)  # gaps up to and including each point
    between = np.flatnonzero(seen[pick[1:]] > seen[pick[:-1]])  # a gap after drawn point k
    if not len(between):
        return rows
    at = between + 1
    out = {}
    for key, values in rows.items():
        if key == x:
            filler = (values[between] + values[at]) / 2
        elif key == "n":
            filler = np.zeros(len(between), values.dtype)
        else:
            filler = np.full(len(between), np.nan)
        out[key] = np.insert(values, at, filler)
    return out


def chart(
    result: Result,
    tag: str,
    *,
    max_points: int = DEFAULT_MAX_POINTS,
    include_runs: bool = False,
    spell: Callable[[str], str] = api_spelling,
) -> dict:
    """What the tab draws for ``tag``: one entry per group, plus the notes that apply (options named
    as ``spell`` names them)."""
    x = result.x
    groups = []
    for block, curve in zip(result.blocks, result.curves):
        if block.tag != tag:
            continue
        n = curve["n"]
        changes = np.flatnonzero(np.diff(n)) + 1 if len(n) > 1 else np.empty(0, np.int64)
        gap = curve.get("gap")
        if gap is not None and gap.any():  # the points on both sides of a gap are drawn
            after = np.flatnonzero(gap)
            changes = np.union1d(np.union1d(after, after - 1), changes)
        pick = thin_indices(len(n), max_points, changes)
        rows = {key: curve[key][pick] for key in (x, "center", "band_lo", "band_hi", "n")}
        if gap is not None and gap.any():
            rows = _with_gaps(rows, pick, gap, x)
        members = result.groups.get(block.group, block.runs)
        entry = {
            "group": block.group,
            "runs": block.runs,
            "size": len(members),
            "alignment": block.alignment,
            "nonfinite": {r: c for r, c in block.nonfinite.items() if c},
            "downsampled": block.downsampled,
            "x": json_values(rows[x]),
            "center": json_values(rows["center"]),
            "lo": json_values(rows["band_lo"]),
            "hi": json_values(rows["band_hi"]),
            "n": json_values(rows["n"]),
            "notes": group_notes(block, members, result.query.min_runs, x),
        }
        if include_runs and block.aligned is not None:
            aligned = block.aligned
            take = thin_indices(len(aligned.grid), max_points)
            grid = aligned.grid[take]
            xs = json_values(grid.astype(np.int64) if x == "step" else grid)  # steps as integers, like "x"
            entry["individual"] = [
                {"run": run, "x": xs, "y": json_values(aligned.values[i, take])}
                for i, run in enumerate(block.runs)
            ]
        groups.append(entry)
    return {
        "tag": tag,
        "x": x,
        "center": result.query.center,
        "band": result.query.band,
        "band_label": LABELS["band"][result.query.band],
        "groups": groups,
        "unplaced": result.unplaced,
        "notes": result.notes(tag, spell),
        "downsampled": any(b.downsampled for b in result.blocks if b.tag == tag),
    }
