"""The plot of RESULTS.md: cold time and peak memory against the number of points, ours and the peer."""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

MARKERS = {"runs": "o", "steps": "s", "main": "*"}


def _series(results: dict) -> list[dict]:
    rows = [dict(r) for r in results.get("sweep", [])]
    c = results.get("cold")
    if c:
        s = results["scenario"]
        row = {
            "axis": "main",
            "points": s["points"],
            "ours_wall": c["ours"]["wall"],
            "ours_peak_tree_rss": c["ours"]["peak_tree_rss"],
        }
        if "peer" in c:
            row.update(peer_wall=c["peer"]["wall"], peer_peak_tree_rss=c["peer"]["peak_tree_rss"])
        rows.append(row)
    return rows


def plot(results: dict, path: str) -> str:
    """Write the two-panel PNG to ``path``; returns it."""
    rows = _series(results)
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(11, 4.4))
    labels = {
        "runs": "more runs (1,000 steps)",
        "steps": "more steps (10 runs)",
        "main": "200 runs x 5,000 steps",
    }
    for side, color, name in (("ours", "tab:blue", "tb-aggregate"), ("peer", "tab:red", "tb-reducer")):
        for axis, marker in MARKERS.items():
            pts = [r for r in rows if r["axis"] == axis and f"{side}_wall" in r]
            if not pts:
                continue
            pts.sort(key=lambda r: r["points"])
            x = [r["points"] for r in pts]
            kw = dict(color=color, marker=marker, linestyle="-" if axis != "main" else "none", markersize=9)
            ax_t.plot(x, [r[f"{side}_wall"] for r in pts], label=f"{name}: {labels[axis]}", **kw)
            ax_m.plot(x, [r[f"{side}_peak_tree_rss"] / 1e6 for r in pts], **kw)
            if side == "peer":  # where it kept only a sample of the points, say so on the chart
                for r in pts:
                    if isinstance(r.get("max_abs_difference"), str):
                        for ax, key, k in ((ax_t, "peer_wall", 1), (ax_m, "peer_peak_tree_rss", 1e6)):
                            ax.plot(
                                r["points"],
                                r[key] / k,
                                marker=marker,
                                markersize=15,
                                color="white",
                                markeredgecolor=color,
                                linestyle="none",
                            )
                            ax.annotate(
                                "tb-reducer kept\n10,000 steps per\nseries only",
                                (r["points"], r[key] / k),
                                textcoords="offset points",
                                xytext=(-95, -28),
                                fontsize=7,
                                color=color,
                            )
    # A line of slope 1 through our largest point: what "linear in points" looks like.
    ours = [r for r in rows if "ours_wall" in r]
    if ours:
        top = max(ours, key=lambda r: r["points"])
        xs = np.array([min(r["points"] for r in ours), top["points"]], dtype=float)
        ax_t.plot(
            xs, top["ours_wall"] * xs / top["points"], color="gray", linestyle=":", label="linear in points"
        )
    _log_axes(ax_t, "cold: logdir -> CSV, wall time", "seconds", "scalar points in the logdir")
    _log_axes(ax_m, "cold: peak memory (process tree)", "MB", "scalar points in the logdir")
    ax_t.legend(fontsize=7, loc="upper left")
    return _save(fig, path)


def plot_scale(results: dict, path: str) -> str:
    """The PNG of ``scale.py``: wall time and peak memory against points, each checkout and tb-reducer,
    with what linear time and the memory goal (300 MB + 12 bytes per point) look like."""
    rows = results["sizes"]
    points = np.array([r["points"] for r in rows], dtype=float)
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(11, 4.4))
    styles = {
        "after": dict(color="tab:blue", linestyle="-"),
        "before": dict(color="tab:gray", linestyle="--"),
    }
    for name in results["codes"]:
        style = styles.get(name, dict(color="tab:green", linestyle="-."))
        walls = [r["ours"][name]["wall"] for r in rows]
        peaks = [r["ours"][name]["peak_tree_rss"] / 1e6 for r in rows]
        label = f"tb-aggregate ({name})"
        ax_t.plot(points, walls, marker="o", label=label, **style)
        ax_m.plot(points, peaks, marker="o", label=label, **style)
    peer = [r for r in rows if "peer" in r]
    if peer:
        x = [r["points"] for r in peer]
        ax_t.plot(x, [r["peer"]["wall"] for r in peer], marker="s", color="tab:red", label="tb-reducer")
        ax_m.plot(
            x,
            [r["peer"]["peak_tree_rss"] / 1e6 for r in peer],
            marker="s",
            color="tab:red",
            label="tb-reducer",
        )
        for r in peer:
            if isinstance(r.get("max_abs_difference"), str):  # it kept a sample of the steps
                ax_t.annotate(
                    "tb-reducer kept\n10,000 steps per\nseries only",
                    (r["points"], r["peer"]["wall"]),
                    textcoords="offset points",
                    xytext=(8, -30),
                    fontsize=7,
                    color="tab:red",
                )
    if "after" in results["codes"]:
        first = rows[0]["ours"]["after"]["wall"]
        ax_t.plot(
            points, first * points / points[0], color="black", linestyle=":", label="linear from the first"
        )
    ax_m.plot(
        points, (300e6 + 12 * points) / 1e6, color="black", linestyle=":", label="300 MB + 12 bytes per point"
    )
    for ax, title, unit in (
        (ax_t, "logdir -> CSV, wall time (median)", "seconds"),
        (ax_m, "peak memory of the process tree", "MB"),
    ):
        _log_axes(ax, title, unit, "scalar points (200 runs x 5 tags)")
        ax.legend(fontsize=7, loc="upper left")
    return _save(fig, path)


def _log_axes(ax, title: str, unit: str, xlabel: str) -> None:
    """Both axes logarithmic, labelled, titled and gridded."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(unit)
    ax.set_title(title, fontsize=11)
    ax.grid(True, which="both", alpha=0.3)


def _save(fig, path: str) -> str:
    """``fig`` written as a PNG to ``path`` (its folder made), then closed; returns ``path``."""
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
