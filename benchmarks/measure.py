"""Timing a command with the peak memory of its whole process tree, from /proc (Linux).

A command's own peak (``ru_maxrss``) misses its children: our CLI starts TensorBoard's data server
as a child process. So the tree's resident memory (the command and every descendant, summed) is
sampled every ``interval`` seconds and its maximum kept; the kernel's peak of the largest single
process of the tree is reported beside it (``max_single_rss``), as a lower bound that no sampling
can miss.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import threading
import time

PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclasses.dataclass
class Measured:
    wall: float  # seconds
    peak_tree_rss: int  # bytes: the largest sampled sum over the process tree
    max_single_rss: int  # bytes: the kernel's peak of the largest single process in the tree
    returncode: int
    stdout: str
    stderr: str
    # CPU and page faults of the command and of the children it waited for (its data servers), as
    # the kernel counts them: unlike wall time, hardly moved by other work on the machine.
    user: float = 0.0  # seconds
    sys: float = 0.0  # seconds
    minor_faults: int = 0

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.pop("stdout"), d.pop("stderr")
        return d


def _children(pid: int) -> list[int]:
    kids = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids += [int(k) for k in f.read().split()]
    except OSError:
        pass
    return kids


def tree(pid: int) -> list[int]:
    """``pid`` and all its descendants now."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo += _children(p)
    return found


def _cmdline(pid: int) -> bytes | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return None


def started_tree(pid: int) -> list[int]:
    """:func:`tree` without children caught between fork and exec.

    Such a child still shows its parent's memory (all of it, shared: with vfork, the very same pages)
    and its command line; counting it would add the parent's memory a second time.
    """
    found, todo = [], [(pid, None)]
    while todo:
        p, parent_cmdline = todo.pop()
        cmdline = _cmdline(p)
        if parent_cmdline is not None and cmdline == parent_cmdline:
            continue
        found.append(p)
        todo += [(k, cmdline) for k in _children(p)]
    return found


def rss(pid: int) -> int:
    """Resident bytes of one process (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def hwm(pid: int) -> int:
    """The kernel's peak resident bytes of one process (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds used so far by ``pid`` and its descendants now alive."""
    total = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
        except (OSError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


class TreeSampler:
    """Samples the summed RSS of a process tree in a thread until stopped."""

    def __init__(self, pid: int, interval: float = 0.02):
        self.pid, self.interval = pid, interval
        self.peak_sum = 0
        self.peak_single = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def sample(self) -> None:
        pids = started_tree(self.pid)
        self.peak_sum = max(self.peak_sum, sum(rss(p) for p in pids))
        self.peak_single = max([self.peak_single] + [hwm(p) for p in pids])

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)


def run(
    cmd: list[str], *, env: dict | None = None, cwd: str | None = None, timeout: float = 3600
) -> Measured:
    """Run ``cmd`` to completion; its wall time and the peak memory of its process tree."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )
    with TreeSampler(proc.pid) as sampler:
        # Read the pipes in threads so a chatty command never blocks on a full pipe.
        out: dict[str, str] = {}
        readers = [
            threading.Thread(target=lambda k, s: out.__setitem__(k, s.read()), args=(k, s), daemon=True)
            for k, s in (("stdout", proc.stdout), ("stderr", proc.stderr))
        ]
        for r in readers:
            r.start()
        # wait4 gives the child's own peak even if it ends between two samples.
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        for r in readers:
            r.join(timeout)
    proc.returncode = os.waitstatus_to_exitcode(status)
    single = max(sampler.peak_single, usage.ru_maxrss * 1024)
    return Measured(
        wall,
        max(sampler.peak_sum, single),
        single,
        proc.returncode,
        out["stdout"],
        out["stderr"],
        usage.ru_utime,
        usage.ru_stime,
        usage.ru_minflt,
    )


def mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB"
