"""Reproduce recipes against their time budgets: a full run must finish in 20 minutes on the 2-core course machine,
a ``--quick`` run in 2 minutes.

A full run is too long for a benchmark, so its line reports what the run itself recorded in ``data/results/`` (wall
and CPU time, thread count, load average when it started and ended: a wall time measured on a busy machine says
so). To re-time one, rerun it: ``time vrs-edu reproduce NAME``. The quick runs are executed here, into a temporary
folder, so the committed results are never touched.
"""
from __future__ import annotations

import tempfile
import time

from ..lab.experiments import RECIPES, _load_recipes, load_results, run_recipe

FULL_BUDGET_S = 20 * 60
QUICK_BUDGET_S = 2 * 60


def _flag(seconds: float, budget: float) -> str:
    return "" if seconds <= budget else "  OVER BUDGET"


def run(args) -> None:
    _load_recipes()
    print("full runs, as recorded in data/results/ (budget 20 min):")
    print(f"  {'recipe':18s} {'wall':>8s} {'ratio':>6s} {'CPU':>8s} {'threads':>7s}  load (start, end)")
    for name in sorted(RECIPES):
        try:
            r = load_results(name)
        except FileNotFoundError as e:
            print(f"  {name:18s} no result: {e}")
            continue
        wall, env = r["wall_time_s"], r["environment"]
        cpu = f"{r['cpu_time_s'] / 60:6.1f}m" if "cpu_time_s" in r else "      -"
        print(f"  {name:18s} {wall / 60:7.1f}m {wall / FULL_BUDGET_S:6.2f} {cpu:>8s} {env['threads']:7d}  "
              f"{env.get('load_average_1m', '-')}{_flag(wall, FULL_BUDGET_S)}", flush=True)
    print("quick runs, executed now (budget 2 min):")
    with tempfile.TemporaryDirectory() as out:
        for name in sorted(RECIPES):
            t0 = time.perf_counter()
            run_recipe(name, quick=True, out_dir=out)
            dt = time.perf_counter() - t0
            print(f"  {name:18s} {dt:7.1f}s {dt / QUICK_BUDGET_S:6.2f}{_flag(dt, QUICK_BUDGET_S)}", flush=True)
