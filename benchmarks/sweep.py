"""Scaling: cold logdir -> CSV time and peak memory as the number of runs, then of steps, grows.

Two axes through the same kind of logdir (5 tags): runs at a fixed number of steps, and steps at a
fixed number of runs. Each point is one cold ``tb-aggregate`` (and, up to a size, one
``tb-reducer``) on a cached logdir; the logdirs are written once and reused.
"""

from __future__ import annotations

import os

import cold
import generate
import measure

TAGS = 5
FULL = {"runs": ([10, 100, 1000], 1000), "steps": ([1000, 10_000, 100_000], 10)}
QUICK = {"runs": ([4, 16, 64], 200), "steps": ([200, 800, 3200], 4)}


def points(quick: bool) -> list[tuple[str, int, int]]:
    """``(axis, runs, steps)`` of every point of the sweep."""
    plan = QUICK if quick else FULL
    out = []
    runs_axis, fixed_steps = plan["runs"]
    out += [("runs", r, fixed_steps) for r in runs_axis]
    steps_axis, fixed_runs = plan["steps"]
    out += [("steps", fixed_runs, s) for s in steps_axis]
    return out


def sweep(out_dir: str, *, quick: bool, peer_max_points: int, repeats: int = 1, log=print) -> list[dict]:
    """Measure every point; the peer only where ``runs * steps * TAGS <= peer_max_points``."""
    rows = []
    for axis, runs, steps in points(quick):
        logdir = generate.ensure(runs, TAGS, steps)
        n = runs * steps * TAGS
        work = os.path.join(out_dir, f"sweep_{axis}_{runs}x{steps}")
        os.makedirs(work, exist_ok=True)
        ours_csv = os.path.join(work, "ours.csv")
        ours = cold.measure_side(cold.ours_command(logdir, ours_csv), repeats)
        row = {
            "axis": axis,
            "runs": runs,
            "steps": steps,
            "points": n,
            "bytes": generate.logdir_bytes(logdir),
            "ours_wall": ours["wall"],
            "ours_peak_tree_rss": ours["peak_tree_rss"],
        }
        if n <= peer_max_points:
            peer_csv = os.path.join(work, "peer.csv")
            peer = cold.measure_side(cold.peer_command(logdir, peer_csv), 1)
            row["peer_wall"] = peer["wall"]
            row["peer_peak_tree_rss"] = peer["peak_tree_rss"]
            row["max_abs_difference"] = cold.compare(ours_csv, peer_csv)
        rows.append(row)
        peer_text = f", tb-reducer {row['peer_wall']:.2f} s" if "peer_wall" in row else ""
        log(
            f"  sweep {axis:5} {runs:5} runs x {steps:6} steps = {n:>10,} points: "
            f"ours {row['ours_wall']:.2f} s, {measure.mb(row['ours_peak_tree_rss'])}{peer_text}"
        )
    return rows
