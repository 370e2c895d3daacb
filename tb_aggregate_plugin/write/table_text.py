"""Turning a result table into CSV and JSON bytes (for the tab's download and the CLI)."""

from __future__ import annotations

import csv
import datetime
import io
import json
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

# Cells a spreadsheet would run as a formula; such name cells get a leading apostrophe.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NAME_COLUMNS = ("tag", "group", "run", "a", "b")
_CSV_ROWS = 20_000  # rows formatted at a time


def inert(name: str) -> str:
    """A name made safe for a spreadsheet cell: one starting with = + - @ tab or CR gets a ``'``."""
    return "'" + name if name.startswith(_FORMULA_START) else name


def with_inert_names(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every name cell made :func:`inert`."""
    table = table.copy(deep=False)
    for column in NAME_COLUMNS:
        if column in table.columns:
            table[column] = table[column].astype(str).map(inert)
    return table


def to_csv(table: pd.DataFrame | Mapping[str, np.ndarray]) -> bytes:
    """CSV that ``pd.read_csv`` loads back exactly: floats in shortest round-trip form, NaN empty.

    ``table``: a DataFrame, or its columns as arrays (``Result.table_columns()``: no pandas needed).
    Rows end with CRLF (RFC 4180): the csv writer quotes a field holding any character of the line
    terminator, so a name with a bare CR (a legal tag or folder name) stays one cell, not a new row.
    The bytes are those of pandas' ``to_csv`` (tested), made column by column: 25,000 rows in
    0.07 s instead of 0.2 s.
    """
    return b"".join(csv_blocks(table))


def csv_blocks(table: pd.DataFrame | Mapping[str, np.ndarray]) -> Iterator[bytes]:
    """:func:`to_csv`'s bytes, the header and then ``_CSV_ROWS`` rows at a time: a file written block
    by block never holds the text of the whole table (hundreds of MB for millions of rows)."""
    if isinstance(table, Mapping):
        columns = {name: np.asarray(values) for name, values in table.items()}
    else:
        columns = {name: table[name].to_numpy() for name in table.columns}
    # Few distinct names: each quoted once, by the csv module.
    quoted = {
        name: {value: _csv_field(inert(str(value))) for value in set(values.tolist())}
        for name, values in columns.items()
        if name in NAME_COLUMNS
    }
    yield (",".join(_csv_field(str(name)) for name in columns) + "\r\n").encode("utf-8")
    rows = len(next(iter(columns.values()), ()))
    for start in range(0, rows, _CSV_ROWS):  # in blocks: the texts of every cell at once would be big
        cells = []
        for name, values in columns.items():
            block = values[start : start + _CSV_ROWS]
            if name in quoted:
                cells.append([quoted[name][value] for value in block.tolist()])
            else:
                cells.append(_csv_texts(block))
        yield ("\r\n".join(map(",".join, zip(*cells))) + "\r\n").encode("utf-8")


def _csv_field(text: str) -> str:
    """One field as Python's csv writer writes it in a row (quoted only when it must be)."""
    if not text:
        return ""  # a lone empty field would be written as "" to tell it from an empty row
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerow([text])
    return buffer.getvalue()[:-2]


def _csv_texts(values: np.ndarray) -> list[str]:
    """A column of numbers as text: floats as ``repr`` writes them (shortest round trip), NaN empty."""
    if values.dtype.kind == "f":
        return [repr(value) if value == value else "" for value in values.tolist()]
    if values.dtype.kind in "iu":
        return list(map(str, values.tolist()))
    return [_csv_field("" if cell is None or cell != cell else str(cell)) for cell in values.tolist()]


def json_values(values) -> list:
    """A column as a JSON-ready list: NaN/inf become ``None`` (JSON has no NaN)."""
    array = np.asarray(values)
    if array.dtype.kind != "f":
        return array.tolist()
    out = array.astype(object)
    out[~np.isfinite(array)] = None
    return out.tolist()


def to_records(table: pd.DataFrame) -> list[dict]:
    """Rows as JSON-ready dicts."""
    names = list(table.columns)
    return [dict(zip(names, row)) for row in zip(*(json_values(table[c]) for c in names))]


def to_json(table: pd.DataFrame, meta: dict | None = None) -> bytes:
    """``{"meta": ..., "rows": [...]}`` with round-trip floats and names made inert."""
    payload = {"meta": meta or {}, "rows": to_records(with_inert_names(table))}
    return json.dumps(payload, allow_nan=False, default=str).encode("utf-8")


def tables_json(tables: Mapping[str, pd.DataFrame], meta: dict | None = None) -> bytes:
    """``{"meta": ..., name: [rows], ...}`` for several tables (a comparison's groups and pairs), with
    the same rules as :func:`to_json`."""
    payload = {"meta": meta or {}, **{name: to_records(with_inert_names(t)) for name, t in tables.items()}}
    return json.dumps(payload, allow_nan=False, default=str).encode("utf-8")


def download_name(tag: str | None, fmt: str, when: datetime.datetime | None = None) -> str:
    """``aggregate-<tag or all>-<UTC timestamp>.<fmt>``; the tag reduced to characters safe in a file name."""
    when = when or datetime.datetime.now(datetime.timezone.utc)
    stamp = when.astimezone(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", tag or "all").strip("._-") or "tag"
    return f"aggregate-{name}-{stamp}.{fmt}"


def content_disposition(tag: str | None, fmt: str) -> str:
    """The ``Content-Disposition`` header value that makes a browser save the export as a file."""
    return f'attachment; filename="{download_name(tag, fmt)}"'
