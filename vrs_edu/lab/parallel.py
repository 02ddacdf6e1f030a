"""Independent training runs side by side in worker processes (``vrs-edu reproduce NAME --jobs N``).

A recipe trains every variant for every seed; the runs share nothing but their inputs, so N of them can run at
once, each in its own process with one torch thread. On a 2-core machine two one-thread runs finish sooner than
one two-thread run after another: a TinyGPT step is too small to keep two threads busy (``make bench`` measures it).

The pool is the standard library's :class:`concurrent.futures.ProcessPoolExecutor` with the ``spawn`` start method
(a fresh interpreter per worker: no state copied from a parent whose torch thread pool is already running, which
``fork`` can deadlock on). Each run gets its inputs pickled (configs, data) and returns its result pickled, so a run
computes the same numbers in a worker as in the parent at the same thread count (a test checks equality).
The caller's :class:`~vrs_edu.lab.options.RunOptions` (device, precision, checkpoints, progress) travel to the
workers inside the tasks, like every other input; ``--jobs 1`` runs everything in the calling process, one run
after another.
"""
from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed

import torch

from vrs_edu.lab import distributed
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.progress import progress_bar


def default_jobs() -> int:
    """The default of ``--jobs``: one worker per CPU core (``os.cpu_count()``)."""
    return os.cpu_count() or 1


def worker_count(n_tasks: int, jobs: int) -> int:
    """How many worker processes keep ``jobs`` cores busy until the last of ``n_tasks`` equal-sized runs ends.

    With ``jobs`` workers, 15 runs on 2 cores take 8 rounds, and in the last one a core sits idle: the wall time is
    8 runs, not 7.5. A few more single-threaded workers than cores share the cores (the operating system splits
    their time) and finish together: 3 workers on 2 cores do 5 runs each at 2/3 of a core, 7.5 runs' time. So the
    count is the ``w`` in ``jobs .. 2·jobs`` (at most ``n_tasks``) with the least ``ceil(n_tasks / w) · w`` (the
    work the busiest worker's rounds take, in runs), the smallest such ``w`` when several tie; every run still gets
    one thread and computes the same numbers.

    Raises:
        ValueError: ``n_tasks`` < 0 or ``jobs`` < 1.
    """
    if not isinstance(n_tasks, int) or n_tasks < 0:
        raise ValueError(f"n_tasks must be a non-negative integer, got {n_tasks!r}")
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    if n_tasks <= jobs:
        return max(1, n_tasks)
    candidates = range(jobs, min(2 * jobs, n_tasks) + 1)
    return min(candidates, key=lambda w: (-(-n_tasks // w) * w, w))


def _start_worker() -> None:
    """Runs once in every worker: one torch thread."""
    torch.set_num_threads(1)


def map_runs(fn: Callable[..., object], tasks: Sequence[dict], jobs: int = 1, desc: str = "runs",
             progress: bool = True) -> list:
    """``[fn(**task) for task in tasks]``, computed on ``jobs`` cores when ``jobs`` > 1: by ``jobs`` worker
    processes, or a few more when the runs do not split evenly over ``jobs`` (:func:`worker_count`).

    Results come back in the order of ``tasks`` whatever order the runs finish in. One progress bar counts finished
    runs over all workers (a worker draws no bars of its own; ``progress=False`` (the commands' ``--quiet``) or
    ``TQDM_DISABLE=1`` hide it).
    ``fn`` must be a module-level function and every task picklable. With ``jobs == 1`` (or a single task) the runs
    happen in this process, one after another, at this process's thread count.

    Raises:
        ValueError: ``jobs`` < 1.
        Whatever a run raises (the pool is shut down first; runs not yet started are cancelled).
    """
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    bar = progress_bar(total=len(tasks), desc=desc, unit="run", show=progress)
    results: list = [None] * len(tasks)
    with bar:
        if jobs == 1 or len(tasks) <= 1:
            for i, task in enumerate(tasks):
                results[i] = fn(**task)
                bar.update(1)
            return results
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=worker_count(len(tasks), jobs), mp_context=spawn,
                                 initializer=_start_worker) as pool:
            futures = {pool.submit(fn, **task): i for i, task in enumerate(tasks)}
            try:
                for future in as_completed(futures):
                    results[futures[future]] = future.result()
                    bar.update(1)
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    return results


def usable_jobs(options: RunOptions | None = None, jobs: int | None = None) -> int:
    """The number of workers a recipe may use: ``jobs`` (None: ``options.jobs``, 1 by default), but 1 under
    ``torchrun`` (every rank already runs the same runs together) and when ``options`` put training on an
    accelerator (one device, one run)."""
    options = options or RunOptions()
    jobs = options.jobs if jobs is None else jobs
    if distributed.world().size > 1 or (options.device is not None and str(options.device) != "cpu"):
        return 1
    return jobs
