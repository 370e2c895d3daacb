"""Figures and paper tables from the command line and the Python API: the same options as the
curves, the same numbers as the CSV, and a clear line when the plotting extra is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

import tb_aggregate_plugin as tba
from tb_aggregate_plugin.cli import main as cli_main


@pytest.fixture
def logs(tmp_path, demo_logs):
    return shutil.copytree(demo_logs, tmp_path / "logs", ignore=shutil.ignore_patterns("*.py"))


@pytest.mark.parametrize("ext", ["pdf", "svg", "png"])
def test_cli_writes_a_figure_by_extension(logs, tmp_path, ext):
    out = tmp_path / f"fig.{ext}"
    assert (
        cli_main([str(logs), "--tags", "^val/", "--band", "ci95", "--cols", "1", "-o", str(out), "-q"]) == 0
    )
    data = out.read_bytes()
    assert data[:4] in (b"%PDF", b"\x89PNG", b"<?xm", b"<svg")
    if ext == "svg":  # two panels (one per tag), each with one line per group
        root = ET.fromstring(data)
        ids = [e.get("id") for e in root.iter() if (e.get("id") or "").startswith("line-")]
        solid = [i for i in ids if not i.endswith("-fewer")]  # "-fewer": the dashed piece of a line
        assert sorted(solid) == [f"line-{p}-{g}" for p in range(2) for g in range(3)], ids
    again = tmp_path / f"again.{ext}"
    assert (
        cli_main([str(logs), "--tags", "^val/", "--band", "ci95", "--cols", "1", "-o", str(again), "-q"]) == 0
    )
    if ext != "png":
        assert again.read_bytes() == data  # deterministic vector output


def test_cli_figure_options_are_checked(logs, tmp_path):
    for bad in (["--size", "0,3"], ["--cols", "0"], ["--dpi", "x"]):
        assert cli_main([str(logs), *bad, "-o", str(tmp_path / "f.png")]) == 2
    assert not (tmp_path / "f.png").exists()


def test_without_matplotlib_the_figure_exits_2_with_the_install_line(logs, tmp_path):
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from tb_aggregate_plugin.cli import main\n"
        f"sys.exit(main([{str(logs)!r}, '-o', {str(tmp_path / 'f.pdf')!r}]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "pip install 'tb-aggregate[plot]'" in done.stderr and "Traceback" not in done.stderr
    assert not os.path.exists(tmp_path / "f.pdf")


def test_cli_tables_as_markdown_and_latex(logs, tmp_path):
    md, tex = tmp_path / "t.md", tmp_path / "t.tex"
    assert cli_main([str(logs), "--band", "ci95", "-o", str(md), "-q"]) == 0
    assert cli_main([str(logs), "--compare", "val/loss", "--baseline", "lr=0.01", "-o", str(tex), "-q"]) == 0
    text = md.read_text()
    summary = tba.summary(str(logs), band="ci95")
    assert text.count("\n| val/loss |") == 3 and "95% CI (Student t)" in text
    assert len(summary) == 12
    latex = tex.read_text()
    assert latex.count(r"\toprule") == 2 and r"\dagger" in latex and "lower is better" in latex
    assert latex == tba.compare(str(logs), "val/loss", baseline="lr=0.01", format="tex")


def test_api_plot_draws_the_numbers_of_the_table(logs):
    fig = tba.plot(str(logs), tags="^val/loss$", band="ci95", center="median")
    table = tba.aggregate(str(logs), tags="^val/loss$", band="ci95", center="median", reductions="median")
    (ax,) = fig.axes
    lines = {line.get_gid(): line for line in ax.get_lines() if (line.get_gid() or "").startswith("line-")}
    assert {gid for gid in lines if not gid.endswith("-fewer")} == {"line-0-0", "line-0-1", "line-0-2"}
    groups = sorted(set(table["group"]))  # the tab's order, as the figure's gids number them
    for gid, line in lines.items():
        group = groups[int(gid.split("-")[2])]
        expected = table[table["group"] == group]
        y = np.asarray(line.get_ydata(), dtype=float)
        # The solid line holds the points every run stands behind; the dashed one the others.
        assert set(np.round(y[np.isfinite(y)], 9)) <= set(np.round(expected["median"].to_numpy(), 9))
    with pytest.raises(tba.OptionError):
        tba.summary(str(logs), format="html")
    assert isinstance(tba.summary(str(logs)), pd.DataFrame)
