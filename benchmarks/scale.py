"""The command line from 5M to 50M points: time and peak memory against points, ours against tb-reducer.

    python benchmarks/scale.py                                  # this checkout: 5M, 20M, 50M points
    python benchmarks/scale.py --code before=../old-checkout    # and another checkout, side by side
    python benchmarks/scale.py --quick                          # small sizes: checks that it runs

200 runs x 5 tags x 5,000 / 20,000 / 50,000 steps written by tensorboardX (``generate.py``; the 50M
logdir is 1.2 GB and takes about 10 minutes to write the first time). At each size every checkout
given runs ``--repeats`` times, the checkouts alternating (so a busy moment of a shared machine hits
both), then tb-reducer once up to ``--peer-max-points``. Each checkout is run as
``python -m tb_aggregate_plugin.cli`` with ``PYTHONPATH`` set to it, byte-compiled first; its CSVs
must be byte-identical to the first checkout's. Prints, per size and checkout, the median wall time,
seconds per million points, the peak memory of the process tree, CPU time and page faults (of the
command and its data servers), the ratio to tb-reducer, and per checkout the fit ``peak = a + b *
points``; writes ``benchmarks/out/scale-<time>.json`` and draws ``benchmarks/scale.png``.
"""

from __future__ import annotations

import argparse
import compileall
import datetime
import filecmp
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cold  # noqa: E402
import generate  # noqa: E402
import measure  # noqa: E402

RUNS, TAGS = 200, 5
STEPS = (5000, 20_000, 50_000)
QUICK = {"runs": 20, "steps": (500, 2000, 5000)}
OPTIONS = ["--group-by", "none", "--reductions", cold.OPS, "--force", "-q"]


def command(logdir: str, out: str) -> list[str]:
    """Our command line on ``logdir``, as ``cold.py`` runs it, from whichever checkout is on PYTHONPATH."""
    return [sys.executable, "-m", "tb_aggregate_plugin.cli", logdir, "-o", out, *OPTIONS]


def environment(code: str) -> dict[str, str]:
    """The environment of a run of the checkout at ``code`` (only its PYTHONPATH differs; run it from
    a folder holding no checkout)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.path.abspath(code)
    return env


def check_imports(name: str, code: str) -> None:
    """Fail unless a run of checkout ``name`` imports the package from ``code`` (not an installed one)."""
    probe = [sys.executable, "-c", "import tb_aggregate_plugin as t; print(t.__file__)"]
    found = subprocess.run(probe, env=environment(code), cwd=HERE, capture_output=True, text=True).stdout
    if not os.path.abspath(found.strip()).startswith(os.path.abspath(code) + os.sep):
        raise SystemExit(f"checkout {name}: a run imports {found.strip() or 'nothing'}, not {code}")


def fit(points: list[float], peaks: list[float]) -> tuple[float, float]:
    """Least squares ``peak = a + b * points``: ``(a bytes, b bytes per point)``."""
    n = len(points)
    mx, my = sum(points) / n, sum(peaks) / n
    sxx = sum((x - mx) ** 2 for x in points)
    b = sum((x - mx) * (y - my) for x, y in zip(points, peaks)) / sxx if sxx else 0.0
    return my - b * mx, b


def summary(runs: list[dict]) -> dict:
    """The medians of a few runs of one command, and the runs themselves."""
    keys = ("wall", "peak_tree_rss", "max_single_rss", "user", "sys", "minor_faults")
    return {"runs": runs, **{k: statistics.median(r[k] for r in runs) for k in keys}}


def measure_size(
    steps: int, runs: int, codes: dict[str, str], repeats: int, peer: bool, work: str, say
) -> dict:
    logdir = generate.ensure(runs, TAGS, steps)
    points = runs * TAGS * steps
    row: dict = {"runs": runs, "tags": TAGS, "steps": steps, "points": points}
    row["bytes"] = generate.logdir_bytes(logdir)
    said = (
        f"{points / 1e6:g}M points ({runs} runs x {TAGS} tags x {steps:,} steps, {measure.mb(row['bytes'])})"
    )
    say(said)
    done: dict[str, list[dict]] = {name: [] for name in codes}
    for _ in range(repeats):
        for name, code in codes.items():  # alternating: a busy moment hits every checkout alike
            out = os.path.join(work, f"{name}_{steps}.csv")
            # From the work folder: ``python -m`` puts its working folder ahead of PYTHONPATH.
            m = measure.run(command(logdir, out), env=environment(code), cwd=work)
            if m.returncode != 0:
                raise RuntimeError(f"{name} failed on {logdir} ({m.returncode}): {m.stderr[-2000:]}")
            done[name].append(m.as_dict())
    first = next(iter(codes))
    row["ours"] = {}
    for name in codes:
        s = summary(done[name])
        s["s_per_m_points"] = s["wall"] / (points / 1e6)
        if name != first:
            a, b = (os.path.join(work, f"{n}_{steps}.csv") for n in (first, name))
            s["same_csv_as_" + first] = filecmp.cmp(a, b, shallow=False)
        row["ours"][name] = s
        same = s.get("same_csv_as_" + first)
        each = ", ".join(f"{r['wall']:.2f}" for r in s["runs"])
        say(
            f"  {name:8} {s['wall']:6.2f} s ({each}), "
            f"{s['s_per_m_points']:.3f} s per M points, peak {measure.mb(s['peak_tree_rss'])}, "
            f"CPU {s['user']:.1f} user + {s['sys']:.1f} sys, {s['minor_faults']:,} minor faults"
            + ("" if same is None else f", CSV {'byte-identical' if same else 'DIFFERS'}")
        )
    if peer:
        peer_csv = os.path.join(work, f"peer_{steps}.csv")
        m = measure.run(cold.peer_command(logdir, peer_csv))
        if m.returncode != 0:
            raise RuntimeError(f"tb-reducer failed on {logdir}: {m.stderr[-2000:]}")
        row["peer"] = m.as_dict()
        row["max_abs_difference"] = cold.compare(os.path.join(work, f"{first}_{steps}.csv"), peer_csv)
        for s in row["ours"].values():
            s["speedup"] = m.wall / s["wall"]
        diff = row["max_abs_difference"]
        same = f"same numbers within {diff:.1e}" if isinstance(diff, float) else diff
        say(
            f"  tb-reducer {m.wall:.2f} s, peak {measure.mb(m.peak_tree_rss)}; "
            + ", ".join(f"{n} {s['speedup']:.1f}x faster" for n, s in row["ours"].items())
            + f"; {same}"
        )
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--code",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="another checkout to measure side by side (e.g. before=../old); this one is 'after'",
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs of each checkout per size (median)")
    parser.add_argument("--peer-max-points", type=float, default=20e6, help="tb-reducer up to this size")
    parser.add_argument("--quick", action="store_true", help="20 runs x 500 / 2,000 / 5,000 steps")
    parser.add_argument("--steps", help="steps per run of each size, e.g. 50000 (default 5000,20000,50000)")
    parser.add_argument("--out", default=os.path.join(HERE, "out"))
    parser.add_argument("--plot", default=os.path.join(HERE, "scale.png"))
    args = parser.parse_args(argv)
    codes = dict(item.split("=", 1) for item in args.code)
    codes["after"] = os.path.dirname(HERE)
    for name, code in codes.items():  # as pip install does; every run then starts alike
        compileall.compile_dir(os.path.join(code, "tb_aggregate_plugin"), quiet=1)
        check_imports(name, code)
    runs, sizes = (QUICK["runs"], QUICK["steps"]) if args.quick else (RUNS, STEPS)
    if args.steps:
        sizes = tuple(int(s) for s in args.steps.split(","))
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    work = os.path.join(args.out, f"scale-{stamp}")
    os.makedirs(work, exist_ok=True)
    say = lambda text: print(text, flush=True)  # noqa: E731
    results: dict = {
        "started": datetime.datetime.now().isoformat(),
        "load_average_at_start": os.getloadavg(),
        "codes": {name: os.path.abspath(code) for name, code in codes.items()},
        "sizes": [],
    }
    say(f"load average {results['load_average_at_start'][0]:.2f}; checkouts: {', '.join(codes)}")
    for steps in sizes:
        peer = runs * TAGS * steps <= args.peer_max_points
        results["sizes"].append(measure_size(steps, runs, codes, args.repeats, peer, work, say))
    results["load_average_at_end"] = os.getloadavg()
    rows = results["sizes"]
    results["fit"] = {}
    for name in codes if len(rows) > 1 else ():
        a, b = fit([r["points"] for r in rows], [r["ours"][name]["peak_tree_rss"] for r in rows])
        first, last = rows[0]["ours"][name]["wall"], rows[-1]["ours"][name]["wall"]
        growth = rows[-1]["points"] / rows[0]["points"]
        results["fit"][name] = {
            "a": a,
            "bytes_per_point": b,
            "time_growth": last / first,
            "points_growth": growth,
        }
        say(
            f"{name}: peak = {a / 1e6:.0f} MB + {b:.1f} bytes per point; "
            f"{growth:g}x the points take {last / first:.1f}x the time"
        )
    path = os.path.join(args.out, f"scale-{stamp}.json")
    with open(path, "w") as f:
        json.dump(results, f, indent=1)
    if args.plot:
        import plot

        png = args.plot if not args.quick else os.path.join(work, "scale.png")
        say(f"plot: {plot.plot_scale(results, png)}")
    say(f"all numbers: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
