"""Packaging metadata: a license file, and trove classifiers that PyPI accepts."""

from __future__ import annotations

import ast
import os

from trove_classifiers import classifiers as KNOWN_CLASSIFIERS

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _setup_keywords() -> dict:
    """The literal keyword arguments of the ``setup(...)`` call in setup.py."""
    with open(os.path.join(REPO, "setup.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    call = next(
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setup"
    )
    found = {}
    for keyword in call.keywords:
        try:
            found[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:  # not a literal (the README read at build time)
            pass
    return found


def test_every_classifier_is_a_valid_trove_classifier():
    classifiers = _setup_keywords()["classifiers"]
    assert classifiers, "setup.py lists no classifiers"
    unknown = [c for c in classifiers if c not in KNOWN_CLASSIFIERS]
    assert not unknown, f"not trove classifiers: {unknown}"
    assert len(set(classifiers)) == len(classifiers)


def test_the_check_finds_an_invalid_classifier():
    assert "Framework :: TensorBoard" not in KNOWN_CLASSIFIERS
    assert "Programming Language :: Python :: 3" in KNOWN_CLASSIFIERS


def test_mit_license_file_matches_the_metadata():
    assert _setup_keywords()["license"] == "MIT"
    with open(os.path.join(REPO, "LICENSE"), encoding="utf-8") as f:
        text = f.read()
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 the tb-aggregate authors" in text
    assert "Permission is hereby granted, free of charge" in text


def test_the_wheel_holds_every_module_and_the_tabs_files(tmp_path):
    """``pip install .`` (not editable) gets every module of every stage and the tab's files."""
    import subprocess
    import sys
    import zipfile

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            REPO,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    package = os.path.join(REPO, "tb_aggregate_plugin")
    for folder, dirs, files in os.walk(package):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                rel = os.path.relpath(os.path.join(folder, name), REPO).replace(os.sep, "/")
                assert rel in names, f"{rel} is not in the wheel"
    for name in os.listdir(os.path.join(REPO, "frontend")):
        if name.endswith((".js", ".css")):
            assert f"tb_aggregate_plugin/static/{name}" in names, name
