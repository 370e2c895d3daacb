"""The Aggregate tab's group colours, for figures made outside the browser.

The tab (``frontend/traces.js``) colours the ``i``-th group with ``colorFor(i)``: ten fixed colours,
then hues spread by the golden angle as CSS ``hsl(h, 60%, 45%)``. :func:`color_for` gives the same
colours as ``#rrggbb`` strings (what matplotlib and any other drawing library take), the ``hsl()``
ones converted to sRGB as the browser does (CSS Color 4, rounded to 8 bits).

The tab numbers the groups in the order of the keys of the ``/runs`` listing's ``groups`` object,
which the backend writes sorted (``compute.engine._members``) and the page reads with ``Object.keys``. A
JavaScript object lists its integer-like keys ("0", "7", "12") first, in numeric order, and its
other keys after them in the order written; :func:`group_order` repeats that, so that groups named
by a number (``group_by=regex:seed_(\\d+)``) get the tab's colours too. For any other names it is
``sorted(groups)``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

# traces.js's PALETTE, in its order.
PALETTE = (
    "#1a73e8",
    "#e8710a",
    "#1e8e3e",
    "#d93025",
    "#9334e6",
    "#12b5cb",
    "#e52592",
    "#f9ab00",
    "#425066",
    "#7cb342",
)
_GOLDEN_ANGLE = 137.508  # degrees between the hues of consecutive groups past the palette
_SATURATION, _LIGHTNESS = 0.60, 0.45
# A JavaScript array index: a canonical non-negative integer below 2**32 - 1.
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")
_MAX_ARRAY_INDEX = 2**32 - 2


def color_for(index: int) -> str:
    """The tab's colour of the ``index``-th group, as ``#rrggbb``."""
    if index < 0:
        raise ValueError(f"a group index is >= 0, not {index}")
    if index < len(PALETTE):
        return PALETTE[index]
    # Math.round(x) is floor(x + 0.5) (halves go up), unlike Python's round (halves to even).
    hue = math.floor(math.fmod(index * _GOLDEN_ANGLE, 360) + 0.5)
    return _hex(_hsl_to_rgb(hue, _SATURATION, _LIGHTNESS))


def group_order(groups: Iterable[str]) -> list[str]:
    """The groups in the order the tab numbers them (its colour ``i`` goes to the ``i``-th)."""
    names = sorted(groups)
    indices = [g for g in names if _ARRAY_INDEX.fullmatch(g) and int(g) <= _MAX_ARRAY_INDEX]
    taken = set(indices)
    return sorted(indices, key=int) + [g for g in names if g not in taken]


def group_colors(groups: Iterable[str]) -> dict[str, str]:
    """``{group: colour}`` as the tab gives them, in :func:`group_order`."""
    return {g: color_for(i) for i, g in enumerate(group_order(groups))}


def _hsl_to_rgb(hue: float, saturation: float, lightness: float) -> tuple[float, float, float]:
    """CSS Color 4's ``hslToRgb``: each channel in [0, 1]."""
    a = saturation * min(lightness, 1 - lightness)

    def channel(n: int) -> float:
        k = (n + hue / 30) % 12
        return lightness - a * max(-1.0, min(k - 3, 9 - k, 1.0))

    return channel(0), channel(8), channel(4)


def _hex(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{min(255, max(0, math.floor(c * 255 + 0.5))):02x}" for c in rgb)
