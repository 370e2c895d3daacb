"""The browser figure: opening the Aggregate tab on a 20-tag x 4-group logdir in headless Chromium.

The tab marks its own timeline with ``performance.measure``: ``aggregate:draw:<tag>`` from a card's
data arriving to its chart drawn, and ``aggregate:arrival-to-all-visible-drawn`` from the first data
of a refresh arriving to the last visible chart drawn. This script reads those marks, and the
browser's resource timing of the ``/aggregate`` requests, so the figure is checked from outside the
tab's own code too: last visible chart drawn minus the first ``/aggregate`` response's end.
"""

from __future__ import annotations

import statistics

import warm

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
TIMEOUT_MS = 120_000

_READ_TIMINGS = """() => {
    const measures = performance.getEntriesByType('measure');
    const draws = measures.filter(m => m.name.startsWith('aggregate:draw:'));
    const all = measures.filter(m => m.name === 'aggregate:arrival-to-all-visible-drawn');
    const requests = performance.getEntriesByType('resource').filter(r => r.name.includes('/aggregate?'));
    const visible = [...document.querySelectorAll('.card')].filter(card => {
        const r = card.getBoundingClientRect();
        return r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth;
    });
    const drawnVisible = visible.filter(card => Number(card.querySelector('.plot').dataset.draws || 0) > 0);
    const lastDrawn = Math.max(...draws.map(m => m.startTime + m.duration));
    return {
        cards: document.querySelectorAll('.card').length,
        visible: visible.length,
        visible_drawn: drawnVisible.length,
        per_card_ms: draws.map(m => m.duration),
        tab_arrival_to_all_drawn_ms: all.length ? all[0].duration : null,
        first_response_end_ms: requests.length ? Math.min(...requests.map(r => r.responseEnd)) : null,
        last_response_end_ms: requests.length ? Math.max(...requests.map(r => r.responseEnd)) : null,
        last_drawn_ms: lastDrawn,
        requests: requests.length,
        cycle: window.__aggregateTab && window.__aggregateTab.cycles[0],
    };
}"""


def available() -> str | None:
    """None if the browser figure can be measured here, else why not."""
    import os

    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed"
    if not os.path.exists(CHROMIUM):
        return f"no Chromium at {CHROMIUM}"
    try:
        from tb_aggregate_plugin import static

        if not os.path.exists(os.path.join(os.path.dirname(static.__file__), "index.js")):
            return "the tab's frontend is not installed"
    except ImportError:
        return "the tab's frontend is not installed"
    return None


def browser(logdir: str, *, runs: int, repeats: int = 3, viewport=(1400, 900)) -> dict:
    """Open the tab ``repeats`` times (a new page each time) on a running server; the timings."""
    from playwright.sync_api import sync_playwright

    loads = []
    with warm.tensorboard(logdir, load_fast=True, samples=0, expect_runs=runs) as (base, _):
        with sync_playwright() as pw:
            chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            try:
                for _ in range(repeats):
                    context = chromium.new_context(viewport={"width": viewport[0], "height": viewport[1]})
                    page = context.new_page()
                    page.goto(f"{base}/#aggregate", timeout=TIMEOUT_MS)
                    frame = page.wait_for_selector("iframe[src*='name=aggregate']", timeout=TIMEOUT_MS)
                    frame = frame.content_frame()
                    frame.wait_for_function(
                        "() => Number(document.documentElement.dataset.aggregateCycles) >= 1",
                        timeout=TIMEOUT_MS,
                    )
                    t = frame.evaluate(_READ_TIMINGS)
                    t["first_arrival_to_all_drawn_ms"] = t["last_drawn_ms"] - t["first_response_end_ms"]
                    t["last_arrival_to_all_drawn_ms"] = t["last_drawn_ms"] - t["last_response_end_ms"]
                    t["max_per_card_ms"] = max(t["per_card_ms"]) if t["per_card_ms"] else None
                    t["open_to_all_drawn_ms"] = t["last_drawn_ms"]  # from the tab frame's own start
                    loads.append(t)
                    context.close()
            finally:
                chromium.close()
    keys = [
        "first_arrival_to_all_drawn_ms",
        "tab_arrival_to_all_drawn_ms",
        "max_per_card_ms",
        "open_to_all_drawn_ms",
    ]
    return {
        "loads": loads,
        "cards": loads[0]["cards"],
        "visible": loads[0]["visible"],
        "visible_drawn": min(t["visible_drawn"] for t in loads),
        **{k: statistics.median(t[k] for t in loads if t[k] is not None) for k in keys},
        "worst_first_arrival_to_all_drawn_ms": max(t["first_arrival_to_all_drawn_ms"] for t in loads),
    }
