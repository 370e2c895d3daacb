"""Hparams per run, from the hparams plugin's session-start records.

``add_hparams`` in PyTorch and tensorboardX writes the session into a child run of the run it
describes (``run/<timestamp>``); such values count for the parent run as well.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from ..series import HPARAMS

logger = logging.getLogger(__name__)


def read_hparams(provider, ctx, experiment_id: str) -> dict[str, dict[str, object]]:
    """``{run: {name: value}}`` of every run with hparams; ``{}`` from a provider without hparams."""
    try:
        listing = provider.list_tensors(ctx, experiment_id=experiment_id, plugin_name=HPARAMS)
    except Exception as exc:  # a provider without hparams support is not an error
        logger.info("no hparams: %s", exc)
        return {}
    return hparams_of_listing(listing)


def hparams_of_listing(listing: Mapping[str, Mapping[str, object]]) -> dict[str, dict[str, object]]:
    """``{run: {name: value}}`` from a ``list_tensors`` answer of the hparams plugin."""
    from tensorboard.plugins.hparams import metadata as hp_metadata

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
    result = dict(found)
    for run, values in found.items():
        parent = run.rsplit("/", 1)[0] if "/" in run else None
        if parent is not None and parent not in found:
            result.setdefault(parent, {}).update(values)
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
