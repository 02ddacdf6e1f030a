"""Depth mixers: how the input of each block is read from the states of earlier layers.

A decoder has two ordered axes: the sequence (attention mixes positions adaptively) and depth (the residual
stream adds block outputs with fixed unit weights). Fix a token, and its states across layers form a sequence
too. This module gives that depth sequence the same family of operators the sequence axis has, from fixed to
adaptive (chapter 05).

Vocabulary (one token, layer index l = 0..L, 0 = embedding):

* ``outputs`` y_0..y_l: y_0 is the embedding, y_j (j >= 1) what block j-1 *wrote* (attention + MLP output).
* ``states``  X_0..X_l: X_0 = embedding, X_j = (input of block j-1) + y_j, the block's state after its residual.

With the standard residual, X_l = y_0 + y_1 + ... + y_l: the residual stream is the running sum of block outputs.

Every mixer is called as ``mixer(l, states, outputs, hook)`` with lists of (B, T, D) tensors of length l + 1 and
returns a dict of stream inputs for block l (``l == L`` is the final read-out before the LM head):
``{"r": residual input}``, plus ``"q", "k", "v"`` for mixers that give each projection its own depth mixture.
Mixers record their weights at hook point ``depth.{l}.weights`` so that chapter 05 can draw them.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from einops import rearrange
from jaxtyping import Float
from torch import Tensor, nn

from .hooks import no_hook
from .layers import rms_norm

MIXERS = ("residual", "denseformer", "elcbert", "attnres", "shortswa")


def residual_sum(outputs: Float[Tensor, "N B T D"] | list[Tensor]) -> Float[Tensor, "B T D"]:
    """The standard residual stream: the unit-weight sum of the embedding and every block output."""
    return torch.stack(list(outputs)).sum(0) if isinstance(outputs, list) else outputs.sum(0)


class ResidualSum(nn.Module):
    """The standard residual: block l reads X_l = y_0 + ... + y_l (fixed unit weights, no parameters)."""

    streams = ("r",)

    def __init__(self, n_layers: int, d_model: int):
        super().__init__()

    def forward(self, l, states, outputs, hook=no_hook):
        return {"r": states[-1]}


class DenseFormerDWA(nn.Module):
    """DenseFormer's depth-weighted average (Pagliardini et al., arXiv 2402.02622, eq. 1–2).

    ``Y_l = Σ_{j<=l} alpha_{l,j} X_j`` after every block; unconstrained learned scalars ``dwa.{l-1}`` (one vector of
    length l + 1 per l >= 1), initialised to alpha_{l,l} = 1, others 0, so the model *is* the standard Transformer
    at init.
    """

    streams = ("r",)

    def __init__(self, n_layers: int, d_model: int):
        super().__init__()
        self.dwa = nn.ParameterList(
            [nn.Parameter(F.one_hot(torch.tensor(l), l + 1).float()) for l in range(1, n_layers + 1)])

    def forward(self, l, states, outputs, hook=no_hook):
        if l == 0:
            return {"r": states[0]}
        w = hook(f"depth.{l}.weights", self.dwa[l - 1])
        return {"r": torch.einsum("n,nbtd->btd", w, torch.stack(states))}


class ELCBERT(nn.Module):
    """ELC-BERT's layer weighting (Charpentier & Samuel, arXiv 2311.02265, sec. 3, "zero" variant).

    Block l reads a convex combination of earlier *outputs*: ``x_l = Σ_{j<=l} softmax(a_l)_j · y_j`` (no separate
    identity residual). Logits ``logits.{l-1}`` start at 0, i.e. a uniform average of the embedding and every block
    output (not the standard residual).
    """

    streams = ("r",)

    def __init__(self, n_layers: int, d_model: int):
        super().__init__()
        self.logits = nn.ParameterList([nn.Parameter(torch.zeros(l + 1)) for l in range(1, n_layers + 1)])

    def forward(self, l, states, outputs, hook=no_hook):
        if l == 0:
            return {"r": outputs[0]}
        w = hook(f"depth.{l}.weights", self.logits[l - 1].softmax(0))
        return {"r": torch.einsum("n,nbtd->btd", w, torch.stack(outputs))}


class AttentionResiduals(nn.Module):
    """Attention Residuals (Kimi Team, arXiv 2603.15031): a softmax over depth with a learned pseudo-query.

    ``h_l = Σ_{j<=l} softmax_j(w_l · RMSNorm(y_j)) · y_j`` over the embedding and earlier block outputs, per token.
    ``pseudo_query.{l-1}`` (D,) starts at 0, so at init every source gets weight 1 / (l + 1). RMSNorm on the keys
    keeps a large-norm source from dominating. (The paper mixes per sub-layer; we mix per block.)
    """

    streams = ("r",)

    def __init__(self, n_layers: int, d_model: int):
        super().__init__()
        self.pseudo_query = nn.ParameterList([nn.Parameter(torch.zeros(d_model)) for _ in range(n_layers)])

    def forward(self, l, states, outputs, hook=no_hook):
        if l == 0:
            return {"r": outputs[0]}
        ys = torch.stack(outputs)                                               # (n, B, T, D)
        scores = torch.einsum("d,nbtd->btn", self.pseudo_query[l - 1], rms_norm(ys))
        w = hook(f"depth.{l}.weights", scores.softmax(-1))                     # (B, T, n)
        return {"r": torch.einsum("btn,nbtd->btd", w, ys)}


# ---------------------------------------------------------------------------------------------------------------
# ShortSWA: causal sliding-window attention. The same function runs along the sequence axis or along depth.


def short_swa(x: Float[Tensor, "N S D"], window: int, w_q: Tensor, w_k: Tensor, w_v: Tensor,
              n_heads: int = 1) -> Float[Tensor, "N S D"]:
    """Causal sliding-window attention along axis S ("ShortSWA"): position s attends to s-K+1..s.

    ``z_s = softmax(q_s K_wᵀ / sqrt(Dh)) V_w`` with ``q = x W_qᵀ``, ``K_w, V_w`` the projections of the last
    ``min(K, s+1)`` positions (Zhang, "Residual Stream Duality", arXiv 2603.16039, sec. 2.2). Cost O(N·S·K·D): the
    windows are gathered with ``unfold``, never a full (S, S) score matrix; K >= S is full causal attention.

    Args:
        x: N independent sequences of length S (for depth: N = B·T tokens, S = L + 1 layers).
        window: K >= 1.
        w_q, w_k, w_v: (D, D) projection weights (``nn.Linear`` layout).
        n_heads: heads; D must be divisible by it.
    Raises:
        ValueError: if ``window`` < 1 or D is not divisible by ``n_heads``.
    """
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    N, S, D = x.shape
    if D % n_heads:
        raise ValueError(f"D={D} must be divisible by n_heads={n_heads}")
    K = min(window, S)
    q = rearrange(x @ w_q.T, "n s (h e) -> n h s e", h=n_heads)
    kv = torch.stack([x @ w_k.T, x @ w_v.T])                                  # (2, N, S, D)
    kv = F.pad(kv, (0, 0, K - 1, 0))                                          # K-1 empty slots before position 0
    kv = kv.unfold(2, K, 1)                                                   # (2, N, S, D, K): window per position
    k, v = rearrange(kv, "two n s (h e) k -> two n h s k e", h=n_heads)
    scores = torch.einsum("nhse,nhske->nhsk", q, k) / math.sqrt(D // n_heads)
    valid = torch.arange(S, device=x.device)[:, None] + torch.arange(K, device=x.device)[None, :] >= K - 1
    scores = scores.masked_fill(~valid, float("-inf"))                        # the padded slots before position 0
    z = torch.einsum("nhsk,nhske->nhse", scores.softmax(-1), v)
    return rearrange(z, "n h s e -> n s (h e)")


def depth_short_swa(stack: Float[Tensor, "L1 B T D"], window: int, w_q: Tensor, w_k: Tensor, w_v: Tensor,
                    n_heads: int = 1) -> Float[Tensor, "L1 B T D"]:
    """Causal ShortSWA over depth on a depth stack (L+1, B, T, D): each token's layer states are its sequence.

    This *is* :func:`short_swa` on the transposed tensor — the duality of arXiv 2603.16039, sec. 2.2.
    """
    L1, B, T, D = stack.shape
    z = short_swa(rearrange(stack, "l b t d -> (b t) l d"), window, w_q, w_k, w_v, n_heads)
    return rearrange(z, "(b t) l d -> l b t d", b=B, t=T)


class ShortSWADepth(nn.Module):
    """A depth-wise residual read: causal ShortSWA over the last K layer states of the same token.

    Block l reads ``X_l + W_O · z_l`` where ``z_l = softmax(q kᵀ/sqrt(Dh)) v`` with the query from RMSNorm(X_l) and
    keys / values projected from RMSNorm(X_{l-K+1}), ..., RMSNorm(X_l). One set of weights ``q_proj, k_proj,
    v_proj, o_proj`` serves every layer (as sequence attention shares weights over positions); ``o_proj`` starts at
    zero, so at init the model is exactly the standard residual. ``window=None`` is the full-memory variant
    (K = l + 1 at every layer). Cost per block O(T·K·D) vs O(T·L·D) for the full window.

    Raises:
        ValueError: if ``window`` is < 1 or larger than L + 1 (a window that can never be filled).
    """

    streams = ("r",)

    def __init__(self, n_layers: int, d_model: int, window: int | None = None, n_heads: int = 1):
        super().__init__()
        if window is not None and not 1 <= window <= n_layers + 1:
            raise ValueError(f"depth window K must be in 1..L+1 = 1..{n_layers + 1}, got {window}")
        self.window, self.n_heads = window, n_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)
        nn.init.zeros_(self.o_proj.weight)

    def forward(self, l, states, outputs, hook=no_hook):
        K = l + 1 if self.window is None else min(self.window, l + 1)
        win = rms_norm(torch.stack(states[-K:]))                              # (K, B, T, D)
        q = rearrange(self.q_proj(win[-1]), "b t (h e) -> b t h e", h=self.n_heads)
        k = rearrange(self.k_proj(win), "k b t (h e) -> b t h k e", h=self.n_heads)
        v = rearrange(self.v_proj(win), "k b t (h e) -> b t h k e", h=self.n_heads)
        w = torch.einsum("bthe,bthke->bthk", q, k) / math.sqrt(q.size(-1))
        w = hook(f"depth.{l}.weights", w.softmax(-1))                          # (B, T, H, K)
        z = rearrange(torch.einsum("bthk,bthke->bthe", w, v), "b t h e -> b t (h e)")
        return {"r": states[-1] + self.o_proj(z)}


def make_depth_mixer(name: str, n_layers: int, d_model: int, window: int | None = None) -> nn.Module:
    """Build a depth mixer by name (one of :data:`MIXERS`). Raises ValueError on an unknown name."""
    classes = {"residual": ResidualSum, "denseformer": DenseFormerDWA, "elcbert": ELCBERT,
               "attnres": AttentionResiduals}
    classes.update(EXTRA_MIXERS)
    if name == "shortswa":
        return ShortSWADepth(n_layers, d_model, window)
    if name not in classes:
        raise ValueError(f"depth_mixer must be one of {tuple(classes) + ('shortswa',)}, got {name!r}")
    if window is not None:
        raise ValueError(f"depth_window applies only to depth_mixer='shortswa', not {name!r}")
    return classes[name](n_layers, d_model)


# Mixers that give Q, K and V their own depth mixtures register here (name -> class with the same interface).
EXTRA_MIXERS: dict[str, type[nn.Module]] = {}
