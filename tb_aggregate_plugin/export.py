"""Turning a result table into CSV and JSON bytes (for the tab's download and the CLI)."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd

# Cells a spreadsheet would run as a formula; such name cells get a leading apostrophe.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NAME_COLUMNS = ("tag", "group", "run")


def inert(name: str) -> str:
    """A name made safe for a spreadsheet cell: one starting with = + - @ tab or CR gets a ``'``."""
    return "'" + name if name.startswith(_FORMULA_START) else name


def _with_inert_names(table: pd.DataFrame) -> pd.DataFrame:
    table = table.copy(deep=False)
    for column in NAME_COLUMNS:
        if column in table.columns:
            table[column] = table[column].astype(str).map(inert)
    return table


def to_csv(table: pd.DataFrame) -> bytes:
    """CSV that ``pd.read_csv`` loads back exactly: floats in shortest round-trip form, NaN empty."""
    buffer = io.StringIO()
    _with_inert_names(table).to_csv(buffer, index=False, lineterminator="\n")
    return buffer.getvalue().encode("utf-8")


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
    payload = {"meta": meta or {}, "rows": to_records(_with_inert_names(table))}
    return json.dumps(payload, allow_nan=False, default=str).encode("utf-8")
