"""tb-aggregate: reduce many TensorBoard runs to per-group curves with honest uncertainty bands.

Public API: :func:`aggregate` (a logdir path or a DataProvider in, a tidy DataFrame out),
:func:`compare` (groups tested against each other on one tag), :func:`summary` (final and best
value per tag and group), :func:`plot` (the figure), :func:`compute` (the full Result) and
:class:`Query`, the validated description of one request.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

# The compute/ stage shares its name with the function compute() below: loaded first (its __init__
# is empty), so that the function, defined after it, is what `tba.compute` names. Later imports of
# its modules (`from .compute import engine`) find the package in sys.modules, not here.
from . import compute as _compute_stage  # noqa: F401
from .query import OptionError, Query, SelectionError
from .version import __version__

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from .compute.result import Result, UnknownTagError
    from .read.source import Source

__all__ = [
    "aggregate",
    "compare",
    "summary",
    "plot",
    "Query",
    "OptionError",
    "SelectionError",
    "UnknownTagError",
    "Result",
    "compute",
    "__version__",
]


def __getattr__(name: str) -> Any:
    # The engine (pandas, scipy) is imported on first use, so that `tb-aggregate` can start loading
    # the logdir while it imports.
    if name in ("Result", "UnknownTagError"):
        from .compute import result

        return getattr(result, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@contextlib.contextmanager
def _opened(source: Any, query: Query, loader: str, experiment_id: str) -> Iterator[Source]:
    """A :class:`Source` over a logdir path or a list of run folders (loaded for this query, stopped
    after), a DataProvider or a Source."""
    from .read.logdir import logdir_source
    from .read.source import Source

    if isinstance(source, Source):
        yield source
    elif isinstance(source, (str, list, tuple)) or hasattr(source, "__fspath__"):
        with logdir_source(source, dup_steps=query.dup_steps, loader=loader) as (opened, _):
            yield opened
    else:
        yield Source(source, experiment_id)


def compute(source: Any, query: Query, *, loader: str = "auto", experiment_id: str = "") -> Result:
    """Run ``query`` on a logdir path, a list of run folders, a DataProvider or a :class:`Source`;
    returns the full Result."""
    from .compute.engine import run

    with _opened(source, query, loader, experiment_id) as opened:
        return run(query, opened)


def aggregate(source: Any, *, loader: str = "auto", experiment_id: str = "", **options: Any) -> pd.DataFrame:
    """Group runs and reduce each group across runs, step by step.

    Args:
        source: a logdir path (read with TensorBoard's loaders, every point kept), a list of run
            folders (each one run named after its folder, by its path from their common parent when
            two have the same name) or a TensorBoard ``DataProvider``.
        loader: for a path: ``auto`` (Rust data server when installed; the Python loader when
            ``dup_steps`` needs it or the data server finds no scalars), ``rust`` or ``python``.
        experiment_id: for a DataProvider serving several experiments.
        **options: the :class:`Query` options (``runs``, ``tags``, ``group_by``, ``center``, ``band``,
            ``reductions``, ``align``, ``x``, ``smoothing``, ``min_runs``, ``dup_steps``).

    Returns:
        A tidy DataFrame ``tag, group, step, wall_time, n``, the line and the band's edges named after
        what they are (``mean, mean-std, mean+std``; ``median, ci95_lo, ci95_hi``; none for band none),
        then the other ``reductions``. On another x axis the x column is named as the axis
        (``relative``, ``wall``, ``tag:NAME``) and there is no ``wall_time``. ``df.attrs`` holds the runs
        of each group, the alignment used, the NaN/inf values left out per run, runs the grouping could
        not place, and plain-language notes.

    Raises:
        OptionError: an option has a value that is not allowed (the message names it), or, from a
            path, ``loader="rust"`` with ``dup_steps`` first or mean (the data server drops repeats).
        SelectionError: an OptionError for a valid ``runs``, ``tags`` or ``group_by`` that selects
            nothing in these logs; the message lists the runs, tags or hparams there are.
    """
    return compute(source, Query(**options), loader=loader, experiment_id=experiment_id).table()


def compare(
    source: Any,
    tag: str,
    *,
    format: str | None = None,
    loader: str = "auto",
    experiment_id: str = "",
    **options: Any,
) -> pd.DataFrame | str:
    """Test the groups against each other on ``tag``, one score per run.

    Args:
        source: a logdir path or a TensorBoard ``DataProvider`` (as for :func:`aggregate`).
        tag: the scalar tag the runs are scored on.
        **options: the :class:`Query` options; for comparisons ``score`` (``final``, ``best``,
            ``tail``, ``auc``), ``baseline`` (a group: every other group against it; default: every
            pair), ``boot_reps`` and ``seed`` (the bootstrap intervals), and the curve options
            (``runs``, ``group_by``, ``smoothing``, ...) that decide the runs and their curves.

    Returns:
        One row per pair ``a, b, diff, diff_lo, diff_hi, t, df, p, p_holm, p_mwu, p_improve,
        p_improve_lo, p_improve_hi, runs_needed``: mean(A) - mean(B) with Welch's 95% CI, Welch's
        t-test, its p adjusted by Holm over the rows, Mann-Whitney's p, P(A > B) with its bootstrap CI,
        and the runs per group that 80% power would need. ``attrs["groups"]`` is the table of groups
        (``group, runs, mean, std, ci95_lo, ci95_hi, median, iqm, iqm_lo, iqm_hi``); ``attrs`` also
        hold each run's score, the direction ("lower is better" for loss-like tags), a caption, one
        sentence per pair and the notes. With ``format="md"`` or ``"tex"``: the groups and pairs tables
        as GitHub Markdown or booktabs LaTeX text instead (values rounded to their interval, the best
        group bold, a dagger where Holm p < 0.05 against the baseline, what they are said under them).

    Raises:
        OptionError: an option is not allowed, or ``baseline`` is not a group with data for ``tag``.
        UnknownTagError: no selected run has ``tag``.
    """
    from .compute.comparison import compare as compare_groups

    query = Query(**options)
    _check_text_format(format)
    with _opened(source, query, loader, experiment_id) as opened:
        found = compare_groups(query, opened, tag)
    if format is None:
        return found.table()
    from .write import paper

    return paper.comparison_text(found, format)


def summary(
    source: Any, *, format: str | None = None, loader: str = "auto", experiment_id: str = "", **options: Any
) -> pd.DataFrame | str:
    """Per tag and group, the final and the best value of the line with the band's edges, where the best
    was reached and how many runs stand behind the final point (the tab's summary table); with
    ``format="md"`` or ``"tex"`` as GitHub Markdown or booktabs LaTeX text. Options as :func:`aggregate`.
    """
    from .compute.summary import summary as summarise

    query = Query(**options)
    _check_text_format(format)
    result = compute(source, query, loader=loader, experiment_id=experiment_id)
    if format is None:
        return summarise(result)
    from .write import paper

    return paper.summary_text(result, format)


def plot(
    source: Any,
    *,
    cols: int | None = None,
    log_y: bool = False,
    size: tuple[float, float] | None = None,
    loader: str = "auto",
    experiment_id: str = "",
    **options: Any,
) -> Figure:
    """The tab's charts as one matplotlib figure: a panel per tag (``cols`` per row, default up to 3),
    per group a line and a band in the tab's colours, dashed where fewer runs than the group stand
    behind a point; the legend names each group with its run count. Options as :func:`aggregate`.
    Save it with ``fig.savefig(...)``, or ``tb_aggregate_plugin.write.figure.save(fig, "fig.pdf")``
    for the same bytes every time and fonts embedded. Needs ``pip install 'tb-aggregate[plot]'``.

    Raises:
        MissingLibrary: matplotlib is not installed (the message is the line that installs it).
    """
    from .write import figure

    figure.check_available()
    result = compute(source, Query(**options), loader=loader, experiment_id=experiment_id)
    return figure.draw(result, cols=cols, log_y=log_y, size=size)


def _check_text_format(format: str | None) -> None:
    if format not in (None, "md", "tex"):
        raise OptionError("format", f"{format!r} is not one of md, tex (or None for a DataFrame)")
