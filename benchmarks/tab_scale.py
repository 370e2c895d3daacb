"""The tab on a large logdir: 2,000 runs x 20 tags x 1,000 steps (40M points) in 4 groups.

One ``tensorboard`` per checkout (its own code and its own tab, pinned first on its path), started on
the same cached logdir with TensorBoard's defaults (Rust data server, 1,000 points per series),
loaded once (``--reload_interval 0``, so every CPU second after loading is the tab's). Then:

- first chart: headless Chromium opens ``/#aggregate``; the time from the tab's start (its frame's
  time origin) to the first chart drawn: on the fresh server (first open after loading, a browser
  that never opened it), and on the warm server (after the idle part) in the same browser (its
  cache holds plotly.min.js) and in a new one; and from the navigation to TensorBoard's page;
- idle: the first page is left open for three of its 30 s polls; the server's CPU seconds for the
  first and per later poll, and TensorBoard's own share (its page reloads every 30 s too), measured
  with another dashboard shown (the hidden tab does not poll);
- cached chart: a chart the tab drew, asked again 2 s after the fresh open (the listing not yet
  settled) and, later, after pauses of 0 to 10 s (the data unchanged);
- summary: ``/summary`` asked twice, and a cached chart asked while a new summary is computed.

    python benchmarks/tab_scale.py                            # this checkout
    python benchmarks/tab_scale.py --before ../old-checkout   # and another, side by side
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import browser  # noqa: E402
import generate  # noqa: E402
import measure  # noqa: E402
import warm  # noqa: E402

PAUSES = (0.0, 1.5, 3.0, 10.0)
IDLE_SECONDS = 60.0  # two of the tab's 30 s polls (--idle), after the first one

# tensorboard's command line with ``repo``'s package and tab first on the path (an editable install
# of another checkout maps the tab's files by name; this finder maps them to ``repo/frontend``).
_BOOTSTRAP = """
import importlib.util, os, sys
repo = sys.argv.pop(1)
sys.path.insert(0, repo)
class Finder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "tb_aggregate_plugin.static":
            return None
        front = os.path.join(repo, "frontend")
        return importlib.util.spec_from_file_location(
            name, os.path.join(front, "__init__.py"), submodule_search_locations=[front])
sys.meta_path.insert(0, Finder)
from tensorboard import main
main.run_main()
"""

_FIRST_DRAW = """() => {
    const draws = performance.getEntriesByType('measure').filter(m => m.name.startsWith('aggregate:draw:'));
    if (!draws.length) return null;
    const end = Math.min(...draws.map(m => m.startTime + m.duration));
    const urls = performance.getEntriesByType('resource').map(r => r.name);
    return {
        first_drawn_epoch_ms: performance.timeOrigin + end,
        first_drawn_ms: end,
        summary_requests: urls.filter(u => u.includes('/summary?') || u.endsWith('/summary')).length,
        chart_urls: urls.filter(u => u.includes('/aggregate?')),
        runs_url: urls.filter(u => u.includes('/runs')).pop() || null,
        // Where the time went: each request of the tab's (start and end, ms from the tab's start).
        requests: performance.getEntriesByType('resource').map(r => [
            r.name.split('/').pop().split('?')[0], Math.round(r.startTime), Math.round(r.responseEnd)]),
        first_draw_started_ms: Math.min(...draws.map(m => m.startTime)),
    };
}"""


@contextlib.contextmanager
def serve(logdir: str, repo: str, runs: int):
    """A ``tensorboard`` on ``logdir`` running ``repo``'s plugin; yields ``(base_url, pid)`` once loaded."""
    port = warm._free_port()
    args = [sys.executable, "-c", _BOOTSTRAP, os.path.abspath(repo), "--logdir", logdir]
    args += ["--host", "127.0.0.1", "--port", str(port), "--reload_interval", "0"]
    log = tempfile.NamedTemporaryFile(prefix="tensorboard-tab-", suffix=".log", delete=False)
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        warm._wait_loaded(base, runs, proc, log.name)
        yield base, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        os.unlink(log.name)


def _timed(session: requests.Session, url: str) -> float:
    start = time.perf_counter()
    r = session.get(url, timeout=600)
    _ = r.content
    elapsed = time.perf_counter() - start
    r.raise_for_status()
    return elapsed


def _open(context, base: str) -> tuple[object, dict]:
    """A new page of ``context`` on the tab; its first chart's time and what it asked for."""
    page = context.new_page()
    start_ms = time.time() * 1000
    page.goto(f"{base}/#aggregate", timeout=browser.TIMEOUT_MS)
    frame = page.wait_for_selector(
        "iframe[src*='name=aggregate']", timeout=browser.TIMEOUT_MS
    ).content_frame()
    frame.wait_for_function(
        "() => Number(document.documentElement.dataset.aggregateCycles) >= 1", timeout=browser.TIMEOUT_MS
    )
    seen = frame.evaluate(_FIRST_DRAW)
    # From the tab's own start (its frame's time origin: TensorBoard's page has loaded, the tab opens),
    # and from the navigation to TensorBoard's page (its own frontend's load included).
    seen["first_chart_ms"] = seen.pop("first_drawn_ms")
    seen["first_chart_from_page_ms"] = seen.pop("first_drawn_epoch_ms") - start_ms
    return page, seen


def _cpu_over(pid: int, seconds: float) -> float:
    cpu = measure.cpu_seconds(pid)
    time.sleep(seconds)
    return measure.cpu_seconds(pid) - cpu


def measure_checkout(logdir: str, repo: str, runs: int, idle: float = IDLE_SECONDS) -> dict:
    """Every figure of the module docstring for the tab of ``repo``."""
    from playwright.sync_api import sync_playwright

    out: dict = {"repo": repo}
    with serve(logdir, repo, runs) as (base, pid), sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=browser.CHROMIUM, args=browser.CHROMIUM_ARGS, headless=True
        )
        viewport = {"viewport": {"width": 1400, "height": 900}}
        try:
            # Fresh: the first open of a browser that has never seen the tab, on a server just loaded.
            first = chromium.new_context(**viewport)
            page, fresh = _open(first, base)
            # A chart the tab drew, asked again 2 s later: the listing of the open is not settled yet.
            time.sleep(2.0)
            out["cached_chart_unsettled_s"] = _timed(requests.Session(), fresh["chart_urls"][0])
            # Left open: what its polls cost the server while nothing changes. The first poll finds
            # the listing of the open not yet settled and asks the data server again (see Source).
            time.sleep(1.0)
            out["first_poll_cpu_s"] = _cpu_over(pid, 30.0)
            out["idle_cpu_s"] = _cpu_over(pid, idle)
            out["idle_polls"] = max(int(idle // 30), 1)
            out["idle_cpu_per_poll_s"] = out["idle_cpu_s"] / out["idle_polls"]
            # TensorBoard's own page reloads every 30 s too: its cost, with another dashboard shown
            # (the tab, hidden, does not poll), is the part that is not the tab's.
            page.evaluate("() => { location.hash = 'text'; }")
            out["tensorboard_alone_cpu_per_30s"] = _cpu_over(pid, idle) / out["idle_polls"]
            page.close()
            # Warm: the same browser opening the tab again (its cache holds plotly.min.js), and a
            # browser that never has.
            page, warm_same = _open(first, base)
            page.close()
            other = chromium.new_context(**viewport)
            page, warm_new = _open(other, base)
            other.close()
            first.close()
        finally:
            chromium.close()
        seen = [fresh, warm_same, warm_new]
        out["first_chart_fresh_ms"] = fresh["first_chart_ms"]
        out["first_chart_warm_same_browser_ms"] = warm_same["first_chart_ms"]
        out["first_chart_warm_new_browser_ms"] = warm_new["first_chart_ms"]
        out["first_chart_from_page_ms"] = [s["first_chart_from_page_ms"] for s in seen]
        out["summary_requests_on_open"] = max(s["summary_requests"] for s in seen)
        out["opens"] = [{k: v for k, v in s.items() if k != "chart_urls"} for s in seen]
        session = requests.Session()
        out["poll_runs_s"] = _timed(session, fresh["runs_url"])
        chart = fresh["chart_urls"][0]
        cached = []
        for pause in PAUSES:
            time.sleep(pause)
            cached.append(_timed(session, chart))
        out["cached_chart_s"] = dict(zip((f"after {p:g} s" for p in PAUSES), cached))
        out["new_smoothing_chart_s"] = _timed(session, chart + "&smoothing=0.37")
        summary = chart.replace("/aggregate?", "/summary?")
        summary = "&".join(p for p in summary.split("&") if not p.startswith(("tag=", "max_points=")))
        out["summary_first_s"] = _timed(session, summary)
        out["summary_again_s"] = _timed(session, summary)
        # A chart asked for while a summary of new settings is computed.
        busy = threading.Thread(target=_timed, args=(requests.Session(), summary + "&smoothing=0.41"))
        busy.start()
        time.sleep(0.1)
        out["chart_during_summary_s"] = _timed(session, chart)
        busy.join()
    return out


def markdown(results: list[dict], labels: list[str]) -> str:
    rows = [
        ("first chart, fresh server (new browser)", lambda r: f"{r['first_chart_fresh_ms'] / 1000:.2f} s"),
        (
            "first chart, warm server, same browser",
            lambda r: f"{r['first_chart_warm_same_browser_ms'] / 1000:.2f} s",
        ),
        (
            "first chart, warm server, new browser",
            lambda r: f"{r['first_chart_warm_new_browser_ms'] / 1000:.2f} s",
        ),
        (
            "the same three from the page's navigation",
            lambda r: ", ".join(f"{v / 1000:.2f}" for v in r["first_chart_from_page_ms"]) + " s",
        ),
        ("/summary requests on opening", lambda r: str(r["summary_requests_on_open"])),
        ("idle open tab: server CPU, first poll", lambda r: f"{r['first_poll_cpu_s']:.3f} s"),
        ("idle open tab: server CPU per later poll", lambda r: f"{r['idle_cpu_per_poll_s']:.3f} s"),
        (
            "of which TensorBoard's own page (per 30 s)",
            lambda r: f"{r['tensorboard_alone_cpu_per_30s']:.3f} s",
        ),
        ("a poll's /runs, answered", lambda r: f"{r['poll_runs_s']:.3f} s"),
        (
            "cached chart again 2 s after the open (listing not yet settled)",
            lambda r: f"{r['cached_chart_unsettled_s']:.3f} s",
        ),
        (
            "cached chart again, after 0 / 1.5 / 3 / 10 s",
            lambda r: " / ".join(f"{v:.3f}" for v in r["cached_chart_s"].values()) + " s",
        ),
        ("chart with a new smoothing (series cached)", lambda r: f"{r['new_smoothing_chart_s']:.3f} s"),
        ("/summary, first / again", lambda r: f"{r['summary_first_s']:.2f} / {r['summary_again_s']:.3f} s"),
        ("cached chart while a summary computes", lambda r: f"{r['chart_during_summary_s']:.3f} s"),
    ]
    head = "| | " + " | ".join(labels) + " |\n|---|" + "---|" * len(labels) + "\n"
    return head + "\n".join(f"| {name} | " + " | ".join(f(r) for r in results) + " |" for name, f in rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--tags", type=int, default=20)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--groups", type=int, default=4)
    parser.add_argument("--before", help="another checkout, measured first on the same logdir")
    parser.add_argument("--idle", type=float, default=IDLE_SECONDS, help="seconds the last page stays open")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    reason = browser.available()
    if reason:
        sys.exit(f"cannot measure the tab: {reason}")
    logdir = generate.ensure(args.runs, args.tags, args.steps, args.groups)
    repos = ([args.before] if args.before else []) + [os.path.dirname(HERE)]
    labels = ["before", "after"] if args.before else ["this checkout"]
    load = os.getloadavg()[0]
    results = []
    for repo in repos:
        print(f"measuring {repo} ...", file=sys.stderr, flush=True)
        results.append(measure_checkout(logdir, repo, args.runs, args.idle))
    print(
        f"{args.runs} runs x {args.tags} tags x {args.steps} steps, {args.groups} groups; load {load:.2f}\n"
    )
    print(markdown(results, labels))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"load": load, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
