"""Figures and tables for papers (tb_aggregate_plugin.write): drawn from real event files, checked
by rendering them with other programs (poppler's pdftoppm and pdffonts, pdflatex) and by reading the
numbers back, compared with the CSV export of the same result."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest
from writers import noisy_curve, write_run

import tb_aggregate_plugin as tba
from tb_aggregate_plugin.compute import summary as summaries
from tb_aggregate_plugin.write import figure, palette
from tb_aggregate_plugin.write import table_markup as tm
from tb_aggregate_plugin.write.table_text import to_csv

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(REPO, "demo_logs")
SVG = "{http://www.w3.org/2000/svg}"
TAGS = ["train/accuracy", "train/loss", "val/accuracy", "val/loss"]
GROUPS = ["lr=0.01", "lr=0.03", "lr=0.1"]
HOSTILE = [
    "a|b",
    "_%&#${}~^\\",
    "$x^2$ <b>*bold*</b>",
    "[link](x) `code`",
    "-- ,,\"'",
    "\\input{/etc/passwd}",
]


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} not found: bash scripts/test.sh installs it (Debian package)")
    return path


@pytest.fixture(scope="module")
def result():
    return tba.compute(DEMO, tba.Query(band="ci95", reductions="mean,ci95_lo,ci95_hi"), loader="python")


@pytest.fixture(scope="module")
def drawn(result):
    return figure.draw(result)


@pytest.fixture(scope="module")
def hostile_logs(tmp_path_factory):
    """Two groups of two runs whose names hold what markup and mathtext would take as syntax."""
    root = tmp_path_factory.mktemp("hostile")
    steps = list(range(0, 50, 5))
    for g, name in enumerate(HOSTILE[:3]):
        for seed in range(2):
            values = noisy_curve(len(steps), 10 * g + seed)
            write_run(str(root), f"{name}/seed_{seed}", {"loss$_{%}": (steps, values)})
    return root


def save_bytes(fig, fmt: str) -> bytes:
    out = io.BytesIO()
    figure.save(fig, out, fmt)
    return out.getvalue()


def svg_root(fig) -> ET.Element:
    return ET.fromstring(save_bytes(fig, "svg"))


# -- figure: what is drawn --------------------------------------------------------------------------


def test_plotted_numbers_are_the_csv_numbers(result, drawn):
    csv = pd.read_csv(io.BytesIO(to_csv(result.table())))
    axes = [ax for ax in drawn.axes if ax.get_visible()]
    assert [ax.get_title(loc="left") for ax in axes] == TAGS
    order = palette.group_order(result.groups)
    assert order == GROUPS
    for p, (tag, ax) in enumerate(zip(TAGS, axes)):
        lines = {line.get_gid(): line for line in ax.get_lines()}
        bands = {c.get_gid(): c for c in ax.collections}
        for gi, group in enumerate(order):
            rows = csv[(csv["tag"] == tag) & (csv["group"] == group)]
            size = len(result.groups[group])
            solid = lines[f"line-{p}-{gi}"]
            np.testing.assert_array_equal(solid.get_xdata(), rows["step"].to_numpy())
            y = np.asarray(solid.get_ydata(), dtype=float)
            full = rows["n"].to_numpy() >= size
            np.testing.assert_array_equal(y[full], rows["mean"].to_numpy()[full])
            assert np.isnan(y[~full]).all()
            fewer = lines.get(f"line-{p}-{gi}-fewer")
            if full.all():
                assert fewer is None
            else:  # dashed where fewer runs stand behind the point, joined to the solid neighbours
                dashed = np.asarray(fewer.get_ydata(), dtype=float)
                shown = np.isfinite(dashed)
                near = ~full | np.convolve(~full, [1, 1, 1], "same").astype(bool)
                np.testing.assert_array_equal(shown, near)
                np.testing.assert_array_equal(dashed[shown], rows["mean"].to_numpy()[shown])
                assert fewer.get_linestyle() != "-" and solid.get_linestyle() == "-"
            # The band: each x has its two edges, ci95_lo and ci95_hi, among the polygon's points.
            (path,) = bands[f"band-{p}-{gi}"].get_paths()
            points = {(float(x), float(v)) for x, v in path.vertices}
            for x, lo, hi in rows[["step", "ci95_lo", "ci95_hi"]].itertuples(index=False):
                assert (float(x), lo) in points and (float(x), hi) in points
            assert solid.get_color() == palette.color_for(gi)


def test_svg_has_one_line_per_group_per_panel_and_text_as_text(drawn):
    root = svg_root(drawn)
    ids = [g.get("id") for g in root.iter(f"{SVG}g") if g.get("id")]
    for p in range(len(TAGS)):
        for gi in range(len(GROUPS)):
            (line,) = [g for g in root.iter(f"{SVG}g") if g.get("id") == f"line-{p}-{gi}"]
            (path,) = line.iter(f"{SVG}path")
            assert f"stroke: {palette.color_for(gi)}" in path.get("style")
            assert ids.count(f"band-{p}-{gi}") == 1
        # lr=0.01 has every run at every step; lr=0.03 stops early and lr=0.1 loses a run to NaN.
        assert [f"line-{p}-{gi}-fewer" in ids for gi in range(3)] == [False, True, True]
    words = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    for tag in TAGS:
        assert words.count(tag) == 2  # the panel's title and its y label
    assert words.count("step") == len(TAGS)
    assert [w for w in words if "runs)" in w] == ["lr=0.01 (5 runs)", "lr=0.03 (5 runs)", "lr=0.1 (5 runs)"]
    assert "line: mean · band: 95% CI (Student t) · dashed: fewer runs than the group" in words


def test_pdf_renders_and_embeds_its_fonts_as_truetype(drawn, tmp_path):
    pdf = tmp_path / "figure.pdf"
    figure.save(drawn, str(pdf))
    assert pdf.read_bytes().startswith(b"%PDF")
    subprocess.run(
        [tool("pdftoppm"), "-r", "60", "-png", "-singlefile", str(pdf), str(tmp_path / "page")], check=True
    )
    import matplotlib.image

    pixels = matplotlib.image.imread(str(tmp_path / "page.png"))[..., :3]
    assert pixels.shape[0] > 200 and pixels.shape[1] > 300
    ink = pixels.min(axis=-1) < 0.85
    assert ink.mean() > 0.03, "the rendered page is (nearly) blank"
    # Each group's colour is on the page (the lines; the bands are lighter).
    for gi in range(3):
        rgb = np.array([int(palette.color_for(gi)[i : i + 2], 16) for i in (1, 3, 5)]) / 255
        assert (np.abs(pixels - rgb).max(axis=-1) < 0.08).sum() > 50, palette.color_for(gi)
    fonts = subprocess.run([tool("pdffonts"), str(pdf)], check=True, capture_output=True, text=True).stdout
    rows = fonts.splitlines()[2:]
    assert rows, fonts
    for row in rows:
        assert "TrueType" in row, fonts  # Type 42: TrueType outlines, not Type 3 bitmaps
        assert re.search(r"\byes\s+yes\b", row), fonts  # embedded and subset


def test_same_input_same_bytes(result, drawn):
    again = figure.draw(result)
    for fmt in ("pdf", "svg", "png"):
        assert save_bytes(drawn, fmt) == save_bytes(again, fmt), fmt
    pdf = save_bytes(drawn, "pdf")
    assert b"CreationDate" not in pdf
    assert b"<dc:date>" not in save_bytes(drawn, "svg")


def test_saving_leaves_matplotlib_as_it_was(drawn, tmp_path):
    import matplotlib

    before = dict(matplotlib.rcParams)
    backend = matplotlib.rcParams._get_backend_or_none()
    figure.save(drawn, str(tmp_path / "f.svg"))
    figure.save(drawn, str(tmp_path / "f.PNG"))
    assert dict(matplotlib.rcParams) == before
    assert matplotlib.rcParams._get_backend_or_none() == backend
    assert (tmp_path / "f.PNG").read_bytes().startswith(b"\x89PNG")
    with pytest.raises(ValueError, match="one of pdf, svg, png"):
        figure.save(drawn, str(tmp_path / "f.jpg"))
    with pytest.raises(ValueError, match="fmt is needed"):
        figure.save(drawn, io.BytesIO())


def test_grid_size_log_scale_and_time_axes(result):
    fig = figure.draw(result, cols=2, log_y=True, size=(6, 4.5), dpi=80)
    assert tuple(fig.get_size_inches()) == (6, 4.5) and fig.dpi == 80
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(fig.axes) == 4 and all(ax.get_yscale() == "log" for ax in axes)
    default = figure.draw(result)
    assert len(default.axes) == 6 and sum(ax.get_visible() for ax in default.axes) == 4  # 3 columns
    width, height = default.get_size_inches()
    assert (
        width == 3 * figure.PANEL_SIZE[0]
        and 2 * figure.PANEL_SIZE[1] + 0.3 < height < 2 * figure.PANEL_SIZE[1] + 1
    )
    wall = tba.compute(DEMO, result.query.replace(x="wall", tags="^val/loss$"), loader="python")
    fig = figure.draw(wall)
    (ax,) = fig.axes
    assert ax.get_xlabel() == "wall time"
    line = next(line for line in ax.get_lines() if line.get_gid() == "line-0-0")
    assert np.asarray(line.get_xdata()).dtype.kind == "M"  # dates
    assert save_bytes(fig, "png").startswith(b"\x89PNG")
    with pytest.raises(ValueError, match="cols"):
        figure.draw(result, cols=0)


def test_hostile_names_are_drawn_as_they_are(hostile_logs):
    result = tba.compute(str(hostile_logs), tba.Query(band="std"), loader="python")
    assert sorted(result.groups) == sorted(HOSTILE[:3])
    root = svg_root(figure.draw(result))
    words = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    for name in HOSTILE[:3]:
        assert f"{name} (2 runs)" in words  # no mathtext, no markup: the literal name
    assert words.count("loss$_{%}") == 2


def test_without_matplotlib_one_line_says_how_to_install():
    script = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from tb_aggregate_plugin.write import figure\n"
        "calls = figure.check_available, lambda: figure.draw(None), lambda: figure.save(None, 'x.pdf')\n"
        "for call in calls:\n"
        "    try:\n"
        "        call()\n"
        "    except figure.MissingLibrary as exc:\n"
        "        print(exc)\n"
        "print('pyplot' in ' '.join(sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["pip install 'tb-aggregate[plot]'"] * 3 + ["False"]


# -- tables -----------------------------------------------------------------------------------------


def md_rows(text: str) -> list[list[str]]:
    """The cells of a GitHub Markdown table, unescaped: a ``\\`` takes the next character literally;
    an unescaped ``|`` ends a cell."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("|"):
            continue
        cells, cell, i = [], "", 1
        while i < len(line):
            c = line[i]
            if c == "\\" and i + 1 < len(line):
                cell += line[i + 1]
                i += 2
                continue
            if c == "|":
                cells.append(cell.strip())
                cell = ""
            else:
                cell += c
            i += 1
        assert cell.strip() == "", f"text after the last pipe: {line!r}"
        rows.append(cells)
    return rows


def groups_table(names=GROUPS) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "group": list(names),
            "runs": [5, 5, 4],
            "mean": [1.0412, 0.4731, 0.4512],
            "std": [0.0312, 0.0451, 0.1003],
            "ci95_lo": [1.0025, 0.4171, 0.2916],
            "ci95_hi": [1.0799, 0.5291, 0.6108],
            "median": [1.0398, 0.4702, 0.4431],
            "iqm": [1.0401, 0.4712, 0.4490],
            "iqm_lo": [1.0102, 0.4304, 0.3998],
            "iqm_hi": [1.0603, 0.5207, 0.5511],
        }
    )


def pairs_table(names=GROUPS) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "a": [names[0], names[0]],
            "b": [names[1], names[2]],
            "diff": [-0.5681, -0.5900],
            "diff_lo": [-0.6203, -0.7512],
            "diff_hi": [-0.5159, -0.4288],
            "t": [23.14, 9.297],
            "df": [7.12, 3.41],
            "p": [1.2e-7, 0.00213],
            "p_holm": [2.4e-7, 0.0613],
            "p_mwu": [0.0079, 0.0159],
            "p_improve": [1.0, 0.95],
            "p_improve_lo": [0.9, 0.7],
            "p_improve_hi": [1.0, 1.0],
            "runs_needed": [2, np.nan],
        }
    )


def test_rounding_follows_the_interval():
    assert (
        tm.decimals_for(0.5, 0.5234) == 3 and tm.decimals_for(0, 234) == -1 and tm.decimals_for(1, 1) is None
    )
    assert tm.fixed(1234.5, -1) == "1230" and tm.fixed(-0.0004, 3) == "0.000"
    ps = [0.5, 1.0, 0.99999, 0.0995, 0.012345, 0.001, 0.00099, 1e-12, float("nan")]
    assert [tm.format_p(p) for p in ps] == [
        "0.50",
        "1.0",
        "1.0",
        "0.10",
        "0.012",
        "0.0010",
        "< 0.001",
        "< 0.001",
        "–",
    ]
    rows = md_rows(
        tm.to_markdown(groups_table(), "groups", tag="val/loss", lower_is_better=summaries.is_lower_better)
    )
    assert rows[0] == ["group", "runs", "mean (95% CI)", "std", "median", "IQM (95% CI)"]
    # mean 1.0412 in [1.0025, 1.0799]: width 0.077, so 3 decimals; the t interval is symmetric: ±.
    assert rows[2] == ["lr=0.01", "5", "1.041 ± 0.039", "0.031", "1.040", "1.040 [1.010, 1.060]"]
    assert rows[3][2] == "0.47 ± 0.06" and rows[4][2] == "**0.45 ± 0.16**"  # lowest loss: bold
    # The bootstrap-like IQM interval is not symmetric: brackets, for the whole column.
    assert all("[" in r[5] for r in rows[2:])
    forced = md_rows(tm.to_markdown(groups_table(), "groups", tag="val/loss", ci="brackets"))
    assert forced[2][2] == "**1.041 [1.002, 1.080]**"  # without a rule, the highest is the best
    with pytest.raises(ValueError, match="give tag"):
        tm.to_markdown(groups_table(), "groups", lower_is_better=summaries.is_lower_better)


def test_summary_tables_bold_the_best_final_per_tag(result):
    summary = summaries.summary(result)
    text = tm.to_markdown(summary, "summary", lower_is_better=summaries.is_lower_better, band="ci95")
    rows = md_rows(text)
    header, body = rows[0], rows[2:]
    assert header == ["tag", "group", "runs", "final", "runs at final", "best", "best at (step)"]
    assert len(body) == 12 and all(len(r) == len(header) for r in body)
    for tag in TAGS:
        sub = summary[summary["tag"] == tag]
        pick = sub["final"].idxmin() if summaries.is_lower_better(tag) else sub["final"].idxmax()
        bold = [r[1] for r in body if r[0] == tag and r[3].startswith("**")]
        assert bold == [sub.loc[pick, "group"]]
    # Each final with its band, at the precision the band supports.
    row = summary[(summary["tag"] == "val/loss") & (summary["group"] == "lr=0.01")].iloc[0]
    d = tm.decimals_for(row["final_lo"], row["final_hi"])
    cell = next(r[3] for r in body if r[:2] == ["val/loss", "lr=0.01"])
    assert cell == f"{row['final']:.{d}f} ± {(row['final_hi'] - row['final_lo']) / 2:.{d}f}"
    assert "5 runs per group" in text and "95% confidence interval" in text
    latex = tm.to_latex(
        summary, "summary", lower_is_better=summaries.is_lower_better, band="ci95", caption="Demo"
    )
    assert latex.count(r"\midrule") == 1 + 3
    assert len([line for line in latex.splitlines() if r"\mathbf{" in line]) == 4
    assert r"\caption{Demo. 5 runs per group." in latex


def test_daggers_mark_holm_significant_groups_against_the_baseline():
    text = tm.to_markdown(groups_table(), "groups", tag="val/loss", pairs=pairs_table())
    rows = md_rows(text)
    assert [r[2].endswith("†") for r in rows[2:]] == [False, True, False]  # p_holm 2.4e-7 and 0.061
    assert "Holm-adjusted p < 0.05 against lr=0.01" in text.replace("\\", "")
    pairs = md_rows(tm.to_markdown(pairs_table(), "pairs"))
    assert pairs[0] == [
        "a",
        "b",
        "difference (95% CI)",
        "t",
        "df",
        "p",
        "p (Holm)",
        "p (MWU)",
        "P(a > b) (95% CI)",
        "runs needed",
    ]
    assert pairs[2] == [
        "lr=0.01",
        "lr=0.03",
        "-0.57 ± 0.05",  # width 0.104: 2 decimals
        "23.14",
        "7.1",
        "< 0.001",
        "< 0.001 †",
        "0.0079",
        "1.00 [0.90, 1.00]",
        "2",
    ]
    assert pairs[3][6] == "0.061" and pairs[3][9] == "–"
    latex = tm.to_latex(pairs_table(), "pairs")
    assert r"$<0.001^\dagger$" in latex and r"$^\dagger$: Holm-adjusted" in latex
    with pytest.raises(ValueError, match="baseline"):
        everyone = pd.concat([pairs_table(), pairs_table().assign(a="lr=0.03", b="lr=0.1")])
        tm.to_markdown(groups_table(), "groups", tag="x", pairs=everyone)
    with pytest.raises(ValueError, match="needs the column"):
        tm.to_markdown(groups_table().drop(columns="ci95_lo"), "groups")
    with pytest.raises(ValueError, match="unknown table kind"):
        tm.to_latex(groups_table(), "group")


def test_markdown_keeps_hostile_names_literal():
    names = HOSTILE[:3]
    text = tm.to_markdown(groups_table(names), "groups", tag="a|b", pairs=pairs_table(names))
    rows = md_rows(text)
    assert all(len(r) == 6 for r in rows)
    assert [r[0] for r in rows[2:]] == names  # unescaped, each name comes back as it was
    body = "\n".join(line for line in text.splitlines() if line.startswith("|"))
    assert "**bold**" not in body and "<b>" not in body and "`code`" not in body
    for name in HOSTILE:
        (cell,) = md_rows(
            tm.to_markdown(
                pd.DataFrame({"a": [name], "b": ["x"], "diff": [1.0], "diff_lo": [0.5], "diff_hi": [1.5]}),
                "pairs",
            )
        )[2][:1]
        assert cell == name
    assert tm.markdown_escape("#1 -x") == r"\#1 -x" and tm.markdown_escape("tab\there") == "tab here"


def latex_document(*tables: str, t1: bool = False) -> str:
    fontenc = "\\usepackage[T1]{fontenc}\n" if t1 else ""
    return (
        "\\documentclass{article}\n\\usepackage{booktabs}\n"
        + fontenc
        + "\\begin{document}\n"
        + "\n".join(tables)
        + "\\end{document}\n"
    )


def test_latex_tables_compile_and_show_hostile_names_literally(result, tmp_path):
    names = ["a|b", "_%&#${}~^\\", "\\input{/etc/passwd} <b>--"]
    tables = [
        tm.to_latex(
            summaries.summary(result),
            "summary",
            lower_is_better=summaries.is_lower_better,
            band="ci95",
            caption="Demo: 3 learning rates",
            label="tab:demo summary",
        ),
        tm.to_latex(
            groups_table(names),
            "groups",
            tag="val/loss",
            lower_is_better=summaries.is_lower_better,
            pairs=pairs_table(names),
            caption="Final val/loss of \\ 50% {runs}",
        ),
        tm.to_latex(pairs_table(names), "pairs", environment=False),
    ]
    for table in tables:  # booktabs rules; every row has as many cells as the column spec
        assert table.count(r"\toprule") == table.count(r"\bottomrule") == 1
        spec = re.search(r"\\begin\{tabular\}\{([lr]+)\}", table).group(1)
        rows = [line for line in table.splitlines() if line.endswith(r"\\")]
        assert rows and all(len(re.findall(r"(?<!\\)&", row)) == len(spec) - 1 for row in rows)
    assert r"\label{tab:demo-summary}" in tables[0]
    pdflatex = tool("pdflatex")
    for t1 in (False, True):
        (tmp_path / "doc.tex").write_text(latex_document(*tables, t1=t1), encoding="utf-8")
        out = subprocess.run(
            [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stdout[-3000:]
        log = (tmp_path / "doc.log").read_text(errors="replace")
        assert "(/etc/passwd" not in log  # never opened as input
        if t1 and shutil.which("pdftotext"):  # T1 fonts have the ASCII signs where ASCII has them
            text = subprocess.run(
                ["pdftotext", "doc.pdf", "-"], cwd=tmp_path, capture_output=True, text=True
            ).stdout
            for name in ("a|b", "_%&#${}~^\\", "\\input{/etc/passwd} <b>--"):
                assert name in text, name
