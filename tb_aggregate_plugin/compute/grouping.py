"""Which group each run belongs to, under one ``group_by`` mode."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping

from ..query import search_names
from ..series import TIMESTAMP_COMPONENT

ALL = "all"
# A repetition index: seed_3, seed3, seed-3, run-2, trial_7, rep1, fold_4, version_0, or a bare number.
_REPEAT_WORD = r"(?:seed|seeds|run|trial|rep|repeat|repetition|fold|replica|version|s)[_\-=]?\d+"
_REPEAT_COMPONENT = re.compile(rf"(?:{_REPEAT_WORD}|\d+)", re.IGNORECASE)
_REPEAT_SUFFIX = re.compile(rf"[_\-.,+ ]+{_REPEAT_WORD}$", re.IGNORECASE)
_REPEAT_PREFIX = re.compile(rf"^{_REPEAT_WORD}[_\-.,+ ]+", re.IGNORECASE)


def auto_key(run: str) -> str:
    """The run name without its repetition index and without a float timestamp component (the name
    ``add_hparams`` gives its child runs).

    ``lr=0.1/seed_3`` -> ``lr=0.1``; ``seed_0/train`` -> ``train``; ``lr=0.1_seed3`` -> ``lr=0.1``;
    ``lr=0.1/seed_3/1795372541.3668559`` -> ``lr=0.1``.
    """
    parts = []
    for part in run.split("/"):
        if (
            not part
            or part == "."
            or _REPEAT_COMPONENT.fullmatch(part)
            or TIMESTAMP_COMPONENT.fullmatch(part)
        ):
            continue
        part = _REPEAT_PREFIX.sub("", _REPEAT_SUFFIX.sub("", part))
        if part:
            parts.append(part)
    return "/".join(parts) or ALL


def hparam_label(names: Iterable[str], values: Mapping[str, object]) -> str:
    return ", ".join(f"{name}={values[name]}" for name in names)


def group_runs(
    runs: Iterable[str],
    group_by: str,
    hparams: Mapping[str, Mapping[str, object]] | None = None,
) -> tuple[dict[str, str], dict[str, str]]:
    """Place each run in a group.

    Args:
        runs: run names.
        group_by: a validated ``Query.group_by``.
        hparams: ``{run: {name: value}}``, needed for ``hparam:`` grouping.

    Returns:
        ``(groups, unplaced)``: ``{run: group}`` for the placed runs and ``{run: reason}`` for the
        runs this mode cannot place (they are reported, not silently dropped).
    """
    groups: dict[str, str] = {}
    unplaced: dict[str, str] = {}
    hparams = hparams or {}
    runs = list(runs)
    if group_by.startswith("regex:"):
        matches = dict(zip(runs, search_names("group_by", group_by[len("regex:") :], runs)))
    elif group_by.startswith("hparam:"):
        names = group_by[len("hparam:") :].split(",")
    for run in runs:
        if group_by == "auto":
            groups[run] = auto_key(run)
        elif group_by == "parent":
            groups[run] = posixpath.dirname(run) or "."
        elif group_by == "none":
            groups[run] = ALL
        elif group_by.startswith("regex:"):
            match = matches[run]
            if match is None:
                unplaced[run] = "does not match the group_by regex"
            else:
                captured = [g for g in match.groups() if g is not None]
                groups[run] = "/".join(captured) if captured else match.group(0)
        else:
            values = hparams.get(run, {})
            lacking = [n for n in names if n not in values]
            if lacking:
                unplaced[run] = f"has no hparam {lacking[0]!r}"
            else:
                groups[run] = hparam_label(names, values)
    return groups, unplaced
