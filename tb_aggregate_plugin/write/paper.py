"""A result or a comparison as the tables of a paper: GitHub Markdown or booktabs LaTeX text.

The tables themselves are :mod:`.table_markup`'s; this module says which tables a result or a
comparison becomes and what their captions say, once for the command line, the API and the tab.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import table_markup

if TYPE_CHECKING:
    import pandas as pd

    from ..compute.comparison import Comparison
    from ..compute.result import Result

FORMATS = ("md", "tex")


def comparison_text(found: Comparison, fmt: str) -> str:
    """Both tables of a comparison: the groups (the best bold; with a baseline, a dagger where the
    Holm-adjusted p against it is below 0.05), then the pairs. The caption (tag, score, which way is
    better, runs per group, the tests) heads the Markdown and captions the LaTeX pairs table."""
    _check(fmt)
    baseline = found.query.baseline or None
    common = {
        "lower_is_better": found.lower_is_better,
        "score": f"{found.score_words} of each run",
        "tag": found.tag,
    }
    # Daggers need one group every pair shares: the baseline (every pair has none).
    groups = {**common, "baseline": baseline, "pairs": found.pairs if baseline else None}
    pairs = {**common, "test": "Welch’s t-test (two-sided)"}
    caption = found.caption()
    if fmt == "md":
        return (
            f"{table_markup.markdown_escape(caption)}\n\n"
            + table_markup.to_markdown(found.groups, "groups", **groups)
            + "\n"
            + table_markup.to_markdown(found.pairs, "pairs", **pairs)
        )
    label = f"tab:{found.tag}"
    return (
        table_markup.to_latex(
            found.groups, "groups", caption=f"{found.tag}: groups", label=f"{label}-groups", **groups
        )
        + "\n"
        + table_markup.to_latex(found.pairs, "pairs", caption=caption, label=f"{label}-pairs", **pairs)
    )


def summary_text(result: Result, fmt: str, table: pd.DataFrame | None = None) -> str:
    """Per tag and group, the final and best point of the line with the band's edges (``table``: the
    summary when the caller already has it)."""
    from ..compute.compare import is_lower_better
    from ..compute.summary import summary
    from ..query import LABELS

    _check(fmt)
    table = summary(result) if table is None else table
    options = {
        "lower_is_better": is_lower_better,
        "center": result.query.center,
        "band": LABELS["band"][result.query.band],
        "x": result.x,
    }
    if fmt == "md":
        return table_markup.to_markdown(table, "summary", **options)
    return table_markup.to_latex(table, "summary", caption="Final and best values per group", **options)


def _check(fmt: str) -> None:
    if fmt not in FORMATS:
        raise ValueError(f"unknown table format {fmt!r}: one of {', '.join(FORMATS)}")
