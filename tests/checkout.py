"""Make ``tb_aggregate_plugin`` and the tab's files (``tb_aggregate_plugin.static``) this checkout's.

An editable install of another checkout maps ``tb_aggregate_plugin.static`` to that checkout's
``frontend/`` by name, so with only ``PYTHONPATH`` pointing here the package would be this checkout's
and the tab's files the other's. The tests' ``tensorboard`` runs :data:`BOOTSTRAP` first, so the page
they drive is the one in this checkout; the test process itself calls :func:`pin` (conftest.py).
"""

from __future__ import annotations

import importlib.util
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FRONTEND = os.path.join(REPO, "frontend")
STATIC = "tb_aggregate_plugin.static"


class _StaticFinder:
    """Finds ``tb_aggregate_plugin.static`` in this checkout's ``frontend/``, before any other finder."""

    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname != STATIC:
            return None
        return importlib.util.spec_from_file_location(
            fullname, os.path.join(FRONTEND, "__init__.py"), submodule_search_locations=[FRONTEND]
        )


def pin() -> None:
    """Import the package and its tab's files from this checkout in this process."""
    if sys.path[:1] != [REPO]:
        sys.path.insert(0, REPO)
    if not any(finder is _StaticFinder for finder in sys.meta_path):
        sys.meta_path.insert(0, _StaticFinder)


# ``python -c BOOTSTRAP ARGS...``: tensorboard's command line, with this checkout pinned first.
BOOTSTRAP = (
    "import sys; "
    f"sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
    "import checkout; checkout.pin(); "
    "from tensorboard import main; main.run_main()"
)
