"""Query -> Result: select, group, resolve repeats, smooth, align and reduce, for every tag and group."""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import functools
import re
from typing import TYPE_CHECKING

import numpy as np

from . import align as align_mod
from . import grouping, stats
from .query import Query
from .source import Series, Source

if TYPE_CHECKING:
    import pandas as pd

# Tags reduced at once, each on a thread of its own.
REDUCE_THREADS = 2
# Tags whose best value is the lowest; any other tag's best is its highest.
_LOWER_IS_BETTER = re.compile(r"loss|err|perplexity|ppl|mse|mae|nll|cost|regret|wer|cer|distance", re.I)


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
        """The tidy table: ``tag, group, <x>, [wall_time], n, <reductions>``; ``attrs`` say the rest."""
        table = self.frame[self._table_names()].reset_index(drop=True)
        table.attrs = self.attrs()
        return table

    def table_columns(self) -> dict[str, np.ndarray]:
        """:meth:`table`'s columns as numpy arrays (names as object arrays), without pandas: what the
        command line writes to CSV, which then never imports pandas."""
        return _columns(self.curves, self._table_names())

    def _table_names(self) -> list[str]:
        if self.partial:
            raise ValueError("only the center and band were computed (drawn_only): no table")
        columns = ["tag", "group", self.x] + (["wall_time"] if self.x == "step" else []) + ["n"]
        return columns + [r for r in self.query.reductions if r not in columns]

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
                notes.append(
                    f"{b.tag}: {len(b.downsampled)} run(s) came back at the loader's sample limit and "
                    "may be downsampled; start TensorBoard with --samples_per_plugin scalars=1000000"
                )
        return notes


def describe(query: Query, source: Source) -> dict:
    """Runs, their group, tags and hparams under ``query``, without reading any series."""
    listing = source.list_scalars()
    runs = query.select_runs(sorted(listing))
    hparams = source.hparams()
    groups, unplaced = grouping.group_runs(runs, query.group_by, hparams)
    selected_tags = set(query.select_tags(sorted({t for r in runs for t in listing[r]})))
    run_tags = {r: sorted(t for t in listing[r] if t in selected_tags) for r in runs}
    return {
        "runs": [
            {
                "run": r,
                "group": groups.get(r),
                "excluded": unplaced.get(r),
                "tags": run_tags[r],
                "hparams": hparams.get(r, {}),
            }
            for r in runs
        ],
        "tags": sorted({t for tags in run_tags.values() for t in tags}),
        "groups": _members(groups),
        "unplaced": unplaced,
        "hparams": sorted({name for r in runs for name in hparams.get(r, {})}),
        "total_runs": len(listing),
        "skipped": source.problems(),
    }


def run(
    query: Query,
    source: Source,
    *,
    tag: str | None = None,
    keep_runs: bool = False,
    drawn_only: bool = False,
) -> Result:
    """Compute the reduced curves for ``query`` (all matching tags, or exactly ``tag``).

    ``drawn_only``: the caller shows only ``n``, the center and the band (a chart, the summary). For
    smoothed curves only those are computed: each new weight computes its own, and is asked for while
    a slider moves. Unsmoothed curves get the table's ``query.reductions`` as well: computed once per
    version of the data and shared with every route, they make a switch of center or band free.
    A result without the table's reductions has no :meth:`Result.table`.

    Raises:
        UnknownTagError: ``tag`` is given but no selected run has it.
    """
    listing = source.list_scalars()
    runs = query.select_runs(sorted(listing))
    matched_runs = len(runs)
    all_tags = {t for r in runs for t in listing[r]}
    if tag is not None:
        if tag not in all_tags:
            raise UnknownTagError(f"tag {tag!r} is in none of the selected runs")
        tags = [tag]
    else:
        tags = query.select_tags(sorted(all_tags))
    # Only runs with a selected tag take part (a run of other tags is not "left out").
    runs = [r for r in runs if any(t in listing[r] for t in tags)]
    hparams = source.hparams() if query.group_by.startswith("hparam:") else {}
    placed, unplaced = grouping.group_runs(runs, query.group_by, hparams)
    members = _members(placed)
    partial = drawn_only and query.smoothing != 0.0
    names = stats.needed_for(() if partial else query.reductions, query.center, query.band)
    reduced_blocks: list[tuple[Block, dict]] = []  # (block, its curve), in tag and group order

    def reduce_tag(t: str, data: dict) -> list[tuple[Block, dict]]:
        reduced = []
        for group, group_runs in members.items():
            block, piece = _reduce_block(query, source, t, group, group_runs, data, listing, names, keep_runs)
            if block is not None:
                reduced.append((block, piece))
        return reduced

    # REDUCE_THREADS tags at a time, in order (numpy's sorts and copies leave Python's lock: two tags
    # use two cores), the next ones read meanwhile: memory holds a few tags' points, not all.
    wanted = {t: [r for r in placed if t in listing[r]] for t in tags}
    if len(tags) <= 1:  # a chart's request: no thread to start and hand over to
        for t, data in source.read_by_tag(wanted, listing):
            reduced_blocks += reduce_tag(t, data)
    else:
        with concurrent.futures.ThreadPoolExecutor(REDUCE_THREADS) as pool:
            running: collections.deque[concurrent.futures.Future] = collections.deque()
            for t, data in source.read_by_tag(wanted, listing):
                running.append(pool.submit(reduce_tag, t, data))
                del data
                while len(running) >= REDUCE_THREADS or (running and running[0].done()):
                    reduced_blocks += running.popleft().result()
            for future in running:
                reduced_blocks += future.result()
    blocks = [block for block, _ in reduced_blocks]
    pieces = [piece for _, piece in reduced_blocks]
    problems = source.problems()
    skipped = {r: problems[r] for r in query.select_runs(sorted(problems))}
    return Result(query, pieces, names, blocks, members, unplaced, tags, matched_runs, skipped, partial)


def _members(placed: dict[str, str]) -> dict[str, list[str]]:
    members: dict[str, list[str]] = {}
    for run_name in sorted(placed):
        members.setdefault(placed[run_name], []).append(run_name)
    return dict(sorted(members.items()))


@dataclasses.dataclass
class _Prepared:
    """A group's series of one tag, repeats resolved and aligned, before smoothing (memoised)."""

    used: list[str]
    nonfinite: dict[str, int]
    downsampled: list[str]
    resolved: list[Series] | None  # kept only when smoothing must go back to each run's own points
    aligned: align_mod.Aligned  # unsmoothed; walls dropped once their median is taken
    wall_time: np.ndarray | None  # median wall time of the runs at each grid step (step axis only)

    @property
    def nbytes(self) -> int:
        own = sum(s.step.nbytes + s.wall.nbytes + s.value.nbytes for s in self.resolved or ())
        return own + self.aligned.values.nbytes + self.aligned.grid.nbytes


def _reduce_block(query, source, tag, group, group_runs, data, listing, names, keep_runs):
    used = [r for r in group_runs if (r, tag) in data and len(data[(r, tag)])]
    if not used:
        return None, None
    # Each stage depends only on these series (named by their listing) and the options it uses, so a
    # second request that changes another option reuses it: band and center reuse even the reductions
    # when they were computed (every statistic of the unsmoothed curves; see run's drawn_only).
    ident = (tag, tuple((r, listing[r][tag]) for r in used), query.dup_steps, query.align, query.x)
    prep = source.memo(("prepared", *ident), lambda: _prepare(query, source, tag, used, data), _nbytes)
    # The smoothed curves themselves are not kept: a new array of every point for each weight (a
    # slider asks for many), quick to make again, and memory that stays taken makes every later
    # request touch fresh pages, which is slow. Their reductions and the runs' final values are small.
    smoothed: list[np.ndarray] = []

    def smooth_and_reduce():
        values, finals = _smooth(prep, query)
        smoothed.append(values)
        return stats.reduce(values, names), finals

    key = ("reduced", *ident, query.smoothing, tuple(names))
    reduced, finals = source.memo(key, smooth_and_reduce, _nbytes)
    grid = prep.aligned.grid
    lo, hi = stats.band_bounds(reduced, query.center, query.band)
    piece = {query.x: grid, **reduced, "center": reduced[query.center], "band_lo": lo, "band_hi": hi}
    if query.x == "step":
        piece["step"] = grid.astype(np.int64)
        piece["wall_time"] = prep.wall_time
    keep = reduced["n"] >= query.min_runs
    piece = {k: v[keep] for k, v in piece.items()}  # copies: the memoised arrays stay as they are
    piece["tag"], piece["group"] = tag, group
    kept = None
    if keep_runs:
        values = smoothed[0] if smoothed else _smooth(prep, query)[0]
        kept = align_mod.Aligned(grid, values, prep.aligned.walls, prep.aligned.method)
    method = prep.aligned.method
    block = Block(tag, group, used, method, dict(prep.nonfinite), dict(finals), list(prep.downsampled), kept)
    return block, piece


def _prepare(query, source, tag, used, data) -> _Prepared:
    raws = [data[(r, tag)] for r in used]
    downsampled = [r for r, raw in zip(used, raws) if source.is_downsampled(raw)]
    stacked = align_mod.stack_shared(raws, query.align) if query.x == "step" else None
    if stacked is not None:  # one grid for all: the rows are the runs
        nonfinite = dict(zip(used, np.isnan(stacked.values).sum(axis=1).tolist()))
        wall_time = _nanmedian_rows(stacked.walls)
        aligned = align_mod.Aligned(stacked.grid, stacked.values, np.empty((0, 0)), stacked.method)
        return _Prepared(used, nonfinite, downsampled, None, aligned, wall_time)
    resolved, nonfinite, downsampled = [], {}, []
    for r in used:
        raw = data[(r, tag)]
        series = align_mod.resolve_repeats(raw, query.dup_steps)
        nonfinite[r] = int(len(series.value) - np.count_nonzero(np.isfinite(series.value)))
        if source.is_downsampled(raw):
            downsampled.append(r)
        resolved.append(series)
    aligned = align_mod.align(resolved, query.align, query.x)
    wall_time = _nanmedian_rows(aligned.walls) if query.x == "step" else None
    # Every run on the whole grid (the union of steps is as long as each run): the runs share their
    # steps, each row is its run, and smoothing the rows is smoothing the runs.
    shared = query.x == "step" and all(len(s.step) == len(aligned.grid) for s in resolved)
    aligned = align_mod.Aligned(aligned.grid, aligned.values, np.empty((0, 0)), aligned.method)
    return _Prepared(used, nonfinite, downsampled, None if shared else resolved, aligned, wall_time)


def _smooth(prep: _Prepared, query) -> tuple[np.ndarray, dict[str, float]]:
    """The aligned values after smoothing each run, and each run's last finite smoothed value."""
    if prep.resolved is None:  # shared steps: the rows are the runs
        values = stats.smooth_rows(prep.aligned.values, query.smoothing)
        return values, _last_finite(values, prep.used)
    runs = prep.resolved
    if query.smoothing == 0.0:
        values = prep.aligned.values
    else:  # runs on different steps: smooth each on its own points, then align again
        runs = [Series(s.step, s.wall, stats.smooth(s.value, query.smoothing)) for s in runs]
        values = align_mod.align(runs, query.align, query.x).values
    finals = {}
    for r, s in zip(prep.used, runs):
        finite = s.value[np.isfinite(s.value)]
        finals[r] = float(finite[-1]) if len(finite) else float("nan")
    return values, finals


def _last_finite(values: np.ndarray, runs: list[str]) -> dict[str, float]:
    if values.shape[1] and np.isfinite(values[:, -1]).all():  # the usual case: one column to look at
        return dict(zip(runs, values[:, -1].tolist()))
    finite = np.isfinite(values)
    last = values.shape[1] - 1 - np.argmax(finite[:, ::-1], axis=1)
    picked = np.where(finite.any(axis=1), values[np.arange(len(values)), last], np.nan)
    return dict(zip(runs, picked.tolist()))


def _nbytes(value) -> int:
    """Size of a memoised result: a _Prepared, or a (reductions, finals) pair."""
    if isinstance(value, _Prepared):
        return value.nbytes
    reduced, finals = value
    return sum(v.nbytes for v in reduced.values()) + 64 * len(finals)


def _nanmedian_rows(walls: np.ndarray) -> np.ndarray:
    return stats.nanmedian(walls)


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


def is_lower_better(tag: str) -> bool:
    """Whether a tag's best value is its lowest (losses, errors) rather than its highest."""
    return bool(_LOWER_IS_BETTER.search(tag))


def summary(result: Result) -> pd.DataFrame:
    """Per tag and group: final and best center with band edges, step of the best, run count."""
    import pandas as pd

    rows = []
    x = result.x
    for (tag, group), block in result.frame.groupby(["tag", "group"], sort=True):
        if block.empty:
            continue
        final = block.iloc[-1]
        center = block["center"].to_numpy()
        finite = np.isfinite(center)
        if finite.any():
            pick = np.nanargmin if is_lower_better(tag) else np.nanargmax
            best = block.iloc[int(pick(np.where(finite, center, np.nan)))]
        else:
            best = final
        rows.append(
            {
                "tag": tag,
                "group": group,
                "runs": int(block["n"].max()),
                "final_x": final[x],
                "final": final["center"],
                "final_lo": final["band_lo"],
                "final_hi": final["band_hi"],
                "final_n": int(final["n"]),
                "best_x": best[x],
                "best": best["center"],
                "best_lo": best["band_lo"],
                "best_hi": best["band_hi"],
                "best_is": "min" if is_lower_better(tag) else "max",
            }
        )
    return pd.DataFrame(rows)


def compare_finals(result: Result, tag: str, group_a: str, group_b: str) -> dict:
    """Welch's t-test on the runs' final values of two groups for one tag."""
    blocks = {b.group: b for b in result.blocks if b.tag == tag}
    for g in (group_a, group_b):
        if g not in blocks:
            raise UnknownTagError(f"group {g!r} has no data for tag {tag!r}")
    a = np.array(list(blocks[group_a].finals.values()))
    b = np.array(list(blocks[group_b].finals.values()))
    return {
        "tag": tag,
        "a": group_a,
        "b": group_b,
        "n_a": int(np.isfinite(a).sum()),
        "n_b": int(np.isfinite(b).sum()),
        "mean_a": float(np.nanmean(a)) if np.isfinite(a).any() else float("nan"),
        "mean_b": float(np.nanmean(b)) if np.isfinite(b).any() else float("nan"),
        "p_value": stats.welch_p(a, b),
        "test": "Welch's t-test (two-sided) on each run's final value",
    }
