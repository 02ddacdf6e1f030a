"""Execute chapters' sources (notebooks/NN_name.py) several times in a row (single-threaded, a fresh kernel each
time, outputs discarded) and report, for each run, the longest time the client took to see a cell's reply after the
kernel sent it. A healthy run waits milliseconds; a lost wake-up shows as a wait of about the cell timeout (see
vrs_edu.course.execute).

``python -m vrs_edu.bench stalls`` runs every chapter ``--repeat`` times (default 5; 1 with ``--quick``);
``python -m vrs_edu.bench.stalls --repeat 3 --client nbclient 04 07`` picks chapters and compares with plain nbclient.
"""
from __future__ import annotations

import argparse
import os
import sys

import jupytext
from nbclient import NotebookClient

from vrs_edu.course.book import ROOT, chapters
from vrs_edu.course.execute import CourseNotebookClient, execute_notebook

STALL_S = 1.0       # a reply seen more than this long after it was sent counts as a stall
CLIENTS = {"course": CourseNotebookClient, "nbclient": NotebookClient}


def measure(stems: list[str] | None = None, repeat: int = 5, client: str = "course", timeout: int = 600) -> list[dict]:
    """Run each chapter (all when ``stems`` is None; a stem may be its number, "04") ``repeat`` times; print one line
    per run and return them as dicts (chapter, run, wall_s, longest_wait_s, cell, after_widget, stalls)."""
    # the kernels inherit this environment: the same settings as `make notebooks` (the Makefile's NB_ENV)
    for k, v in (("VRS_EDU_THREADS", "1"), ("OMP_NUM_THREADS", "1"), ("PYTHONHASHSEED", "0"), ("TQDM_DISABLE", "1"),
                 ("MPLBACKEND", "module://matplotlib_inline.backend_inline")):
        os.environ.setdefault(k, v)
    picked = [c for c in chapters() if not stems or any(c.stem.startswith(s) for s in stems)]
    rows = []
    print(f"client: {client}; a wait over {STALL_S:g} s counts as a stall; cell timeout {timeout} s")
    print(f"{'chapter':28s} {'run':>3s} {'time':>7s} {'longest wait':>13s}  cell  stalls")
    for c in picked:
        path = ROOT / "notebooks" / f"{c.stem}.py"        # the source: what the chapter is now
        for r in range(repeat):
            nb = jupytext.read(path)
            run = execute_notebook(nb, path.parent, timeout=timeout, client_class=CLIENTS[client])
            w = run.longest
            stalls = sum(x.wait_s > STALL_S for x in run.waits)
            rows.append({"chapter": c.stem, "run": r, "wall_s": run.wall_s, "longest_wait_s": w.wait_s,
                         "cell": w.index, "after_widget": w.after_widget, "stalls": stalls})
            where = f"{w.index:4d}{'w' if w.after_widget else ' '}"
            print(f"{c.stem:28s} {r:3d} {run.wall_s:6.1f}s {w.wait_s:12.3f}s {where} {stalls:5d}", flush=True)
    worst = max(rows, key=lambda x: x["longest_wait_s"])
    print(f"longest wait over {len(rows)} runs: {worst['longest_wait_s']:.3f} s ({worst['chapter']} run "
          f"{worst['run']}, cell {worst['cell']}); runs with a stall: {sum(x['stalls'] > 0 for x in rows)}")
    return rows


def run(args) -> None:
    measure(repeat=1 if getattr(args, "quick", False) else 5)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vrs_edu.bench.stalls", description=__doc__.splitlines()[0])
    ap.add_argument("chapters", nargs="*", help="chapter numbers or stems (default: all)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--client", choices=sorted(CLIENTS), default="course")
    ap.add_argument("--timeout", type=int, default=600, help="seconds one cell may run")
    args = ap.parse_args(argv)
    measure(args.chapters or None, args.repeat, args.client, args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
