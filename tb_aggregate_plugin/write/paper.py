"""A result or a comparison as the tables of a paper: GitHub Markdown or booktabs LaTeX text.

The tables themselves are :mod:`.table_markup`'s; this module says which tables a result or a
comparison becomes and what their captions say, once for the command line, the API and the tab.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import table_markup

if TYPE_CHECKING:
    from ..compute.comparison import Comparison
    from ..compute.result import Result

FORMATS = ("md", "tex")


def _render(fmt: str, tables: list[tuple[object, str, dict]], caption: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown table format {fmt!r}: one of {', '.join(FORMATS)}")
    texts = []
    for df, kind, options in tables:
        if fmt == "md":
            texts.append(table_markup.to_markdown(df, kind, **options))
        else:
            texts.append(table_markup.to_latex(df, kind, caption=caption, **options))
    return "\n".join(texts)


def comparison_text(found: Comparison, fmt: str) -> str:
    """The groups table (best group bold; with a baseline, a dagger where Holm p < 0.05 against it) and
    the pairs table of a comparison, each followed (Markdown) or captioned (LaTeX) by what they are."""
    common = {
        "lower_is_better": found.lower_is_better,
        "tag": found.tag,
        "score": f"each run's {found.score_words} ({found.direction})",
    }
    # Daggers mark groups against the baseline: with every pair compared there is none to mark against.
    baseline = {"pairs": found.pairs, "baseline": found.query.baseline} if found.query.baseline else {}
    tables = [(found.groups, "groups", {**common, **baseline}), (found.pairs, "pairs", common)]
    return _render(fmt, tables, f"{found.tag}: groups compared")


def summary_text(result: Result, fmt: str) -> str:
    """Per tag and group, the final and best point of the line with the band's edges."""
    from ..compute.compare import is_lower_better
    from ..compute.summary import summary
    from ..query import LABELS

    options = {
        "lower_is_better": is_lower_better,
        "center": result.query.center,
        "band": LABELS["band"][result.query.band],
        "x": result.x,
    }
    return _render(fmt, [(summary(result), "summary", options)], "Final and best values per group")
