"""Query -> Result: select, group, resolve repeats, smooth, align and reduce, for every tag and group.

The engine reads through a :class:`read.source.Source` it is given and imports nothing of TensorBoard.
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..query import Query, SelectionError, spelled
from ..series import Series
from . import align as align_mod
from . import blocks, grouping, stats
from . import result as result_mod
from .result import Block, Result, UnknownTagError, api_spelling, one_run_groups

if TYPE_CHECKING:
    from ..read.source import Source

# Tags reduced at once, each on a thread of its own.
REDUCE_THREADS = 2


def describe(query: Query, source: Source, spell: Callable[[str], str] = api_spelling) -> dict:
    """Runs, their group, tags and hparams under ``query``, without reading any series; ``notes`` name
    options as ``spell`` names them (see :meth:`Result.notes`)."""
    listing = source.list_scalars()
    runs = query.select_runs(sorted(listing))
    hparams = source.hparams()
    x_tag = query.x_tag
    x_missing = [r for r in runs if x_tag is not None and x_tag not in listing[r]]
    groups, unplaced = grouping.group_runs([r for r in runs if r not in x_missing], query.group_by, hparams)
    unplaced.update({r: result_mod.no_x_tag(x_tag) for r in x_missing})
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
        "notes": [spelled(n, spell) for n in source.notes + [one_run_groups(_members(groups))] if n],
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
        SelectionError: the logs have runs (tags) but ``runs`` (``tags``, ``group_by``) selects none
            of them; the message lists what there is.
        OptionError: ``dup_steps`` needs repeated steps that the source's reader dropped.
    """
    query.check_repeats_kept(source.repeats_needs)
    listing = source.list_scalars()
    runs = query.select_runs(sorted(listing))
    matched_runs = len(runs)
    if listing and not runs:
        raise SelectionError(
            "runs",
            f"{query.runs!r} matches no run; the runs are {grouping.some(sorted(listing))}",
        )
    all_tags = {t for r in runs for t in listing[r]}
    if tag is not None:
        if tag not in all_tags:
            raise UnknownTagError(f"tag {tag!r} is in none of the selected runs")
        tags = [tag]
    else:
        tags = query.select_tags(sorted(all_tags))
        if all_tags and not tags:
            raise SelectionError(
                "tags",
                f"{query.tags!r} matches no scalar tag of the selected runs; their tags are "
                + grouping.some(sorted(all_tags)),
            )
    # Only runs with a selected tag take part (a run of other tags is not "left out").
    runs = [r for r in runs if any(t in listing[r] for t in tags)]
    x_tag = query.x_tag
    x_missing = [r for r in runs if x_tag is not None and x_tag not in listing[r]]
    runs = [r for r in runs if r not in x_missing]
    hparams = source.hparams() if query.group_by.startswith("hparam:") else {}
    placed, unplaced = grouping.group_runs(runs, query.group_by, hparams)
    unplaced.update({r: result_mod.no_x_tag(x_tag) for r in x_missing})
    if runs and not placed:
        raise SelectionError("group_by", grouping.nothing_placed(runs, query.group_by, hparams))
    members = _members(placed)
    # The x of every run, read once with the listing of the series it goes with (x=tag:NAME).
    xdata = source.read({r: [x_tag] for r in placed}, listing) if x_tag is not None else {}
    partial = drawn_only and query.smoothing != 0.0
    names = stats.needed_for(() if partial else query.reductions, query.center, query.band)
    reduced_blocks: list[tuple[Block, dict]] = []  # (block, its curve), in tag and group order

    def reduce_tag(t: str, data: dict) -> list[tuple[Block, dict]]:
        reduced = []
        for group, group_runs in members.items():
            block, piece = _reduce_block(
                query, source, t, group, group_runs, data, xdata, listing, names, keep_runs
            )
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
    return Result(
        query,
        pieces,
        names,
        blocks,
        members,
        unplaced,
        tags,
        matched_runs,
        skipped,
        partial,
        x_missing=x_missing,
        source_notes=list(source.notes),
    )


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
    xs: list[np.ndarray] | None = None  # each run's x (x=tag:NAME), to align again after smoothing
    x_dropped: dict[str, int] = dataclasses.field(default_factory=dict)  # run -> points without a valid x

    @property
    def nbytes(self) -> int:
        own = sum(s.step.nbytes + s.wall.nbytes + s.value.nbytes for s in self.resolved or ())
        own += sum(x.nbytes for x in self.xs or ())
        return own + self.aligned.values.nbytes + self.aligned.grid.nbytes


def _reduce_block(query, source, tag, group, group_runs, data, xdata, listing, names, keep_runs):
    x_tag = query.x_tag
    used = [r for r in group_runs if (r, tag) in data and len(data[(r, tag)])]
    if x_tag is not None:
        used = [r for r in used if (r, x_tag) in xdata and len(xdata[(r, x_tag)])]
    if not used:
        return None, None
    # Each stage depends only on these series (named by their listing) and the options it uses, so a
    # second request that changes another option reuses it: band and center reuse even the reductions
    # when they were computed (every statistic of the unsmoothed curves; see run's drawn_only).
    series_ids = tuple((r, listing[r][tag], listing[r][x_tag] if x_tag is not None else None) for r in used)
    ident = (tag, series_ids, query.dup_steps, query.align, query.x)
    # The bootstrap's numbers depend on its center, resamples and seed too; the others do not.
    boot = (query.center, query.boot_reps, query.seed) if any(n.startswith("boot") for n in names) else ()
    smoothed: list[np.ndarray] = []
    in_blocks = _in_blocks(query, tag, used, data, bool(boot) or keep_runs)
    if in_blocks is not None:
        key = ("reduced in blocks", *ident, tuple(names))
        prep, reduced, finals = source.memo.get_or_make(
            key, lambda: _reduce_in_blocks(query, source, used, in_blocks, names), _nbytes
        )
    else:
        prep = source.memo.get_or_make(
            ("prepared", *ident), lambda: _prepare(query, source, tag, used, data, xdata), _nbytes
        )
        if not prep.used:  # no run has a point with a valid x
            return None, None
        # The smoothed curves themselves are not kept: a new array of every point for each weight (a
        # slider asks for many), quick to make again, and memory that stays taken makes every later
        # request touch fresh pages, which is slow. Their reductions and the runs' final values are small.

        def smooth_and_reduce():
            values, finals = _smooth(prep, query)
            smoothed.append(values)
            return stats.reduce(
                values, names, center=query.center, boot_reps=query.boot_reps, seed=query.seed
            ), finals

        key = ("reduced", *ident, query.smoothing, tuple(names), *boot)
        reduced, finals = source.memo.get_or_make(key, smooth_and_reduce, _nbytes)
    grid = prep.aligned.grid
    lo, hi = stats.band_bounds(reduced, query.center, query.band)
    piece = {query.x: grid, **reduced, "center": reduced[query.center], "band_lo": lo, "band_hi": hi}
    if query.x == "step":
        piece["step"] = grid.astype(np.int64)
        piece["wall_time"] = prep.wall_time
    keep = reduced["n"] >= query.min_runs
    piece = {k: v[keep] for k, v in piece.items()}  # copies: the memoised arrays stay as they are
    if query.x_is_grid:
        # On an evenly spaced grid, points left out (no run has a value there, or fewer than
        # min_runs) are a gap the chart must not bridge: "gap" marks each point that follows one.
        at = np.flatnonzero(keep)
        piece["gap"] = np.concatenate(([False], np.diff(at) > 1)) if len(at) else np.zeros(0, bool)
    piece["tag"], piece["group"] = tag, group
    kept = None
    if keep_runs:
        values = smoothed[0] if smoothed else _smooth(prep, query)[0]
        kept = align_mod.Aligned(grid, values, prep.aligned.walls, prep.aligned.method)
    method = prep.aligned.method
    most = int(reduced["n"].max()) if len(reduced["n"]) else 0
    block = Block(
        tag,
        group,
        list(prep.used),
        method,
        dict(prep.nonfinite),
        dict(finals),
        list(prep.downsampled),
        kept,
        x_dropped=dict(prep.x_dropped),
        most_runs=most,
    )
    return block, piece


def _in_blocks(query, tag, used, data, whole: bool) -> list[Series] | None:
    """The group's series when they are reduced a block of steps at a time (see :mod:`.blocks`): many
    points on shared steps, unsmoothed, on the step axis, and no statistic or output that needs the
    whole matrix (``whole``: the bootstrap, the runs kept for the caller); else ``None``."""
    if whole or query.x != "step" or query.smoothing != 0.0:
        return None
    raws = [data[(r, tag)] for r in used]
    if not blocks.is_large(raws) or align_mod.shared_steps(raws) is None:
        return None
    return raws


def _reduce_in_blocks(query, source, used, raws, names) -> tuple[_Prepared, dict, dict[str, float]]:
    """What ``_prepare`` and the reduction give for runs on shared steps, a block of steps at a time:
    the prepared part holds the grid and no matrix (it is never smoothed, see ``_in_blocks``)."""
    done = blocks.reduce_shared(raws, names, center=query.center)
    grid = raws[0].step.astype(np.float64)
    empty = np.empty((0, 0))
    aligned = align_mod.Aligned(grid, empty, empty, align_mod.stacked_method(query.align))
    downsampled = [r for r, raw in zip(used, raws) if source.is_downsampled(raw)]
    prep = _Prepared(used, dict(zip(used, done.nonfinite)), downsampled, None, aligned, done.wall_time)
    return prep, done.reduced, dict(zip(used, done.finals))


def _prepare(query, source, tag, used, data, xdata) -> _Prepared:
    if query.x_tag is not None:
        return _prepare_on_tag(query, source, tag, used, data, xdata)
    raws = [data[(r, tag)] for r in used]
    downsampled = [r for r, raw in zip(used, raws) if source.is_downsampled(raw)]
    stacked = align_mod.stack_shared(raws, query.align) if query.x == "step" else None
    if stacked is not None:  # one grid for all: the rows are the runs
        nonfinite = dict(zip(used, np.isnan(stacked.values).sum(axis=1).tolist()))
        wall_time = stats.nanmedian(stacked.walls, overwrite=True)  # the walls are not kept
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
    wall_time = stats.nanmedian(aligned.walls, overwrite=True) if query.x == "step" else None
    # Every run on the whole grid (the union of steps is as long as each run): the runs share their
    # steps, each row is its run, and smoothing the rows is smoothing the runs.
    shared = query.x == "step" and all(len(s.step) == len(aligned.grid) for s in resolved)
    aligned = align_mod.Aligned(aligned.grid, aligned.values, np.empty((0, 0)), aligned.method)
    return _Prepared(used, nonfinite, downsampled, None if shared else resolved, aligned, wall_time)


def _prepare_on_tag(query, source, tag, used, data, xdata) -> _Prepared:
    """x=tag:NAME: each run's points at the steps where it logged both tags, x from NAME (finite and
    strictly increasing, see ``align.pair_with_x``), interpolated onto an evenly spaced grid of x."""
    x_tag = query.x_tag
    kept, resolved, xs, nonfinite, downsampled, dropped = [], [], [], {}, [], {}
    for r in used:
        raw = data[(r, tag)]
        series = align_mod.resolve_repeats(raw, query.dup_steps)
        paired = align_mod.pair_with_x(series, align_mod.resolve_repeats(xdata[(r, x_tag)], query.dup_steps))
        if paired.dropped:
            dropped[r] = paired.dropped
        if not len(paired.series):
            continue
        kept.append(r)
        resolved.append(paired.series)
        xs.append(paired.x)
        nonfinite[r] = int(len(paired.series) - np.count_nonzero(np.isfinite(paired.series.value)))
        if source.is_downsampled(raw) or source.is_downsampled(xdata[(r, x_tag)]):
            downsampled.append(r)
    if not kept:
        empty = align_mod.Aligned(np.empty(0), np.empty((0, 0)), np.empty((0, 0)), "interpolate")
        return _Prepared([], {}, [], [], empty, None, [], dropped)
    aligned = align_mod.align(resolved, query.align, query.x, xs=xs)
    aligned = align_mod.Aligned(aligned.grid, aligned.values, np.empty((0, 0)), aligned.method)
    return _Prepared(kept, nonfinite, downsampled, resolved, aligned, None, xs, dropped)


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
        values = align_mod.align(runs, query.align, query.x, xs=prep.xs).values
    finals = {}
    for r, s in zip(prep.used, runs):
        finite = s.value[np.isfinite(s.value)]
        finals[r] = float(finite[-1]) if len(finite) else float("nan")
    return values, finals


def _last_finite(values: np.ndarray, runs: list[str]) -> dict[str, float]:
    return dict(zip(runs, stats.last_finite(values).tolist()))


def _nbytes(value) -> int:
    """Size of a memoised result: a _Prepared, a (reductions, finals) pair, or a (_Prepared,
    reductions, finals) triple of a reduction in blocks."""
    if isinstance(value, _Prepared):
        return value.nbytes
    if len(value) == 3:  # reduced in blocks: (prepared, reductions, finals)
        prep, reduced, finals = value
        return prep.nbytes + prep.wall_time.nbytes + _nbytes((reduced, finals))
    reduced, finals = value
    return sum(v.nbytes for v in reduced.values()) + 64 * len(finals)


def warm_up(query: Query) -> None:
    """Import the parts of scipy that ``query`` will need (smoothing, t quantiles): a one-shot command
    does it while TensorBoard's data server loads, where it costs no time."""
    if query.smoothing:
        stats.warm_up()
    if query.band == "ci95" or any(name.startswith("ci95") for name in query.reductions):
        import scipy.special  # noqa: F401
