"""Warm: requests to a running ``tensorboard``, ours against TensorBoard's own scalars plugin.

Ours runs in ``tensorboard --samples_per_plugin scalars=0`` (every point kept): ``/export`` of every
tag at full resolution, and the tab's chart request ``/aggregate?tag=`` followed by a second request
that changes only smoothing, band or center. The peer is TensorBoard's scalars plugin in a server with
its default sampling (1,000 points per series), fetching the same runs' sampled raw series the way its
frontend does: one ``POST /data/plugin/scalars/scalars_multirun`` per tag with every run.

Each server is started alone (the other is stopped first), waits until every run is loaded, and
loads the logdir once (``--reload_interval 0``) so no reload competes with the measured requests.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import measure
import requests

AGG = "/data/plugin/aggregate"
SCALARS = "/data/plugin/scalars"
# Longer than the time a listing of the data server is reused (source.LISTING_TTL).
PAUSE = 1.5


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def tensorboard(logdir: str, *, load_fast: bool, samples: int | None, expect_runs: int):
    """A ``tensorboard`` process on ``logdir``; yields ``(base_url, pid)`` once every run is loaded."""
    port = _free_port()
    args = [sys.executable, "-m", "tensorboard.main", "--logdir", logdir, "--host", "127.0.0.1"]
    args += ["--port", str(port), f"--load_fast={'true' if load_fast else 'false'}", "--reload_interval", "0"]
    if samples is not None:
        args += ["--samples_per_plugin", f"scalars={samples}"]
    log = tempfile.NamedTemporaryFile(prefix="tensorboard-bench-", suffix=".log", delete=False)
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_loaded(base, expect_runs, proc, log.name)
        yield base, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        os.unlink(log.name)


def _wait_loaded(base: str, runs: int, proc, log: str, timeout: float = 1800) -> None:
    """Until every run is listed and the server's processes have stopped working (load finished).

    A server that keeps every point serves no raw series through the scalars plugin, and the tab's
    routes would fill the cache being measured, so the end of loading is read from the process tree's
    CPU time: it loads once (``--reload_interval 0``), then idles.
    """
    deadline = time.monotonic() + timeout
    quiet = 0
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"tensorboard exited ({proc.returncode}); see {log}")
        try:
            listed = len(requests.get(f"{base}{SCALARS}/tags", timeout=120).json())
        except (requests.RequestException, ValueError):
            listed = 0
        if listed < runs:
            quiet = 0
            time.sleep(0.5)
            continue
        # Idle between two readings with no request of ours in between: twice in a row.
        before = measure.cpu_seconds(proc.pid)
        time.sleep(1.0)
        quiet = quiet + 1 if measure.cpu_seconds(proc.pid) - before < 0.05 else 0
        if quiet >= 2:
            return
    raise TimeoutError(f"tensorboard did not load {runs} runs in {timeout} s; see {log}")


def _multirun(session, base: str, tag: str, runs: list[str]) -> dict:
    r = session.post(f"{base}{SCALARS}/scalars_multirun", data={"tag": tag, "runs": runs}, timeout=600)
    r.raise_for_status()
    return r.json()


def _timed_get(session, url: str, params: dict) -> tuple[float, int]:
    start = time.perf_counter()
    r = session.get(url, params=params, timeout=600)
    body = r.content  # the whole body received
    elapsed = time.perf_counter() - start
    r.raise_for_status()
    return elapsed, len(body)


def ours(logdir: str, *, load_fast: bool, runs: int, repeats: int = 3) -> dict:
    """Our routes in a server that keeps every point."""
    out: dict = {}
    server = functools.partial(tensorboard, logdir, load_fast=load_fast, expect_runs=runs)
    with server(samples=0) as (base, pid):
        s = requests.Session()
        listing = s.get(f"{base}{AGG}/runs", timeout=600).json()
        tags = listing["tags"]
        export = {"format": "csv"}
        # The first export reads every point from TensorBoard; later ones reuse the tab's cache.
        out["export_first"], out["export_bytes"] = _timed_get(s, f"{base}{AGG}/export", export)
        out["export_repeat"] = statistics.median(
            _timed_get(s, f"{base}{AGG}/export", export)[0] for _ in range(repeats)
        )
        out["export_smoothing"] = _timed_get(s, f"{base}{AGG}/export", {**export, "smoothing": "0.6"})[0]
        out["server_rss_after_export"] = sum(measure.rss(p) for p in measure.tree(pid))
    # A fresh server, so every chart's first request reads its tag for the first time, as in the tab.
    with server(samples=0) as (base, _):
        s = requests.Session()
        s.get(f"{base}{AGG}/runs", timeout=600).raise_for_status()
        # Each change made three times, the median taken (a single ~20 ms request is noisy): the
        # smoothing with a new weight each time (each computed anew), band and center as they are.
        changes = {
            "smoothing": [{"smoothing": w} for w in ("0.6", "0.65", "0.7")],
            "band": [{"band": "minmax"}] * 3,
            "center": [{"center": "median"}] * 3,
        }
        pairs: dict[str, list[float]] = {kind: [] for kind in changes}
        firsts, paused = [], []
        for tag in tags:
            first, _ = _timed_get(s, f"{base}{AGG}/aggregate", {"tag": tag})
            firsts.append(first)
            for kind, variants in changes.items():
                seconds = [_timed_get(s, f"{base}{AGG}/aggregate", {"tag": tag, **p})[0] for p in variants]
                pairs[kind].append(statistics.median(seconds) / first)
            # The same kind of change after a pause, when the listing of the runs is asked for again.
            time.sleep(PAUSE)
            later, _ = _timed_get(s, f"{base}{AGG}/aggregate", {"tag": tag, "smoothing": "0.9"})
            paused.append(later / first)
        out["chart_first"] = statistics.median(firsts)
        out["second_over_first"] = {k: max(v) for k, v in pairs.items() if v}
        out["second_over_first_median"] = {k: statistics.median(v) for k, v in pairs.items() if v}
        out["second_after_pause_over_first"] = statistics.median(paused)
    out["export_smoothing_over_first"] = out["export_smoothing"] / out["export_first"]
    return out


def peer(logdir: str, *, load_fast: bool, runs: int, repeats: int = 3) -> dict:
    """TensorBoard's scalars plugin serving the sampled raw series of every tag and run."""
    out: dict = {}
    server = functools.partial(tensorboard, logdir, load_fast=load_fast, expect_runs=runs)
    with server(samples=None) as (base, _):
        s = requests.Session()
        listing = s.get(f"{base}{SCALARS}/tags", timeout=600).json()
        run_names = sorted(listing)
        tags = sorted({t for r in listing.values() for t in r})
        times, points = [], 0
        for _ in range(repeats):
            start = time.perf_counter()
            points = 0
            for tag in tags:
                points += sum(len(v) for v in _multirun(s, base, tag, run_names).values())
            times.append(time.perf_counter() - start)
        out["multirun_all_tags"] = statistics.median(times)
        out["multirun_runs"] = times
        out["points_served"] = points
    return out


def warm(logdir: str, *, load_fast: bool, runs: int, repeats: int = 3) -> dict:
    result = {"loader": "rust" if load_fast else "python"}
    result["peer"] = peer(logdir, load_fast=load_fast, runs=runs, repeats=repeats)
    result["ours"] = ours(logdir, load_fast=load_fast, runs=runs, repeats=repeats)
    p = result["peer"]["multirun_all_tags"]
    result["export_first_over_peer"] = result["ours"]["export_first"] / p
    result["export_repeat_over_peer"] = result["ours"]["export_repeat"] / p
    return result
