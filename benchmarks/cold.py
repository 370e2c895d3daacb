"""Cold: a logdir on disk to a reduced CSV, in a fresh process, ours against tensorboard-reducer.

Ours: ``tb-aggregate LOGDIR -o OUT.csv --group-by none --reductions mean,std,min,max,median``.
Peer: ``tb-reducer LOGDIR/* -o OUT.csv -r mean,std,min,max,median``. Both reduce every run of the
logdir into one group, with the same statistics; the two CSVs are checked to hold the same numbers.
"""

from __future__ import annotations

import glob
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig

import measure
import numpy as np
import pandas as pd

OPS = "mean,std,min,max,median"


def command(name: str) -> str | None:
    """The installed command ``name`` of this Python environment (its scripts folder, as an activated
    venv finds it), else the one on PATH. Both sides are started the same way; a PATH wrapper such as
    a pyenv shim (a shell script that starts ``pyenv exec``) would add 0.05-0.07 s to every start."""
    own = os.path.join(sysconfig.get_path("scripts"), name)
    return own if os.access(own, os.X_OK) else shutil.which(name)


def has_cli() -> bool:
    """Whether the ``tb-aggregate`` command is installed and answers."""
    exe = command("tb-aggregate")
    if exe is None:
        return False
    return subprocess.run([exe, "--help"], capture_output=True).returncode == 0


def ours_command(logdir: str, out: str) -> list[str]:
    if has_cli():
        options = ["--group-by", "none", "--reductions", OPS, "--force", "-q"]
        return [command("tb-aggregate"), logdir, "-o", out, *options]
    # Before the CLI exists: the same engine calls, in a fresh interpreter.
    code = (
        "import sys, tb_aggregate_plugin as t; "
        "from tb_aggregate_plugin.write import table_text as export; "
        f"r = t.compute(sys.argv[1], t.Query(group_by='none', reductions={OPS!r})); "
        "open(sys.argv[2], 'wb').write(export.to_csv(r.table()))"
    )
    return [sys.executable, "-c", code, logdir, out]


def peer_command(logdir: str, out: str) -> list[str]:
    runs = sorted(p for p in glob.glob(os.path.join(logdir, "*")) if os.path.isdir(p))
    return [command("tb-reducer") or "tb-reducer", *runs, "-o", out, "-r", OPS, "-f"]


def same_numbers(ours_csv: str, peer_csv: str) -> float:
    """Largest absolute difference between the two tables' statistics (they must cover the same steps)."""
    ours = pd.read_csv(ours_csv)
    peer = pd.read_csv(peer_csv, header=[0, 1], index_col=0)
    worst = 0.0
    for tag, op in peer.columns:
        mine = ours[ours["tag"] == tag].set_index("step")[op]
        theirs = peer[(tag, op)]
        if list(mine.index) != list(theirs.index):
            raise AssertionError(
                f"{tag}: tb-reducer's table has {len(theirs):,} steps, ours {len(mine):,} (every step logged)"
            )
        worst = max(worst, float(np.max(np.abs(mine.to_numpy() - theirs.to_numpy()))))
    return worst


def compare(ours_csv: str, peer_csv: str) -> float | str:
    """:func:`same_numbers`, or what differs when the tables do not cover the same steps."""
    try:
        return same_numbers(ours_csv, peer_csv)
    except AssertionError as exc:
        return f"tables differ: {exc}"


def measure_side(cmd: list[str], repeats: int) -> dict:
    """``repeats`` runs of a command: every wall time and peak, and their medians."""
    runs = []
    for _ in range(repeats):
        m = measure.run(cmd)
        if m.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd[:3])} ... failed ({m.returncode}): {m.stderr[-2000:]}")
        runs.append(m.as_dict())
    return {
        "command": " ".join(cmd if len(cmd) < 12 else cmd[:3] + ["..."] + cmd[-5:]),
        "runs": runs,
        "wall": statistics.median(r["wall"] for r in runs),
        "peak_tree_rss": statistics.median(r["peak_tree_rss"] for r in runs),
        "max_single_rss": statistics.median(r["max_single_rss"] for r in runs),
    }


def cold(logdir: str, out_dir: str, *, repeats: int = 3, peer_repeats: int = 1, peer: bool = True) -> dict:
    """Measure both sides on ``logdir``; ratios are peer / ours (time) and ours / peer (memory)."""
    os.makedirs(out_dir, exist_ok=True)
    ours_csv, peer_csv = os.path.join(out_dir, "ours.csv"), os.path.join(out_dir, "peer.csv")
    result = {"logdir": logdir, "ours": measure_side(ours_command(logdir, ours_csv), repeats)}
    result["ours"]["via"] = "tb-aggregate" if has_cli() else "python -c (engine calls)"
    if peer:
        result["peer"] = measure_side(peer_command(logdir, peer_csv), peer_repeats)
        result["max_abs_difference"] = compare(ours_csv, peer_csv)
        result["speedup"] = result["peer"]["wall"] / result["ours"]["wall"]
        result["memory_ratio"] = result["ours"]["peak_tree_rss"] / result["peer"]["peak_tree_rss"]
    return result
