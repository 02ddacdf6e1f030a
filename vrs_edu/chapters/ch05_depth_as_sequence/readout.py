"""Reading a trained depth mixer from a trace: the states it read over, and its learned weights as matrices.

The model (:mod:`vrs_edu.nn.depth`) records each read's weights at hook point ``depth.{l}.weights`` (one stream) or
``depth.{l}.weights_{q,k,v,r}`` (per stream), always with the *source* axis last, oldest source first; a read of
block l with a window of K sources covers layers l-K+1..l (ShortSWA: K = min(window, l+1); every other mixer:
K = l+1). This module turns those tensors into one (L+1, L+1) matrix per stream, row = reading layer (row L: the
final read-out), column = source layer (0 = embedding), which chapter 05 draws. A sub-layer mixer (Attention
Residuals per stream, ``attnres_qkv``) reads over sub-layer outputs instead: its matrices are (L+1, 2L+1), the
columns named by :func:`sublayer_sources` (embedding, attn 0, mlp 0, attn 1, ...). Depth-Attention reads the values
of layers 0..l, masked to its sources: column j is the value computed by block j from state X_j.
"""
from __future__ import annotations

from collections.abc import Iterable

import torch
from jaxtyping import Float
from torch import Tensor


def weight_hook_names(names: Iterable[str]) -> dict[str, list[tuple[int, str]]]:
    """Group the ``depth.{l}.weights[_s]`` hook names found in ``names`` by stream (``"r"`` for single-stream):
    ``{stream: [(l, name), ...]}`` in the order of ``names``."""
    out: dict[str, list[tuple[int, str]]] = {}
    for name in names:
        parts = name.split(".")
        if len(parts) == 3 and parts[0] == "depth" and parts[2].startswith("weights"):
            stream = parts[2][len("weights_"):] or "r"
            out.setdefault(stream, []).append((int(parts[1]), name))
    return out


def depth_weight_matrices(tensors: dict[str, Tensor], n_layers: int,
                          sublayers: bool = False) -> dict[str, Float[Tensor, "L1 S"]]:
    """Mean depth weights as (L+1, L+1) matrices, one per stream: ``M[l, j]`` = the average weight that the read
    for block l (row L: the final read-out) puts on source j (0 = embedding). Averaged over every axis but the
    source axis (batch, tokens, heads, and the feature axis of DCA). A read whose weights cover only its last K
    sources (a ShortSWA window) puts 0 on the sources before its window; rows a mixer does not weight are NaN.
    Empty for a mixer that records no weights (the standard residual).

    Args:
        tensors: hook name -> tensor, e.g. ``trace.tensors`` of a forward pass with ``trace=True``.
        n_layers: L.
        sublayers: the reads are over sub-layer outputs (a mixer with ``sublayers = True``): the matrices are
            (L+1, 2L+1), columns in the order of :func:`sublayer_sources`, each read's n weights on its first n
            columns (block l's q, k, v: 2l+1; its MLP read, stream r: 2l+2; the final read-out: 2L+1).
    """
    out = {}
    width = 2 * n_layers + 1 if sublayers else n_layers + 1
    for stream, items in weight_hook_names(tensors).items():
        m = torch.full((n_layers + 1, width), float("nan"))
        for l, name in items:
            w = tensors[name].detach().float()
            K = w.size(-1)                                  # the read's window: sources l-K+1..l
            if sublayers:                                   # every read starts at the embedding
                m[l, :K] = w.reshape(-1, K).mean(0)
                continue
            row = torch.zeros(l + 1, dtype=w.dtype)         # 0 on the sources the window does not reach
            row[l + 1 - K:] = w.reshape(-1, K).mean(0)
            m[l, : l + 1] = row
        out[stream] = m
    return out


def sublayer_sources(n_layers: int) -> list[str]:
    """The names of a sub-layer mixer's 2L + 1 sources, oldest first: ``["embedding", "attn 0", "mlp 0", ...,
    "attn L-1", "mlp L-1"]`` (the columns of :func:`depth_weight_matrices` with ``sublayers=True``)."""
    return ["embedding"] + [f"{kind} {j}" for j in range(n_layers) for kind in ("attn", "mlp")]


def states_from_trace(tensors: dict[str, Tensor], n_layers: int) -> Float[Tensor, "L1 B T D"]:
    """The depth stack of *states* X_0..X_L from a trace (``trace.tensors``): X_0 = the embedding and
    X_{j+1} = (input of block j) + (what block j wrote: ``attn.out + mlp.out``). For the standard residual this is
    ``trace.stack("resid")``; for other mixers it is the sequence their depth reads run over.

    Raises:
        KeyError: the trace lacks one of the hook points (record it with ``trace=True``).
    """
    states = [tensors["embed"]]
    for j in range(n_layers):
        states.append(tensors[f"blocks.{j}.resid_pre"] + tensors[f"blocks.{j}.attn.out"]
                      + tensors[f"blocks.{j}.mlp.out"])
    return torch.stack(states)


def equation_by_loop(h: Float[Tensor, "L1 D"], window: int, w_q: Tensor, w_k: Tensor,
                     w_v: Tensor) -> Float[Tensor, "L1 E"]:
    """The duality's equation (Zhang, arXiv 2603.16039, sec. 2.2) written out for one token, one layer at a time:
    ``z^(l) = softmax(q Kmatᵀ / sqrt(E)) Vmat`` with ``q = W_Q h^(l)`` over the causal window of the last
    ``window`` states ``h^(max(0, l-K+1)) .. h^(l)``. ``h``: one token's states (L+1, D); the weights are
    ``nn.Linear`` weights (E, D). An implementation independent of :func:`vrs_edu.nn.shortswa.short_swa` (a Python
    loop, no batching, no mask), so that chapter 05's duality check compares two different computations; kept in
    the package because it is the chapter's exercise, which the check must not print.

    Raises ValueError unless ``h`` is 2-D and ``window`` >= 1."""
    if h.dim() != 2:
        raise ValueError(f"h: expected one token's states of shape (L+1, D), got shape {tuple(h.shape)}")
    if window < 1:
        raise ValueError(f"window: expected K >= 1, got {window}")
    out = []
    for l in range(h.size(0)):
        states = h[max(0, l - window + 1): l + 1]
        q = w_q @ h[l]
        scores = (states @ w_k.T) @ q / q.numel() ** 0.5
        out.append(torch.softmax(scores, 0) @ (states @ w_v.T))
    return torch.stack(out)
