"""Chapter 00 exercise: the norm of the residual stream at each depth.
"""
from __future__ import annotations

import torch

from vrs_edu.course.checks import Mistake, check_function, in_float64, random_inputs

# --- chapter 00 ------------------------------------------------------------------------------------------------

def _ref_stream_norms(stack: torch.Tensor) -> torch.Tensor:
    return stack.norm(dim=-1).mean(dim=(1, 2))


def check_stream_norms(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 00: ``fn(stack (L+1, B, T, D)) -> (L+1,)`` mean L2 norm of every token's state at each depth.
    ``seed`` picks the random cases (0: the public checks; graders use others); ``edges``: one depth, one token,
    D = 1, in float64."""
    shapes = [(1, 1, 1, 1), (2, 1, 1, 5), (4, 2, 1, 3)] if edges else [(3, 2, 4, 8), (7, 1, 5, 16), (2, 3, 3, 4)]
    cases = [random_inputs(1000 * seed + i, shape) for i, shape in enumerate(shapes)]
    cases = [(c[0] * (1 + torch.arange(c[0].size(0)).view(-1, 1, 1, 1)),) for c in cases]  # norms grow with depth
    cases = in_float64(cases) if edges else cases
    mistakes = [
        Mistake(lambda s: s.norm(dim=-1).mean(dim=(0, 1)), "you averaged over depth: keep axis 0 (depth), average "
                "over batch and tokens (axes 1 and 2)"),
        Mistake(lambda s: s.pow(2).sum(-1).mean(dim=(1, 2)), "that is the squared norm: take the square root "
                "(torch.linalg.vector_norm or .norm(dim=-1))"),
        Mistake(lambda s: s.mean(dim=(1, 2)).norm(dim=-1), "you took the norm of the average state: take each "
                "token's norm first, then average the norms"),
        Mistake(lambda s: s.abs().mean(dim=(1, 2, 3)), "that is the mean absolute entry, not the L2 norm of each "
                "token's D-dimensional state"),
    ]
    kw.setdefault("stub_hint", "a token's state is the last axis: its norm there leaves one number per depth, "
                  "sequence and position; then average what is left over the batch and the positions")
    return check_function("stream norms", fn, _ref_stream_norms, cases, mistakes, **kw)
