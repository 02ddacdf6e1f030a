"""Cross-layer KV sharing: a layer attends over an earlier layer's keys and values and computes none of its own.

Sources:

* **CLA**, Brandon et al., "Reducing Transformer Key-Value Cache Size with Cross-Layer Attention", arXiv 2405.12981:
  adjacent layers share one K/V (sharing factor 2 halves the KV cache on top of MQA). :func:`cla_donors`.
* **Gemma 4**, config field ``num_kv_shared_layers`` (transformers ``models/gemma4``, ``Gemma4TextConfig
  .kv_sharing_modes`` and ``Gemma4TextAttention``): the *last* ``num_kv_shared_layers`` layers own no ``k_proj``,
  ``v_proj``, ``k_norm``, ``v_norm``; each reuses the K, V of the last non-shared layer *of the same type* (sliding
  or full attention), which stores them. :func:`gemma4_donors`.

What is shared is what a KV cache holds: K after its norm and RoPE, V after its norm. The sharing layer still has
its own query path (``q_proj``, ``q_norm``, RoPE) and its own ``o_proj``: QK still decides *where* per layer, but
*what* can be read is fixed by the donor. The KV cache then holds 2·Hkv·Dh numbers per token for each donor layer
only (:func:`kv_cache_bytes_per_token`).

The layer is Gemma 4's attention (so that its weights load unchanged): per-head RMSNorm with a learned gain on q and
k, a gain-free RMSNorm on v, RoPE on q and k, softmax without 1/sqrt(Dh) (``scaling = 1.0``), grouped-query heads.
Shapes: B batch, T sequence, D = d_model, H query heads, Hkv key/value heads, Dh = head_dim, L layers.
"""
from __future__ import annotations

import torch.nn.functional as F
from einops import rearrange
from jaxtyping import Float
from torch import Tensor, nn

from vrs_edu.nn.layers import RMSNorm, RoPE, rms_norm

KV = tuple[Float[Tensor, "B Hkv T Dh"], Float[Tensor, "B Hkv T Dh"]]


def cla_donors(n_layers: int, factor: int) -> list[int]:
    """CLA's plan (arXiv 2405.12981): groups of ``factor`` adjacent layers, the first of each computes K, V and the
    others reuse them. ``donors[l]`` is the layer whose K, V layer l attends over (``donors[l] == l``: its own).
    Example: ``cla_donors(4, 2) == [0, 0, 2, 2]``.

    Raises:
        ValueError: if ``n_layers`` or ``factor`` is < 1.
    """
    if n_layers < 1 or factor < 1:
        raise ValueError(f"n_layers and factor must be >= 1, got {n_layers} and {factor}")
    return [l - l % factor for l in range(n_layers)]


def gemma4_donors(layer_types: list[str], num_kv_shared_layers: int) -> list[int]:
    """Gemma 4's plan: the last ``num_kv_shared_layers`` layers reuse the K, V of the last earlier non-shared layer
    of the same type (as ``Gemma4TextConfig.kv_sharing_modes`` marks it ``"store"``).
    Example: ``gemma4_donors(["sliding", "full"] * 3, 2) == [0, 1, 2, 3, 2, 3]``.

    Raises:
        ValueError: if ``num_kv_shared_layers`` is outside 0..L-1, or a shared layer's type has no earlier donor.
    """
    L = len(layer_types)
    if not 0 <= num_kv_shared_layers < L:
        raise ValueError(f"num_kv_shared_layers must be in 0..{L - 1} (L = {L}), got {num_kv_shared_layers}")
    first_shared = L - num_kv_shared_layers
    donors = list(range(first_shared))
    for l in range(first_shared, L):
        same = [j for j in range(first_shared) if layer_types[j] == layer_types[l]]
        if not same:
            raise ValueError(f"shared layer {l} has type {layer_types[l]!r}, which no non-shared layer has")
        donors.append(same[-1])
    return donors


def kv_cache_bytes_per_token(donors: list[int], n_kv_heads: int, head_dim: int, bytes_per_value: int) -> int:
    """Bytes the KV cache grows by per token: ``2 · Hkv · Dh · bytes_per_value`` (one K and one V vector per kv
    head) for each layer that computes its own K, V (``donors[l] == l``); a sharing layer adds nothing.
    Example: 4 layers, 2 of them sharing, Hkv = 1, Dh = 8, float32 (4 bytes): ``2 · 1 · 8 · 4 · 2 = 128``.

    Raises:
        ValueError: if a layer's donor is not an earlier (or the same) layer, or a size is < 1.
    """
    if min(n_kv_heads, head_dim, bytes_per_value) < 1:
        raise ValueError(f"n_kv_heads, head_dim, bytes_per_value must be >= 1, got "
                         f"{n_kv_heads}, {head_dim}, {bytes_per_value}")
    bad = [l for l, d in enumerate(donors) if not 0 <= d <= l or donors[d] != d]
    if bad:
        raise ValueError(f"each donor must be an earlier layer that owns its K, V; layers {bad} violate it: {donors}")
    return sum(d == l for l, d in enumerate(donors)) * 2 * n_kv_heads * head_dim * bytes_per_value


class KVSharingAttention(nn.Module):
    """One layer of a stack with cross-layer KV sharing: a donor (``owns_kv=True``) or a sharer.

    ``forward(x, rope, kv=None)`` returns ``(out (B, T, D), (k, v))``. A donor computes ``k, v`` from x and returns
    them (what its KV cache stores, and what the sharers read); a sharer must be given ``kv`` and returns that very
    pair, unchanged. Parameters (Gemma 4's names): ``q_proj``, ``q_norm.weight``, ``o_proj``; a donor also
    ``k_proj``, ``v_proj`` (D -> Hkv·Dh) and ``k_norm.weight``; a sharer has none of these.

    Raises:
        ValueError: as :class:`~vrs_edu.nn.k_eq_v.KEqVAttention` on the head counts; at call time if x is not
            (B, T, D), if a sharer gets no ``kv`` or a donor gets one, or ``kv`` does not fit (B, Hkv, T, Dh).
    """

    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int, head_dim: int, owns_kv: bool,
                 eps: float = 1e-6):
        super().__init__()
        if n_kv_heads < 1 or n_heads < 1 or n_heads % n_kv_heads:
            raise ValueError(f"n_heads must be a positive multiple of n_kv_heads, got {n_heads} and {n_kv_heads}")
        self.d_model, self.n_heads, self.n_kv_heads, self.head_dim = d_model, n_heads, n_kv_heads, head_dim
        self.owns_kv, self.eps = owns_kv, eps
        self.q_proj = nn.Linear(d_model, n_heads * head_dim, bias=False)
        self.q_norm = RMSNorm(head_dim, eps)
        self.o_proj = nn.Linear(n_heads * head_dim, d_model, bias=False)
        if owns_kv:   # a sharer has no K, V weights at all
            self.k_proj = nn.Linear(d_model, n_kv_heads * head_dim, bias=False)
            self.v_proj = nn.Linear(d_model, n_kv_heads * head_dim, bias=False)
            self.k_norm = RMSNorm(head_dim, eps)

    def project_kv(self, x: Float[Tensor, "B T D"], rope: RoPE) -> KV:
        """The donor's K (normalised with gain, rotated) and V (normalised without gain), each (B, Hkv, T, Dh)."""
        k = rearrange(self.k_proj(x), "b t (h dh) -> b h t dh", h=self.n_kv_heads)
        v = rearrange(self.v_proj(x), "b t (h dh) -> b h t dh", h=self.n_kv_heads)
        return rope(self.k_norm(k)), rms_norm(v, self.eps)

    def forward(self, x: Float[Tensor, "B T D"], rope: RoPE, kv: KV | None = None
                ) -> tuple[Float[Tensor, "B T D"], KV]:
        if x.dim() != 3 or x.size(-1) != self.d_model:
            raise ValueError(f"x must be (B, T, D={self.d_model}), got shape {tuple(x.shape)}")
        B, T, _ = x.shape
        if self.owns_kv and kv is not None:
            raise ValueError("kv must be None for a layer that owns its K, V (owns_kv=True), got a (k, v) pair")
        if not self.owns_kv:
            want = (B, self.n_kv_heads, T, self.head_dim)
            if kv is None or tuple(kv[0].shape) != want or tuple(kv[1].shape) != want:
                got = None if kv is None else [tuple(t.shape) for t in kv]
                raise ValueError(f"kv must be the donor's (k, v), each {want}, for a sharing layer, got {got}")
        k, v = self.project_kv(x, rope) if self.owns_kv else kv
        q = rope(self.q_norm(rearrange(self.q_proj(x), "b t (h dh) -> b h t dh", h=self.n_heads)))
        z = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0,
                                           enable_gqa=self.n_heads != self.n_kv_heads)
        return self.o_proj(rearrange(z, "b h t dh -> b t (h dh)")), (k, v)


def run_shared_stack(layers: list[KVSharingAttention], donors: list[int], xs: list[Tensor], rope: RoPE
                     ) -> tuple[list[Tensor], dict[int, KV]]:
    """Run each layer on its own input ``xs[l]`` (B, T, D), each sharer on its donor's K, V. Returns the outputs and
    the KV cache as it would be stored: ``{layer: (k, v)}`` for the donor layers only.

    Raises:
        ValueError: if ``layers``, ``donors`` and ``xs`` differ in length or a layer's ``owns_kv`` disagrees with
            ``donors``.
    """
    if not len(layers) == len(donors) == len(xs):
        raise ValueError(f"layers, donors, xs must have one entry per layer, got {len(layers)}, {len(donors)}, "
                         f"{len(xs)}")
    wrong = [l for l, (m, d) in enumerate(zip(layers, donors)) if m.owns_kv != (d == l)]
    if wrong:
        raise ValueError(f"owns_kv must be True exactly where donors[l] == l; layers {wrong} disagree")
    outs, cache = [], {}
    for l, (layer, d, x) in enumerate(zip(layers, donors, xs)):
        out, kv = layer(x, rope, None if d == l else cache[d])
        if d == l:
            cache[l] = kv
        outs.append(out)
    return outs, cache

