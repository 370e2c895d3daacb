"""Screenshot of the Aggregate tab on demo_logs/ for the README, taken with the browser the tests use.

Starts ``tensorboard --logdir demo_logs`` on a free port, opens ``/#aggregate`` in headless Chromium,
hovers one chart so the tooltip shows, and writes ``docs/screenshot.png``. With ``--dark`` it first
picks Dark in TensorBoard's theme menu (as a person would) and writes ``docs/screenshot-dark.png``.
With ``--compare`` it writes ``docs/compare.png`` instead: the Compare section (val/loss, every pair)
under one card comparing two groups along the curve, as a person scrolls to them (``--dark`` too:
``docs/compare-dark.png``).

It also prints how long the page takes from the arrival of the chart data to every visible chart
drawn (``performance.now()`` marks in the page): on a first visit (nothing cached, so Plotly.js is
still loading), on a reload (Plotly.js cached), and after changing a setting (Plotly.js running).
``--measure N`` repeats each N times and prints the medians.

Usage: python scripts/screenshot.py [--dark] [--compare] [--out docs/screenshot.png] [--measure N]
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
# The Compare screenshot: a loss, so the direction reads "lower is better"; one card compares the two
# groups whose curves cross, so the strip shows where they differ and where they do not.
COMPARE_TAG = "val/loss"
ALONG = ("lr=0.1", "lr=0.03")
COMPARE_HEIGHT = 1000


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
    parser.add_argument(
        "--compare", action="store_true", help="the Compare section under a card compared along x"
    )
    parser.add_argument("--logdir", default=os.path.join(REPO, "demo_logs"))
    parser.add_argument("--measure", type=int, default=1, help="repetitions of each timing (default 1)")
    args = parser.parse_args(argv)
    if args.out is None:
        name = "compare" if args.compare else "screenshot"
        args.out = os.path.join(REPO, "docs", f"{name}-dark.png" if args.dark else f"{name}.png")
    if args.compare:
        with tensorboard(args.logdir) as base, chromium() as browser:
            compare_shot(browser, base, args)
        return 0

    times: dict[str, list[float]] = {"first visit": [], "reload": [], "setting changed": []}
    with tensorboard(args.logdir) as base, chromium() as browser:
        for i in range(max(args.measure, 1)):
            tab = Tab(browser, base, viewport=(WIDTH, HEIGHT))  # a fresh context: nothing cached
            times["first visit"].append(report("first visit", next_cycle(tab, 0)))
            if i == 0:
                tab.wait_drawn("val/loss")
                if args.dark:
                    dark_theme(tab)  # the charts redrawn in the dark theme's colors (the page's are CSS)
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


def dark_theme(tab: Tab) -> None:
    """Pick Dark in TensorBoard's menu and wait for the charts' redraw in its colors."""
    tab.set_theme("Dark")
    tab.frame.wait_for_function(
        """() => document.documentElement.dataset.theme === 'dark' && [...document
            .querySelectorAll('.card .plot')].filter(gd => gd._fullLayout).every(gd =>
            gd._fullLayout.paper_bgcolor === getComputedStyle(document.documentElement)
                .getPropertyValue('--chart-bg').trim())"""
    )


def compare_shot(browser, base: str, args) -> None:
    """The Compare section under a card comparing two groups along x, in one picture of the tab."""
    import json

    state = {"compare_tag": COMPARE_TAG, "along": json.dumps({COMPARE_TAG: list(ALONG)})}
    tab = Tab(browser, base, state, viewport=(WIDTH, COMPARE_HEIGHT))
    try:
        tab.wait_drawn(COMPARE_TAG, compare_a=ALONG[0], compare_b=ALONG[1])
        tab.ui.locator(f".card[data-tag='{COMPARE_TAG}'] .along-text").wait_for()
        if args.dark:
            dark_theme(tab)
        # The card's top at the top of the page, the Compare section under it (fetched once on screen).
        tab.frame.evaluate(
            """(tag) => {
                const main = document.querySelector('.main');
                const card = [...document.querySelectorAll('.card')].find(c => c.dataset.tag === tag);
                const toolbar = document.querySelector('.toolbar').getBoundingClientRect().height;
                main.scrollTo(0, card.offsetTop - toolbar - 8);
            }""",
            COMPARE_TAG,
        )
        tab.frame.wait_for_function(
            "(tag) => document.querySelector('.compare-section').dataset.tag === tag && "
            "document.querySelectorAll('.compare-pairs tbody tr').length > 0",
            arg=COMPARE_TAG,
        )
        tab.page.mouse.move(5, COMPARE_HEIGHT - 5)  # no hover label, no highlighted button
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        tab.page.screenshot(path=args.out)
        print(f"wrote {args.out}")
        assert tab.errors == [], tab.errors
    finally:
        tab.close()


if __name__ == "__main__":
    sys.exit(main())
