"""K = V attention: the key projection's output is also the value, as in Gemma 4's global layers.

Gemma 4's full-attention (global) layers have no ``v_proj`` when the config sets ``attention_k_eq_v=True``
(transformers ``models/gemma4/modeling_gemma4.py``, ``Gemma4TextAttention``; the sliding-window layers keep their own
``v_proj``). For the course's split "QK decides where, V decides what" this is the sharpest case: the content a
token offers is its key. Exactly where the two part (read from the official code), per head, width Dh:

* ``k_raw = x W_K``                     (B, T, Hkv, Dh), one projection
* ``k = RoPE(g_k ⊙ RMSNorm(k_raw))``    keys: ``k_norm`` with its learned gain, then the rotation
* ``v = RMSNorm(k_raw)``                values: the *same raw projection*, normalised **without** a gain (``v_norm``
  has ``with_scale=False``) and **never rotated**
* ``q = RoPE(g_q ⊙ RMSNorm(x W_Q))``, ``z = softmax(q kᵀ + causal mask) v``, ``out = W_O · concat_heads(z)``

So V is K taken *before* k_norm's gain and before RoPE: the value is position-free, and differs from the key only by
the key's per-channel gain and its rotation. The softmax has no 1/sqrt(Dh): Gemma 4 sets ``scaling = 1.0``, the
QK-norm gains set the temperature. Query head h reads kv head ``h // (H / Hkv)`` (grouped-query attention, Ainslie et
al., arXiv 2305.13245; Gemma 4's ``num_global_key_value_heads``).

Shapes: B batch, T sequence, D = d_model, H query heads, Hkv key/value heads, Dh = head_dim.
"""
from __future__ import annotations

import torch.nn.functional as F
from einops import rearrange
from jaxtyping import Float
from torch import Tensor, nn

from vrs_edu.nn.layers import RMSNorm, RoPE, rms_norm


def values_from_keys(k_raw: Float[Tensor, "B Hkv T Dh"], eps: float = 1e-6) -> Float[Tensor, "B Hkv T Dh"]:
    """Gemma 4's values under ``attention_k_eq_v``: the raw key projection per head, RMS-normalised without a gain
    (``v_norm``, ``with_scale=False``) and never rotated. TinyGPT's ``k_eq_v`` layers use this too."""
    return rms_norm(k_raw, eps)


class KEqVAttention(nn.Module):
    """Causal attention whose values are the normalised key projection (Gemma 4, ``attention_k_eq_v``).

    Parameters: ``q_proj`` (D -> H·Dh), ``k_proj`` (D -> Hkv·Dh), ``o_proj`` (H·Dh -> D), no biases, and the gains
    ``q_norm.weight``, ``k_norm.weight`` (Dh,); no ``v_proj``. The names are Gemma 4's, so its weights load as they
    are.

    Args:
        d_model: D.
        n_heads: H query heads.
        n_kv_heads: Hkv key/value heads; H must be a multiple of it.
        head_dim: Dh (Gemma 4's ``global_head_dim``); must be even for RoPE.
        eps: the norms' epsilon (``rms_norm_eps``, 1e-6).
    Raises:
        ValueError: if H is not a positive multiple of Hkv or Dh is not a positive even number.
    """

    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int, head_dim: int, eps: float = 1e-6):
        super().__init__()
        if n_kv_heads < 1 or n_heads < 1 or n_heads % n_kv_heads:
            raise ValueError(f"n_heads must be a positive multiple of n_kv_heads, got {n_heads} and {n_kv_heads}")
        if head_dim < 2 or head_dim % 2:
            raise ValueError(f"head_dim must be a positive even number (RoPE), got {head_dim}")
        self.d_model, self.n_heads, self.n_kv_heads = d_model, n_heads, n_kv_heads
        self.head_dim, self.eps = head_dim, eps
        self.q_proj = nn.Linear(d_model, n_heads * head_dim, bias=False)
        self.k_proj = nn.Linear(d_model, n_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * head_dim, d_model, bias=False)
        self.q_norm = RMSNorm(head_dim, eps)
        self.k_norm = RMSNorm(head_dim, eps)

    def project(self, x: Float[Tensor, "B T D"], rope: RoPE
                ) -> tuple[Float[Tensor, "B H T Dh"], Float[Tensor, "B Hkv T Dh"], Float[Tensor, "B Hkv T Dh"]]:
        """``(q, k, v)``: q and k normalised and rotated, ``v = RMSNorm(x W_K)`` without gain or rotation.

        Raises:
            ValueError: if x is not (B, T, D) with D = d_model.
        """
        if x.dim() != 3 or x.size(-1) != self.d_model:
            raise ValueError(f"x must be (B, T, D={self.d_model}), got shape {tuple(x.shape)}")
        q = rearrange(self.q_proj(x), "b t (h dh) -> b h t dh", h=self.n_heads)
        k_raw = rearrange(self.k_proj(x), "b t (h dh) -> b h t dh", h=self.n_kv_heads)
        v = values_from_keys(k_raw, self.eps)               # V = K before k_norm's gain and before RoPE
        return rope(self.q_norm(q)), rope(self.k_norm(k_raw)), v

    def forward(self, x: Float[Tensor, "B T D"], rope: RoPE) -> Float[Tensor, "B T D"]:
        """Causal K = V attention of x (B, T, D) -> (B, T, D); errors as :meth:`project`."""
        q, k, v = self.project(x, rope)
        z = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0,
                                           enable_gqa=self.n_heads != self.n_kv_heads)
        return self.o_proj(rearrange(z, "b h t dh -> b t (h dh)"))
