"""Write demo_logs/: a small sweep that shows what the Aggregate tab is for.

Three learning rates x five seeds, four tags (train/val loss and accuracy), 400 steps, hparams in
every run; one run diverges to NaN (lr=0.1/seed_3) and one stops early (lr=0.03/seed_4).
Written with TensorBoard's own summary writer. Run: ``python demo_logs/make_demo_logs.py``.
"""

from __future__ import annotations

import argparse
import os
import shutil

import numpy as np
from tensorboard.plugins.hparams import summary_v2 as hparams_summary
from tensorboard.summary import Writer

LEARNING_RATES = {"lr=0.01": 0.01, "lr=0.03": 0.03, "lr=0.1": 0.1}
SEEDS = range(5)
STEPS = 400
START = 1_767_225_600.0  # 2026-01-01T00:00:00Z, so the files do not change between runs of this script


def curves(lr: float, seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(1000 * seed + int(lr * 1000))
    speed = {0.01: 1.5, 0.03: 3.5, 0.1: 6.0}[lr]
    floor = {0.01: 0.55, 0.03: 0.30, 0.1: 0.38}[lr]
    train_steps = np.arange(0, STEPS, 2)
    val_steps = np.arange(0, STEPS, 10)

    def loss(steps, noise):
        t = steps / STEPS
        return floor + (2.3 - floor) * np.exp(-speed * t) + rng.normal(0, noise, len(steps)) + 0.02 * seed

    train_loss = loss(train_steps, 0.04)
    val_loss = loss(val_steps, 0.03) + 0.05
    return {
        "train/loss": (train_steps, train_loss),
        "train/accuracy": (train_steps, np.clip(1.0 - train_loss / 2.5, 0, 1)),
        "val/loss": (val_steps, val_loss),
        "val/accuracy": (val_steps, np.clip(1.0 - val_loss / 2.5, 0, 1)),
    }


def write(root: str) -> None:
    for name, lr in LEARNING_RATES.items():
        for seed in SEEDS:
            run = os.path.join(root, name, f"seed_{seed}")
            os.makedirs(run)
            writer = Writer(run)
            for tag, (steps, values) in curves(lr, seed).items():
                values = values.copy()
                if name == "lr=0.1" and seed == 3:  # diverges: loss explodes, accuracy collapses, then NaN
                    blow = steps >= 250
                    values[blow] = np.nan
                    values[(steps >= 230) & ~blow] *= 4.0 if tag.endswith("loss") else 0.25
                if name == "lr=0.03" and seed == 4:  # stopped early (preempted, never resumed)
                    steps, values = steps[steps <= 220], values[steps <= 220]
                for step, value in zip(steps, values):
                    wall = START + 3600 * seed + 0.5 * step
                    writer.add_scalar(tag, float(value), int(step), wall_time=wall)
            writer.close()
            # A fixed file name (the writer's holds the time, host and process id).
            (written,) = [f for f in os.listdir(run) if "tfevents" in f]
            os.rename(os.path.join(run, written), os.path.join(run, f"events.out.tfevents.{int(START)}.demo"))
            # hparams session info in the run itself, as tensorboard.plugins.hparams writes it
            with open(os.path.join(run, "events.out.tfevents.hparams"), "wb") as f:
                f.write(_record(hparams_summary.hparams_pb({"lr": lr, "seed": seed, "optimizer": "adam"})))


def _record(summary) -> bytes:
    """One TFRecord holding an Event with this summary (the event file format)."""
    import io

    from tensorboard.compat.proto import event_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    buffer = io.BytesIO()
    event = event_pb2.Event(wall_time=START, step=0, summary=summary)
    RecordWriter(buffer).write(event.SerializeToString())
    return buffer.getvalue()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", nargs="?", default=os.path.dirname(os.path.abspath(__file__)))
    args = parser.parse_args()
    for name in LEARNING_RATES:
        shutil.rmtree(os.path.join(args.out, name), ignore_errors=True)
    write(args.out)
    print(f"wrote {len(LEARNING_RATES) * len(SEEDS)} runs under {args.out}")
