"""The Rust data server's gRPC answers read straight into numpy arrays (feature-detected).

TensorBoard's ``GrpcDataProvider`` builds one Python object per point, and its module imports
TensorFlow's stand-in (with boto3 and fsspec when they are installed: 0.1-0.15 s) before it can ask
anything. Loading a logdir slice by slice (:mod:`.sliced`), the first slice is ready before those
imports would be, so its reading needs only the generated stub and messages. Errors are translated
as ``GrpcDataProvider`` translates them, its module imported only when one happens.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import grpc
import numpy as np
from tensorboard.data import provider as tb_provider
from tensorboard.data.proto import data_provider_pb2, data_provider_pb2_grpc

from ..series import ALL_POINTS, SCALARS, Series, SeriesInfo


def connect(port: int) -> tuple[grpc.Channel, data_provider_pb2_grpc.TensorBoardDataProviderStub]:
    """A channel to the data server at ``localhost:port`` (close it when done) and its stub, with no
    limit on message sizes (a ReadScalars answer holding every point of a logdir is far above gRPC's
    default 4 MB)."""
    channel = grpc.insecure_channel(
        f"localhost:{port}",
        options=[("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)],
    )
    return channel, data_provider_pb2_grpc.TensorBoardDataProviderStub(channel)


@contextlib.contextmanager
def errors() -> Iterator[None]:
    """gRPC errors raised as TensorBoard's own provider raises them (NotFoundError, ...)."""
    try:
        yield
    except grpc.RpcError:
        from tensorboard.data import grpc_provider

        with grpc_provider._translate_grpc_error():
            raise


def array_reader(provider) -> Callable | None:
    """A reader of ``(experiment_id, RunTagFilter or None for all) -> {(run, tag): Series}`` that skips
    the public ``read_scalars`` (one Python object per point), when the provider offers one: a logdir
    held in arrays (``read_scalar_arrays``) or TensorBoard's gRPC provider (its stub); else ``None``."""
    arrays = getattr(provider, "read_scalar_arrays", None)  # a logdir loaded slice by slice
    if callable(arrays):
        return arrays
    stub = getattr(provider, "_stub", None)
    if stub is None or not hasattr(stub, "ReadScalars"):
        return None
    return scalar_reader(stub)


def scalar_reader(stub) -> Callable[[str, tb_provider.RunTagFilter | None], dict[tuple[str, str], Series]]:
    """A reader of ``(experiment_id, RunTagFilter or None for all) -> {(run, tag): Series}``: one
    ReadScalars request, its repeated fields turned into numpy arrays without a Python object per point.
    """

    def read(experiment_id: str, rtf: tb_provider.RunTagFilter | None) -> dict[tuple[str, str], Series]:
        req = data_provider_pb2.ReadScalarsRequest()
        req.experiment_id = experiment_id
        req.plugin_filter.plugin_name = SCALARS
        if rtf is not None and rtf.runs is not None:  # an unset filter: every run
            req.run_tag_filter.runs.SetInParent()
            req.run_tag_filter.runs.names[:] = list(rtf.runs)
        if rtf is not None and rtf.tags is not None:
            req.run_tag_filter.tags.SetInParent()
            req.run_tag_filter.tags.names[:] = list(rtf.tags)
        req.downsample.num_points = ALL_POINTS
        with errors():
            res = stub.ReadScalars(req)
        out = {}
        for run_entry in res.runs:
            for tag_entry in run_entry.tags:
                d = tag_entry.data
                out[(run_entry.run_name, tag_entry.tag_name)] = Series(
                    np.asarray(d.step, dtype=np.int64),
                    np.asarray(d.wall_time, dtype=np.float64),
                    np.asarray(d.value, dtype=np.float64),
                )
        return out

    return read


def scalar_lister(provider) -> Callable[[str], dict[str, dict[str, SeriesInfo]]] | None:
    """A lister of ``experiment_id -> {run: {tag: SeriesInfo}}`` straight from TensorBoard's data
    server (its gRPC stub), when ``provider`` is its ``GrpcDataProvider``; else ``None``. The provider's
    own ``list_scalars`` makes an object per series first (0.1 s for 40,000 of them)."""
    stub = getattr(provider, "_stub", None)
    if stub is None or not hasattr(stub, "ListScalars"):
        return None

    def listing(experiment_id: str) -> dict[str, dict[str, SeriesInfo]]:
        req = data_provider_pb2.ListScalarsRequest()
        req.experiment_id = experiment_id
        req.plugin_filter.plugin_name = SCALARS
        with errors():
            res = stub.ListScalars(req)
        listed = {}
        for run in res.runs:
            listed[run.run_name] = {
                t.tag_name: SeriesInfo(t.metadata.max_step, t.metadata.max_wall_time) for t in run.tags
            }
        return listed

    return listing


def tensor_listing(
    stub, experiment_id: str, plugin_name: str
) -> dict[str, dict[str, tb_provider.TensorTimeSeries]]:
    """``list_tensors`` of ``plugin_name`` (the hparams listing), as ``GrpcDataProvider`` answers it."""
    req = data_provider_pb2.ListTensorsRequest()
    req.experiment_id = experiment_id
    req.plugin_filter.plugin_name = plugin_name
    with errors():
        res = stub.ListTensors(req)
    out: dict[str, dict[str, tb_provider.TensorTimeSeries]] = {}
    for run_entry in res.runs:
        tags = out.setdefault(run_entry.run_name, {})
        for tag_entry in run_entry.tags:
            meta = tag_entry.metadata
            tags[tag_entry.tag_name] = tb_provider.TensorTimeSeries(
                max_step=meta.max_step,
                max_wall_time=meta.max_wall_time,
                plugin_content=meta.summary_metadata.plugin_data.content,
                description=meta.summary_metadata.summary_description,
                display_name=meta.summary_metadata.display_name,
            )
    return out
