"""Depth-Attention (Zeng et al., arXiv 2606.05014): inside attention, a layer's query attends over the keys of
earlier layers at the same position and mixes their values into its own, which the KV cache then stores.
Vocabulary: :mod:`vrs_edu.nn.depth`.
"""
from __future__ import annotations

import math

import torch
from jaxtyping import Float
from torch import Tensor

from vrs_edu.nn.depth_mixer import DepthMixer, DepthRead, Layers
from vrs_edu.nn.hooks import Hook, no_hook


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
