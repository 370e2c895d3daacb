"""The figure of docs/figure.png: demo_logs/ drawn for a paper by tb_aggregate_plugin.write.figure.

Three learning rates x five seeds, four tags, the mean of each group with its 95% confidence
interval (Student t), in the tab's colours; dashed where fewer runs than the group stand behind a
point (lr=0.03/seed_4 stops early, lr=0.1/seed_3 diverges to NaN).

Usage: python scripts/make_figure.py [--out docs/figure.png] [--logdir demo_logs] [--band ci95]
(``--out`` takes .png, .pdf or .svg).
"""

from __future__ import annotations

import argparse
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

import tb_aggregate_plugin as tba  # noqa: E402
from tb_aggregate_plugin.write import figure  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(REPO, "docs", "figure.png"))
    parser.add_argument("--logdir", default=os.path.join(REPO, "demo_logs"))
    parser.add_argument("--band", default="ci95")
    parser.add_argument("--cols", type=int, default=2)
    parser.add_argument("--dpi", type=float, default=200)
    args = parser.parse_args(argv)

    figure.check_available()
    result = tba.compute(args.logdir, tba.Query(band=args.band))
    fig = figure.draw(result, cols=args.cols)
    figure.save(fig, args.out, dpi=args.dpi)
    print(f"{len(result.tags)} tags, {len(result.groups)} groups -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
