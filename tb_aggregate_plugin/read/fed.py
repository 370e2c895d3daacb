"""One TensorBoard data server for a whole sliced load, given one slice of runs after another.

The server watches a folder of its own and loads whatever appears there, cycle after cycle
(``--reload=0``). A slice appears at once (its folder of links, made aside, is renamed into the
watched folder) and is taken away the same way once read, so the server drops its runs and reuses
their memory for the next slices. One process for the whole logdir rather than one per slice: the
memory its loader needs (about 400 bytes per point of each run it reads) is asked of the kernel once,
not again for every slice, which took most of the kernel time of a large load (30 of 57 CPU-seconds
for 50M points), and the process starts once.

When is a slice loaded? The server logs the end of each load cycle. A cycle that starts after the
slice appeared loads all of it before it ends, and cycles follow one another, so counting from the
moment the slice appeared, the second end of a cycle is that of such a cycle (the first may end the
cycle that was running then). The server logs into a file, read here when asked: everything logged
before the slice appeared is read at that moment, so no line read late is taken for a new one, and
the server never waits for its log to be read.

Only the standard library is imported here, gRPC when the first slice is waited for.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable

from . import server_process
from .server_process import DataServerFailed

_CYCLE_END = b"Finished load cycle"
_PANIC = b" panicked at "
_POLL = 0.002  # seconds between looks at the log while waiting for a slice


class FedServer:
    """A data server fed slices of runs: :meth:`add`, :meth:`wait`, read, :meth:`remove`; :meth:`close`.

    A slice is named by a key (a short folder name); its runs are served under ``KEY/RUN`` (``KEY``
    for a run at the top of the logdir): :meth:`served` maps those names to the runs' own.
    """

    def __init__(self, link: Callable[[list[str], str], None]):
        """``link(names, folder)`` puts links to the event files of the runs ``names`` in ``folder``."""
        self._link = link
        self._tmp = tempfile.TemporaryDirectory(prefix="tb_aggregate_fed_")
        self._watched = os.path.join(self._tmp.name, "logdir")
        self._aside = os.path.join(self._tmp.name, "aside")  # same file system: renames are atomic
        os.mkdir(self._watched)
        os.mkdir(self._aside)
        self._log = open(os.path.join(self._tmp.name, "log"), "w+b")
        try:
            self._proc = server_process.start(self._watched, self._tmp.name, reload="0", log=self._log)
        except BaseException:
            self._log.close()
            self._tmp.cleanup()
            raise
        self._ends = 0  # ends of load cycles read from the log so far
        self._read = 0  # bytes of the log read so far
        self._partial = b""  # the start of a line not yet ended
        self._failure: str | None = None
        self._due: dict[str, int] = {}  # slice key -> ends of cycles after which it is loaded
        self._channel = None
        self._stub = None

    def add(self, key: str, names: list[str]) -> None:
        """Give the server the runs ``names`` as slice ``key``; it starts loading them at once."""
        made = os.path.join(self._aside, key)
        os.mkdir(made)
        self._link(names, made)
        os.rename(made, os.path.join(self._watched, key))
        self._read_log()  # everything the server logged before the slice appeared
        self._due[key] = self._ends + 2

    def wait(self, key: str, timeout: float = 600.0):
        """The server's gRPC stub, once slice ``key`` is loaded. Raises :class:`DataServerFailed` if
        the server stops (with its reason) and ``TimeoutError`` after ``timeout`` seconds."""
        from . import grpc_fast  # gRPC: imported while the first slice loads

        deadline = time.monotonic() + timeout
        while self._ends < self._due[key]:
            if self._failure is not None:
                raise DataServerFailed(self._failure)
            if self._proc.poll() is not None:
                self._read_log()
                raise DataServerFailed(
                    self._failure or server_process.exit_reason(self._proc, self._tmp.name)
                )
            if time.monotonic() > deadline:
                raise TimeoutError("data server did not finish loading")
            time.sleep(_POLL)
            self._read_log()
        if self._stub is None:
            self._channel, self._stub = grpc_fast.connect(self._port(deadline))
        return self._stub

    def served(self, key: str, names: Iterable[str]) -> dict[str, str]:
        """``{name the server gives the run: the run's own name}`` for the runs ``names`` of slice ``key``."""
        return {key if name == "." else f"{key}/{name}": name for name in names}

    def remove(self, key: str) -> None:
        """Take slice ``key`` away: its runs are dropped by the server's next cycle."""
        gone = os.path.join(self._aside, f"{key}.gone")
        os.rename(os.path.join(self._watched, key), gone)
        shutil.rmtree(gone, ignore_errors=True)
        self._due.pop(key, None)

    def close(self, wait: bool = True) -> None:
        """Stop the server and remove its folders (again: nothing more)."""
        if not self._proc.stdin.closed:  # it exits when its stdin closes
            self._proc.stdin.close()
            if self._channel is not None:
                self._channel.close()
        if wait and self._proc.returncode is None:
            killer = threading.Timer(5.0, self._proc.kill)  # a server that hangs
            killer.start()
            try:
                self._proc.wait()
            finally:
                killer.cancel()
        self._log.close()
        self._tmp.cleanup()

    def _read_log(self) -> None:
        """Read what the server has logged since last time: count the ends of load cycles, and note a
        panic of its loading thread (it would never end a cycle again)."""
        new = os.pread(
            self._log.fileno(), max(os.fstat(self._log.fileno()).st_size - self._read, 0), self._read
        )
        self._read += len(new)
        lines = (self._partial + new).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if _CYCLE_END in line:
                self._ends += 1
            elif _PANIC in line and self._failure is None:
                self._failure = server_process.panic_message(line.decode("utf-8", "replace"))

    def _port(self, deadline: float) -> int:
        while True:
            try:
                return server_process.port(self._tmp.name)
            except (OSError, ValueError):  # not written yet
                if time.monotonic() > deadline:
                    raise TimeoutError("data server did not say its port") from None
                time.sleep(_POLL)
