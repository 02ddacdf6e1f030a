"""Reproduce recipes against their time budgets: a full run must finish in 20 minutes on the 2-core course machine,
a ``--quick`` run in 2 minutes.

A full run is too long for a benchmark, so its line reports what the run itself recorded in ``data/results/`` (wall
and CPU time, thread count, load average when it started and ended: a wall time measured on a busy machine says
so, and how many runs it trained at a time: ``jobs``). To re-time one, rerun it: ``time vrs-edu reproduce NAME``. The
quick runs are executed here, into a temporary folder, so the committed results are never touched. Under each
recorded line, :func:`utilisation` says where its wall time went: both shares high, the run was limited by its CPU
work; workers inside their training loops but cores not busy, other load on the machine took the cores; workers
outside their loops, serial sections or idle workers.

``--jobs``: a reduced but representative set of runs — the value-residual recipe's corpus runs (word-8x64, its
full per-run schedule), 2 variants × 2 seeds — is timed in 2 worker processes at one torch thread each, and one
after another at 2 threads and at 1, side by side: the three settings run in the order A B C C B A and each one's
time is the sum of its two passes, so that a load that rises or falls steadily during the benchmark weighs on all
three alike (a ratio of two times measured minutes apart on a shared machine says more about the machine than
about the code); parallel / sequential at 2 threads should be <= 0.7. The
one-thread line says how much of that comes from running two at once and how much from what a second thread does
to one run (on a busy machine two threads can be slower than one: each waits for the other to be scheduled).
"""
from __future__ import annotations

import json
import os
import tempfile
import time

import torch

from vrs_edu.chapters.ch03_value_residual.recipe import CORPUS, VARIANTS
from vrs_edu.lab.experiments import RESULTS_DIR, compare_variants, load_results, run_recipe
from vrs_edu.lab.parallel import worker_count
from vrs_edu.recipes import RECIPES

FULL_BUDGET_S = 20 * 60
QUICK_BUDGET_S = 2 * 60


def _flag(seconds: float, budget: float) -> str:
    """Empty within the budget, else how far over it (a wall time from a shared machine: read the load beside it)."""
    return "" if seconds <= budget else f"  OVER BUDGET by {(seconds - budget) / 60:.1f}m"


def _load() -> str:
    try:
        return "load average 1/5/15 min: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return "load average: unknown"


def parallel_vs_sequential(steps: int, variants=("baseline", "resformer"), seeds=(0, 1)) -> dict:
    """Wall time of the same runs with ``jobs=2`` (one torch thread per worker), and one after another at 2 torch
    threads and at 1: the value-residual recipe's corpus runs of ``variants`` × ``seeds``, ``steps`` steps each."""
    runs = {v: {**CORPUS["train"], "steps": steps, **VARIANTS[v]} for v in variants}
    out = {"runs": len(variants) * len(seeds), "steps": steps}
    settings = (("sequential", 1, 2), ("parallel", 2, 1), ("sequential_1_thread", 1, 1))
    before = torch.get_num_threads()
    try:
        for label, jobs, threads in settings + settings[::-1]:        # A B C C B A: side by side
            torch.set_num_threads(threads)
            out.setdefault(f"load_{label}", []).append(_load())
            t0 = time.perf_counter()
            compare_variants(CORPUS["preset"], runs, list(seeds), jobs=jobs, metric_batches=4)
            out[label] = out.get(label, 0.0) + time.perf_counter() - t0
    finally:
        torch.set_num_threads(before)
    for label, _, _ in settings:
        out[f"load_{label}"] = "; ".join(out[f"load_{label}"])
    return out


def _runs(r: dict) -> list[dict]:
    """Every trained run a recipe result holds (``part["runs"][variant]`` lists, in any top-level part)."""
    return [run for part in r.values() if isinstance(part, dict) and isinstance(part.get("runs"), dict)
            for runs in part["runs"].values() if isinstance(runs, list)
            for run in runs if isinstance(run, dict) and "wall_time_s" in run.get("history", {})]


def utilisation(r: dict) -> dict | None:
    """Where a recorded full run's wall time went, from what its file holds (no new measurement):

    * ``busy``: CPU time / (wall time × ``jobs``), the share of the cores' time the run used. Below 1: the cores
      waited (a serial section, an idle worker) or other programs had them.
    * ``in_runs``: the runs' own training-loop wall times (``history.wall_time_s``, measured inside the workers)
      summed, over wall time × the worker count (:func:`~vrs_edu.lab.parallel.worker_count`): the share of the
      workers' wall time spent inside a training loop. Near 1: no worker sat idle and nothing ran serially for
      long; the rest is the per-run evaluations after training and the parent's own work (data, step timing).
    * ``idle_machine_s``: CPU time / ``jobs`` (seconds), what the wall time would be with every core busy on this
      run alone: a projection, not a measurement (CPU time hardly changes with other load; wall time does).

    ``in_runs`` high while ``busy`` is low means the runs themselves were descheduled: other load on the machine,
    not a fault of the schedule. None for a result without CPU time or runs (made before they were recorded).
    """
    runs = _runs(r)
    if "cpu_time_s" not in r or not runs or not r.get("wall_time_s"):
        return None
    jobs = r["environment"].get("jobs", 1)
    workers = worker_count(len(runs), jobs) if jobs > 1 else 1
    wall = r["wall_time_s"]
    return {"busy": r["cpu_time_s"] / (wall * jobs),
            "in_runs": sum(run["history"]["wall_time_s"] for run in runs) / (wall * workers),
            "idle_machine_s": r["cpu_time_s"] / jobs, "runs": len(runs), "workers": workers}


def _recorded_line(label: str, r: dict) -> None:
    """One full run as its result file recorded it: wall and CPU time against the recipe's budget (20 min, the
    depth sweep 30: ``Recipe.budget_s``), threads, jobs, load; a projection when it was recorded on a machine with
    another number of cores."""
    wall, env = r["wall_time_s"], r["environment"]
    budget = RECIPES[r["recipe"]].budget_s if r.get("recipe") in RECIPES else FULL_BUDGET_S
    cpu = f"{r['cpu_time_s'] / 60:6.1f}m" if "cpu_time_s" in r else "      -"
    # CPU time over the workers: what the wall time would be if every worker were busy all the time and nothing
    # else ran. Other jobs on the machine lengthen the wall time (the load columns say when) but hardly the CPU
    # time, so this column is a lower bound for the same run on an idle machine, not a measurement.
    jobs = env.get("jobs", 1)
    ideal = f"{r['cpu_time_s'] / jobs / 60:6.1f}m" if "cpu_time_s" in r else "      -"
    print(f"  {label:18s} {wall / 60:7.1f}m {wall / budget:6.2f} {cpu:>8s} {ideal:>9s} {env['threads']:7d} "
          f"{jobs:4d}  {env.get('load_average_1m', '-')}{_flag(wall, budget)}", flush=True)
    u = utilisation(r)
    if u is not None:   # why the wall time is what it is (see utilisation): the cores' use, the workers' use
        budget_note = _flag(u["idle_machine_s"], budget) or "  within budget"
        print(f"  {'':18s} cores busy {u['busy']:.0%}, workers inside training loops {u['in_runs']:.0%} "
              f"({u['runs']} runs, {u['workers']} workers); CPU/jobs, a lower bound on an idle machine: "
              f"{u['idle_machine_s'] / 60:.1f}m{budget_note}", flush=True)
    if env.get("cpu_count") != os.cpu_count() and "cpu_time_s" in r:
        # A wall time from a machine with more cores says nothing about the budget here. Its CPU time spread
        # over this machine's cores is a projection, not a measurement (per-core speed differs between machines).
        projected = r["cpu_time_s"] / (os.cpu_count() or 1)
        print(f"  {'':18s} recorded on a {env.get('cpu_count')}-core machine ({env.get('python')}, torch "
              f"{env.get('torch')}): not timed here; its CPU time over {os.cpu_count()} cores projects "
              f"{projected / 60:.1f}m{_flag(projected, budget)} (to measure: {r.get('command', label)})",
              flush=True)


def run(args) -> None:
    steps = 60 if getattr(args, "quick", False) else 240
    print(f"--jobs 2 (1 thread each) vs one after another at 2 threads, 2 variants x 2 seeds of value-residual's "
          f"corpus runs, {steps} steps each (a reduced set: the full recipe trains more runs of the same kind); "
          "side by side, in the order A B C C B A, each time the sum of its two passes:")
    r = parallel_vs_sequential(steps)
    print(f"  sequential, 2 threads: {r['sequential']:7.1f}s  ({r['load_sequential']})")
    print(f"  parallel, --jobs 2:    {r['parallel']:7.1f}s  ({r['load_parallel']})")
    print(f"  sequential, 1 thread:  {r['sequential_1_thread']:7.1f}s  ({r['load_sequential_1_thread']})")
    print(f"  ratio parallel / sequential at 2 threads: {r['parallel'] / r['sequential']:.3f}  (target <= 0.7)")
    print(f"  ratio parallel / sequential at 1 thread:  {r['parallel'] / r['sequential_1_thread']:.3f}  (2 workers: "
          f"0.5 at best; above it: start-up and pickling)")
    print(f"  sequential 1 thread / 2 threads: {r['sequential_1_thread'] / r['sequential']:.3f}  (what a second thread "
          f"buys one run; on a busy machine two threads can be slower than one)", flush=True)
    print("full runs, as recorded in data/results/ (budget 20 min, depth-sweep 30; CPU/jobs = the CPU time spread "
          "over the workers,"
          "\n  the wall time on an idle machine if no worker ever waited: a lower bound, not a measurement):")
    print(f"  {'recipe':18s} {'wall':>8s} {'/budget':>6s} {'CPU':>8s} {'CPU/jobs':>9s} {'threads':>7s} {'jobs':>4s}  "
          "load (start, end)")
    for name in sorted(RECIPES):
        try:
            r = load_results(name, corpus="")
        except FileNotFoundError as e:
            if any(RESULTS_DIR.glob(f"{name}.corpus-*.json")):
                print(f"  {name:18s} run on another corpus only (below)")
            else:
                print(f"  {name:18s} no result: {e}")
            continue
        _recorded_line(name, r)
    others = sorted(RESULTS_DIR.glob("*.corpus-*.json"))
    if others:
        print("  runs on other corpora (the same runs on another text, e.g. the verdict corpus kjv; the curve reads a "
              "declared subset of its validation split, the final loss the whole split once):")
        for path in others:
            _recorded_line(path.stem, json.loads(path.read_text()))
    print("quick runs, executed now (budget 2 min; a wall time against a fixed budget, so the load before and after "
          "each is printed beside it):")
    with tempfile.TemporaryDirectory() as out:
        for name in sorted(RECIPES):
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
            t0 = time.perf_counter()
            run_recipe(RECIPES[name], quick=True, out_dir=out)
            dt = time.perf_counter() - t0
            after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
            print(f"  {name:18s} {dt:7.1f}s {dt / QUICK_BUDGET_S:6.2f}  load {load:.2f} -> {after:.2f}"
                  f"{_flag(dt, QUICK_BUDGET_S)}", flush=True)
