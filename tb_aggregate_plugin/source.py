"""Reading scalar series through a TensorBoard DataProvider into numpy arrays, with a cache.

A :class:`Source` wraps any ``DataProvider``: the plugin passes TensorBoard's own; for a logdir path,
:mod:`loading` opens one with TensorBoard's loaders.
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
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
from tensorboard.plugins.scalar import metadata as scalar_metadata

from .health import LogdirHealth

logger = logging.getLogger(__name__)

SCALARS = scalar_metadata.PLUGIN_NAME
HPARAMS = "hparams"
# "Every point": far above any real series, but a plain int both loaders accept.
ALL_POINTS = 2**31 - 1
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


@dataclasses.dataclass(frozen=True)
class Series:
    """One run's values of one tag, in the order the loader returned them."""

    step: np.ndarray  # int64
    wall: np.ndarray  # float64, seconds since the epoch
    value: np.ndarray  # float64, may hold NaN/inf

    def __len__(self) -> int:
        return len(self.step)

    @classmethod
    def empty(cls) -> Series:
        return cls(np.empty(0, np.int64), np.empty(0, np.float64), np.empty(0, np.float64))


@dataclasses.dataclass(frozen=True)
class SeriesInfo:
    """What the provider's listing says of a series; a change means new data."""

    max_step: int
    max_wall_time: float


class Source:
    """Scalar series of one experiment, read through a DataProvider and cached per (run, tag).

    A cached series is reused while the provider's listing (max step, max wall time) is unchanged,
    so a new option (smoothing, band, ...) never reads again and new steps of a live run are read
    on the next request. The cache is bounded by ``max_cache_points`` (least recently used goes).
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
    ):
        self.provider = provider
        self.experiment_id = experiment_id
        self.sample_limit = sample_limit
        self.max_cache_points = max_cache_points
        self._ctx = ctx or tb_context.RequestContext()
        self._cache: collections.OrderedDict[tuple[str, str], tuple[SeriesInfo, Series]] = (
            collections.OrderedDict()
        )
        self._cached_points = 0
        self.points_read = 0  # points returned by read (cached ones too), for a summary
        self._lock = threading.Lock()
        self._fast_reader = array_reader(provider) if fast_path else None
        self._recent: dict[str, tuple[float, object]] = {}  # what _reused keeps: (when, value)
        self._memo: collections.OrderedDict[tuple, tuple[object, int]] = collections.OrderedDict()
        self._memo_bytes = 0
        self.max_memo_bytes = max_memo_bytes
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

    def memo(self, key: tuple, compute: Callable[[], object], nbytes: Callable[[object], int]) -> object:
        """``compute()``, or its earlier result for the same ``key`` (least recently used go first).

        For results derived from cached series: the key must name everything they depend on,
        including each series' :class:`SeriesInfo`, so new data never meets an old result.
        Results are shared between requests: never modify one.
        """
        with self._lock:
            hit = self._memo.get(key)
            if hit is not None:
                self._memo.move_to_end(key)
                return hit[0]
        value = compute()
        size = nbytes(value)
        if size > self.max_memo_bytes:
            return value
        with self._lock:
            old = self._memo.pop(key, None)
            if old is not None:
                self._memo_bytes -= old[1]
            self._memo[key] = (value, size)
            self._memo_bytes += size
            while self._memo_bytes > self.max_memo_bytes and self._memo:
                _, (_, dropped) = self._memo.popitem(last=False)
                self._memo_bytes -= dropped
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
        with self._lock:
            for run, tags in wanted.items():
                for tag in tags:
                    info = listing.get(run, {}).get(tag)
                    if info is None:
                        continue
                    hit = self._cache.get((run, tag))
                    if hit is not None and hit[0] == info:
                        self._cache.move_to_end((run, tag))
                        out[(run, tag)] = hit[1]
                    else:
                        missing.setdefault(run, set()).add(tag)
        if missing:
            fresh = self._read_from_provider(missing)
            with self._lock:
                for (run, tag), series in fresh.items():
                    out[(run, tag)] = series
                    self._store((run, tag), listing[run][tag], series)
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
        """``{run: {name: value}}`` from the hparams plugin's session-start info.

        ``add_hparams`` in PyTorch and tensorboardX writes the session into a child run of the run
        it describes (``run/<timestamp>``); such values are attributed to the parent run as well.
        """
        from tensorboard.plugins.hparams import metadata as hp_metadata

        try:
            listing = self.provider.list_tensors(
                self._ctx, experiment_id=self.experiment_id, plugin_name=HPARAMS
            )
        except Exception as exc:  # a provider without hparams support is not an error
            logger.info("no hparams: %s", exc)
            return {}
        found: dict[str, dict[str, object]] = {}
        for run, tags in listing.items():
            for tag, ts in tags.items():
                if tag != hp_metadata.SESSION_START_INFO_TAG:
                    continue
                try:
                    info = hp_metadata.parse_session_start_info_plugin_data(ts.plugin_content)
                except Exception:  # malformed plugin data: skip that run's hparams, keep the rest
                    continue
                found[run] = {name: _hparam_value(v) for name, v in info.hparams.items()}
        result = dict(found)
        for run, values in found.items():
            parent = run.rsplit("/", 1)[0] if "/" in run else None
            if parent is not None and parent not in found:
                result.setdefault(parent, {}).update(values)
        return result

    # -- internals ---------------------------------------------------------------------------

    def _store(self, key: tuple[str, str], info: SeriesInfo, series: Series) -> None:
        old = self._cache.pop(key, None)
        if old is not None:
            self._cached_points -= len(old[1])
        if len(series) > self.max_cache_points:
            return
        self._cache[key] = (info, series)
        self._cached_points += len(series)
        while self._cached_points > self.max_cache_points and self._cache:
            _, (_, dropped) = self._cache.popitem(last=False)
            self._cached_points -= len(dropped)

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


def _hparam_value(value) -> object:
    kind = value.WhichOneof("kind")
    if kind == "number_value":
        number = value.number_value
        return int(number) if float(number).is_integer() else number
    if kind == "string_value":
        return value.string_value
    if kind == "bool_value":
        return value.bool_value
    return None


def array_reader(provider) -> Callable | None:
    """A reader of ``(experiment_id, RunTagFilter or None for all) -> {(run, tag): Series}`` that skips
    the public ``read_scalars`` (one Python object per point), when the provider offers one; else
    ``None``."""
    arrays = getattr(provider, "read_scalar_arrays", None)  # a logdir loaded slice by slice
    return arrays if callable(arrays) else _grpc_reader(provider)


def _grpc_reader(provider) -> Callable | None:
    """A reader that decodes the Rust data server's ReadScalars response straight into numpy.

    The public ``read_scalars`` builds one Python object per point; this skips that. Used only when
    the provider is TensorBoard's gRPC provider (feature-detected), else ``None``.
    """
    stub = getattr(provider, "_stub", None)
    if stub is None or not hasattr(stub, "ReadScalars"):
        return None
    try:
        from . import grpc_read

        return grpc_read.scalar_reader(stub)
    except ImportError:
        return None
