"""Screenshot of the Aggregate tab on demo_logs/ for the README, taken with the browser the tests use.

Starts ``tensorboard --logdir demo_logs`` on a free port, opens ``/#aggregate`` in headless Chromium,
hovers one chart so the tooltip shows, and writes ``docs/screenshot.png``. With ``--dark`` it first
picks Dark in TensorBoard's theme menu (as a person would) and writes ``docs/screenshot-dark.png``.

It also prints how long the page takes from the arrival of the chart data to every visible chart
drawn (``performance.now()`` marks in the page): on a first visit (nothing cached, so Plotly.js is
still loading), on a reload (Plotly.js cached), and after changing a setting (Plotly.js running).
``--measure N`` repeats each N times and prints the medians.

Usage: python scripts/screenshot.py [--dark] [--out docs/screenshot.png] [--measure N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests"))  # the same server and browser helpers as the tests

from browser import Tab, chromium  # noqa: E402
from server import tensorboard  # noqa: E402

WIDTH, HEIGHT = 1400, 860
BANDS = ["minmax", "std"]


def next_cycle(tab: Tab, after: int) -> dict:
    """Timings of the first draw cycle after the ``after``-th that drew something."""
    tab.frame.wait_for_function(
        "(n) => window.__aggregateTab.cycles.slice(n).some(c => c.drawn > 0)", arg=after, timeout=120_000
    )
    return tab.frame.evaluate("(n) => window.__aggregateTab.cycles.slice(n).find(c => c.drawn > 0)", after)


def report(label: str, cycle: dict) -> float:
    ms = cycle["arrivalToDrawnMs"]
    print(f"{label}: chart data arrived -> {cycle['drawn']} visible charts drawn in {ms:.0f} ms")
    return ms


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="default: docs/screenshot.png, or docs/screenshot-dark.png with --dark")
    parser.add_argument("--dark", action="store_true", help="TensorBoard's dark theme (picked in its menu)")
    parser.add_argument("--logdir", default=os.path.join(REPO, "demo_logs"))
    parser.add_argument("--measure", type=int, default=1, help="repetitions of each timing (default 1)")
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = os.path.join(REPO, "docs", "screenshot-dark.png" if args.dark else "screenshot.png")

    times: dict[str, list[float]] = {"first visit": [], "reload": [], "setting changed": []}
    with tensorboard(args.logdir) as base, chromium() as browser:
        for i in range(max(args.measure, 1)):
            tab = Tab(browser, base, viewport=(WIDTH, HEIGHT))  # a fresh context: nothing cached
            times["first visit"].append(report("first visit", next_cycle(tab, 0)))
            if i == 0:
                tab.wait_drawn("val/loss")
                if args.dark:
                    tab.set_theme("Dark")
                    # The charts are redrawn in the dark theme's colors (the page's are CSS).
                    tab.frame.wait_for_function(
                        """() => document.documentElement.dataset.theme === 'dark' && [...document
                            .querySelectorAll('.card .plot')].filter(gd => gd._fullLayout).every(gd =>
                            gd._fullLayout.paper_bgcolor === getComputedStyle(document.documentElement)
                                .getPropertyValue('--chart-bg').trim())"""
                    )
                tab.frame.evaluate("() => document.querySelector('.main').scrollTo(0, 0)")
                tab.hover("train/loss", 300)
                os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
                tab.page.screenshot(path=args.out)
                print(f"wrote {args.out}")
            tab.reload()
            times["reload"].append(report("reload", next_cycle(tab, 0)))
            for band in BANDS:
                done = tab.cycles()
                tab.ui.locator("select[name=band]").select_option(band)
                times["setting changed"].append(report(f"band -> {band}", next_cycle(tab, done)))
            tab.close()
    if args.measure > 1:
        for label, values in times.items():
            print(f"median {label}: {statistics.median(values):.0f} ms over {len(values)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
