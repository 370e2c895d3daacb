"""Per tag and group, the final and best point of each curve, and the test between two groups' runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import stats
from .compare import is_lower_better
from .result import Result, UnknownTagError

if TYPE_CHECKING:
    import pandas as pd


def summary(result: Result) -> pd.DataFrame:
    """Per tag and group: final and best center with band edges, step of the best, run count."""
    import pandas as pd

    rows = []
    x = result.x
    for (tag, group), block in result.frame.groupby(["tag", "group"], sort=True):
        if block.empty:
            continue
        final = block.iloc[-1]
        center = block["center"].to_numpy()
        finite = np.isfinite(center)
        if finite.any():
            pick = np.nanargmin if is_lower_better(tag) else np.nanargmax
            best = block.iloc[int(pick(np.where(finite, center, np.nan)))]
        else:
            best = final
        rows.append(
            {
                "tag": tag,
                "group": group,
                "runs": int(block["n"].max()),
                "final_x": final[x],
                "final": final["center"],
                "final_lo": final["band_lo"],
                "final_hi": final["band_hi"],
                "final_n": int(final["n"]),
                "best_x": best[x],
                "best": best["center"],
                "best_lo": best["band_lo"],
                "best_hi": best["band_hi"],
                "best_is": "min" if is_lower_better(tag) else "max",
            }
        )
    return pd.DataFrame(rows)


def compare_finals(result: Result, tag: str, group_a: str, group_b: str) -> dict:
    """Welch's t-test on the runs' final values of two groups for one tag."""
    blocks = {b.group: b for b in result.blocks if b.tag == tag}
    for g in (group_a, group_b):
        if g not in blocks:
            raise UnknownTagError(f"group {g!r} has no data for tag {tag!r}")
    a = np.array(list(blocks[group_a].finals.values()))
    b = np.array(list(blocks[group_b].finals.values()))
    return {
        "tag": tag,
        "a": group_a,
        "b": group_b,
        "n_a": int(np.isfinite(a).sum()),
        "n_b": int(np.isfinite(b).sum()),
        "mean_a": float(np.nanmean(a)) if np.isfinite(a).any() else float("nan"),
        "mean_b": float(np.nanmean(b)) if np.isfinite(b).any() else float("nan"),
        "p_value": stats.welch_p(a, b),
        "test": "Welch's t-test (two-sided) on each run's final value",
    }
