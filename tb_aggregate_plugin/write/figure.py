"""The tab's charts as a figure for a paper: one panel per tag, per group a line and a band.

:func:`draw` turns a :class:`~tb_aggregate_plugin.compute.result.Result` into a ``matplotlib`` figure that
looks like the tab: the same group colours (:mod:`.palette`), the center line dashed where fewer
runs than the whole group stand behind a point, the band shaded around it. :func:`save` writes it as
PDF, SVG or PNG, the same bytes for the same figure.

matplotlib is an optional extra (``pip install 'tb-aggregate[plot]'``), imported inside the
functions only; :func:`check_available` raises :class:`MissingLibrary` with that install line when
it is missing. Neither function touches pyplot or the global backend: the figure is a plain
``matplotlib.figure.Figure`` on an Agg canvas (nothing left open, nothing shown), and the settings a
file format reads are set in a ``matplotlib.rc_context`` around the save only.

The artists carry ids (``gid``), which the SVG keeps as element ids: ``line-<panel>-<group>`` is a
group's line where every run stands behind it, ``line-<panel>-<group>-fewer`` its dashed pieces,
``band-<panel>-<group>`` its band; ``<panel>`` is the tag's index in ``result.tags`` and ``<group>``
the group's colour index (:func:`.palette.group_order`).
"""

from __future__ import annotations

import math
import os
import threading
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from . import palette

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..compute.result import Result

INSTALL = "pip install 'tb-aggregate[plot]'"
FORMATS = ("pdf", "svg", "png")
# As in the tab (frontend/traces.js: X_TITLES, BAND_LABELS).
X_TITLES = {"step": "step", "relative": "relative time (s)", "wall": "wall time"}
BAND_LABELS = {
    "std": "±1 std",
    "sem": "±1 SEM",
    "ci95": "95% CI (Student t)",
    "minmax": "min–max",
    "iqr": "IQR (25th–75th percentile)",
    "none": "no band",
}
BAND_ALPHA = 0.2
PANEL_SIZE = (2.6, 2.0)  # inches per panel: a 3-column grid is about a page's text width
LEGEND_HEIGHT = 0.55  # inches above the panels for the legend, until it is measured
LEGEND_PAD = 0.15  # inches around the measured legend
FONT_SIZE = 8  # points; titles 1 larger, ticks 1 smaller
# Each save sets these, and only while it saves (see save).
SAVE_RC = {
    "pdf.fonttype": 42,  # TrueType (Type 42) fonts embedded: text stays text and prints everywhere
    "ps.fonttype": 42,
    "svg.fonttype": "none",  # SVG text as <text> elements, not glyph outlines
    "svg.hashsalt": "tb-aggregate",  # ids of clip paths etc. the same on every save
    "text.usetex": False,  # names from the logs are drawn as they are, never run through TeX
    "path.simplify": True,
}
_METADATA = {"pdf": {"CreationDate": None}, "svg": {"Date": None}, "png": {}}
# rc_context changes matplotlib's global settings while it lasts: one save at a time from here.
_SAVE_LOCK = threading.Lock()


class MissingLibrary(RuntimeError):
    """matplotlib is not installed; the message is the line that installs it."""


def check_available() -> None:
    """Raise :class:`MissingLibrary` (message: ``pip install 'tb-aggregate[plot]'``) without matplotlib."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MissingLibrary(INSTALL) from None


def draw(
    result: Result,
    *,
    cols: int | None = None,
    log_y: bool = False,
    size: tuple[float, float] | None = None,
    dpi: float | None = None,
) -> Figure:
    """One panel per tag of ``result`` (in ``result.tags`` order), in a grid of ``cols`` columns.

    Per group, in the tab's colour: the band (``band_lo`` to ``band_hi``, shaded) and the line (the
    center), solid where every run of the group stands behind the point and dashed where fewer do
    (``n`` < the group's runs), the dashed piece joined to its solid neighbours as in the tab. One
    legend names each group with its run count and says what the line and band are.

    Args:
        result: what :func:`tb_aggregate_plugin.compute` returns.
        cols: panels per row; default ``min(3, number of tags)``.
        log_y: logarithmic y axes.
        size: ``(width, height)`` in inches; default :data:`PANEL_SIZE` per panel plus the legend's
            height (its groups in as many columns as fit the width).
        dpi: the figure's resolution (for PNG, :func:`save`'s ``dpi`` decides).

    Returns:
        A ``matplotlib.figure.Figure`` (not known to pyplot: nothing to close), laid out for its
        size once and for all (to resize it, draw again with ``size``).

    Raises:
        MissingLibrary: matplotlib is not installed.
        ValueError: ``result`` has no tag to draw, or ``cols`` < 1.
    """
    check_available()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.legend_handler import HandlerTuple
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    tags = list(result.tags)
    if not tags:
        notes = "; ".join(result.notes()) or "no tag"
        raise ValueError(f"nothing to draw: {notes}")
    cols = min(3, len(tags)) if cols is None else int(cols)
    if cols < 1:
        raise ValueError(f"cols must be >= 1, not {cols}")
    cols = min(cols, len(tags))
    rows = math.ceil(len(tags) / cols)
    auto_size = size is None
    if auto_size:
        size = (PANEL_SIZE[0] * cols, PANEL_SIZE[1] * rows + LEGEND_HEIGHT)
    fig = Figure(figsize=size, dpi=dpi or 100, layout="constrained", facecolor="white")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax in axes[len(tags) :]:
        ax.set_visible(False)

    query = result.query
    order = palette.group_order(result.groups)
    colors = {g: palette.color_for(i) for i, g in enumerate(order)}
    sizes = {g: len(runs) for g, runs in result.groups.items()}
    # The curves as the engine made them (the columns of result.frame, without building it: pandas
    # is not needed to draw).
    curves = {(c["tag"], c["group"]): c for c in result.curves}
    any_fewer = False
    for p, (tag, ax) in enumerate(zip(tags, axes)):
        _style(ax, tag, result.x, log_y)
        drawn = False
        for gi, group in enumerate(order):
            curve = curves.get((tag, group))
            if curve is None or not len(curve["n"]):
                continue
            drawn = True
            color = colors[group]
            x = _x_values(curve[result.x], result.x)
            center = np.asarray(curve["center"], dtype=float)
            n = np.asarray(curve["n"])
            if query.band != "none":
                ax.fill_between(
                    x,
                    np.asarray(curve["band_lo"], dtype=float),
                    np.asarray(curve["band_hi"], dtype=float),
                    color=color,
                    alpha=BAND_ALPHA,
                    linewidth=0,
                    gid=f"band-{p}-{gi}",
                )
            full, fewer = split_by_coverage(center, n, sizes[group])
            ax.plot(x, full, color=color, linewidth=1.5, gid=f"line-{p}-{gi}", solid_capstyle="butt")
            if fewer is not None:
                any_fewer = True
                ax.plot(
                    x, fewer, color=color, linewidth=1.1, linestyle=(0, (3.5, 2)), gid=f"line-{p}-{gi}-fewer"
                )
        if not drawn:
            ax.text(
                0.5,
                0.5,
                "no points",
                transform=ax.transAxes,
                ha="center",
                va="center",
                fontsize=FONT_SIZE,
                color="#5f6368",
            )
        ax.margins(x=0)

    handles: list[Any] = []
    labels: list[str] = []
    for group in order:
        line = Line2D([], [], color=colors[group], linewidth=1.5)
        band = Patch(facecolor=colors[group], alpha=BAND_ALPHA, linewidth=0)
        handles.append((band, line) if query.band != "none" else line)
        count = sizes[group]
        labels.append(text(f"{group} ({count} run{'' if count == 1 else 's'})"))
    # What the line and band are, as the tab's legend says it (on one line, or two if narrow).
    key = [f"line: {query.center}", f"band: {BAND_LABELS.get(query.band, query.band)}"]
    if any_fewer:
        key.append("dashed: fewer runs than the group")
    titles = [" · ".join(key), "\n".join([" · ".join(key[:2]), *key[2:]]), "\n".join(key)]
    legend_kw = {
        "handles": handles,
        "labels": labels,
        "fontsize": FONT_SIZE,
        "title_fontsize": FONT_SIZE,
        "frameon": False,
        "handler_map": {tuple: HandlerTuple(ndivide=1)},
        "handlelength": 2.4,
        "columnspacing": 1.6,
    }
    legend = _add_legend(fig, axes[0], legend_kw, titles)
    if auto_size and legend is not None:  # room for the legend as it came out (rows of groups)
        height = legend.get_window_extent(fig.canvas.get_renderer()).height / fig.dpi
        fig.set_size_inches(size[0], PANEL_SIZE[1] * rows + height + LEGEND_PAD)
    # Lay the panels out once, here, and keep them so: the constrained layout starts from where the
    # last layout left them and measures text with the saving format's renderer, so laying out at
    # each save would move them a little from one save to the next (other bytes).
    fig.get_layout_engine().execute(fig)
    fig.set_layout_engine("none")
    return fig


def save(fig: Figure, path: str | os.PathLike | BinaryIO, fmt: str | None = None, dpi: float = 150) -> None:
    """Write ``fig`` as PDF, SVG or PNG: ``fmt``, or else the extension of ``path``.

    The same input gives the same bytes: no creation date in PDF or SVG, fixed SVG ids (and the
    layout fixed by :func:`draw`). PDF embeds its fonts as TrueType (Type 42); SVG keeps text as
    ``<text>`` (in the viewer's font of the same family). ``dpi`` is the resolution of a PNG (and of
    any raster part of a PDF or SVG). The format's settings are set for the save only, one save at a
    time (``matplotlib.rc_context`` changes matplotlib's global settings while it lasts).

    Raises:
        MissingLibrary: matplotlib is not installed.
        ValueError: the format is not one of pdf, svg, png (or a file object was given without ``fmt``).
    """
    check_available()
    import matplotlib

    if fmt is None:
        if not isinstance(path, (str, os.PathLike)):
            raise ValueError("fmt is needed to write to a file object: one of " + ", ".join(FORMATS))
        fmt = os.path.splitext(os.fspath(path))[1].lstrip(".")
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise ValueError(f"unknown figure format {fmt!r}: one of {', '.join(FORMATS)}")
    with _SAVE_LOCK, matplotlib.rc_context(SAVE_RC):
        fig.savefig(path, format=fmt, dpi=dpi, metadata=_METADATA[fmt], facecolor="white")


def _add_legend(fig, first_axes, legend_kw: dict, titles: list[str]):
    """The legend above the panels: the first title (lines of the key) and the most columns that
    fit the figure's width. Returns it, or ``None`` when it went into the first panel."""
    renderer = fig.canvas.get_renderer()
    for i, key in enumerate(titles):
        title = "\n".join(text(line) for line in key.split("\n"))
        for ncols in range(len(legend_kw["handles"]), 0, -1):
            try:
                legend = fig.legend(loc="outside upper center", ncols=ncols, title=title, **legend_kw)
            except ValueError:  # matplotlib before 3.7 has no "outside": in the first panel instead
                first_axes.legend(loc="best", ncols=1, title=title, **legend_kw)
                return None
            if legend.get_window_extent(renderer).width <= 0.98 * fig.bbox.width:
                return legend
            if i == len(titles) - 1 and ncols == 1:
                return legend  # the narrowest there is
            legend.remove()
    return None


def split_by_coverage(center: np.ndarray, n: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray | None]:
    """The center line in two pieces, as the tab's ``splitByCoverage``: ``full`` where ``n >= size``
    (NaN elsewhere) and ``fewer`` where ``n < size``, with each full point next to a fewer one
    repeated in ``fewer`` so the dashed piece meets the solid one; ``fewer`` is ``None`` when every
    point has the whole group."""
    center = np.asarray(center, dtype=float)
    short = np.asarray(n) < size
    full = np.where(short, np.nan, center)
    if not short.any():
        return full, None
    beside = np.zeros_like(short)
    beside[1:] |= short[:-1]
    beside[:-1] |= short[1:]
    fewer = np.where(short | beside, center, np.nan)
    return full, fewer


def text(value: str) -> str:
    """A name from the logs as matplotlib draws it literally: ``$`` escaped (no mathtext), control
    characters as spaces."""
    cleaned = "".join(c if c.isprintable() else " " for c in str(value))
    return cleaned.replace("$", r"\$")


def _style(ax, tag: str, x: str, log_y: bool) -> None:
    ax.set_title(text(tag), fontsize=FONT_SIZE + 1, loc="left", pad=4)
    ax.set_xlabel(X_TITLES.get(x, x), fontsize=FONT_SIZE, color="#3c4043")
    ax.set_ylabel(text(tag), fontsize=FONT_SIZE, color="#3c4043")
    if log_y:
        ax.set_yscale("log")
    ax.tick_params(labelsize=FONT_SIZE - 1, colors="#3c4043", length=3, width=0.6)
    ax.grid(True, color="#e6e6e6", linewidth=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color("#9aa0a6")
        ax.spines[side].set_linewidth(0.6)
    if x == "wall":
        import matplotlib.dates as mdates

        locator = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))


def _x_values(values: np.ndarray, x: str) -> np.ndarray:
    """The x column as drawn: steps and seconds as they are, wall time (epoch seconds) as dates."""
    values = np.asarray(values)
    if x != "wall":
        return values
    micros = np.round(values.astype(float) * 1e6)
    return micros.astype("int64").astype("datetime64[us]")
