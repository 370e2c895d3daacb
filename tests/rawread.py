"""An independent reader for the tests: raw event records -> {run: {tag: [(step, wall, value)]}}.

Decodes the protos itself (TF1 ``simple_value`` and TF2 tensor scalars), in file order, keeping every
write, so expected numbers never come from the code under test.
"""

from __future__ import annotations

import glob
import os

from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
from tensorboard.compat.proto import event_pb2
from tensorboard.util import tensor_util


def read_run(run_dir: str) -> dict[str, list[tuple[int, float, float]]]:
    out: dict[str, list[tuple[int, float, float]]] = {}
    for path in sorted(glob.glob(os.path.join(run_dir, "*tfevents*"))):
        for record in RawEventFileLoader(path).Load():
            event = event_pb2.Event.FromString(record)
            for value in event.summary.value:
                kind = value.WhichOneof("value")
                if kind == "simple_value":
                    v = float(value.simple_value)
                elif kind == "tensor" and value.metadata.plugin_data.plugin_name in ("scalars", ""):
                    array = tensor_util.make_ndarray(value.tensor)
                    if array.size != 1 or array.dtype.kind not in "fiu":
                        continue
                    v = float(array.reshape(()))
                else:
                    continue
                out.setdefault(value.tag, []).append((event.step, event.wall_time, v))
    return out


def read_logdir(logdir: str) -> dict[str, dict[str, list[tuple[int, float, float]]]]:
    """Every run (folder holding event files) under ``logdir``, named by its relative path."""
    runs = {}
    for root, _, files in os.walk(logdir):
        if any("tfevents" in f for f in files):
            name = os.path.relpath(root, logdir).replace(os.sep, "/")
            data = read_run(root)
            if data:
                runs[name] = data
    return runs
