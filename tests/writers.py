"""Writing event files with real writers, for the tests: TensorBoard's own and tensorboardX."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np


def write_run(
    logdir: str,
    run: str,
    scalars: Mapping[str, tuple[Sequence[int], Sequence[float]]],
    *,
    writer: str = "tb",
    wall_times: Mapping[str, Sequence[float]] | None = None,
    hparams: Mapping[str, object] | None = None,
) -> str:
    """Write one run: ``scalars`` is ``{tag: (steps, values)}``, written point by point.

    ``writer``: ``tb`` (tensorboard.summary.Writer, TF2 tensor-stored scalars) or ``tbx``
    (tensorboardX, TF1 ``simple_value`` scalars).
    ``hparams`` writes the hparams plugin's session-start info into the run itself.
    Returns the run's directory.
    """
    path = os.path.join(logdir, run)
    os.makedirs(path, exist_ok=True)
    wall_times = wall_times or {}
    if writer == "tb":
        from tensorboard.summary import Writer

        w = Writer(path)
        for tag, (steps, values) in scalars.items():
            walls = wall_times.get(tag)
            for i, (step, value) in enumerate(zip(steps, values)):
                w.add_scalar(
                    tag, float(value), int(step), wall_time=None if walls is None else float(walls[i])
                )
        w.close()
        if hparams:
            _write_hparams(path, hparams)
        return path
    from tensorboardX import SummaryWriter

    w = SummaryWriter(path)
    for tag, (steps, values) in scalars.items():
        walls = wall_times.get(tag)
        for i, (step, value) in enumerate(zip(steps, values)):
            w.add_scalar(
                tag,
                float(value),
                int(step),
                walltime=None if walls is None else float(walls[i]),
            )
    if hparams:
        from tensorboard.plugins.hparams import summary_v2

        w._get_file_writer().add_summary(_tbx_summary(summary_v2.hparams_pb(dict(hparams))))
    w.close()
    return path


def _write_hparams(path: str, hparams: Mapping[str, object]) -> None:
    from tensorboard.plugins.hparams import summary_v2
    from tensorboardX import FileWriter

    fw = FileWriter(path, filename_suffix=".hparams")
    fw.add_summary(_tbx_summary(summary_v2.hparams_pb(dict(hparams))))
    fw.close()


def noisy_curve(n: int, seed: int, *, start: float = 2.0, end: float = 0.2) -> np.ndarray:
    """A loss-like curve with noise, deterministic for a seed."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, n)
    return end + (start - end) * np.exp(-4 * t) + rng.normal(0, 0.05, n)


def _tbx_summary(summary):
    """TensorBoard's Summary proto as tensorboardX's own class (same wire format)."""
    from tensorboardX.proto import summary_pb2

    return summary_pb2.Summary.FromString(summary.SerializeToString())
