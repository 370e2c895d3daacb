"""Starting a real ``tensorboard`` process for integration and browser tests."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time

import requests
from checkout import BOOTSTRAP


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout: float = 60.0, interval: float = 0.2, what: str = "condition"):
    """Poll ``predicate`` until it returns a truthy value; return it, or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception as exc:  # the server may not be up yet
            last_error = exc
        time.sleep(interval)
    raise TimeoutError(f"timed out waiting for {what} (last error: {last_error})")


@contextlib.contextmanager
def tensorboard_process(
    logdir: str,
    *,
    load_fast: bool = True,
    samples: int | None = 0,
    reload_interval: int = 1,
    extra: list[str] | None = None,
    preexec_fn=None,
    cwd: str | None = None,
    env: dict | None = None,
    ready=None,
):
    """Run ``tensorboard --logdir logdir`` on a free port; yields ``(base_url, log_path)``.

    ``load_fast=True`` uses the Rust data server, ``False`` the Python multiplexer.
    ``samples`` is ``--samples_per_plugin scalars=N`` (0: every point; None: TensorBoard's default).
    ``preexec_fn``, ``cwd`` and ``env`` (added to the environment) go to the process.
    Waits until ``ready(base_url)`` is true; by default, until the Aggregate plugin lists a run.
    """
    port = free_port()
    args = [
        sys.executable,
        "-c",
        BOOTSTRAP,  # ``-m tensorboard.main``, serving this checkout's plugin and tab
        "--logdir",
        logdir,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        f"--load_fast={'true' if load_fast else 'false'}",
        "--reload_interval",
        str(reload_interval),
    ]
    if samples is not None:
        args += ["--samples_per_plugin", f"scalars={samples}"]
    args += extra or []
    log = tempfile.NamedTemporaryFile(prefix="tensorboard-", suffix=".log", delete=False)
    proc = subprocess.Popen(
        args,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=cwd,
        preexec_fn=preexec_fn,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
    )
    base = f"http://127.0.0.1:{port}"
    if ready is None:

        def ready(url):
            return requests.get(f"{url}/data/plugin/aggregate/runs", timeout=5).json()["runs"]

    try:
        wait_for(lambda: ready(base), timeout=90, what=f"tensorboard on {logdir} (log: {log.name})")
        yield base, log.name
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@contextlib.contextmanager
def tensorboard(logdir: str, **options):
    """:func:`tensorboard_process` yielding the base URL only (``http://127.0.0.1:P``)."""
    with tensorboard_process(logdir, **options) as (base, _):
        yield base
