"""A chart card's SVG and PNG downloads, and the tab's colours as the figure module repeats them,
in real headless Chromium against a real ``tensorboard`` on demo_logs/."""

from __future__ import annotations

import datetime
import importlib.util
import json
import os
import struct
import textwrap
import xml.etree.ElementTree as ET

import pytest
from browser import Tab, chromium
from server import tensorboard

from tb_aggregate_plugin.write import palette
from tb_aggregate_plugin.write import table_text as export

pytestmark = [pytest.mark.browser, pytest.mark.server]

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(REPO, "demo_logs")
FRONTEND = os.path.join(REPO, "frontend")
SVG_NS = "{http://www.w3.org/2000/svg}"
# In the tab's frame: the URL of one of its static files (next to its stylesheet, which index.js links).
STATIC_URL = "((name) => document.querySelector('link[rel=stylesheet]').href.replace(/style\\.css$/, name))"


def frontend_env(tmp_dir) -> dict:
    """Environment for a tensorboard that serves this checkout's frontend/.

    The tab's files are the package ``tb_aggregate_plugin.static``; an editable install made from
    another checkout (a second work tree of the same repository) maps that name to its own folder.
    Then a ``sitecustomize`` on the path maps it back here, for the tensorboard started by the test.
    """
    spec = importlib.util.find_spec("tb_aggregate_plugin.static")
    served = os.path.dirname(spec.origin) if spec and spec.origin else None
    if served and os.path.samefile(served, FRONTEND):
        return {}
    (tmp_dir / "sitecustomize.py").write_text(
        textwrap.dedent(
            f"""
            import importlib.util, os, sys
            _FRONTEND = {FRONTEND!r}

            class _ThisFrontend:
                @staticmethod
                def find_spec(name, path=None, target=None):
                    if name != "tb_aggregate_plugin.static":
                        return None
                    return importlib.util.spec_from_file_location(
                        name, os.path.join(_FRONTEND, "__init__.py"), submodule_search_locations=[_FRONTEND]
                    )

            sys.meta_path.insert(0, _ThisFrontend)
            """
        )
    )
    path = [str(tmp_dir), REPO] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {"PYTHONPATH": os.pathsep.join(path)}


@pytest.fixture(scope="module")
def tab(tmp_path_factory):
    env = frontend_env(tmp_path_factory.mktemp("frontend-shim"))
    with tensorboard(DEMO, env=env) as base, chromium() as browser:
        tab = Tab(browser, base)
        yield tab
        assert tab.dialogs == [], f"a dialog opened: {tab.dialogs}"
        assert tab.errors == [], f"uncaught errors in the page: {tab.errors}"
        tab.close()


def download(tab: Tab, tag: str, role: str):
    button = tab.ui.locator(f".card[data-tag='{tag}'] [data-role={role}]")
    button.wait_for()
    tab.frame.wait_for_function(
        "([tag, role]) => !document.querySelector(`.card[data-tag='${tag}'] [data-role=${role}]`).disabled",
        arg=[tag, role],
    )
    with tab.page.expect_download() as info:
        button.click()
    download = info.value
    with open(download.path(), "rb") as f:
        return download.suggested_filename, f.read()


def plot_size(tab: Tab, tag: str) -> tuple[int, int]:
    return tuple(
        tab.frame.evaluate(
            """(tag) => { const gd = [...document.querySelectorAll('.card')]
                .find(c => c.dataset.tag === tag).querySelector('.plot');
                return [gd._fullLayout.width, gd._fullLayout.height]; }""",
            tag,
        )
    )


def test_svg_download_is_the_chart_named_after_the_tag(tab):
    tab.wait_drawn("train/loss")
    name, body = download(tab, "train/loss", "svg")
    assert name == "aggregate-train_loss.svg"
    root = ET.fromstring(body)  # well-formed XML
    assert root.tag == f"{SVG_NS}svg"
    texts = [t for t in root.iter(f"{SVG_NS}text")]
    words = " ".join("".join(t.itertext()) for t in texts)
    assert "train/loss" in words  # the title
    for group in ("lr=0.01", "lr=0.03", "lr=0.1"):
        assert f"{group} (5 runs)" in words  # the legend
    assert "band: ±1 std" in words and "dashed: fewer runs" in words
    width, height = plot_size(tab, "train/loss")
    assert int(float(root.get("width"))) == width and int(float(root.get("height"))) > height
    # The traces as drawn: per group two band edges and a line, one more where it is dashed.
    traces = [g for g in root.iter(f"{SVG_NS}g") if "trace scatter" in g.get("class", "")]
    assert len(traces) == 3 * 3 + 2  # lr=0.03 and lr=0.1 have fewer runs at their ends


def test_png_download_is_twice_the_size_on_screen(tab):
    tab.wait_drawn("val/accuracy")
    name, body = download(tab, "val/accuracy", "png")
    assert name == "aggregate-val_accuracy.png"
    assert body[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", body[16:24])  # IHDR
    screen_width, _ = plot_size(tab, "val/accuracy")
    assert width == 2 * screen_width and height > 0
    pixels = image_pixels(body)
    if pixels is not None:
        assert (pixels[..., :3].min(axis=-1) < 0.9).mean() > 0.02  # not a blank image


def image_pixels(png: bytes):
    try:
        import io

        import matplotlib.image
    except ImportError:
        return None
    return matplotlib.image.imread(io.BytesIO(png), format="png")


def in_module(tab: Tab, module: str, body: str, arg):
    """Run the JavaScript ``body`` in the tab's frame, ``mod`` being the tab's ES module ``module``."""
    script = f"async (arg) => {{ const mod = await import({STATIC_URL}({module!r})); {body} }}"
    return tab.frame.evaluate(script, arg)


def test_file_stems_follow_the_csv_download_rule(tab):
    names = ["train/loss", "a b|c", "../../etc/passwd", "ünïcode", "...", "-x-", "<img src=x>", "a\\b"]
    stems = in_module(tab, "dom.js", "return arg.map(mod.fileStem);", names)
    when = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    suffix = "-20260101T000000Z.csv"
    assert stems == [export.download_name(n, "csv", when)[len("aggregate-") : -len(suffix)] for n in names]


def test_tab_colours_and_group_order_are_the_palette_modules(tab):
    tab.wait_drawn("train/loss")
    drawn = tab.frame.evaluate(
        """() => { const gd = [...document.querySelectorAll('.card')]
            .find(c => c.dataset.tag === 'train/loss').querySelector('.plot');
            const out = {};
            for (const t of gd.data) if (t.meta && t.meta.role === 'center') out[t.meta.group] = t.line.color;
            return out; }"""
    )
    assert drawn == palette.group_colors(["lr=0.01", "lr=0.03", "lr=0.1"])
    # colorFor past the palette is hsl(): compared with the browser's own conversion to sRGB.
    converted = in_module(
        tab,
        "traces.js",
        """const ctx = document.createElement('canvas').getContext('2d');
           return Array.from({length: arg}, (_, i) => {
               ctx.fillStyle = '#000000'; ctx.fillStyle = mod.colorFor(i); return ctx.fillStyle; });""",
        120,
    )
    assert converted == [palette.color_for(i) for i in range(120)]
    # The tab numbers groups in the order of Object.keys of the listing's groups (written sorted).
    names = ["b", "10", "2", "a", "01", "-1", "0", "4294967294", "4294967295", "lr=0.1", "Z", "é"]
    listing = json.dumps(dict.fromkeys(sorted(names)))
    keys = tab.frame.evaluate("(text) => Object.keys(JSON.parse(text))", listing)
    assert keys == palette.group_order(names)
