"""A real data provider whose calls of one kind are counted, for the tests that show work is not
done again: through its public method and, on TensorBoard's data server, through the gRPC stub that
the fast path calls directly."""

from __future__ import annotations

import threading
from collections.abc import Callable


class CountedProvider:
    """``inner`` with each call of its method ``method`` (e.g. ``list_scalars``) and of its data
    server stub's ``rpc`` (e.g. ``ListScalars``) counted in ``calls``, the callers' thread names in
    ``threads``; everything else is ``inner``'s own."""

    def __init__(self, inner, method: str, rpc: str):
        self._inner, self.calls, self.threads = inner, 0, []
        setattr(self, method, self._counted(getattr(inner, method)))
        stub = getattr(inner, "_stub", None)
        if stub is not None:
            self._stub = _Stub(stub, rpc, self._counted(getattr(stub, rpc)))

    def _counted(self, call: Callable) -> Callable:
        def counted(*args, **kwargs):
            self.calls += 1
            self.threads.append(threading.current_thread().name)
            return call(*args, **kwargs)

        return counted

    def __getattr__(self, name):
        return getattr(self._inner, name)


class _Stub:
    """A gRPC stub with one method replaced."""

    def __init__(self, stub, name: str, call: Callable):
        self._stub = stub
        setattr(self, name, call)

    def __getattr__(self, name):
        return getattr(self._stub, name)
