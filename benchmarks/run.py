"""Every benchmark against the peers, from one command; prints the ratios and the targets.

    python benchmarks/run.py            # the full set (about 5 minutes on 2 cores once the logdirs exist)
    python benchmarks/run.py --quick    # small sizes, a minute or two: checks that everything runs

Writes ``benchmarks/out/results-<time>.json`` (every number) and, unless ``--no-plot``, the plot
``benchmarks/time_vs_size.png``. The logdirs are written once into ``benchmarks/.cache/``.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import browser  # noqa: E402
import cold  # noqa: E402
import generate  # noqa: E402
import measure  # noqa: E402
import sweep  # noqa: E402
import warm  # noqa: E402

# The scenario, and the small one of --quick.
MAIN = {"runs": 200, "tags": 5, "steps": 5000}
MAIN_QUICK = {"runs": 20, "tags": 5, "steps": 500}
BROWSER = {"runs": 20, "tags": 20, "steps": 5000, "groups": 4}
BROWSER_QUICK = {"runs": 8, "tags": 20, "steps": 300, "groups": 4}
TARGETS = {
    "cold_speedup": 20.0,  # tb-reducer's wall time / ours, at least
    "cold_memory": 1 / 3,  # our peak / tb-reducer's, at most
    "warm_export": 1 / 5,  # our /export / the scalars plugin's multirun fetch, at most
    "second_request": 1 / 5,  # a second request changing smoothing/band/center / the first, at most
    "browser_ms": 2000.0,  # data arrival to every visible chart drawn, below
}


def machine() -> dict:
    """Cores, memory, CPU and the versions of everything measured."""
    with open("/proc/meminfo") as f:
        mem_kb = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
    cpu = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    versions = {}
    for dist in (
        "tb-aggregate",
        "tensorboard",
        "tensorboard-data-server",
        "tensorboard-reducer",
        "tensorboardX",
        "numpy",
        "pandas",
        "scipy",
        "grpcio",
        "protobuf",
        "playwright",
    ):
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            versions[dist] = None
    try:
        chromium = subprocess.run(
            [browser.CHROMIUM, "--version"], capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        chromium = None
    return {
        "cores": os.cpu_count(),
        "memory_gb": round(mem_kb / 1024 / 1024, 1),
        "cpu": cpu,
        "python": platform.python_version(),
        "os": platform.platform(),
        "chromium": chromium,
        "load_average_at_start": os.getloadavg(),
        "versions": versions,
    }


def byte_compile() -> None:
    """Byte-compile the installed tb-aggregate package, as ``pip install .`` does: an editable
    install (``pip install -e .``) leaves that to the first run, and with PYTHONDONTWRITEBYTECODE set
    every cold run would compile the package again (about 20 ms)."""
    import compileall

    import tb_aggregate_plugin

    compileall.compile_dir(os.path.dirname(tb_aggregate_plugin.__file__), quiet=1)


def verdict(value: float | None, target: float, higher_is_better: bool) -> str:
    if value is None:
        return "n/a"
    ok = value >= target if higher_is_better else value <= target
    return "meets" if ok else "MISSES"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmarks of tb-aggregate against its peers.")
    parser.add_argument("--quick", action="store_true", help="small sizes: checks that everything runs")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each of our measurements (median)")
    parser.add_argument("--peer-repeats", type=int, default=1, help="runs of tb-reducer on the main scenario")
    parser.add_argument(
        "--python-loader", action="store_true", help="warm scenario with --load_fast=false too"
    )
    parser.add_argument("--skip", action="append", default=[], choices=["cold", "warm", "sweep", "browser"])
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument(
        "--no-per-value", action="store_true", help="skip the cold scenario written one event per value"
    )
    parser.add_argument("--out", default=os.path.join(HERE, "out"))
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    byte_compile()
    started = time.time()
    results: dict = {
        "machine": machine(),
        "quick": args.quick,
        "started": datetime.datetime.now().isoformat(),
    }
    main_size = MAIN_QUICK if args.quick else MAIN
    say = lambda text: print(text, flush=True)  # noqa: E731

    say(
        f"machine: {results['machine']['cores']} cores, {results['machine']['memory_gb']} GB, "
        f"load average {results['machine']['load_average_at_start'][0]:.2f}"
    )
    t = time.perf_counter()
    logdir = generate.ensure(main_size["runs"], main_size["tags"], main_size["steps"])
    results["scenario"] = {
        **main_size,
        "points": main_size["runs"] * main_size["tags"] * main_size["steps"],
        "bytes": generate.logdir_bytes(logdir),
        "logdir": logdir,
    }
    say(
        f"scenario: {main_size['runs']} runs x {main_size['tags']} tags x {main_size['steps']} steps = "
        f"{results['scenario']['points']:,} points, {measure.mb(results['scenario']['bytes'])} "
        f"(ready in {time.perf_counter() - t:.0f} s)"
    )

    if "cold" not in args.skip:
        say("cold: logdir -> CSV ...")
        c = cold.cold(
            logdir, os.path.join(args.out, "cold"), repeats=args.repeats, peer_repeats=args.peer_repeats
        )
        results["cold"] = c
        say(
            f"  tb-aggregate {c['ours']['wall']:.2f} s, {measure.mb(c['ours']['peak_tree_rss'])} peak "
            f"(via {c['ours']['via']})"
        )
        diff = c["max_abs_difference"]
        same = f"same numbers within {diff:.1e}" if isinstance(diff, float) else diff
        say(
            f"  tb-reducer   {c['peer']['wall']:.2f} s, {measure.mb(c['peer']['peak_tree_rss'])} peak; {same}"
        )
    if "cold" not in args.skip and not args.no_per_value:
        # The same points written one event per value (SummaryWriter.add_scalar for each tag).
        pv_logdir = generate.ensure(main_size["runs"], main_size["tags"], main_size["steps"], per_value=True)
        say(f"cold, one event per value ({measure.mb(generate.logdir_bytes(pv_logdir))}) ...")
        c = cold.cold(
            pv_logdir,
            os.path.join(args.out, "cold_per_value"),
            repeats=args.repeats,
            peer_repeats=args.peer_repeats,
        )
        c["bytes"] = generate.logdir_bytes(pv_logdir)
        results["cold_per_value"] = c
        say(f"  tb-aggregate {c['ours']['wall']:.2f} s, {measure.mb(c['ours']['peak_tree_rss'])} peak")
        say(f"  tb-reducer   {c['peer']['wall']:.2f} s, {measure.mb(c['peer']['peak_tree_rss'])} peak")
    if "warm" not in args.skip:
        loaders = [True] + ([False] if args.python_loader else [])
        results["warm"] = []
        for load_fast in loaders:
            say(f"warm ({'rust' if load_fast else 'python'} loader) ...")
            w = warm.warm(logdir, load_fast=load_fast, runs=main_size["runs"], repeats=args.repeats)
            results["warm"].append(w)
            o, p = w["ours"], w["peer"]
            say(
                f"  scalars plugin, {p['points_served']:,} sampled points of every tag: "
                f"{p['multirun_all_tags']:.2f} s"
            )
            say(
                f"  /export, every point of every tag: first {o['export_first']:.2f} s, "
                f"again {o['export_repeat']:.2f} s, with smoothing {o['export_smoothing']:.2f} s"
            )
            say(
                f"  /aggregate first {o['chart_first']:.3f} s; second / first (worst tag): "
                + ", ".join(f"{k} {v:.2f}" for k, v in o["second_over_first"].items())
            )
    if "sweep" not in args.skip:
        say("sweep ...")
        results["sweep"] = sweep.sweep(args.out, quick=args.quick, peer_max_points=5_000_000, log=say)
    if "browser" not in args.skip:
        why_not = browser.available()
        if why_not:
            say(f"browser: skipped ({why_not})")
            results["browser"] = {"skipped": why_not}
        else:
            size = BROWSER_QUICK if args.quick else BROWSER
            blog = generate.ensure(size["runs"], size["tags"], size["steps"], size["groups"])
            say(
                f"browser: {size['tags']} tags x {size['groups']} groups ({size['runs']} runs x "
                f"{size['steps']} steps) ..."
            )
            b = browser.browser(blog, runs=size["runs"], repeats=args.repeats)
            results["browser"] = {**b, "scenario": size}
            say(
                f"  {b['visible_drawn']}/{b['visible']} visible charts of {b['cards']} drawn; "
                f"first data arrival to all drawn {b['first_arrival_to_all_drawn_ms']:.0f} ms (worst "
                f"{b['worst_first_arrival_to_all_drawn_ms']:.0f}), slowest single chart "
                f"{b['max_per_card_ms']:.0f} ms, tab open to all drawn {b['open_to_all_drawn_ms']:.0f} ms"
            )

    results["machine"]["load_average_at_end"] = os.getloadavg()
    results["ratios"] = ratios(results)
    results["seconds"] = time.time() - started
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = os.path.join(args.out, f"results-{stamp}{'-quick' if args.quick else ''}.json")
    with open(path, "w") as f:
        json.dump(results, f, indent=1, default=str)
    say("")
    if args.quick:
        say("(--quick: sizes too small for the ratios to say anything about the targets)")
    say(f"{'ratio':60} {'measured':>10}  {'target':10}")
    for name, (value, target, higher, unit) in results["ratios"].items():
        shown = "n/a" if value is None else (f"{value:.1f}{unit}" if unit else f"{value:.3f}")
        want = f">= {target:g}{unit}" if higher else f"<= {target:.3g}{unit}"
        say(f"{name:60} {shown:>10}  {want:10}  {verdict(value, target, higher)}")
    if not args.no_plot and "sweep" in results:
        import plot

        png = plot.plot(
            results, os.path.join(HERE, "time_vs_size.png" if not args.quick else "out/quick.png")
        )
        say(f"plot: {png}")
    say(f"all numbers: {path} ({results['seconds'] / 60:.1f} min)")
    return 0


def ratios(results: dict) -> dict:
    """``name: (value, target, higher_is_better, unit)`` for each target of the issue."""
    out = {}
    c = results.get("cold")
    if c and "peer" in c:
        out["cold: tb-reducer time / ours"] = (c["speedup"], TARGETS["cold_speedup"], True, "x")
        out["cold: our peak memory / tb-reducer's"] = (c["memory_ratio"], TARGETS["cold_memory"], False, "")
    c = results.get("cold_per_value")
    if c and "peer" in c:
        out["cold, one event per value: tb-reducer time / ours"] = (
            c["speedup"],
            TARGETS["cold_speedup"],
            True,
            "x",
        )
        out["cold, one event per value: our peak memory / tb-reducer's"] = (
            c["memory_ratio"],
            TARGETS["cold_memory"],
            False,
            "",
        )
    for w in results.get("warm", []):
        name = f"warm ({w['loader']}): "
        out[name + "first /export / scalars plugin"] = (
            w["export_first_over_peer"],
            TARGETS["warm_export"],
            False,
            "",
        )
        out[name + "cached /export / scalars plugin"] = (
            w["export_repeat_over_peer"],
            TARGETS["warm_export"],
            False,
            "",
        )
        for kind, value in w["ours"]["second_over_first_median"].items():
            out[name + f"second ({kind}) / first chart, median tag"] = (
                value,
                TARGETS["second_request"],
                False,
                "",
            )
        for kind, value in w["ours"]["second_over_first"].items():
            out[name + f"second ({kind}) / first chart, worst tag"] = (
                value,
                TARGETS["second_request"],
                False,
                "",
            )
        if "second_after_pause_over_first" in w["ours"]:
            out[name + "second (smoothing, after 1.5 s) / first"] = (
                w["ours"]["second_after_pause_over_first"],
                TARGETS["second_request"],
                False,
                "",
            )
        out[name + "/export with smoothing / first"] = (
            w["ours"]["export_smoothing_over_first"],
            TARGETS["second_request"],
            False,
            "",
        )
    b = results.get("browser")
    if b and "skipped" not in b:
        out["browser: data arrival -> all visible drawn"] = (
            b["worst_first_arrival_to_all_drawn_ms"],
            TARGETS["browser_ms"],
            False,
            " ms",
        )
    return out


if __name__ == "__main__":
    sys.exit(main())
