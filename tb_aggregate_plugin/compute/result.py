"""Result: the reduced curves of one query, what stands behind each, and the notes that say so.

The notes are worded here, once, for every adapter: the tab, the exports, the command line and the API.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING

import numpy as np

from ..query import Query
from . import align as align_mod
from .stats import edge_names

if TYPE_CHECKING:
    import pandas as pd

# What a series at exactly the loader's sample limit may mean, and how to read every point.
DOWNSAMPLED = "came back at TensorBoard's sample limit and may be downsampled"
FULL_RESOLUTION = "start TensorBoard with --samples_per_plugin scalars=1000000 (above the longest series)"


class UnknownTagError(LookupError):
    """The requested tag is in none of the selected runs."""


@dataclasses.dataclass
class Block:
    """What stands behind one (tag, group) curve."""

    tag: str
    group: str
    runs: list[str]  # runs of the group with points for this tag
    alignment: str  # "exact" or "interpolate"
    nonfinite: dict[str, int]  # run -> NaN/inf values left out
    finals: dict[str, float]  # run -> last finite (smoothed) value, for comparing groups
    downsampled: list[str]  # runs whose series may have been thinned by the loader
    aligned: align_mod.Aligned | None = None  # kept only with keep_runs=True


@dataclasses.dataclass
class Result:
    """The reduced curves and everything needed to say what stands behind them."""

    query: Query
    curves: list[dict]  # per block, in the same order: its columns of the frame, and its tag and group
    names: list[str]  # the statistics computed (besides n, center and band)
    blocks: list[Block]
    groups: dict[str, list[str]]  # group -> selected runs placed in it
    unplaced: dict[str, str]  # run -> why the grouping could not place it
    tags: list[str]
    matched_runs: int = 0  # runs whose name matches the run filter, with or without the tags
    skipped: dict[str, str] = dataclasses.field(default_factory=dict)  # run -> unreadable event data
    partial: bool = False  # only n, center and band were computed (see run's drawn_only)

    @property
    def x(self) -> str:
        return self.query.x

    @functools.cached_property
    def frame(self) -> pd.DataFrame:
        """``tag, group, <x>, [wall_time], n, <statistics>, center, band_lo, band_hi``, one row per
        point of each curve; built when first asked for (a chart reads :attr:`curves` directly)."""
        import pandas as pd

        names = ["tag", "group", self.x] + (["wall_time"] if self.x == "step" else []) + ["n"]
        names += [n for n in self.names if n not in names] + ["center", "band_lo", "band_hi"]
        return pd.DataFrame(_columns(self.curves, names), columns=names)

    def table(self) -> pd.DataFrame:
        """The tidy table (columns: :meth:`table_spec`); ``attrs`` say the rest."""
        import pandas as pd

        spec = self.table_spec()
        columns = _columns(self.curves, [key for _, key in spec])
        table = pd.DataFrame({name: columns[key] for name, key in spec}, columns=[name for name, _ in spec])
        table.attrs = self.attrs()
        return table

    def table_columns(self) -> dict[str, np.ndarray]:
        """:meth:`table`'s columns as numpy arrays (names as object arrays), without pandas: what the
        command line writes to CSV, which then never imports pandas."""
        spec = self.table_spec()
        columns = _columns(self.curves, [key for _, key in spec])
        return {name: columns[key] for name, key in spec}

    def table_spec(self) -> list[tuple[str, str]]:
        """``(column name, key of the curves)`` of each column of the table, in order: ``tag, group,
        <x>, [wall_time], n``, then :meth:`statistic_columns` (the line, the band's edges, the other
        reductions asked for, each once)."""
        if self.partial:
            raise ValueError("only the center and band were computed (drawn_only): no table")
        ids = ["tag", "group", self.x] + (["wall_time"] if self.x == "step" else []) + ["n"]
        return [(c, c) for c in ids] + self.statistic_columns()

    def statistic_columns(self, reductions: bool = True) -> list[tuple[str, str]]:
        """``(name, key of the curves)`` of what is drawn, named after what it is: the line (``mean``
        or ``median``), the band's edges (``mean-std`` and ``mean+std``, ``mean-sem`` and ``mean+sem``,
        ``ci95_lo`` and ``ci95_hi``, ``min`` and ``max``, ``q25`` and ``q75``; none for band none),
        then, with ``reductions``, the other reductions of the query, in its order, each name once."""
        query = self.query
        out = [(query.center, query.center)]
        if query.band != "none":
            out += list(zip(edge_names(query.center, query.band), ("band_lo", "band_hi")))
        if reductions:
            named = {name for name, _ in out} | {"n"}
            out += [(r, r) for r in query.reductions if r not in named]
        return out

    def attrs(self) -> dict:
        return {
            "query": dataclasses.asdict(self.query),
            "groups": {g: list(r) for g, r in self.groups.items()},
            "unplaced": dict(self.unplaced),
            "skipped": dict(self.skipped),
            "alignment": {f"{b.tag} | {b.group}": b.alignment for b in self.blocks},
            "nonfinite": {f"{b.tag} | {r}": c for b in self.blocks for r, c in b.nonfinite.items() if c},
            "downsampled": sorted({f"{b.tag} | {r}" for b in self.blocks for r in b.downsampled}),
            "notes": self.notes(),
        }

    def notes(self, tag: str | None = None) -> list[str]:
        """Plain-language notes: what was left out and why (only the notes of ``tag`` if given)."""
        notes = []
        if not self.matched_runs:
            notes.append(f"no run matches runs={self.query.runs!r}")
        elif not self.tags:
            notes.append(f"no scalar tag matches tags={self.query.tags!r}")
        for run, reason in self.skipped.items():
            notes.append(f"run {run!r}: event data skipped: {reason}")
        for run, reason in sorted(self.unplaced.items()):
            notes.append(f"run {run!r} left out: {reason} (group_by={self.query.group_by})")
        for b in self.blocks:
            if tag is not None and b.tag != tag:
                continue
            for run, count in sorted(b.nonfinite.items()):
                if count:
                    notes.append(f"{b.tag}: {count} NaN/inf value(s) of run {run!r} left out")
            if b.downsampled:
                notes.append(f"{b.tag}: {len(b.downsampled)} run(s) {DOWNSAMPLED}; {FULL_RESOLUTION}")
        return notes


def _columns(pieces: list[dict], names: list[str]) -> dict[str, np.ndarray]:
    """The columns ``names`` of the frame, the curves one after the other."""
    if not pieces:
        return {c: np.empty(0, dtype=object if c in ("tag", "group") else float) for c in names}
    lengths = [len(p["n"]) for p in pieces]
    out = {}
    for c in names:
        if c in ("tag", "group"):
            out[c] = np.repeat(np.array([p[c] for p in pieces], dtype=object), lengths)
        else:
            out[c] = np.concatenate([np.asarray(p[c]) for p in pieces])
    return out


def group_notes(block: Block, members: list[str], min_runs: int = 1) -> list[str]:
    """Plain-language notes for one group's curve: alignment used and what was left out."""
    if block.alignment == "exact":
        notes = ["aligned exactly: every run's value at its own step"]
    else:
        notes = ["interpolated onto the union of the runs' steps, each run only inside its first..last step"]
    present = set(block.runs)
    absent = [r for r in members if r not in present]
    if absent:
        notes.append(f"{len(absent)} run(s) of the group have no points for this tag: {', '.join(absent)}")
    for run, count in sorted(block.nonfinite.items()):
        if count:
            notes.append(f"{count} NaN/inf value(s) of run {run!r} left out")
    if min_runs > 1:
        notes.append(f"points backed by fewer than {min_runs} runs are left out (min_runs)")
    if block.downsampled:
        notes.append(f"{len(block.downsampled)} run(s) {DOWNSAMPLED}")
    return notes
