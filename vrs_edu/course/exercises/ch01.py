"""Chapter 01 exercises: the residual stream as a running sum, and direct logit attribution.

``check_<name>(fn, *, seed=0, edges=False, **kw)``: seed 0 gives the public cases; graders call with other seeds
and ``edges=True`` (one position, the smallest widths, float64). Extra keyword arguments go to
:func:`vrs_edu.course.checks.check_function` (``raise_on_fail``, ``quiet``).
"""
from __future__ import annotations

import torch

from vrs_edu.chapters.ch01_two_axes.readout import logit_contributions, residual_stack
from vrs_edu.course.checks import Mistake, check_function, in_float64, random_inputs

# --- exercise 1: the depth stack from the embedding and each block's write ------------------------------------

def _stack_cases(seed: int, edges: bool = False):
    # (L, B, T, D); the edges: one block, one token, D = 1, in float64
    shapes = [(1, 1, 1, 1), (2, 1, 1, 3), (4, 2, 1, 2)] if edges else [(3, 2, 4, 8), (6, 1, 5, 16), (1, 3, 3, 4)]
    cases = []
    for i, (L, B, T, D) in enumerate(shapes):
        emb, outs = random_inputs(1000 * seed + i, (B, T, D), (L, B, T, D))
        cases.append((emb, outs))
    return in_float64(cases) if edges else cases


def _exclusive(emb, outs):  # stack[l] = emb + Σ_{j<l-1}: the last block's write never arrives
    shifted = torch.cat([torch.zeros_like(outs[:1]), outs[:-1]])
    return torch.cat([emb[None], emb[None] + shifted.cumsum(0)])


STACK_MISTAKES = [
    Mistake(lambda e, o: torch.cat([e[None], e[None] + o]),
            "each state is the embedding plus only its own block's write: the stream is a *running* sum — state l "
            "holds the embedding and every write before it (cumsum over the block axis)"),
    Mistake(lambda e, o: torch.cat([e[None], o]),
            "you returned what each block wrote, not the state after it: add the writes up (cumsum over axis 0)"),
    Mistake(lambda e, o: torch.cat([e[None], o]).cumsum(0) / torch.arange(1, len(o) + 2).view(-1, 1, 1, 1),
            "you averaged the writes: the residual adds them with unit weights (a sum, not a mean)"),
    Mistake(_exclusive, "off by one: state l must include the writes of blocks 0..l-1, so the last state contains "
            "every block's write"),
    Mistake(lambda e, o: torch.cat([e[None], o]).cumsum(1),
            "the running sum goes over depth (axis 0 of the stack), not over the batch (axis 1)"),
    Mistake(lambda e, o: torch.cat([e[None], o.cumsum(0)]),
            "the later states lack the embedding: it stays in the stream at every depth (stack[l] = embedding + "
            "the writes of blocks 0..l-1)"),
]


def check_residual_stack(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 01.1: ``fn(embedding (B, T, D), outputs (L, B, T, D)) -> (L+1, B, T, D)`` with
    ``stack[0] = embedding`` and ``stack[l] = embedding + outputs[0] + ... + outputs[l-1]``."""
    kw.setdefault("stub_hint", "put the embedding in front of the block outputs along a new depth axis, then "
                  "take a running sum along that axis")
    return check_function("residual stack", fn, residual_stack, _stack_cases(seed, edges), STACK_MISTAKES, **kw)


# --- exercise 2: direct logit attribution ----------------------------------------------------------------------

def _rms(x, eps=1e-6):
    return (x.pow(2).mean(-1, keepdim=True) + eps).sqrt()


def _dla_cases(seed: int, edges: bool = False):
    shapes = [(1, 1), (2, 5), (4, 3)] if edges else [(7, 8), (13, 16), (3, 32)]     # (N, D); edges in float64
    cases = []
    for i, (N, D) in enumerate(shapes):
        comps, w = random_inputs(1000 * seed + i, (N, D), (D,))
        comps = comps * torch.linspace(0.5, 2.0, N).view(-1, 1)   # components of different sizes, as in a model
        cases.append((comps, w))
    return in_float64(cases) if edges else cases


DLA_MISTAKES = [
    Mistake(lambda c, w: (c / _rms(c)) @ w,
            "you normalised every component by its own RMS: RMSNorm is not linear — divide every component by the "
            "RMS of the final state (their sum), the one number the model divides by"),
    Mistake(lambda c, w: c @ w,
            "you left out the final RMSNorm: the logit is w_U · RMSNorm(h_L), so divide by rms(h_L) = "
            "sqrt(mean(h_L**2) + eps) with h_L = components.sum(0)"),
    Mistake(lambda c, w: c @ w / c.sum(0).norm(),
            "you divided by the L2 norm of the final state: RMSNorm divides by its root-*mean*-square, "
            "norm / sqrt(D)"),
    Mistake(lambda c, w: c @ w / c.sum(0).pow(2).mean(),
            "you divided by the mean square: take its square root (RMS = sqrt(mean(h**2) + eps))"),
    Mistake(lambda c, w: c @ w / _rms(c).mean(),
            "you divided by the average of the components' RMS: divide by the RMS of their *sum*"),
]


def check_logit_contributions(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 01.2: ``fn(components (N, D), unembed (D,)) -> (N,)``: each component's share of the logit
    ``unembed · RMSNorm(components.sum(0))``; the shares add up to the logit."""
    kw.setdefault("atol", 1e-4)
    kw.setdefault("stub_hint", "the final state is the sum of the components; its RMS is one number, and every "
                  "component's share is its dot product with the unembedding row divided by it")
    return check_function("logit contributions", fn, logit_contributions, _dla_cases(seed, edges), DLA_MISTAKES, **kw)
