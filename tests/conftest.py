import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # tests/writers.py, tests/server.py
import checkout  # noqa: E402

checkout.pin()  # this checkout's package and tab files, whichever checkout is installed

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "fixtures", "real_logs")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def real_logs(tmp_path):
    """A private copy of the shared real event files (never written to in place)."""
    if not os.path.isdir(FIXTURES):
        pytest.fail(f"shared fixtures not found at {FIXTURES}")
    dest = tmp_path / "real_logs"
    shutil.copytree(FIXTURES, dest)
    return dest


@pytest.fixture
def demo_logs():
    return os.path.join(REPO, "demo_logs")
