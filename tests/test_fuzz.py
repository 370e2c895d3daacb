"""Hostile input: every route's parameters fuzzed with hypothesis; no answer may be a 5xx.

The many cases run against TensorBoard's real WSGI app built in-process (its real data provider in
both loading modes, every installed plugin) and driven by werkzeug's test client, which re-raises
anything a handler lets escape, so an uncaught exception is counted as a 5xx too. A smaller run
goes over HTTP to a real ``tensorboard`` process. Each case's status is tallied and the totals printed.
"""

from __future__ import annotations

import collections
import json
import os
import urllib.parse

import numpy as np
import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server import tensorboard, wait_for
from writers import noisy_curve, write_run

from tb_aggregate_plugin import query as q

pytestmark = pytest.mark.server

PLUGIN = "/data/plugin/aggregate"
MODES = ["rust", "python"]
ROUTES = ("/runs", "/aggregate", "/export", "/summary")
HOSTILE_TAG = '=cmd<b>"x"\n'
TAGS = ["loss", "acc", HOSTILE_TAG]
GROUPS = ["lr=0.1", "lr=0.01", "solo", "<b>odd</b>"]
# Per (mode, route): thousands of cases in all, in about a minute on a small machine.
EXAMPLES = {"/runs": 400, "/aggregate": 800, "/export": 500, "/summary": 500}
PATH_EXAMPLES = 300
QUERY_STRING_EXAMPLES = 300
OVER_HTTP_EXAMPLES = 300

TALLY: collections.Counter = collections.Counter()  # (where, status) -> cases


# -- the app ---------------------------------------------------------------------------------------


def write_logdir(root: str) -> None:
    """Small, but with every shape the engine branches on: exact and interpolated groups, NaN/inf, a
    group of one run, hparams and a run without, an early stop, names with markup and formulas."""
    steps = list(range(0, 30, 3))
    for i in range(2):
        write_run(
            root,
            f"lr=0.1/seed_{i}",
            {"loss": (steps, noisy_curve(10, i)), "acc": (steps, 1 - noisy_curve(10, 5 + i, start=0.9))},
            hparams={"lr": 0.1, "opt": "adam"},
        )
    loss = noisy_curve(10, 20)
    loss[3], loss[6] = np.nan, np.inf
    write_run(root, "lr=0.01/seed_0", {"loss": (steps, loss)}, writer="tbx", hparams={"lr": 0.01})
    write_run(root, "lr=0.01/seed_1", {"loss": (list(range(1, 20, 4)), noisy_curve(5, 21))}, writer="tbx")
    write_run(root, "solo/seed_0", {"loss": (steps[:4], noisy_curve(4, 30)), HOSTILE_TAG: (steps, steps)})
    write_run(root, "<b>odd</b>/seed_0", {HOSTILE_TAG: (steps, noisy_curve(10, 40))})


class InProcess:
    """TensorBoard's WSGI app with its real data provider, served to a werkzeug test client."""

    def __init__(self, logdir: str, mode: str):
        from tensorboard import program
        from tensorboard.backend import application
        from werkzeug.test import Client

        self.tb = program.TensorBoard()  # the default plugins and every installed one (this one too)
        self.tb.configure(
            argv=[
                None,
                "--logdir",
                logdir,
                f"--load_fast={'true' if mode == 'rust' else 'false'}",
                "--reload_interval",
                "0",  # load once: the logdir does not change
                "--samples_per_plugin",
                "scalars=0",
            ]
        )
        # What TensorBoard's own start-up does, minus binding a port.
        provider, multiplexer = self.tb._make_data_provider()
        app = application.TensorBoardWSGIApp(
            self.tb.flags, self.tb.plugin_loaders, provider, self.tb.assets_zip_provider, multiplexer
        )
        self.client = Client(app)

    def get(self, path: str, query_string: str = "") -> tuple[int, dict, bytes]:
        response = self.client.get(path, query_string=query_string)
        return response.status_code, dict(response.headers), response.get_data()

    def close(self) -> None:
        # The data server (rust mode) stops when its stdin closes.
        handle = getattr(getattr(self.tb, "_ingester", None), "_stdin_handle", None)
        if handle is not None:
            handle.close()


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("fuzz"))
    write_logdir(root)
    return root


@pytest.fixture(scope="module", params=MODES)
def app(request, logdir):
    app = InProcess(logdir, request.param)
    app.mode = request.param

    def loaded() -> bool:
        status, _, body = app.get(f"{PLUGIN}/runs")
        return status == 200 and len(json.loads(body)["runs"]) == 6

    try:
        wait_for(loaded, timeout=90, what=f"the in-process app ({request.param}) to load")
        yield app
    finally:
        app.close()


@pytest.fixture(scope="module", autouse=True)
def totals():
    yield
    cases = sum(TALLY.values())
    errors = sum(n for (_, status), n in TALLY.items() if status >= 500)
    by_status = collections.Counter()
    for (_, status), n in TALLY.items():
        by_status[status] += n
    print(f"\nfuzzed {cases} cases; 5xx: {errors}; by status: {dict(sorted(by_status.items()))}")


# -- strategies ------------------------------------------------------------------------------------

# Any text a URL can carry (lone surrogates cannot be encoded, so they cannot arrive).
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
NUMBERS = st.one_of(
    st.integers().map(str),
    st.floats().map(repr),
    st.sampled_from(
        ["0", "-0", "1", "2", "-1", "1e3", "1e309", "nan", "inf", "-inf", " 3 ", "٣", "0x10", "½"]
    ),
)
REGEX = st.one_of(
    st.sampled_from(
        [
            "(",
            ")",
            "[",
            "*",
            "a{2,1}",
            "(?P<x>a)(?P=y)",
            "\\",
            "(a|aa)+$",
            "(a+)+$",
            r"\p{L}+",
            "(?<=a)b",
            "x" * (q.MAX_PATTERN_LENGTH + 1),
            "\x00",
            "[[:alpha:]]",
            "(?",
            "\\1",
        ]
    ),
    TEXT,
)
# Values a user of the tab could send: every branch of the engine is reached from these.
VALID = {
    "runs": st.sampled_from(["", "seed", "^lr=0\\.1", "solo|odd", "nomatch", "(?i)LR", "seed_[01]$", "<b>"]),
    "tags": st.sampled_from(["", "loss", "acc", "^=cmd", "nomatch", "l|a", "\n"]),
    "group_by": st.sampled_from(
        [
            "auto",
            "parent",
            "none",
            "regex:lr=([^/]+)",
            "regex:(.)(.)?",
            "regex:seed_(\\d)",
            "regex:zzz",
            "hparam:lr",
            "hparam:lr,opt",
            "hparam:opt",
            "hparam:nope",
        ]
    ),
    "center": st.sampled_from(q.CENTERS),
    "band": st.sampled_from(q.BANDS),
    "reductions": st.lists(
        st.sampled_from(list(q.BASE_REDUCTIONS) + ["q05", "q50", "q95", "q00", "q99"]), min_size=1, max_size=5
    ).map(",".join),
    "align": st.sampled_from(q.ALIGNS),
    "x": st.sampled_from(q.X_AXES),
    "smoothing": st.floats(0, 0.999).map(repr),
    "min_runs": st.integers(1, 4).map(str),
    "dup_steps": st.sampled_from(q.DUP_STEPS),
    "tag": st.sampled_from(TAGS + ["nope"]),
    "max_points": st.integers(2, 5000).map(str),
    "include_runs": st.sampled_from(["0", "1", "true", "false", ""]),
    "format": st.sampled_from(["csv", "json", "md", "tex"]),
    "compare_a": st.sampled_from(GROUPS),
    "compare_b": st.sampled_from(GROUPS),
}
# Values nobody should send: wrong types, out of range, malformed, huge, control characters.
HOSTILE = {
    "runs": REGEX,
    "tags": REGEX,
    "group_by": st.one_of(
        st.sampled_from(
            ["regex:", "regex:(", "hparam:", "hparam:,", "HPARAM:lr", "regex:()", "regex:(?:x)|"]
        ),
        REGEX.map(lambda r: "regex:" + r),
        TEXT.map(lambda t: "hparam:" + t),
        TEXT,
    ),
    "reductions": st.one_of(
        st.lists(st.sampled_from(["q100", "q5", "Q50", " mean ", "", "std,", "q-1", "ci95"]), max_size=4).map(
            ",".join
        ),
        TEXT,
    ),
    "smoothing": st.one_of(NUMBERS, TEXT),
    "min_runs": st.one_of(NUMBERS, TEXT),
    "max_points": st.one_of(NUMBERS, TEXT),
    "include_runs": st.one_of(st.sampled_from(["TRUE", "yes", "2", "-1"]), TEXT),
    "format": st.one_of(st.sampled_from(["xlsx", "CSV", "parquet", "../csv"]), TEXT),
}
ENGINE_OPTIONS = (
    "runs",
    "tags",
    "group_by",
    "center",
    "band",
    "reductions",
    "align",
    "x",
    "smoothing",
    "min_runs",
    "dup_steps",
)
ROUTE_OPTIONS = {
    "/runs": (),
    "/aggregate": ("tag", "max_points", "include_runs", "compare_a", "compare_b"),
    "/export": ("tag", "format"),
    "/summary": ("format",),
}


def hostile(name: str) -> st.SearchStrategy:
    return HOSTILE.get(name, TEXT)


@st.composite
def query_strings(draw, route: str) -> str:
    """Mostly options a user could send, with zero to three made hostile; at times an unknown option
    or one given twice."""
    names = ENGINE_OPTIONS + ROUTE_OPTIONS[route]
    params = draw(st.fixed_dictionaries({}, optional={n: VALID[n] for n in names}))
    if route == "/aggregate" and draw(st.integers(0, 4)):
        params.setdefault("tag", draw(st.sampled_from(TAGS)))  # mostly past the required-tag check
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2, 3]))):
        name = draw(st.sampled_from(names))
        params[name] = draw(hostile(name))
    pairs = list(params.items())
    if draw(st.integers(0, 9)) == 0:
        pairs.append((draw(TEXT), draw(TEXT)))  # an unknown option
    if pairs and draw(st.integers(0, 9)) == 0:
        pairs.append((pairs[0][0], draw(TEXT)))  # the same option twice
    return urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote)


RAW_QUERY_STRINGS = st.lists(
    st.one_of(
        st.binary(min_size=1, max_size=3).map(lambda b: "".join(f"%{c:02X}" for c in b)),  # bad UTF-8, %00
        st.text(st.sampled_from("abcxyz=&;+%#?/[]{}\\'\"<> \t."), min_size=1, max_size=6),
        st.sampled_from(["runs=", "tag=loss", "&&", "=", "%", "%G1", "%%", "tag", "format=json", "x=%00"]),
    ),
    max_size=8,
).map("".join)


# -- checks ----------------------------------------------------------------------------------------


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def check(where: str, status: int, headers: dict, body: bytes) -> None:
    """Never a 5xx; errors are one plain line; JSON is strict JSON (no NaN) and text is UTF-8."""
    TALLY[(where, status)] += 1
    assert status < 500, (where, status, body[:500])
    assert status in (200, 400, 404), (where, status, body[:500])
    assert b"Traceback" not in body
    content_type = headers.get("Content-Type", "")
    if status != 200:
        assert body.decode("utf-8").count("\n") <= 1, body[:500]
    elif content_type.startswith("application/json"):
        json.loads(body, parse_constant=_no_constant)
    elif content_type.startswith(("text/csv", "text/plain")):
        body.decode("utf-8")


def call(app: InProcess, where: str, path: str, query_string: str = "") -> None:
    try:
        status, headers, body = app.get(path, query_string)
    except Exception as exc:  # escaped every handler: the server would answer 500
        TALLY[(where, 500)] += 1
        raise AssertionError(f"{path}?{query_string} raised {exc!r}") from exc
    check(where, status, headers, body)


def fuzz_settings(examples: int):
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,  # write nothing into the working tree
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# -- the fuzz tests --------------------------------------------------------------------------------


def _route_test(route: str):
    @fuzz_settings(EXAMPLES[route])
    @given(qs=query_strings(route))
    def test(app, qs):
        call(app, f"{app.mode} {route}", f"{PLUGIN}{route}", qs)

    test.__name__ = f"test_fuzz_{route.strip('/')}_never_5xx"
    return test


test_fuzz_runs_never_5xx = _route_test("/runs")
test_fuzz_aggregate_never_5xx = _route_test("/aggregate")
test_fuzz_export_never_5xx = _route_test("/export")
test_fuzz_summary_never_5xx = _route_test("/summary")


@fuzz_settings(QUERY_STRING_EXAMPLES)
@given(route=st.sampled_from(ROUTES), qs=RAW_QUERY_STRINGS)
def test_fuzz_raw_query_strings_never_5xx(app, route, qs):
    call(app, f"{app.mode} raw", f"{PLUGIN}{route}", qs)


PATH_PARTS = st.one_of(
    st.sampled_from(
        [
            "..",
            ".",
            "",
            "%2e%2e",
            "%2F",
            "%5C",
            "%00",
            "static",
            "runs",
            "index.js",
            "plotly.min.js",
            "style.css",
            "C:",
            "~",
            "%252e%252e",
            "\\",
            "//",
            "export",
        ]
    ),
    TEXT.map(lambda t: urllib.parse.quote(t, safe="")),
)


@fuzz_settings(PATH_EXAMPLES)
@given(
    experiment=st.one_of(st.none(), TEXT.map(lambda t: urllib.parse.quote(t, safe=""))),
    parts=st.lists(PATH_PARTS, min_size=1, max_size=4),
    static=st.booleans(),
)
def test_fuzz_paths_and_experiments_never_5xx(app, experiment, parts, static):
    """Any path under the plugin (and any experiment id in front): the static route serves only its own
    files, and a made-up experiment is answered like any other (or 404), never with a 5xx."""
    prefix = f"/experiment/{experiment}" if experiment else ""
    path = f"{prefix}{PLUGIN}/{'static/' if static else ''}{'/'.join(parts)}"
    try:
        status, headers, body = app.get(path)
    except Exception as exc:
        TALLY[(f"{app.mode} path", 500)] += 1
        raise AssertionError(f"{path} raised {exc!r}") from exc
    check(f"{app.mode} path", status, headers, body)
    if static and status == 200:
        assert urllib.parse.unquote("/".join(parts)) in static_names(), path


# -- over HTTP, against a real tensorboard process -----------------------------------------------------


@pytest.fixture(scope="module")
def real_server(logdir):
    with tensorboard(logdir) as base:
        wait_for(
            lambda: len(requests.get(f"{base}{PLUGIN}/runs", timeout=10).json()["runs"]) == 6, timeout=60
        )
        yield base


@fuzz_settings(OVER_HTTP_EXAMPLES)
@given(data=st.data())
def test_fuzz_over_http_against_a_real_tensorboard(real_server, data):
    route = data.draw(st.sampled_from(ROUTES))
    qs = data.draw(st.one_of(query_strings(route), RAW_QUERY_STRINGS))
    response = requests.get(f"{real_server}{PLUGIN}{route}?{qs}", timeout=60)
    check("http", response.status_code, dict(response.headers), response.content)


def static_names() -> list[str]:
    """The tab's own files and plotly's: all the static route may serve."""
    from tb_aggregate_plugin import static

    folder = os.path.dirname(static.__file__)
    return sorted(n for n in os.listdir(folder) if n.endswith((".js", ".css", ".html"))) + ["plotly.min.js"]


def test_static_serves_only_its_own_files(app):
    for name in static_names():
        status, _, _ = app.get(f"{PLUGIN}/static/{name}")
        assert status == 200, name
    for name in ("__init__.py", "../plugin.py", "..%2Fplugin.py", "%2Fetc%2Fpasswd"):
        status, _, body = app.get(f"{PLUGIN}/static/{name}")
        assert status == 404 and b"import" not in body, name
