"""Execute every chapter (as `make notebooks` does, single-threaded, in a fresh kernel) and print its wall time
next to its budget in book.toml. Outputs are discarded: this never rewrites the committed notebooks."""
from __future__ import annotations

import os
from pathlib import Path

import nbformat

from vrs_edu.course.book import ROOT, chapters
from vrs_edu.course.execute import execute_notebook


def run(args) -> None:
    os.environ.setdefault("VRS_EDU_THREADS", "1")
    total = 0.0
    print(f"{'chapter':32s} {'time':>8s} {'budget':>8s}  ratio")
    for c in chapters():
        path = ROOT / "notebooks" / c.file
        nb = nbformat.read(path, as_version=4)
        dt = execute_notebook(nb, path.parent, timeout=900).wall_s
        total += dt
        flag = "" if dt <= c.budget_s else "  OVER BUDGET"
        print(f"{c.stem:32s} {dt:7.1f}s {c.budget_s:7d}s  {dt / c.budget_s:5.2f}{flag}", flush=True)
    print(f"{'whole course':32s} {total:7.1f}s")
