"""Chapter 05 exercise: causal ShortSWA over depth for one token (Zhang, "Residual Stream Duality", arXiv 2603.16039,
sec. 2.2).

The learner writes ``depth_swa_one_token(h, window, w_q, w_k, w_v)``: ``h`` (L+1, D) is one token's depth trajectory
h^(0), ..., h^(L); for every layer l it returns ``z^(l) = softmax(q Kmatᵀ / sqrt(d_k)) Vmat`` with ``q = W_Q h^(l)``
and ``Kmat, Vmat`` the projections of the window ``W_l = [h^(max(0, l-K+1)); ...; h^(l)]`` (the layer itself and
up to K − 1 layers below it). Weights are ``nn.Linear`` weights of shape (E, D); the result is (L+1, E).
"""
from __future__ import annotations

import math

import torch

from vrs_edu.course.checks import Mistake, check_function, in_float64, random_inputs
from vrs_edu.nn.shortswa import short_swa


def _ref_depth_swa_one_token(h, window, w_q, w_k, w_v):
    # one token's depth stack is a sequence of length L+1: ShortSWA along it (N = 1 sequence)
    return short_swa(h[None], window, w_q, w_k, w_v)[0]


def _windowed(h, w_q, w_k, w_v, sources, scale=True, scale_by_input_width=False):
    """Attention of every layer l over the layers ``sources(l, S)`` (a list of indices)."""
    S = h.size(0)
    out = []
    for l in range(S):
        src = sources(l, S)
        q, k, v = w_q @ h[l], h[src] @ w_k.T, h[src] @ w_v.T
        d = h.size(1) if scale_by_input_width else q.numel()
        s = k @ q / (math.sqrt(d) if scale else 1.0)
        out.append(torch.softmax(s, 0) @ v)
    return torch.stack(out)


SWA_MISTAKES = [
    Mistake(lambda h, K, q, k, v: _windowed(h, q, k, v, lambda l, S: list(range(l, min(S, l + K)))),
            "your window looks at layers above l: a causal read over depth uses h^(max(0, l-K+1)), ..., h^(l)"),
    Mistake(lambda h, K, q, k, v: _windowed(h, q, k, v, lambda l, S: list(range(max(0, l - K), l)) or [0]),
            "the window must include layer l itself: W_l = [h^(max(0, l-K+1)); ...; h^(l)]"),
    Mistake(lambda h, K, q, k, v: _windowed(h, q, k, v, lambda l, S: list(range(max(0, l - K), l + 1))),
            "your window holds K + 1 layers: it should hold K (the layer itself and K − 1 below it)"),
    Mistake(lambda h, K, q, k, v: _windowed(h, q, k, v, lambda l, S: list(range(0, l + 1))),
            "you read every earlier layer (the full window): keep only the last K layers"),
    Mistake(lambda h, K, q, k, v: _windowed(h, q, k, v, lambda l, S: list(range(max(0, l - K + 1), l + 1)),
                                            scale=False),
            "scale the scores by 1 / sqrt(d_k), d_k = E (the projected width)"),
    Mistake(lambda h, K, q, k, v: _windowed(h, q, k, v, lambda l, S: list(range(max(0, l - K + 1), l + 1)),
                                            scale_by_input_width=True),
            "you scaled by sqrt(D), the width of h: d_k is the width of the projected keys, E = w_k.size(0)"),
    Mistake(lambda h, K, q, k, v: _windowed(h, q, v, k, lambda l, S: list(range(max(0, l - K + 1), l + 1))),
            "keys and values are swapped: scores come from W_K, the mixed vectors from W_V"),
]


def check_depth_swa_one_token(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 05: ``fn(h (L+1, D), window K, w_q (E, D), w_k (E, D), w_v (E, D)) -> (L+1, E)``, causal ShortSWA
    over one token's depth trajectory. ``seed`` picks the random cases (0: the public checks; graders use others);
    ``edges``: one layer, a window longer than the stack, E = 1, in float64."""
    sizes = ([(1, 3, 2, 1), (2, 2, 1, 3), (3, 1, 1, 2)] if edges else
             [(7, 8, 8, 3), (5, 6, 4, 2), (9, 8, 8, 4), (4, 4, 4, 1)])          # (L+1, D, E, K)
    cases = []
    for i, (S, D, E, K) in enumerate(sizes):
        h, wq, wk, wv = random_inputs(1000 * seed + i, (S, D), (E, D), (E, D), (E, D))
        cases.append((2.0 * h, K, wq, wk, wv))                                   # sharp enough that mistakes show
    cases = in_float64(cases) if edges else cases
    # The stub's hint points (which rows, which scale), without the code: the chapter's hints say the rest.
    kw.setdefault("stub_hint", "one layer at a time: which rows of h may layer l read (itself and how many "
                  "below)? The query comes from row l alone; the chapter's equation says how the scores are scaled")
    return check_function("ShortSWA over depth, one token", fn, _ref_depth_swa_one_token, cases, SWA_MISTAKES,
                          **kw)
