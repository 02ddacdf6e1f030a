"""ShortSWA: causal sliding-window attention, the same function along the sequence axis or along depth.

The article's own operator for the depth axis. Along the sequence, position s attends to positions s-K+1..s;
along depth, block l reads the last K layer states X_{l-K+1}..X_l of its own token (Zhang, "Residual Stream
Duality", arXiv 2603.16039, sec. 2.2). K = 1 reads only the latest state; K = L + 1 (the full window) is attention
over every earlier state. :class:`ShortSWADepth` is the depth mixer (:mod:`vrs_edu.nn.depth`) built on it, and
:func:`depth_window_mask` says which sources each read may use.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from einops import rearrange
from jaxtyping import Bool, Float
from torch import Tensor, nn

from vrs_edu.nn.depth_mixer import DepthMixer, DepthRead, Layers
from vrs_edu.nn.hooks import Hook, no_hook
from vrs_edu.nn.layers import SeededInit, rms_norm


def short_swa(x: Float[Tensor, "N S D"], window: int, w_q: Tensor, w_k: Tensor, w_v: Tensor,
              n_heads: int = 1) -> Float[Tensor, "N S D"]:
    """Causal sliding-window attention along axis S ("ShortSWA"): position s attends to s-K+1..s.

    ``z_s = softmax(q_s K_wᵀ / sqrt(Dh)) V_w`` with ``q = x W_qᵀ``, ``K_w, V_w`` the projections of the last
    ``min(K, s+1)`` positions (Zhang, "Residual Stream Duality", arXiv 2603.16039, sec. 2.2). Cost O(N·S·K·D): the
    windows are gathered with ``unfold``, never a full (S, S) score matrix; K >= S is full causal attention.

    Args:
        x: N independent sequences of length S (for depth: N = B·T tokens, S = L + 1 layers).
        window: K >= 1.
        w_q, w_k, w_v: (E, D) projection weights (``nn.Linear`` layout); E = D in the paper, smaller for a
            low-rank read. The output has E features.
        n_heads: heads; E must be divisible by it.
    Raises:
        ValueError: if ``window`` < 1, x is not 3-D, the weights do not fit D, or E is not divisible by ``n_heads``.
    """
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    if x.dim() != 3:
        raise ValueError(f"x must be (N, S, D), got shape {tuple(x.shape)}")
    N, S, D = x.shape
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        if w.dim() != 2 or w.size(1) != D or w.size(0) != w_q.size(0):
            raise ValueError(f"{name} must be (E, D={D}) with the same E for all three, got {tuple(w.shape)}")
    if w_q.size(0) % n_heads:
        raise ValueError(f"E={w_q.size(0)} must be divisible by n_heads={n_heads}")
    K = min(window, S)
    q = rearrange(x @ w_q.T, "n s (h e) -> n h s e", h=n_heads)
    kv = torch.stack([x @ w_k.T, x @ w_v.T])                                  # (2, N, S, E)
    kv = F.pad(kv, (0, 0, K - 1, 0))                                          # K-1 empty slots before position 0
    kv = kv.unfold(2, K, 1)                                                   # (2, N, S, E, K): window per position
    k, v = rearrange(kv, "two n s (h e) k -> two n h s k e", h=n_heads)
    scores = torch.einsum("nhse,nhske->nhsk", q, k) / math.sqrt(q.size(-1))   # sqrt(d_k), d_k = E / H
    valid = torch.arange(S, device=x.device)[:, None] + torch.arange(K, device=x.device)[None, :] >= K - 1
    scores = scores.masked_fill(~valid, float("-inf"))                        # the padded slots before position 0
    z = torch.einsum("nhsk,nhske->nhse", scores.softmax(-1), v)
    return rearrange(z, "n h s e -> n s (h e)")


def depth_short_swa(stack: Float[Tensor, "L1 B T D"], window: int, w_q: Tensor, w_k: Tensor, w_v: Tensor,
                    n_heads: int = 1) -> Float[Tensor, "L1 B T D"]:
    """Causal ShortSWA over depth on a depth stack (L+1, B, T, D): each token's layer states are its sequence.

    This *is* :func:`short_swa` on the transposed tensor — the duality of arXiv 2603.16039, sec. 2.2. Returns
    (L+1, B, T, E): ``out[l]`` is the read of layer l over its window ``W_{t,l} = [h^(max(0, l-K+1)); ...; h^(l)]``.

    Raises:
        ValueError: if ``stack`` is not 4-D (and as :func:`short_swa`).
    """
    if stack.dim() != 4:
        raise ValueError(f"stack must be (L+1, B, T, D), got shape {tuple(stack.shape)}")
    L1, B, T, D = stack.shape
    z = short_swa(rearrange(stack, "l b t d -> (b t) l d"), window, w_q, w_k, w_v, n_heads)
    return rearrange(z, "(b t) l d -> l b t d", b=B, t=T)


class ShortSWADepth(DepthMixer):
    """A depth-wise residual read: causal ShortSWA over the last K layer states of the same token.

    Block l reads ``X_l + W_O · z_l`` where ``z_l = softmax(q kᵀ/sqrt(Dh)) v`` with the query from RMSNorm(X_l) and
    keys / values projected from RMSNorm(X_{l-K+1}), ..., RMSNorm(X_l) (Zhang, arXiv 2603.16039, sec. 2.2: the
    window ``W_{t,l}``). One set of weights ``q_proj, k_proj, v_proj`` (D -> E) and ``o_proj`` (E -> D) serves
    every layer (as sequence attention shares weights over positions); ``o_proj`` starts at zero, so at init the
    model is exactly the standard residual. E = ``d_attn`` (default D/4: a low-rank read keeps the parameter
    budget within 1 % of the baseline at D = 64). ``window=None`` is the full-memory variant (K = l + 1 at every
    layer). Cost per block O(T·K·E) vs O(T·l·E) for the full window; over the whole depth O(T·K·L·d) vs O(T·L²·d).

    Hook point ``depth.{l}.weights`` (B, T, H, K_l): the softmax over the window, oldest source first.

    Raises:
        ValueError: if ``window`` is < 1 or larger than L + 1 (a window that can never be filled), or ``d_attn``
            is not divisible by ``n_heads``.
    """

    def __init__(self, n_layers: int, d_model: int, window: int | None = None, n_heads: int = 1,
                 d_attn: int | None = None):
        super().__init__()
        if window is not None and not 1 <= window <= n_layers + 1:
            raise ValueError(f"depth window K must be in 1..L+1 = 1..{n_layers + 1}, got {window}")
        d_attn = d_attn or max(n_heads, d_model // 4)
        if d_attn % n_heads:
            raise ValueError(f"d_attn={d_attn} must be divisible by n_heads={n_heads}")
        self.window, self.n_heads = window, n_heads
        self.q_proj = nn.Linear(d_model, d_attn, bias=False)
        self.k_proj = nn.Linear(d_model, d_attn, bias=False)
        self.v_proj = nn.Linear(d_model, d_attn, bias=False)
        self.o_proj = nn.Linear(d_attn, d_model, bias=False)
        nn.init.zeros_(self.o_proj.weight)

    @torch.no_grad()
    def reset_parameters(self, init: SeededInit) -> None:
        """q, k, v projections from N(0, 0.02²); ``o_proj`` 0: the standard residual."""
        for name in ("q_proj.weight", "k_proj.weight", "v_proj.weight"):
            init.normal_(self, name)
        self.o_proj.weight.zero_()

    def window_at(self, l: int) -> int:
        """K_l = min(K, l + 1): how many layer states block l reads."""
        return l + 1 if self.window is None else min(self.window, l + 1)

    def forward(self, l: int, states: Layers, outputs: Layers, hook: Hook = no_hook) -> DepthRead:
        K = self.window_at(l)
        win = rms_norm(torch.stack(states[-K:]))                              # (K, B, T, D)
        q = rearrange(self.q_proj(win[-1]), "b t (h e) -> b t h e", h=self.n_heads)
        k = rearrange(self.k_proj(win), "k b t (h e) -> b t h k e", h=self.n_heads)
        v = rearrange(self.v_proj(win), "k b t (h e) -> b t h k e", h=self.n_heads)
        w = torch.einsum("bthe,bthke->bthk", q, k) / math.sqrt(q.size(-1))
        w = hook(f"depth.{l}.weights", w.softmax(-1))                          # (B, T, H, K)
        z = rearrange(torch.einsum("bthk,bthke->bthe", w, v), "b t h e -> b t (h e)")
        return DepthRead(states[-1] + self.o_proj(z))


def depth_window_mask(n_layers: int, window: int | None) -> Bool[Tensor, "L1 L1"]:
    """Which sources each read may use under a causal depth window K: a boolean (L+1, L+1) matrix with
    ``mask[l, j] = max(0, l-K+1) <= j <= l`` (row L: the final read-out). ``window=None`` is the full window.

    Raises:
        ValueError: ``n_layers`` < 1 or ``window`` < 1.
    """
    if n_layers < 1:
        raise ValueError(f"n_layers must be >= 1, got {n_layers}")
    if window is not None and window < 1:
        raise ValueError(f"window must be >= 1 (or None for the full window), got {window}")
    K = n_layers + 1 if window is None else window
    l = torch.arange(n_layers + 1)[:, None]
    j = torch.arange(n_layers + 1)[None, :]
    return (j <= l) & (j >= l - K + 1)
