"""The Aggregate tab's server side: thin routes over the engine, as TensorBoard's scalars plugin.

Each ``*_route`` only parses its request into a :class:`Query` and the route's own parameters and
responds; a ``*_impl(ctx, experiment, ...)`` does the work and returns what is sent, testable without
HTTP. No statistics here. User mistakes answer 400 (bad option) or 404 (unknown tag or file).
"""

from __future__ import annotations

import concurrent.futures
import gzip
import json
import logging
import os
import threading
from collections.abc import Callable
from typing import NamedTuple

import pandas  # noqa: F401  (the engine imports it lazily; here it loads with TensorBoard, not on the first export)
from tensorboard import context as tb_context
from tensorboard import errors as tb_errors
from tensorboard import plugin_util
from tensorboard.backend import http_util
from tensorboard.plugins import base_plugin
from werkzeug import wrappers

from .compute import comparison, engine, stats, summary
from .compute.result import DOWNSAMPLED, FULL_RESOLUTION, UnknownTagError
from .query import OptionError, Query, one_of, options
from .read.cache import LRU
from .read.logdir import remote_note
from .read.source import LISTING_TTL, Source, repeats_needs_of
from .series import SCALARS
from .write import chart, paper, table_text

logger = logging.getLogger(__name__)

PLUGIN_NAME = "aggregate"
STATIC_PREFIX = f"/data/plugin/{PLUGIN_NAME}/static/"
# Sources (each with its own bounded cache) kept at once; a local TensorBoard has one experiment.
MAX_SOURCES = 4
# TensorBoard keeps this many points per scalar series unless told otherwise.
DEFAULT_SCALAR_SAMPLES = 1000
_ROUTE_PARAMS = {
    "/runs": ("fresh",),
    "/aggregate": ("tag", "max_points", "include_runs", "compare_a", "compare_b"),
    "/export": ("tag", "format"),
    "/summary": ("format",),
    "/compare": ("tag", "format", "table"),
}
EXPORT_FORMATS = ("csv", "json")
# Tables as text to paste into a paper or a README: Markdown, booktabs LaTeX.
MARKUP_FORMATS = ("md", "tex")
COMPARE_FORMATS = ("json", "csv", *MARKUP_FORMATS)
SUMMARY_FORMATS = ("json", *MARKUP_FORMATS)
MARKUP_TYPE = "text/plain; charset=utf-8"
COMPARE_TABLES = ("pairs", "groups")
# Answers kept, by request and the data's version (Source.version), in bytes of their bodies: an open
# tab asks the same again at every poll and on every scroll back, and gets it back without work.
ANSWER_BYTES = 64 * 2**20
PLOTLY = "plotly.min.js"
PLOTLY_CACHE_SECONDS = 86400
DOWNSAMPLED_WARNING = f"some series {DOWNSAMPLED}; {FULL_RESOLUTION} for full resolution"
_CONTENT_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html", ".svg": "image/svg+xml"}


def tab_spelling(name: str) -> str:
    """How the tab's notes name an option: as its URL parameter; ``list`` (where the groups can be
    seen) is the side panel."""
    return "the side panel's list of runs by group" if name == "list" else name


def _route(handler):
    """Wrap a route: user mistakes become 400/404 with one plain line, never a traceback."""

    @wrappers.Request.application
    def app(self, request):
        try:
            return handler(self, request)
        except OptionError as exc:
            return _plain(request, str(exc), 400)
        except tb_errors.PublicError as exc:
            return _plain(request, str(exc).splitlines()[0] if str(exc) else "bad request", exc.http_code)
        except UnknownTagError as exc:
            return _plain(request, str(exc), 404)

    app.__name__ = handler.__name__
    return app


def _plain(request, message: str, code: int):
    """One line of plain text: control characters a user typed (CR, LF, ...) never split it."""
    line = "".join(c if c.isprintable() else " " for c in message)
    return http_util.Respond(request, line + "\n", "text/plain", code=code)


class _Answer(NamedTuple):
    """A response's parts, kept to be sent again (see ``ANSWER_BYTES``)."""

    body: bytes | str | dict
    content_type: str
    headers: list[tuple[str, str]] = []
    content_encoding: str | None = None

    def respond(self, request):
        return http_util.Respond(
            request,
            self.body,
            self.content_type,
            headers=self.headers,
            content_encoding=self.content_encoding,
        )

    @property
    def size(self) -> int:
        return len(self.body) if isinstance(self.body, (bytes, str)) else ANSWER_BYTES + 1  # not kept


def _json(request, payload: dict):
    """``payload`` as a JSON response (see :func:`_json_answer`)."""
    return _json_answer(payload).respond(request)


def _json_answer(payload: dict) -> _Answer:
    """``payload`` as a JSON answer, the same document ``http_util.Respond`` would send.

    Payloads are built JSON-ready (``json_values`` turns NaN into null), so they are serialised as
    they are, without another walk through every value (TensorBoard's ``Cleanse``), and gzipped at
    level 1: on these lists of numbers about as small as level 3, in a third of the time. A client
    without gzip gets it unpacked by ``Respond``. Anything JSON cannot hold as it is (NaN in an
    hparam, bytes, a set) goes the usual way.
    """
    try:
        body = json.dumps(payload, allow_nan=False).encode("ascii")
    except (TypeError, ValueError):
        return _Answer(payload, "application/json")
    return _Answer(gzip.compress(body, compresslevel=1, mtime=0), "application/json", [], "gzip")


def _context(request) -> tuple[tb_context.RequestContext, str]:
    return tb_context.from_environ(request.environ), plugin_util.experiment_id(request.environ)


def _query(request, route: str) -> Query:
    return Query.from_mapping(dict(request.args.items()), ignore=_ROUTE_PARAMS[route])


def _pair(request) -> tuple[str, str] | None:
    """Two groups named by ``compare_a`` and ``compare_b``, both or neither."""
    a, b = request.args.get("compare_a"), request.args.get("compare_b")
    if bool(a) != bool(b):
        given, missing = ("compare_a", "compare_b") if a else ("compare_b", "compare_a")
        raise OptionError(missing, f"is required with {given}: a comparison needs two groups")
    return (a, b) if a and b else None


def _flag(request, name: str) -> bool:
    value = request.args.get(name, "0").strip().lower()
    if value not in ("0", "1", "true", "false", ""):
        raise OptionError(name, f"{value!r} is not one of 0, 1")
    return value in ("1", "true")


def _int(request, name: str, default: int, lo: int, hi: int) -> int:
    raw = request.args.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise OptionError(name, f"{raw!r} is not an integer in [{lo}, {hi}]") from None
    if not lo <= value <= hi:
        raise OptionError(name, f"{raw!r} is not an integer in [{lo}, {hi}]")
    return value


class AggregatePlugin(base_plugin.TBPlugin):
    """Groups runs, reduces each group across runs and draws one curve and band per group."""

    plugin_name = PLUGIN_NAME

    def __init__(self, context: base_plugin.TBContext):
        self._provider = context.data_provider
        flags = context.flags
        limit = DEFAULT_SCALAR_SAMPLES
        if flags is not None and getattr(flags, "samples_per_plugin", None):
            limit = flags.samples_per_plugin.get(SCALARS, DEFAULT_SCALAR_SAMPLES)
        self._sample_limit = limit or None  # 0 means "keep all"
        self._repeats_needs = repeats_needs_of(
            self._provider, purges=getattr(flags, "purge_orphaned_data", True) if flags is not None else True
        )
        self._sources: LRU[Source] = LRU(MAX_SOURCES)  # any path can name an experiment: keep a few
        self._answers: LRU[_Answer] = LRU(ANSWER_BYTES)
        # A listing the data server gave the same over two reload cycles (and 5 s) is settled: see Source.
        reload = getattr(flags, "reload_interval", 5) if flags is not None else 5
        self._settle_seconds = 2 * max(float(reload or 0), 0.0) + 5.0
        self._lock = threading.Lock()
        self._static = _static_files()
        # plotly.min.js (4.6 MB), compressed once, from now on: ready before the tab first asks for it.
        self._plotly = _compressed_later(self._static[PLOTLY]) if PLOTLY in self._static else None
        # Here rather than in the first request that smooths, which would wait half a second for it.
        stats.warm_up()

    # -- TensorBoard plugin interface ---------------------------------------------------------

    def get_plugin_apps(self):
        return {
            "/runs": self._runs_route,
            "/aggregate": self._aggregate_route,
            "/export": self._export_route,
            "/summary": self._summary_route,
            "/compare": self._compare_route,
            "/static/*": self._static_route,
        }

    def is_active(self) -> bool:
        return False  # activity is decided by data_plugin_names: active when there are scalars

    def data_plugin_names(self):
        return (SCALARS,)

    def frontend_metadata(self):
        return base_plugin.FrontendMetadata(es_module_path="/static/index.js", tab_name="Aggregate")

    # -- routes: parse, call the impl, respond ---------------------------------------------------

    @_route
    def _runs_route(self, request):
        # The Reload button asks for the data server's newest listing, whatever the age of the last.
        age = 0.0 if _flag(request, "fresh") else LISTING_TTL
        query = _query(request, "/runs")
        return self._answer(
            request, age, lambda ctx, e, s: _json_answer(self.runs_impl(ctx, e, query, source=s))
        )

    @_route
    def _aggregate_route(self, request):
        tag = request.args.get("tag")
        if not tag:
            raise OptionError("tag", "is required: the scalar tag to draw")
        query = _query(request, "/aggregate")
        max_points = _int(request, "max_points", chart.DEFAULT_MAX_POINTS, 2, 1_000_000)
        include_runs = _flag(request, "include_runs")
        along = _pair(request)

        def answer(ctx, experiment, source):
            payload = self.aggregate_impl(
                ctx,
                experiment,
                query,
                tag,
                max_points=max_points,
                include_runs=include_runs,
                along=along,
                source=source,
            )
            return _json_answer(payload)

        return self._answer(request, LISTING_TTL, answer, held=True)

    @_route
    def _export_route(self, request):
        query = _query(request, "/export")
        fmt = request.args.get("format", "csv")
        tag = request.args.get("tag") or None
        # A download wants the newest data: the listing is as fresh as /runs gets it.
        return self._answer(
            request,
            LISTING_TTL,
            lambda ctx, e, s: _Answer(*self.export_impl(ctx, e, query, tag, fmt, source=s)),
        )

    @_route
    def _compare_route(self, request):
        tag = request.args.get("tag")
        if not tag:
            raise OptionError("tag", "is required: the scalar tag the runs are scored on")
        fmt = request.args.get("format", "json")
        table = request.args.get("table", "pairs")
        query = _query(request, "/compare")

        def answer(ctx, experiment, source):
            body, content_type, headers = self.compare_impl(
                ctx, experiment, query, tag, fmt=fmt, table=table, source=source
            )
            if content_type == "application/json":
                return _json_answer(body)
            return _Answer(body, content_type, headers)

        return self._answer(request, LISTING_TTL, answer, held=True)

    @_route
    def _summary_route(self, request):
        fmt = request.args.get("format", "json")
        query = _query(request, "/summary")

        def answer(ctx, experiment, source):
            body = self.summary_impl(ctx, experiment, query, fmt=fmt, source=source)
            return _json_answer(body) if fmt == "json" else _Answer(body, MARKUP_TYPE)

        return self._answer(request, LISTING_TTL, answer, held=True)

    def _answer(self, request, max_age: float, make: Callable[..., _Answer], held: bool = False):
        """The answer ``make(ctx, experiment, source)`` gives, or the one it gave to the same request
        while the data were as they are (``Source.version``): an idle tab's polls and a chart scrolled
        back into view cost no work. ``source`` holds one listing, at most ``max_age`` s old.

        ``held`` (a chart, the summary, the Compare table): the listing at hand, the look at the files
        and a new listing done in the background for the next request (``Source.fixed``). A chart then
        never waits for a walk of the logdir (up to 0.16 s for 2,000 runs) or a listing of it (0.3-0.5 s
        at 40M points); ``/runs``, which the tab polls, and downloads wait for one at most a second old."""
        ctx, experiment = _context(request)
        source = self._source(ctx, experiment).fixed(max_age, held=held)
        key = (experiment, request.path, tuple(sorted(request.args.items(multi=True))), source.version)
        answer = self._answers.get(key)
        if answer is None:
            answer = make(ctx, experiment, source)
            self._answers.put(key, answer, answer.size)
        return answer.respond(request)

    # -- impls: the work, without HTTP ------------------------------------------------------------

    def runs_impl(self, ctx, experiment: str, query: Query, *, source: Source | None = None) -> dict:
        """Runs, groups, tags and hparams under ``query``, and every option's default and values.
        ``version`` names the data (see ``Source.version``): the tab redraws nothing while it holds.

        Every impl reads through ``source`` when given (a view of one listing: see ``Source.fixed``),
        else through the experiment's source."""
        source = source or self._source(ctx, experiment).fixed()
        listing = engine.describe(query, source, tab_spelling)
        listing["sample_limit"] = self._sample_limit
        listing["options"] = options()
        listing["version"] = source.version
        return listing

    def aggregate_impl(
        self,
        ctx,
        experiment: str,
        query: Query,
        tag: str,
        *,
        max_points: int,
        include_runs: bool,
        along: tuple[str, str] | None = None,
        source: Source | None = None,
    ) -> dict:
        """The chart of ``tag``: per group its center, band and n (the table's reductions are /export's);
        with ``along`` = (group a, group b), the x ranges where those two groups differ."""
        # The runs' curves are kept for the individual runs drawn, and for the test along the curve.
        keep_runs = include_runs or along is not None
        source = source or self._source(ctx, experiment)
        result = engine.run(query, source, tag=tag, keep_runs=keep_runs, drawn_only=True)
        payload = chart.chart(
            result, tag, max_points=max_points, include_runs=include_runs, spell=tab_spelling
        )
        payload["sample_limit"] = self._sample_limit  # the engine's notes say when it may have bitten
        if along is not None:
            payload["along"] = comparison.along(result, tag, *along)
        return payload

    def compare_impl(
        self,
        ctx,
        experiment: str,
        query: Query,
        tag: str,
        *,
        fmt: str = "json",
        table: str = "pairs",
        source: Source | None = None,
    ) -> tuple[dict | bytes | str, str, list[tuple[str, str]]]:
        """The groups compared on ``tag``: as JSON (both tables, sentences, caption, notes), one table
        (``pairs`` or ``groups``) as CSV, or both tables (groups, then pairs) as Markdown or LaTeX."""
        if fmt not in COMPARE_FORMATS:
            raise OptionError("format", f"{fmt!r} is not one of {', '.join(COMPARE_FORMATS)}")
        if table not in COMPARE_TABLES:
            raise OptionError("table", f"{table!r} is not one of {', '.join(COMPARE_TABLES)}")
        found = comparison.compare(query, source or self._source(ctx, experiment), tag)
        if fmt == "csv":
            frame = found.pairs if table == "pairs" else found.groups
            headers = [("Content-Disposition", table_text.content_disposition(f"{tag}-{table}", "csv"))]
            return table_text.to_csv(frame), "text/csv", headers
        if fmt in MARKUP_FORMATS:
            return paper.comparison_text(found, fmt), MARKUP_TYPE, []
        payload = {
            "tag": tag,
            "score": query.score,
            "baseline": query.baseline or None,
            "direction": found.direction,
            "caption": found.caption(),
            "groups": table_text.to_records(found.groups),
            "pairs": table_text.to_records(found.pairs),
            "sentences": found.sentences(),
            "notes": found.notes,
        }
        return payload, "application/json", []

    def export_impl(
        self, ctx, experiment: str, query: Query, tag: str | None, fmt: str, *, source: Source | None = None
    ) -> tuple[bytes, str, list[tuple[str, str]]]:
        """``(body, content type, headers)`` of the table of ``tag`` (every tag when ``None``)."""
        fmt = one_of("format", fmt, EXPORT_FORMATS)
        result = engine.run(query, source or self._source(ctx, experiment), tag=tag)
        table = result.table()
        if fmt == "csv":
            body, content_type = table_text.to_csv(table), "text/csv"
        else:
            body, content_type = table_text.to_json(table, result.attrs()), "application/json"
        headers = [("Content-Disposition", table_text.content_disposition(tag, fmt))]
        if any(b.downsampled for b in result.blocks):
            # A CSV has no room for notes: say it in a header (the JSON's meta.notes says it too).
            headers.append(("X-Aggregate-Warning", DOWNSAMPLED_WARNING))
        return body, content_type, headers

    def summary_impl(
        self, ctx, experiment: str, query: Query, *, fmt: str = "json", source: Source | None = None
    ) -> dict | str:
        """Final and best point per tag and group: as JSON, or the table as Markdown or LaTeX."""
        if fmt not in SUMMARY_FORMATS:
            raise OptionError("format", f"{fmt!r} is not one of {', '.join(SUMMARY_FORMATS)}")
        source = source or self._source(ctx, experiment)
        result = engine.run(query, source, drawn_only=True)  # center and band only
        table = summary.summary(result)
        if fmt in MARKUP_FORMATS:
            if not len(table):
                return "no data: no selected run has a point to summarise\n"
            return paper.summary_text(result, fmt, table)
        return {
            "x": result.x,
            "rows": table_text.to_records(table) if len(table) else [],
            "notes": result.notes(spell=tab_spelling),
        }

    # -- helpers ------------------------------------------------------------------------------

    def _source(self, ctx, experiment: str) -> Source:
        source = self._sources.get(experiment)
        if source is not None:
            return source
        location = self._data_location(ctx, experiment)  # outside the lock: a remote provider's network call
        logdir = _local_folder(location)
        with self._lock:
            source = self._sources.get(experiment)
            if source is None:
                source = Source(
                    self._provider,
                    experiment,
                    sample_limit=self._sample_limit,
                    ctx=ctx,
                    logdir=logdir,
                    repeats_needs=self._repeats_needs,
                    settle_seconds=self._settle_seconds,
                    # A logdir in object storage: TensorBoard loads it, but its files are not checked.
                    notes=[remote_note(location, loaded_here=False)] if _is_url(location) else (),
                )
                self._sources.put(experiment, source)
            return source

    def _data_location(self, ctx, experiment: str) -> str | None:
        """The experiment's logdir as TensorBoard was given it (both of its loaders report ``--logdir``
        as the ``data_location``); ``None`` when the provider cannot say."""
        try:
            location = self._provider.experiment_metadata(ctx, experiment_id=experiment).data_location
        except Exception as exc:  # a provider that cannot say: aggregate without the check
            logger.info("no experiment metadata: %s", exc)
            return None
        return location if isinstance(location, str) and location else None

    @wrappers.Request.application
    def _static_route(self, request):
        # Only the plain file names listed at start-up are served: the path is decoded before this
        # lookup, so a name with "..", "/", "%2F", "\\" or a drive letter is simply not in the table.
        path = request.path
        name = path[len(STATIC_PREFIX) :] if path.startswith(STATIC_PREFIX) else None
        file_path = self._static.get(name) if name else None
        if file_path is None:
            return _plain(request, "not found", 404)
        content_type = _CONTENT_TYPES.get(os.path.splitext(name)[1], "application/octet-stream")
        if name == PLOTLY and self._plotly is not None and self._plotly.exception() is None:
            # Gzipped (Respond unpacks it for a client without gzip); browsers cache it. Should the
            # compression have failed, the file is read and sent as it is, as any other.
            body = self._plotly.result()
            return http_util.Respond(
                request, body, content_type, expires=PLOTLY_CACHE_SECONDS, content_encoding="gzip"
            )
        with open(file_path, "rb") as f:
            body = f.read()
        return http_util.Respond(request, body, content_type)


def _local_folder(location: str | None) -> str | None:
    """The logdir when it is a folder on this machine, so the event files the loaders skip can be
    named; ``None`` for a remote or unknown location (nothing is checked then)."""
    if location is None or _is_url(location):
        return None
    path = os.path.expanduser(location)
    return path if os.path.isdir(path) else None


def _is_url(location: str | None) -> bool:
    """A logdir in object storage (``s3://``, ``gs://``...), as TensorBoard tells them from folders."""
    return location is not None and "://" in location


def _compressed_later(path: str) -> concurrent.futures.Future:
    """The gzip of the file at ``path``, made on a thread of its own (zlib leaves Python's lock) while
    TensorBoard starts: the tab's first load would otherwise wait 0.2 s for it."""
    future: concurrent.futures.Future = concurrent.futures.Future()

    def compress() -> None:
        try:
            with open(path, "rb") as f:
                future.set_result(gzip.compress(f.read(), compresslevel=6, mtime=0))
        except BaseException as exc:  # given to the request that asks for it
            future.set_exception(exc)

    threading.Thread(target=compress, name="aggregate-gzip", daemon=True).start()
    return future


def _static_files() -> dict[str, str]:
    """``{name: path}``: the tab's own files, and plotly.min.js from the installed plotly package."""
    from . import static  # the installed frontend/ folder

    static_dir = os.path.dirname(static.__file__)
    files = {}
    if os.path.isdir(static_dir):
        for name in os.listdir(static_dir):
            path = os.path.join(static_dir, name)
            if os.path.isfile(path) and os.path.splitext(name)[1] in _CONTENT_TYPES:
                files[name] = path
    try:
        import plotly

        bundled = os.path.join(os.path.dirname(plotly.__file__), "package_data", "plotly.min.js")
        if os.path.isfile(bundled):
            files[PLOTLY] = bundled
    except ImportError:
        pass
    return files
