"""Source: the scalar series of one experiment, listed and read through any TensorBoard DataProvider.

The plugin passes TensorBoard's own provider; for a logdir path, :mod:`.logdir` opens one with
TensorBoard's loaders. Series are cached (:mod:`.cache`) while the listing says they are unchanged.
"""

from __future__ import annotations

import collections
import concurrent.futures
import copy
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

from ..series import ALL_POINTS, SCALARS, Series, SeriesInfo
from . import hparams as hparams_mod
from .cache import LRU
from .grpc_fast import array_reader, scalar_lister
from .health import LogdirHealth
from .walk import fingerprint

logger = logging.getLogger(__name__)

# Cache bound in points (24 bytes each: step, wall time, value).
DEFAULT_CACHE_POINTS = 40_000_000
# Read requests in flight at once on the fast path.
READ_THREADS = 2
# Runs of one tag asked for in one request: the data server builds several answers at once, and
# this process decodes one while it builds the next (2,000 runs x 1,000 points: 0.30 s in one
# request, 0.19 s in four).
RUNS_PER_REQUEST = 500
# Bound of the memo of intermediate results (aligned and reduced curves), in bytes.
DEFAULT_MEMO_BYTES = 256 * 2**20
# How long a listing from the data server is reused. Listing costs the data server a pass over every
# point (0.26 s for 40M, and 0.075 s more in TensorBoard's client), and its data changes only once per
# reload cycle (5 s by default), so the few requests of one change in the tab share one listing.
LISTING_TTL = 1.0
# A listing held for a request that draws (Source.fixed(held=True)), unchanged on disk, is asked for
# again in the background once it is this old (TensorBoard's default reload interval), not sooner: in
# the seconds after the tab's listing, its first charts are read without a listing of the whole logdir
# taking the data server's and this process's time from them (a first chart at 40M points: 0.5 s, 1.0 s
# with one).
HELD_REFRESH_AFTER = 5.0
# A listing is settled once the data server has given the same one twice, this long apart, with the
# event files unchanged on disk in between: reload cycles (every 5 s by default) ran and found nothing
# new. A settled listing is reused without asking until a file changes (a walk of the logdir, 40 ms
# for 2,000 runs, tells). TensorBoard's plugin passes two reload intervals and 5 s.
DEFAULT_SETTLE_SECONDS = 15.0
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

    Runs are the provider's runs with ``add_hparams`` child runs folded into their parent (the rule is
    in :mod:`.hparams`): a child's scalars are listed and read as its parent's (its points after the
    parent's own when both have a tag), its hparams count as the parent's, and it is not listed itself.
    ``fold_children=False`` lists the provider's runs as they are. ``notes``: what the reading could
    not do for this source, said to the user with every result (a remote logdir's unchecked files).
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
        fold_children: bool = True,
        notes: Iterable[str] = (),
        settle_seconds: float = DEFAULT_SETTLE_SECONDS,
    ):
        self.provider = provider
        self.experiment_id = experiment_id
        self.sample_limit = sample_limit
        self.repeats_needs = repeats_needs
        self.fold_children = fold_children
        # How the logs were read, when the user should know (e.g. another loader than asked for, what
        # a logdir in object storage cannot have); options named with query.ref. Shown with the notes.
        self.notes: list[str] = list(notes)
        self._ctx = ctx or tb_context.RequestContext()
        self._cache: LRU[tuple[SeriesInfo, Series]] = LRU(max_cache_points)
        self.memo: LRU[object] = LRU(max_memo_bytes)
        self.points_read = 0  # points returned by read (cached ones too), for a summary
        self._lock = threading.Lock()
        self._fast_reader = array_reader(provider) if fast_path else None
        self._fast_lister = scalar_lister(provider) if fast_path else None
        self._recent: dict[str, tuple[float, object]] = {}  # what _reused keeps: (when, value)
        self._making: dict[str, threading.Lock] = {}  # what _reused is making now, one at a time
        self.settle_seconds = settle_seconds
        self._listed: _Listed | None = None  # the newest listing and what is known of it
        self._versions = itertools.count(1)
        self._token = os.urandom(4).hex()  # versions of two sources (or two servers) never match
        self._fixed: tuple[tuple, str] | None = None  # (listing, version) of a view: see fixed()
        self._checking = threading.Lock()  # held while new data are looked for in the background
        # (files, the problems found in them): in a list, so that the views of fixed() share it.
        self._problems: list[tuple[dict | None, dict[str, str]]] = []
        # A candidate child run's points per tag, by its listing: a new listing, a new count.
        self._child_points: LRU[dict[str, int]] = LRU(10_000)
        if health is None and logdir and os.path.isdir(logdir):
            health = LogdirHealth(logdir)
        self._health = health

    @property
    def uses_fast_path(self) -> bool:
        return self._fast_reader is not None

    def list_scalars(self) -> dict[str, dict[str, SeriesInfo]]:
        """``{run: {tag: SeriesInfo}}`` of every scalar series the provider has now (do not modify),
        ``add_hparams`` child runs folded into their parent.

        From the data server, a listing less than ``LISTING_TTL`` seconds old is reused, and a settled
        one (see ``DEFAULT_SETTLE_SECONDS``) while the event files are unchanged; an in-process provider
        is asked every time (it is cheap, and a caller may just have told it to reload). A view made by
        :meth:`fixed` gives its one listing.
        """
        return self._folded()[0]

    def hparams(self) -> dict[str, dict[str, object]]:
        """``{run: {name: value}}`` (see :mod:`.hparams`), of the runs :meth:`list_scalars` names."""
        _, tensors, children = self._folded()
        return hparams_mod.hparams_of_listing(tensors, children)

    @property
    def version(self) -> str:
        """A name of what the source gives now (listing, hparams, problems with the event files): it
        changes whenever any of them does, and never repeats, so what was computed from the source
        can be kept under it and given again while it holds."""
        if self._fixed is not None:
            return self._fixed[1]
        return self._version_of(self._listing()[1])

    def fixed(self, max_age: float | None = None, *, held: bool = False) -> Source:
        """This source with one listing for the whole of a request: the newest one if it is less than
        ``max_age`` seconds old (default ``LISTING_TTL``; or settled, see :meth:`list_scalars`), else a
        new one. The view shares the cache and the memo; every listing it gives, and its
        :attr:`version`, is that one.

        ``held`` (a request that draws): the newest listing at once, however old, once there is one;
        what is due (a new look at the event files, a new listing) is done in the background for the
        next request (see :meth:`_held`). A request that must see the newest data (the tab's poll of
        the runs, the Reload button, a download) does not pass it.

        The problems with the event files are looked at again only when the last look is as old."""
        if held:
            view = self._held()
            if view is not None:
                return view
        # The event files are checked (the first time: 0.3 s for 2,000 runs) while the data server lists.
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            problems = pool.submit(self.problems, max_age)
            folded, number = self._listing(max_age)
            view = copy.copy(self)
            view._fixed = (folded, self._version_of(number, problems.result()))
        return view

    def _version_of(self, listing_number: int, problems: Mapping[str, str] | None = None) -> str:
        problems = self.problems() if problems is None else problems
        return f"{self._token}.{listing_number}.{hash(tuple(sorted(problems.items()))) & 0xFFFFFFFF:x}"

    def _folded(self) -> tuple[dict[str, dict[str, SeriesInfo]], Mapping, dict[str, str]]:
        return self._fixed[0] if self._fixed is not None else self._listing()[0]

    def _listing(self, max_age: float | None = None) -> tuple[tuple, int]:
        """``(what _fold gives, its version number)``: the data server's listing reused while less
        than ``max_age`` seconds old (``LISTING_TTL``), or while settled and the files are unchanged."""
        max_age = LISTING_TTL if max_age is None else max_age
        with self._lock:
            listed = self._listed
        files = None
        if self._fast_reader is not None:
            if listed is not None and time.monotonic() - listed.taken < max_age:
                return listed.value, listed.version
            files = self._files()
            if listed is not None and listed.settled(self.settle_seconds) and files == listed.files:
                return listed.value, listed.version
        taken = time.monotonic()
        value = self._fold()
        with self._lock:
            previous = self._listed
            if previous is not None and previous.taken > taken:  # a newer one came in meanwhile
                return previous.value, previous.version
            same = previous is not None and previous.value == value
            unchanged_files = same and files is not None and files == previous.files
            self._listed = _Listed(
                taken,
                value,
                files,
                since=previous.since if unchanged_files else taken,
                version=previous.version if same else next(self._versions),
            )
            return value, self._listed.version

    def _held(self) -> Source | None:
        """A view of the newest listing made without waiting (see :meth:`fixed`), or ``None`` before
        there is one (with a look at the event files and their problems).

        In the background, for the next request: a new look at the files once the last is
        ``LISTING_TTL`` old (the walk takes 30 ms for 2,000 runs, and up to 0.16 s after a pause,
        with the file system's caches cold), and a new listing if they changed since it, or if it is
        ``HELD_REFRESH_AFTER`` old and not yet settled."""
        if self._fast_reader is None or self._health is None:
            return None
        with self._lock:
            listed, seen = self._listed, self._recent.get("files")
            known = self._problems[0] if self._problems else None
        if listed is None or listed.files is None or seen is None or known is None:
            return None
        now = time.monotonic()
        if now - seen[0] >= LISTING_TTL or seen[1] != listed.files or self._listing_due(listed, now):
            self._check_meanwhile()
        view = copy.copy(self)
        view._fixed = (listed.value, self._version_of(listed.version, known[1]))
        return view

    def _listing_due(self, listed: _Listed, now: float) -> bool:
        """Whether a held listing unchanged on disk is to be asked for again: not settled, and as old
        as ``HELD_REFRESH_AFTER`` (the data server may have loaded since what it had not then)."""
        return not listed.settled(self.settle_seconds) and now - listed.taken >= HELD_REFRESH_AFTER

    def _check_meanwhile(self) -> None:
        """In a thread of its own (one at a time): look at the event files and their problems again,
        and ask for a new listing if they changed or it is due (see :meth:`_held`)."""
        if not self._checking.acquire(blocking=False):
            return  # one is under way

        def run() -> None:
            try:
                self.problems()
                files = self._files()
                with self._lock:
                    listed = self._listed
                if listed is None or files != listed.files or self._listing_due(listed, time.monotonic()):
                    self._listing(0.0)
            except Exception as exc:  # the next request that waits for a listing asks and reports
                logger.warning("looking for new data in the background failed: %s", exc)
            finally:
                self._checking.release()

        threading.Thread(target=run, name="tb-aggregate-check", daemon=True).start()

    def _fold(self) -> tuple[dict[str, dict[str, SeriesInfo]], Mapping, dict[str, str]]:
        """The listing with each ``add_hparams`` child run folded into its parent, the hparams
        listing (parsed only when asked for: :meth:`hparams`) and ``{child: parent}``."""
        listing = self._listed_by_provider()
        tensors = hparams_mod.hparams_listing(self.provider, self._ctx, self.experiment_id)
        if not self.fold_children:
            return listing, tensors, {}
        candidates = hparams_mod.child_candidates(listing, tensors)
        points = self._points_of({run: listing[run] for run in candidates if run in listing})
        children = {c: p for c, p in candidates.items() if hparams_mod.few_points(points.get(c, {}))}
        if not children:
            return listing, tensors, children
        # Per (owner, tag) the runs it is read from: the owner itself first, then its children in time order.
        order = [r for r in listing if r not in children]
        order += sorted((r for r in listing if r in children), key=lambda r: float(r.rsplit("/", 1)[-1]))
        sources: dict[str, dict[str, list[tuple[str, SeriesInfo]]]] = {}
        for run in order:
            owner = children.get(run, run)
            for tag, info in listing[run].items():
                sources.setdefault(owner, {}).setdefault(tag, []).append((run, info))
        folded = {}
        for owner, tags in sources.items():
            folded[owner] = {}
            for tag, parts in tags.items():
                if len(parts) == 1 and parts[0][0] == owner:
                    folded[owner][tag] = parts[0][1]
                else:
                    folded[owner][tag] = SeriesInfo(
                        max(info.max_step for _, info in parts),
                        max(info.max_wall_time for _, info in parts),
                        tuple(run for run, _ in parts),
                    )
        return folded, tensors, children

    def _listed_by_provider(self) -> dict[str, dict[str, SeriesInfo]]:
        if self._fast_lister is not None:
            try:
                return self._fast_lister(self.experiment_id)
            except Exception as exc:  # as the reader: the public interface, once and for all
                logger.warning("fast listing failed (%s); using list_scalars", exc)
                self._fast_lister = None
        raw = self.provider.list_scalars(self._ctx, experiment_id=self.experiment_id, plugin_name=SCALARS)
        return {
            run: {tag: SeriesInfo(int(ts.max_step), float(ts.max_wall_time)) for tag, ts in tags.items()}
            for run, tags in raw.items()
        }

    def _points_of(self, runs: Mapping[str, Mapping[str, SeriesInfo]]) -> dict[str, dict[str, int]]:
        """``{run: {tag: points}}`` of a few (candidate child) runs, counted up to one more than a
        child may hold: one request of a few points each, remembered while their listing holds."""
        counts: dict[str, dict[str, int]] = {}
        unknown = []
        for run, tags in runs.items():
            hit = self._child_points.get((run, tuple(sorted(tags.items()))))
            if hit is None:
                unknown.append(run)
            else:
                counts[run] = hit
        if unknown:
            data = self.provider.read_scalars(
                self._ctx,
                experiment_id=self.experiment_id,
                plugin_name=SCALARS,
                downsample=hparams_mod.CHILD_MAX_POINTS + 1,
                run_tag_filter=tb_provider.RunTagFilter(runs=sorted(unknown)),
            )
            for run in unknown:
                counts[run] = {tag: len(points) for tag, points in data.get(run, {}).items()}
                self._child_points.put((run, tuple(sorted(runs[run].items()))), counts[run])
        return counts

    def _files(self, max_age: float | None = None) -> dict | None:
        """The event files' sizes and times (:func:`.walk.fingerprint`), taken at most once per
        ``max_age`` (``LISTING_TTL``; as the listing, with the data server); ``None`` without a
        local logdir."""
        if self._health is None:
            return None
        return self._reused("files", lambda: fingerprint(self._health.logdir), max_age)

    def _reused(self, name: str, make: Callable[[], object], max_age: float | None = None) -> object:
        """``make()``; from the data server, its result of less than ``max_age`` (``LISTING_TTL``)
        seconds ago instead (its data changes once per reload cycle, and the few requests of one change
        in the tab share it). An in-process provider is asked every time: a caller may just have
        reloaded it."""
        if self._fast_reader is None:
            return make()
        max_age = LISTING_TTL if max_age is None else max_age
        with self._lock:
            making = self._making.setdefault(name, threading.Lock())
        # One at a time: the listing and the look at the files' problems ask for the files together,
        # and two walks at once take twice as long each.
        with making:
            with self._lock:
                hit = self._recent.get(name)
            if hit is not None and time.monotonic() - hit[0] < max_age:
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
            # A series folded from several of the provider's runs is read from each (see _fold).
            parts = {(r, t): listing[r][t].parts or (r,) for r, tags in missing.items() for t in tags}
            read: dict[str, set[str]] = {}
            for (_, tag), runs in parts.items():
                for part in runs:
                    read.setdefault(part, set()).add(tag)
            got = self._read_from_provider(read)
            for (run, tag), runs in parts.items():
                pieces = [got[(part, tag)] for part in runs if (part, tag) in got]
                if not pieces:
                    continue
                series = pieces[0] if len(pieces) == 1 else _joined(pieces)
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

    def problems(self, max_age: float | None = None) -> dict[str, str]:
        """``{run: reason}`` for event files the loader skipped or read only in part (local logdirs).

        Checked again only when the event files change (their sizes and times: :meth:`_files`, looked
        at when the last look is ``max_age`` seconds old).
        """
        if self._health is None:
            return {}
        files = self._files(max_age)
        with self._lock:
            known = self._problems[0] if self._problems else None
        if known is not None and known[0] == files:
            return dict(known[1])
        found = self._health.problems()
        with self._lock:
            self._problems[:] = [(files, found)]
        return dict(found)

    def is_downsampled(self, series: Series) -> bool:
        """True when a series came back at exactly the loader's sample limit and its steps show that it
        was thinned. TensorBoard's sampling keeps the first and last point and a random choice of
        the others, so a thinned series has uneven gaps between steps; a series logged every k steps
        that has exactly as many points as the limit (steps 0..999 for a limit of 1,000) came back
        whole, and is not flagged."""
        if not self.sample_limit or len(series) != self.sample_limit or len(series) < 3:
            return False
        gaps = np.diff(series.step)
        return bool((gaps != gaps[0]).any())

    # -- internals ---------------------------------------------------------------------------

    def _read_from_provider(self, wanted: Mapping[str, set[str]]) -> dict[tuple[str, str], Series]:
        # One request per tag: a response of every series at once is slower to build, send and
        # decode than a few smaller ones, and holds all the points twice (message and arrays).
        by_tag: dict[str, list[str]] = {}
        for run, tags in wanted.items():
            for tag in tags:
                by_tag.setdefault(tag, []).append(run)
        filters = [
            tb_provider.RunTagFilter(runs=chunk, tags=[t])
            for t, runs in sorted(by_tag.items())
            for chunk in _chunks(sorted(runs), RUNS_PER_REQUEST)
        ]
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


@dataclasses.dataclass(frozen=True)
class _Listed:
    """A listing of the data server's, and what is known of it."""

    taken: float  # when it was asked for (time.monotonic)
    value: tuple  # what Source._fold gave
    files: dict | None  # the event files' sizes and times just before (walk.fingerprint); None: unknown
    since: float  # the data server has given this same listing since then, the files unchanged
    version: int  # the same as the listing before it when the two are equal

    def settled(self, seconds: float) -> bool:
        """Given the same over at least ``seconds`` with the files unchanged: the data server's reload
        cycles have taken in all the files hold, and will find nothing new until a file changes."""
        return self.files is not None and self.taken - self.since >= seconds


def _chunks(items: list[str], size: int) -> list[list[str]]:
    """``items`` in about equal chunks of at most ``size``."""
    count = -(-len(items) // size)
    return [items[i::count] for i in range(count)] if count > 1 else [items]


def _joined(pieces: list[Series]) -> Series:
    """The points of several series one after the other (a run's, then its children's)."""
    return Series(
        np.concatenate([p.step for p in pieces]),
        np.concatenate([p.wall for p in pieces]),
        np.concatenate([p.value for p in pieces]),
    )
