"""Bootstrap bands: seconds of ``compute.bootstrap.boot_ci`` for a group's curve, per center.

A group of 10 runs x 5,000 points (the target: well under 0.5 s on two cores at 2,000 resamples) and
one of 200 runs x 5,000 points; each also ragged, with a fifth of the runs stopped 20% early (the
points then fall in two sets of the same run count). Prints the median and, in brackets, the least
of ``--repeats`` calls (on a busy machine the least is the closer to the cost of the work itself).

    python benchmarks/bootstrap.py [--repeats 5] [--reps 2000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tb_aggregate_plugin.compute.bootstrap import CENTERS, boot_ci  # noqa: E402


def curves(runs: int, points: int, ragged: bool) -> np.ndarray:
    values = np.random.default_rng(0).normal(size=(runs, points)).cumsum(axis=1)
    if ragged:
        values[: max(1, runs // 5), int(points * 0.8) :] = np.nan
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--reps", type=int, default=2000)
    args = parser.parse_args()
    boot_ci(curves(10, 100, False), "mean", reps=args.reps)  # imports and first-call costs out of the way
    print(f"boot_ci, {args.reps} resamples: median (least) of {args.repeats} calls, seconds")
    print(f"{'runs x points':>16} {'ragged':>7} " + " ".join(f"{c:>15}" for c in CENTERS))
    for runs, points in ((10, 5000), (200, 5000)):
        for ragged in (False, True):
            values = curves(runs, points, ragged)
            cells = []
            for center in CENTERS:
                times = []
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    boot_ci(values, center, reps=args.reps, seed=0)
                    times.append(time.perf_counter() - start)
                cells.append(f"{statistics.median(times):7.3f} ({min(times):.3f})")
            print(f"{f'{runs} x {points}':>16} {'yes' if ragged else 'no':>7} " + " ".join(cells))


if __name__ == "__main__":
    main()
