"""Load: many users of the Aggregate tab at once on one ``tensorboard``.

20 concurrent clients each send 50 requests, a deterministic mix of ``/aggregate`` (the chart of one
tag, with the settings a user changes: band, center, smoothing, x axis, individual runs) and
``/export`` (CSV or JSON, one tag or every tag, at full resolution), against a real ``tensorboard``
(``--samples_per_plugin scalars=0``) on a 200-run logdir written with tensorboardX and cached under
``benchmarks/.cache/``. Before the clock starts, every tag is requested once so the load measures
serving, not the first read of the event data. Every answer must be a 200 with a complete body.

    python benchmarks/load.py                  # prints the figures
    python benchmarks/load.py --write          # and puts them in RESULTS.md, section "## Load"
    python benchmarks/load.py --load-fast false --clients 4 --requests 10   # smaller, Python loader
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import platform
import random
import sys
import threading
import time

import numpy as np
import requests

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import generate  # noqa: E402
import warm  # noqa: E402

AGG = "/data/plugin/aggregate"
SCENARIO = {"runs": 200, "tags": 5, "steps": 1000, "groups": 20}  # 20 groups of 10 seeds, 1M points
RESULTS = os.path.join(HERE, "RESULTS.md")
SECTION = "## Load"


def request_mix(tags: list[str], count: int, seed: int) -> list[tuple[str, dict]]:
    """``count`` requests of one client: about 60 % charts, 40 % exports (a quarter of them all tags)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        tag = rng.choice(tags)
        if rng.random() < 0.6:
            params = {
                "tag": tag,
                "band": rng.choice(["std", "sem", "ci95", "minmax", "iqr"]),
                "center": rng.choice(["mean", "median"]),
                "smoothing": rng.choice(["0", "0.6", "0.9"]),
                "x": rng.choice(["step", "step", "relative"]),
                "include_runs": rng.choice(["0", "0", "1"]),
            }
            out.append(("/aggregate", params))
        else:
            params = {"format": rng.choice(["csv", "json"]), "band": rng.choice(["std", "ci95"])}
            if rng.random() >= 0.25:
                params["tag"] = tag
            out.append(("/export", params))
    return out


def client(base: str, plan: list[tuple[str, dict]], start: threading.Barrier) -> list[dict]:
    """Send the plan one request after another; one record per request."""
    records = []
    with requests.Session() as session:
        start.wait()
        for route, params in plan:
            began = time.perf_counter()
            try:
                response = session.get(f"{base}{AGG}{route}", params=params, timeout=600)
                size, status = len(response.content), response.status_code
                error = None if status == 200 else f"{status}: {response.text[:200].strip()}"
            except requests.RequestException as exc:
                size, status, error = 0, None, repr(exc)
            records.append(
                {
                    "route": route,
                    "all_tags": route == "/export" and "tag" not in params,
                    "seconds": time.perf_counter() - began,
                    "status": status,
                    "bytes": size,
                    "error": error,
                }
            )
    return records


def run_load(
    base: str, tags: list[str], clients: int, per_client: int, first_seed: int = 0
) -> tuple[list[dict], float]:
    plans = [request_mix(tags, per_client, first_seed + i) for i in range(clients)]
    barrier = threading.Barrier(clients)
    began = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        futures = [pool.submit(client, base, plan, barrier) for plan in plans]
        records = [r for f in futures for r in f.result()]
    return records, time.perf_counter() - began


def summarize(records: list[dict], wall: float) -> dict:
    def stats(rows: list[dict]) -> dict:
        if not rows:
            return {"count": 0}
        seconds = np.array([r["seconds"] for r in rows])
        return {
            "count": len(rows),
            "p50": float(np.percentile(seconds, 50)),
            "p95": float(np.percentile(seconds, 95)),
            "max": float(seconds.max()),
            "mean_bytes": float(np.mean([r["bytes"] for r in rows])),
        }

    errors = [r for r in records if r["status"] != 200]
    return {
        "requests": len(records),
        "errors": len(errors),
        "error_examples": sorted({r["error"] for r in errors})[:5],
        "wall": wall,
        "throughput": len(records) / wall,
        "all": stats(records),
        "/aggregate": stats([r for r in records if r["route"] == "/aggregate"]),
        "/export one tag": stats([r for r in records if r["route"] == "/export" and not r["all_tags"]]),
        "/export all tags": stats([r for r in records if r["all_tags"]]),
    }


def markdown(summary: dict, alone: dict, args, logdir_bytes: int, load_before: float) -> str:
    runs, tags, steps, groups = (SCENARIO[k] for k in ("runs", "tags", "steps", "groups"))
    lines = [
        SECTION,
        "",
        f"`python benchmarks/load.py --write`: {args.clients} concurrent clients x {args.requests} requests "
        f"against one `tensorboard --samples_per_plugin scalars=0 --load_fast={args.load_fast}` on "
        f"{runs} runs ({groups} groups of {runs // groups} seeds) x {tags} tags x {steps} steps "
        f"({runs * tags * steps:,} points, {logdir_bytes / 1e6:.0f} MB of event files, tensorboardX). "
        "Each client mixes about 60 % `/aggregate` (one tag; band, center, smoothing, x axis and individual "
        "runs varied) and 40 % `/export` (CSV or JSON at full resolution, a quarter of them every tag). "
        "Every tag was requested once before the clock started. "
        f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}; the clients run on the same "
        "machine as the server.",
        "",
        f"- Requests: **{summary['requests']}**, errors (non-200 or no answer, in either run): "
        f"**{summary['errors']}**",
        f"- Latency over all requests: **p50 {summary['all']['p50'] * 1000:.0f} ms, "
        f"p95 {summary['all']['p95'] * 1000:.0f} ms** (max {summary['all']['max'] * 1000:.0f} ms)",
        f"- Throughput: {summary['throughput']:.1f} requests/s ({summary['wall']:.1f} s for the whole load)",
        f"- The same mix from one client alone ({alone['requests']} requests): p50 "
        f"{alone['all']['p50'] * 1000:.0f} ms, p95 {alone['all']['p95'] * 1000:.0f} ms, "
        f"{alone['throughput']:.1f} requests/s",
        f"- Other work on the machine: load average {load_before:.1f} just before the run",
        "",
        "| request | count | p50 | p95 | max | mean body |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in ("/aggregate", "/export one tag", "/export all tags"):
        s = summary[name]
        if not s["count"]:
            continue
        lines.append(
            f"| `{name}` | {s['count']} | {s['p50'] * 1000:.0f} ms | {s['p95'] * 1000:.0f} ms | "
            f"{s['max'] * 1000:.0f} ms | {s['mean_bytes'] / 1e3:.0f} kB |"
        )
    lines += [
        "",
        "The server answers requests on threads of one Python process, so concurrent requests mostly wait "
        f"their turn: with {args.clients} clients a request waits for about {args.clients} / throughput "
        "seconds, which is what the p50 shows; throughput stays about what one client alone gets.",
        "",
    ]
    return "\n".join(lines)


def write_section(text: str, path: str = RESULTS) -> None:
    """Replace (or add) the ``## Load`` section of RESULTS.md, leaving every other section as it is."""
    old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    lines = old.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == SECTION), None)
    if start is None:
        new = old + ("\n" if old and not old.endswith("\n\n") else "") + text
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        new = "".join(lines[:start]) + text + ("\n" if end < len(lines) else "") + "".join(lines[end:])
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--requests", type=int, default=50, help="requests per client")
    parser.add_argument("--load-fast", choices=["true", "false"], default="true")
    parser.add_argument("--write", action="store_true", help=f"put the figures in RESULTS.md, {SECTION!r}")
    args = parser.parse_args(argv)

    logdir = generate.ensure(**SCENARIO)
    tags = generate.tag_names(SCENARIO["tags"])
    with warm.tensorboard(
        logdir, load_fast=args.load_fast == "true", samples=0, expect_runs=SCENARIO["runs"]
    ) as (
        base,
        _,
    ):
        for tag in tags:  # the first read of each tag is not what this measures
            requests.get(f"{base}{AGG}/aggregate", params={"tag": tag}, timeout=600).raise_for_status()
        alone = summarize(*run_load(base, tags, 1, 30, first_seed=1000))
        before = os.getloadavg()[0]  # other work sharing the cores
        records, wall = run_load(base, tags, args.clients, args.requests)
    summary = summarize(records, wall)
    errors = summary["errors"] + alone["errors"]
    summary["errors"] = errors
    text = markdown(summary, alone, args, generate.logdir_bytes(logdir), before)
    print(text)
    if args.write:
        write_section(text)
    if errors:
        print(f"ERRORS: {summary['error_examples'] + alone['error_examples']}", file=sys.stderr)
    return summary


if __name__ == "__main__":
    sys.exit(1 if main()["errors"] else 0)
