"""The one size-bounded least-recently-used map: cached series, the memo of results, the plugin's sources."""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class LRU(Generic[V]):
    """A thread-safe map that drops its least recently used entries once their sizes add up to more
    than ``max_size``. Each entry's size is given when it is stored (1 unless said otherwise); an
    entry larger than ``max_size`` is not kept at all (``max_size=0`` keeps nothing)."""

    def __init__(self, max_size: float):
        self.max_size = max_size
        self._entries: collections.OrderedDict[Hashable, tuple[V, float]] = collections.OrderedDict()
        self._size = 0.0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        """The value stored under ``key`` (now the most recently used), or ``None``."""
        with self._lock:
            hit = self._entries.get(key)
            if hit is None:
                return None
            self._entries.move_to_end(key)
            return hit[0]

    def put(self, key: Hashable, value: V, size: float = 1) -> None:
        """Store ``value`` under ``key``, replacing what was there; older entries go to make room."""
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._size -= old[1]
            if size > self.max_size:
                return
            self._entries[key] = (value, size)
            self._size += size
            while self._size > self.max_size and self._entries:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._size -= dropped

    def get_or_make(
        self, key: Hashable, make: Callable[[], V], size_of: Callable[[V], float] | None = None
    ) -> V:
        """The value under ``key``, or ``make()`` stored there (sized by ``size_of``, else 1).

        ``make`` runs outside the lock: two threads may make the same value once each, which is
        cheaper than holding every other request while one computes.
        """
        hit = self.get(key)
        if hit is not None:
            return hit
        value = make()
        self.put(key, value, size_of(value) if size_of is not None else 1)
        return value

    @property
    def size(self) -> float:
        """The sizes of the entries kept, added up."""
        return self._size

    def __len__(self) -> int:
        return len(self._entries)
