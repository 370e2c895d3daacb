"""Event files TensorBoard's loaders skip without a word: found, so the user is told what was left out.

The loaders read what they can and say nothing of an empty file, a file of random bytes, a record
cut off at the end (a crashed or still-copying writer) or a folder they may not read. This module
checks the TFRecord framing only (length + CRC of each record header), never the payloads, and
remembers how far each file was verified so a growing live file costs only its new records.
"""

from __future__ import annotations

import os
import struct
import threading

from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

_HEADER = struct.Struct("<QI")  # record length, masked CRC32C of the length bytes
_FOOTER = 4  # masked CRC32C of the payload


class LogdirHealth:
    """Problems of a logdir's event files, as ``{run: reason}``; cheap to call again."""

    def __init__(self, logdir: str):
        self.logdir = os.path.abspath(logdir)
        self._verified: dict[str, tuple[int, int]] = {}  # path -> (size seen, bytes verified)
        self._lock = threading.Lock()

    def problems(self) -> dict[str, str]:
        found: dict[str, list[str]] = {}

        def unreadable(error: OSError) -> None:
            run = self._run_of(error.filename or self.logdir)
            found.setdefault(run, []).append(f"folder cannot be read ({error.strerror})")

        with self._lock:
            for root, _, files in os.walk(self.logdir, onerror=unreadable):
                for name in files:
                    if "tfevents" not in name:
                        continue
                    path = os.path.join(root, name)
                    reason = self._check(path)
                    if reason:
                        found.setdefault(self._run_of(root), []).append(f"{name}: {reason}")
        return {run: "; ".join(reasons) for run, reasons in sorted(found.items())}

    def _run_of(self, folder: str) -> str:
        rel = os.path.relpath(folder, self.logdir)
        return "." if rel == "." else rel.replace(os.sep, "/")

    def _check(self, path: str) -> str | None:
        try:
            size = os.path.getsize(path)
        except OSError as exc:
            return f"cannot be read ({exc.strerror})"
        if size == 0:
            return "empty file"
        seen, offset = self._verified.get(path, (0, 0))
        if size < seen:  # rewritten from scratch
            offset = 0
        try:
            with open(path, "rb") as f:
                offset, problem = _walk_records(f, offset, size)
        except OSError as exc:
            return f"cannot be read ({exc.strerror})"
        self._verified[path] = (size, offset)
        return problem


def _walk_records(f, offset: int, size: int) -> tuple[int, str | None]:
    """Hop from record header to record header; returns the end of the last whole record and a problem."""
    f.seek(offset)
    while offset < size:
        header = f.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return offset, f"last record cut off ({size - offset} bytes at the end not read)"
        length, crc = _HEADER.unpack(header)
        if masked_crc32c(header[:8]) != crc:
            if offset == 0:
                return offset, "not an event file (no valid record at its start)"
            return offset, f"corrupt record at byte {offset} ({size - offset} bytes not read)"
        end = offset + _HEADER.size + length + _FOOTER
        if end > size:
            return offset, f"last record cut off ({size - offset} bytes at the end not read)"
        f.seek(end)
        offset = end
    return offset, None
