"""A result table written to a file (.csv, .csv.gz, .json, .xlsx, .parquet) or placing a folder, atomically.

Everything is written to a hidden temporary file (or folder) next to the target and renamed into place
only once complete, so an interrupted write never leaves a half-written output under the target name.
An existing target is never replaced unless asked (``force``).
"""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from collections.abc import Mapping

    import numpy as np
    import pandas as pd

# Extensions in the order they are tried (".csv.gz" before ".csv" would not matter, but be explicit).
EXTENSIONS = {
    ".csv.gz": "csv.gz",
    ".csv": "csv",
    ".json": "json",
    ".xlsx": "xlsx",
    ".parquet": "parquet",
    ".md": "md",
    ".tex": "tex",
    ".pdf": "pdf",
    ".svg": "svg",
    ".png": "png",
}
TABLE_FORMATS = ("csv", "csv.gz", "json", "xlsx", "parquet")
TEXT_FORMATS = ("md", "tex")  # Markdown and LaTeX tables: the summary, or a comparison
FIGURE_FORMATS = ("pdf", "svg", "png")
FILE_FORMATS = TABLE_FORMATS + TEXT_FORMATS + FIGURE_FORMATS
# Optional formats: the library they need and the package extra that installs it.
_NEEDS = {
    "xlsx": ("openpyxl", "xlsx"),
    "parquet": ("pyarrow", "parquet"),
    **{fmt: ("matplotlib", "plot") for fmt in FIGURE_FORMATS},
}
XLSX_MAX_ROWS = 1_048_576 - 1  # a sheet's rows, less the header row


class OutputExists(FileExistsError):
    """The target exists and replacing it was not asked for (or is not safe)."""


class MissingLibrary(RuntimeError):
    """An optional format's library is not installed; the message says how to install it."""


def format_of(path: str) -> str | None:
    """The file format a path asks for by its extension (case-insensitive), or ``None``."""
    lower = path.lower()
    for ext, fmt in EXTENSIONS.items():
        if lower.endswith(ext):
            return fmt
    return None


def check_available(fmt: str) -> None:
    """Raise :class:`MissingLibrary` when ``fmt`` needs a library that cannot be imported."""
    if fmt not in _NEEDS:
        return
    module, extra = _NEEDS[fmt]
    try:
        __import__(module)
    except ImportError:
        raise MissingLibrary(
            f"writing .{fmt} needs {module}, which is not installed: pip install 'tb-aggregate[{extra}]'"
        ) from None


def write_table(
    table: pd.DataFrame | Mapping[str, np.ndarray],
    path: str,
    fmt: str,
    *,
    meta: dict | None = None,
    force: bool = False,
) -> None:
    """Write ``table`` to ``path`` in ``fmt`` (one of :data:`FILE_FORMATS`), atomically; for CSV the
    table may be given as its columns (``Result.table_columns()``).

    CSV and JSON bytes are :func:`table_text.to_csv` / :func:`table_text.to_json` (the tab's download);
    ``meta`` goes into the JSON. Name cells are made inert for spreadsheets in .xlsx as in CSV.

    Raises:
        OutputExists: ``path`` exists and ``force`` is false.
        MissingLibrary: the format's optional library is missing.
        OSError: the file could not be written (nothing is left under ``path``).
    """
    from . import table_text  # pandas: imported once there is a table to write

    check_available(fmt)
    if fmt == "xlsx" and len(table) > XLSX_MAX_ROWS:
        raise OSError(f"{len(table)} rows do not fit in an .xlsx sheet ({XLSX_MAX_ROWS}); use .parquet")
    with atomic_file(path, force=force) as handle:
        # The slow part runs with the temporary file already open, so it is what an interruption finds.
        # CSV a block of rows at a time: the text of a whole large table is never held.
        if fmt == "csv":
            handle.writelines(table_text.csv_blocks(table))
        elif fmt == "csv.gz":
            # mtime=0: the same table gives the same bytes.
            with gzip.GzipFile(fileobj=handle, mode="wb", mtime=0) as zipped:
                zipped.writelines(table_text.csv_blocks(table))
        elif fmt == "json":
            handle.write(table_text.to_json(table, meta))
        elif fmt == "xlsx":
            # openpyxl stores a string starting with "=" as a formula: names from logs must stay text.
            named = table_text.with_inert_names(table)
            named.to_excel(handle, index=False, sheet_name="aggregate", engine="openpyxl")
        elif fmt == "parquet":
            table.to_parquet(handle, index=False, engine="pyarrow")
        else:
            raise ValueError(f"unknown format {fmt!r}")


def write_bytes(body: bytes, path: str, *, force: bool = False) -> None:
    """Write ``body`` to ``path`` atomically (see :func:`atomic_file`)."""
    with atomic_file(path, force=force) as handle:
        handle.write(body)


def check_target(
    path: str,
    *,
    force: bool = False,
    folder: bool = False,
    replaceable: Callable[[str], bool] = lambda p: False,
) -> None:
    """Check that a file (or, with ``folder``, a folder) may be written at ``path``, before any work.

    Raises:
        OutputExists: ``path`` exists and ``force`` is false, or it cannot be replaced safely: a folder
            where a file goes, or a non-empty folder that ``replaceable`` does not recognise.
        FileNotFoundError: the folder that would hold ``path`` does not exist.
    """
    _folder_of(path)
    if not os.path.lexists(path):
        return
    if not force:
        raise OutputExists(f"{path} exists (use --force to replace it)")
    if not folder and os.path.isdir(path):
        raise OutputExists(f"{path} exists and is a folder; not replacing it")
    if folder:
        if not os.path.isdir(path) or os.path.islink(path):
            raise OutputExists(f"{path} exists and is not a folder; not replacing it")
        if os.listdir(path) and not replaceable(path):
            raise OutputExists(f"{path} exists and was not written by tb-aggregate; not replacing it")


def _temp_prefix(path: str) -> str:
    return f".{os.path.basename(os.path.abspath(path))}.tb-aggregate-"  # abspath: "out/" is "out"


def _temp_name(path: str, suffix: str) -> str:
    """A fresh hidden name beside ``path`` (created by the caller, exclusively)."""
    return os.path.join(_folder_of(path), f"{_temp_prefix(path)}{uuid.uuid4().hex}{suffix}")


def _folder_of(path: str) -> str:
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"folder {folder} does not exist")
    return folder


def _default_mode(mode: int) -> int:
    """``mode`` less the process umask: what a plain ``open``/``mkdir`` would have given."""
    umask = os.umask(0)
    os.umask(umask)
    return mode & ~umask


# Checks made just before an output is put in place (see guarded).
_GUARDS: list[Callable[[], None]] = []


@contextlib.contextmanager
def guarded(check: Callable[[], None]) -> Iterator[None]:
    """Within the block, ``check()`` is called just before any output is put in place, and what it
    raises leaves nothing there. The command line raises once it has been told to terminate: the
    interruption it raised mid-write may have been swallowed by a library (an exception raised while
    Python runs an object's finaliser is ignored), and must still stop the output."""
    _GUARDS.append(check)
    try:
        yield
    finally:
        _GUARDS.remove(check)


def _check_guards() -> None:
    for check in list(_GUARDS):
        check()


@contextlib.contextmanager
def atomic_file(path: str, *, force: bool = False) -> Iterator[BinaryIO]:
    """A binary handle on a temporary file beside ``path``, renamed to ``path`` when the block ends well.

    Without ``force`` the final step is a hard link, which fails rather than replace a file that
    appeared meanwhile. On any error (or interruption that Python sees) the temporary file is removed.
    """
    check_target(path, force=force)
    temp = _temp_name(path, ".tmp")
    try:  # the name is known before the file exists, so an interruption at any point can remove it
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, _default_mode(0o666))  # mkstemp makes it private; an output is an ordinary file
        _check_guards()
        _publish(temp, path, force)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def _publish(temp: str, path: str, force: bool) -> None:
    if force:
        os.replace(temp, path)
        return
    try:
        os.link(temp, path)  # atomic and never replaces: fails if path appeared meanwhile
    except FileExistsError:
        raise OutputExists(f"{path} exists (use --force to replace it)") from None
    except OSError:  # a filesystem without hard links
        if os.path.lexists(path):
            raise OutputExists(f"{path} exists (use --force to replace it)") from None
        os.replace(temp, path)
        return
    os.unlink(temp)


@contextlib.contextmanager
def atomic_dir(
    path: str, *, force: bool = False, replaceable: Callable[[str], bool] = lambda p: False
) -> Iterator[str]:
    """A temporary folder beside ``path``, renamed to ``path`` when the block ends well.

    With ``force`` an existing ``path`` is replaced only when it is an empty folder or when
    ``replaceable(path)`` says it is a previous output (a whole folder is never removed on a guess).
    """
    check_target(path, force=force, folder=True, replaceable=replaceable)
    path = os.path.abspath(path)
    temp = _temp_name(path, ".tmp")
    try:
        os.mkdir(temp, 0o700)
        yield temp
        os.chmod(temp, _default_mode(0o777))
        _check_guards()
        _publish_dir(temp, path, force)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


def _publish_dir(temp: str, path: str, force: bool) -> None:
    if not os.path.lexists(path):
        os.rename(temp, path)
        return
    if not force:
        raise OutputExists(f"{path} exists (use --force to replace it)")
    # Move the old output aside, put the new one in place, then delete the old one.
    old = tempfile.mkdtemp(prefix=_temp_prefix(path), suffix=".old", dir=os.path.dirname(temp))
    previous = os.path.join(old, "previous")
    os.rename(path, previous)
    try:
        os.rename(temp, path)
    except BaseException:
        os.rename(previous, path)
        os.rmdir(old)
        raise
    shutil.rmtree(old, ignore_errors=True)
