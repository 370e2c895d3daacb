"""A large group of runs on shared steps reduced a block of steps at a time, never stacked whole.

Stacking a group's runs makes a runs x steps float64 matrix of values and another of wall times,
and the median sorts a copy of each: for 200 runs x 50,000 steps, 80 MB apiece, per tag being
reduced. Cut into blocks of steps, the same statistics need a few MB at a time, and give the same
bits: every statistic but the bootstrap's is computed point by point (see ``stats.reduce``'s
``width``), and each block is made exactly as the whole matrix would be (non-finite values as NaN,
float32 values widened to float64).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..series import Series
from . import stats

# A group with more values than this is reduced in blocks (smaller ones are stacked whole: one call
# per statistic instead of one per block, and the engine keeps the matrix for a smoothing to reuse).
BLOCKED_ABOVE = 1 << 21
# Values per block (4 MB of float64); a block has at least two steps (see ``stats.reduce``).
BLOCK_VALUES = 1 << 19


@dataclasses.dataclass
class Reduced:
    """A group's statistics at each shared step, and what the engine says about its runs."""

    reduced: dict[str, np.ndarray]  # name -> one value per step, as stats.reduce gives them
    wall_time: np.ndarray  # the median wall time of the runs at each step
    nonfinite: list[int]  # per run: NaN or inf values left out
    finals: list[float]  # per run: its last finite value (NaN if none)

    @property
    def nbytes(self) -> int:
        return sum(v.nbytes for v in self.reduced.values()) + self.wall_time.nbytes + 16 * len(self.finals)


def is_large(runs: list[Series]) -> bool:
    """Whether stacking ``runs`` whole would make a matrix of more than ``BLOCKED_ABOVE`` values."""
    return len(runs) * max((len(s) for s in runs), default=0) > BLOCKED_ABOVE


def reduce_shared(
    runs: list[Series], names: list[str], *, center: str = "mean", boot_reps: int = 2000, seed: int = 0
) -> Reduced:
    """The statistics ``names`` (see ``stats.reduce``; not the bootstrap's) of ``runs``, which all hold
    the same steps (``align.shared_steps``), a block of steps at a time.

    Raises:
        ValueError: a bootstrap statistic is asked for: its draws depend on the array's shape.
    """
    if any(name.startswith("boot") for name in names):
        raise ValueError("the bootstrap is computed on the whole matrix, not in blocks")
    width = len(runs[0])
    parts: list[dict[str, np.ndarray]] = []
    walls: list[np.ndarray] = []
    nonfinite = np.zeros(len(runs), dtype=np.int64)
    values = wall = np.empty((0, 0))  # filled anew for each block (a new pair only when its width changes)
    for start, stop in _blocks(width, len(runs)):
        if values.shape[1] != stop - start:
            values, wall = np.empty((len(runs), stop - start)), np.empty((len(runs), stop - start))
        for i, s in enumerate(runs):
            values[i] = s.value[start:stop]
            wall[i] = s.wall[start:stop]
        bad = ~np.isfinite(values)
        values[bad] = np.nan
        nonfinite += bad.sum(axis=1)
        del bad
        walls.append(stats.nanmedian(wall, overwrite=True))
        parts.append(stats.reduce(values, names, center=center, boot_reps=boot_reps, seed=seed, width=width))
    reduced = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}
    finals = [float(stats.last_finite(s.value[None, :])[0]) for s in runs]
    return Reduced(reduced, np.concatenate(walls), nonfinite.tolist(), finals)


def _blocks(width: int, rows: int) -> list[tuple[int, int]]:
    """``(start, stop)`` of each block of steps: about ``BLOCK_VALUES`` values, at least two steps
    each (a lone step would be summed in another order: numpy sums a single column pairwise)."""
    step = max(2, BLOCK_VALUES // max(rows, 1))
    starts = list(range(0, width, step))
    if len(starts) > 1 and width - starts[-1] < 2:
        starts.pop()  # the last step joins the block before it
    return [(a, b) for a, b in zip(starts, starts[1:] + [width])]
