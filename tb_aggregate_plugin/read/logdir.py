"""A logdir path opened with TensorBoard's own loaders, every point kept, and the rules of which loader.

:func:`open_logdir` starts TensorBoard's Rust data server, or its Python multiplexer when the data
server is missing or when repeated steps must be kept (the data server keeps only the last write of
a repeated step). A logdir larger than ``sliced.SLICE_BYTES`` is loaded by the data server a slice
of runs at a time (see :mod:`.sliced`), so no loader ever holds all of it at once.

A logdir in object storage (``s3://BUCKET/PREFIX``, ``gs://BUCKET/PREFIX``) is read by the loader
TensorBoard itself picks for it (``REMOTE_LOADERS``): its data server reads ``gs://`` natively, its
Python loader reads ``s3://`` through boto3 (honouring ``S3_ENDPOINT``). Slicing and the framing
check need a local filesystem: such a logdir is loaded whole and not checked (:func:`remote_note`
says so). What keeps it from being read is one line (:class:`LogdirError`), never a traceback.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

# Only the standard library at import, the rest when first used: the command line starts TensorBoard's
# data server before numpy and TensorBoard's modules are imported, which then load while it does.
from ..query import check_repeats_kept, one_of, ref
from . import server_process, sliced
from .server_process import DataServerFailed
from .walk import EventFiles, event_files

if TYPE_CHECKING:
    from .source import Source

LOADERS = ("auto", "rust", "python")
# What dup_steps first or mean needs of a path read by the data server (see check_repeats_kept).
RUST_DROPS_REPEATS = (
    f"needs {ref('loader')} python or auto: TensorBoard's Rust data server ({ref('loader')} rust) keeps "
    "only the last write of a repeated step"
)

# The loader ``auto`` picks for a logdir in object storage, by scheme: TensorBoard's own choice.
REMOTE_LOADERS = {"s3": "python", "gs": "rust"}
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
# Error codes of object storage that mean the credentials do not open the bucket.
_DENIED = ("AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AllAccessDisabled", "403")
# When the data server lists no scalar in event files that are there.
RUST_FOUND_NO_SCALARS = (
    "TensorBoard's data server found no scalars in these event files (it leaves out scalars stored "
    "as float64 tensors)"
)

logger = logging.getLogger(__name__)


class LogdirError(OSError):
    """A logdir that cannot be read: ``str()`` is one line, ``cannot read LOGDIR: reason``."""

    def __init__(self, logdir: str, reason: str):
        super().__init__(f"cannot read {logdir}: {' '.join(reason.split())}")
        self.logdir = logdir
        self.reason = reason


def scheme_of(logdir: str) -> str | None:
    """``s3`` or ``gs`` for a logdir in object storage, ``None`` for a local path.

    Raises:
        LogdirError: another scheme (``hdfs://``...), or no bucket, or (``s3://``) no prefix.
    """
    match = _SCHEME.match(logdir)
    if match is None:
        return None
    scheme = match.group(1).lower()
    if scheme not in REMOTE_LOADERS:
        raise LogdirError(
            logdir, f"{scheme}:// is not read: give a folder, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX"
        )
    bucket, _, prefix = logdir[match.end() :].partition("/")
    if not bucket:
        raise LogdirError(logdir, f"no bucket: give {scheme}://BUCKET/PREFIX")
    if scheme == "s3" and not prefix.strip("/"):
        # TensorBoard's S3 reader lists a "folder" by its key prefix, and cannot list a bucket's top.
        raise LogdirError(logdir, "give a prefix inside the bucket, s3://BUCKET/PREFIX")
    return scheme


def remote_note(logdir: str, *, loaded_here: bool = True) -> str:
    """What is not done for a logdir in object storage (both need a local filesystem): the framing
    check, and (``loaded_here``: by the API and the command line) loading a slice of runs at a time."""
    whole = "loaded whole, not a slice of runs at a time, and " if loaded_here else ""
    return (
        f"logdir {logdir} is not a local folder: {whole}its event files are not checked for damage "
        "(an empty, unreadable or cut-off file is skipped by the loader without a note)"
    )


class LoadedLogdir:
    """A logdir loaded by one of TensorBoard's loaders; ``close()`` stops a data server.

    ``provider`` is its DataProvider; given as ``make_provider``, it is made when first asked for.
    ``stub`` is the data server's gRPC stub (``None`` for other loaders), readable without the
    provider's imports (see :mod:`.grpc_fast`).
    """

    def __init__(
        self,
        provider=None,
        loader: str = "rust",
        closer: Callable[[], None] | None = None,
        *,
        make_provider: Callable[[], object] | None = None,
        stub=None,
    ):
        self._provider = provider
        self._make_provider = make_provider
        self.loader = loader
        self.stub = stub
        self._closer = closer

    @property
    def provider(self):
        if self._provider is None and self._make_provider is not None:
            self._provider = self._make_provider()
        return self._provider

    def close(self) -> None:
        if self._closer is not None:
            self._closer()
            self._closer = None

    def __enter__(self) -> LoadedLogdir:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def loader_for(loader: str, dup_steps: str, logdir: str | None = None) -> str:
    """The loader that reads a path for ``dup_steps``: ``rust`` or ``python`` (``auto`` picks python
    when repeated steps must be kept, which the data server drops, and for ``s3://``, which only the
    Python loader reads).

    Raises:
        OptionError: ``loader`` is unknown, or ``rust`` is asked for with ``dup_steps`` first or mean,
            or for an ``s3://`` logdir.
        LogdirError: ``logdir`` is a URL that is not read (see :func:`scheme_of`).
    """
    from ..query import OptionError

    loader = one_of("loader", loader, LOADERS)
    scheme = scheme_of(logdir) if isinstance(logdir, str) and logdir else None
    if loader == "rust" and REMOTE_LOADERS.get(scheme, "rust") != "rust":
        raise OptionError(
            "loader",
            f"'rust' cannot read {scheme}:// (TensorBoard's data server reads folders and gs://): "
            f"use {ref('loader')} auto or python",
        )
    if loader == "rust":
        check_repeats_kept(dup_steps, RUST_DROPS_REPEATS)
    if loader == "auto" and (dup_steps != "last" or REMOTE_LOADERS.get(scheme) == "python"):
        return "python"
    return loader


@contextlib.contextmanager
def logdir_source(
    logdir: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    dup_steps: str = "last",
    loader: str = "auto",
    meanwhile: Callable[[], object] | None = None,
) -> Iterator[tuple[Source, str]]:
    """A :class:`Source` over every point of ``logdir``, loaded as ``dup_steps`` needs; yields
    ``(source, loader used)`` and stops the loader afterwards. The one way a path is opened.

    ``logdir`` may be several folders: each is then a run named after the folder (see
    :mod:`.folders`), read as one logdir.

    ``meanwhile`` is called once while TensorBoard's data server loads (the CLI imports the engine);
    the event files' framing is checked then too, rather than after the points are read. The logdir
    is walked once, for both the slices and that check.

    A logdir in object storage is loaded whole and not checked: the source's notes say so.

    When TensorBoard's data server finds no scalar at all in event files that are there (it leaves
    out scalars stored as float64 tensors), ``loader`` auto reads them again with the Python loader;
    either way the source's ``notes`` say so.

    Raises:
        OptionError: the loader cannot give what ``dup_steps`` needs (see :func:`loader_for`), or
            one of several folders is inside another.
        FileNotFoundError: ``logdir`` is not a folder.
        LogdirError: a logdir in object storage cannot be read (no such bucket, no credentials...).
    """
    loader = one_of("loader", loader, LOADERS)
    chosen = loader_for(loader, dup_steps, logdir if isinstance(logdir, str) else None)
    if not isinstance(logdir, (str, os.PathLike)):
        folders = [os.fspath(folder) for folder in logdir]
        if len(folders) != 1:
            from .folders import linked

            with linked(folders) as links:
                with logdir_source(links, dup_steps=dup_steps, loader=loader, meanwhile=meanwhile) as opened:
                    yield opened
            return
        logdir = folders[0]
    logdir = os.fspath(logdir)
    remote = scheme_of(logdir) is not None
    if not remote and not os.path.isdir(logdir):
        raise FileNotFoundError(f"logdir {logdir!r} is not a directory")
    files = None if remote else event_files(logdir)
    checked = []

    def check_framing() -> None:
        from .health import LogdirHealth

        checked.append(LogdirHealth(logdir))
        checked[0].problems(files)

    tasks = ([meanwhile] if meanwhile is not None else []) + ([] if remote else [check_framing])
    with contextlib.ExitStack() as stack:
        loaded = stack.enter_context(
            open_logdir(
                logdir, loader=chosen, keep_repeated_steps=dup_steps != "last", meanwhile=tasks, files=files
            )
        )
        from .source import Source

        def source_of(loaded: LoadedLogdir) -> Source:
            # Read once and closed after: nothing to keep for a next request.
            health = checked[0] if checked else None  # else made by Source when first asked
            return Source(
                loaded.provider,
                logdir=logdir,
                health=health,
                max_cache_points=0,
                max_memo_bytes=0,
                repeats_needs=RUST_DROPS_REPEATS if loaded.loader == "rust" else None,
                notes=[remote_note(logdir)] if remote else (),
            )

        source = source_of(loaded)
        if loaded.loader == "rust" and files is not None and files.runs and not source.list_scalars():
            if loader == "rust":  # asked for: said, not overruled
                source.notes.append(f"{RUST_FOUND_NO_SCALARS}: try {ref('loader')}=python")
            else:  # auto: the loader that reads them
                loaded.close()
                loaded = stack.enter_context(open_logdir(logdir, loader="python", files=files))
                source = source_of(loaded)
                source.notes.append(f"{RUST_FOUND_NO_SCALARS}: read with {ref('loader')}=python instead")
        yield source, loaded.loader


def open_logdir(
    logdir: str,
    *,
    loader: str = "auto",
    keep_repeated_steps: bool = False,
    slice_bytes: int | None = sliced.SLICE_BYTES,
    meanwhile: Iterable[Callable[[], object]] = (),
    files: EventFiles | None = None,
) -> LoadedLogdir:
    """Load every point of every run under ``logdir`` with TensorBoard's own loaders.

    ``loader``: ``auto`` (Rust data server if installed, unless ``keep_repeated_steps``), ``rust`` or
    ``python``. ``keep_repeated_steps`` keeps both writes of a step logged twice (needed for
    ``dup_steps=first|mean``); the data server always keeps only the last one. With the data server,
    a logdir of more than ``slice_bytes`` of event files is loaded in slices of about that size
    (``None``: all at once), planned from ``files`` (the logdir walked now when not given). Each call
    of ``meanwhile`` is made once, while the data server loads if one does (with slices, one per slice).

    A logdir in object storage (``s3://``, ``gs://``) is loaded whole, ``auto`` picking the loader
    TensorBoard picks for it (``REMOTE_LOADERS``); if that loader fails, the error says why, rather
    than the other loader's failure (only a missing data server falls back to Python).

    Raises:
        FileNotFoundError: a local ``logdir`` is not a folder.
        LogdirError: a logdir in object storage cannot be read (the reason in one line).
    """
    scheme = scheme_of(logdir)
    if scheme is None and not os.path.isdir(logdir):
        raise FileNotFoundError(f"logdir {logdir!r} is not a directory")
    loader = one_of("loader", loader, LOADERS)
    if scheme is not None:
        slice_bytes = None  # slices are folders of links to local files
        if loader == "auto" and not keep_repeated_steps:
            loader = REMOTE_LOADERS[scheme]
    pending = list(meanwhile)  # each made once, also when the data server fails and Python loads

    def tasks() -> Iterator[Callable[[], object]]:
        while pending:
            yield pending.pop(0)

    if loader == "rust" or (loader == "auto" and not keep_repeated_steps):
        try:
            return _load_with_data_server(logdir, slice_bytes, tasks, files)
        except DataServerFailed as exc:
            if scheme is not None:
                why = f"TensorBoard's data server: {exc}"
                if "authentication" in str(exc):
                    why = f"no credentials for {scheme}:// found ({why})"
                raise LogdirError(logdir, why) from None
            if loader == "rust":
                raise
            logger.info("data server failed (%s); using the Python loader", exc)
        except Exception as exc:
            if loader == "rust":
                raise
            logger.info("data server unavailable (%s); using the Python loader", exc)
    for task in tasks():
        task()
    if scheme is None:
        return _open_with_multiplexer(logdir)
    _check_with_python_loader(logdir, scheme)
    try:
        return _open_with_multiplexer(logdir)
    except Exception as exc:
        raise LogdirError(logdir, _storage_reason(exc, logdir)) from None


def _check_with_python_loader(logdir: str, scheme: str) -> None:
    """Ask TensorBoard's file layer (which its Python loader reads through) whether ``logdir`` is a
    folder there, so that what keeps it from being read is said in one line before loading.

    Raises:
        LogdirError: boto3 is missing, no credentials, no such bucket, no such folder, ...
    """
    if scheme == "s3":
        try:
            import boto3  # noqa: F401  (TensorBoard's S3 reader needs it, and says so less clearly)
        except ImportError:
            raise LogdirError(logdir, "reading s3:// needs boto3 (pip install boto3)") from None
    from tensorboard.compat import tf  # what TensorBoard's Python loader reads files through
    from tensorboard.compat.tensorflow_stub import errors as tf_errors
    from tensorboard.compat.tensorflow_stub.io import gfile

    stub = tf.io.gfile is gfile  # TensorFlow's own, when it is installed, reads as it reads
    if stub and scheme == "s3":
        # The stand-in reads S3_ENDPOINT once, when imported: a value set later (a notebook, a test)
        # would be ignored, and the default endpoint asked instead.
        fs = gfile.get_filesystem(logdir)
        if getattr(fs, "_s3_endpoint", None) != os.environ.get("S3_ENDPOINT"):
            gfile.register_filesystem("s3", gfile.S3FileSystem())
    try:
        found = tf.io.gfile.isdir(logdir)
    except tf_errors.UnimplementedError:
        raise LogdirError(
            logdir, f"TensorBoard's Python loader reads {scheme}:// only through fsspec (pip install gcsfs)"
        ) from None
    except Exception as exc:
        raise LogdirError(logdir, _storage_reason(exc, logdir)) from None
    if not found:
        raise LogdirError(logdir, "no such folder: nothing is stored under that prefix")


def _storage_reason(exc: BaseException, logdir: str) -> str:
    """What went wrong talking to object storage, in a few plain words."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):  # the storage answered with an error
        error = response.get("Error", {})
        code, message = str(error.get("Code", "")), str(error.get("Message", ""))
        if code == "NoSuchBucket":
            return f"no such bucket {logdir.split('://', 1)[1].split('/', 1)[0]!r}"
        if code in _DENIED:
            return f"access denied ({code}: {message})" if message else f"access denied ({code})"
        return f"{code}: {message}" if message else code or type(exc).__name__
    name = type(exc).__name__
    if name == "NoCredentialsError":
        return "no credentials: boto3 found none (in its environment variables or its config files)"
    if name in ("EndpointConnectionError", "ConnectTimeoutError", "ConnectionClosedError"):
        endpoint = getattr(exc, "kwargs", {}).get("endpoint_url")
        return f"cannot connect to {endpoint}" if endpoint else str(exc)
    if isinstance(exc, ImportError):
        return str(exc)
    text = str(exc).strip().splitlines()
    return text[0] if text else name


def _load_with_data_server(
    logdir: str,
    slice_bytes: int | None,
    tasks: Callable[[], Iterator[Callable[[], object]]],
    files: EventFiles | None,
) -> LoadedLogdir:
    if slice_bytes:
        runs = (files if files is not None else event_files(logdir)).runs
        sizes = {run: sum(paths.values()) for run, paths in runs.items()}
        slices = sliced.plan(sizes, slice_bytes, sliced.SLICE_RUNS)
        if len(slices) > 1:
            return LoadedLogdir(sliced.load(runs, slices, meanwhile=tasks()), "rust")
    server = DataServer(logdir if scheme_of(logdir) else os.path.abspath(logdir))
    try:
        for task in tasks():
            task()
        from tensorboard.data import grpc_provider  # noqa: F401  (its provider is made once loaded)
    except BaseException:
        server.close()
        raise
    return server.wait()


def _open_with_multiplexer(logdir: str) -> LoadedLogdir:
    from tensorboard.backend.event_processing import data_provider, plugin_event_multiplexer

    from ..series import HPARAMS, SCALARS

    multiplexer = plugin_event_multiplexer.EventMultiplexer(
        size_guidance={"scalars": 0, "tensors": 0},
        tensor_size_guidance={SCALARS: 0, HPARAMS: 0},
        purge_orphaned_data=False,
    )
    multiplexer.AddRunsFromDirectory(logdir)
    multiplexer.Reload()
    return LoadedLogdir(data_provider.MultiplexerDataProvider(multiplexer, logdir), "python")


class DataServer:
    """TensorBoard's Rust data server, started on ``logdir`` to load it once; :meth:`wait` for it.

    Starting needs only light imports, so a caller can start it first and do its own work (imports)
    while it loads. A thread only reads its log (never imports): the log says when loading is done,
    and a pipe left unread would fill and block the server.
    """

    def __init__(self, logdir: str):
        self._tmp = tempfile.TemporaryDirectory(prefix="tb_aggregate_")
        try:
            self._proc = server_process.start(logdir, self._tmp.name, text=True)
        except BaseException:
            self._tmp.cleanup()
            raise
        self._loaded = False
        self._failure: str | None = None  # why it stopped loading, from its log
        self._channel = None  # the gRPC channel to it, once loaded
        self._done = threading.Event()  # loaded, or exited without loading
        threading.Thread(target=self._read_log, daemon=True).start()

    def _read_log(self) -> None:
        with self._proc.stderr:  # closed once the server has exited
            for line in self._proc.stderr:
                if not self._done.is_set() and "Finished load cycle" in line:
                    self._loaded = True
                    self._done.set()
                elif not self._done.is_set() and " panicked at " in line:
                    # Its loading thread died (e.g. no credentials for gs://): it would never finish.
                    self._failure = server_process.panic_message(line)
                    self._done.set()
        self._done.set()

    def wait(self, timeout: float = 600.0) -> LoadedLogdir:
        """The loaded logdir (``close()`` stops the server); stops it and raises if it fails."""
        try:
            from . import grpc_fast  # gRPC and the rest: imported while it loads

            if not self._done.wait(timeout):
                raise TimeoutError("data server did not finish loading")
            if not self._loaded:
                raise DataServerFailed(self._failure or self._exit_reason())
            port = server_process.port(self._tmp.name)
            self._channel, stub = grpc_fast.connect(port)
        except BaseException:
            self.close()
            raise

        def make_provider():
            from tensorboard.data import grpc_provider

            return grpc_provider.GrpcDataProvider(f"localhost:{port}", stub)

        return LoadedLogdir(loader="rust", closer=self.close, make_provider=make_provider, stub=stub)

    def _exit_reason(self) -> str:
        return server_process.exit_reason(self._proc, self._tmp.name)

    def close(self, wait: bool = True) -> None:
        """Stop the server (again: nothing more). ``wait=False`` returns at once; a later
        ``close()`` waits for it to be gone."""
        if not self._proc.stdin.closed:  # it exits when its stdin closes
            self._proc.stdin.close()
            self._tmp.cleanup()
            if self._channel is not None:
                self._channel.close()
        if wait and self._proc.returncode is None:
            # A plain wait returns the moment it has exited; a wait with a timeout polls, which cost
            # several ms per slice. The timer kills a server that hangs.
            killer = threading.Timer(5.0, self._proc.kill)
            killer.start()
            try:
                self._proc.wait()
            finally:
                killer.cancel()
