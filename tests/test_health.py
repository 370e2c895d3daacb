"""The framing check of event files: whole files pass, cut-off and foreign ones are named, whatever the
size of their last record. Files written by real writers; the record sizes come from TensorBoard's
own record reader."""

from __future__ import annotations

import os

import numpy as np
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
from writers import noisy_curve, write_run

from tb_aggregate_plugin.read.health import LogdirHealth


def _event_file(path: str) -> str:
    (name,) = [n for n in os.listdir(path) if "tfevents" in n]
    return os.path.join(path, name)


def _write_with_big_last_record(root: str, run: str, text_bytes: int) -> str:
    """A run of scalars whose last record is a text summary of about ``text_bytes``."""
    from tensorboardX import SummaryWriter

    path = os.path.join(root, run)
    w = SummaryWriter(path)
    for step, value in enumerate(noisy_curve(30, 1)):
        w.add_scalar("loss", float(value), step)
    w.add_text("notes", "x" * text_bytes, 30)
    w.close()
    return _event_file(path)


def _last_record_bytes(path: str) -> int:
    *_, last = RawEventFileLoader(path).Load()
    return 8 + 4 + len(last) + 4  # length, its CRC, the payload, its CRC


def test_whole_files_pass_whatever_their_last_record(tmp_path):
    write_run(str(tmp_path), "small", {"loss": (np.arange(50), noisy_curve(50, 0))}, writer="tbx")
    write_run(str(tmp_path), "tb", {"loss": (np.arange(50), noisy_curve(50, 0))}, writer="tb")
    big = _write_with_big_last_record(str(tmp_path), "big", 100_000)  # larger than the tail looked at
    assert _last_record_bytes(big) > 100_000
    assert LogdirHealth(str(tmp_path)).problems() == {}


def test_cut_off_files_are_named_with_the_bytes_left_unread(tmp_path):
    small = _event_file(write_run(str(tmp_path), "small", {"loss": (np.arange(50), noisy_curve(50, 0))}))
    big = _write_with_big_last_record(str(tmp_path), "big", 100_000)
    medium = _write_with_big_last_record(str(tmp_path), "medium", 3_000)  # found from the tail
    expected = {}
    for run, path in (("small", small), ("big", big), ("medium", medium)):
        left = _last_record_bytes(path) - 7
        os.truncate(path, os.path.getsize(path) - 7)
        expected[run] = f"{os.path.basename(path)}: last record cut off ({left} bytes at the end not read)"
    assert LogdirHealth(str(tmp_path)).problems() == expected


def test_bytes_after_the_last_record_and_foreign_files_are_named(tmp_path):
    path = _event_file(write_run(str(tmp_path), "tail", {"loss": (np.arange(20), noisy_curve(20, 0))}))
    with open(path, "ab") as f:
        f.write(b"\x00\x01\x02\x03\x04")
    os.makedirs(tmp_path / "junk")
    with open(tmp_path / "junk" / "events.out.tfevents.1.host", "wb") as f:
        f.write(np.random.default_rng(0).bytes(50_000))
    problems = LogdirHealth(str(tmp_path)).problems()
    assert problems["tail"].endswith("last record cut off (5 bytes at the end not read)")
    assert problems["junk"].endswith("not an event file (no valid record at its start)")
    assert set(problems) == {"tail", "junk"}


def test_a_growing_file_is_checked_again_and_a_mended_one_passes(tmp_path):
    from tensorboard.summary import Writer

    health = LogdirHealth(str(tmp_path))
    w = Writer(str(tmp_path / "live"))
    for step in range(10):
        w.add_scalar("loss", float(step), step)
    w.flush()
    assert health.problems() == {}
    path = _event_file(str(tmp_path / "live"))
    whole = open(path, "rb").read()
    for step in range(10, 20):
        w.add_scalar("loss", float(step), step)
    w.flush()
    grown = open(path, "rb").read()
    with open(path, "wb") as f:  # a copy caught half-way through the new records
        f.write(grown[: len(whole) + 9])
    assert "last record cut off" in health.problems()["live"]
    with open(path, "wb") as f:  # and finished
        f.write(grown)
    assert health.problems() == {}
    w.close()


def test_the_record_checksum_is_tensorboards():
    """The framing check's own CRC-32C (kept to spare an import) against TensorBoard's, on random bytes
    of every length a record header or a small payload has."""
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    from tb_aggregate_plugin.read.health import _masked_crc32c

    rng = np.random.default_rng(7)
    for length in [0, 1, 4, 8, 8, 8, 12, 255, 4096]:
        for _ in range(20):
            data = rng.integers(0, 256, length, dtype=np.uint8).tobytes()
            assert _masked_crc32c(data) == masked_crc32c(data)
    assert _masked_crc32c(b"\xff" * 8) == masked_crc32c(b"\xff" * 8)
