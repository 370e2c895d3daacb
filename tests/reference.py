"""Independent references for the tests: what TensorBoard itself computes, written out plainly."""

from __future__ import annotations

import math

import numpy as np


def tensorboard_smoothing(values, weight: float) -> np.ndarray:
    """TensorBoard's scalar chart smoothing, written out point by point as in its frontend."""
    out, last, num_accum = [], 0.0, 0
    is_constant = all(v == values[0] for v in values)
    for v in values:
        if is_constant or not math.isfinite(v):
            out.append(v)
            continue
        last = last * weight + (1 - weight) * v
        num_accum += 1
        out.append(last / (1 - weight**num_accum))
    return np.array(out)
