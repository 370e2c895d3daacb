"""The bootstrap band and the comparison in a running ``tensorboard``, end to end (request to answer).

Targets: a chart request with ``band=boot95`` on a group of 10 runs x 5,000 steps under 1 s; the
``/export`` of every tag of the 200-run logdir (one group of 200 runs x 5 tags x 5,000 steps) with
``band=boot95`` under 10 s; a ``/compare`` of that logdir's groups. Each is timed cold (first request:
the series are read) and warm (a new seed: only the statistics are computed again).

    python benchmarks/significance.py            # the logdirs are written under .cache/ when missing
"""

from __future__ import annotations

import os
import sys
import time

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import generate  # noqa: E402
import warm  # noqa: E402

AGG = "/data/plugin/aggregate"


def _timed(url: str, **params) -> float:
    start = time.perf_counter()
    response = requests.get(url, params=params, timeout=600)
    elapsed = time.perf_counter() - start
    response.raise_for_status()
    return elapsed


def main() -> None:
    small = generate.ensure(10, 1, 5000)
    tag = generate.tag_names(1)[0]
    with warm.tensorboard(small, load_fast=True, samples=0, expect_runs=10) as (base, _):
        for center in ("mean", "median", "iqm"):
            params = {"tag": tag, "group_by": "none", "center": center, "band": "boot95"}
            cold = _timed(f"{base}{AGG}/aggregate", **params)
            again = _timed(f"{base}{AGG}/aggregate", **params, seed=1)
            what = f"chart, 10 runs x 5,000 steps, boot95 of the {center}"
            print(f"{what}: {cold:.3f} s, new seed {again:.3f} s")
    big = generate.ensure(200, 5, 5000)
    with warm.tensorboard(big, load_fast=True, samples=0, expect_runs=200) as (base, _):
        params = {"group_by": "none", "band": "boot95"}
        cold = _timed(f"{base}{AGG}/export", **params)
        again = _timed(f"{base}{AGG}/export", **params, seed=1)
        print(f"/export, 200 runs x 5 tags x 5,000 steps, boot95: {cold:.2f} s, new seed {again:.2f} s")
        params = {"tag": generate.tag_names(1)[0], "group_by": "regex:run_00(\\d)", "score": "auc"}
        cold = _timed(f"{base}{AGG}/compare", **params)
        print(f"/compare, 10 groups of 20 runs x 5,000 steps (auc): {cold:.2f} s")


if __name__ == "__main__":
    main()
