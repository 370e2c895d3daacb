"""The one description of a request, and the one place every option is validated.

The Python API, the HTTP routes and the CLI all build a :class:`Query`; an invalid option raises
:class:`OptionError` (a ``ValueError``) whose message names the option and what is allowed.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

# The `regex` module (re-compatible syntax) can stop a match after a time limit, so a pathological
# pattern such as (a+)+$ cannot hold a server thread; `re` cannot be interrupted.
import regex

GROUP_BY_MODES = ("auto", "parent", "none", "regex:PATTERN", "hparam:NAME[,NAME...]")
CENTERS = ("mean", "median", "iqm")
BANDS = ("std", "sem", "ci95", "minmax", "iqr", "boot95", "none")
ALIGNS = ("auto", "exact", "interpolate")
X_AXES = ("step", "relative", "wall")
# x from another scalar tag: each run's value of tag NAME at each step.
X_TAG_PREFIX = "tag:"
X_MODES = X_AXES + (X_TAG_PREFIX + "NAME",)
DUP_STEPS = ("last", "first", "mean")
BASE_REDUCTIONS = (
    "mean",
    "median",
    "iqm",
    "std",
    "var",
    "sem",
    "min",
    "max",
    "count",
    "ci95_lo",
    "ci95_hi",
    "boot95_lo",
    "boot95_hi",
)
SCORES = ("final", "best", "tail", "auc")
# Bootstrap resamples: rliable's default for probability of improvement; more is slower, not wronger.
DEFAULT_BOOT_REPS = 2000
MAX_BOOT_REPS = 100_000
# count is always n (a column of every table): computed only when asked for.
DEFAULT_REDUCTIONS = ("mean", "std", "min", "max", "median")
# The options with a fixed list of values (any case accepted, see one_of); x is also tag:NAME.
_FIXED = {"center": CENTERS, "band": BANDS, "align": ALIGNS, "dup_steps": DUP_STEPS, "score": SCORES}
# How the tab names each value of the options it offers as a menu (and only here).
LABELS = {
    "center": {"mean": "mean", "median": "median", "iqm": "IQM (interquartile mean)"},
    "band": {
        "std": "±1 std",
        "sem": "±1 standard error",
        "ci95": "95% CI (Student t)",
        "minmax": "min–max",
        "iqr": "IQR (25th–75th percentile)",
        "boot95": "95% bootstrap CI of the line",
        "none": "no band",
    },
    "x": {"step": "step", "relative": "relative time (s)", "wall": "wall time"},
    "align": {"auto": "auto", "exact": "exact", "interpolate": "interpolate"},
    "dup_steps": {"last": "last", "first": "first", "mean": "mean"},
    "score": {
        "final": "final value",
        "best": "best value",
        "tail": "mean of the last 10%",
        "auc": "mean over the run (area)",
    },
}
_QUANTILE = re.compile(r"q(\d{2})")
# Long patterns are a cheap way to make a regex engine work hard; no run filter needs this many.
MAX_PATTERN_LENGTH = 1000
# CPU seconds all searches of one pattern over all names of one request may take together.
REGEX_BUDGET = 1.0
# Clock seconds one search may take at least, so a nearly spent budget does not time out on every wait.
_MIN_WAIT = 0.05


# Marks an option named inside a message, so that each adapter spells it its own way (``--dup-steps``
# on the command line, ``dup_steps`` in Python and HTTP). A control character: never in an option name.
_REF = re.compile("\x1f([a-z_]+)\x1f")


def ref(option: str) -> str:
    """``option`` named inside an :class:`OptionError` message (see :meth:`OptionError.spelled`)."""
    return f"\x1f{option}\x1f"


class OptionError(ValueError):
    """An option has a value that is not allowed; the message says which option and what is.

    ``str(error)`` is ``"option: message"`` with options named as in Python and HTTP; an adapter with
    other names (the CLI's flags) uses :meth:`spelled`.
    """

    def __init__(self, option: str, message: str):
        self.option = option
        self.template = message
        super().__init__(self.spelled(lambda name: name))

    def spelled(self, name: Callable[[str], str]) -> str:
        """The message with the option and every option it names written as ``name(option)``."""
        return f"{name(self.option)}: " + spelled(self.template, name)


class SelectionError(OptionError):
    """An option's value is valid but selects nothing in these logs: no run, tag or hparam matches.
    The message says what there is to choose from."""


def spelled(text: str, name: Callable[[str], str]) -> str:
    """``text`` with every option named in it by :func:`ref` written as ``name(option)``."""
    return _REF.sub(lambda m: name(m.group(1)), text)


def check_repeats_kept(dup_steps: str, needs: str | None) -> None:
    """``dup_steps`` first or mean needs every write of a repeated step. ``needs`` is ``None`` when the
    reader keeps them, else what it takes to keep them (which the reader dropped), e.g. "needs loader
    python or auto: TensorBoard's Rust data server keeps only the last write of a repeated step".

    Raises:
        OptionError: the repeats that ``dup_steps`` resolves are not there to resolve.
    """
    if dup_steps != "last" and needs:
        raise OptionError("dup_steps", f"{dup_steps!r} {needs}")


def _compile(option: str, pattern: str) -> regex.Pattern:
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise OptionError(option, f"regular expression longer than {MAX_PATTERN_LENGTH} characters")
    try:
        return regex.compile(pattern)
    except (regex.error, re.error, ValueError) as exc:
        raise OptionError(option, f"invalid regular expression {pattern!r}: {exc}") from None


def search_names(option: str, pattern: str, names: Sequence[str], budget: float = REGEX_BUDGET) -> list:
    """``pattern.search(name)`` for each name (a match or ``None``), all within ``budget`` seconds of
    this thread's CPU time.

    Raises:
        OptionError: the pattern is invalid, or too slow on these names (catastrophic backtracking).
    """
    compiled = _compile(option, pattern)
    # The budget is this thread's CPU time, not the clock: under load a request waits for its turn
    # (other requests hold the interpreter lock), and that wait is no fault of the pattern. A search
    # runs without the lock (concurrent=True); its timeout is clock time and includes the wait to get
    # the lock back, so when it runs out, the CPU time spent decides: over budget is a slow pattern,
    # under budget was a wait, and the search is tried again.
    start = time.thread_time()
    matches = []
    for name in names:
        while True:
            spent = time.thread_time() - start
            if spent >= budget:
                raise OptionError(
                    option, f"regular expression {pattern!r} takes too long on these names; simplify it"
                )
            try:
                matches.append(compiled.search(name, timeout=max(budget - spent, _MIN_WAIT), concurrent=True))
                break
            except TimeoutError:
                continue
    return matches


def did_you_mean(value: str, allowed: Iterable[str]) -> str:
    """``"; did you mean X?"`` when ``value`` is a near miss of one of ``allowed``, else ``""``."""
    close = difflib.get_close_matches(value.lower(), list(allowed), n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def one_of(option: str, value: Any, allowed: Iterable[str]) -> str:
    """``value`` as one of the fixed values ``allowed`` (all lower case), in any case: ``"CI95"`` is
    ``"ci95"``. Every option with a fixed list of values is checked here (regular expressions and
    names from the logs stay case-sensitive).

    Raises:
        OptionError: not one of them; a near miss says which one was probably meant.
    """
    allowed = tuple(allowed)
    name = value.strip().lower() if isinstance(value, str) else value
    if name not in allowed:
        hint = did_you_mean(value, allowed) if isinstance(value, str) else ""
        raise OptionError(option, f"{value!r} is not one of {', '.join(allowed)}{hint}")
    return name


def parse_reductions(value: str | Iterable[str]) -> tuple[str, ...]:
    """Split and check a reductions list (``"mean,std,q05"`` or a sequence); keeps order, drops repeats."""
    items = value.split(",") if isinstance(value, str) else list(value)
    names: list[str] = []
    for item in items:
        name = str(item).strip().lower()
        if not name:
            continue
        if name not in BASE_REDUCTIONS and not _QUANTILE.fullmatch(name):
            raise OptionError(
                "reductions",
                f"{name!r} is not one of {', '.join(BASE_REDUCTIONS)} or a percentile qNN (q05, q50, q95)"
                + did_you_mean(name, BASE_REDUCTIONS),
            )
        if name not in names:
            names.append(name)
    if not names:
        raise OptionError("reductions", "needs at least one of " + ", ".join(BASE_REDUCTIONS))
    return tuple(names)


@dataclasses.dataclass(frozen=True)
class Query:
    """Everything that decides what the engine computes. Validated on construction.

    Attributes:
        runs: regular expression searched in run names (empty: all runs).
        tags: regular expression searched in tag names (empty: all tags).
        group_by: ``auto`` | ``parent`` | ``none`` | ``regex:PATTERN`` | ``hparam:NAME[,NAME...]``.
        center: ``mean`` | ``median`` | ``iqm``: the statistic drawn as the line.
        band: ``std`` | ``sem`` | ``ci95`` | ``minmax`` | ``iqr`` | ``boot95`` | ``none``: the shaded
            band; ``boot95`` is the 95% percentile-bootstrap CI of the center.
        reductions: statistics in the result table, e.g. ``("mean", "std", "q05")``.
        align: ``auto`` | ``exact`` | ``interpolate``.
        x: ``step`` | ``relative`` (seconds since the run's first point) | ``wall`` (epoch seconds) |
            ``tag:NAME`` (each run's value of scalar tag NAME at the same step).
        smoothing: TensorBoard's debiased EMA weight in [0, 1), applied per run before reducing.
        min_runs: points backed by fewer finite values than this are dropped.
        dup_steps: how repeated steps within a run are resolved: ``last`` | ``first`` | ``mean``.
        boot_reps: bootstrap resamples (``boot95`` band and reductions, comparisons' CIs).
        seed: seed of the bootstrap's random numbers: the same request gives the same numbers.
        score: what each run contributes to a comparison: ``final`` | ``best`` | ``tail`` | ``auc``.
        baseline: a comparison's baseline group (every group against it); empty: every pair.
    """

    runs: str = ""
    tags: str = ""
    group_by: str = "auto"
    center: str = "mean"
    band: str = "std"
    reductions: tuple[str, ...] = DEFAULT_REDUCTIONS
    align: str = "auto"
    x: str = "step"
    smoothing: float = 0.0
    min_runs: int = 1
    dup_steps: str = "last"
    boot_reps: int = DEFAULT_BOOT_REPS
    seed: int = 0
    score: str = "final"
    baseline: str = ""

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: normalise in place once
        for option in ("runs", "tags"):
            value = getattr(self, option)
            if value is None:
                value = ""
            if not isinstance(value, str):
                raise OptionError(option, "must be a regular expression string")
            _compile(option, value)
            set_(self, option, value)
        set_(self, "group_by", _check_group_by(self.group_by))
        for option, allowed in _FIXED.items():
            set_(self, option, one_of(option, getattr(self, option), allowed))
        set_(self, "reductions", parse_reductions(self.reductions))
        set_(self, "x", _check_x(self.x))
        try:
            smoothing = float(self.smoothing)
        except (TypeError, ValueError):
            raise OptionError("smoothing", f"{self.smoothing!r} is not a number in [0, 1)") from None
        if not (math.isfinite(smoothing) and 0.0 <= smoothing < 1.0):
            raise OptionError("smoothing", f"{self.smoothing!r} is not a number in [0, 1)")
        set_(self, "smoothing", smoothing)
        set_(self, "min_runs", _integer("min_runs", self.min_runs, 1))
        set_(self, "boot_reps", _integer("boot_reps", self.boot_reps, 1, MAX_BOOT_REPS))
        set_(self, "seed", _integer("seed", self.seed, 0, 2**63 - 1))
        if self.baseline is None:
            set_(self, "baseline", "")
        elif not isinstance(self.baseline, str):
            raise OptionError("baseline", "must be a group name")

    @property
    def x_tag(self) -> str | None:
        """NAME of ``x=tag:NAME``, else ``None`` (a step or time axis)."""
        return self.x[len(X_TAG_PREFIX) :] if self.x.startswith(X_TAG_PREFIX) else None

    @property
    def x_is_grid(self) -> bool:
        """Whether curves lie on an evenly spaced grid of their own (time axes and ``tag:NAME``), where
        a grid point without a value is a gap, rather than on the runs' steps."""
        return self.x != "step"

    def check_repeats_kept(self, needs: str | None) -> None:
        """See :func:`check_repeats_kept`: whether a reader that drops repeats can answer this query."""
        check_repeats_kept(self.dup_steps, needs)

    def select_runs(self, names: Iterable[str]) -> list[str]:
        """The names the ``runs`` filter matches, in the given order."""
        names = list(names)
        return [n for n, m in zip(names, search_names("runs", self.runs, names)) if m is not None]

    def select_tags(self, names: Iterable[str]) -> list[str]:
        """The names the ``tags`` filter matches, in the given order."""
        names = list(names)
        return [n for n, m in zip(names, search_names("tags", self.tags, names)) if m is not None]

    @classmethod
    def from_mapping(cls, params: Mapping[str, Any], *, ignore: Iterable[str] = ()) -> Query:
        """Build from string parameters (HTTP query, CLI); unknown keys are an error unless ignored."""
        names = {f.name for f in dataclasses.fields(cls)}
        skip = set(ignore)
        unknown = sorted(k for k in params if k not in names and k not in skip)
        if unknown:
            raise OptionError(unknown[0], f"unknown option; options are {', '.join(sorted(names))}")
        kwargs = {k: v for k, v in params.items() if k in names and v is not None}
        return cls(**kwargs)

    def replace(self, **changes: Any) -> Query:
        """A copy with some options changed (validated again)."""
        return dataclasses.replace(self, **changes)


def _integer(option: str, value: Any, lo: int, hi: int | None = None) -> int:
    """``value`` (an int, or its text) as an int in [lo, hi]."""
    what = f"an integer >= {lo}" if hi is None else f"an integer in [{lo}, {hi:,}]"
    try:
        number = value if isinstance(value, int) else int(str(value).strip())
    except ValueError:
        raise OptionError(option, f"{value!r} is not {what}") from None
    if isinstance(value, bool) or number < lo or (hi is not None and number > hi):
        raise OptionError(option, f"{value!r} is not {what}")
    return number


def _check_x(value: Any) -> str:
    if isinstance(value, str) and value.strip().lower() in X_AXES:
        return value.strip().lower()
    if isinstance(value, str) and value.startswith(X_TAG_PREFIX):
        if not value[len(X_TAG_PREFIX) :]:
            raise OptionError("x", "tag: needs the name of a scalar tag, e.g. tag:train/samples_seen")
        return value
    hint = did_you_mean(value, X_AXES) if isinstance(value, str) else ""
    raise OptionError("x", f"{value!r} is not one of {', '.join(X_MODES)}{hint}")


def _check_group_by(value: Any) -> str:
    """The mode in lower case (``Parent`` is ``parent``, ``REGEX:`` is ``regex:``); the pattern and the
    hparam names after the colon are kept as they are (they are matched case-sensitively)."""
    if not isinstance(value, str):
        raise OptionError("group_by", f"{value!r} is not one of {', '.join(GROUP_BY_MODES)}")
    mode, colon, rest = value.partition(":")
    mode = mode.strip().lower()
    if not colon and mode in ("auto", "parent", "none"):
        return mode
    if colon and mode == "regex":
        if not rest:
            raise OptionError("group_by", "regex: needs a pattern, e.g. regex:lr=([^/]+)")
        _compile("group_by", rest)
        return "regex:" + rest
    if colon and mode == "hparam":
        names = [n.strip() for n in rest.split(",") if n.strip()]
        if not names:
            raise OptionError("group_by", "hparam: needs at least one hparam name, e.g. hparam:lr")
        return "hparam:" + ",".join(names)
    modes = [m.split(":")[0] + (":" if ":" in m else "") for m in GROUP_BY_MODES]
    close = difflib.get_close_matches(mode + colon, modes, n=1, cutoff=0.6)
    hint = ""
    if close:  # the mode as written in the list: regex:PATTERN, hparam:NAME[,NAME...]
        hint = f"; did you mean {GROUP_BY_MODES[modes.index(close[0])]}?"
    raise OptionError("group_by", f"{value!r} is not one of {', '.join(GROUP_BY_MODES)}{hint}")


def options() -> dict[str, dict[str, Any]]:
    """Every option's default and, for an option with a fixed list of values, those values with their
    labels, in order: what the tab's controls offer (it gets them from ``/runs``), so no default or
    allowed value is written a second time."""
    allowed = {**_FIXED, "x": X_AXES}
    out: dict[str, dict[str, Any]] = {}
    for field in dataclasses.fields(Query):
        entry: dict[str, Any] = {"default": field.default}
        if field.name in allowed:
            entry["values"] = [[value, LABELS[field.name][value]] for value in allowed[field.name]]
        elif field.name == "group_by":
            entry["values"] = list(GROUP_BY_MODES)
        elif field.name == "reductions":
            entry["default"] = list(field.default)
            entry["values"] = list(BASE_REDUCTIONS) + ["qNN"]
        out[field.name] = entry
    return out
