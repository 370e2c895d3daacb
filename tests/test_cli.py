"""The installed ``tb-aggregate`` command, run as a subprocess on event files written by real writers.

Expected numbers come from numpy/scipy over raw values read with tests/rawread.py; tables are also
compared with the Python API's DataFrame for the same options.
"""

from __future__ import annotations

import gzip
import json
import os
import pty
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
from rawread import read_logdir
from scipy import stats as sps
from writers import noisy_curve, write_run

import tb_aggregate_plugin as tba
from tb_aggregate_plugin import cli as cli_module

STEPS = np.arange(0, 100, 2)  # 50 points per run
BASE_WALL = 1_700_000_000.0


def _command() -> list[str]:
    """The console script installed beside this Python (the real entry point), else the one on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), "tb-aggregate")
    if os.path.exists(beside):
        return [beside]
    found = shutil.which("tb-aggregate")
    if found is None:
        pytest.fail("tb-aggregate is not installed (pip install -e .)")
    return [found]


def cli(*args, cwd=None, check=None, **kwargs) -> subprocess.CompletedProcess:
    """Run ``tb-aggregate args...``; ``check`` is the expected exit status."""
    proc = subprocess.run(
        _command() + [str(a) for a in args], capture_output=True, text=True, cwd=cwd, timeout=300, **kwargs
    )
    if check is not None:
        assert proc.returncode == check, (proc.returncode, proc.stdout, proc.stderr)
    return proc


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> str:
    """Two configs x 3 seeds (+ a config with one seed), tags loss and acc, known wall times.

    Run k of a config logs step s at ``BASE_WALL + 100 * config + 7 * k + 0.5 * s``, so the median
    wall time at each step is the middle seed's. One run is written with tensorboardX.
    """
    logdir = str(tmp_path_factory.mktemp("sweep") / "logs")
    for c, lr in enumerate(("0.1", "0.01")):
        for k in range(3):
            walls = BASE_WALL + 100 * c + 7 * k + 0.5 * STEPS
            write_run(
                logdir,
                f"lr={lr}/seed_{k}",
                {
                    "loss": (STEPS, noisy_curve(len(STEPS), 10 * c + k)),
                    "acc": (STEPS, 1 - noisy_curve(50, k)),
                },
                wall_times={"loss": walls, "acc": walls},
                writer="tbx" if (c, k) == (1, 2) else "tb",
            )
    write_run(logdir, "lr=1.0/seed_0", {"loss": (STEPS, noisy_curve(50, 99))})
    return logdir


def _raw_by_group(logdir: str, tag: str) -> dict[str, dict[str, np.ndarray]]:
    """``{group: {"value": runs x steps, "wall": runs x steps, "step": steps}}`` from the raw records."""
    raw = read_logdir(logdir)
    out: dict[str, dict[str, list]] = {}
    for run in sorted(raw):
        if tag not in raw[run]:
            continue
        points = raw[run][tag]
        entry = out.setdefault(run.split("/")[0], {"value": [], "wall": [], "step": None})
        entry["value"].append([v for _, _, v in points])
        entry["wall"].append([w for _, w, _ in points])
        entry["step"] = np.array([s for s, _, _ in points])
    return {g: {k: np.asarray(v) for k, v in e.items()} for g, e in out.items()}


def _same_table(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    got, expected = got.copy(), expected.copy()
    for frame in (got, expected):
        for column in ("tag", "group"):
            frame[column] = frame[column].astype(object)
    pd.testing.assert_frame_equal(got, expected)


# -- tables --------------------------------------------------------------------------------------


def test_csv_equals_engine_and_numpy(sweep, tmp_path):
    out = tmp_path / "curves.csv"
    proc = cli(
        sweep, "--group-by", "parent", "--reductions", "mean,std,q25,ci95_lo,count", "-o", out, check=0
    )
    got = pd.read_csv(out)
    _same_table(got, tba.aggregate(sweep, group_by="parent", reductions="mean,std,q25,ci95_lo,count"))

    for tag in ("loss", "acc"):
        for group, raw in _raw_by_group(sweep, tag).items():
            rows = got[(got["tag"] == tag) & (got["group"] == group)]
            values = raw["value"]
            n = len(values)
            np.testing.assert_array_equal(rows["step"], raw["step"])
            np.testing.assert_array_equal(rows["n"], np.full(len(STEPS), n))
            np.testing.assert_allclose(rows["mean"], values.mean(axis=0), rtol=1e-12)
            np.testing.assert_allclose(rows["q25"], np.quantile(values, 0.25, axis=0), rtol=1e-12)
            np.testing.assert_allclose(rows["wall_time"], np.median(raw["wall"], axis=0), rtol=0, atol=1e-6)
            if n > 1:
                std = values.std(axis=0, ddof=1)
                half = sps.t.ppf(0.975, n - 1) * std / np.sqrt(n)
                np.testing.assert_allclose(rows["std"], std, rtol=1e-10)
                np.testing.assert_allclose(rows["ci95_lo"], values.mean(axis=0) - half, rtol=1e-10)
            else:  # one run: no spread, shown as empty cells, not a crash
                assert rows["std"].isna().all()

    # One summary line: runs, groups, tags, points, output path.
    lines = proc.stdout.strip().splitlines()
    points = sum(len(p) for run in read_logdir(sweep).values() for p in run.values())
    assert len(lines) == 1
    assert lines[0].startswith("7 runs, 3 groups, 2 tags, ")
    assert f"{points:,} points read" in lines[0] and str(out) in lines[0]


def test_real_logs_match_engine_and_numpy(real_logs, tmp_path):
    strict = real_logs / "strict"
    cli(strict, "-o", tmp_path / "strict.csv", check=0)
    got = pd.read_csv(tmp_path / "strict.csv")
    _same_table(got, tba.aggregate(str(strict)))
    raw = read_logdir(str(strict))
    values = np.array([[v for _, _, v in raw[run]["strict/foo"]] for run in sorted(raw)])
    np.testing.assert_allclose(got["mean"], values.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(got["max"], values.max(axis=0), rtol=0)

    # Runs of different lengths, interpolated onto the union grid.
    lax = real_logs / "lax"
    cli(
        lax, "--tags", "foo", "--align", "interpolate", "--min-runs", "2", "-o", tmp_path / "lax.csv", check=0
    )
    expected = tba.aggregate(str(lax), tags="foo", align="interpolate", min_runs=2)
    _same_table(pd.read_csv(tmp_path / "lax.csv"), expected)

    # Repeated steps averaged (needs the Python loader; auto picks it).
    dup = real_logs / "duplicate_steps"
    cli(dup, "--dup-steps", "mean", "--reductions", "mean", "-o", tmp_path / "dup.csv", check=0)
    got = pd.read_csv(tmp_path / "dup.csv")
    _same_table(got, tba.aggregate(str(dup), dup_steps="mean", reductions="mean"))
    raw = read_logdir(str(dup))
    per_run = []
    for run in sorted(raw):
        points = raw[run]["dup_steps/foo"]
        steps = sorted({s for s, _, _ in points})
        per_run.append([np.mean([v for s2, _, v in points if s2 == s]) for s in steps])
    foo = got[got["tag"] == "dup_steps/foo"]
    np.testing.assert_allclose(foo["mean"], np.mean(per_run, axis=0), rtol=1e-12)


@pytest.mark.parametrize("ext", [".csv.gz", ".json", ".xlsx", ".parquet"])
def test_other_formats_round_trip(sweep, tmp_path, ext):
    out = tmp_path / f"curves{ext}"
    cli(sweep, "--reductions", "mean,std,q05", "-o", out, check=0)
    expected = tba.aggregate(sweep, reductions="mean,std,q05")
    if ext == ".csv.gz":
        with gzip.open(out, "rb") as f:
            got = pd.read_csv(f)
    elif ext == ".json":
        payload = json.loads(out.read_text())
        assert payload["meta"]["query"]["reductions"] == ["mean", "std", "q05"]
        got = pd.DataFrame(payload["rows"]).astype({c: float for c in ("wall_time", "mean", "std", "q05")})
    elif ext == ".xlsx":
        got = pd.read_excel(out, sheet_name="aggregate")
    else:
        got = pd.read_parquet(out)
    _same_table(got, expected)


# -- new TensorBoard runs ----------------------------------------------------------------------


def _read_run(path: str) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``{tag: (steps, wall_times, values)}`` of one run, through TensorBoard's EventAccumulator."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.util import tensor_util

    acc = EventAccumulator(path, size_guidance={"tensors": 0, "scalars": 0})
    acc.Reload()
    out = {}
    for tag in acc.Tags()["tensors"]:
        events = acc.Tensors(tag)
        out[tag] = (
            np.array([e.step for e in events]),
            np.array([e.wall_time for e in events]),
            np.array([float(tensor_util.make_ndarray(e.tensor_proto)) for e in events]),
        )
    return out


def test_tb_format_runs_read_back(sweep, tmp_path):
    out = tmp_path / "aggregated"
    proc = cli(
        sweep, "--reductions", "mean,std,ci95_lo", "--band", "std", "--format", "tb", "-o", out, check=0
    )
    assert "TensorBoard runs" in proc.stdout

    stats = ("mean", "std", "ci95_lo", "mean-std", "mean+std")
    expected_runs = {f"lr={lr}/{s}" for lr in ("0.1", "0.01") for s in stats}
    # A group of one run has no std, so no std-based run for it (never an empty or NaN curve).
    expected_runs.add("lr=1.0/mean")
    written = {os.path.relpath(r, out) for r, _, names in os.walk(out) if any("tfevents" in n for n in names)}
    assert written == expected_runs
    manifest = json.loads((out / ".tb-aggregate.json").read_text())
    assert manifest["runs"]["lr=0.1/mean+std"] == {"group": "lr=0.1", "statistic": "mean+std"}

    for tag in ("loss", "acc"):
        for group, raw in _raw_by_group(sweep, tag).items():
            values, n = raw["value"], len(raw["value"])
            mean = values.mean(axis=0)
            expected = {"mean": mean}
            if n > 1:
                std = values.std(axis=0, ddof=1)
                expected |= {
                    "std": std,
                    "mean-std": mean - std,
                    "mean+std": mean + std,
                    "ci95_lo": mean - sps.t.ppf(0.975, n - 1) * std / np.sqrt(n),
                }
            for stat, want in expected.items():
                steps, walls, got = _read_run(str(out / group / stat))[tag]
                np.testing.assert_array_equal(steps, raw["step"])
                # Event files hold float32 values.
                np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-6, atol=1e-7)
                # The wall time is the median of the source runs' wall times at that step.
                np.testing.assert_allclose(walls, np.median(raw["wall"], axis=0), rtol=0, atol=1e-6)


def test_tb_format_names_from_logs_become_safe_folders(tmp_path):
    logdir = tmp_path / "logs"
    for k in range(2):
        write_run(str(logdir), f"..evil:name|x\x1b[2J/seed_{k}", {"loss": ([0, 1], [k, k + 1.0])})
    out = tmp_path / "agg"
    cli(logdir, "--reductions", "mean", "--band", "none", "--format", "tb", "-o", out, check=0)
    assert sorted(os.listdir(out)) == [".tb-aggregate.json", "_..evil_name_x_[2J"]
    manifest = json.loads((out / ".tb-aggregate.json").read_text())
    assert manifest["runs"] == {
        "_..evil_name_x_[2J/mean": {"group": "..evil:name|x\x1b[2J", "statistic": "mean"}
    }
    _, _, values = _read_run(str(out / "_..evil_name_x_[2J" / "mean"))["loss"]
    np.testing.assert_allclose(values, [0.5, 1.5])

    listing = cli(logdir, "--list", check=0).stdout
    assert "\x1b" not in listing and "\\x1b[2J" in listing


# -- listing -------------------------------------------------------------------------------------


def test_list_prints_runs_groups_and_tags_without_writing(sweep, tmp_path):
    proc = cli(sweep, "--list", cwd=tmp_path, check=0)
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["group", "run", "tags"]
    runs = {tuple(line.split()) for line in lines[1:8]}
    expected = {(f"lr={lr}", f"lr={lr}/seed_{k}", "2") for lr in ("0.1", "0.01") for k in range(3)}
    assert runs == expected | {("lr=1.0", "lr=1.0/seed_0", "1")}
    assert ["acc", "6"] in [line.split() for line in lines] and ["loss", "7"] in [
        line.split() for line in lines
    ]
    assert lines[-1] == "7 runs of 7 selected, 3 groups, 2 tags"
    assert os.listdir(tmp_path) == []

    # Checking a grouping first: runs the regex cannot place are shown as left out.
    proc = cli(sweep, "--list", "--group-by", "regex:seed_([01])", "--tags", "acc", check=0)
    lines = {line.split()[1]: line.split(None, 2) for line in proc.stdout.splitlines()[1:8]}
    assert lines["lr=0.1/seed_1"] == ["1", "lr=0.1/seed_1", "1"]
    assert lines["lr=0.1/seed_2"] == ["-", "lr=0.1/seed_2", "left out: does not match the group_by regex"]
    assert proc.stdout.splitlines()[-1] == "7 runs of 7 selected, 2 groups, 1 tag"


def test_help_explains_every_option_with_an_example():
    text = cli("--help", check=0).stdout
    for flag in (
        "--runs",
        "--tags",
        "--group-by",
        "--center",
        "--band",
        "--reductions",
        "--align",
        "--x",
        "--smoothing",
        "--min-runs",
        "--dup-steps",
        "--format",
        "--list",
        "--force",
        "--quiet",
        "--loader",
        "-o OUT",
    ):
        assert flag in text
    assert text.count("Example:") >= 13
    assert "exit status: 0" in text


# -- bad usage and failures ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, says",
    [
        (["--bogus", "-o", "OUT.csv"], "unrecognized arguments: --bogus"),
        ([], "-o OUT is required"),
        (["--list", "-o", "OUT.csv"], "--list writes nothing"),
        (["-o", "OUT.txt"], "cannot tell the format"),
        (["--format", "xml", "-o", "OUT.csv"], "--format: 'xml' is not one of csv, csv.gz, json"),
        (["--band", "wide", "-o", "OUT.csv"], "--band: 'wide' is not one of std, sem, ci95"),
        (["--center", "mode", "-o", "OUT.csv"], "--center: 'mode' is not one of mean, median"),
        (["--runs", "(", "-o", "OUT.csv"], "--runs: invalid regular expression"),
        (["--group-by", "folder", "-o", "OUT.csv"], "--group-by: 'folder' is not one of"),
        (["--reductions", "mean,mode", "-o", "OUT.csv"], "--reductions: 'mode' is not one of"),
        (["--smoothing", "1", "-o", "OUT.csv"], "--smoothing: '1' is not a number in [0, 1)"),
        (["--min-runs", "0", "-o", "OUT.csv"], "--min-runs: '0' is not an integer >= 1"),
        (["--dup-steps", "all", "-o", "OUT.csv"], "--dup-steps: 'all' is not one of"),
        (["--align", "nearest", "-o", "OUT.csv"], "--align: 'nearest' is not one of"),
        (["--x", "epoch", "-o", "OUT.csv"], "--x: 'epoch' is not one of"),
        (["--loader", "rust", "--dup-steps", "mean", "-o", "OUT.csv"], "needs --loader python or auto"),
        (["--x", "wall", "--format", "tb", "-o", "OUT"], "--format tb needs --x step"),
        (["-o", "LOGDIR/lr=0.1/OUT.csv"], "is inside the logdir"),
        (["--format", "tb", "--force", "-o", "."], "contains the logdir"),
        (["--runs", "nothing-matches", "-o", "OUT.csv"], "--runs: 'nothing-matches' matches no run; the"),
    ],
)
def test_bad_usage_exits_2_with_one_line(sweep, tmp_path, args, says):
    logdir = tmp_path / "logs"
    shutil.copytree(sweep, logdir)
    args = [str(a).replace("LOGDIR", str(logdir)) for a in args]
    before = sorted(os.walk(tmp_path))
    proc = cli(logdir, *args, cwd=tmp_path, check=2)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tb-aggregate: error: "), proc.stderr
    assert says in lines[0]
    assert proc.stdout == ""
    assert sorted(os.walk(tmp_path)) == before  # nothing written, the logdir untouched


def test_read_and_write_failures_exit_1_with_path_and_reason(sweep, tmp_path):
    proc = cli(tmp_path / "missing", "-o", tmp_path / "a.csv", check=1)
    assert proc.stderr == f"tb-aggregate: error: cannot read {tmp_path / 'missing'}: no such folder\n"

    broken = tmp_path / "broken" / "run"
    broken.mkdir(parents=True)
    (broken / "events.out.tfevents.1.host").write_bytes(b"not event data")
    proc = cli(tmp_path / "broken", "-o", tmp_path / "a.csv", check=1)
    assert proc.stderr.startswith(
        f"tb-aggregate: error: cannot read {tmp_path / 'broken'}: no TensorBoard runs"
    )
    assert "run: events.out.tfevents.1.host" in proc.stderr and len(proc.stderr.splitlines()) == 1

    blocker = tmp_path / "file"
    blocker.write_text("")
    proc = cli(sweep, "-o", blocker / "a.csv", check=1)
    assert proc.stderr.startswith(f"tb-aggregate: error: cannot write {blocker / 'a.csv'}: ")
    assert "does not exist" in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert not os.path.exists(tmp_path / "a.csv")


def test_missing_optional_library_says_how_to_install(sweep, tmp_path):
    for module, ext in (("openpyxl", "xlsx"), ("pyarrow", "parquet")):
        code = (
            f"import sys; sys.modules[{module!r}] = None\n"  # as if not installed
            "from tb_aggregate_plugin.cli import main\n"
            "sys.exit(main(sys.argv[1:]))"
        )
        out = tmp_path / f"a.{ext}"
        proc = subprocess.run(
            [sys.executable, "-c", code, sweep, "-o", str(out)], capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr == (
            f"tb-aggregate: error: writing .{ext} needs {module}, which is not installed: "
            f"pip install 'tb-aggregate[{ext}]'\n"
        )
        assert not out.exists()


# -- never overwrite, never half-write ---------------------------------------------------------


def test_refuses_to_overwrite_unless_forced(sweep, tmp_path):
    out = tmp_path / "curves.csv"
    out.write_text("keep me\n")
    stamp = os.stat(out).st_mtime_ns
    proc = cli(sweep, "-o", out, check=2)
    assert proc.stderr == f"tb-aggregate: error: {out} exists (use --force to replace it)\n"
    assert out.read_text() == "keep me\n" and os.stat(out).st_mtime_ns == stamp

    cli(sweep, "-o", out, "--force", "-q", check=0)
    _same_table(pd.read_csv(out), tba.aggregate(sweep))
    assert sorted(os.listdir(tmp_path)) == ["curves.csv"]  # no temporary file left

    # A folder of TensorBoard runs: a foreign folder is never replaced, an earlier output is with --force.
    foreign = tmp_path / "foreign"
    (foreign / "mine").mkdir(parents=True)
    proc = cli(sweep, "--format", "tb", "--force", "-o", foreign, check=2)
    assert "was not written by tb-aggregate; not replacing it" in proc.stderr
    assert os.listdir(foreign) == ["mine"]

    agg = tmp_path / "agg"
    cli(sweep, "--format", "tb", "--reductions", "mean", "--band", "none", "-o", agg, check=0)
    cli(sweep, "--format", "tb", "--reductions", "mean", "--band", "none", "-o", agg, check=2)
    cli(
        sweep,
        "--format",
        "tb",
        "--center",
        "median",
        "--reductions",
        "median",
        "--band",
        "none",
        "--force",
        "-o",
        agg,
        check=0,
    )
    assert sorted(os.listdir(agg / "lr=0.1")) == ["median"]
    assert sorted(os.listdir(tmp_path)) == ["agg", "curves.csv", "foreign"]


@pytest.fixture(scope="module")
def big_logdir(tmp_path_factory) -> str:
    """Three runs at interleaved steps: 24,000 rows once interpolated, a write that takes a while."""
    logdir = str(tmp_path_factory.mktemp("big") / "logs")
    n = 8000
    for k in range(3):
        write_run(logdir, f"seed_{k}", {"loss": (np.arange(n) * 3 + k, noisy_curve(n, k))})
    return logdir


def _start_and_signal(args, folder, signum) -> tuple[int, str]:
    """Start tb-aggregate, wait until its temporary output appears in ``folder``, then send ``signum``.

    Returns the exit status and stderr."""
    proc = subprocess.Popen(
        _command() + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        while not any(".tb-aggregate-" in name for name in os.listdir(folder)):
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.002)
        assert proc.poll() is None, "finished before it could be interrupted"
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err.decode()


def test_killed_mid_write_leaves_no_output(big_logdir, tmp_path):
    out = tmp_path / "big.xlsx"
    status, _ = _start_and_signal([big_logdir, "--align", "interpolate", "-o", out], tmp_path, signal.SIGKILL)
    assert status == -signal.SIGKILL
    assert not out.exists()  # at most a hidden temporary file, never a half-written big.xlsx
    assert all(name.startswith(".big.xlsx.tb-aggregate-") for name in os.listdir(tmp_path))


@pytest.mark.parametrize("fmt", ["xlsx", "tb"])
def test_terminated_mid_write_leaves_nothing(big_logdir, tmp_path, fmt):
    out = tmp_path / ("big.xlsx" if fmt == "xlsx" else "big")
    args = [big_logdir, "--align", "interpolate", "-o", out] + (["--format", "tb"] if fmt == "tb" else [])
    status, err = _start_and_signal(args, tmp_path, signal.SIGTERM)
    assert status == 128 + signal.SIGTERM, err
    assert err.endswith("tb-aggregate: terminated; nothing written\n")
    assert os.listdir(tmp_path) == []


def test_a_termination_swallowed_mid_write_still_leaves_nothing(big_logdir, tmp_path, monkeypatch, capsys):
    """What the signal handler raises can be swallowed on its way (Python ignores an exception raised
    while it runs an object's finaliser): the output is still not put in place."""
    from tb_aggregate_plugin.write import table_text

    real_blocks = table_text.csv_blocks

    def blocks_that_swallow(table):
        for i, block in enumerate(real_blocks(table)):
            if i == 0:
                try:  # as a finaliser would: the interruption raised here goes no further
                    os.kill(os.getpid(), signal.SIGTERM)
                    time.sleep(1)  # the handler runs at once; this is never waited out
                except BaseException:
                    pass
            yield block

    monkeypatch.setattr(table_text, "csv_blocks", blocks_that_swallow)
    out = tmp_path / "big.csv"
    status = cli_module.main([big_logdir, "--align", "interpolate", "-o", str(out), "-q"])
    assert status == 128 + signal.SIGTERM
    assert capsys.readouterr().err.endswith("tb-aggregate: terminated; nothing written\n")
    assert os.listdir(tmp_path) == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the command's handler is gone


# -- progress display ----------------------------------------------------------------------------


def _run_on_terminal(args) -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal; returns (status, stdout, what the terminal got)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(_command() + [str(a) for a in args], stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal's other end closed
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    out = proc.stdout.read().decode()
    proc.stdout.close()
    return proc.wait(), out, seen.decode()


def test_progress_on_a_terminal_only(sweep, tmp_path):
    status, out, terminal = _run_on_terminal([sweep, "-o", tmp_path / "a.csv"])
    assert status == 0
    for stage in ("loading", "reducing: 7 runs, 13 series", "writing 250 rows"):
        assert stage in terminal
    assert terminal.endswith("\r\x1b[K")  # the status line is cleared at the end
    assert out.startswith("7 runs, 3 groups, 2 tags")

    status, out, terminal = _run_on_terminal([sweep, "-q", "-o", tmp_path / "b.csv"])
    assert (status, out, terminal) == (0, "", "")

    piped = cli(sweep, "-o", tmp_path / "c.csv", check=0)
    assert piped.stderr == "" and "loading" not in piped.stdout
