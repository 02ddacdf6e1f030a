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


def _projection_cases(seed: int, shapes, edges: bool, offset: int = 0, negative: int | None = None) -> list[tuple]:
    """Random ``(x, embedding, weight, alpha, beta)`` for each ``(B, T, D, D_out)`` in ``shapes``: the embedding far
    from unit RMS (so a missing norm shows), α and β in [0.3, 1.3), β negated in case number ``negative`` (a learned
    β can be); in float64 for the edges."""
    cases = []
    for i, (B, T, D, D_out) in enumerate(shapes):
        s = 1000 * seed + 10 * i + offset
        x, emb, w = random_inputs(s, (B, T, D), (B, T, D), (D_out, D))
        g = torch.Generator().manual_seed(s + 1)
        alpha, beta = (0.3 + torch.rand(2, generator=g)).tolist()
        cases.append((x, 3.0 * emb + 1.0, w, alpha, -beta if i == negative else beta))
    return in_float64(cases) if edges else cases


def check_x0_projection(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 04: ``fn(x (B, T, D), embedding (B, T, D), weight (D, D), alpha, beta) -> (B, T, D)`` =
    ``alpha * x @ weight.T + beta * rms_norm(embedding) @ weight.T``. ``seed`` picks the random cases
    (0: the public checks; graders use others); ``edges``: one token, D = 1, in float64."""
    shapes = [(1, 1, 1, 1), (1, 1, 5, 5), (2, 2, 1, 1)] if edges else [(2, 5, 8, 8), (1, 7, 16, 16), (3, 4, 4, 4)]
    cases = _projection_cases(seed, shapes, edges)
    kw.setdefault("stub_hint", "x is normalised already; the embedding is not, and x0 must be on the same scale "
                  "as x. Both terms go through the same weight, applied as an nn.Linear applies it")
    return check_function("x0 projection", fn, _ref_x0_projection, cases, MISTAKES, **kw)


# --- the measurement: how much of a projection's output comes from x0 (the assignment's second task) --------------

def _ref_x0_norm_share(x, embedding, weight, alpha, beta):
    """x0's share of one projection's output, per token, read by norms (the norm-based view, Kobayashi et al.,
    arXiv 2004.10102): ``‖β·W(x0)‖ / (‖α·W(x)‖ + ‖β·W(x0)‖)`` with ``x0 = RMSNorm(embedding)``, norms over D_out.

    x, embedding (B, T, D), weight (D_out, D) -> (B, T), each in 0..1.

    Raises:
        ValueError: if ``weight`` is not (D_out, D) for the D of ``x`` (or ``x`` and ``embedding`` differ in shape).
    """
    if weight.dim() != 2 or weight.size(1) != x.size(-1):
        raise ValueError(f"x0_norm_share: expected weight (D_out, D={x.size(-1)}), got weight {tuple(weight.shape)}")
    from_x0 = _ref_x0_projection(x, embedding, weight, 0.0, beta).norm(dim=-1)
    from_stream = _ref_x0_projection(x, embedding, weight, alpha, 0.0).norm(dim=-1)
    return from_x0 / (from_stream + from_x0)


def _terms(x, e, w, a, b):
    """The two terms of the projection, β·W(x0) and α·W(x) (for the mistakes below)."""
    return b * rms_norm(e) @ w.T, a * x @ w.T


def _share(from_x0, from_stream):
    return from_x0 / (from_stream + from_x0)


# Known wrong variants of x0_norm_share and what to tell a learner whose function matches one.
SHARE_MISTAKES = [
    Mistake(lambda x, e, w, a, b: torch.full(x.shape[:-1], abs(b) / (abs(a) + abs(b)), dtype=x.dtype),
            "that is the glossary's coefficient share |β| / (|α| + |β|): measure the two terms of the projection, "
            "whose lengths depend on x, x0 and W as well"),
    Mistake(lambda x, e, w, a, b: _share((b * rms_norm(e)).norm(dim=-1), (a * x).norm(dim=-1)),
            "you measured the inputs before the projection: W can lengthen x0 and x differently, so measure the "
            "two terms after W"),
    Mistake(lambda x, e, w, a, b: _share((b * e @ w.T).norm(dim=-1), (a * x @ w.T).norm(dim=-1)),
            "the x0 term must use x0 = RMSNorm(embedding), as in your x0_projection, not the raw embedding"),
    Mistake(lambda x, e, w, a, b: _terms(x, e, w, a, b)[0].norm(dim=-1) / _ref_x0_projection(x, e, w, a, b).norm(
        dim=-1),
            "you divided by the length of the whole projection: the two terms can partly cancel, so the "
            "norm-based share divides by the sum of the two terms' lengths"),
    Mistake(lambda x, e, w, a, b: _share((rms_norm(e) @ w.T).norm(dim=-1), (x @ w.T).norm(dim=-1)),
            "alpha and beta are missing: the two terms are alpha · W(x) and beta · W(x0)"),
    Mistake(lambda x, e, w, a, b: 1.0 - _ref_x0_norm_share(x, e, w, a, b),
            "that is the residual stream's share: the question is how much of the projection comes from x0"),
    Mistake(lambda x, e, w, a, b: _ref_x0_norm_share(x, e, w, a, b).mean(),
            "you averaged the shares into one number: return one share per token, shape (B, T)"),
    Mistake(lambda x, e, w, a, b: _share(*(t.norm(dim=-2) for t in _terms(x, e, w, a, b))),
            "your norms run over the tokens: take each term's length over the feature axis (the last one), one "
            "share per token, shape (B, T)"),
    Mistake(lambda x, e, w, a, b: _share(*(t.norm(dim=-1).pow(2) for t in _terms(x, e, w, a, b))),
            "you compared squared lengths: the norm-based share compares the lengths themselves"),
    Mistake(lambda x, e, w, a, b: _share(b * (rms_norm(e) @ w.T).norm(dim=-1), a * (x @ w.T).norm(dim=-1)),
            "you took a coefficient out of the norm without its absolute value: ‖β·y‖ = |β|·‖y‖, and a learned β "
            "can be negative (chapter 04's Q learns β ≈ −12; then your share leaves 0..1)"),
]


def check_x0_norm_share(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 04.2: ``fn(x (B, T, D), embedding (B, T, D), weight (D_out, D), alpha, beta) -> (B, T)`` =
    ``‖β·W(x0)‖ / (‖α·W(x)‖ + ‖β·W(x0)‖)`` per token, ``x0 = rms_norm(embedding)``, norms over D_out. ``seed``
    picks the random cases (0: the public checks; graders use others); ``edges``: one token, D = 1, in float64."""
    shapes = [(1, 1, 1, 1), (1, 1, 5, 3), (2, 2, 1, 2)] if edges else [(2, 5, 8, 8), (1, 7, 16, 12), (3, 4, 4, 6)]
    cases = _projection_cases(seed, shapes, edges, offset=5, negative=1)
    kw.setdefault("stub_hint", "the projection is a sum of two terms, one from the stream x and one from x0, each "
                  "with its coefficient; your x0_projection makes either alone. Measure each term's length per "
                  "token and compare")
    return check_function("x0 norm share", fn, _ref_x0_norm_share, cases, SHARE_MISTAKES, **kw)
