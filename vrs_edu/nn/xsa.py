"""Exclusive self-attention (XSA): each head's output loses its component along the token's own value.

Zhai, "Exclusive Self Attention", arXiv 2603.09078. Standard attention's output y_i = Σ_j α_ij v_j is strongly aligned
with the token's own value v_i (the paper's "attention similarity bias"): part of attention's capacity re-delivers
what the residual stream already carries. XSA removes it, per head, after the weighted sum and before W_O:

    z_i = y_i − (y_i · v_i / ‖v_i‖²) v_i

so that attention carries only what is orthogonal to the token's own value, i.e. information from *other*
positions. Q, K, V and the pattern are untouched: only the V side of the output changes.

A zero value vector has no direction to remove: the code divides by ``max(‖v_i‖, eps)`` (``F.normalize``), so a
zero v_i gives z_i = y_i exactly, never NaN.

Shapes: B batch, T sequence, D = d_model, H heads, Dh = D / H.
"""
from __future__ import annotations

from einops import rearrange
from jaxtyping import Float
from torch import Tensor, nn

# exclude_self_value lives beside the attention it edits (TinyGPT's ``xsa`` layers call it there)
from vrs_edu.nn.attention import attend, attention_pattern, exclude_self_value
from vrs_edu.nn.layers import RoPE, check_heads

__all__ = ["ExclusiveSelfAttention", "exclude_self_value"]


class ExclusiveSelfAttention(nn.Module):
    """Causal multi-head attention with XSA: ``out = W_O · concat_heads(exclude_self_value(pattern @ v, v))``.

    Parameters ``q_proj, k_proj, v_proj, o_proj`` (D -> D, no bias), as :class:`~vrs_edu.nn.attention
    .CausalSelfAttention`; the pattern is ``softmax(q kᵀ / sqrt(Dh) + causal mask)``.

    Raises:
        ValueError: if D is not divisible by H; at call time if x is not (B, T, D).
    """

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.head_dim = check_heads(d_model, n_heads)
        self.d_model, self.n_heads = d_model, n_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x: Float[Tensor, "B T D"], rope: RoPE | None = None) -> Float[Tensor, "B T D"]:
        if x.dim() != 3 or x.size(-1) != self.d_model:
            raise ValueError(f"x must be (B, T, D={self.d_model}), got shape {tuple(x.shape)}")
        q, k, v = (rearrange(p(x), "b t (h dh) -> b h t dh", h=self.n_heads)
                   for p in (self.q_proj, self.k_proj, self.v_proj))
        if rope is not None:
            q, k = rope(q), rope(k)
        y = attend(attention_pattern(q, k), v)           # standard attention, (B, H, T, Dh)
        z = exclude_self_value(y, v)                      # minus each token's own-value component
        return self.o_proj(rearrange(z, "b h t dh -> b t (h dh)"))
