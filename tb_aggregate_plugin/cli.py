"""``tb-aggregate``: reduce the runs of a logdir to a table file or to new TensorBoard runs.

The command line only parses its arguments into a :class:`Query` (which validates every option),
calls the engine once and writes the result. Exit status: 0 success, 1 a failure to read or write
(the message names the path and the reason), 2 bad usage (a one-line message).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import os
import shutil
import signal
import sys
import textwrap
import threading
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, TextIO

# Only light modules here: the engine (pandas, scipy) is imported while the logdir loads (_opened).
from .query import (
    ALIGNS,
    BANDS,
    BASE_REDUCTIONS,
    CENTERS,
    DUP_STEPS,
    GROUP_BY_MODES,
    SCORES,
    X_MODES,
    OptionError,
    Query,
    one_of,
    spelled,
)
from .read.logdir import LOADERS, LogdirError, loader_for, logdir_source, scheme_of
from .version import __version__
from .write import table_file

if TYPE_CHECKING:
    from .read.source import Source

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
COMPARE_FORMATS = ("csv", "json", "md", "tex")
PROG = "tb-aggregate"
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Query)}
QUERY_OPTIONS = tuple(_DEFAULTS)
FORMATS = table_file.FILE_FORMATS + ("tb",)

EPILOG = """examples:
  tb-aggregate runs/ --list
      show the runs, the group each one falls in and the tags, without computing anything
  tb-aggregate runs/ -o curves.csv
      every tag per group (auto grouping), to CSV: n, mean, mean-std, mean+std (the line and the
      band drawn), then std, min, max, median
  tb-aggregate runs/seed_* -o curves.csv
      the same from run folders, each folder one run
  tb-aggregate runs/ --group-by 'regex:lr=([^/]+)' --tags '^val/' --reductions mean,q05,q95 -o val.json
      per learning rate, validation tags only, mean and 5th/95th percentiles, to JSON
  tb-aggregate runs/ --band ci95 --format tb -o aggregated/
      new TensorBoard runs aggregated/<group>/mean, .../ci95_lo, .../ci95_hi (the line and the
      band's edges; add --reductions for more); view them with
      tensorboard --logdir_spec runs:runs/,aggregated:aggregated/
  tb-aggregate runs/ --band ci95 -o figure.pdf
      one panel per tag, one line and band per group, as in the tab (also .svg, .png)
  tb-aggregate runs/ --compare val/accuracy --baseline lr=0.01 -o table.tex
      each group against lr=0.01 on the runs' final accuracy: Welch, Holm, P(A>B), as LaTeX

OUT by extension: .csv, .csv.gz, .json, .xlsx (pip install 'tb-aggregate[xlsx]'),
.parquet (pip install 'tb-aggregate[parquet]'), .md and .tex (the summary table, or with --compare
the comparison), .pdf, .svg, .png (a figure; pip install 'tb-aggregate[plot]'); or --format tb
with a folder.
exit status: 0 done, 1 could not read or write (path and reason said), 2 bad usage."""


def _option_help() -> dict[str, tuple[str, str]]:
    """Metavar and help of each engine option; allowed values and defaults come from query.py."""
    d = _DEFAULTS
    return {
        "runs": (
            "REGEX",
            "regular expression searched in run names; only matching runs are used "
            "(default: all runs). Example: --runs 'lr=0\\.(01|1)/'",
        ),
        "tags": (
            "REGEX",
            "regular expression searched in tag names (default: all scalar tags). Example: --tags '^val/'",
        ),
        "group_by": (
            "MODE",
            f"how runs form groups: {' | '.join(GROUP_BY_MODES)}. auto: the run name "
            "without its repetition index (lr=0.1/seed_3 -> lr=0.1; PPO_1, PPO_2 -> PPO); parent: "
            "the run's parent folder; none: one group; regex: the pattern's captured text; hparam: "
            f"the logged hparam values (default: {d['group_by']}). Example: --group-by 'regex:lr=([^/]+)'",
        ),
        "center": (
            "STAT",
            f"the line of each group: {' | '.join(CENTERS)} (default: {d['center']}). "
            "Example: --center median",
        ),
        "band": (
            "BAND",
            f"the band around it: {' | '.join(BANDS)}; ci95 is Student's t with n-1 "
            "degrees of freedom, boot95 the 95%% percentile-bootstrap CI of the line "
            f"(default: {d['band']}). Example: --band ci95",
        ),
        "reductions": (
            "LIST",
            "comma-separated statistics in the table, after n, the line and the band's edges (which "
            f"every table has): {', '.join(BASE_REDUCTIONS)} or a percentile qNN (default: "
            f"{','.join(d['reductions'])}; count is always n). With --format tb, one run each. "
            "Example: --reductions mean,std,q05,q95",
        ),
        "align": (
            "MODE",
            f"{' | '.join(ALIGNS)}: exact needs the same steps in every run of a group; "
            "interpolate puts runs on the union of their steps, each run only inside its own "
            "range; auto picks exact when possible "
            f"(default: {d['align']}). Example: --align interpolate",
        ),
        "x": (
            "AXIS",
            f"{' | '.join(X_MODES)}: relative is seconds since each run's first point, wall is "
            "epoch seconds, tag:NAME each run's value of scalar tag NAME at the same step (it must "
            f"increase within a run) (default: {d['x']}). Example: --x relative, --x tag:samples_seen",
        ),
        "smoothing": (
            "W",
            "TensorBoard's debiased exponential moving average, weight in [0, 1), applied "
            f"to each run before reducing (default: {d['smoothing']:g}). Example: --smoothing 0.6",
        ),
        "min_runs": (
            "N",
            "drop points backed by fewer than N finite values "
            f"(default: {d['min_runs']}). Example: --min-runs 3",
        ),
        "dup_steps": (
            "MODE",
            f"a step logged twice in a run (e.g. after a restart): {' | '.join(DUP_STEPS)} "
            f"(default: {d['dup_steps']}). Example: --dup-steps mean",
        ),
        "boot_reps": (
            "N",
            "bootstrap resamples for --band boot95, the boot95_lo/boot95_hi reductions and the "
            f"intervals of --compare (default: {d['boot_reps']:,}). Example: --boot-reps 10000",
        ),
        "seed": (
            "N",
            "seed of the bootstrap's random numbers; the same command always gives the same numbers "
            f"(default: {d['seed']}). Example: --seed 1",
        ),
        "score": (
            "SCORE",
            f"with --compare, what each run contributes: {' | '.join(SCORES)}; best is the lowest "
            "value for loss-like tags, tail the mean of the run's last 10%% of points, auc the mean "
            f"over the run's steps (default: {d['score']}). Example: --score best",
        ),
        "baseline": (
            "GROUP",
            "with --compare, compare every group with this one instead of every pair. "
            "Example: --baseline lr=0.01",
        ),
    }


class UsageError(Exception):
    """Bad usage: exit 2 with this one-line message."""


class Failure(Exception):
    """A failure to read or write: exit 1 with this message (path and reason)."""


class _Interrupted(BaseException):
    """A termination signal, raised in the main thread so temporary files are cleaned up."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def _split_lines(self, text, width):  # keep --dup-steps and q05 whole when wrapping
        return textwrap.wrap(text, width, break_on_hyphens=False)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line instead of argparse's usage block
        raise UsageError(f"{message} (see {PROG} --help)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; engine options are left unset unless given, so defaults live in Query."""
    parser = _Parser(
        prog=PROG,
        usage=f"{PROG} LOGDIR|RUN_FOLDER... [options] -o OUT   |   {PROG} LOGDIR|RUN_FOLDER... --list",
        description="Group the runs of a TensorBoard logdir (seeds, ensemble members, sweep arms) and\n"
        "reduce each group across runs, step by step, reading every point. Writes a table\n"
        "(tag, group, step, wall_time, n, the line, the band's edges, other statistics) or new\n"
        "TensorBoard runs (the line and the band's edges).",
        epilog=EPILOG,
        formatter_class=_Formatter,
    )
    parser.add_argument(
        "logdir",
        metavar="LOGDIR",
        nargs="+",
        help="folder of runs, or s3://BUCKET/PREFIX, gs://BUCKET/PREFIX (read only, never written); or "
        "several run folders, each one run named after its folder (by its path from their common "
        "parent when two have the same name), grouped as any runs. Example: runs/seed_*",
    )
    out = parser.add_argument_group("output")
    out.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="file (format by extension) or, with --format tb, a folder; must not be inside LOGDIR. "
        "Example: -o curves.csv",
    )
    out.add_argument(
        "--format",
        metavar="FORMAT",
        help=f"write this format whatever OUT's extension: {' | '.join(FORMATS)}. tb: per group, one "
        "TensorBoard run for the line and one for each band edge, e.g. OUT/<group>/mean, "
        "OUT/<group>/mean-std, OUT/<group>/mean+std, and one per statistic of --reductions only when "
        "--reductions is given. Example: --format tb",
    )
    out.add_argument(
        "--force",
        action="store_true",
        help="replace an existing OUT (a folder only if it is empty or an earlier --format tb output)",
    )
    out.add_argument(
        "--compare",
        metavar="TAG",
        help="instead of curves, test the groups against each other on TAG, one score per run (see "
        "--score, --baseline): OUT.csv gets the pairs (OUT.groups.csv the groups), OUT.json, OUT.md "
        "and OUT.tex both. "
        "Example: --compare val/accuracy -o compare.csv",
    )
    out.add_argument(
        "--list",
        action="store_true",
        help="print the runs, their groups and the tags, without computing or writing anything. "
        "Example: --list --group-by hparam:lr",
    )
    fig = parser.add_argument_group("figures (-o OUT.pdf, .svg or .png; pip install 'tb-aggregate[plot]')")
    fig.add_argument("--cols", type=_positive_int, metavar="N", help="panels per row (default: up to 3)")
    fig.add_argument("--log-y", action="store_true", help="logarithmic y axes")
    fig.add_argument(
        "--size",
        type=_size,
        metavar="W,H",
        help="figure size in inches (default: 4.2 x 3 per panel). Example: --size 8,5",
    )
    fig.add_argument(
        "--dpi", type=_positive_int, default=150, metavar="N", help="resolution of a PNG (default: 150)"
    )
    out.add_argument("-q", "--quiet", action="store_true", help="no progress display, notes or summary line")
    out.add_argument(
        "--loader",
        metavar="LOADER",
        default="auto",
        help=f"how to read the logdir: {' | '.join(LOADERS)}. rust: TensorBoard's data server; python: "
        "its multiplexer; auto: rust when installed, python for s3://, when --dup-steps first or "
        "mean needs it or when the data server finds no scalars (it leaves out float64 tensors) "
        "(default: auto). Example: --loader python",
    )
    out.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    engine = parser.add_argument_group("aggregation (the same options as the Aggregate tab)")
    for name, (metavar, text) in _option_help().items():
        engine.add_argument(
            "--" + name.replace("_", "-"), dest=name, metavar=metavar, default=argparse.SUPPRESS, help=text
        )
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1")
    return value


def _size(text: str) -> tuple[float, float]:
    parts = text.replace("x", ",").split(",")
    try:
        width, height = (float(p) for p in parts)
    except ValueError:
        width = height = 0.0
    if not (0 < width <= 100 and 0 < height <= 100):
        raise argparse.ArgumentTypeError(f"{text!r} is not W,H in inches (e.g. 8,5)")
    return width, height


def query_from_args(args: argparse.Namespace) -> Query:
    """The Query of the given engine options (validated by Query; an error names the flag)."""
    given = {name: getattr(args, name) for name in QUERY_OPTIONS if hasattr(args, name)}
    return Query.from_mapping(given)


def _flag(name: str) -> str:
    """An option as the command line names it: ``group_by`` is ``--group-by``, ``logdir`` LOGDIR."""
    return "LOGDIR" if name == "logdir" else "--" + name.replace("_", "-")


def _flag_message(exc: OptionError) -> str:
    """An OptionError's message, each option spelled as its flag: ``--group-by: ...``."""
    return exc.spelled(_flag)


def entry_point() -> None:
    """The ``tb-aggregate`` command: :func:`main`, then exit at once.

    Once the output is written and closed, nothing is left to do: tearing down the interpreter
    (numpy, pandas, gRPC) would only add a fifth of a second.
    """
    # Defaults for numpy in this short-lived command, set before it is imported (the environment's own
    # settings win). Its only matrix products (the bootstrap's) are small, and OpenBLAS starts a thread
    # per core at import that spins for about 0.1 s, taking a core from TensorBoard's data server just
    # as it loads (and, under load, one thread was up to 3x faster on the bootstrap than several).
    # And it touches most of its memory once: asking the kernel for huge pages (numpy's default) made
    # each fresh 8 MB array take 17 ms instead of 4 ms (compaction stalls), 0.05-0.07 s of the command.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status."""
    previous, received = _trap_termination()

    def stop_if_terminated() -> None:  # before an output is put in place, whatever swallowed the signal
        if received:
            raise _Interrupted(received[0])

    try:
        with table_file.guarded(stop_if_terminated):
            return _main(argv)
    except UsageError as exc:
        _say(f"{PROG}: error: {exc}")
        return EXIT_USAGE
    except OptionError as exc:  # from the Query, or a regex too slow on these names while computing
        _say(f"{PROG}: error: {_flag_message(exc)}")
        return EXIT_USAGE
    except (Failure, LogdirError) as exc:
        _say(f"{PROG}: error: {exc}")
        return EXIT_FAILURE
    except KeyboardInterrupt:
        _say(f"{PROG}: interrupted; nothing written")
        return 128 + signal.SIGINT
    except _Interrupted as exc:
        _say(f"{PROG}: terminated; nothing written")
        return 128 + exc.signum
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _trap_termination() -> tuple[dict, list[int]]:
    """SIGTERM/SIGHUP unwind like Ctrl-C, so temporary files and the data server are cleaned up.
    Returns the handlers replaced and the list of the signals received (kept, in case what the
    handler raised is swallowed on its way)."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        return {}, received
    previous = {}

    def raise_interrupted(signum, frame):
        received.append(signum)
        raise _Interrupted(signum)

    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None:
            previous[signum] = signal.signal(signum, raise_interrupted)
    return previous, received


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    query = query_from_args(args)
    args.loader = one_of("loader", args.loader, LOADERS)
    # Before any work: the loader may not give what is asked.
    loader_for(args.loader, query.dup_steps, args.logdir[0] if len(args.logdir) == 1 else None)
    if args.list:
        if args.output:
            raise UsageError("--list writes nothing; leave out -o")
        return _list(args, query)
    if not args.output:
        raise UsageError(f"-o OUT is required (or --list); see {PROG} --help")
    fmt = one_of("format", args.format, FORMATS) if args.format else table_file.format_of(args.output)
    if args.compare is not None:
        return _compare(args, query, fmt)
    if fmt is None:
        raise UsageError(
            f"cannot tell the format of {args.output!r} from its extension: use .csv, .csv.gz, "
            ".json, .xlsx or .parquet, or --format tb for a folder of TensorBoard runs"
        )
    if fmt == "tb":
        from .write import tb_runs  # numpy: only for this format

        tb_runs.check_query(query)
    for folder in args.logdir:
        _check_logdir(folder)
        _check_apart(folder, args.output)
    try:
        table_file.check_available(fmt)
        if fmt == "tb":
            table_file.check_target(
                args.output, force=args.force, folder=True, replaceable=tb_runs.is_previous_output
            )
        else:
            table_file.check_target(args.output, force=args.force)
    except (table_file.MissingLibrary, table_file.OutputExists) as exc:
        raise UsageError(str(exc)) from None
    except FileNotFoundError as exc:
        raise Failure(f"cannot write {args.output}: {exc}") from None

    progress = Progress(sys.stderr, enabled=not args.quiet and _is_tty(sys.stderr))
    try:
        result, points = _compute(args, query, progress)
        # CSV straight from the result's columns: pandas is then never imported.
        pandas_free = fmt in ("csv", "csv.gz") or fmt in table_file.FIGURE_FORMATS
        table = result.table_columns() if pandas_free else result.table()
        if not len(table["n"]):
            raise UsageError(f"nothing to write: {result.empty_reason(_flag)}")
        written = _write(args, fmt, result, table, progress)
    finally:
        progress.close()
    if not args.quiet:
        for note in result.notes(spell=_flag):
            _say(f"{PROG}: note: {note}")
        runs = {r for b in result.blocks for r in b.runs}
        counts = [
            _n(len(runs), "run"),
            _n(len(set(table["group"])), "group"),
            _n(len(set(table["tag"])), "tag"),
        ]
        print(
            _shown(f"{', '.join(counts)}, {_n(points, 'point')} read -> {args.output} ({written})"),
            flush=True,
        )
    return EXIT_OK


@contextlib.contextmanager
def _opened(args, query: Query) -> Iterator[tuple[Source, str]]:
    """The logdir opened as ``compute(path, ...)`` opens it (same loader choice); yields (source, loader)."""
    with contextlib.ExitStack() as stack:
        try:
            opened = logdir_source(
                args.logdir[0] if len(args.logdir) == 1 else args.logdir,
                dup_steps=query.dup_steps,
                loader=args.loader,
                meanwhile=functools.partial(_import_engine, query),
            )
            source, loader = stack.enter_context(opened)
        except LogdirError:
            raise  # its message names the logdir and the reason
        except (OSError, RuntimeError, TimeoutError, ImportError) as exc:
            raise Failure(f"cannot read {_logdirs(args)}: {_reason(exc)}") from None
        yield source, loader


def _import_engine(query: Query) -> None:
    """Import the engine and what ``query`` needs of scipy: done while TensorBoard's data server loads
    the logdir, they cost no time."""
    from .compute import engine

    engine.warm_up(query)


def _compare(args, query: Query, fmt: str | None) -> int:
    """``--compare TAG``: the groups tested against each other, written as a table (or two)."""
    if fmt not in COMPARE_FORMATS:
        raise UsageError(
            f"--compare writes {', '.join('.' + f for f in COMPARE_FORMATS)}, not {args.output!r}"
        )
    for folder in args.logdir:
        _check_logdir(folder)
        _check_apart(folder, args.output)
    outputs = [args.output] + ([_groups_path(args.output)] if fmt == "csv" else [])
    try:
        for path in outputs:
            table_file.check_target(path, force=args.force)
    except table_file.OutputExists as exc:
        raise UsageError(str(exc)) from None
    except FileNotFoundError as exc:
        raise Failure(f"cannot write {args.output}: {exc}") from None

    def compare(source):
        from .compute.comparison import compare as compare_groups

        return compare_groups(query, source, args.compare)

    progress = Progress(sys.stderr, enabled=not args.quiet and _is_tty(sys.stderr))
    try:
        found, _ = _compute(args, query, progress, work=compare)
    finally:
        progress.close()
    from .write import table_text

    try:
        if fmt == "csv":
            table_file.write_bytes(table_text.to_csv(found.pairs), outputs[0], force=args.force)
            table_file.write_bytes(table_text.to_csv(found.groups), outputs[1], force=args.force)
        elif fmt in table_file.TEXT_FORMATS:
            from .write import paper

            table_file.write_bytes(
                paper.comparison_text(found, fmt).encode("utf-8"), args.output, force=args.force
            )
        else:
            meta = {
                "query": dataclasses.asdict(query),
                "tag": found.tag,
                "direction": found.direction,
                "caption": found.caption(),
                "sentences": found.sentences(),
                "notes": found.notes,
            }
            body = table_text.tables_json({"groups": found.groups, "pairs": found.pairs}, meta)
            table_file.write_bytes(body, args.output, force=args.force)
    except table_file.OutputExists as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise Failure(f"cannot write {args.output}: {exc.strerror or exc}") from None
    if not args.quiet:
        for note in found.notes:
            _say(f"{PROG}: note: {note}")
        print(_shown(found.caption()))
        for line in found.sentences():
            print(_shown(line))
        print(
            _shown(
                f"{_n(len(found.groups), 'group')}, {_n(len(found.pairs), 'pair')} -> {', '.join(outputs)}"
            )
        )
    return EXIT_OK


def _groups_path(path: str) -> str:
    """Where ``--compare`` writes the groups table beside a CSV of pairs: ``a.csv`` -> ``a.groups.csv``."""
    stem = path[: -len(".csv")] if path.lower().endswith(".csv") else path
    return stem + ".groups.csv"


def _compute(args, query: Query, progress: Progress, work=None):
    """Load, then compute (``work(source)``, the curves by default): two stages for the progress
    display; returns (what was computed, points read)."""
    progress.stage(f"loading {_logdirs(args)}")
    with _opened(args, query) as (source, loader):
        listing = source.list_scalars()
        if not listing:
            skipped = [f"; {run or '.'}: {why}" for run, why in sorted(source.problems().items())][:1]
            said = [f"; {spelled(note, _flag)}" for note in source.notes]
            raise Failure(
                f"cannot read {_logdirs(args)}: no TensorBoard runs with scalars in it"
                + "".join(skipped + said)
            )
        series = sum(len(tags) for tags in listing.values())
        progress.stage(f"reducing: {_n(len(listing), 'run')}, {_n(series, 'series')} ({loader} loader)")
        if work is None:
            from .compute.engine import run

            return run(query, source), source.points_read
        return work(source), source.points_read


def _write(args, fmt: str, result, table, progress: Progress) -> str:
    """Write the output; returns what was written, for the summary line."""
    out = args.output
    try:
        if fmt == "tb":
            from .write import tb_runs

            progress.stage(f"writing {out}")
            with table_file.atomic_dir(out, force=args.force, replaceable=tb_runs.is_previous_output) as temp:
                # Where the runs came from, for the manifest: a URL as it is, folders as absolute paths.
                folders = [f if scheme_of(f) else os.path.abspath(f) for f in args.logdir]
                manifest = tb_runs.write_runs(
                    result,
                    temp,
                    logdir=folders[0] if len(folders) == 1 else folders,
                    reductions=hasattr(args, "reductions"),  # line and band only, unless asked
                    on_run=lambda done, total: progress.stage(f"writing {out}: {done}/{total} runs"),
                )
            return _n(len(manifest["runs"]), "TensorBoard run")
        if fmt in table_file.FIGURE_FORMATS:
            from .write import figure

            progress.stage(f"drawing {out}")
            fig = figure.draw(result, cols=args.cols, log_y=args.log_y, size=args.size)
            with table_file.atomic_file(out, force=args.force) as handle:
                figure.save(fig, handle, fmt=fmt, dpi=args.dpi)
            return _n(len(result.tags), "panel")
        if fmt in table_file.TEXT_FORMATS:
            from .write import paper

            table_file.write_bytes(paper.summary_text(result, fmt).encode("utf-8"), out, force=args.force)
            return "the summary table"
        rows = len(table["n"])
        progress.stage(f"writing {rows:,} rows to {out}")
        table_file.write_table(table, out, fmt, meta=result.attrs(), force=args.force)
        return _n(rows, "row")
    except table_file.OutputExists as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise Failure(f"cannot write {out}: {exc.strerror or exc}") from None


def _list(args, query: Query) -> int:
    for folder in args.logdir:
        _check_logdir(folder)
    with _opened(args, query) as (source, _):
        from .compute.engine import describe

        info = describe(query, source, _flag)
    rows = [("group", "run", "tags")]
    for run in info["runs"]:
        group = run["group"] if run["excluded"] is None else "-"
        detail = str(len(run["tags"])) if run["excluded"] is None else f"left out: {run['excluded']}"
        rows.append((group, run["run"], detail))
    _print_columns(rows)
    tag_runs = {t: sum(t in r["tags"] for r in info["runs"] if r["excluded"] is None) for t in info["tags"]}
    print()
    _print_columns([("tag", "runs")] + [(t, str(n)) for t, n in tag_runs.items()])
    print()
    for run, why in sorted(info.get("skipped", {}).items()):
        print(_shown(f"skipped in {run or '.'}: {why}"))
    if info["hparams"]:
        print(_shown("hparams (for --group-by hparam:NAME): " + ", ".join(info["hparams"])))
    print(
        f"{_n(len(info['runs']), 'run')} of {info['total_runs']} selected, "
        f"{_n(len(info['groups']), 'group')}, {_n(len(info['tags']), 'tag')}"
    )
    if not args.quiet:
        for note in info["notes"]:
            _say(f"{PROG}: note: {note}")
    return EXIT_OK


def _print_columns(rows: list[tuple[str, ...]]) -> None:
    rows = [tuple(_shown(c) for c in row) for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join([c.ljust(w) for c, w in zip(row, widths)] + [row[-1]]))


def _logdirs(args) -> str:
    """The folders read, for a message: LOGDIR, or the run folders."""
    return " ".join(args.logdir)


def _check_logdir(logdir: str) -> None:
    if scheme_of(logdir) is not None:  # object storage: checked as it is opened
        return
    if not os.path.isdir(logdir):
        reason = "no such folder" if not os.path.exists(logdir) else "not a folder"
        raise Failure(f"cannot read {logdir}: {reason}")


def _check_apart(logdir: str, out: str) -> None:
    """OUT must be neither inside LOGDIR (never write into the runs) nor contain it."""
    if scheme_of(logdir) is not None:  # in object storage: a local OUT is apart from it
        return
    src, dst = os.path.realpath(logdir), os.path.realpath(out)
    if dst == src or dst.startswith(src.rstrip(os.sep) + os.sep):
        raise UsageError(f"{out} is inside the logdir {logdir}; write the output elsewhere")
    if src.startswith(dst.rstrip(os.sep) + os.sep):
        raise UsageError(f"{out} contains the logdir {logdir}; write the output elsewhere")


class Progress:
    """One status line on stderr, redrawn in place: the stage, its counts and the seconds elapsed."""

    _SPIN = "|/-\\"

    def __init__(self, stream: TextIO, *, enabled: bool):
        self._stream, self.enabled = stream, enabled
        self._text, self._since, self._tick = "", time.monotonic(), 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        if enabled:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    def stage(self, text: str) -> None:
        """Show ``text`` (e.g. ``reducing: 15 runs, 60 series``) from now on."""
        if not self.enabled:
            return
        with self._lock:
            if _shown(text).split(":")[0] != self._text.split(":")[0]:
                self._since = time.monotonic()
            self._text = _shown(text)
            self._draw()

    def close(self) -> None:
        """Stop redrawing and clear the line."""
        if not self.enabled:
            return
        self._stop.set()
        self._thread.join()
        with self._lock:
            self._stream.write("\r\x1b[K")
            self._stream.flush()
            self.enabled = False

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            with self._lock:
                self._tick += 1
                self._draw()

    def _draw(self) -> None:
        if not self._text:
            return
        seconds = time.monotonic() - self._since
        line = f"{self._SPIN[self._tick % 4]} {self._text}  {seconds:.0f}s"
        width = shutil.get_terminal_size((80, 24)).columns - 1
        self._stream.write("\r\x1b[K" + line[:width])
        self._stream.flush()


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _shown(text: str) -> str:
    """Text with control characters escaped: names from logs must not drive the terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _n(count: int, word: str) -> str:
    plural = word if count == 1 or word.endswith("s") else word + "s"
    return f"{count:,} {plural}"


def _say(message: str) -> None:
    print(_shown(message), file=sys.stderr, flush=True)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror + (f": {exc.filename}" if exc.filename else "")
    return str(exc) or type(exc).__name__


if __name__ == "__main__":
    entry_point()
