"""Chapter 04 exercise: x0 injection into one projection (the bank-of-values paper, arXiv 2606.02780, Sec. 3;
RiddleHe/nanochat ``gpt_base_add_init_qkv_learn``).

The learner writes ``x0_projection(x, embedding, weight, alpha, beta)`` returning
``alpha · W(x) + beta · W(x0)`` with ``x0 = RMSNorm(embedding)`` (parameter-free) and ``W(z) = z @ weightᵀ`` (an
``nn.Linear`` weight of shape (D_out, D_in), no bias).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from vrs_edu.course.checks import Mistake, check_function, in_float64, random_inputs
from vrs_edu.nn.layers import rms_norm
from vrs_edu.nn.x0 import inject_x0


def _ref_x0_projection(x, embedding, weight, alpha, beta):
    # W has no bias, so alpha·W(x) + beta·W(x0) = W(alpha·x + beta·x0): the package mixes the inputs (inject_x0).
    return inject_x0(x, rms_norm(embedding), alpha, beta) @ weight.T


# Known wrong variants and what to tell a learner whose function matches one.
MISTAKES = [
    Mistake(lambda x, e, w, a, b: (a * x + b * e) @ w.T,
            "x0 is RMSNorm(embedding), not the raw embedding: normalise it first (vrs_edu.nn.layers.rms_norm), "
            "so that x0 and the normalised residual stream x live on the same scale"),
    Mistake(lambda x, e, w, a, b: (b * x + a * rms_norm(e)) @ w.T,
            "alpha and beta are swapped: alpha weighs the residual stream x, beta the token identity x0"),
    Mistake(lambda x, e, w, a, b: a * (x @ w.T) + b * rms_norm(e),
            "x0 must go through the same projection W as x: beta · W(x0), not beta · x0"),
    Mistake(lambda x, e, w, a, b: (a * x + b * rms_norm(e)) @ w,
            "W is an nn.Linear weight of shape (D_out, D_in): apply it as z @ weight.T"),
    Mistake(lambda x, e, w, a, b: rms_norm(a * x + b * e) @ w.T,
            "normalise the embedding alone (x0 = RMSNorm(embedding)), not the mixed input"),
    Mistake(lambda x, e, w, a, b: (x + b * rms_norm(e)) @ w.T,
            "alpha is missing: the residual-stream part is alpha · W(x)"),
    Mistake(lambda x, e, w, a, b: (a * x + rms_norm(e)) @ w.T,
            "beta is missing: the token-identity part is beta · W(x0)"),
    Mistake(lambda x, e, w, a, b: (a * rms_norm(x) + b * rms_norm(e)) @ w.T,
            "x is already the normalised residual stream (the block normalised it): normalise only the embedding"),
    Mistake(lambda x, e, w, a, b: (a * x + b * F.layer_norm(e, e.shape[-1:])) @ w.T,
            "that is LayerNorm, which also subtracts the mean: x0 = RMSNorm(embedding) only divides by the root "
            "mean square (vrs_edu.nn.layers.rms_norm)"),
    Mistake(lambda x, e, w, a, b: (a * x + b * F.normalize(e, dim=-1)) @ w.T,
            "that is L2 normalisation (unit length): RMSNorm gives unit root mean square, i.e. length √D "
            "(vrs_edu.nn.layers.rms_norm)"),
]


def check_x0_projection(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 04: ``fn(x (B, T, D), embedding (B, T, D), weight (D, D), alpha, beta) -> (B, T, D)`` =
    ``alpha * x @ weight.T + beta * rms_norm(embedding) @ weight.T``. ``seed`` picks the random cases
    (0: the public checks; graders use others); ``edges``: one token, D = 1, in float64."""
    shapes = [(1, 1, 1), (1, 1, 5), (2, 2, 1)] if edges else [(2, 5, 8), (1, 7, 16), (3, 4, 4)]
    cases = []
    for i, (B, T, D) in enumerate(shapes):
        s = 1000 * seed + 10 * i
        x, emb, w = random_inputs(s, (B, T, D), (B, T, D), (D, D))
        emb = 3.0 * emb + 1.0          # an embedding far from unit RMS, so a missing norm shows
        g = torch.Generator().manual_seed(s + 1)
        alpha, beta = (0.3 + torch.rand(2, generator=g)).tolist()
        cases.append((x, emb, w, alpha, beta))
    cases = in_float64(cases) if edges else cases
    kw.setdefault("stub_hint", "x is normalised already; the embedding is not, and x0 must be on the same scale "
                  "as x. Both terms go through the same weight, applied as an nn.Linear applies it")
    return check_function("x0 projection", fn, _ref_x0_projection, cases, MISTAKES, **kw)
