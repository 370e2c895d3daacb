"""Driving the Aggregate tab in real headless Chromium (the Debian build, through Playwright)."""

from __future__ import annotations

import contextlib
import urllib.parse

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
TIMEOUT_MS = 60_000


@contextlib.contextmanager
def chromium():
    """A headless Chromium for the whole module."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


class Tab:
    """One TensorBoard page on ``#aggregate``: the page, the tab's iframe, and any dialog that opened."""

    def __init__(
        self,
        browser,
        base: str,
        state: dict | None = None,
        viewport=(1400, 900),
        color_scheme: str | None = None,
    ):
        self.base = base
        self.context = browser.new_context(
            viewport={"width": viewport[0], "height": viewport[1]},
            accept_downloads=True,
            color_scheme=color_scheme,  # the browser's prefers-color-scheme ("light", "dark")
        )
        self.context.set_default_timeout(TIMEOUT_MS)
        self.page = self.context.new_page()
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.page.on("dialog", self._on_dialog)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.goto(f"{base}/#aggregate{hash_of(state or {})}")
        self.frame = self._wait_frame()

    def _on_dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _wait_frame(self):
        # TensorBoard puts each module-loaded plugin in its own iframe (plugin_entry.html?name=...).
        handle = self.page.wait_for_selector("iframe[src*='name=aggregate']", timeout=TIMEOUT_MS)
        frame = handle.content_frame()
        frame.wait_for_function("() => window.__aggregateTab !== undefined", timeout=TIMEOUT_MS)
        return frame

    @property
    def ui(self):
        """Locators inside the tab's iframe."""
        return self.page.frame_locator("iframe")

    def reload(self) -> None:
        self.page.reload()
        self.frame = self._wait_frame()

    def close(self) -> None:
        self.context.close()

    def set_theme(self, choice: str) -> None:
        """Pick ``choice`` ("Browser default", "Light" or "Dark") in TensorBoard's theme menu, as a
        person would: the header's theme button, then the menu item."""
        self.page.locator("button[aria-label='Menu for changing light or dark theme']").click()
        self.page.get_by_role("menuitem", name=choice, exact=True).click()

    def hash_state(self) -> dict:
        """The tab's settings as they stand in the TensorBoard page's URL hash."""
        fragment = urllib.parse.urlsplit(self.page.url).fragment
        state = {}
        for part in fragment.split("&"):
            key, eq, value = part.partition("=")
            key = urllib.parse.unquote(key)
            if eq and key.startswith("p.aggregate."):
                state[key[len("p.aggregate.") :]] = urllib.parse.unquote(value)
        return state

    def wait_drawn(self, tag: str, **params) -> dict:
        """Wait until the card of ``tag`` shows a chart fetched with ``params``; return its figure."""
        self.frame.wait_for_function(
            """([tag, params]) => {
                const card = [...document.querySelectorAll('.card')].find(c => c.dataset.tag === tag);
                if (!card) return false;
                card.scrollIntoView({block: 'nearest'});
                const plot = card.querySelector('.plot');
                if (!plot.dataset.url) return false;
                const drawn = new URL(plot.dataset.url).searchParams;
                return Object.entries(params).every(([k, v]) => drawn.get(k) === String(v));
            }""",
            arg=[tag, {k: str(v) for k, v in params.items()}],
            timeout=TIMEOUT_MS,
        )
        return self.figure(tag)

    def figure(self, tag: str) -> dict:
        """The card's Plotly figure: traces (role, group, x, y, fill, visible, ...) and axes."""
        return self.frame.evaluate(
            """(tag) => {
                const card = [...document.querySelectorAll('.card')].find(c => c.dataset.tag === tag);
                const gd = card.querySelector('.plot');
                if (!gd.data) return {traces: [], draws: Number(gd.dataset.draws || 0), url: gd.dataset.url};
                const traces = gd.data.map((t, i) => {
                    const full = gd._fullData[i] || {};
                    return {
                        role: t.meta && t.meta.role, group: t.meta && t.meta.group, run: t.meta && t.meta.run,
                        name: t.name, x: Array.from(t.x), y: Array.from(t.y), fill: t.fill || null,
                        visible: full.visible, fillcolor: full.fillcolor || null,
                        dash: full.line ? full.line.dash : null, width: full.line ? full.line.width : null,
                        customdata: t.customdata || null, hovertemplate: t.hovertemplate || null,
                    };
                });
                return {
                    traces,
                    draws: Number(gd.dataset.draws || 0),
                    url: gd.dataset.url,
                    xaxis: {type: gd._fullLayout.xaxis.type, title: gd._fullLayout.xaxis.title.text},
                    yaxis: {type: gd._fullLayout.yaxis.type},
                };
            }""",
            tag,
        )

    def hover(self, tag: str, x: float | None = None) -> str:
        """Move the mouse over the chart of ``tag`` at data ``x`` (default: the middle); return the
        hover label's text once it shows."""
        point = self.frame.evaluate(
            """([tag, x]) => {
                const card = [...document.querySelectorAll('.card')].find(c => c.dataset.tag === tag);
                const gd = card.querySelector('.plot');
                gd.scrollIntoView({block: 'nearest'});
                const box = gd.querySelector('.nsewdrag').getBoundingClientRect();
                const dx = x === null ? box.width / 2 : gd._fullLayout.xaxis.l2p(x);
                return {x: box.left + dx, y: box.top + box.height / 2};
            }""",
            [tag, x],
        )
        offset = self.page.locator("iframe[src*='name=aggregate']").bounding_box()
        read = """(tag) => [...document.querySelectorAll('.card')].find(c => c.dataset.tag === tag)
                    .querySelector('.hoverlayer').textContent"""
        # The label's first line is the hovered x: wait for the one asked for, not one passed on the way.
        shown = f"([tag, head]) => ({read})(tag).startsWith(head) && ({read})(tag).includes('n=')"
        head = "" if x is None else f"{x:g}"
        for attempt in range(20):
            # Plotly answers mouse moves inside the plot: enter beside the point, then move onto it.
            self.page.mouse.move(offset["x"] + point["x"] - 8 - attempt % 3, offset["y"] + point["y"])
            self.page.mouse.move(offset["x"] + point["x"], offset["y"] + point["y"], steps=4)
            try:
                self.frame.wait_for_function(shown, arg=[tag, head], timeout=3000)
                break
            except Exception:  # no label yet (a busy machine drops a move now and then): move again
                continue
        else:
            under = self.frame.evaluate(
                """([x, y, tag]) => {
                    const el = document.elementFromPoint(x, y);
                    const gd = [...document.querySelectorAll('.card')].find(c => c.dataset.tag === tag)
                        .querySelector('.plot');
                    const r = gd.querySelector('.nsewdrag').getBoundingClientRect();
                    const under = el && (el.className.baseVal ?? el.className);
                    return {under, drag: [r.left, r.top, r.width, r.height], size: [innerWidth, innerHeight]};
                }""",
                [point["x"], point["y"], tag],
            )
            raise AssertionError(f"no hover label on {tag!r} at x={x}: point {point}, {under}")
        return self.frame.evaluate(read, tag)

    def card_tags(self) -> list[str]:
        return self.frame.evaluate("() => [...document.querySelectorAll('.card')].map(c => c.dataset.tag)")

    def cycles(self) -> int:
        return int(self.frame.evaluate("() => document.documentElement.dataset.aggregateCycles || '0'"))


def hash_of(state: dict) -> str:
    """``&p.aggregate.key=value...`` for a settings dict (as the tab writes it)."""
    return "".join(
        f"&p.aggregate.{key}={urllib.parse.quote(str(value), safe='')}" for key, value in state.items()
    )


def by_role(figure: dict, role: str) -> dict[str, list[dict]]:
    """Traces of one role ("center", "band_lo", "band_hi", "hover", "run", ...) by group."""
    out: dict[str, list[dict]] = {}
    for trace in figure["traces"]:
        if trace["role"] == role:
            out.setdefault(trace["group"], []).append(trace)
    return out
