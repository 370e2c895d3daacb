"""The leaf types every stage shares: one run's series of one tag, what a listing says of it, names."""

from __future__ import annotations

import dataclasses

import numpy as np

# TensorBoard's plugin names for scalars and hparams (as its plugins' metadata modules name them).
SCALARS = "scalars"
HPARAMS = "hparams"
# "Every point": far above any real series, but a plain int both loaders accept.
ALL_POINTS = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class Series:
    """One run's values of one tag, in the order the loader returned them."""

    step: np.ndarray  # int64
    wall: np.ndarray  # float64, seconds since the epoch
    value: np.ndarray  # float64, may hold NaN/inf

    def __len__(self) -> int:
        return len(self.step)

    @classmethod
    def empty(cls) -> Series:
        return cls(np.empty(0, np.int64), np.empty(0, np.float64), np.empty(0, np.float64))


@dataclasses.dataclass(frozen=True)
class SeriesInfo:
    """What the provider's listing says of a series; a change means new data."""

    max_step: int
    max_wall_time: float
