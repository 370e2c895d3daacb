"""Which group each run belongs to, under one ``group_by`` mode."""

from __future__ import annotations

import collections
import difflib
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


# A trailing repetition index without a word: PPO_1, exp-2 (1 to 3 digits; a "-N" after a digit is
# left alone, as the last part of a date or a time such as 2024-01-05 or 12-30-45).
_TRAILING_INDEX = re.compile(r"(?:_|(?<=\D)-)(\d{1,3})$")


def fold_trailing_indices(keys: Mapping[str, str]) -> dict[str, str]:
    """``{run: key}`` with a trailing ``_N`` or ``-N`` dropped from the keys of runs that differ only
    in it, when those N are consecutive integers: ``PPO_1``, ``PPO_2``, ``PPO_3`` -> ``PPO``.

    Only a key that is one run's alone is folded (a key already shared by several runs has its
    repetitions elsewhere). Kept whole: a lone ``resnet_50``; ``resnet_50`` beside ``resnet_101``
    (not consecutive: two configurations, not two seeds). The index is the last one found in the key,
    in whichever of its path components (``PPO_1/train`` and ``PPO_2/train`` -> ``PPO/train``).
    """
    shared = collections.Counter(keys.values())
    candidates: dict[str, dict[str, int]] = {}  # key without the index -> {run: index}
    for run, key in keys.items():
        if shared[key] > 1:
            continue
        parts = key.split("/")
        for i in reversed(range(len(parts))):
            match = _TRAILING_INDEX.search(parts[i])
            if match and match.start() > 0:
                base = "/".join(parts[:i] + [parts[i][: match.start()]] + parts[i + 1 :])
                candidates.setdefault(base, {})[run] = int(match.group(1))
                break
    folded = dict(keys)
    for base, indices in candidates.items():
        values = sorted(indices.values())
        consecutive = all(b == a + 1 for a, b in zip(values, values[1:]))
        if len(values) > 1 and consecutive and base not in shared:
            for run in indices:
                folded[run] = base
    return folded


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
    if group_by == "auto":
        return fold_trailing_indices({run: auto_key(run) for run in runs}), unplaced
    for run in runs:
        if group_by == "parent":
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


def nothing_placed(runs: list[str], group_by: str, hparams: Mapping[str, Mapping[str, object]]) -> str:
    """Why ``group_by`` places none of ``runs``, and what there is to choose from (an error message)."""
    if group_by.startswith("regex:"):
        return f"{group_by!r} matches none of the selected runs; they are {some(runs)}"
    names = group_by[len("hparam:") :].split(",")
    present = sorted({name for run in runs for name in hparams.get(run, {})})
    if not present:
        return f"{group_by!r}: the selected runs have no hparams"
    missing = [n for n in names if n not in present]
    if not missing:
        return f"{group_by!r}: no selected run has all of the hparams {', '.join(names)}"
    close = difflib.get_close_matches(missing[0], present, n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    return f"hparam {missing[0]!r} is in none of the selected runs; their hparams are {some(present)}{hint}"


def some(names: list[str], limit: int = 20) -> str:
    """The first ``limit`` names, comma-separated, and how many more there are."""
    shown = ", ".join(names[:limit])
    return shown + (f" (and {len(names) - limit:,} more)" if len(names) > limit else "")
