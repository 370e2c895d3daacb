"""The README's front door: every command it shows runs as shown, on a copy of demo_logs/, and its
two set-up commands are the ones CI runs; the pages it links to exist."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
BLOCKS = re.findall(r"```(bash|python)\n(.*?)```", README, re.S)


def _commands() -> list[str]:
    """Every ``tb-aggregate`` line of the README's shell blocks, its trailing comment removed."""
    lines = []
    for kind, body in BLOCKS:
        if kind == "bash":
            lines += [
                re.sub(r"\s+#.*$", "", line).strip()
                for line in body.splitlines()
                if line.startswith("tb-aggregate ")
            ]
    return lines


@pytest.fixture
def workdir(tmp_path, demo_logs):
    shutil.copytree(demo_logs, tmp_path / "demo_logs", ignore=shutil.ignore_patterns("*.py"))
    return tmp_path


def test_the_readme_shows_commands_to_run():
    assert len(_commands()) >= 3 and any(kind == "python" for kind, _ in BLOCKS)


@pytest.mark.parametrize("command", _commands())
def test_every_command_of_the_readme_runs_as_shown(workdir, command):
    argv = shlex.split(command)
    done = subprocess.run(
        [sys.executable, "-m", "tb_aggregate_plugin.cli", *argv[1:]],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr


def test_the_readmes_python_runs_as_shown(workdir):
    code = "\n".join(body for kind, body in BLOCKS if kind == "python")
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=workdir, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "lr=0.03 > lr=0.01 on val/accuracy (final): +0.216" in done.stdout  # the README's own example


def test_the_two_set_up_commands_are_in_the_readme_and_ci_runs_the_test_one():
    assert "pip install . && tensorboard --logdir demo_logs" in README
    assert "bash scripts/test.sh" in README
    with open(os.path.join(REPO, ".ci", "run"), encoding="utf-8") as f:
        assert "bash scripts/test.sh" in f.read()


def test_every_page_the_readme_links_exists():
    pages = re.findall(r"\]\(((?:docs/)?[\w./-]+\.(?:md|png))\)", README) + ["LICENSE"]
    assert len(pages) > 8
    for page in pages:
        assert os.path.exists(os.path.join(REPO, page)), page
    for name in os.listdir(os.path.join(REPO, "docs")):
        if name.endswith(".md"):
            text = open(os.path.join(REPO, "docs", name), encoding="utf-8").read()
            for link in re.findall(r"\]\(([\w./-]+\.(?:md|png))(?:#[\w-]*)?\)", text):
                assert os.path.exists(os.path.join(REPO, "docs", link)), f"{name}: {link}"


def test_no_jargon_a_researcher_cannot_act_on():
    for word in ("the issue's", "DataProvider", "bytes per point"):
        assert word not in README
