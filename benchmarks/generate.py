"""Benchmark logdirs written with a real writer (tensorboardX), cached under ``benchmarks/.cache/``.

A scenario is ``runs x tags x steps`` scalar points; runs are ``run_0000 ...`` (or ``group_G/seed_S``
when ``groups`` > 1). Values are deterministic loss-like curves with noise; wall times are fixed
(0.05 s per step) so every generation writes the same numbers. Each step is one event holding every
tag's value, as a training loop that logs all its metrics at once writes them. A finished logdir
holds a ``.done`` marker; an unfinished one is written again from scratch.

    python benchmarks/generate.py 200 5 5000          # writes .cache/r200_t5_s5000
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, ".cache")
TAG_NAMES = ("train/loss", "train/accuracy", "val/loss", "val/accuracy", "train/lr")
WALL_START = 1_700_000_000.0


def tag_names(tags: int) -> list[str]:
    """Tag names: the five usual ones first, then ``metric/NN``."""
    return list(TAG_NAMES[:tags]) + [f"metric/{i:02d}" for i in range(len(TAG_NAMES), tags)]


def scenario_name(runs: int, tags: int, steps: int, groups: int = 1, per_value: bool = False) -> str:
    return f"r{runs}_t{tags}_s{steps}" + (f"_g{groups}" if groups > 1 else "") + ("_v" if per_value else "")


def run_names(runs: int, groups: int = 1) -> list[str]:
    if groups <= 1:
        return [f"run_{i:04d}" for i in range(runs)]
    per = runs // groups
    return [f"group_{g}/seed_{s}" for g in range(groups) for s in range(per)]


def curve(steps: int, seed: int, tag_index: int) -> np.ndarray:
    """A deterministic noisy curve: decaying for losses, rising for accuracies."""
    rng = np.random.default_rng([seed, tag_index])
    t = np.linspace(0.0, 1.0, steps)
    base = 0.2 + 1.8 * np.exp(-4.0 * t)
    if tag_index % 2 == 1:
        base = 1.0 - 0.5 * base
    return base + rng.normal(0.0, 0.05, steps)


def _write_one(args: tuple[str, str, int, int, int, bool]) -> None:
    """One run, written the way a training loop logs: one event per step holding every tag's value,
    or with ``per_value`` one event per value (``SummaryWriter.add_scalar`` for each tag)."""
    from tensorboardX import FileWriter, SummaryWriter
    from tensorboardX.proto.summary_pb2 import Summary

    logdir, run, seed, tags, steps, per_value = args
    walls = WALL_START + seed * 1000.0 + np.arange(steps) * 0.05
    names = tag_names(tags)
    values = np.stack([curve(steps, seed, j) for j in range(tags)], axis=1).tolist()
    if per_value:
        writer = SummaryWriter(os.path.join(logdir, run), max_queue=10_000, flush_secs=30)
        for step in range(steps):
            for name, value in zip(names, values[step]):
                writer.add_scalar(name, value, step, walltime=float(walls[step]))
        writer.close()
        return
    writer = FileWriter(os.path.join(logdir, run), max_queue=10_000, flush_secs=30)
    for step in range(steps):
        summary = Summary(value=[Summary.Value(tag=n, simple_value=v) for n, v in zip(names, values[step])])
        writer.add_summary(summary, step, walltime=float(walls[step]))
    writer.close()


def ensure(
    runs: int,
    tags: int,
    steps: int,
    groups: int = 1,
    *,
    workers: int = 2,
    quiet: bool = False,
    per_value: bool = False,
) -> str:
    """The cached logdir of a scenario, written first if missing or unfinished; returns its path."""
    path = os.path.join(CACHE, scenario_name(runs, tags, steps, groups, per_value))
    if os.path.exists(os.path.join(path, ".done")):
        return path
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    if not quiet:
        print(f"writing {runs} runs x {tags} tags x {steps} steps to {path} ...", file=sys.stderr, flush=True)
    jobs = [(path, run, i, tags, steps, per_value) for i, run in enumerate(run_names(runs, groups))]
    if workers > 1 and len(jobs) > 1:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            for _ in pool.imap_unordered(_write_one, jobs):
                pass
    else:
        for job in jobs:
            _write_one(job)
    with open(os.path.join(path, ".done"), "w") as f:
        f.write(f"{runs} {tags} {steps} {groups}\n")
    return path


def logdir_bytes(path: str) -> int:
    """Total size of the event files under ``path``."""
    return sum(
        os.path.getsize(os.path.join(root, name))
        for root, _, names in os.walk(path)
        for name in names
        if "tfevents" in name
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=int)
    parser.add_argument("tags", type=int)
    parser.add_argument("steps", type=int)
    parser.add_argument("--groups", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--per-value", action="store_true", help="one event per value (add_scalar)")
    args = parser.parse_args(argv)
    print(
        ensure(args.runs, args.tags, args.steps, args.groups, workers=args.workers, per_value=args.per_value)
    )


if __name__ == "__main__":
    main()
