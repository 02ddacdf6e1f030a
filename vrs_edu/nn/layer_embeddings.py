"""Token embeddings read again deep in the model: per-layer embeddings (into the stream) and value embeddings (into V).

Two shipped ways of giving every layer fresh access to the token's identity, next to the course's x0 path:

* **Per-layer embeddings (PLE)**, Gemma 3n and the small Gemma 4 models (config field ``hidden_size_per_layer_input``
  = P; transformers ``models/gemma3n`` and ``models/gemma4``). One packed table (V, L·P) gives each token a P-wide
  vector per layer; it is combined with a projection of the main embedding (:class:`PerLayerEmbeddings`, computed
  once before layer 0), and layer l adds ``RMSNorm_g(W_proj (GELU(W_gate h) ⊙ p_l))`` to its stream *after* its MLP
  (:class:`PerLayerInput`). Gemma 4 adds it to the residual stream; Gemma 3n adds it to the AltUp streams 1..n-1,
  not to the active stream 0 that the next layer's attention reads first.
* **Value embeddings**, modded-nanogpt (Jordan et al., github.com/KellerJordan/modded-nanogpt, speedrun record #14 and
  later, gated) and nanochat (Karpathy, github.com/karpathy/nanochat, ``nanochat/gpt.py``): layer l owns a table
  E_l (V, Hkv·Dh) and adds a gated lookup to its values, ``v ← v + g ⊙ E_l[idx]`` with the gate per kv head
  ``g = 2·sigmoid(W_g x[:, :, :C])`` read from the first C = 32 channels of the layer's normalised input (nanochat,
  on alternating layers, the last always included; the factor and C are arguments here). Unlike PLE it enters
  through V, the path that decides *what* attention moves (:class:`ValueEmbedding`).

Shapes: B batch, T sequence, D = d_model, L layers, P = d_layer, V vocabulary, Hkv kv heads, Dh head width.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from einops import rearrange
from jaxtyping import Float, Int
from torch import Tensor, nn

from vrs_edu.nn.layers import RMSNorm



def _check_ids(idx: Tensor, vocab_size: int) -> None:
    if idx.dim() != 2 or idx.dtype not in (torch.int32, torch.int64):
        raise ValueError(f"idx must be (B, T) integer token ids, got {tuple(idx.shape)} {idx.dtype}")
    if idx.numel() and not 0 <= int(idx.min()) <= int(idx.max()) < vocab_size:
        raise ValueError(f"idx must lie in 0..{vocab_size - 1}, got {int(idx.min())}..{int(idx.max())}")


class PerLayerEmbeddings(nn.Module):
    """Gemma 3n / Gemma 4's per-layer inputs ``p`` (B, T, L, P), computed once from the token ids and the main
    embedding:

        p = (RMSNorm_g(reshape(W_m e · D^-1/2)) + E[idx] · sqrt(P)) · 2^-1/2

    where e (B, T, D) is the main token embedding as the model's stream starts with it (Gemma scales it by sqrt(D)),
    ``E`` the packed table ``embed.weight`` (V, L·P) and ``W_m`` = ``model_proj`` (D -> L·P). transformers:
    ``get_per_layer_inputs`` (the table term) and ``project_per_layer_inputs`` (the projection, and the sum).

    Raises:
        ValueError: if idx is not (B, T) ids in 0..V-1 or e is not (B, T, D).
    """

    def __init__(self, vocab_size: int, n_layers: int, d_model: int, d_layer: int, eps: float = 1e-6):
        super().__init__()
        self.vocab_size, self.n_layers, self.d_model, self.d_layer = vocab_size, n_layers, d_model, d_layer
        self.embed = nn.Embedding(vocab_size, n_layers * d_layer)
        self.model_proj = nn.Linear(d_model, n_layers * d_layer, bias=False)
        self.proj_norm = RMSNorm(d_layer, eps)

    def forward(self, idx: Int[Tensor, "B T"], e: Float[Tensor, "B T D"]) -> Float[Tensor, "B T L P"]:
        _check_ids(idx, self.vocab_size)
        if e.shape != (*idx.shape, self.d_model):
            raise ValueError(f"e must be (B, T, D) = {(*idx.shape, self.d_model)}, got {tuple(e.shape)}")
        table = rearrange(self.embed(idx) * math.sqrt(self.d_layer), "b t (l p) -> b t l p", l=self.n_layers)
        proj = rearrange(self.model_proj(e) / math.sqrt(self.d_model), "b t (l p) -> b t l p", l=self.n_layers)
        return (self.proj_norm(proj) + table) / math.sqrt(2.0)


class PerLayerInput(nn.Module):
    """Layer l's use of its per-layer input p_l (B, T, P), after the layer's MLP:

        h ← h + RMSNorm_g(W_proj (GELU_tanh(W_gate h) ⊙ p_l))

    ``gate`` (D -> P) reads the stream, the token's p_l multiplies it channel by channel, ``proj`` (P -> D) writes
    back, and ``post_norm`` (a learned-gain RMSNorm, D) sets its scale (Gemma 4's ``per_layer_input_gate``,
    ``per_layer_projection``, ``post_per_layer_input_norm``; GELU with the tanh approximation is Gemma's
    ``hidden_activation``).

    Raises:
        ValueError: if h is not (B, T, D) or p_l not (B, T, P).
    """

    def __init__(self, d_model: int, d_layer: int, eps: float = 1e-6):
        super().__init__()
        self.d_model, self.d_layer = d_model, d_layer
        self.gate = nn.Linear(d_model, d_layer, bias=False)
        self.proj = nn.Linear(d_layer, d_model, bias=False)
        self.post_norm = RMSNorm(d_model, eps)

    def forward(self, h: Float[Tensor, "B T D"], p_l: Float[Tensor, "B T P"]) -> Float[Tensor, "B T D"]:
        return h + self.write(h, p_l)

    def write(self, h: Float[Tensor, "B T D"], p_l: Float[Tensor, "B T P"]) -> Float[Tensor, "B T D"]:
        """What the layer adds to its stream, ``RMSNorm_g(W_proj (GELU_tanh(W_gate h) ⊙ p_l))`` (B, T, D); errors
        as :meth:`forward`."""
        if h.dim() != 3 or h.size(-1) != self.d_model:
            raise ValueError(f"h must be (B, T, D={self.d_model}), got {tuple(h.shape)}")
        if p_l.shape != (*h.shape[:2], self.d_layer):
            raise ValueError(f"p_l must be (B, T, P) = {(*h.shape[:2], self.d_layer)}, got {tuple(p_l.shape)}")
        return self.post_norm(self.proj(F.gelu(self.gate(h), approximate="tanh") * p_l))


class ValueEmbedding(nn.Module):
    """A gated value embedding: ``v ← v + g ⊙ E[idx]`` with ``g = gate_scale · sigmoid(W_g x[..., :C])`` per kv head.

    ``table`` (V, Hkv·Dh) is this layer's own token table, ``gate`` (C -> Hkv) reads the first C channels of the
    layer's normalised input x. At g = 0 the layer is the plain layer; nanochat's range is (0, 2), centred on 1.

    Args:
        vocab_size, n_kv_heads, head_dim: V, Hkv, Dh.
        gate_channels: C (nanochat: 32); must not exceed D at call time.
        gate_scale: the gate's upper bound (nanochat: 2).
    Raises:
        ValueError: (at call time) v not (B, Hkv, T, Dh), x not (B, T, D >= C), or idx not (B, T) ids in 0..V-1.
    """

    def __init__(self, vocab_size: int, n_kv_heads: int, head_dim: int, gate_channels: int = 32,
                 gate_scale: float = 2.0):
        super().__init__()
        self.vocab_size, self.n_kv_heads, self.head_dim = vocab_size, n_kv_heads, head_dim
        self.gate_channels, self.gate_scale = gate_channels, gate_scale
        self.table = nn.Embedding(vocab_size, n_kv_heads * head_dim)
        self.gate = nn.Linear(gate_channels, n_kv_heads, bias=False)

    def gate_values(self, x: Float[Tensor, "B T D"]) -> Float[Tensor, "B Hkv T"]:
        """``g`` per kv head and token, in (0, gate_scale)."""
        return rearrange(self.gate_scale * torch.sigmoid(self.gate(x[..., :self.gate_channels])), "b t h -> b h t")

    def forward(self, v: Float[Tensor, "B Hkv T Dh"], x: Float[Tensor, "B T D"],
                idx: Int[Tensor, "B T"]) -> Float[Tensor, "B Hkv T Dh"]:
        _check_ids(idx, self.vocab_size)
        B, T = idx.shape
        if x.dim() != 3 or x.shape[:2] != (B, T) or x.size(-1) < self.gate_channels:
            raise ValueError(f"x must be (B, T, D >= {self.gate_channels}) with (B, T) = {(B, T)}, "
                             f"got {tuple(x.shape)}")
        if v.shape != (B, self.n_kv_heads, T, self.head_dim):
            raise ValueError(f"v must be (B, Hkv, T, Dh) = {(B, self.n_kv_heads, T, self.head_dim)}, "
                             f"got {tuple(v.shape)}")
        ve = rearrange(self.table(idx), "b t (h dh) -> b h t dh", h=self.n_kv_heads)
        return v + self.gate_values(x)[..., None] * ve
