"""Depth mixers with learned weights over earlier layers, static or by a softmax: DenseFormer's depth-weighted
average, ELC-BERT's convex combination, Attention Residuals (one pseudo-query per layer) and Attention Residuals
per stream q, k, v over sub-layer outputs (the bank-of-values authors' instrument). Vocabulary: :mod:`vrs_edu.nn.depth`.
"""
from __future__ import annotations

import torch
from jaxtyping import Float
from torch import Tensor, nn

from vrs_edu.nn.depth_mixer import DepthMixer, DepthRead, Layers
from vrs_edu.nn.hooks import Hook, no_hook
from vrs_edu.nn.layers import SeededInit, rms_norm


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
    2L+1), the source axis last in the order above (:func:`vrs_edu.chapters.ch05_depth_as_sequence.readout.sublayer_sources` names them).
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
