"""tb-aggregate: reduce many TensorBoard runs to per-group curves with honest uncertainty bands.

Public API: :func:`aggregate` (a logdir path or a DataProvider in, a tidy DataFrame out) and
:class:`Query`, the validated description of one request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# The compute/ stage shares its name with the function compute() below: loaded first (its __init__
# is empty), so that the function, defined after it, is what `tba.compute` names. Later imports of
# its modules (`from .compute import engine`) find the package in sys.modules, not here.
from . import compute as _compute_stage  # noqa: F401
from .query import OptionError, Query, SelectionError
from .version import __version__

if TYPE_CHECKING:
    import pandas as pd

    from .compute.result import Result, UnknownTagError
__all__ = [
    "aggregate",
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


def compute(source: Any, query: Query, *, loader: str = "auto", experiment_id: str = "") -> Result:
    """Run ``query`` on a logdir path, a list of run folders, a DataProvider or a :class:`Source`;
    returns the full Result."""
    from .compute.engine import run
    from .read.logdir import logdir_source
    from .read.source import Source

    if isinstance(source, Source):
        return run(query, source)
    if isinstance(source, (str, list, tuple)) or hasattr(source, "__fspath__"):
        with logdir_source(source, dup_steps=query.dup_steps, loader=loader) as (opened, _):
            return run(query, opened)
    return run(query, Source(source, experiment_id))


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
        then the other ``reductions`` (``step`` is ``relative`` or ``wall`` for a time axis).
        ``df.attrs`` holds the runs of each group, the alignment used, the NaN/inf values left out per
        run, runs the grouping could not place, and plain-language notes.

    Raises:
        OptionError: an option has a value that is not allowed (the message names it), or, from a
            path, ``loader="rust"`` with ``dup_steps`` first or mean (the data server drops repeats).
        SelectionError: an OptionError for a valid ``runs``, ``tags`` or ``group_by`` that selects
            nothing in these logs; the message lists the runs, tags or hparams there are.
    """
    return compute(source, Query(**options), loader=loader, experiment_id=experiment_id).table()
