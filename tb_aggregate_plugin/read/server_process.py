"""Starting TensorBoard's data server: where its executable is, its command line, and what it says when
it fails.

Only the standard library: the command line starts the server before numpy and TensorBoard's
modules are imported, which then load while it does.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess


class DataServerFailed(RuntimeError):
    """TensorBoard's data server started but could not load the logdir (the reason is its own)."""


def start(
    logdir: str, folder: str, *, reload: str = "once", log=subprocess.PIPE, **popen
) -> subprocess.Popen:
    """The data server started on ``logdir`` (an absolute folder or ``gs://BUCKET/PREFIX``), loading it
    once (``reload="once"``) or again and again (``"0"``: as soon as a load cycle ends). It writes its
    port and any start-up error into ``folder`` (:func:`port`, :func:`exit_reason`), keeps every point
    of scalars and hparams, logs each load cycle (to ``log``: its stderr, a pipe by default) and exits
    when its stdin is closed."""
    args = [
        binary(),
        f"--logdir={logdir}",
        f"--error-file={os.path.join(folder, 'error')}",  # why it cannot start, e.g. a logdir it cannot read
        f"--reload={reload}",
        "--samples-per-plugin=scalars=all,hparams=all",  # every point of these two plugins
        "--port=0",
        f"--port-file={os.path.join(folder, 'port')}",
        "--die-after-stdin",
        "--verbose",  # its log says when a load cycle is finished
    ]
    return subprocess.Popen(args, stdin=subprocess.PIPE, stderr=log, **popen)


def port(folder: str) -> int:
    """The port of the server started with :func:`start` on ``folder``, once it listens."""
    with open(os.path.join(folder, "port")) as f:
        return int(f.read())


def exit_reason(proc: subprocess.Popen, folder: str) -> str:
    """Why the server started on ``folder`` exited (waits for it): its error file, else its status."""
    status = proc.wait()
    try:
        with open(os.path.join(folder, "error"), encoding="utf-8", errors="replace") as f:
            said = " ".join(f.read().split())
    except OSError:
        said = ""
    return said or f"exited with status {status}"


def panic_message(line: str) -> str:
    """The message of a Rust panic line (``thread 'X' panicked at 'message', file:line``), shortened
    to its first clause: its details are a chain of nested error values."""
    found = re.search(r"panicked at '(.*)', \S+:\d+", line)
    message = found.group(1) if found else line.strip()
    return message.split("(", 1)[0].strip()[:300]


@functools.cache
def binary() -> str:
    """The data server's executable, found as TensorBoard finds it (its environment variable, then
    the ``tensorboard_data_server`` package). TensorBoard's own lookup lives in a module that imports
    its gRPC client and TensorFlow stand-in first (0.15 s), before the server could start loading."""
    path = os.environ.get("TENSORBOARD_DATA_SERVER_BINARY")
    if not path:
        try:
            import tensorboard_data_server
        except ImportError:
            path = None
        else:
            path = tensorboard_data_server.server_binary()
    if not path or not os.path.isfile(path):
        from tensorboard.data import server_ingester  # its lookup, and its error saying why

        return server_ingester.get_server_binary().path
    return path
