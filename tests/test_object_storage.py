"""Logdirs in object storage, read for real from a local S3-compatible server (moto in server mode).

The same runs are uploaded to a bucket and kept in a local folder; the API, the command line and the
tab's backend in a real ``tensorboard --logdir s3://...`` must give the same table from both. What
keeps a logdir from being read (no such bucket, no credentials, boto3 missing) is one line.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pandas as pd
import pytest
import requests
from server import free_port, tensorboard_process, wait_for
from test_cli import cli
from test_real_logs import summary_writer
from writers import noisy_curve, write_run

import tb_aggregate_plugin as tba
from tb_aggregate_plugin.read.logdir import LogdirError, loader_for
from tb_aggregate_plugin.write import table_text

boto3 = pytest.importorskip("boto3")

BUCKET = "experiments"
PREFIX = "sweep/v1"
URI = f"s3://{BUCKET}/{PREFIX}"
PLUGIN = "/data/plugin/aggregate"


@pytest.fixture(scope="module")
def local(tmp_path_factory) -> str:
    """2 learning rates x 2 seeds (two writers), two tags, and each run's add_hparams child."""
    root = str(tmp_path_factory.mktemp("storage") / "runs")
    steps = list(range(0, 30, 3))
    for c, lr in enumerate((0.1, 0.01)):
        for seed in range(2):
            run = f"lr={lr}/seed_{seed}"
            write_run(
                root,
                run,
                {"loss": (steps, noisy_curve(10, 10 * c + seed)), "acc": (steps, 1 - noisy_curve(10, seed))},
                writer="tbx" if seed else "tb",
            )
            writer = summary_writer()(os.path.join(root, run))
            writer.add_hparams({"lr": lr}, {"hparam/accuracy": 0.5 + lr + seed / 10})
            writer.close()
    return root


@pytest.fixture(scope="module")
def storage(local):
    """A moto server on a free port of 127.0.0.1, the runs of ``local`` uploaded under ``URI``, and
    the environment that TensorBoard's S3 reader (boto3) needs to reach it; yields the endpoint."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: requests.get(endpoint, timeout=2).ok, timeout=60, what="moto server")
        with pytest.MonkeyPatch.context() as env:
            env.setenv("S3_ENDPOINT", endpoint)
            env.setenv("AWS_ACCESS_KEY_ID", "testing")
            env.setenv("AWS_SECRET_ACCESS_KEY", "testing")
            env.setenv("AWS_REGION", "us-east-1")
            env.setenv("AWS_DEFAULT_REGION", "us-east-1")
            env.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance metadata to wait for
            client = boto3.client("s3", endpoint_url=endpoint)
            client.create_bucket(Bucket=BUCKET)
            for folder, _, files in os.walk(local):
                for name in files:
                    path = os.path.join(folder, name)
                    key = f"{PREFIX}/{os.path.relpath(path, local).replace(os.sep, '/')}"
                    client.upload_file(path, BUCKET, key)
            yield endpoint
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _same_frame(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))


def test_api_gives_the_same_table_as_from_the_local_folder(storage, local):
    remote = tba.aggregate(URI)
    _same_frame(remote, tba.aggregate(local))
    # What degrades without a local filesystem is said.
    assert any(
        n.startswith(f"logdir {URI} is not a local folder: loaded whole") for n in remote.attrs["notes"]
    )
    # A trailing slash names the same folder; "python" is the loader auto picks for s3://.
    options = {"group_by": "hparam:lr", "band": "ci95", "reductions": "mean,ci95_lo,q25"}
    remote = tba.aggregate(URI + "/", loader="python", **options)
    _same_frame(remote, tba.aggregate(local, **options))
    assert remote.attrs["groups"] == {
        "lr=0.01": ["lr=0.01/seed_0", "lr=0.01/seed_1"],
        "lr=0.1": ["lr=0.1/seed_0", "lr=0.1/seed_1"],
    }


def test_command_line_writes_the_same_bytes(storage, local, tmp_path):
    proc = cli(URI, "--group-by", "hparam:lr", "-o", tmp_path / "remote.csv", check=0)
    cli(local, "--group-by", "hparam:lr", "-o", tmp_path / "local.csv", check=0)
    assert (tmp_path / "remote.csv").read_bytes() == (tmp_path / "local.csv").read_bytes()
    assert proc.stdout.startswith("4 runs, 2 groups, 3 tags, ")
    assert f"note: logdir {URI} is not a local folder" in proc.stderr
    listed = cli(URI, "--list", check=0).stdout
    assert "4 runs of 4 selected, 2 groups, 3 tags" in listed


def test_tab_backend_in_tensorboard_on_s3_answers_the_same_csv(storage, local):
    """A real ``tensorboard --logdir s3://...`` (its Python loader, as TensorBoard picks for s3://)
    and one on the local folder: ``/export`` answers the same bytes, once each has loaded the runs
    (TensorBoard loads them bit by bit, reading S3 takes a few seconds)."""
    queries = ({}, {"group_by": "hparam:lr", "x": "tag:acc", "tags": "loss"})
    expected = [table_text.to_csv(tba.aggregate(local, **query)) for query in queries]
    notes = {}
    for name, logdir, fast in (("local", local, True), ("remote", URI, False)):
        with tensorboard_process(logdir, load_fast=fast) as (base, log):
            for query, csv in zip(queries, expected):

                def exported(base=base, query=query):
                    response = requests.get(f"{base}{PLUGIN}/export", params=query, timeout=60)
                    assert response.status_code == 200, (response.text, open(log).read()[-2000:])
                    return response.content

                wait_for(lambda csv=csv: exported() == csv, timeout=120, what=f"{logdir}'s export of {query}")
            chart = requests.get(f"{base}{PLUGIN}/aggregate", params={"tag": "loss"}, timeout=60).json()
            notes[name] = chart["notes"]
    assert notes["local"] == []
    assert notes["remote"] == [
        f"logdir {URI} is not a local folder: its event files are not checked for damage "
        "(an empty, unreadable or cut-off file is skipped by the loader without a note)"
    ]


@pytest.mark.parametrize(
    "logdir,reason",
    [
        (f"s3://no-such-bucket/{PREFIX}", "no such bucket 'no-such-bucket'"),
        (f"s3://{BUCKET}/nothing/here", "no such folder: nothing is stored under that prefix"),
        (f"s3://{BUCKET}", "give a prefix inside the bucket, s3://BUCKET/PREFIX"),
        ("hdfs://host/runs", "hdfs:// is not read: give a folder, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX"),
    ],
)
def test_what_cannot_be_read_is_one_line(storage, tmp_path, logdir, reason):
    with pytest.raises(OSError) as caught:
        tba.aggregate(logdir)
    assert isinstance(caught.value, LogdirError)
    assert str(caught.value) == f"cannot read {logdir}: {reason}"
    proc = cli(logdir, "-o", tmp_path / "out.csv", check=1)
    assert proc.stderr == f"tb-aggregate: error: cannot read {logdir}: {reason}\n"
    assert not (tmp_path / "out.csv").exists()


def test_no_credentials_is_one_line(storage, tmp_path, monkeypatch):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    reason = "no credentials: boto3 found none (in its environment variables or its config files)"
    # In a fresh process: boto3 keeps the credentials it found for as long as the process lives.
    code = (
        f"import tb_aggregate_plugin as t\ntry:\n    t.aggregate({URI!r})\nexcept OSError as e:\n    print(e)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.stdout, done.stderr) == (f"cannot read {URI}: {reason}\n", "")
    proc = cli(URI, "-o", tmp_path / "out.csv", check=1)
    assert proc.stderr == f"tb-aggregate: error: cannot read {URI}: {reason}\n"


def test_boto3_missing_is_one_line(storage, tmp_path):
    """In a fresh process where boto3 cannot be imported (as when it is not installed)."""
    code = textwrap.dedent(
        f"""
        import sys
        sys.modules["boto3"] = None  # import boto3 raises ImportError, as without the package
        import tb_aggregate_plugin as tba
        from tb_aggregate_plugin import cli
        try:
            tba.aggregate({URI!r})
        except OSError as exc:
            print(type(exc).__name__, exc)
        sys.exit(cli.main([{URI!r}, "-o", {str(tmp_path / "out.csv")!r}]))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    reason = "reading s3:// needs boto3 (pip install boto3)"
    assert done.stdout == f"LogdirError cannot read {URI}: {reason}\n"
    assert done.stderr == f"tb-aggregate: error: cannot read {URI}: {reason}\n"
    assert done.returncode == 1


def test_which_loader_reads_which_scheme(storage, tmp_path):
    assert loader_for("auto", "last", "s3://b/p") == "python"
    # TensorBoard's data server reads gs:// (as a folder: auto, the data server when installed).
    assert loader_for("auto", "last", "gs://b/p") == loader_for("auto", "last", str(tmp_path)) == "auto"
    assert loader_for("auto", "mean", "gs://b/p") == "python"  # repeats: only the Python loader keeps them
    with pytest.raises(tba.OptionError, match="^loader: 'rust' cannot read s3://"):
        tba.aggregate(URI, loader="rust")
    proc = cli(URI, "--loader", "rust", "-o", tmp_path / "out.csv", check=2)
    assert proc.stderr.startswith("tb-aggregate: error: --loader: 'rust' cannot read s3://")


def test_gs_is_read_by_the_data_server_and_its_failure_is_one_line(tmp_path, monkeypatch):
    """No gs:// server here: the data server is started on the URL, and its failure to authenticate
    (no credentials file where one is named) comes back as one line, not as a wait for ever."""
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "none.json"))
    logdir = "gs://some-bucket/runs"
    with pytest.raises(LogdirError) as caught:
        tba.aggregate(logdir)
    assert str(caught.value).startswith(
        f"cannot read {logdir}: no credentials for gs:// found (TensorBoard's data server: "
        "unable to initialize authentication manager"
    )
    assert "\n" not in str(caught.value)
    proc = cli(logdir, "-o", tmp_path / "out.csv", check=1)
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(
        f"tb-aggregate: error: cannot read {logdir}: "
    )
