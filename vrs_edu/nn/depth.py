"""Depth mixers: how the input of each block is read from the states of earlier layers.

A decoder has two ordered axes: the sequence (attention mixes positions adaptively) and depth (the residual
stream adds block outputs with fixed unit weights). Fix a token, and its states across layers form a sequence
too. This module gives that depth sequence the same family of operators the sequence axis has, from fixed to
adaptive (chapter 05).

Vocabulary (one token, layer index l = 0..L, 0 = embedding):

* ``outputs`` y_0..y_l: y_0 is the embedding, y_j (j >= 1) what block j-1 *wrote* (attention + MLP output).
* ``states``  X_0..X_l: X_0 = embedding, X_j = (input of block j-1) + y_j, the block's state after its residual.

With the standard residual, X_l = y_0 + y_1 + ... + y_l: the residual stream is the running sum of block outputs.
A *sub-layer* mixer (``sublayers = True``: ``attnres_qkv``) is handed the outputs at sub-layer granularity instead,
``outputs`` = [embedding, a_0, m_0, a_1, m_1, ...] (a_j, m_j: what block j's attention and MLP wrote), and also
chooses the MLP's input (:meth:`DepthMixer.mlp_input`).

Every mixer is called as ``mixer(l, states, outputs, hook)`` with lists of (B, T, D) tensors of length l + 1 and
returns a :class:`DepthRead` for block l (``l == L`` is the final read-out before the LM head): ``resid``, the
block's residual input, plus ``q, k, v`` for the mixers that give each projection its own depth mixture (None
otherwise: the projection reads ``resid``).

Single-stream mixers (fixed -> adaptive): ``residual`` (unit weights), ``denseformer`` (learned static weights),
``elcbert`` (learned convex combination), ``attnres`` (softmax over depth, learned pseudo-query), ``shortswa``
(causal attention over the last K layer states; K = L + 1 is the full-memory limit).
Multi-stream routers, which give Q, K and V their *own* depth mixture: ``dca`` (DeepCrossAttention's GRN-v3
combiners), ``mudd`` (MUDDFormer's per-position dynamic weights for Q, K, V and the residual), ``vertical``
(Vertical Attention: a small attention over earlier layers per stream), ``attnres_qkv`` (Attention Residuals with a
pseudo-query per stream q, k, v and r, over sub-layer outputs: the bank-of-values authors' instrument).
Inside attention: ``depth_attention`` (Depth-Attention: a layer's query attends over the keys of earlier layers at
the same position and mixes their values into its own, which the KV cache then stores; no parameters). A control:
``scalar_gain`` (DenseFormer with only its diagonal weight, a learned gain on the stream: no read over depth).

Mixers record their weights at hook point ``depth.{l}.weights`` (one stream) or ``depth.{l}.weights_{q,k,v,r}``
(per stream), always with the *source* axis last (oldest first), so that chapter 05 can draw them
(:func:`vrs_edu.lab.depth_readout.depth_weight_matrices` reads them from a trace).

Initialisation (each mixer's ``reset_parameters(init)``): ``residual``, ``denseformer``, ``shortswa``, ``dca``,
``mudd``, ``vertical`` and ``scalar_gain`` start *exactly* as the standard residual; ``elcbert``, ``attnres`` and
``attnres_qkv`` start as a uniform average over their sources (their papers' inits); ``depth_attention`` has no
parameters (its depth weights come from the layer's own q and the earlier layers' k). Their projections are drawn
from N(0, 0.02²) by the seeded initialiser (:class:`~vrs_edu.nn.layers.SeededInit`). Each mixer lists its mixing weights and gates in
``coefficients()``: the optimizer trains them in their own group.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, get_args

import torch
import torch.nn.functional as F
from einops import rearrange
from jaxtyping import Float
from torch import Tensor, nn

from .hooks import Hook, no_hook
from .layers import SeededInit, rms_norm

DepthMixerName = Literal["residual", "denseformer", "elcbert", "attnres", "shortswa", "dca", "mudd", "vertical",
                         "attnres_qkv", "depth_attention", "scalar_gain"]
MIXERS: tuple[DepthMixerName, ...] = get_args(DepthMixerName)  # what TinyGPTConfig.validate accepts
# the mixers that build separate q, k, v inputs
ROUTERS: tuple[DepthMixerName, ...] = ("dca", "mudd", "vertical", "attnres_qkv")
# A depth read's inputs: one (B, T, D) tensor per layer 0..l (the states X_j, or the outputs y_j).
Layers = list[Float[Tensor, "B T D"]]


@dataclass(frozen=True)
class DepthRead:
    """What a depth mixer hands block l (at l = L: the LM head).

    ``resid`` (B, T, D) is the block's residual input, the x of ``x + block(x)``. ``q, k, v`` (B, T, D) are the
    inputs of the block's Q, K and V projections when the mixer gives each its own depth mixture (the routers);
    None means that projection reads ``resid``, as in a plain Transformer.
    """

    resid: Float[Tensor, "B T D"]
    q: Float[Tensor, "B T D"] | None = None
    k: Float[Tensor, "B T D"] | None = None
    v: Float[Tensor, "B T D"] | None = None


class DepthMixer(nn.Module):
    """What every depth mixer has. ``forward(l, states, outputs, hook) -> DepthRead`` reads lists of l + 1 tensors
    (B, T, D) (the vocabulary above); ``coefficients()`` lists the mixing weights and gates, which the optimizer
    trains in their own group; ``reset_parameters(init)`` sets every parameter to its initial value. The defaults
    here: one stream, no coefficients, nothing to initialise."""

    streams = ("r",)
    sublayers = False      # True: ``outputs`` are sub-layer outputs and the mixer reads the MLP's input too
    mixes_values = False   # True: the mixer reads V over depth inside attention (:meth:`read_values`)

    def coefficients(self) -> list[nn.Parameter]:
        return []

    @torch.no_grad()
    def reset_parameters(self, init: SeededInit) -> None:
        pass

    def mlp_input(self, l: int, outputs: Layers, attn_out: Float[Tensor, "B T D"],
                  hook: Hook = no_hook) -> Float[Tensor, "B T D"]:
        """The MLP's input in block l, for a sub-layer mixer (``sublayers``); ``outputs`` as in ``forward`` and
        ``attn_out`` what block l's attention just wrote. The other mixers never get this call: their MLP reads the
        residual input plus ``attn_out``, as in a plain Transformer."""
        raise NotImplementedError(f"{type(self).__name__} reads no MLP input (sublayers is False)")

    def read_values(self, l: int, q: Tensor, k: Tensor, v: Tensor, cache: list, hook: Hook = no_hook) -> Tensor:
        """Layer l's values read over depth, for a mixer with ``mixes_values`` (see :class:`DepthAttention`)."""
        raise NotImplementedError(f"{type(self).__name__} does not read values (mixes_values is False)")


class ResidualSum(DepthMixer):
    """The standard residual: block l reads X_l = y_0 + ... + y_l (fixed unit weights, no parameters)."""

    def __init__(self, n_layers: int, d_model: int):
        super().__init__()

    def forward(self, l: int, states: Layers, outputs: Layers, hook: Hook = no_hook) -> DepthRead:
        return DepthRead(states[-1])


class DenseFormerDWA(DepthMixer):
    """DenseFormer's depth-weighted average (Pagliardini et al., arXiv 2402.02622, eq. 1–2).

    ``Y_l = Σ_{j<=l} alpha_{l,j} X_j`` after every block; unconstrained learned scalars ``dwa.{l-1}`` (one vector of
    length l + 1 per l >= 1), initialised to alpha_{l,l} = 1, others 0, so the model *is* the standard Transformer
    at init.
    """

    def __init__(self, n_layers: int, d_model: int):
        super().__init__()
        self.dwa = nn.ParameterList(
            [nn.Parameter(torch.eye(l + 1)[l]) for l in range(1, n_layers + 1)])

    def coefficients(self) -> list[nn.Parameter]:
        return list(self.dwa)

    @torch.no_grad()
    def reset_parameters(self, init: SeededInit) -> None:
        """alpha_{l,l} = 1, every other weight 0: the standard residual."""
        for w in self.dwa:
            w.copy_(torch.eye(len(w))[-1])

    def forward(self, l: int, states: Layers, outputs: Layers, hook: Hook = no_hook) -> DepthRead:
        if l == 0:
            return DepthRead(states[0])
        w = hook(f"depth.{l}.weights", self.dwa[l - 1])
        return DepthRead(torch.einsum("n,nbtd->btd", w, torch.stack(states)))


class ELCBERT(DepthMixer):
    """ELC-BERT's layer weighting (Charpentier & Samuel, arXiv 2311.02265, sec. 3, "zero" variant).

    Block l reads a convex combination of earlier *outputs*: ``x_l = Σ_{j<=l} softmax(a_l)_j · y_j`` (no separate
    identity residual). Logits ``logits.{l-1}`` start at 0, i.e. a uniform average of the embedding and every block
    output (not the standard residual).
    """

    def __init__(self, n_layers: int, d_model: int):
        super().__init__()
        self.logits = nn.ParameterList([nn.Parameter(torch.zeros(l + 1)) for l in range(1, n_layers + 1)])

    def coefficients(self) -> list[nn.Parameter]:
        return list(self.logits)

    @torch.no_grad()
    def reset_parameters(self, init: SeededInit) -> None:
        """Logits 0: a uniform average."""
        for a in self.logits:
            a.zero_()

    def forward(self, l: int, states: Layers, outputs: Layers, hook: Hook = no_hook) -> DepthRead:
        if l == 0:
            return DepthRead(outputs[0])
        w = hook(f"depth.{l}.weights", self.logits[l - 1].softmax(0))
        return DepthRead(torch.einsum("n,nbtd->btd", w, torch.stack(outputs)))


class AttentionResiduals(DepthMixer):
    """Attention Residuals (Kimi Team, arXiv 2603.15031): a softmax over depth with a learned pseudo-query.

    ``h_l = Σ_{j<=l} softmax_j(w_l · RMSNorm(y_j)) · y_j`` over the embedding and earlier block outputs, per token.
    ``pseudo_query.{l-1}`` (D,) starts at 0, so at init every source gets weight 1 / (l + 1). RMSNorm on the keys
    keeps a large-norm source from dominating. (The paper mixes per sub-layer; we mix per block.)
    """

    def __init__(self, n_layers: int, d_model: int):
        super().__init__()
        self.pseudo_query = nn.ParameterList([nn.Parameter(torch.zeros(d_model)) for _ in range(n_layers)])

    def coefficients(self) -> list[nn.Parameter]:
        return list(self.pseudo_query)

    @torch.no_grad()
    def reset_parameters(self, init: SeededInit) -> None:
        """Pseudo-queries 0: a uniform average."""
        for w in self.pseudo_query:
            w.zero_()

    def forward(self, l: int, states: Layers, outputs: Layers, hook: Hook = no_hook) -> DepthRead:
        if l == 0:
            return DepthRead(outputs[0])
        return DepthRead(attn_res_read(self.pseudo_query[l - 1], outputs, hook, f"depth.{l}.weights"))


def attn_res_read(query: Float[Tensor, "D"], sources: Layers, hook: Hook = no_hook,
                  name: str = "weights") -> Float[Tensor, "B T D"]:
    """One Attention-Residuals read: ``Σ_j softmax_j(w · RMSNorm(y_j)) · y_j`` over ``sources`` (a list of n
    tensors (B, T, D), oldest first), per token. The weights (B, T, n) pass hook point ``name``. RMSNorm is applied
    to the keys only: the values y_j are mixed as they are (arXiv 2603.15031; RiddleHe/nanochat ``_attn_res``)."""
    ys = torch.stack(sources)                                                   # (n, B, T, D)
    scores = torch.einsum("d,nbtd->btn", query, rms_norm(ys))
    w = hook(name, scores.softmax(-1))                                          # (B, T, n)
    return torch.einsum("btn,nbtd->btd", w, ys)


class AttentionResidualsQKV(DepthMixer):
    """Attention Residuals with one pseudo-query per stream, over sub-layer outputs (``attnres_qkv``): the instrument
    of the bank-of-values authors' post (Yuchen Liu, 2026-06-03), in which q, k and v each choose by themselves
    which earlier sub-layer they read.

    Sources at sub-layer granularity, oldest first: ``outputs`` = [embedding, a_0, m_0, ..., a_{l-1}, m_{l-1}]
    (a_j what block j's attention wrote, m_j what its MLP wrote): 2l + 1 sources before block l's attention, 2l + 2
    before its MLP (a_l is then written), 2L + 1 for the final read-out. With ``read(w, ys) = Σ_j softmax_j(w ·
    RMSNorm(y_j)) y_j`` (:func:`attn_res_read`), block l computes::

        x^q = read(w^q_l, ys)   x^k = read(w^k_l, ys)   x^v = read(w^v_l, ys)       q, k, v from RMSNorm of each
        a_l = Attn(x^q, x^k, x^v)
        m_l = MLP(RMSNorm(read(w^r_l, ys + [a_l])))                                 the residual read, stream r
        final read-out = read(w^r_L, [embedding, a_0, m_0, ..., a_{L-1}, m_{L-1}])

    ``pseudo_query.{l}`` holds block l's queries, rows (q, k, v, r) for l >= 1 and (r) for l = 0;
    ``pseudo_query.{L}`` the final read-out's (1, D). All start at 0: every read is the uniform mean of its sources. Hook points
    ``depth.{l}.weights_{q,k,v}`` (B, T, 2l+1) and ``depth.{l}.weights_r`` (B, T, 2l+2; the final read-out, l = L:
    2L+1), the source axis last in the order above (:func:`vrs_edu.lab.depth_readout.sublayer_sources` names them).
    There is no residual stream: ``DepthRead.resid`` is the running sum of every sub-layer output so far (what a
    standard residual would carry), recorded at ``blocks.{l}.resid_pre`` for comparison and read by nothing.

    Source, followed line by line: RiddleHe/nanochat, branch ``yuchen/attn-res-qkv`` (commit 542b9d9),
    ``nanochat/model/gpt_attn_res_qkv.py`` lines 102-105 (4L + 1 zero-initialised queries: q, k, v and the pre-MLP
    read per layer, plus one final), 134-155 (the forward pass above) and ``nanochat/model/gpt_attn_res.py`` lines
    98-111 (``_attn_res``: RMSNorm on the keys only, softmax over the sources) and 130-131 (zero init); the read-out
    of the weights, ``scripts/inspect/visualize_attn_res_qkv.py`` lines 43-103 (per stream, averaged over tokens).
    Deviations (the rest of the course's TinyGPT is kept): block 0's q, k, v queries are left out (a softmax over
    its one source is 1 whatever they are, so they could never learn); the queries train in the course's
    coefficient group (AdamW, lr ``coef_lr`` 0.02, betas (0.9, 0.95)) and not at the source's AdamW lr 0.001,
    betas (0.9, 0.999) (``gpt_attn_res.py`` line 235); and, inherited from GPTAttnRes there but not here: the
    previous-token "smear" of the embedding (lines 119-132), value embeddings on alternate layers (line 144),
    sliding-window attention, the logit soft-cap 15, Muon for the matrices, QK-norm always on, its uniform init.
    """

    streams = ("q", "k", "v", "r")
    sublayers = True

    def __init__(self, n_layers: int, d_model: int):
        super().__init__()
        self.n_layers = n_layers
        rows = [1] + [4] * (n_layers - 1) + [1]               # block 0: r only; blocks 1..L-1: q, k, v, r; final: r
        self.pseudo_query = nn.ParameterList([nn.Parameter(torch.zeros(n, d_model)) for n in rows])

    def coefficients(self) -> list[nn.Parameter]:
        return list(self.pseudo_query)

    @torch.no_grad()
    def reset_parameters(self, init: SeededInit) -> None:
        """Pseudo-queries 0: every read is a uniform average of its sources."""
        for w in self.pseudo_query:
            w.zero_()

    def forward(self, l: int, states: Layers, outputs: Layers, hook: Hook = no_hook) -> DepthRead:
        if l == self.n_layers:                                                 # the final read-out
            return DepthRead(attn_res_read(self.pseudo_query[l][0], outputs, hook, f"depth.{l}.weights_r"))
        if l == 0:                                                             # one source: q, k, v read it
            return DepthRead(states[-1])
        # the three reads share their sources: one stack, one RMSNorm, one score einsum (same numbers as three
        # calls of attn_res_read, at a third of the cost)
        ys = torch.stack(outputs)                                               # (n, B, T, D)
        scores = torch.einsum("cd,nbtd->cbtn", self.pseudo_query[l][:3], rms_norm(ys)).softmax(-1)
        reads = {s: torch.einsum("btn,nbtd->btd", hook(f"depth.{l}.weights_{s}", scores[c]), ys)
                 for c, s in enumerate("qkv")}
        return DepthRead(states[-1], **reads)

    def mlp_input(self, l: int, outputs: Layers, attn_out: Float[Tensor, "B T D"],
                  hook: Hook = no_hook) -> Float[Tensor, "B T D"]:
        """Block l's MLP reads ``read(w^r_l, outputs + [a_l])``: its own softmax over depth (no residual sum)."""
        return attn_res_read(self.pseudo_query[l][-1], [*outputs, attn_out], hook, f"depth.{l}.weights_r")


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
    kv = torch.stack([x @ w_k.T, x @ w_v.T])                                  # (2, N, S, D)
    kv = F.pad(kv, (0, 0, K - 1, 0))                                          # K-1 empty slots before position 0
    kv = kv.unfold(2, K, 1)                                                   # (2, N, S, D, K): window per position
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


# ---------------------------------------------------------------------------------------------------------------
# Routers: separate depth mixtures for the inputs of Q, K and V (and sometimes the residual).


class DeepCrossAttention(DepthMixer):
    """DeepCrossAttention (Heddes et al., arXiv 2502.06785): three GRN-v3 combiners build the q, k, v inputs.

    GRN-v3 ("generalized residual network", input-dependent), per stream c ∈ {q, k, v}, over the embedding and
    every earlier block output y_0..y_l (the paper's form, as in the unofficial reference implementation
    lucidrains/deep-cross-attention)::

        x^c_l = Σ_j ( b_{c,j} + gamma_l · ReLU(w_c · RMSNorm(y_j)) ) ⊙ y_j        b_{c,j} ∈ R^D, w_c ∈ R^D

    ``dwa.{l-1}`` holds b (3, l+1, D), initialised to 1; ``dyn_proj.{l-1}`` holds w (3, D), drawn like every other
    weight (normal, std 0.02); ``gamma.{l-1}`` is a scalar gate, initialised to 0, so that at init every stream is
    Σ_j y_j = X_l: exactly the standard residual. Why the gate: the reference code starts w at 0 instead, but the
    gradient of ReLU at 0 is 0, so w (and with it every input-dependent weight) would never move from 0. With w
    random and gamma = 0, gamma gets a gradient at the first step and w from the second on; for gamma > 0 the
    combiner is exactly the paper's, with w_c scaled by gamma (gamma · ReLU(w·x) = ReLU(gamma·w·x)). The residual
    input is the q stream (as in the reference implementation); the final read-out uses one more combiner. All
    earlier layers are read (the paper's k-DCA subsampling is not needed at L = 8).

    The per-feature weight is split exactly into a part shared by all D features and a static per-feature
    deviation: ``b_{c,j} + a_{c,j} = (mean_D b_{c,j} + a_{c,j}) + (b_{c,j} − mean_D b_{c,j})``, so that the mixture
    costs two small einsums instead of a (B, T, D, l+1) weight tensor.

    Hook points ``depth.{l}.weights_{q,k,v}`` (B, T, l+1): the shared part
    ``mean_D b + gamma · ReLU(w · RMSNorm(y_j))``.
    """

    streams = ("q", "k", "v")

    def __init__(self, n_layers: int, d_model: int):
        super().__init__()
        n_out = [3] * n_layers + [1]             # blocks 1..L-1 need q, k, v; the final read-out only r
        self.dwa = nn.ParameterList([nn.Parameter(torch.ones(n_out[l], l + 1, d_model))
                                     for l in range(1, n_layers + 1)])
        self.dyn_proj = nn.ParameterList([nn.Parameter(0.02 * torch.randn(n_out[l], d_model))
                                          for l in range(1, n_layers + 1)])   # re-drawn by reset_parameters
        self.gamma = nn.ParameterList([nn.Parameter(torch.tensor(0.0)) for _ in range(n_layers)])
        self.n_layers = n_layers

    def coefficients(self) -> list[nn.Parameter]:
        return [*self.dwa, *self.gamma]

    @torch.no_grad()
    def reset_parameters(self, init: SeededInit) -> None:
        """b = 1, gamma = 0 (every stream is X_l: the standard residual); w from N(0, 0.02²)."""
        for b, g in zip(self.dwa, self.gamma):
            b.fill_(1.0)
            g.zero_()
        for i in range(len(self.dyn_proj)):
            init.normal_(self, f"dyn_proj.{i}")

    def forward(self, l: int, states: Layers, outputs: Layers, hook: Hook = no_hook) -> DepthRead:
        if l == 0:
            return DepthRead(outputs[0])
        ys = torch.stack(outputs)                                               # (n, B, T, D)
        dynamic = self.gamma[l - 1] * torch.einsum("cd,nbtd->cbtn", self.dyn_proj[l - 1], rms_norm(ys)).relu()
        b = self.dwa[l - 1]                                                     # (C, n, D)
        b_shared = b.mean(-1)                                                   # (C, n)
        names = ("r",) if l == self.n_layers else self.streams
        out = {}
        for c, s in enumerate(names):
            w = hook(f"depth.{l}.weights_{s}", b_shared[c] + dynamic[c])        # (B, T, n)
            out[s] = (torch.einsum("btn,nbtd->btd", w, ys)
                      + torch.einsum("nd,nbtd->btd", b[c] - b_shared[c, :, None], ys))
        if l == self.n_layers:
            return DepthRead(out["r"])
        return DepthRead(out["q"], **out)                                       # the residual is the q stream


class MUDDFormer(DepthMixer):
    """MUDDFormer's multiway dynamic dense connections (Xiao et al., arXiv 2502.12170, sec. 3).

    For block l and each stream c ∈ {q, k, v, r}, per position, over the states X_0..X_l::

        a_c = s_c + gamma · (W2 · GELU(W1 · RMSNorm(X_l)))_c      x^c_l = Σ_j a_{c,j} X_j

    ``dwa.{l-1}`` holds the static weights s (C, l+1), initialised to 1 on the latest state and 0 elsewhere;
    ``dyn_up.{l-1}`` (D -> l+1) and ``dyn_down.{l-1}`` (l+1 -> C·(l+1)) compute the dynamic part. The paper's
    hidden width is C·(l+1); we use l+1 to keep the added parameters under 1 % at D = 64. The dynamic part is
    scaled by the scalar ``gamma.{l-1}`` (init 0; modded-nanogpt's MUDD record also starts as a no-op), so at init
    every stream is X_l: exactly the standard residual. The final read-out (l = L) has one stream, r (C = 1).

    Hook points ``depth.{l}.weights_{q,k,v,r}`` (B, T, l+1).
    """

    streams = ("q", "k", "v", "r")

    def __init__(self, n_layers: int, d_model: int):
        super().__init__()
        self.n_layers = n_layers
        C = [4] * n_layers + [1]
        self.dwa = nn.ParameterList([nn.Parameter(torch.eye(l + 1)[l].repeat(C[l], 1))
                                     for l in range(1, n_layers + 1)])
        self.dyn_up = nn.ModuleList([nn.Linear(d_model, l + 1, bias=False) for l in range(1, n_layers + 1)])
        self.dyn_down = nn.ModuleList([nn.Linear(l + 1, C[l] * (l + 1), bias=False) for l in range(1, n_layers + 1)])
        self.gamma = nn.ParameterList([nn.Parameter(torch.tensor(0.0)) for _ in range(n_layers)])

    def coefficients(self) -> list[nn.Parameter]:
        return [*self.dwa, *self.gamma]

    @torch.no_grad()
    def reset_parameters(self, init: SeededInit) -> None:
        """s = 1 on the latest state and 0 elsewhere, gamma = 0 (the standard residual); the dynamic MLP from
        N(0, 0.02²)."""
        for i, (s, g) in enumerate(zip(self.dwa, self.gamma)):
            s.copy_(torch.eye(s.size(-1))[-1].expand_as(s))
            g.zero_()
            init.normal_(self, f"dyn_up.{i}.weight")
            init.normal_(self, f"dyn_down.{i}.weight")

    def forward(self, l: int, states: Layers, outputs: Layers, hook: Hook = no_hook) -> DepthRead:
        if l == 0:
            return DepthRead(states[0])
        xs = torch.stack(states)                                                # (n, B, T, D)
        names = ("r",) if l == self.n_layers else self.streams
        dyn = self.dyn_down[l - 1](F.gelu(self.dyn_up[l - 1](rms_norm(states[-1]))))
        dyn = rearrange(dyn, "b t (c n) -> c b t n", c=len(names))
        a = self.dwa[l - 1][:, None, None, :] + self.gamma[l - 1] * dyn         # (C, B, T, n)
        out = {s: torch.einsum("btn,nbtd->btd", hook(f"depth.{l}.weights_{s}", a[c]), xs)
               for c, s in enumerate(names)}
        return DepthRead(out.pop("r"), **out)


class VerticalAttention(DepthMixer):
    """Vertical Attention (Kojima et al., OpenReview A6uabXKiXc): small attention modules at the start of each
    layer choose which earlier layers feed it.

    Our minimal form: for block l and stream c ∈ {q, k, v}, a one-head attention over depth with ``d_key`` = 4
    dimensions, the query from the current state and the keys from the embedding and each earlier block output::

        w_c = softmax_j( (P_c RMSNorm(X_l)) · (K RMSNorm(y_j)) / sqrt(d_key) )     x^c_l = (l+1) · Σ_j w_{c,j} y_j

    The factor l + 1 (the number of sources) makes uniform weights give the sum y_0 + ... + y_l = X_l.
    ``query_proj.{l-1}`` (P, D -> 3·d_key) starts at zero, so every weight is 1/(l+1) and every stream is X_l:
    exactly the standard residual at init. ``key_proj`` (D -> d_key) is per layer. The residual stream itself stays
    the standard sum (r = X_l): the routers choose what Q, K and V read, not what the stream carries.

    Hook points ``depth.{l}.weights_{q,k,v}`` (B, T, l+1).
    """

    streams = ("q", "k", "v")

    def __init__(self, n_layers: int, d_model: int, d_key: int = 4):
        super().__init__()
        self.d_key = d_key
        self.query_proj = nn.ModuleList([nn.Linear(d_model, 3 * d_key, bias=False) for _ in range(n_layers - 1)])
        self.key_proj = nn.ModuleList([nn.Linear(d_model, d_key, bias=False) for _ in range(n_layers - 1)])
        for m in self.query_proj:
            nn.init.zeros_(m.weight)

    def coefficients(self) -> list[nn.Parameter]:
        return [m.weight for m in self.query_proj]

    @torch.no_grad()
    def reset_parameters(self, init: SeededInit) -> None:
        """P = 0 (uniform weights: the standard residual); the key projections from N(0, 0.02²)."""
        for i, m in enumerate(self.query_proj):
            m.weight.zero_()
            init.normal_(self, f"key_proj.{i}.weight")

    def forward(self, l: int, states: Layers, outputs: Layers, hook: Hook = no_hook) -> DepthRead:
        if l == 0 or l > len(self.query_proj):                                # embedding, and the final read-out
            return DepthRead(states[-1])
        ys = torch.stack(outputs)                                               # (n, B, T, D)
        q = rearrange(self.query_proj[l - 1](rms_norm(states[-1])), "b t (c e) -> c b t e", c=3)
        k = self.key_proj[l - 1](rms_norm(ys))                                  # (n, B, T, e)
        w = (torch.einsum("cbte,nbte->cbtn", q, k) / math.sqrt(self.d_key)).softmax(-1)
        out = {s: (l + 1) * torch.einsum("btn,nbtd->btd", hook(f"depth.{l}.weights_{s}", w[c]), ys)
               for c, s in enumerate(self.streams)}
        return DepthRead(states[-1], **out)


# ---------------------------------------------------------------------------------------------------------------
# Inside attention: a read of V over depth that the KV cache stores.


class DepthAttention(DepthMixer):
    """Depth-Attention (Zeng, Hao, Wang et al., arXiv 2606.05014): before layer l attends over the sequence, its
    query attends over the keys of earlier layers *at the same position* and mixes their values into its own.

    Per position t and head h, with the layer's own q_l, k_l, v_l (after RoPE and, if set, QK-norm: at one position
    the rotation cancels in q_l · k_j) and the cache entries (k_j, ṽ_j) of the source layers j ∈ S(l)::

        a_{l,j} = softmax_{j ∈ S(l) ∪ {l}} ( q_l · k_j / sqrt(Dh) )          (ṽ_l's own term uses v_l)
        ṽ_l     = Σ_{j ∈ S(l)} a_{l,j} ṽ_j + a_{l,l} v_l
        z_l     = softmax(q_l K_lᵀ / sqrt(Dh) + causal mask) Ṽ_l          the usual attention, over Ṽ_l

    and ṽ_l, not v_l, is what the KV cache keeps for layer l (and what later layers read as layer l's value). So
    the model has no parameters beyond the baseline's and caches exactly as many numbers per token (2·L·D). The
    sources are every ``stride``-th earlier layer, S(l) = {j < l : j mod stride = 0}; ``stride`` defaults to L // 2,
    the released configs' choice (32 layers: 16, 48 layers: 24), so at L = 8 layers 1-4 read layer 0 and layers 5-7
    read layers 0 and 4. The residual stream is the standard one.

    Source: the authors' code, hyq718/Depth-Attention (a public copy of LUMIA-Group/Depth-Attention),
    ``src/llamafactory/model/modeling/modeling_llama_depth_attention.py``: the eager ``depth_softmax`` branch of
    ``LlamaAttention.forward`` (scores q · k_norm(k) / sqrt(head_dim) over the sources then self, softmax, the
    mixed V stored with ``layer_kv_for_reuse = (self_k, value_states)``), the source choice in ``LlamaModel.forward``
    (``i % depth_softmax_stride == 0``, plus ``depth_recent_window``, 0 in every released config), the reference
    formula in ``tests/test_depth_attention.py``; the released configs in ``llama_config/``. The paper's own
    equations could not be read here (only its abstract and title page are stored): this is the formula of its
    code. Deviations: none in the rule; the authors' decoders use grouped-query attention and per-head learned
    RMSNorm on q and k (``use_qk_norm``), the course's TinyGPT full multi-head attention and QK-norm only with
    ``qk_norm=True``.

    Hook point ``depth.{l}.weights`` (B, H, T, l+1) for l >= 1: the weights over layers 0..l, exactly 0 on the
    layers outside S(l) ∪ {l} (they are masked before the softmax), oldest first; inside attention the layer's
    own values pass ``blocks.{l}.attn.v_self`` and the mixed ones ``blocks.{l}.attn.v``.
    """

    mixes_values = True

    def __init__(self, n_layers: int, d_model: int, stride: int | None = None):
        super().__init__()
        stride = max(1, n_layers // 2) if stride is None else stride
        if stride < 1:
            raise ValueError(f"stride must be >= 1, got {stride}")
        self.stride = stride

    def sources(self, l: int) -> list[int]:
        """S(l): the earlier layers whose cached values layer l reads (every ``stride``-th, from layer 0)."""
        return [j for j in range(l) if j % self.stride == 0]

    def forward(self, l: int, states: Layers, outputs: Layers, hook: Hook = no_hook) -> DepthRead:
        return DepthRead(states[-1])                                            # the standard residual stream

    def read_values(self, l: int, q: Float[Tensor, "B H T Dh"], k: Float[Tensor, "B H T Dh"],
                    v: Float[Tensor, "B H T Dh"], cache: list[tuple[Tensor, Tensor]],
                    hook: Hook = no_hook) -> Float[Tensor, "B H T Dh"]:
        """ṽ_l from layer l's q, k, v and ``cache``, the (k_j, ṽ_j) of layers 0..l-1 as a decoder's KV cache
        holds them; appends (k_l, ṽ_l) to it (the mixed values are stored in place of v_l) and returns ṽ_l.

        Raises:
            ValueError: ``cache`` does not hold exactly the l earlier layers.
        """
        if len(cache) != l:
            raise ValueError(f"layer {l} reads the cache of layers 0..{l - 1}, got {len(cache)} entries")
        if l == 0:                                                              # no earlier layer: ṽ_0 = v_0
            cache.append((k, v))
            return v
        keys = torch.stack([kj for kj, _ in cache] + [k])                       # (l+1, B, H, T, Dh)
        values = torch.stack([vj for _, vj in cache] + [v])
        scores = torch.einsum("bhte,nbhte->bhtn", q, keys) / math.sqrt(q.size(-1))
        read = torch.zeros(l + 1, dtype=torch.bool, device=q.device)
        read[self.sources(l) + [l]] = True
        w = hook(f"depth.{l}.weights", scores.masked_fill(~read, float("-inf")).softmax(-1))   # (B, H, T, l+1)
        mixed = torch.einsum("bhtn,nbhte->bhte", w, values)
        cache.append((k, mixed))
        return mixed


# ---------------------------------------------------------------------------------------------------------------
# A control with the mixers' kind of extra parameters but no read over depth.


class ScalarGain(DepthMixer):
    """The scalar-gain control (``scalar_gain``; from no paper): DenseFormer's rule (arXiv 2402.02622, eq. 1-2) with
    only its diagonal weight, block l (1 <= l < L) reading ``g_l · X_l``.

    A DenseFormer or MUDD win may come from reading earlier layers, or only from rescaling the stream against what
    the next block writes, with static weights trained in the coefficient group (lr ``coef_lr``, 6.7x the matrices'
    rate). This control has the second and not the first: one learned scalar ``gain.{l-1}`` per block l >= 1,
    initialised to 1 (exactly the standard residual), trained in the same group. The final read-out is not scaled
    (RMSNorm before the LM head would undo it, so its gain could never learn). Hook point ``depth.{l}.weights``
    (1,): the weight on the latest state.
    """

    def __init__(self, n_layers: int, d_model: int):
        super().__init__()
        self.n_layers = n_layers
        self.gain = nn.ParameterList([nn.Parameter(torch.tensor(1.0)) for _ in range(1, n_layers)])

    def coefficients(self) -> list[nn.Parameter]:
        return list(self.gain)

    @torch.no_grad()
    def reset_parameters(self, init: SeededInit) -> None:
        """Gains 1: the standard residual."""
        for g in self.gain:
            g.fill_(1.0)

    def forward(self, l: int, states: Layers, outputs: Layers, hook: Hook = no_hook) -> DepthRead:
        if l == 0 or l == self.n_layers:
            return DepthRead(states[-1])
        g = hook(f"depth.{l}.weights", self.gain[l - 1].reshape(1))
        return DepthRead(g * states[-1])


def make_depth_mixer(name: DepthMixerName, n_layers: int, d_model: int, window: int | None = None) -> DepthMixer:
    """Build a depth mixer by name (one of :data:`MIXERS`). Raises ValueError on an unknown name, or a
    ``window`` given to a mixer other than ``shortswa``."""
    classes = {"residual": ResidualSum, "denseformer": DenseFormerDWA, "elcbert": ELCBERT,
               "attnres": AttentionResiduals, "dca": DeepCrossAttention, "mudd": MUDDFormer,
               "vertical": VerticalAttention, "attnres_qkv": AttentionResidualsQKV,
               "depth_attention": DepthAttention, "scalar_gain": ScalarGain}
    if name == "shortswa":
        return ShortSWADepth(n_layers, d_model, window)
    if name not in classes:
        raise ValueError(f"depth_mixer must be one of {tuple(classes) + ('shortswa',)}, got {name!r}")
    if window is not None:
        raise ValueError(f"depth_window applies only to depth_mixer='shortswa', not {name!r}")
    return classes[name](n_layers, d_model)
