"""Markdown tables of one or more ``run.py`` results, side by side, for RESULTS.md.

python benchmarks/report.py benchmarks/out/results-A.json benchmarks/out/results-B.json
"""

from __future__ import annotations

import json
import sys

import run as bench


def _mb(n: float) -> str:
    return f"{n / 1e6:,.0f} MB"


def _row(cells: list) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _table(header: list[str], rows: list[list]) -> str:
    return "\n".join([_row(header), _row(["---"] * len(header))] + [_row(r) for r in rows])


def summary(results: list[dict]) -> str:
    names = list(results[0]["ratios"])
    header = ["ratio", "target"] + [f"run {i + 1}" for i in range(len(results))]
    rows = []
    for name in names:
        _, target, higher, unit = results[0]["ratios"][name]
        cells = [name, (">= " if higher else "<= ") + (f"{target:g}{unit}" if unit else f"{target:.3g}")]
        for r in results:
            value = r["ratios"].get(name, (None,))[0]
            if value is None:
                cells.append("n/a")
                continue
            shown = f"{value:.1f}{unit}" if unit else f"{value:.3f}"
            cells.append(f"{shown} ({bench.verdict(value, target, higher)})")
        rows.append(cells)
    return _table(header, rows)


def cold(results: list[dict]) -> str:
    rows = []
    for i, r in enumerate(results):
        for key, layout in (("cold", "one event per step"), ("cold_per_value", "one event per value")):
            c = r.get(key)
            if not c:
                continue
            for side, name in (("ours", "tb-aggregate"), ("peer", "tb-reducer")):
                if side not in c:
                    continue
                s = c[side]
                walls = ", ".join(f"{x['wall']:.2f}" for x in s["runs"])
                rows.append(
                    [
                        f"run {i + 1}",
                        layout,
                        name,
                        f"{s['wall']:.2f} s ({walls})",
                        _mb(s["peak_tree_rss"]),
                        _mb(s["max_single_rss"]),
                    ]
                )
    return _table(
        ["", "logdir", "side", "wall (median; each)", "peak RSS, process tree", "largest single process"],
        rows,
    )


def warm(results: list[dict]) -> str:
    rows = []
    for i, r in enumerate(results):
        for w in r.get("warm", []):
            o, p = w["ours"], w["peer"]
            rows.append(
                [
                    f"run {i + 1}",
                    w["loader"],
                    f"{p['multirun_all_tags']:.2f} s",
                    f"{o['export_first']:.2f} s",
                    f"{o['export_repeat']:.2f} s",
                    f"{o['export_smoothing']:.2f} s",
                    f"{o['chart_first'] * 1e3:.0f} ms",
                    ", ".join(f"{k} {v:.2f}" for k, v in o["second_over_first_median"].items()),
                    ", ".join(f"{k} {v:.2f}" for k, v in o["second_over_first"].items()),
                ]
            )
    header = [
        "",
        "loader",
        "scalars plugin, 5 tags x all runs",
        "/export first",
        "/export again",
        "/export smoothing",
        "/aggregate first (median tag)",
        "second / first, median tag",
        "second / first, worst tag",
    ]
    return _table(header, rows)


def sweep(results: list[dict]) -> str:
    rows = []
    for i, r in enumerate(results):
        for s in r.get("sweep", []):
            peer = f"{s['peer_wall']:.2f} s, {_mb(s['peer_peak_tree_rss'])}" if "peer_wall" in s else "-"
            diff = s.get("max_abs_difference")
            same = "-" if diff is None else (f"yes (within {diff:.0e})" if isinstance(diff, float) else diff)
            rows.append(
                [
                    f"run {i + 1}",
                    s["axis"],
                    f"{s['runs']:,}",
                    f"{s['steps']:,}",
                    f"{s['points']:,}",
                    _mb(s["bytes"]),
                    f"{s['ours_wall']:.2f} s",
                    _mb(s["ours_peak_tree_rss"]),
                    peer,
                    same,
                ]
            )
    header = [
        "",
        "axis",
        "runs",
        "steps",
        "points",
        "event files",
        "tb-aggregate",
        "its peak RSS",
        "tb-reducer",
        "same numbers",
    ]
    return _table(header, rows)


def browser(results: list[dict]) -> str:
    rows = []
    for i, r in enumerate(results):
        b = r.get("browser")
        if not b or "skipped" in b:
            rows.append([f"run {i + 1}", (b or {}).get("skipped", "not run")] + [""] * 4)
            continue
        rows.append(
            [
                f"run {i + 1}",
                f"{b['visible_drawn']}/{b['visible']} of {b['cards']}",
                f"{b['first_arrival_to_all_drawn_ms']:.0f} ms "
                f"(worst {b['worst_first_arrival_to_all_drawn_ms']:.0f})",
                f"{b['max_per_card_ms']:.0f} ms",
                f"{b['tab_arrival_to_all_drawn_ms']:.0f} ms",
                f"{b['open_to_all_drawn_ms']:.0f} ms",
            ]
        )
    header = [
        "",
        "visible charts drawn",
        "first data arrival -> all visible drawn",
        "slowest chart, its data -> drawn",
        "the tab's own mark",
        "tab open -> all drawn",
    ]
    return _table(header, rows)


def main(paths: list[str]) -> None:
    results = [json.load(open(p)) for p in paths]
    for r, p in zip(results, paths):
        m = r["machine"]
        print(
            f"- {p}: started {r['started']}, load average at start {m['load_average_at_start'][0]:.2f}, "
            f"{r['seconds'] / 60:.1f} min"
        )
    for title, part in (
        ("Summary", summary),
        ("Cold", cold),
        ("Warm", warm),
        ("Sweep", sweep),
        ("Browser", browser),
    ):
        print(f"\n### {title}\n")
        print(part(results))


if __name__ == "__main__":
    main(sys.argv[1:])
