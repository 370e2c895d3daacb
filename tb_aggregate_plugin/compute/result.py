"""Result: the reduced curves of one query, what stands behind each, and the notes that say so.

The notes are worded here, once, for every adapter: the tab, the exports, the command line and the API.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..query import X_TAG_PREFIX, Query, ref, spelled
from . import align as align_mod
from .stats import edge_names

if TYPE_CHECKING:
    import pandas as pd

# What a series at exactly the loader's sample limit may mean, and how to read every point.
DOWNSAMPLED = "came back at TensorBoard's sample limit and may be downsampled"
FULL_RESOLUTION = "start TensorBoard with --samples_per_plugin scalars=1000000 (above the longest series)"


class UnknownTagError(LookupError):
    """The requested tag is in none of the selected runs."""


def no_x_tag(x_tag: str) -> str:
    """Why a run is left out under ``x=tag:NAME``: it has no tag NAME."""
    return f"has no scalar tag {x_tag!r} to use as x"


def x_dropped_note(x_tag: str, run: str, count: int) -> str:
    """Points of a run left out under ``x=tag:NAME`` because NAME's value does not go up there."""
    return (
        f"{count} point(s) of run {run!r} left out: {x_tag!r} is not finite there or does not "
        "increase strictly (x must increase within a run)"
    )


def api_spelling(name: str) -> str:
    """How the notes name an option for the Python API (and HTTP): by its keyword. ``list``, where the
    groups can be seen, is the result's ``attrs["groups"]`` (also the JSON export's ``meta.groups``).
    Each adapter passes its own spelling to :meth:`Result.notes`: the command line's flags, the tab's."""
    return 'attrs["groups"]' if name == "list" else name


def one_run_groups(groups: dict[str, list[str]]) -> str | None:
    """The note for a grouping that leaves every group with one run (nothing to reduce across runs,
    no band), with the fix; ``None`` when some group has several runs (or there is only one run)."""
    if len(groups) < 2 or any(len(runs) != 1 for runs in groups.values()):
        return None
    group_by = ref("group_by")
    return (
        f"every group has one run ({len(groups)} runs, {len(groups)} groups): nothing is reduced across "
        f"runs and there is no band; see the groups ({ref('list')}) and group the runs with {group_by}, "
        f"e.g. {group_by}=parent or {group_by}=regex:PATTERN"
    )


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
    x_dropped: dict[str, int] = dataclasses.field(default_factory=dict)  # run -> points without a valid x
    most_runs: int = 0  # the most finite values at one point, before min_runs drops any point


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
    x_missing: list[str] = dataclasses.field(default_factory=list)  # runs left out: no tag NAME of x=tag:NAME
    source_notes: list[str] = dataclasses.field(default_factory=list)  # what the reading could not do

    @property
    def x(self) -> str:
        """The x axis, which is also the name of the x column: ``step``, ``relative``, ``wall`` or
        ``tag:NAME``."""
        return self.query.x

    @functools.cached_property
    def frame(self) -> pd.DataFrame:
        """``tag, group, <x>, [wall_time], n, <statistics>, center, band_lo, band_hi``, one row per
        point of each curve; built when first asked for (a chart reads :attr:`curves` directly). The
        x column is named as the x axis (:attr:`x`)."""
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

    def notes(self, tag: str | None = None, spell: Callable[[str], str] = api_spelling) -> list[str]:
        """Plain-language notes: what was left out and why (only the notes of ``tag`` if given). Options
        are named as ``spell`` names them (the API's keywords unless an adapter says otherwise)."""
        notes = list(self.source_notes)
        if not self.matched_runs:  # (a filter that matches none of the runs there are is an error)
            notes.append("no run with scalar data in the logs")
        elif not self.tags:
            notes.append(f"no scalar tag matches tags={self.query.tags!r}")
        one_run = one_run_groups(self.groups)
        if one_run:
            notes.append(one_run)
        notes += self._too_few_runs(tag)
        for run, reason in self.skipped.items():
            notes.append(f"run {run!r}: event data skipped: {reason}")
        for run, reason in sorted(self.unplaced.items()):
            option = f"x={self.query.x}" if run in self.x_missing else f"group_by={self.query.group_by}"
            notes.append(f"run {run!r} left out: {reason} ({option})")
        for b in self.blocks:
            if tag is not None and b.tag != tag:
                continue
            for run, count in sorted(b.nonfinite.items()):
                if count:
                    notes.append(f"{b.tag}: {count} NaN/inf value(s) of run {run!r} left out")
            for run, count in sorted(b.x_dropped.items()):
                notes.append(f"{b.tag}: {x_dropped_note(self.query.x_tag, run, count)}")
            if b.downsampled:
                notes.append(f"{b.tag}: {len(b.downsampled)} run(s) {DOWNSAMPLED}; {FULL_RESOLUTION}")
        return [spelled(note, spell) for note in notes]

    def empty_reason(self, spell: Callable[[str], str] = api_spelling) -> str:
        """Why the table has no row, in one line: the cause, not merely the first note."""
        if self.blocks and not any(b.most_runs for b in self.blocks):
            values = sum(count for b in self.blocks for count in b.nonfinite.values())
            return f"every value of the selected series is NaN or inf ({values:,} left out)"
        too_few = self._too_few_runs(None)
        if too_few and not any(len(c["n"]) for c in self.curves):
            return spelled(too_few[0], spell)
        notes = self.notes(spell=spell)
        return notes[0] if notes else "no point is left"

    def _too_few_runs(self, tag: str | None) -> list[str]:
        """Notes for the curves ``min_runs`` leaves without any point (of ``tag``, or of every tag):
        one note when it leaves none at all, saying how many runs the groups have."""
        m = self.query.min_runs
        if m == 1:
            return []
        blocks = [b for b in self.blocks if tag is None or b.tag == tag]
        gone = [b for b in blocks if 0 < b.most_runs < m]
        if not gone:
            return []
        option = f"{ref('min_runs')}={m}"
        if len(gone) == len(blocks):
            sizes = sorted({len(self.groups.get(b.group, b.runs)) for b in gone})
            runs = "runs" if sizes[-1] > 1 else "run"
            if len({b.group for b in gone}) == 1:
                have = f"the group has {sizes[0]} {runs}"
            elif len(sizes) == 1:
                have = f"the groups have {sizes[0]} {runs} each"
            else:
                have = f"the groups have {sizes[0]} to {sizes[-1]} runs"
            most = max(b.most_runs for b in gone)
            if most < sizes[-1]:
                have += f", at most {most} at one point"
            fix = f"set {ref('min_runs')} to {most} or less"
            return [f"every point has fewer than {m} runs ({option}): {have}; {fix}"]
        return [
            f"{b.tag}: group {b.group!r} left out: every point has fewer than {m} runs ({option}); "
            f"at most {b.most_runs} at one point"
            for b in gone
        ]


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


def group_notes(block: Block, members: list[str], min_runs: int = 1, x: str = "step") -> list[str]:
    """Plain-language notes for one group's curve: alignment used and what was left out."""
    if x != "step":
        notes = [f"interpolated onto an evenly spaced grid of {x}, each run only inside its own range"]
    elif block.alignment == "exact":
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
    if x.startswith(X_TAG_PREFIX):
        for run, count in sorted(block.x_dropped.items()):
            notes.append(x_dropped_note(x[len(X_TAG_PREFIX) :], run, count))
    if min_runs > 1:
        notes.append(f"points backed by fewer than {min_runs} runs are left out (min_runs)")
    if block.downsampled:
        notes.append(f"{len(block.downsampled)} run(s) {DOWNSAMPLED}")
    return notes
