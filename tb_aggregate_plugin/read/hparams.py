"""Hparams per run, and the one rule that tells an ``add_hparams`` child run from a run.

``SummaryWriter.add_hparams(hparams, metrics)`` in PyTorch and tensorboardX writes the hparams and
each metric (one point) into a new child run of the run it describes, named by the time:
``lr=0.1/seed_0/1795372541.3668559``. Such a child is folded into its parent (see
:class:`.source.Source`): its hparams and its scalars count as the parent's, and it is no run of its own.

A run is such a child when all three hold:

- its last path component is a float timestamp (``series.TIMESTAMP_COMPONENT``: nine or more digits,
  a dot, digits), as ``str(time.time())`` writes it;
- it holds the hparams plugin's session-start record (``add_hparams`` writes one into every child);
- each of its scalar tags has at most ``CHILD_MAX_POINTS`` points (``add_hparams`` writes one per
  metric; a run that trained and happens to be named by the time has more).

Its parent is the name without that component (``.``, the logdir itself, for a child at the top).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from ..series import HPARAMS, TIMESTAMP_COMPONENT

logger = logging.getLogger(__name__)

# Points per scalar tag a child run may hold (add_hparams writes one per metric and call).
CHILD_MAX_POINTS = 3
# The hparams plugin's tag of a session-start record (its metadata module's SESSION_START_INFO_TAG,
# which imports TensorFlow's stand-in: only parsing hparams needs it, not telling which runs have them).
SESSION_START_INFO_TAG = "_hparams_/session_start_info"


def hparams_listing(provider, ctx, experiment_id: str) -> Mapping[str, Mapping[str, object]]:
    """The provider's ``list_tensors`` of the hparams plugin; ``{}`` from a provider without hparams."""
    try:
        return provider.list_tensors(ctx, experiment_id=experiment_id, plugin_name=HPARAMS)
    except Exception as exc:  # a provider without hparams support is not an error
        logger.info("no hparams: %s", exc)
        return {}


def parent_of(run: str) -> str:
    """The run a child run belongs to: its name without the last component (``.`` at the top)."""
    return run.rsplit("/", 1)[0] if "/" in run else "."


def child_candidates(runs: Iterable[str], listing: Mapping[str, Mapping[str, object]]) -> dict[str, str]:
    """``{run: parent}`` of the runs (of ``runs`` and of the hparams ``listing``) named as an
    ``add_hparams`` child and holding a session-start record; :func:`few_points` decides the rest."""
    found = {}
    for run in set(runs) | set(listing):
        if run in ("", ".") or SESSION_START_INFO_TAG not in listing.get(run, {}):
            continue
        if TIMESTAMP_COMPONENT.fullmatch(run.rsplit("/", 1)[-1]):
            found[run] = parent_of(run)
    return found


def few_points(counts: Mapping[str, int]) -> bool:
    """Whether a candidate's ``{tag: points}`` are those of an ``add_hparams`` child."""
    return all(count <= CHILD_MAX_POINTS for count in counts.values())


def hparams_of_listing(
    listing: Mapping[str, Mapping[str, object]], children: Mapping[str, str] | None = None
) -> dict[str, dict[str, object]]:
    """``{run: {name: value}}`` from a ``list_tensors`` answer of the hparams plugin.

    A child run of ``children`` (``{child: parent}``) gives its values to its parent (the parent's own
    values win; of several children, the later one by name) and is not listed itself.
    """
    from tensorboard.plugins.hparams import metadata as hp_metadata

    children = children or {}
    found: dict[str, dict[str, object]] = {}
    for run, tags in listing.items():
        for tag, ts in tags.items():
            if tag != hp_metadata.SESSION_START_INFO_TAG:
                continue
            try:
                info = hp_metadata.parse_session_start_info_plugin_data(ts.plugin_content)
            except Exception:  # malformed plugin data: skip that run's hparams, keep the rest
                continue
            found[run] = {name: _value(v) for name, v in info.hparams.items()}
    result = {run: values for run, values in found.items() if run not in children}
    folded: dict[str, dict[str, object]] = {}
    for child in sorted((c for c in found if c in children), key=lambda c: float(c.rsplit("/", 1)[-1])):
        folded.setdefault(children[child], {}).update(found[child])
    for parent, values in folded.items():
        result[parent] = {**values, **result.get(parent, {})}
    return result


def _value(value) -> object:
    kind = value.WhichOneof("kind")
    if kind == "number_value":
        number = value.number_value
        return int(number) if float(number).is_integer() else number
    if kind == "string_value":
        return value.string_value
    if kind == "bool_value":
        return value.bool_value
    return None
