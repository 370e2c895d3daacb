"""Figure: a 4-tag x 3-group PDF from demo_logs/, end to end (load + compute + draw + save).

Each repeat is a fresh Python process, as a script or the command line would be: the wall time of
the whole process (interpreter start and imports included), and inside it the time of each stage:

    import   tb_aggregate_plugin and matplotlib (the figure module imports matplotlib when drawing)
    compute  tba.compute(demo_logs, Query(band="ci95")): read every event file, group, reduce
    draw     write.figure.draw(result): 4 panels, per group a line (solid and dashed) and a band
    save     write.figure.save(fig, "figure.pdf"): fonts embedded (Type 42)

and, in the same process, draw + save again (matplotlib warm). Target: under 3 s end to end. The
CPU seconds of each process (and its children, such as TensorBoard's data server) are printed too:
on a machine busy with other work they tell what the wall time would be on an idle one.

Usage: python benchmarks/figure.py [--repeats 5] [--loader auto|python] [--logdir demo_logs]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_S = 3.0

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import tb_aggregate_plugin as tba
from tb_aggregate_plugin.write import figure
import matplotlib.figure  # what draw imports first, counted as an import
t1 = time.perf_counter()
result = tba.compute(sys.argv[1], tba.Query(band="ci95"), loader=sys.argv[3])
t2 = time.perf_counter()
fig = figure.draw(result)
t3 = time.perf_counter()
figure.save(fig, sys.argv[2])
t4 = time.perf_counter()
figure.save(figure.draw(result), sys.argv[2])
t5 = time.perf_counter()
assert len(result.tags) == 4 and len(result.groups) == 3, (result.tags, result.groups)
print(json.dumps({"import": t1 - t0, "compute": t2 - t1, "draw": t3 - t2, "save": t4 - t3,
                  "in_process": t4 - t0, "warm_draw_save": t5 - t4}))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--loader", default="auto", choices=["auto", "python", "rust"])
    parser.add_argument("--logdir", default=os.path.join(REPO, "demo_logs"))
    args = parser.parse_args(argv)

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")])}
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "figure.pdf")
        for _ in range(max(args.repeats, 1)):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-c", CHILD, args.logdir, out, args.loader],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            runs.append({**json.loads(done.stdout.strip().splitlines()[-1]), "process": wall, "cpu": cpu})
        size = os.path.getsize(out)
    median = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    print(
        f"4 tags x 3 groups -> PDF ({size:,} bytes), loader={args.loader}, "
        f"median of {len(runs)} fresh processes:"
    )
    for key in ("import", "compute", "draw", "save", "in_process", "process", "cpu", "warm_draw_save"):
        print(f"  {key:15s} {median[key]:6.2f} s")
    load = os.getloadavg()[0]
    print(f"  (cpu: CPU seconds of the process and its children; load average now {load:.1f})")
    verdict = "met" if median["process"] < TARGET_S else "MISSED"
    print(f"end to end (whole process): {median['process']:.2f} s, target < {TARGET_S:.0f} s: {verdict}")
    return 0 if median["process"] < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
