"""Routers: depth mixers that give the inputs of Q, K and V (and sometimes the residual) their own mixture of
earlier layers — DeepCrossAttention, MUDDFormer and Vertical Attention. Vocabulary: :mod:`vrs_edu.nn.depth`.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from einops import rearrange
from torch import nn

from vrs_edu.nn.depth_mixer import DepthMixer, DepthRead, Layers
from vrs_edu.nn.hooks import Hook, no_hook
from vrs_edu.nn.layers import SeededInit, rms_norm


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
