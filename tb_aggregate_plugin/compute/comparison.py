"""Groups compared on one tag: each run's score, the tables of groups and pairs, and their sentences.

The statistics are :mod:`.compare`'s; this module takes the runs' curves from the engine (smoothed
as drawn, on their group's grid) and says the results in words, once for the tab, the CLI and the API.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np

from ..query import OptionError, Query
from . import compare as stats_compare
from .engine import run
from .result import Result, UnknownTagError

if TYPE_CHECKING:
    import pandas as pd

    from ..read.source import Source

# How each test is named next to its numbers.
TEST = (
    "Welch's t-test (two-sided) on the runs' scores, p adjusted by Holm over the pairs; Mann-Whitney; "
    "P(A>B) with a percentile-bootstrap CI; runs per group for 80% power at alpha 0.05"
)
ALONG_TEST = "Welch's t-test at every x, p adjusted by Benjamini-Hochberg across the x values (q = 0.05)"
SCORE_WORDS = {
    "final": "final value",
    "best": "best value",
    "tail": "mean of the last 10% of points",
    "auc": "mean over the run",
}


@dataclasses.dataclass
class Comparison:
    """The groups of one tag compared by their runs' scores."""

    query: Query
    tag: str
    lower_is_better: bool
    scores: dict[str, dict[str, float]]  # group -> run -> score
    groups: pd.DataFrame  # compare.GROUP_COLUMNS
    pairs: pd.DataFrame  # compare.PAIR_COLUMNS
    notes: list[str]

    @property
    def score_words(self) -> str:
        return SCORE_WORDS[self.query.score]

    @property
    def direction(self) -> str:
        return "lower is better" if self.lower_is_better else "higher is better"

    def caption(self) -> str:
        """One line saying what the numbers are: tag, score, direction, runs per group, test."""
        runs = ", ".join(f"{g} {int(n)}" for g, n in zip(self.groups["group"], self.groups["runs"]))
        return (
            f"{self.tag}, score: {SCORE_WORDS[self.query.score]} of each run ({self.direction}); "
            f"runs per group: {runs}; {TEST}"
        )

    def sentences(self) -> list[str]:
        """Per pair in plain words, the better group first when the difference is significant (Holm
        p < 0.05), e.g. ``lr=0.1 > lr=0.01 on val/acc (final): +0.082 [0.051, 0.113], p=0.0004 Holm,
        P(A>B)=0.96``: A minus B with Welch's 95% CI, the Holm-adjusted p, and P(A > B)."""
        out = []
        for row in self.pairs.itertuples(index=False):
            where = f"on {self.tag} ({self.query.score})"
            if not math.isfinite(row.p):
                out.append(f"{row.a} vs {row.b} {where}: no test (a group has fewer than 2 runs)")
                continue
            a, b, diff, lo, hi = row.a, row.b, row.diff, row.diff_lo, row.diff_hi
            improve = row.p_improve
            significant = row.p_holm < 0.05
            if significant and (diff > 0) == self.lower_is_better:  # B is the better one: say it first
                a, b, diff, lo, hi, improve = b, a, -diff, -hi, -lo, 1.0 - improve
            numbers = f"{diff:+.3g} [{lo:.3g}, {hi:.3g}], p{_p(row.p_holm)} Holm, P(A>B)={improve:.2f}"
            if significant:
                out.append(f"{a} > {b} {where}: {numbers}")
            else:
                out.append(f"{a} vs {b} {where}: {numbers}, no significant difference")
        return out

    def table(self) -> pd.DataFrame:
        """The pairs; ``attrs`` hold the groups table, the scores, the direction, caption and notes."""
        table = self.pairs.copy()
        table.attrs = {
            "tag": self.tag,
            "score": self.query.score,
            "direction": self.direction,
            "baseline": self.query.baseline or None,
            "groups": self.groups,
            "scores": self.scores,
            "caption": self.caption(),
            "sentences": self.sentences(),
            "notes": list(self.notes),
        }
        return table


def _p(p: float) -> str:
    """``=0.0013`` or ``<0.0001``: two significant digits, no false precision below that."""
    return "<0.0001" if p < 1e-4 else f"={p:.2g}"


def compare(query: Query, source: Source, tag: str) -> Comparison:
    """Score each run of each group on ``tag`` (``query.score``) and test the groups against each other
    (every pair, or each against ``query.baseline``).

    Raises:
        UnknownTagError: no selected run has ``tag``.
        OptionError: ``query.baseline`` is not a group with data for ``tag``.
    """
    result = run(query, source, tag=tag, keep_runs=True, drawn_only=True)
    lower = stats_compare.is_lower_better(tag)
    scores: dict[str, dict[str, float]] = {}
    for block in result.blocks:
        grid, values = block.aligned.grid, block.aligned.values
        scores[block.group] = {
            run_name: stats_compare.score_run(grid, values[i], query.score, lower)
            for i, run_name in enumerate(block.runs)
        }
    if query.baseline and query.baseline not in scores:
        raise OptionError(
            "baseline",
            f"{query.baseline!r} is not a group with data for {tag!r}; groups: {', '.join(scores)}",
        )
    arrays = {group: np.array(list(runs.values()), dtype=np.float64) for group, runs in scores.items()}
    groups = stats_compare.group_table(arrays, reps=query.boot_reps, seed=query.seed)
    pairs = stats_compare.pair_table(
        arrays, baseline=query.baseline or None, reps=query.boot_reps, seed=query.seed
    )
    notes = list(dict.fromkeys(result.notes(tag) + groups.attrs["notes"] + pairs.attrs["notes"]))
    return Comparison(query, tag, lower, scores, groups, pairs, notes)


def along(result: Result, tag: str, group_a: str, group_b: str) -> dict:
    """Where the curves of two groups differ along x: Welch's test at every x both groups cover,
    adjusted across those x values (Benjamini-Hochberg); ``ranges`` are ``[x_start, x_end]`` pairs.
    ``result`` holds ``tag`` computed with ``keep_runs=True`` (the chart's own, reused).

    Raises:
        UnknownTagError: either group has no data for ``tag``.
    """
    blocks = {b.group: b for b in result.blocks if b.tag == tag}
    for group in (group_a, group_b):
        if group not in blocks:
            raise UnknownTagError(f"group {group!r} has no data for tag {tag!r}")
    a, b = blocks[group_a].aligned, blocks[group_b].aligned
    if len(a.grid) == len(b.grid) and np.array_equal(a.grid, b.grid):
        grid, va, vb = a.grid, a.values, b.values
    else:  # each run interpolated onto the union of both grids, only inside its own range
        grid = np.union1d(a.grid, b.grid)
        va, vb = _onto(grid, a.grid, a.values), _onto(grid, b.grid, b.values)
    found = stats_compare.along_curve(va, vb, q=0.05)
    return {
        "a": group_a,
        "b": group_b,
        "test": ALONG_TEST,
        "ranges": [[float(grid[s]), float(grid[e])] for s, e in found["ranges"]],
        "tested": int(np.isfinite(found["p"]).sum()),
        "differ": int(np.count_nonzero(found["differ"])),
    }


def _onto(grid: np.ndarray, xs: np.ndarray, values: np.ndarray) -> np.ndarray:
    out = np.full((len(values), len(grid)), np.nan)
    for i, row in enumerate(values):
        finite = np.isfinite(row)
        if finite.sum() < 1:
            continue
        x, y = xs[finite], row[finite]
        inside = (grid >= x[0]) & (grid <= x[-1])
        out[i, inside] = np.interp(grid[inside], x, y)
    return out
