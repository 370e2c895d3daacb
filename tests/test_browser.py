"""The Aggregate tab in real headless Chromium against a real ``tensorboard`` on demo_logs/.

Expected numbers come from the raw event values (tests/rawread.py) and numpy/scipy, never from the
code under test. Everything waits for a state to be reached; nothing asserts on time.
"""

from __future__ import annotations

import math
import os
import re
import urllib.parse

import numpy as np
import pytest
import requests
from browser import Tab, by_role, chromium
from rawread import read_logdir
from reference import tensorboard_smoothing
from server import tensorboard

pytestmark = [pytest.mark.browser, pytest.mark.server]

DEMO = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "demo_logs")
ENGINE_DEFAULTS = {
    "runs": "",
    "tags": "",
    "group_by": "auto",
    "center": "mean",
    "band": "std",
    "smoothing": "0",
    "x": "step",
    "min_runs": "1",
}


@pytest.fixture(scope="module")
def base():
    with tensorboard(DEMO) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def raw():
    return read_logdir(DEMO)


@pytest.fixture
def open_tab(browser, base):
    """Open TensorBoard on #aggregate (optionally with settings in the hash); no dialog may open."""
    tabs = []

    def _open(state=None, viewport=(1400, 900)):
        tab = Tab(browser, base, state, viewport)
        tabs.append(tab)
        return tab

    yield _open
    for tab in tabs:
        assert tab.dialogs == [], f"a dialog opened: {tab.dialogs}"
        assert tab.errors == [], f"uncaught errors in the page: {tab.errors}"
        tab.close()


# -- independent expectations ---------------------------------------------------------------------


def group_matrix(raw, group: str, tag: str) -> tuple[np.ndarray, np.ndarray]:
    """Steps and a runs x steps matrix of raw values, for a group whose runs share their steps."""
    runs = sorted(r for r in raw if r.startswith(group + "/"))
    series = [raw[r][tag] for r in runs]
    steps = [s for s, _, _ in series[0]]
    assert all([s for s, _, _ in one] == steps for one in series), "runs do not share steps"
    return np.array(steps, dtype=float), np.array([[v for _, _, v in one] for one in series])


def arr(values) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def fill_alpha(color: str) -> float:
    match = re.match(r"rgba\(\s*[\d.]+,\s*[\d.]+,\s*[\d.]+,\s*([\d.]+)\s*\)", color or "")
    return float(match.group(1)) if match else 1.0


# -- drawing ---------------------------------------------------------------------------------------


def test_every_tag_has_one_line_and_one_visible_band_per_group(open_tab, raw):
    tab = open_tab()
    tags = sorted({t for run in raw.values() for t in run})
    groups = sorted({r.split("/")[0] for r in raw})
    for tag in tags:
        figure = tab.wait_drawn(tag, band="std")
        centers, los, his = by_role(figure, "center"), by_role(figure, "band_lo"), by_role(figure, "band_hi")
        assert sorted(centers) == groups, tag
        for group in groups:
            assert len(centers[group]) == 1 and len(los[group]) == 1 and len(his[group]) == 1, (tag, group)
            center, lo, hi = centers[group][0], los[group][0], his[group][0]
            assert center["visible"] is True and np.isfinite(arr(center["y"])).sum() >= 2
            # The band is the area between lo and hi: hi fills down to the trace right before it, lo.
            traces = figure["traces"]
            assert hi["fill"] == "tonexty" and traces.index(hi) == traces.index(lo) + 1
            assert hi["visible"] is True and fill_alpha(hi["fillcolor"]) > 0
            assert np.nanmax(arr(hi["y"]) - arr(lo["y"])) > 0, f"{tag} {group}: the band has no area"
    # Cards sit in sections by tag prefix, like TensorBoard's scalars.
    sections = tab.frame.evaluate(
        "() => [...document.querySelectorAll('.tag-section')].map(s => "
        "[s.dataset.prefix, [...s.querySelectorAll('.card')].map(c => c.dataset.tag)])"
    )
    assert sections == [["train", ["train/accuracy", "train/loss"]], ["val", ["val/accuracy", "val/loss"]]]


def test_drawn_numbers_are_the_raw_mean_and_std_and_fewer_runs_show_dashed(open_tab, raw):
    tab = open_tab()
    figure = tab.wait_drawn("train/loss")
    steps, values = group_matrix(raw, "lr=0.01", "train/loss")
    hover = by_role(figure, "hover")["lr=0.01"][0]
    np.testing.assert_array_equal(arr(hover["x"]), steps)
    mean, std = values.mean(axis=0), values.std(axis=0, ddof=1)
    np.testing.assert_allclose(arr(hover["y"]), mean, rtol=1e-7)
    np.testing.assert_allclose(arr(by_role(figure, "band_lo")["lr=0.01"][0]["y"]), mean - std, rtol=1e-7)
    np.testing.assert_allclose(arr(by_role(figure, "band_hi")["lr=0.01"][0]["y"]), mean + std, rtol=1e-7)
    assert "lr=0.01" not in by_role(figure, "center_partial")  # every run reaches every step

    # lr=0.03/seed_4 stopped early: after its last step the line is dashed, and says n=4 of 5.
    last = max(s for s, _, _ in raw["lr=0.03/seed_4"]["train/loss"])
    end = max(s for s, _, _ in raw["lr=0.03/seed_0"]["train/loss"])
    solid = by_role(figure, "center")["lr=0.03"][0]
    dashed = by_role(figure, "center_partial")["lr=0.03"][0]
    solid_x = [x for x, y in zip(solid["x"], solid["y"]) if y is not None]
    dashed_x = [x for x, y in zip(dashed["x"], dashed["y"]) if y is not None]
    assert max(solid_x) == last and min(dashed_x) == last and max(dashed_x) == end
    assert dashed["dash"] == "dash" and solid["dash"] == "solid"
    coverage = {
        x: (cd[1], cd[2])
        for x, cd in zip(
            by_role(figure, "hover")["lr=0.03"][0]["x"], by_role(figure, "hover")["lr=0.03"][0]["customdata"]
        )
    }
    assert all(coverage[x] == (4, 5) for x in dashed_x if x > last)
    assert all(coverage[x] == (5, 5) for x in solid_x)


def test_hover_names_step_center_band_and_n_per_group(open_tab, raw):
    tab = open_tab()
    tab.wait_drawn("train/loss")
    step = 300
    text = tab.hover("train/loss", step)
    _, values = group_matrix(raw, "lr=0.01", "train/loss")
    steps = [s for s, _, _ in raw["lr=0.01/seed_0"]["train/loss"]]
    i = steps.index(step)
    mean, std = values[:, i].mean(), values[:, i].std(ddof=1)
    assert str(step) in text
    assert f"{mean:.4g}" in text and f"[{mean - std:.4g}, {mean + std:.4g}]" in text
    assert "n=5/5" in text and "n=4/5" in text and "fewer runs" in text


def test_offscreen_cards_are_drawn_when_scrolled_into_view(open_tab):
    # One card per row and a short window: the val/ cards start well below the fold.
    tab = open_tab(viewport=(900, 420))
    tab.wait_drawn("train/accuracy")
    tab.frame.wait_for_function("() => Number(document.documentElement.dataset.aggregateCycles) >= 1")
    assert tab.figure("val/loss")["draws"] == 0
    figure = tab.wait_drawn("val/loss")
    assert figure["draws"] == 1 and by_role(figure, "center")


# -- controls ---------------------------------------------------------------------------------------


def test_controls_change_what_is_drawn_and_the_hash(open_tab, raw):
    tab = open_tab()
    steps, values = group_matrix(raw, "lr=0.01", "train/loss")
    ui = tab.ui

    ui.locator("select[name=band]").select_option("minmax")
    figure = tab.wait_drawn("train/loss", band="minmax")
    lo, hi = by_role(figure, "band_lo")["lr=0.01"][0], by_role(figure, "band_hi")["lr=0.01"][0]
    np.testing.assert_allclose(arr(lo["y"]), values.min(axis=0), rtol=1e-7)
    np.testing.assert_allclose(arr(hi["y"]), values.max(axis=0), rtol=1e-7)
    assert tab.hash_state()["band"] == "minmax"

    ui.locator("input[name=smoothing]").fill("0.6")
    ui.locator("input[name=smoothing]").press("Tab")
    figure = tab.wait_drawn("train/loss", smoothing="0.6", band="minmax")
    expected = np.mean([tensorboard_smoothing(row, 0.6) for row in values], axis=0)
    np.testing.assert_allclose(arr(by_role(figure, "hover")["lr=0.01"][0]["y"]), expected, rtol=1e-7)
    assert tab.hash_state()["smoothing"] == "0.6"
    assert ui.locator("input[name=smoothing_range]").input_value() == "0.6"

    ui.locator("select[name=x]").select_option("relative")
    figure = tab.wait_drawn("train/loss", x="relative")
    assert figure["xaxis"]["title"] == "relative time (s)"
    walls = np.array([w for _, w, _ in raw["lr=0.01/seed_0"]["train/loss"]])
    np.testing.assert_allclose(arr(by_role(figure, "hover")["lr=0.01"][0]["x"]), walls - walls[0])
    assert tab.hash_state()["x"] == "relative"
    ui.locator("select[name=x]").select_option("wall")
    figure = tab.wait_drawn("train/loss", x="wall")
    assert figure["xaxis"]["type"] == "date" and tab.hash_state()["x"] == "wall"
    ui.locator("select[name=x]").select_option("step")
    tab.wait_drawn("train/loss", x="step")
    assert "x" not in tab.hash_state()  # defaults are left out of the URL

    ui.locator("select[name=group_mode]").select_option("none")
    figure = tab.wait_drawn("train/loss", group_by="none")
    hover = by_role(figure, "hover")
    assert len(hover) == 1 and next(iter(hover.values()))[0]["customdata"][0][2] == len(raw)
    assert tab.hash_state()["group_by"] == "none"

    ui.locator("select[name=group_mode]").select_option("regex")
    ui.locator("input[name=group_regex]").fill(r"seed_(\d)")
    ui.locator("input[name=group_regex]").press("Enter")
    figure = tab.wait_drawn("train/loss", group_by=r"regex:seed_(\d)")
    assert sorted(by_role(figure, "center")) == ["0", "1", "2", "3", "4"]
    assert tab.hash_state()["group_by"] == r"regex:seed_(\d)"
    # The panel lists the matching runs under their group.
    listed = tab.frame.evaluate(
        "() => [...document.querySelectorAll('.run-group')].map(g => [g.querySelector('.group-name')"
        ".textContent, [...g.querySelectorAll('li')].map(li => li.textContent)])"
    )
    assert dict(listed)["3"] == ["lr=0.01/seed_3", "lr=0.03/seed_3", "lr=0.1/seed_3"]

    ui.locator("select[name=group_mode]").select_option("hparam")
    assert sorted(ui.locator("input[name=hparam]").evaluate_all("els => els.map(e => e.value)")) == [
        "lr",
        "optimizer",
        "seed",
    ]
    ui.locator("input[name=hparam][value=lr]").check()
    figure = tab.wait_drawn("train/loss", group_by="hparam:lr")
    assert len(by_role(figure, "center")) == 3
    assert tab.hash_state()["group_by"] == "hparam:lr"

    draws = figure["draws"]
    ui.locator("input[name=log_y]").check()
    tab.frame.wait_for_function(
        "() => [...document.querySelectorAll('.card')].find(c => c.dataset.tag === 'train/loss')"
        ".querySelector('.plot')._fullLayout.yaxis.type === 'log'"
    )
    assert tab.hash_state()["log_y"] == "1"
    assert tab.figure("train/loss")["draws"] == draws  # the look changed, nothing was fetched again

    ui.locator("input[name=show_runs]").check()
    figure = tab.wait_drawn("train/loss", include_runs="1")
    runs = by_role(figure, "run")
    assert sorted(len(v) for v in runs.values()) == [5, 5, 5]
    assert tab.hash_state()["show_runs"] == "1"

    # At least 5 runs per point: lr=0.03 ends where its early-stopped run ends.
    ui.locator("input[name=min_runs]").fill("5")
    ui.locator("input[name=min_runs]").press("Tab")
    figure = tab.wait_drawn("train/loss", min_runs="5")
    last = max(s for s, _, _ in raw["lr=0.03/seed_4"]["train/loss"])
    assert max(by_role(figure, "hover")["lr=0.03"][0]["x"]) == last
    assert "lr=0.03" not in by_role(figure, "center_partial")
    assert tab.hash_state()["min_runs"] == "5"


MENU = "(name) => [...document.querySelector(`select[name=${name}]`).options].map(o => [o.value, o.text])"


def test_menus_and_defaults_come_from_the_backend(open_tab, base):
    listing = requests.get(f"{base}/data/plugin/aggregate/runs", timeout=60).json()
    options = listing["options"]
    tab = open_tab({"band": "sem"})  # the hash wins over the served default
    figure = tab.wait_drawn("train/loss", band="sem")
    # Every other engine option is sent as the backend's default.
    drawn = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(figure["url"]).query, keep_blank_values=True))
    for key in ("runs", "tags", "group_by", "center", "smoothing", "x", "min_runs"):
        default = options[key]["default"]
        sent = float(drawn[key]) if isinstance(default, (int, float)) else drawn[key]
        assert sent == default, key
    for key in ("center", "band"):
        assert tab.frame.evaluate(MENU, key) == options[key]["values"], key
    modes = [value for value, _ in tab.frame.evaluate(MENU, "group_mode")]
    assert modes == [value.split(":")[0] for value in options["group_by"]["values"]]
    assert tab.ui.locator("select[name=band]").input_value() == "sem"
    # The X axis menu: the served axes, then one entry per scalar tag.
    tags = listing["tags"]
    assert tab.frame.evaluate(MENU, "x") == options["x"]["values"] + [[f"tag:{t}", f"tag: {t}"] for t in tags]
    # The band is named with the backend's label, in the legend and in the summary's caption.
    label = dict(options["band"]["values"])["sem"]
    assert label in tab.ui.locator(".legend").inner_text()
    show_tables(tab.ui, tab.frame)
    assert label in tab.ui.locator(".summary-section .summary-inner > .muted.small").inner_text()
    assert tab.hash_state() == {"band": "sem"}

    default_band = options["band"]["default"]
    tab.ui.locator("select[name=band]").select_option(default_band)
    tab.wait_drawn("train/loss", band=default_band)
    assert tab.hash_state() == {}  # only values that differ from the served defaults

    # x=tag:NAME: drawn against that tag once the backend takes it; until then its 400 is shown
    # next to the X axis menu, as any option's error.
    tab.ui.locator("select[name=x]").select_option("tag:train/accuracy")
    assert tab.hash_state() == {"x": "tag:train/accuracy"}
    tab.frame.wait_for_function(
        """() => {
            const error = document.querySelector('.field-error[data-option=x]');
            const plot = document.querySelector('.card[data-tag="train/loss"] .plot');
            const drawnX = plot && plot.dataset.url && new URL(plot.dataset.url).searchParams.get('x');
            return (error && !error.hidden && error.textContent !== '') || drawnX === 'tag:train/accuracy';
        }"""
    )
    error = tab.ui.locator(".field-error[data-option=x]")
    if error.is_visible():
        assert "tag:train/accuracy" in error.inner_text()
    else:
        assert tab.wait_drawn("train/loss", x="tag:train/accuracy")["xaxis"]["title"] == "train/accuracy"
    assert tab.ui.locator("select[name=x]").input_value() == "tag:train/accuracy"
    tab.ui.locator("select[name=x]").select_option("step")
    tab.wait_drawn("train/loss", x="step")
    assert tab.hash_state() == {}


def test_a_refused_value_in_the_hash_still_gets_the_served_menus(open_tab, base):
    options = requests.get(f"{base}/data/plugin/aggregate/runs", timeout=60).json()["options"]
    tab = open_tab({"band": "bogus"})
    error = tab.ui.locator(".field-error[data-option=band]")
    error.wait_for(state="visible")
    assert "bogus" in error.inner_text()
    # The first /runs was refused, so the menus come from a second one, without the settings.
    tab.frame.wait_for_function("() => document.querySelectorAll('select[name=band] option').length > 0")
    assert tab.frame.evaluate(MENU, "band") == options["band"]["values"]
    assert tab.hash_state() == {"band": "bogus"}
    tab.ui.locator("select[name=band]").select_option("minmax")
    tab.wait_drawn("train/loss", band="minmax")
    error.wait_for(state="hidden")
    assert tab.hash_state() == {"band": "minmax"}


def test_reload_restores_the_settings_from_the_hash(open_tab, raw):
    tab = open_tab()
    tab.wait_drawn("val/loss")
    tab.ui.locator("select[name=band]").select_option("sem")
    tab.ui.locator("select[name=center]").select_option("median")
    tab.ui.locator("input[name=smoothing]").fill("0.3")
    tab.ui.locator("input[name=smoothing]").press("Tab")
    tab.ui.locator("input[name=tags]").fill("loss")
    tab.ui.locator("input[name=tags]").press("Enter")
    tab.ui.locator("input[name=log_y]").check()
    settings = {"band": "sem", "center": "median", "smoothing": "0.3", "tags": "loss"}
    tab.wait_drawn("val/loss", **settings)
    assert tab.hash_state() == {**settings, "log_y": "1"}

    tab.reload()
    figure = tab.wait_drawn("val/loss", **settings)
    assert figure["yaxis"]["type"] == "log"
    assert sorted(tab.card_tags()) == ["train/loss", "val/loss"]
    ui = tab.ui
    assert ui.locator("select[name=band]").input_value() == "sem"
    assert ui.locator("select[name=center]").input_value() == "median"
    assert ui.locator("input[name=smoothing]").input_value() == "0.3"
    assert ui.locator("input[name=tags]").input_value() == "loss"
    assert ui.locator("input[name=log_y]").is_checked()
    # What is drawn is what the settings say: the median of the runs smoothed with weight 0.3.
    _, values = group_matrix(raw, "lr=0.01", "val/loss")
    expected = np.median([tensorboard_smoothing(row, 0.3) for row in values], axis=0)
    np.testing.assert_allclose(arr(by_role(figure, "hover")["lr=0.01"][0]["y"]), expected, rtol=1e-7)


# -- theme ------------------------------------------------------------------------------------------

# The tab's colors as the browser computed them, each as [r, g, b, a] (0-255, alpha 0-1).
LOOK = """() => {
    const rgba = (color) => {
        const probe = document.createElement('i');
        probe.style.color = color;
        document.body.appendChild(probe);
        const parts = getComputedStyle(probe).color.match(/[\\d.]+/g).map(Number);
        probe.remove();
        return parts.length === 3 ? [...parts, 1] : parts;
    };
    const css = (selector, property) => rgba(getComputedStyle(document.querySelector(selector))[property]);
    const gd = document.querySelector('.card[data-tag="train/loss"] .plot');
    const band = gd.data.find(t => t.meta && t.meta.role === 'band_hi');
    const layout = gd._fullLayout;
    return {
        theme: document.documentElement.dataset.theme,
        tabMarker: window.__aggregateTab.__marker || null,
        body: css('body', 'backgroundColor'),
        text: css('body', 'color'),
        panel: css('.panel', 'backgroundColor'),
        input: css('input[name=runs]', 'backgroundColor'),
        inputText: css('input[name=runs]', 'color'),
        card: css('.card', 'backgroundColor'),
        tableText: css('.summary-table td', 'color'),
        compareText: css('.compare-pairs td', 'color'),
        sentence: css('.sentences li.significant', 'color'),
        sentenceBg: css('.sentences li.significant', 'backgroundColor'),
        significantP: css('.compare-pairs td.strong', 'color'),
        notes: css('.card-notes', 'color'),
        paper: rgba(layout.paper_bgcolor),
        plot: rgba(layout.plot_bgcolor),
        font: rgba(layout.font.color),
        grid: rgba(layout.xaxis.gridcolor),
        hoverBg: rgba(layout.hoverlabel.bgcolor),
        hoverText: rgba(layout.hoverlabel.font.color),
        legendText: rgba(gd.layout.legend.font.color), // no legend drawn: as it would be
        bandAlpha: rgba(band.fillcolor)[3],
    };
}"""


def show_tables(ui, frame) -> None:
    """Scroll to the Compare section and the summary (fetched only on screen), wait for their rows, and
    back to the charts. ``ui``: what holds the tab's locators (a Tab's ``ui``, or the tab's own page)."""
    for section, rows in [
        (".compare-section", ".compare-pairs tbody tr"),
        (".summary-section", ".summary-table tbody tr"),
    ]:
        ui.locator(section).scroll_into_view_if_needed()
        ui.locator(rows).first.wait_for()
    frame.evaluate("() => document.querySelector('.main').scrollTo(0, 0)")  # the charts again


def luminance(rgba) -> float:
    """Relative luminance (0 black, 1 white) of an [r, g, b, a] color."""

    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgba[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def wait_theme(tab, theme: str) -> dict:
    """Wait until the tab and its train/loss chart show ``theme``; return the tab's colors."""
    tab.frame.wait_for_function(
        """(theme) => {
            const gd = document.querySelector('.card[data-tag="train/loss"] .plot');
            const bg = getComputedStyle(document.body).backgroundColor;
            const probe = document.createElement('i');
            probe.style.color = gd._fullLayout.paper_bgcolor;
            document.body.appendChild(probe);
            const paper = getComputedStyle(probe).color;
            probe.remove();
            return document.documentElement.dataset.theme === theme && paper === bg;
        }""",
        arg=theme,
    )
    return tab.frame.evaluate(LOOK)


def assert_readable(look: dict, dark: bool) -> None:
    surfaces = ("body", "panel", "input", "card", "paper", "plot", "hoverBg")
    for name in surfaces:
        assert (luminance(look[name]) < 0.1) == dark, (name, look[name])
    for text, surface in [
        ("text", "body"),
        ("inputText", "input"),
        ("tableText", "body"),
        ("compareText", "body"),
        ("sentence", "sentenceBg"),
        ("font", "paper"),
        ("hoverText", "hoverBg"),
        ("legendText", "paper"),
    ]:
        assert contrast(look[text], look[surface]) >= 4.5, (text, surface, look[text], look[surface])
    assert contrast(look["notes"], look["card"]) >= 3, (look["notes"], look["card"])
    assert contrast(look["significantP"], look["body"]) >= 3, (look["significantP"], look["body"])
    assert contrast(look["grid"], look["paper"]) > 1.1  # the grid shows, faintly
    assert look["paper"] == look["card"] == look["plot"]


def test_the_tab_follows_tensorboards_theme_menu_live(open_tab, tmp_path):
    tab = open_tab()
    tab.wait_drawn("train/loss")
    show_tables(tab.ui, tab.frame)
    tab.frame.evaluate("() => { window.__aggregateTab.__marker = 'no reload'; }")
    light = wait_theme(tab, "light")
    assert_readable(light, dark=False)

    # TensorBoard's own menu, as a person would use it. TensorBoard marks its dark theme with the
    # class dark-mode on its page's <body>; the tab, in its iframe, follows that class.
    tab.set_theme("Dark")
    assert "dark-mode" in tab.page.evaluate("() => document.body.className.split(' ')")
    dark = wait_theme(tab, "dark")
    assert dark["tabMarker"] == "no reload"  # the same page: changed live
    assert_readable(dark, dark=True)
    assert dark["bandAlpha"] > light["bandAlpha"]  # bands stay visible on a dark background
    tab.hover("train/loss", 300)
    tab.page.screenshot(path=str(tmp_path / "dark.png"))
    # Cards drawn later (another tag, another setting) come dark too.
    tab.ui.locator("select[name=band]").select_option("minmax")
    tab.wait_drawn("val/loss", band="minmax")
    paper = tab.frame.evaluate(
        "() => document.querySelector('.card[data-tag=\"val/loss\"] .plot')._fullLayout.paper_bgcolor"
    )
    assert tab.frame.evaluate(LOOK)["paper"] == dark["paper"] and paper

    tab.set_theme("Light")
    assert "dark-mode" not in tab.page.evaluate("() => document.body.className.split(' ')")
    back = wait_theme(tab, "light")
    assert back["tabMarker"] == "no reload"
    assert_readable(back, dark=False)
    assert back["bandAlpha"] == light["bandAlpha"]


def test_browser_default_theme_follows_the_browsers_color_scheme(browser, base):
    from browser import Tab

    # TensorBoard's "Browser default" takes the browser's prefers-color-scheme when it loads.
    tab = Tab(browser, base, color_scheme="dark")
    try:
        tab.wait_drawn("train/loss")
        show_tables(tab.ui, tab.frame)
        assert_readable(wait_theme(tab, "dark"), dark=True)
        tab.set_theme("Light")
        assert_readable(wait_theme(tab, "light"), dark=False)
        tab.set_theme("Browser default")
        assert_readable(wait_theme(tab, "dark"), dark=True)
        assert tab.errors == []
    finally:
        tab.close()

    # Opened on its own (no TensorBoard page around it), the tab follows the browser's setting, live.
    context = browser.new_context(viewport={"width": 1200, "height": 800}, color_scheme="light")
    try:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{base}/data/plugin_entry.html?name=aggregate")
        page.wait_for_function("() => window.__aggregateTab !== undefined")
        page.locator(".card[data-tag='train/loss'] .plot .main-svg").first.wait_for()
        frame = page.main_frame
        show_tables(page, frame)
        assert_readable(wait_theme_in(frame, "light"), dark=False)
        page.emulate_media(color_scheme="dark")
        assert_readable(wait_theme_in(frame, "dark"), dark=True)
        page.emulate_media(color_scheme="light")
        assert_readable(wait_theme_in(frame, "light"), dark=False)
        assert errors == []
    finally:
        context.close()


class _Frame:
    """Just enough of a Tab for wait_theme on a page that is the tab itself."""

    def __init__(self, frame):
        self.frame = frame


def wait_theme_in(frame, theme: str) -> dict:
    return wait_theme(_Frame(frame), theme)


# -- export -----------------------------------------------------------------------------------------


def test_download_all_and_card_csv_equal_export(open_tab, base):
    settings = {"band": "sem", "smoothing": "0.25", "group_by": "hparam:lr"}
    tab = open_tab(settings)
    tab.wait_drawn("val/loss", **settings)
    expected_params = {**ENGINE_DEFAULTS, **settings, "format": "csv"}
    export = f"{base}/data/plugin/aggregate/export"

    with tab.page.expect_download() as info:
        tab.ui.locator("[data-role=download-all]").click()
    download = info.value
    with open(download.path(), "rb") as f:
        body = f.read()
    expected = requests.get(export, params=expected_params, timeout=60)
    expected.raise_for_status()
    assert body == expected.content
    name = download.suggested_filename
    assert name.startswith("aggregate-all-") and name.endswith(".csv")
    assert body.startswith(b"tag,group,step") and body.count(b"\n") > 100

    with tab.page.expect_download() as info:
        tab.ui.locator(".card[data-tag='val/loss'] [data-role=csv]").click()
    with open(info.value.path(), "rb") as f:
        card_body = f.read()
    expected = requests.get(export, params={**expected_params, "tag": "val/loss"}, timeout=60)
    assert card_body == expected.content
    assert {line.split(b",")[0] for line in card_body.splitlines()[1:]} == {b"val/loss"}


# -- errors and empty states ------------------------------------------------------------------------


def test_invalid_regex_shows_an_inline_message(open_tab):
    tab = open_tab()
    tab.wait_drawn("train/loss")
    ui = tab.ui
    ui.locator("input[name=runs]").fill("lr=(0.1")
    ui.locator("input[name=runs]").press("Enter")
    error = ui.locator(".field-error[data-option=runs]")
    error.wait_for(state="visible")
    assert "invalid regular expression" in error.inner_text()
    assert "invalid regular expression" in ui.locator(".banner").inner_text()
    assert tab.card_tags() == []
    assert not ui.locator("[data-role=download-all]").is_visible()  # nothing valid to download

    ui.locator("input[name=runs]").fill("lr=0.1")
    ui.locator("input[name=runs]").press("Enter")
    error.wait_for(state="hidden")
    figure = tab.wait_drawn("train/loss", runs="lr=0.1")
    assert sorted(by_role(figure, "center")) == ["lr=0.1"]

    ui.locator("input[name=tags]").fill("[")
    ui.locator("input[name=tags]").press("Enter")
    ui.locator(".field-error[data-option=tags]").wait_for(state="visible")
    ui.locator("input[name=tags]").fill("")
    ui.locator("input[name=tags]").press("Enter")
    tab.wait_drawn("train/loss", tags="")

    ui.locator("select[name=group_mode]").select_option("regex")
    ui.locator("input[name=group_regex]").fill("seed_(")
    ui.locator("input[name=group_regex]").press("Enter")
    group_error = ui.locator(".field-error[data-option=group_by]")
    group_error.wait_for(state="visible")
    assert "group_by" in group_error.inner_text()


def test_empty_states_say_why(open_tab):
    tab = open_tab({"runs": "no-such-run"})
    tab.frame.wait_for_function(
        "() => document.querySelector('.message').textContent.includes('No run matches')"
    )
    assert tab.ui.locator(".message").is_visible()
    tab.ui.locator("input[name=runs]").fill("")
    tab.ui.locator("input[name=tags]").fill("no-such-tag")
    tab.ui.locator("input[name=tags]").press("Enter")
    tab.frame.wait_for_function(
        "() => document.querySelector('.message').textContent.includes('No scalar tag matches')"
    )
    assert tab.card_tags() == []


# -- summary ----------------------------------------------------------------------------------------


def test_summary_table(open_tab, raw):
    tab = open_tab()
    tab.wait_drawn("val/loss")
    tab.ui.locator(".summary-section").scroll_into_view_if_needed()  # fetched once on screen
    rows = tab.ui.locator(".summary-table tbody tr")
    rows.first.wait_for()
    assert rows.count() == 4 * 3
    # lr=0.03/seed_4 stopped early: the final point of lr=0.03 stands on 4 of its 5 runs.
    row = tab.ui.locator(".summary-table tbody tr[data-tag='val/loss'][data-group='lr=0.03']")
    cells = row.locator("td").all_inner_texts()
    assert cells[2] == "5" and cells[5] == "4"
    assert float(cells[3].split()[0]) == pytest.approx(raw_final_mean(raw, "lr=0.03", "val/loss"), rel=1e-3)
    # The old two-group Welch test on final values is gone from the summary (the Compare section tests).
    assert tab.frame.evaluate("() => document.querySelector('.summary-section select') === null")


def last_finite(series) -> float:
    return [v for _, _, v in series if math.isfinite(v)][-1]


def raw_final_mean(raw, group: str, tag: str) -> float:
    """Mean over the group's runs that reach the group's last step, at that step."""
    runs = [raw[r][tag] for r in sorted(raw) if r.startswith(group + "/")]
    end = max(s for one in runs for s, _, _ in one)
    return float(np.mean([v for one in runs for s, _, v in one if s == end]))


# -- refresh ----------------------------------------------------------------------------------------


def test_reload_without_new_data_redraws_nothing(open_tab):
    tab = open_tab()
    draws = tab.wait_drawn("train/loss")["draws"]
    tab.frame.wait_for_function("() => Number(document.documentElement.dataset.aggregateCycles) >= 1")
    before = tab.cycles()
    tab.ui.get_by_role("button", name="Reload").click()
    tab.frame.wait_for_function(
        "(n) => Number(document.documentElement.dataset.aggregateCycles) > n", arg=before
    )
    last = tab.frame.evaluate("() => window.__aggregateTab.cycles.at(-1)")
    assert last["drawn"] == 0 and last["unchanged"] >= 1
    assert tab.figure("train/loss")["draws"] == draws


# -- compare ----------------------------------------------------------------------------------------

PLUGIN = "/data/plugin/aggregate"


def fmt_p(p) -> str:
    """A p-value as the tab shows it: two significant digits, <0.0001 below."""
    if p is None:
        return "–"
    return "<0.0001" if p < 1e-4 else f"{float(f'{p:.2g}'):g}"


CAPTURE_COPIES = """(failWriteText) => {
    window.__copies = [];
    // The Clipboard API as the page sees it: kept, or refusing (an iframe without the permission).
    navigator.clipboard.writeText = failWriteText
        ? async () => { throw new Error('not allowed'); }
        : async (text) => { window.__copies.push(['clipboard', text]); };
    // The fallback copies a selected textarea: read what it holds when the browser copies.
    if (!window.__copyHeard) {
        window.__copyHeard = true;
        document.addEventListener('copy', (e) => window.__copies.push(['execCommand', e.target.value]));
    }
}"""


def test_compare_section_shows_the_backends_tables_sentences_and_copies_them(open_tab, base):
    tab = open_tab()
    tab.wait_drawn("train/accuracy")
    section = tab.ui.locator(".compare-section")
    section.scroll_into_view_if_needed()
    # The default: the first tag, the served default score, every pair.
    tab.frame.wait_for_function(
        "() => document.querySelector('.compare-section').dataset.tag === 'train/accuracy'"
    )
    assert tab.ui.locator("select[name=score] option").all_inner_texts() == [
        "final value", "best value", "mean of the last 10%", "mean over the run (area)"
    ]  # fmt: skip
    assert tab.ui.locator(".compare-pairs tbody tr").count() == 3

    tab.ui.locator("select[name=compare_tag]").select_option("val/loss")
    tab.ui.locator("select[name=score]").select_option("best")
    tab.ui.locator("select[name=baseline]").select_option("lr=0.01")
    tab.frame.wait_for_function(
        """() => { const s = document.querySelector('.compare-section').dataset;
                   return s.tag === 'val/loss' && s.score === 'best' && s.baseline === 'lr=0.01'; }"""
    )
    assert {k: tab.hash_state()[k] for k in ("compare_tag", "score", "baseline")} == {
        "compare_tag": "val/loss", "score": "best", "baseline": "lr=0.01"
    }  # fmt: skip
    params = {**ENGINE_DEFAULTS, "tag": "val/loss", "score": "best", "baseline": "lr=0.01"}
    want = requests.get(f"{base}{PLUGIN}/compare", params=params, timeout=60).json()

    assert section.locator(".direction").inner_text() == "lower is better"
    assert section.locator(".compare-caption").inner_text() == want["caption"]
    groups = tab.frame.evaluate(
        "() => [...document.querySelectorAll('.compare-groups tbody tr')].map(r => "
        "[r.dataset.group, ...[...r.cells].map(c => c.textContent)])"
    )
    assert [g[0] for g in groups] == [g["group"] for g in want["groups"]] == ["lr=0.01", "lr=0.03", "lr=0.1"]
    for shown, row in zip(groups, want["groups"]):
        assert shown[1] == row["group"] and shown[2] == str(row["runs"])
        mean, half = shown[3].split(" ± ")
        assert float(mean) == pytest.approx(row["mean"], rel=5e-3)
        assert float(half) == pytest.approx((row["ci95_hi"] - row["ci95_lo"]) / 2, rel=5e-3)
    headers = tab.ui.locator(".compare-pairs thead th").all_inner_texts()
    assert headers[3] == "p (Holm)" and "Mann-Whitney" in headers[4] and headers[5].startswith("P(A>B)")
    pairs = tab.frame.evaluate(
        "() => [...document.querySelectorAll('.compare-pairs tbody tr')].map(r => "
        "[...r.cells].map(c => c.textContent))"
    )
    assert len(pairs) == len(want["pairs"]) == 2  # each group against the baseline
    for shown, row in zip(pairs, want["pairs"]):
        assert shown[:2] == [row["a"], row["b"]]
        assert shown[3] == fmt_p(row["p_holm"]) and shown[4] == fmt_p(row["p_mwu"])
        assert float(shown[2].split(" [")[0]) == pytest.approx(row["diff"], rel=5e-3)
    sentences = tab.ui.locator(".sentences li").all_inner_texts()
    assert sentences == want["sentences"] and all("Holm" in s for s in sentences)

    # Download CSV: the route's table for these choices.
    href = section.locator("a[data-role=csv-pairs]").get_attribute("href")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(href).query)
    assert query["format"] == ["csv"] and query["table"] == ["pairs"] and query["baseline"] == ["lr=0.01"]
    csv = requests.get(href, timeout=60)
    assert csv.status_code == 200 and csv.text.startswith("a,b,diff,diff_lo,diff_hi")

    # Copy as Markdown / LaTeX: the route's text, by the Clipboard API or, refused, the fallback.
    markdown = requests.get(f"{base}{PLUGIN}/compare", params={**params, "format": "md"}, timeout=60).text
    latex = requests.get(f"{base}{PLUGIN}/compare", params={**params, "format": "tex"}, timeout=60).text
    status = section.locator(".section-head .copy-status")
    for fail, button, text, way in [
        (False, "copy-md", markdown, "clipboard"),
        (True, "copy-tex", latex, "execCommand"),
    ]:
        tab.frame.evaluate(CAPTURE_COPIES, fail)
        section.locator(f".section-head button[data-role={button}]").click()
        tab.frame.wait_for_function("() => window.__copies.length > 0")
        assert tab.frame.evaluate("() => window.__copies") == [[way, text]]
        assert status.inner_text() == "Copied"
    assert "p (Holm)" in markdown and "| lr=0.03 |" in markdown


def test_summary_copies_its_table(open_tab, base):
    tab = open_tab()
    tab.wait_drawn("train/accuracy")
    section = tab.ui.locator(".summary-section")
    section.scroll_into_view_if_needed()
    tab.ui.locator(".summary-table tbody tr").first.wait_for()
    tab.frame.evaluate(CAPTURE_COPIES, False)
    section.locator("button[data-role=copy-md]").click()
    tab.frame.wait_for_function("() => window.__copies.length > 0")
    want = requests.get(
        f"{base}{PLUGIN}/summary", params={**ENGINE_DEFAULTS, "format": "md"}, timeout=60
    ).text
    assert tab.frame.evaluate("() => window.__copies") == [["clipboard", want]]
    assert want.startswith("| tag | group | runs | final |")


def test_two_groups_compared_along_the_curve(open_tab, base):
    tab = open_tab()
    tab.wait_drawn("val/loss")
    card = tab.ui.locator(".card[data-tag='val/loss']")
    assert card.locator(".along-row").is_hidden() and card.locator(".along-text").is_hidden()
    card.locator("button[data-role=along]").click()
    card.locator("select[data-role=along-a]").select_option("lr=0.03")
    card.locator("select[data-role=along-b]").select_option("lr=0.01")
    tab.wait_drawn("val/loss", compare_a="lr=0.03", compare_b="lr=0.01")
    params = {**ENGINE_DEFAULTS, "tag": "val/loss", "compare_a": "lr=0.03", "compare_b": "lr=0.01"}
    along = requests.get(f"{base}{PLUGIN}/aggregate", params=params, timeout=60).json()["along"]
    assert along["ranges"] and along["differ"] > 0
    shapes = tab.frame.evaluate(
        "() => document.querySelector('.card[data-tag=\"val/loss\"] .plot').layout.shapes"
    )
    assert len(shapes) == 2 * len(along["ranges"])
    for (lo, hi), shade, strip in zip(along["ranges"], shapes[::2], shapes[1::2]):
        for shape in (shade, strip):  # each range, widened by half a step (10) on each side
            assert shape["yref"] == "paper" and shape["x0"] == lo - 5 and shape["x1"] == hi + 5
        assert shade["y0"] == 0 and shade["y1"] == 1 and strip["y1"] < 0.05
    text = card.locator(".along-text").inner_text()
    assert text == (
        f"lr=0.03 vs lr=0.01 differ at {along['differ']:,} of {along['tested']:,} x values "
        "(Welch per x, Benjamini-Hochberg q=0.05)"
    )
    # Other cards ask for no comparison; the choice is in the hash and comes back after a reload.
    assert "compare_a" not in tab.figure("train/loss")["url"]
    assert json_of(tab.hash_state()["along"]) == {"val/loss": ["lr=0.03", "lr=0.01"]}
    tab.reload()
    tab.wait_drawn("val/loss", compare_a="lr=0.03", compare_b="lr=0.01")
    card = tab.ui.locator(".card[data-tag='val/loss']")
    assert card.locator("select[data-role=along-a]").input_value() == "lr=0.03"
    card.locator(".along-text").wait_for()
    # Closing the menus drops the comparison.
    card.locator("button[data-role=along]").click()
    tab.frame.wait_for_function(
        """() => { const gd = document.querySelector('.card[data-tag="val/loss"] .plot');
                   return !new URL(gd.dataset.url).searchParams.has('compare_a'); }"""
    )
    assert "along" not in tab.hash_state() and card.locator(".along-text").is_hidden()
    assert (
        tab.frame.evaluate(
            "() => (document.querySelector('.card[data-tag=\"val/loss\"] .plot').layout.shapes || []).length"
        )
        == 0
    )


def json_of(text: str):
    import json

    return json.loads(text)


def test_summary_and_compare_are_fetched_only_while_on_screen(browser, base):
    """2,000 runs make a summary and a comparison expensive: an idle tab asks for neither while they are
    scrolled away, on a poll, TensorBoard's reload or the Reload button; scrolled to, each is fetched.
    A poll that finds the data unchanged asks for nothing but the listing."""
    tab = Tab(browser, base, viewport=(1400, 700))
    asked: list[str] = []
    tab.page.on(
        "request",
        lambda request: (
            asked.append(urllib.parse.urlsplit(request.url).path.rsplit("/", 1)[-1])
            if f"{PLUGIN}/" in request.url
            else None
        ),
    )
    try:
        tab.frame.wait_for_function("() => Number(document.documentElement.dataset.aggregateCycles) >= 1")

        def refreshed(how) -> None:
            """Do ``how`` until the tab asks for /runs again (a poll while a refresh is under way, or
            a reload signal TensorBoard has not sent yet, is no refresh), then wait for its end."""
            before = asked.count("runs")
            for _ in range(24):
                how()
                for _ in range(50):
                    if asked.count("runs") > before:
                        tab.frame.wait_for_function("() => !window.__aggregateTab.refreshing")
                        return
                    tab.page.wait_for_timeout(100)
            raise AssertionError("the tab never fetched again")

        refreshed(lambda: tab.ui.get_by_role("button", name="Reload").click())
        # Its charts asked for (two at a time, after the listing) before they are counted.
        tab.frame.wait_for_function(
            "() => { const g = window.__aggregateTab.grid; return g.active === 0 && !g.queue.length; }"
        )
        charts = asked.count("aggregate")
        refreshed(lambda: tab.frame.evaluate("() => window.__aggregateTab.poll()"))  # the 30 s timer
        # Nothing changed (the listing's version says so): a poll asks for no chart again.
        assert asked.count("aggregate") == charts

        def tensorboard_reload() -> None:
            # A reload signal right after a refresh is ignored: as if it came a while later.
            tab.frame.evaluate("() => { window.__aggregateTab.lastRefresh = -Infinity; }")
            tab.page.locator("app-header-reload button").click()

        refreshed(tensorboard_reload)
        assert asked.count("runs") >= 3  # (the first load came before the listener)
        assert "summary" not in asked and "compare" not in asked

        tab.ui.locator(".compare-section").scroll_into_view_if_needed()
        tab.ui.locator(".compare-pairs tbody tr").first.wait_for()
        tab.ui.locator(".summary-section").scroll_into_view_if_needed()
        tab.ui.locator(".summary-table tbody tr").first.wait_for()
        assert asked.count("compare") == 1 and asked.count("summary") == 1

        # On screen, the Reload button asks again, and a poll that finds the data unchanged does not;
        # scrolled away, neither does.
        refreshed(lambda: tab.frame.evaluate("() => window.__aggregateTab.poll()"))
        assert asked.count("summary") == 1
        refreshed(lambda: tab.ui.get_by_role("button", name="Reload").click())
        assert asked.count("summary") == 2
        tab.frame.evaluate("() => document.querySelector('.main').scrollTo(0, 0)")
        tab.frame.wait_for_function("() => !window.__aggregateTab.summaryLazy.visible")
        before = (asked.count("summary"), asked.count("compare"))
        refreshed(lambda: tab.frame.evaluate("() => window.__aggregateTab.poll()"))
        refreshed(lambda: tab.ui.get_by_role("button", name="Reload").click())
        assert (asked.count("summary"), asked.count("compare")) == before
        assert tab.errors == []
    finally:
        tab.close()


def test_tags_without_a_prefix_share_one_grid_in_natural_order(browser, tmp_path):
    from writers import noisy_curve, write_run

    tags = ["metric_10", "metric_2", "metric_1", "acc", "train/b", "train/a10", "train/a9"]
    steps = list(range(0, 30, 3))
    for seed in range(2):
        curve = noisy_curve(len(steps), seed)
        write_run(str(tmp_path), f"g/seed_{seed}", {tag: (steps, curve) for tag in tags})
    with tensorboard(str(tmp_path)) as url:
        tab = Tab(browser, url, viewport=(1400, 900))
        try:
            tab.wait_drawn("acc")
            sections = tab.frame.evaluate(
                "() => [...document.querySelectorAll('.tag-section')].map(s => "
                "[s.dataset.prefix, s.querySelector('.section-name').textContent, "
                "[...s.querySelectorAll('.card')].map(c => c.dataset.tag)])"
            )
            assert sections == [
                ["", "(no prefix)", ["acc", "metric_1", "metric_2", "metric_10"]],
                ["train", "train", ["train/a9", "train/a10", "train/b"]],
            ]
            # One responsive grid per section: cards side by side, rows of equal widths.
            boxes = tab.frame.evaluate(
                "() => [...document.querySelectorAll('.tag-section[data-prefix=\"\"] .card')].map(c => {"
                " const r = c.getBoundingClientRect(); return [r.left, r.top, r.width]; })"
            )
            assert boxes[0][1] == boxes[1][1] and boxes[1][0] > boxes[0][0] + boxes[0][2]
            assert boxes[2][1] > boxes[0][1] and boxes[2][0] == boxes[0][0]
            assert len({round(w) for _, _, w in boxes}) == 1
            # The Compare section's tags, in the same order; its default is the first of them.
            tab.ui.locator(".compare-section").scroll_into_view_if_needed()
            assert tab.ui.locator("select[name=compare_tag] option").all_inner_texts() == [
                "acc", "metric_1", "metric_2", "metric_10", "train/a9", "train/a10", "train/b"
            ]  # fmt: skip
            assert tab.ui.locator("select[name=compare_tag]").input_value() == "acc"
            assert tab.errors == []
        finally:
            tab.close()
