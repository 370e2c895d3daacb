"""Per tag and group, the final and best point of each curve (comparisons: ``comparison.compare``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .compare import is_lower_better
from .result import Result

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
