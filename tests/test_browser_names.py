"""The Aggregate tab with hostile names and a live logdir, in real headless Chromium.

Run, group and tag names come from folder names and writers: they are untrusted text. A run named
``<img src=x onerror=alert(1)>`` must show as those characters and nothing may execute.
"""

from __future__ import annotations

import numpy as np
import pytest
from browser import Tab, by_role, chromium
from server import tensorboard
from writers import noisy_curve, write_run

pytestmark = [pytest.mark.browser, pytest.mark.server]

EVIL = "<img src=x onerror=alert(1)>"
EVIL_TAG = "acc<img src=y onerror=alert(2)>"
STEPS = list(range(0, 50, 5))


def write(logdir: str, run: str, seed: int) -> None:
    curve = noisy_curve(len(STEPS), seed)
    write_run(logdir, run, {"loss": (STEPS, curve), EVIL_TAG: (STEPS, 1 - curve / 3)})


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("names")
    for seed, run in enumerate([f"{EVIL}/seed_0", f"{EVIL}/seed_1", "plain/seed_0", "plain/seed_1"]):
        write(str(root), run, seed)
    return root


@pytest.fixture(scope="module")
def base(logdir):
    with tensorboard(str(logdir)) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture
def tab(browser, base):
    tab = Tab(browser, base)
    yield tab
    tab.close()


NO_INJECTED_ELEMENTS = """() => {
    const docs = [document, window.parent.document];
    return docs.every(d => d.querySelectorAll('img[src="x"], img[src="y"]').length === 0);
}"""


def test_hostile_names_show_as_text_and_nothing_executes(tab):
    figure = tab.wait_drawn("loss")
    assert sorted(by_role(figure, "center")) == [EVIL, "plain"]
    tab.wait_drawn(EVIL_TAG)
    frame = tab.frame

    # The names are on the page as the very characters of the folder and tag names.
    assert frame.evaluate(
        "() => [...document.querySelectorAll('.run-group .group-name')].map(e => e.textContent)"
    ) == [EVIL, "plain"]
    assert f"{EVIL}/seed_0" in frame.evaluate(
        "() => [...document.querySelectorAll('.run-group li')].map(e => e.textContent)"
    )
    assert EVIL_TAG in frame.evaluate(
        "() => [...document.querySelectorAll('.card h3')].map(e => e.textContent)"
    )
    assert EVIL in frame.evaluate("() => document.querySelector('.legend').textContent")
    tab.ui.locator(".summary-section").scroll_into_view_if_needed()  # fetched once on screen
    tab.ui.locator(".summary-table tbody tr").first.wait_for()
    summary_groups = frame.evaluate(
        "() => [...document.querySelectorAll('.summary-table tbody tr')].map(r => r.dataset.group)"
    )
    assert summary_groups.count(EVIL) == 2
    # That chart hover labels spell hostile names out literally is checked in test_reliability.py.

    # Chosen as the Compare section's baseline and on a card along the curve, the name goes through
    # the URL hash and back after a reload, and shows as text in the tables and sentences.
    tab.ui.locator(".compare-section").scroll_into_view_if_needed()
    tab.ui.locator("select[name=compare_tag]").select_option(EVIL_TAG)
    tab.ui.locator("select[name=baseline]").select_option(EVIL)
    frame.wait_for_function(
        "(evil) => document.querySelector('.compare-section').dataset.baseline === evil", arg=EVIL
    )
    assert frame.evaluate(
        "() => [...document.querySelectorAll('.compare-groups tbody td.name')].map(e => e.textContent)"
    ) == [EVIL, "plain"]
    sentences = frame.evaluate(
        "() => [...document.querySelectorAll('.sentences li')].map(e => e.textContent)"
    )
    assert len(sentences) == 1 and EVIL in sentences[0] and EVIL_TAG in sentences[0]
    card = tab.ui.locator(".card[data-tag='loss']")
    card.locator("button[data-role=along]").click()
    card.locator("select[data-role=along-a]").select_option(EVIL)
    card.locator("select[data-role=along-b]").select_option("plain")
    tab.wait_drawn("loss", compare_a=EVIL, compare_b="plain")
    assert card.locator(".along-text").inner_text().startswith(f"{EVIL} vs plain differ at ")
    assert tab.hash_state()["baseline"] == EVIL
    tab.reload()
    tab.wait_drawn("loss", compare_a=EVIL, compare_b="plain")
    tab.ui.locator(".compare-section").scroll_into_view_if_needed()
    tab.ui.locator(".compare-groups tbody tr").first.wait_for()
    assert tab.ui.locator("select[name=baseline]").input_value() == EVIL
    assert tab.ui.locator(".card[data-tag='loss'] select[data-role=along-a]").input_value() == EVIL

    assert tab.frame.evaluate(NO_INJECTED_ELEMENTS)
    assert tab.frame.evaluate("() => document.querySelectorAll('img').length") == 0
    assert tab.dialogs == [], f"a dialog opened: {tab.dialogs}"
    assert tab.errors == []


def test_new_runs_appear_on_tensorboards_reload_without_reloading_the_page(tab, logdir):
    figure = tab.wait_drawn("loss")
    sizes = {g: t[0]["customdata"][0][2] for g, t in by_role(figure, "hover").items()}
    assert sizes == {EVIL: 2, "plain": 2}
    write(str(logdir), "plain/seed_2", 7)

    # TensorBoard's own reload button: the tab hears of the reload and fetches again.
    def grown() -> bool:
        tab.page.locator("app-header-reload button").click()
        try:
            tab.frame.wait_for_function(
                """() => [...document.querySelectorAll('.run-group')].some(g =>
                    g.querySelector('.group-name').textContent === 'plain'
                    && g.querySelector('.count').textContent === '3')""",
                timeout=3000,
            )
            return True
        except Exception:  # not read by the data server yet: reload again
            return False

    assert any(grown() for _ in range(20)), "the new run never showed"
    figure = tab.wait_drawn("loss")
    tab.frame.wait_for_function(
        """() => {
            const gd = document.querySelector('.card[data-tag=loss] .plot');
            return gd.data.some(t => t.meta.role === 'hover' && t.meta.group === 'plain'
                                     && t.customdata[0][2] === 3);
        }"""
    )
    figure = tab.figure("loss")
    plain = by_role(figure, "hover")["plain"][0]
    assert plain["customdata"][0][1:3] == [3, 3]
    assert np.isfinite(np.array(plain["y"], dtype=float)).all()
    assert tab.dialogs == []
