"""Attention is not only a weight: the norm-based view of an attention layer.

An attention layer's output at query i is a sum over heads h and sources j (Kobayashi et al., EMNLP 2020,
arXiv 2004.10102, eq. 5):

    out_i = Σ_h Σ_j α_hij f_h(x_j) + b_O,    f_h(x_j) = v_h(x_j) W_O^h,

where α (B, H, T, T) is the pattern that QK computed, v_h(x_j) = x_j W_V^h + b_V^h the value of source j in head h
(with grouped-query attention, query head h reads KV head h // (H / Hkv)), and W_O^h the columns of the output
projection that head h writes through. The weight α is one factor; the vector f_h(x_j), which V and O make, is the
other. The *weight-based* map reads α alone; the *norm-based* map reads ‖α_hij f_h(x_j)‖ = α_hij ‖f_h(x_j)‖ (per head)
or ‖Σ_h α_hij f_h(x_j)‖ (the layer). Where α is large on vectors with small norms (BERT's [CLS], [SEP] and periods;
a decoder's first-token sink, arXiv 2410.10781), the two disagree.

The context-mixing ratio (Kobayashi et al., EMNLP 2021, arXiv 2109.07152) counts the residual too. Of what the
attention sub-layer and its residual give token i, y_i = x_i + out_i, the part from the token itself is
s_i = x_i + Σ_h α_hii f_h(x_i) and the part from the context c_i = Σ_{j≠i} Σ_h α_hij f_h(x_j) (the bias b_O is
neither). Then

    mixing ratio r_i = ‖c_i‖ / (‖c_i‖ + ‖s_i‖),

with x_i the residual stream the sub-layer adds to (a pre-norm decoder: ``resid_pre``, whose normalised copy the
projections read). In a post-LN encoder (BERT) the sum passes a LayerNorm before the next sub-layer; LN is linear in
its input once its scale σ(y_i) is fixed, so each part is normalised with the whole sum's σ (ibid., §3):
LN(y) = Σ_parts γ ⊙ (part − mean(part)) / σ(y) + β, and r_i is computed on the normalised parts (β is neither). The
weight-based counterpart is 1 − mean_h α_hii.

Between the two readings sits the attention sub-layer alone, by norms (ibid., "Attn-N"): the same ratio with s_i the
token's own Σ_h α_hii f_h(x_i) and no residual. It separates the two things the weights leave out: the step from
1 − α_ii to it is the values' norms (V and O), the step from it to r_i the residual.
"""
from __future__ import annotations

import torch
from jaxtyping import Float
from torch import Tensor


def transformed_values(v: Float[Tensor, "B Hkv T Dh"], w_o: Float[Tensor, "D HDh"], n_heads: int
                       ) -> Float[Tensor, "B H T D"]:
    """f_h(x_j) = v_{g(h)}(x_j) W_O^h for every query head h and source j: what source j would write into the
    stream through head h at weight 1. ``w_o`` is the output projection's weight (D, H·Dh) as ``nn.Linear`` stores
    it; with grouped-query attention (Hkv < H) query head h reads KV head h // (H / Hkv).

    Raises ValueError when the shapes do not fit together (naming them)."""
    B, Hkv, T, Dh = v.shape
    if w_o.shape[1] != n_heads * Dh or n_heads % Hkv:
        raise ValueError(f"transformed_values: expected w_o of shape (D, {n_heads}·{Dh}) and n_heads a multiple of "
                         f"{Hkv} KV heads, got w_o {tuple(w_o.shape)} and n_heads {n_heads}")
    v = v.repeat_interleave(n_heads // Hkv, dim=1)                           # (B, H, T, Dh): each query head's KV
    w = w_o.T.reshape(n_heads, Dh, w_o.shape[0])                             # (H, Dh, D): head h's columns of W_O
    return torch.einsum("bhtd,hde->bhte", v, w)


def contributions(pattern: Float[Tensor, "B H T T"], f: Float[Tensor, "B H T D"]) -> Float[Tensor, "B T T D"]:
    """Σ_h α_hij f_h(x_j): what source j gives query i through the layer's heads together. Summed over j (and with
    b_O added) it is the attention output (B, T, D)."""
    return torch.einsum("bhij,bhjd->bijd", pattern, f)


def norm_map(pattern: Float[Tensor, "B H T T"], f: Float[Tensor, "B H T D"]) -> Float[Tensor, "B H T T"]:
    """Per head, ‖α_hij f_h(x_j)‖ = α_hij ‖f_h(x_j)‖ (α ≥ 0): the norm-based map beside the weight map α."""
    return pattern * f.norm(dim=-1)[:, :, None, :]


def layer_norm_map(contrib: Float[Tensor, "B T T D"]) -> Float[Tensor, "B T T"]:
    """The layer's norm-based map ‖Σ_h α_hij f_h(x_j)‖ (heads summed as vectors, then the norm)."""
    return contrib.norm(dim=-1)


def mixing_ratio(contrib: Float[Tensor, "B T T D"], resid: Float[Tensor, "B T D"], *,
                 bias: Float[Tensor, "D"] | None = None, post_ln: torch.nn.LayerNorm | None = None
                 ) -> Float[Tensor, "B T"]:
    """r_i = ‖c_i‖ / (‖c_i‖ + ‖s_i‖), the context's share of what the attention sub-layer and its residual give
    token i (see the module docstring). ``resid``: the stream the sub-layer's output is added to; ``bias``: b_O,
    counted in the sum whose scale a post-LN uses (``post_ln``: the LayerNorm after the sum, BERT's ``ln_attn``)."""
    T = contrib.shape[1]
    eye = torch.eye(T, dtype=torch.bool, device=contrib.device)
    own = contrib[:, eye]                                                    # (B, T, D): c_ii
    s = resid + own
    c = contrib.sum(dim=2) - own
    if post_ln is not None:
        y = s + c + (bias if bias is not None else 0.0)
        sigma = torch.sqrt(y.var(dim=-1, unbiased=False, keepdim=True) + post_ln.eps)
        s = post_ln.weight * (s - s.mean(dim=-1, keepdim=True)) / sigma
        c = post_ln.weight * (c - c.mean(dim=-1, keepdim=True)) / sigma
    cn, sn = c.norm(dim=-1), s.norm(dim=-1)
    return cn / (cn + sn)


def attention_mixing(contrib: Float[Tensor, "B T T D"]) -> Float[Tensor, "B T"]:
    """The context's share of what the attention sub-layer alone gives token i, by norms and without the residual:
    ‖Σ_{j≠i} c_ij‖ / (‖Σ_{j≠i} c_ij‖ + ‖c_ii‖), with c_ij = Σ_h α_hij f_h(x_j) (Kobayashi et al., arXiv 2109.07152,
    "Attn-N"): :func:`mixing_ratio` with a residual of zero."""
    return mixing_ratio(contrib, torch.zeros_like(contrib[:, :, 0]))


def weight_mixing(pattern: Float[Tensor, "B H T T"]) -> Float[Tensor, "B T"]:
    """The weight-based reading of the same question: 1 − mean_h α_hii, the weight a token gives the others."""
    return 1.0 - pattern.diagonal(dim1=-2, dim2=-1).mean(dim=1)


def source_share(attribution: Float[Tensor, "B T T"], sources: Float[Tensor, "B T"], queries: Float[Tensor, "B T"]
                 ) -> Float[Tensor, "B"]:
    """The share of a set of sources in an attribution map, per sequence: for each query i in ``queries``,
    Σ_{j ∈ sources} m_ij / Σ_j m_ij, averaged over those queries. ``attribution`` m ≥ 0 is a weight map (mean_h α,
    whose rows already sum to 1) or a norm map (:func:`layer_norm_map`, normalised here per query, as Kobayashi et
    al. 2020, arXiv 2004.10102, §4, compare the two); ``sources`` and ``queries`` are boolean masks (B, T).

    Raises ValueError when a sequence has no query in ``queries`` (its share would be 0/0)."""
    n = queries.sum(dim=1)
    if (n == 0).any():
        raise ValueError(f"source_share: expected at least one query per sequence, got none in sequence(s) "
                         f"{(n == 0).nonzero().flatten().tolist()}")
    total = torch.where(queries, attribution.sum(dim=-1), 1.0)           # (B, T); a query left out divides by 1
    share = (attribution * sources[:, None, :]).sum(dim=-1) / total      # (B, T): each query's share
    return torch.where(queries, share, 0.0).sum(dim=1) / n
