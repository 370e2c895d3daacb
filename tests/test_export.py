"""The download formats on their own: exact floats, hostile names, inert formula cells, file names."""

from __future__ import annotations

import csv
import datetime
import io
import json
import math

import numpy as np
import pandas as pd
import pytest

from tb_aggregate_plugin.write import table_text as export

HOSTILE = [
    "=1+2",
    "+1",
    "-1",
    "@SUM(A1)",
    "\tx",
    "\rx",
    "a\rb",
    "a\nb",
    'say "hi"',
    "a,b",
    "'quoted",
    "ünï ☃",
    "x",
]
FLOATS = [0.1, 1 / 3, 2 / 3, 1e-300, 5e-324, 1.7976931348623157e308, -0.0, 123456789.12345679, np.nan, 1e16]


def _table() -> pd.DataFrame:
    n = len(HOSTILE)
    values = (FLOATS * n)[:n]
    return pd.DataFrame(
        {
            "tag": HOSTILE,
            "group": list(reversed(HOSTILE)),
            "step": np.arange(n, dtype=np.int64) * 10**12,
            "n": np.arange(n, dtype=np.int64),
            "mean": np.array(values, dtype=np.float64),
        }
    )


@pytest.mark.parametrize("name", HOSTILE)
def test_inert_only_prefixes_formula_starts(name):
    expected = "'" + name if name[0] in "=+-@\t\r" else name
    assert export.inert(name) == expected


def test_csv_round_trips_every_float_and_keeps_each_name_one_cell():
    table = _table()
    body = export.to_csv(table)
    loaded = pd.read_csv(io.BytesIO(body))
    assert len(loaded) == len(table)
    assert loaded["tag"].tolist() == [export.inert(t) for t in HOSTILE]
    assert loaded["group"].tolist() == [export.inert(g) for g in reversed(HOSTILE)]
    assert loaded["step"].tolist() == table["step"].tolist()
    np.testing.assert_array_equal(loaded["mean"].to_numpy(), table["mean"].to_numpy())
    # Python's float() of each cell is the same float64 (shortest round-trip text), sign of zero too.
    rows = list(csv.reader(io.StringIO(body.decode("utf-8"), newline="")))[1:]
    for row, want in zip(rows, table["mean"]):
        got = float(row[4]) if row[4] else math.nan
        assert (math.isnan(got) and math.isnan(want)) or (
            got == want and math.copysign(1, got) == math.copysign(1, want)
        )
    for row in rows:
        assert not row[0].startswith(("=", "+", "-", "@", "\t", "\r"))


def test_csv_bytes_are_those_pandas_writes():
    table = _table()
    table["std"] = [np.inf, -np.inf, np.nan, 0.5] * 3 + [1e-5]
    table["flag"] = table["n"] % 2 == 0
    table.loc[3, "group"] = ""  # an empty name: an empty cell, as pandas writes it
    inert = table.assign(
        tag=[export.inert(t) for t in table["tag"]], group=[export.inert(g) for g in table["group"]]
    )
    buffer = io.StringIO()
    inert.to_csv(buffer, index=False, lineterminator="\r\n")
    assert export.to_csv(table) == buffer.getvalue().encode("utf-8")


def test_json_round_trips_and_has_no_nan():
    table = _table()
    payload = json.loads(export.to_json(table, {"note": "x"}))
    assert payload["meta"] == {"note": "x"}
    got = [row["mean"] for row in payload["rows"]]
    for g, want in zip(got, table["mean"]):
        assert (g is None and math.isnan(want)) or g == want
    assert [row["tag"] for row in payload["rows"]] == [export.inert(t) for t in HOSTILE]
    assert b"NaN" not in export.to_json(table)


def test_download_name_is_safe_and_stamped_in_utc():
    when = datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    assert export.download_name("train/loss", "csv", when) == "aggregate-train_loss-20240506T050809Z.csv"
    assert export.download_name(None, "json", when) == "aggregate-all-20240506T050809Z.json"
    assert export.download_name('../"evil"\r\n', "csv", when) == "aggregate-evil-20240506T050809Z.csv"
    assert export.download_name("///", "csv", when) == "aggregate-tag-20240506T050809Z.csv"
    header = export.content_disposition('a"b', "csv")
    assert header.startswith('attachment; filename="aggregate-a_b-') and header.count('"') == 2


def test_a_table_file_written_a_block_of_rows_at_a_time_holds_pandas_bytes(tmp_path, monkeypatch):
    """CSV files are written a few rows at a time, never as one text of the whole table: the file's
    bytes (and the .csv.gz's, unzipped) are still those pandas writes for the whole table."""
    import gzip

    from tb_aggregate_plugin.write import table_file

    monkeypatch.setattr(export, "_CSV_ROWS", 7)  # several blocks, the last one short
    rng = np.random.default_rng(5)
    table = pd.DataFrame(
        {
            "tag": ["=loss"] * 30 + ["acc"] * 20,
            "group": ["a"] * 50,
            "step": np.arange(50),
            "mean": rng.normal(size=50),
        }
    )
    table.loc[4, "mean"] = np.nan
    inert = table.assign(tag=[export.inert(t) for t in table["tag"]])
    buffer = io.StringIO()
    inert.to_csv(buffer, index=False, lineterminator="\r\n")
    expected = buffer.getvalue().encode("utf-8")
    columns = {name: table[name].to_numpy() for name in table.columns}
    table_file.write_table(columns, str(tmp_path / "t.csv"), "csv")
    table_file.write_table(columns, str(tmp_path / "t.csv.gz"), "csv.gz")
    assert (tmp_path / "t.csv").read_bytes() == expected
    assert gzip.decompress((tmp_path / "t.csv.gz").read_bytes()) == expected
