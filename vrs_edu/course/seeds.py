"""Seeds and threads: what makes a notebook's numbers repeat. Chapters call it through
:func:`vrs_edu.course.setup.setup_notebook` (which adds the course's plotting style); assignments call it directly,
so that a graded kernel, which draws nothing, does not import the plotting libraries (seaborn and matplotlib take
2 of a kernel's 4.5 s of imports on the 2-core machine)."""
from __future__ import annotations

import os
import random

import torch


def seed_everything(seed: int = 0) -> None:
    """Seed Python and torch, and fix torch's thread count to ``VRS_EDU_THREADS`` when it is set (by ``make
    notebooks``, the tests and the grader: float sums differ between thread counts, and stored outputs are compared).
    """
    threads = os.environ.get("VRS_EDU_THREADS")
    if threads:
        torch.set_num_threads(int(threads))
    random.seed(seed)
    torch.manual_seed(seed)
