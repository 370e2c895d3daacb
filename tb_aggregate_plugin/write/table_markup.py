"""Result tables as text for a paper or a README: GitHub Markdown and booktabs LaTeX.

Three kinds of table, each a pandas DataFrame with these columns (extra columns are ignored; an
optional column that is missing is left out of the output):

``summary``  (``compute.summary.summary``)
    ``tag, group, runs, final, final_lo, final_hi, best, best_lo, best_hi``; optional ``final_n``
    (runs behind the final point: shown when fewer than ``runs`` somewhere), ``best_x``, ``best_is``.
``groups``  (one tag's comparison: per group)
    ``group, runs, mean, ci95_lo, ci95_hi``; optional ``std, median, iqm, iqm_lo, iqm_hi`` and ``tag``.
``pairs``  (one tag's comparison: per pair of groups)
    ``a, b, diff, diff_lo, diff_hi``; optional ``t, df, p, p_holm, p_mwu, p_improve, p_improve_lo,
    p_improve_hi, runs_needed`` and ``tag``.

:func:`to_markdown` and :func:`to_latex` take the same options and give the same table; a sentence
under it (Markdown) or in the caption (LaTeX) says the runs per group, the score, the interval and
the test, so the table can be read on its own.

Rules
-----
**Rounding: to what the uncertainty supports.** A value with an interval ``[lo, hi]`` is rounded,
with ``lo`` and ``hi``, to the decimal place of the second significant digit of the interval's width
``hi - lo`` (width 0.0234: 3 decimals, ``0.512 [0.501, 0.525]``; width 234: tens). A value without a
usable interval (one run, a zero width) gets 3 significant digits. The median uses the decimals of
the mean's interval; a standard deviation gets 2 significant digits; t 2 decimals, df 1 decimal.

**Intervals.** ``value ± half-width`` when every interval of the column is symmetric at the shown
precision (a t interval, mean ± std), else ``value [lo, hi]`` (bootstrap, min–max, IQR): decided per
column, so one column never mixes the two. ``ci="pm"`` or ``ci="brackets"`` forces one. The
half-width gets the decimals of the whole width (so ``0.99 ± 0.05`` for ``[0.94, 1.05]``).

**p-values** get 2 significant digits (``0.012``, ``0.50``, ``1.0``); below 0.001 they are shown as
``< 0.001``. A missing number (NaN) is shown as an en dash.

**Marks.** The best group per tag is **bold** (its score: ``final`` in the summary, ``mean`` in the
groups table); the best is the lowest value where ``lower_is_better`` says so (give
``compute.compare.is_lower_better``, a rule on the tag's name, or a bool), else the highest. A dagger marks a
group whose Holm-adjusted p-value (``p_holm``) against the baseline is below ``alpha`` (groups table,
given the ``pairs`` table), and every such pair in the pairs table.

**Names** (tags, groups) come from the logs and are untrusted text. LaTeX: ``\\ { } $ & # % _ ~ ^``
are escaped, as are ``< > | " ' ``` (which the default OT1 font encoding would draw as other
glyphs), ``[ ]`` (a row starting with ``[`` would be read as ``\\\\[length]``) and the ligatures
``--`` and ``,,``; control characters become spaces. Other Unicode is kept (UTF-8, LaTeX's default
input encoding; it needs a font that has the glyph). Markdown: ``\\`` and ``|`` (a cell boundary) and
the inline markup characters ``` * _ ~ [ ] < > $ & `` are backslash-escaped, as is a leading
``# + - = :``; control characters become spaces.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

KINDS = ("summary", "groups", "pairs")
REQUIRED = {
    "summary": ("tag", "group", "runs", "final", "final_lo", "final_hi", "best", "best_lo", "best_hi"),
    "groups": ("group", "runs", "mean", "ci95_lo", "ci95_hi"),
    "pairs": ("a", "b", "diff", "diff_lo", "diff_hi"),
}
BAND_TEXT = {
    "std": "±1 standard deviation",
    "sem": "±1 standard error",
    "ci95": "95% confidence interval (Student t)",
    "minmax": "min–max over the runs",
    "iqr": "interquartile range (25th–75th percentile)",
    "none": "no band",
}
P_FLOOR = 0.001
LowerIsBetter = bool | Callable[[str], bool] | None


# -- cells ------------------------------------------------------------------------------------------


@dataclasses.dataclass
class _Cell:
    kind: str  # name | int | est | num | p | text
    value: Any = None
    lo: float | None = None
    hi: float | None = None
    decimals: int | None = None  # num: fixed decimals; est: set from the interval
    sig: int | None = None  # num: significant digits
    bold: bool = False
    dagger: bool = False


@dataclasses.dataclass
class _Column:
    key: str
    header: str
    align: str  # l or r
    cells: list[_Cell] = dataclasses.field(default_factory=list)
    style: str = "pm"  # est columns: pm or brackets


@dataclasses.dataclass
class _Table:
    columns: list[_Column]
    breaks: list[int]  # row indices before which a new block (tag) starts
    first_only: set[str]  # columns whose value is shown only on a block's first row (LaTeX)
    notes: list[tuple[str, Any]]  # description pieces: ("text", str) or ("name", str) for escaping


def _finite(x) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def decimals_for(lo: float, hi: float) -> int | None:
    """Decimal places that keep the second significant digit of ``hi - lo`` (negative: tens, ...);
    ``None`` without a finite positive width."""
    if not (_finite(lo) and _finite(hi)):
        return None
    width = float(hi) - float(lo)
    if not width > 0:
        return None
    return 1 - math.floor(math.log10(width))


def fixed(value: float, decimals: int) -> str:
    """``value`` rounded to ``decimals`` places (negative: to tens, hundreds, ...), without ``-0``."""
    value = float(value)
    if decimals < 0:
        text = f"{round(value, decimals):.0f}"
    else:
        text = f"{value:.{decimals}f}"
    if text.startswith("-") and float(text) == 0:
        text = text[1:]
    return text


def significant(value: float, digits: int) -> str:
    """``value`` with ``digits`` significant digits in fixed notation (``0.0012``, ``1.0``, ``1200``)."""
    value = float(value)
    if value == 0:
        return fixed(0.0, digits - 1)
    decimals = digits - 1 - math.floor(math.log10(abs(value)))
    text = fixed(value, decimals)
    if abs(float(text)) >= 10.0 ** (digits - decimals):  # rounded up to the next power of ten
        text = fixed(value, decimals - 1)
    return text


def format_p(p: float) -> str:
    """A p-value: 2 significant digits, ``< 0.001`` below 0.001, an en dash for NaN."""
    if not _finite(p):
        return "–"
    p = float(p)
    if p < P_FLOOR:
        return "< 0.001"
    text = significant(p, 2)
    return "< 0.001" if float(text) < P_FLOOR else text


def _est(value, lo, hi) -> _Cell:
    return _Cell("est", value, lo, hi, decimals_for(lo, hi))


def _est_parts(cell: _Cell) -> tuple[str, str | None, str | None, str | None]:
    """``(value, lo, hi, half)`` texts of an estimate (lo, hi, half ``None`` without an interval)."""
    if not _finite(cell.value):
        return "–", None, None, None
    if cell.decimals is None:
        return significant(cell.value, 3), None, None, None
    d = cell.decimals
    value, lo, hi = (fixed(v, d) for v in (cell.value, cell.lo, cell.hi))
    return value, lo, hi, fixed((float(cell.hi) - float(cell.lo)) / 2, d)


def _symmetric(cell: _Cell) -> bool:
    """Whether the interval's two halves differ by less than half a unit of the last shown digit
    (the raw numbers: rounding each of value, lo and hi can make a symmetric interval look lopsided)."""
    if not _finite(cell.value) or cell.decimals is None:
        return True  # nothing to show either way
    value, lo, hi = float(cell.value), float(cell.lo), float(cell.hi)
    return abs((value - lo) - (hi - value)) < 10.0**-cell.decimals / 2


def _num_text(cell: _Cell) -> str:
    if cell.kind == "int":
        if not _finite(cell.value):
            return "–"
        return str(int(round(float(cell.value))))
    if cell.kind == "p":
        return format_p(cell.value)
    if not _finite(cell.value):
        return "–"
    if cell.decimals is not None:
        return fixed(cell.value, cell.decimals)
    return significant(cell.value, cell.sig or 3)


# -- building the tables ----------------------------------------------------------------------------


def _lower(lower_is_better: LowerIsBetter, tag: str | None, row: Mapping | None = None) -> bool:
    if callable(lower_is_better):
        if tag is None:
            raise ValueError("lower_is_better is a rule on the tag's name: give tag=... (or a tag column)")
        return bool(lower_is_better(tag))
    if lower_is_better is None:
        return bool(row is not None and row.get("best_is") == "min")
    return bool(lower_is_better)


def _check(df: pd.DataFrame, kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"unknown table kind {kind!r}: one of {', '.join(KINDS)}")
    missing = [c for c in REQUIRED[kind] if c not in df.columns]
    if missing:
        raise ValueError(f"a {kind} table needs the column(s) {', '.join(missing)}")


def _has(df: pd.DataFrame, *names: str) -> bool:
    return all(n in df.columns for n in names)


def _mark_best(rows: list[dict], cells: list[_Cell], key: str, lower: Callable[[dict], bool]) -> None:
    """Bold the best ``key`` among ``rows`` (ties all bold)."""
    scores = [float(r[key]) if _finite(r[key]) else math.nan for r in rows]
    finite = [s for s in scores if math.isfinite(s)]
    if not finite:
        return
    best = min(finite) if lower(rows[0]) else max(finite)
    for cell, score in zip(cells, scores):
        if score == best:
            cell.bold = True


def _blocks(rows: list[dict], key: str | None) -> list[list[int]]:
    """Indices of ``rows`` in blocks of the same ``key`` (tag), in order of first appearance."""
    if key is None:
        return [list(range(len(rows)))] if rows else []
    order: dict[Any, list[int]] = {}
    for i, r in enumerate(rows):
        order.setdefault(r[key], []).append(i)
    return list(order.values())


def _direction(lower: set[bool]) -> str:
    if lower == {True}:
        return " (lowest)"
    if lower == {False}:
        return " (highest)"
    return " (lowest for losses and errors, else highest)"


def _runs_note(rows: list[dict], given: Mapping[str, int] | None = None) -> list[tuple[str, Any]]:
    counts: dict[Any, int] = dict(given or {})
    for r in [] if given else rows:
        name = r.get("group", None)
        if name is not None and _finite(r.get("runs")):
            counts.setdefault(name, int(round(float(r["runs"]))))
    if not counts:
        return []
    values = set(counts.values())
    if len(values) == 1:
        k = values.pop()
        return [("text", f"{k} run{'' if k == 1 else 's'} per group")]
    out: list[tuple[str, Any]] = [("text", "Runs per group: ")]
    for i, (g, k) in enumerate(counts.items()):
        out += [("text", ", " if i else ""), ("name", g), ("text", f": {k}")]
    return out


def _summary(df, *, lower_is_better, center, band, x, runs, **_) -> _Table:
    rows = df.to_dict("records")
    x_name = {"step": "step", "relative": "time (s)", "wall": "wall time"}.get(x, x)
    cols = [
        _Column("tag", "tag", "l", [_Cell("name", r["tag"]) for r in rows]),
        _Column("group", "group", "l", [_Cell("name", r["group"]) for r in rows]),
        _Column("runs", "runs", "r", [_Cell("int", r["runs"]) for r in rows]),
        _Column("final", "final", "r", [_est(r["final"], r["final_lo"], r["final_hi"]) for r in rows]),
    ]
    if _has(df, "final_n") and any(
        _finite(r["final_n"]) and _finite(r["runs"]) and r["final_n"] < r["runs"] for r in rows
    ):
        cols.append(_Column("final_n", "runs at final", "r", [_Cell("int", r["final_n"]) for r in rows]))
    cols.append(_Column("best", "best", "r", [_est(r["best"], r["best_lo"], r["best_hi"]) for r in rows]))
    if _has(df, "best_x"):
        if x == "wall":
            cells = [_Cell("text", _wall(r["best_x"])) for r in rows]
        else:
            cells = [_Cell("num", r["best_x"], decimals=0 if x == "step" else None) for r in rows]
        cols.append(_Column("best_x", f"best at ({x_name})", "r", cells))
    blocks = _blocks(rows, "tag")
    directions = set()
    for block in blocks:
        sub = [rows[i] for i in block]

        def lower(row, _t=sub[0]["tag"]):
            return _lower(lower_is_better, _t, row)

        directions.add(lower(sub[0]))
        _mark_best(sub, [cols[3].cells[i] for i in block], "final", lower)
    band_text = BAND_TEXT.get(band, band) if band else "the band"
    notes = _runs_note(rows, runs) + [
        (
            "text",
            f". Final: the {center} of the runs at the last {x_name}; best: the best {center} over the "
            f"{x_name}s. Intervals: the chart’s band, {band_text}. Bold: the best final value per tag"
            f"{_direction(directions)}.",
        ),
    ]
    return _Table(cols, [b[0] for b in blocks[1:]], {"tag"}, notes)


def _wall(value) -> str:
    if not _finite(value):
        return "–"
    import datetime

    return datetime.datetime.fromtimestamp(float(value), datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")


def _pairs_for(pairs: pd.DataFrame | None, tag: str | None) -> list[dict]:
    if pairs is None:
        return []
    rows = pairs.to_dict("records")
    if tag is not None and "tag" in pairs.columns:
        rows = [r for r in rows if r["tag"] == tag]
    return rows


def _baseline(pair_rows: list[dict], baseline: str | None) -> str | None:
    if baseline is not None or not pair_rows:
        return baseline
    firsts = {r["a"] for r in pair_rows}
    if len(firsts) == 1:
        return firsts.pop()
    everywhere = set.intersection(*({r["a"], r["b"]} for r in pair_rows))
    if len(everywhere) == 1:
        return everywhere.pop()
    raise ValueError("the pairs do not share one group: give baseline=... for the daggers")


def _leading(df, rows: list[dict], names: list[str]) -> tuple[list[list[int]], list[_Column]]:
    """The table's blocks of rows (one per tag, when there is a tag column) and its leading columns of
    names: the tag, if any, then ``names`` (from the logs: untrusted text)."""
    keys = (["tag"] if "tag" in df.columns else []) + names
    blocks = _blocks(rows, "tag" if "tag" in df.columns else None)
    return blocks, [_Column(k, k, "l", [_Cell("name", r[k]) for r in rows]) for k in keys]


def _groups(df, *, lower_is_better, tag, baseline, pairs, alpha, score, test, runs, **_) -> _Table:
    rows = df.to_dict("records")
    blocks, cols = _leading(df, rows, ["group"])
    cols.append(_Column("runs", "runs", "r", [_Cell("int", r["runs"]) for r in rows]))
    means = [_est(r["mean"], r["ci95_lo"], r["ci95_hi"]) for r in rows]
    cols.append(_Column("mean", "mean (95% CI)", "r", means))
    if _has(df, "std"):
        cols.append(_Column("std", "std", "r", [_Cell("num", r["std"], sig=2) for r in rows]))
    if _has(df, "median"):
        cells = [_Cell("num", r["median"], decimals=m.decimals) for r, m in zip(rows, means)]
        cols.append(_Column("median", "median", "r", cells))
    if _has(df, "iqm", "iqm_lo", "iqm_hi"):
        cells = [_est(r["iqm"], r["iqm_lo"], r["iqm_hi"]) for r in rows]
        cols.append(_Column("iqm", "IQM (95% CI)", "r", cells))
    daggers = False
    base_names = set()
    directions = set()
    for block in blocks:
        sub = [rows[i] for i in block]
        block_tag = sub[0].get("tag", tag)

        def lower(row, _t=block_tag):
            return _lower(lower_is_better, _t, row)

        directions.add(lower(sub[0]))
        _mark_best(sub, [means[i] for i in block], "mean", lower)
        pair_rows = [p for p in _pairs_for(pairs, block_tag) if _finite(p.get("p_holm"))]
        base = _baseline(pair_rows, baseline)
        if base is None:
            continue
        base_names.add(base)
        for i in block:
            g = rows[i]["group"]
            for p in pair_rows:
                if {p["a"], p["b"]} == {base, g} and g != base and float(p["p_holm"]) < alpha:
                    means[i].dagger = daggers = True
    notes = _runs_note(rows, runs) + [
        (
            "text",
            f". Score: {score or 'each run’s final value'}; mean with its 95% confidence interval "
            "(Student t)"
            + ("; IQM: interquartile mean with its 95% interval" if _has(df, "iqm") else "")
            + f". Bold: the best mean{_direction(directions)}",
        ),
    ]
    if daggers or base_names:
        notes += [("text", f"; †: Holm-adjusted p < {alpha:g} against ")]
        for i, b in enumerate(sorted(base_names)):
            notes += [("text", ", " if i else ""), ("name", b)]
        notes += [("text", f" ({test or 'Welch’s t-test'})")]
    notes.append(("text", "."))
    return _Table(cols, [b[0] for b in blocks[1:]], {"tag"}, notes)


def _pairs(df, *, alpha, score, test, runs, **_) -> _Table:
    rows = df.to_dict("records")
    blocks, cols = _leading(df, rows, ["a", "b"])
    diffs = [_est(r["diff"], r["diff_lo"], r["diff_hi"]) for r in rows]
    cols.append(_Column("diff", "difference (95% CI)", "r", diffs))
    if _has(df, "t"):
        cols.append(_Column("t", "t", "r", [_Cell("num", r["t"], decimals=2) for r in rows]))
    if _has(df, "df"):
        cols.append(_Column("df", "df", "r", [_Cell("num", r["df"], decimals=1) for r in rows]))
    if _has(df, "p"):
        cols.append(_Column("p", "p", "r", [_Cell("p", r["p"]) for r in rows]))
    marked = False
    if _has(df, "p_holm"):
        cells = []
        for r in rows:
            cell = _Cell("p", r["p_holm"])
            cell.dagger = _finite(r["p_holm"]) and float(r["p_holm"]) < alpha
            marked |= cell.dagger
            cells.append(cell)
        cols.append(_Column("p_holm", "p (Holm)", "r", cells))
    if _has(df, "p_mwu"):
        cols.append(_Column("p_mwu", "p (MWU)", "r", [_Cell("p", r["p_mwu"]) for r in rows]))
    if _has(df, "p_improve", "p_improve_lo", "p_improve_hi"):
        cells = [_est(r["p_improve"], r["p_improve_lo"], r["p_improve_hi"]) for r in rows]
        cols.append(_Column("p_improve", "P(a > b) (95% CI)", "r", cells))
    if _has(df, "runs_needed"):
        cells = [_Cell("int", r["runs_needed"]) for r in rows]
        cols.append(_Column("runs_needed", "runs needed", "r", cells))
    notes = _runs_note([], runs)
    notes += [
        (
            "text",
            (". " if notes else "") + f"Score: {score or 'each run’s final value'}. "
            f"Difference with its 95% confidence interval; p: {test or 'Welch’s t-test'}",
        ),
    ]
    if _has(df, "p_holm"):
        notes.append(("text", ", Holm-adjusted over the pairs"))
    if _has(df, "p_mwu"):
        notes.append(("text", "; MWU: Mann–Whitney U test"))
    if _has(df, "p_improve"):
        notes.append(("text", "; P(a > b): probability that a run of a scores higher than a run of b"))
    if _has(df, "runs_needed"):
        notes.append(("text", "; runs needed: runs per group for 80% power at this difference"))
    if _has(df, "p_holm"):
        notes.append(("text", f"; †: Holm-adjusted p < {alpha:g}"))
    notes.append(("text", "."))
    return _Table(cols, [b[0] for b in blocks[1:]], {"tag"}, notes)


def _build(df, kind, options) -> _Table:
    _check(df, kind)
    table = {"summary": _summary, "groups": _groups, "pairs": _pairs}[kind](df, **options)
    ci = options["ci"]
    if ci not in ("auto", "pm", "brackets"):
        raise ValueError(f"ci must be auto, pm or brackets, not {ci!r}")
    for col in table.columns:
        if any(c.kind == "est" for c in col.cells):
            symmetric = all(_symmetric(c) for c in col.cells if c.kind == "est")
            col.style = "pm" if ci == "pm" or (ci == "auto" and symmetric) else "brackets"
    for col in table.columns:
        if col.key in options["labels"]:
            col.header = str(options["labels"][col.key])
    return table


def _options(
    *,
    lower_is_better: LowerIsBetter = None,
    tag: str | None = None,
    baseline: str | None = None,
    pairs: pd.DataFrame | None = None,
    alpha: float = 0.05,
    ci: str = "auto",
    center: str = "mean",
    band: str | None = None,
    x: str = "step",
    score: str | None = None,
    test: str | None = None,
    labels: Mapping[str, str] | None = None,
    runs: Mapping[str, int] | None = None,
) -> dict:
    return dict(
        lower_is_better=lower_is_better,
        tag=tag,
        baseline=baseline,
        pairs=pairs,
        alpha=alpha,
        ci=ci,
        center=center,
        band=band,
        x=x,
        score=score,
        test=test,
        labels=dict(labels or {}),
        runs=runs,
    )


# -- Markdown ---------------------------------------------------------------------------------------

_MD_INLINE = re.compile(r"([\\|`*_~\[\]<>$&])")
_MD_LEADING = re.compile(r"^([#+\-=:])")


def markdown_escape(name: Any) -> str:
    """A name from the logs as literal text in a GitHub Markdown table cell."""
    text = "".join(c if c.isprintable() else " " for c in str(name))
    return _MD_LEADING.sub(r"\\\1", _MD_INLINE.sub(r"\\\1", text))


def _md_cell(cell: _Cell, style: str) -> str:
    if cell.kind == "name":
        text = markdown_escape(cell.value)
    elif cell.kind == "text":
        text = markdown_escape(cell.value)
    elif cell.kind == "est":
        value, lo, hi, half = _est_parts(cell)
        if lo is None:
            text = value
        elif style == "pm":
            text = f"{value} ± {half}"
        else:
            text = f"{value} \\[{lo}, {hi}\\]"
    else:
        text = _num_text(cell)
    if cell.bold and text != "–":
        text = f"**{text}**"
    if cell.dagger:
        text += " †"
    return text


def to_markdown(df: pd.DataFrame, kind: str, *, describe: bool = True, **options: Any) -> str:
    """``df`` as a GitHub Markdown table (``kind``: summary, groups or pairs), then a line that says
    what the numbers are (``describe=False`` leaves it out).

    Options (all keyword; see the module's rules):
        lower_is_better: ``compute.compare.is_lower_better`` (a rule on the tag), a bool, or ``None``
            (summary: its ``best_is`` column; otherwise the highest is best).
        tag: the tag of a groups or pairs table without a ``tag`` column.
        pairs, baseline, alpha: the pairs table, the group the daggers compare against (default: the
            group in every pair) and the level (0.05), for the groups table's daggers.
        ci: ``auto`` (± when symmetric, else brackets), ``pm`` or ``brackets``.
        center, band, x: the summary's line (``mean``/``median``), band (``ci95``, ... or a phrase)
            and x axis, for the description.
        score, test: phrases for the description (default: each run's final value; Welch's t-test).
        labels: ``{column key: header}`` to rename headers (keys: ``final``, ``mean``, ``diff``, ...).
        runs: ``{group: runs}`` for the description (default: the table's ``runs`` column; a pairs
            table has none).

    Returns:
        The Markdown text, ending in a newline.

    Raises:
        ValueError: unknown kind, a required column missing, or a bad option.
    """
    table = _build(df, kind, _options(**options))
    lines = [
        "| " + " | ".join(markdown_escape(c.header) for c in table.columns) + " |",
        "| " + " | ".join("---:" if c.align == "r" else "---" for c in table.columns) + " |",
    ]
    for i in range(len(table.columns[0].cells) if table.columns else 0):
        lines.append("| " + " | ".join(_md_cell(c.cells[i], c.style) for c in table.columns) + " |")
    text = "\n".join(lines) + "\n"
    if describe and table.notes:
        sentence = "".join(markdown_escape(v) if k == "name" else _md_prose(v) for k, v in table.notes)
        text += "\n" + sentence.strip() + "\n"
    return text


def _md_prose(text: str) -> str:
    """Our own wording: only the characters Markdown would take as markup are escaped."""
    return _MD_INLINE.sub(r"\\\1", text)


# -- LaTeX ------------------------------------------------------------------------------------------

_LATEX = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "%": r"\%",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    '"': r"\textquotesingle{}\textquotesingle{}",
    "'": r"\textquotesingle{}",
    "`": r"\textasciigrave{}",
    "[": "{[}",
    "]": "{]}",
}
_LATEX_RE = re.compile("|".join(re.escape(k) for k in _LATEX) + r"|-(?=-)|,(?=,)")


def latex_escape(name: Any) -> str:
    """A name from the logs as literal text in LaTeX (text mode)."""
    text = "".join(c if c.isprintable() else " " for c in str(name))
    return _LATEX_RE.sub(lambda m: _LATEX.get(m.group(0), m.group(0) + "{}"), text)


def _tex_cell(cell: _Cell, style: str) -> str:
    if cell.kind in ("name", "text"):
        text = latex_escape(cell.value)
        return rf"\textbf{{{text}}}" if cell.bold else text
    if cell.kind == "est":
        value, lo, hi, half = _est_parts(cell)
        if value == "–":
            return "--"
        bold = (lambda s: rf"\mathbf{{{s}}}") if cell.bold else (lambda s: s)
        if lo is None:
            math_text = bold(value)
        elif style == "pm":
            math_text = f"{bold(value)} \\pm {bold(half)}"
        else:
            math_text = f"{bold(value)}\\ [{lo}, {hi}]"
        dagger = r"^\dagger" if cell.dagger else ""
        return f"${math_text}{dagger}$"
    text = _num_text(cell)
    if text == "–":
        return "--"
    text = text.replace("< ", "<")
    if cell.bold:
        text = rf"\mathbf{{{text}}}"
    dagger = r"^\dagger" if cell.dagger else ""
    return f"${text}{dagger}$"


def to_latex(
    df: pd.DataFrame,
    kind: str,
    *,
    caption: str | None = None,
    label: str | None = None,
    environment: bool = True,
    describe: bool = True,
    **options: Any,
) -> str:
    """``df`` as a booktabs LaTeX table (``\\toprule``, ``\\midrule``, ``\\bottomrule``; needs
    ``\\usepackage{booktabs}``). ``kind`` and ``options``: as :func:`to_markdown`.

    Args:
        caption: the caption's first words (untrusted text is fine: it is escaped); the sentence that
            says what the numbers are follows it (``describe=False`` leaves that out).
        label: ``\\label{...}`` (characters other than ``A-Za-z0-9:._-`` become ``-``).
        environment: wrap the ``tabular`` in a ``table`` float with the caption; ``False`` gives the
            ``tabular`` alone, the caption as a comment above it.

    Returns:
        The LaTeX text, ending in a newline.
    """
    table = _build(df, kind, _options(**options))
    parts = []
    if caption:
        parts.append(latex_escape(caption).rstrip(".") + ".")
    if describe and table.notes:
        sentence = "".join(latex_escape(v) for _, v in table.notes).strip()
        parts.append(sentence.replace("†", r"$^\dagger$").replace("±", r"$\pm$").replace("–", "--"))
    caption_text = " ".join(parts)
    spec = "".join(c.align for c in table.columns)
    body = [
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(latex_escape(c.header) for c in table.columns) + r" \\",
        r"\midrule",
    ]
    rows = len(table.columns[0].cells) if table.columns else 0
    breaks = set(table.breaks)
    for i in range(rows):
        if i in breaks:
            body.append(r"\midrule")
        cells = []
        for c in table.columns:
            if c.key in table.first_only and i and i not in breaks:
                cells.append("")
            else:
                cells.append(_tex_cell(c.cells[i], c.style))
        body.append(" & ".join(cells) + r" \\")
    body += [r"\bottomrule", r"\end{tabular}"]
    label_text = re.sub(r"[^A-Za-z0-9:._-]", "-", label) if label else None
    if not environment:
        head = [f"% {caption_text}"] if caption_text else []
        return "\n".join(head + body) + "\n"
    out = [r"\begin{table}[t]", r"\centering"]
    if caption_text:
        out.append(rf"\caption{{{caption_text}}}")
    if label_text:
        out.append(rf"\label{{{label_text}}}")
    out += body + [r"\end{table}"]
    return "\n".join(out) + "\n"


__all__ = ["to_markdown", "to_latex", "markdown_escape", "latex_escape", "format_p", "decimals_for", "fixed"]
