"""Source: the scalar series of one experiment, listed and read through any TensorBoard DataProvider.

The plugin passes TensorBoard's own provider; for a logdir path, :mod:`.logdir` opens one with
TensorBoard's loaders. Series are cached (:mod:`.cache`) while the listing says they are unchanged.
"""

from __future__ import annotations

import collections
import concurrent.futures
import functools
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping

import numpy as np
from tensorboard import context as tb_context
from tensorboard.data import provider as tb_provider

from ..series import ALL_POINTS, SCALARS, Series, SeriesInfo
from .cache import LRU
from .grpc_fast import array_reader
from .health import LogdirHealth
from .hparams import read_hparams

logger = logging.getLogger(__name__)

# Cache bound in points (24 bytes each: step, wall time, value).
DEFAULT_CACHE_POINTS = 40_000_000
# Read requests in flight at once on the fast path.
READ_THREADS = 2
# Bound of the memo of intermediate results (aligned and reduced curves), in bytes.
DEFAULT_MEMO_BYTES = 256 * 2**20
# How long a listing from the data server is reused. Listing costs the data server a pass over every
# point (tens of ms for millions), and its data changes only once per reload cycle (5 s by default),
# so the few requests of one change in the tab (one per visible chart) share one listing.
LISTING_TTL = 1.0
# What dup_steps first or mean needs of a running TensorBoard that does not keep repeated steps.
_SERVER_DROPS_REPEATS = (
    "needs every write of a repeated step, and this TensorBoard keeps only the last one: start it with "
    "--load_fast=false --purge_orphaned_data=false"
)


def repeats_needs_of(provider, *, purges: bool) -> str | None:
    """``None`` when a running TensorBoard's ``provider`` keeps every write of a repeated step, else what
    it takes to keep them (see ``Query.check_repeats_kept``). Its Rust data server keeps only the last
    write; its Python loader keeps them unless it purges orphaned data (``--purge_orphaned_data``,
    on by default), which drops the earlier writes when a resumed run logs a step again."""
    if purges or array_reader(provider) is not None and hasattr(provider, "_stub"):
        return _SERVER_DROPS_REPEATS
    return None


class Source:
    """Scalar series of one experiment, listed and read through a DataProvider, cached per (run, tag).

    A cached series is reused while the provider's listing (max step, max wall time) is unchanged,
    so a new option (smoothing, band, ...) never reads again and new steps of a live run are read
    on the next request. The cache holds at most ``max_cache_points`` points; ``memo`` is the LRU
    the engine keeps its intermediate results in, at most ``max_memo_bytes``.

    ``repeats_needs``: ``None`` when the provider keeps every write of a repeated step, else what it
    takes to keep them (``Query.check_repeats_kept`` says it to a user who asks for them).
    """

    def __init__(
        self,
        provider: tb_provider.DataProvider,
        experiment_id: str = "",
        *,
        sample_limit: int | None = None,
        max_cache_points: int = DEFAULT_CACHE_POINTS,
        max_memo_bytes: int = DEFAULT_MEMO_BYTES,
        ctx: tb_context.RequestContext | None = None,
        fast_path: bool = True,
        logdir: str | None = None,
        health: LogdirHealth | None = None,
        repeats_needs: str | None = None,
    ):
        self.provider = provider
        self.experiment_id = experiment_id
        self.sample_limit = sample_limit
        self.repeats_needs = repeats_needs
        # How the logs were read, when the user should know (e.g. another loader than asked for);
        # options named with query.ref. Shown with the result's notes.
        self.notes: list[str] = []
        self._ctx = ctx or tb_context.RequestContext()
        self._cache: LRU[tuple[SeriesInfo, Series]] = LRU(max_cache_points)
        self.memo: LRU[object] = LRU(max_memo_bytes)
        self.points_read = 0  # points returned by read (cached ones too), for a summary
        self._lock = threading.Lock()
        self._fast_reader = array_reader(provider) if fast_path else None
        self._recent: dict[str, tuple[float, object]] = {}  # what _reused keeps: (when, value)
        if health is None and logdir and os.path.isdir(logdir):
            health = LogdirHealth(logdir)
        self._health = health

    @property
    def uses_fast_path(self) -> bool:
        return self._fast_reader is not None

    def list_scalars(self) -> dict[str, dict[str, SeriesInfo]]:
        """``{run: {tag: SeriesInfo}}`` of every scalar series the provider has now (do not modify).

        From the data server, a listing less than ``LISTING_TTL`` seconds old is reused; an in-process
        provider is asked every time (it is cheap, and a caller may just have told it to reload).
        """

        def listed() -> dict[str, dict[str, SeriesInfo]]:
            listing = self.provider.list_scalars(
                self._ctx, experiment_id=self.experiment_id, plugin_name=SCALARS
            )
            return {
                run: {tag: SeriesInfo(int(ts.max_step), float(ts.max_wall_time)) for tag, ts in tags.items()}
                for run, tags in listing.items()
            }

        return self._reused("listing", listed)

    def _reused(self, name: str, make: Callable[[], object]) -> object:
        """``make()``; from the data server, its result of less than ``LISTING_TTL`` seconds ago
        instead (its data changes once per reload cycle, and the few requests of one change in the tab
        share it). An in-process provider is asked every time: a caller may just have reloaded it."""
        if self._fast_reader is None:
            return make()
        with self._lock:
            hit = self._recent.get(name)
        if hit is not None and time.monotonic() - hit[0] < LISTING_TTL:
            return hit[1]
        value = make()
        with self._lock:
            self._recent[name] = (time.monotonic(), value)
        return value

    def read(
        self,
        wanted: Mapping[str, Iterable[str]],
        listing: Mapping[str, Mapping[str, SeriesInfo]] | None = None,
    ) -> dict[tuple[str, str], Series]:
        """Every point of the wanted ``{run: [tag, ...]}`` series, from the cache where still current."""
        listing = self.list_scalars() if listing is None else listing
        out: dict[tuple[str, str], Series] = {}
        missing: dict[str, set[str]] = {}
        for run, tags in wanted.items():
            for tag in tags:
                info = listing.get(run, {}).get(tag)
                if info is None:
                    continue
                hit = self._cache.get((run, tag))
                if hit is not None and hit[0] == info:
                    out[(run, tag)] = hit[1]
                else:
                    missing.setdefault(run, set()).add(tag)
        if missing:
            for (run, tag), series in self._read_from_provider(missing).items():
                out[(run, tag)] = series
                self._cache.put((run, tag), (listing[run][tag], series), len(series))
        with self._lock:
            self.points_read += sum(len(s) for s in out.values())
        return out

    def read_by_tag(
        self,
        wanted: Mapping[str, Iterable[str]],
        listing: Mapping[str, Mapping[str, SeriesInfo]] | None = None,
    ) -> Iterator[tuple[str, dict[tuple[str, str], Series]]]:
        """``(tag, series)`` for each tag of ``wanted`` (``{tag: [run, ...]}``), in its order, as
        :meth:`read` gives them. The next tags are read while the caller works on this one, and
        only those few are held at once (the cache aside)."""
        listing = self.list_scalars() if listing is None else listing
        tags = iter(wanted.items())

        def submit(pool, item):
            tag, runs = item
            return tag, pool.submit(self.read, {run: [tag] for run in runs}, listing)

        with concurrent.futures.ThreadPoolExecutor(READ_THREADS) as pool:
            pending = collections.deque(submit(pool, item) for item in itertools.islice(tags, READ_THREADS))
            while pending:
                tag, future = pending.popleft()
                data = future.result()
                following = next(tags, None)
                if following is not None:
                    pending.append(submit(pool, following))
                yield tag, data
                del data

    def problems(self) -> dict[str, str]:
        """``{run: reason}`` for event files the loader skipped or read only in part (local logdirs).

        Like the listing, reused for ``LISTING_TTL`` seconds with the data server: the check walks the
        logdir (5 ms for 200 runs), a quarter of a chart request that only changes the smoothing.
        """
        if self._health is None:
            return {}
        return dict(self._reused("problems", self._health.problems))

    def is_downsampled(self, series: Series) -> bool:
        """True when a series came back at exactly the loader's sample limit (maybe thinned)."""
        return bool(self.sample_limit) and len(series) == self.sample_limit

    def hparams(self) -> dict[str, dict[str, object]]:
        """``{run: {name: value}}`` (see :mod:`.hparams`)."""
        return read_hparams(self.provider, self._ctx, self.experiment_id)

    # -- internals ---------------------------------------------------------------------------

    def _read_from_provider(self, wanted: Mapping[str, set[str]]) -> dict[tuple[str, str], Series]:
        # One request per tag: a response of every series at once is slower to build, send and
        # decode than a few smaller ones, and holds all the points twice (message and arrays).
        by_tag: dict[str, list[str]] = {}
        for run, tags in wanted.items():
            for tag in tags:
                by_tag.setdefault(tag, []).append(run)
        filters = [tb_provider.RunTagFilter(runs=sorted(r), tags=[t]) for t, r in sorted(by_tag.items())]
        out: dict[tuple[str, str], Series] = {}
        if self._fast_reader is not None:
            try:
                # The data server builds the next response while this process decodes one (gRPC
                # waits without holding the GIL): two requests in flight use both sides at once.
                with concurrent.futures.ThreadPoolExecutor(min(READ_THREADS, len(filters))) as pool:
                    for got in pool.map(functools.partial(self._fast_reader, self.experiment_id), filters):
                        out.update(got)
            except Exception as exc:  # fall back to the public interface, once and for all
                logger.warning("fast read failed (%s); using read_scalars", exc)
                self._fast_reader = None
                out = {}
            else:
                return {k: v for k, v in out.items() if k[1] in wanted.get(k[0], ())}
        for rtf in filters:
            data = self.provider.read_scalars(
                self._ctx,
                experiment_id=self.experiment_id,
                plugin_name=SCALARS,
                downsample=ALL_POINTS,
                run_tag_filter=rtf,
            )
            for run, tags in data.items():
                for tag, points in tags.items():
                    if tag not in wanted.get(run, ()):
                        continue
                    out[(run, tag)] = Series(
                        np.fromiter((p.step for p in points), np.int64, len(points)),
                        np.fromiter((p.wall_time for p in points), np.float64, len(points)),
                        np.fromiter((p.value for p in points), np.float64, len(points)),
                    )
        return out
