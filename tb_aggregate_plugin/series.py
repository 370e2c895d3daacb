"""The leaf types every stage shares: one run's series of one tag, what a listing says of it, names."""

from __future__ import annotations

import dataclasses
import re
from typing import NamedTuple

import numpy as np

# TensorBoard's plugin names for scalars and hparams (as its plugins' metadata modules name them).
SCALARS = "scalars"
HPARAMS = "hparams"
# "Every point": far above any real series, but a plain int both loaders accept.
ALL_POINTS = 2**31 - 1
# A run name's last component as ``add_hparams`` of PyTorch and tensorboardX names the child run it
# writes into: ``str(time.time())``, seconds since the epoch (nine digits or more: after 1973) with a
# fraction, e.g. ``1795372541.3668559``.
TIMESTAMP_COMPONENT = re.compile(r"\d{9,}\.\d+")


@dataclasses.dataclass(frozen=True)
class Series:
    """One run's values of one tag, in the order the loader returned them."""

    step: np.ndarray  # int64
    wall: np.ndarray  # float64, seconds since the epoch
    value: np.ndarray  # float64 (float32 from a sliced load, where that is exact), may hold NaN/inf

    def __len__(self) -> int:
        return len(self.step)

    @classmethod
    def empty(cls) -> Series:
        return cls(np.empty(0, np.int64), np.empty(0, np.float64), np.empty(0, np.float64))


class SeriesInfo(NamedTuple):
    """What the provider's listing says of a series; a change means new data. A tuple: a listing of
    40,000 series is made at every change of the data, 3 times quicker than of frozen dataclasses."""

    max_step: int
    max_wall_time: float
    # The provider's runs whose series of this tag make up this one, when they are not just the run it
    # is listed under: a run and the add_hparams child runs folded into it (see read/source.py).
    parts: tuple[str, ...] = ()
