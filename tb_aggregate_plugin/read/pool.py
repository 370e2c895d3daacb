"""Arrays kept for a whole command, copied into a few large blocks of memory instead of many small ones.

A logdir loaded slice by slice (:mod:`.sliced`) keeps thousands of arrays (each run's wall times and
values), made one slice at a time among the short-lived arrays and messages of reading that slice. In
the heap, each kept array then pins the space around it: what the short-lived ones leave free between
them is neither reused by the next slice (it needs larger pieces) nor returned to the kernel, and grows
with the logdir (about 100 MB for 50M points). Copied into blocks of ``BLOCK_BYTES``, which the C
library maps apart from its heap, the kept arrays leave the heap to the short-lived ones, which reuse
it slice after slice. A block's pages are taken only as arrays fill them.
"""

from __future__ import annotations

import numpy as np

# Above glibc's largest threshold for mapping an allocation apart from the heap (32 MB on 64-bit).
BLOCK_BYTES = 64 * 2**20
_ALIGN = 16


class ArrayPool:
    """Copies of arrays, carved out of blocks of ``BLOCK_BYTES`` (an array larger than a quarter of a
    block gets its own)."""

    def __init__(self, block_bytes: int = BLOCK_BYTES):
        self._block_bytes = block_bytes
        self._block = np.empty(0, np.uint8)
        self._used = 0

    def copy(self, array: np.ndarray) -> np.ndarray:
        """A copy of the 1-d ``array`` (same dtype and values), read-only."""
        size = array.nbytes
        if size > self._block_bytes // 4:
            out = array.copy()
        else:
            if self._used + size > len(self._block):
                self._block = np.empty(self._block_bytes, np.uint8)
                self._used = 0
            out = self._block[self._used : self._used + size].view(array.dtype)
            out[...] = array
            self._used += -(-size // _ALIGN) * _ALIGN
        out.flags.writeable = False
        return out
