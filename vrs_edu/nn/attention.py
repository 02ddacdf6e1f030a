"""Causal multi-head self-attention, written out so that each half can be seen and swapped.

Attention has two halves (chapter 02):

* **QK decides where to look**: ``pattern = softmax(q kᵀ / sqrt(Dh) + causal mask)``, shape (B, H, T, T), rows sum to 1.
* **V is what gets moved**: ``z = pattern @ v``, shape (B, H, T, Dh), then ``out = W_O · concat_heads(z)``.

Source: Vaswani et al., "Attention Is All You Need", arXiv 1706.03762, eq. 1 (scaled dot-product attention).
Two paths compute the same numbers. The **explicit** path computes q, k, v, the pattern and z one by one and passes
each through a named hook point, so that a caller can record or replace it (see :mod:`vrs_edu.nn.hooks`). When no
hook point is listened to (no trace, no patch) and the temperature is 1, the **fast** path hands ``softmax(q kᵀ /
sqrt(Dh)) v`` to PyTorch's fused ``F.scaled_dot_product_attention(is_causal=True)``, which never materialises the
(T, T) pattern: this is what training runs. A test checks that both paths give the same logits and gradients.
"""
from __future__ import annotations

import math
import torch
import torch.nn.functional as F
from einops import rearrange
from jaxtyping import Bool, Float
from torch import Tensor, nn

from vrs_edu.nn.hooks import Hook, no_hook
from vrs_edu.nn.k_eq_v import values_from_keys
from vrs_edu.nn.layers import RoPE, SeededInit, check_heads, rms_norm
from vrs_edu.nn.value_residual import ValueResidual

QK_NORM_SCALE = 1.2  # nanochat's factor after QK-norm


def causal_mask(T: int, device: torch.device | str | None = None) -> Bool[Tensor, "T T"]:
    """Boolean (T, T) mask, True where query position i may look at key position j (j <= i)."""
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def attention_pattern(q: Float[Tensor, "B H T Dh"], k: Float[Tensor, "B H T Dh"],
                      temperature: float = 1.0) -> Float[Tensor, "B H T T"]:
    """Causal attention pattern ``softmax(q kᵀ / (sqrt(Dh)·temperature))`` over the key axis (the last one).

    Row i is a probability distribution over key positions 0..i; entries j > i are exactly 0.

    Raises:
        ValueError: if q and k differ in shape or ``temperature`` is not positive.
    """
    if q.shape != k.shape:
        raise ValueError(f"q and k must have the same shape (B, H, T, Dh), got {tuple(q.shape)} and {tuple(k.shape)}")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    T, Dh = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / (math.sqrt(Dh) * temperature)  # (B, H, T, T)
    scores = scores.masked_fill(~causal_mask(T, q.device), float("-inf"))
    return scores.softmax(dim=-1)


def attend(pattern: Float[Tensor, "B H T T"], v: Float[Tensor, "B H T Dh"]) -> Float[Tensor, "B H T Dh"]:
    """Value-weighted sum: ``z_i = Σ_j pattern_ij · v_j`` (what attention moves into position i)."""
    return pattern @ v


def exclude_self_value(y: Float[Tensor, "B H T Dh"], v: Float[Tensor, "B H T Dh"],
                       eps: float = 1e-12) -> Float[Tensor, "B H T Dh"]:
    """Exclusive self-attention (XSA, Zhai, arXiv 2603.09078; :mod:`vrs_edu.nn.xsa`): ``z_i = y_i − (y_i · v̂_i) v̂_i``
    with ``v̂_i = v_i / max(‖v_i‖, eps)``, per head: the output loses its component along the token's own value.

    z_i is orthogonal to v_i; a y_i already orthogonal to v_i, or a zero v_i, is returned unchanged.

    Raises:
        ValueError: if y and v differ in shape.
    """
    if y.shape != v.shape:
        raise ValueError(f"y and v must have the same shape (B, H, T, Dh), got {tuple(y.shape)} and {tuple(v.shape)}")
    v_hat = F.normalize(v, dim=-1, eps=eps)
    return y - (y * v_hat).sum(dim=-1, keepdim=True) * v_hat


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention with separate inputs for Q, K and V.

    ``forward(q_in, k_in, v_in)`` takes the (already normalised) inputs of the three projections; in a plain
    Transformer all three are the same tensor ``norm(x_i)``. Chapter 04 feeds x0 into some of them, chapter 05 feeds
    each a different mixture of earlier layers.

    Parameters: ``q_proj, k_proj, v_proj, o_proj`` (D -> D, no bias). ``v_proj`` is absent when ``has_v_proj`` is
    False (SVFormer's later layers, bank-of-values layers: the caller then passes ``v``) and under ``k_eq_v`` (the
    values are the key projection, RMS-normalised per head before RoPE: Gemma 4's ``attention_k_eq_v``,
    :func:`~vrs_edu.nn.k_eq_v.values_from_keys`). ``k_proj`` and ``v_proj`` are both absent when ``has_kv_proj`` is
    False: a KV-sharing layer (CLA, arXiv 2405.12981; Gemma 4's ``num_kv_shared_layers``) attends over the k and v
    of an earlier layer, which the caller passes as ``kv``. ``xsa``: the output of each head loses its component
    along the token's own value before W_O (:func:`exclude_self_value`, arXiv 2603.09078).

    Hook points (relative to this module): ``q_in k_in v_in`` (B, T, D) (a KV-sharing layer has only ``q_in``, a
    K = V layer no ``v_in``: nothing else is projected), ``q k v`` (B, H, T, Dh) (q and k after RoPE; v is this
    layer's own values, or with Depth-Attention its values read over depth, the own ones at ``v_self``),
    ``pattern`` (B, H, T, T), ``v_mix`` (the values the pattern averages, after a value residual), ``z`` (B, H, T,
    Dh), ``out`` (B, T, D). ``pattern`` and ``v_mix`` exist only on the explicit path: it runs whenever
    ``hook.active`` is true (a trace or any patch), ``temperature`` is not 1 or
    ``fast_path`` is False; otherwise the fused kernel computes z (same numbers up to float rounding).

    Raises:
        ValueError: if ``d_model`` is not divisible by ``n_heads``.
    """

    def __init__(self, d_model: int, n_heads: int, has_v_proj: bool = True, qk_norm: bool = False, *,
                 k_eq_v: bool = False, has_kv_proj: bool = True, xsa: bool = False):
        super().__init__()
        # QK-norm as in the official bank-of-values code (nanochat: ``q, k = norm(q), norm(k); q *= 1.2; k *= 1.2``):
        # the common scale of q's (or k's) input then no longer sets the attention temperature.
        self.qk_norm = qk_norm
        self.head_dim = check_heads(d_model, n_heads)
        self.n_heads = n_heads
        self.k_eq_v, self.xsa = k_eq_v, xsa
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False) if has_kv_proj else None
        own_v = has_v_proj and has_kv_proj and not k_eq_v
        self.v_proj = nn.Linear(d_model, d_model, bias=False) if own_v else None
        self.o_proj = nn.Linear(d_model, d_model, bias=False)
        self.temperature = 1.0  # an inference-time knob for chapter 02's widget; training never changes it
        self.fast_path = True   # False forces the explicit path even when nobody listens (to compare the two)

    @torch.no_grad()
    def reset_parameters(self, init: SeededInit, out_std: float = 0.02) -> None:
        """GPT-2's init: the input projections from N(0, 0.02²); ``o_proj``, which writes into the residual stream,
        from N(0, out_std²) (TinyGPT passes :func:`~vrs_edu.nn.layers.residual_std`)."""
        for name, _ in self.named_parameters():
            init.normal_(self, name, out_std if name == "o_proj.weight" else 0.02)

    def split_heads(self, x: Float[Tensor, "B T D"]) -> Float[Tensor, "B H T Dh"]:
        return rearrange(x, "b t (h dh) -> b h t dh", h=self.n_heads)

    def merge_heads(self, z: Float[Tensor, "B H T Dh"]) -> Float[Tensor, "B T D"]:
        return rearrange(z, "b h t dh -> b t (h dh)")

    def forward(self, q_in: Float[Tensor, "B T D"], k_in: Float[Tensor, "B T D"] | None = None,
                v_in: Float[Tensor, "B T D"] | None = None, *, rope: RoPE | None = None,
                v: Float[Tensor, "B H T Dh"] | None = None, v_first: Float[Tensor, "B H T Dh"] | None = None,
                value_residual: ValueResidual | None = None,
                hook: Hook = no_hook) -> tuple[Float[Tensor, "B T D"], Float[Tensor, "B H T Dh"]]:
        """Returns ``(out (B, T, D), v (B, H, T, Dh))`` where ``v`` is this layer's own values (or the given
        ``v``): :meth:`project`, then :meth:`mix`. (TinyGPT calls the two itself, so that Depth-Attention can read
        V over depth between them.)

        Args:
            q_in, k_in, v_in: inputs of the three projections; k_in and v_in default to q_in.
            rope: rotary embedding applied to q and k (None: no positions at all).
            v: values supplied by the caller instead of ``v_proj(v_in)`` (SVFormer, bank of values).
            v_first: V_1, the first layer's values, for a value residual.
            value_residual: a :class:`~vrs_edu.nn.value_residual.ValueResidual` (mixes v with v_first).
            hook: a hook point callable, see :mod:`vrs_edu.nn.hooks`.
        Raises:
            ValueError: if neither ``v_proj`` nor ``v`` can provide values.
        """
        q, k, v = self.project(q_in, k_in, v_in, rope=rope, v=v, hook=hook)
        return self.mix(q, k, v, v_first=v_first, value_residual=value_residual, hook=hook)

    def project(self, q_in: Float[Tensor, "B T D"], k_in: Float[Tensor, "B T D"] | None = None,
                v_in: Float[Tensor, "B T D"] | None = None, *, rope: RoPE | None = None,
                v: Float[Tensor, "B H T Dh"] | None = None,
                kv: tuple[Float[Tensor, "B H T Dh"], Float[Tensor, "B H T Dh"]] | None = None, hook: Hook = no_hook
                ) -> tuple[Float[Tensor, "B H T Dh"], Float[Tensor, "B H T Dh"], Float[Tensor, "B H T Dh"]]:
        """The three projections, per head: q and k (B, H, T, Dh) after RoPE (and QK-norm), and v, this layer's own
        values (or the given ``v``; not yet passed to hook point ``v``, which :meth:`mix` does). ``kv``: a donor
        layer's (k, v), as it cached them, for a KV-sharing layer, which then projects only q. Arguments as
        :meth:`forward`.

        Raises:
            ValueError: no source of values (neither ``v_proj``, K = V nor ``v``), or ``kv`` missing on a
                KV-sharing layer or given to a layer that projects its own k and v.
        """
        if (kv is None) != (self.k_proj is not None):
            raise ValueError(f"kv (a donor's k, v) must be given exactly to a KV-sharing layer (one without k_proj), "
                             f"got kv={None if kv is None else 'a pair'} for a layer "
                             f"{'without' if self.k_proj is None else 'with'} k_proj")
        k_in = q_in if k_in is None else k_in
        v_in = q_in if v_in is None else v_in
        q_in = hook("q_in", q_in)
        if kv is None:                 # a sharing layer has no K, V inputs; under K = V, k_in feeds the values too
            k_in = hook("k_in", k_in)
            v_in = v_in if self.k_eq_v else hook("v_in", v_in)
        q = self.split_heads(self.q_proj(q_in))
        if kv is not None:             # CLA: the donor's k (already rotated) and v, exactly as it cached them
            k, v = kv
        else:
            k = self.split_heads(self.k_proj(k_in))
            if self.k_eq_v:            # Gemma 4: V is the key projection, normalised without gain, before RoPE
                v = values_from_keys(k)
            elif v is None:
                if self.v_proj is None:
                    raise ValueError("this attention layer has no v_proj: pass v= (e.g. V_1 for SVFormer)")
                v = self.split_heads(self.v_proj(v_in))
            k = k if rope is None else rope(k)   # positions enter through q and k only; v stays position-free
            if self.qk_norm:           # per head; RMSNorm commutes with RoPE (a rotation keeps the norm)
                k = QK_NORM_SCALE * rms_norm(k)
        q = q if rope is None else rope(q)
        if self.qk_norm:
            q = QK_NORM_SCALE * rms_norm(q)
        return hook("q", q), hook("k", k), v

    def mix(self, q: Float[Tensor, "B H T Dh"], k: Float[Tensor, "B H T Dh"], v: Float[Tensor, "B H T Dh"], *,
            v_first: Float[Tensor, "B H T Dh"] | None = None, value_residual: ValueResidual | None = None,
            hook: Hook = no_hook) -> tuple[Float[Tensor, "B T D"], Float[Tensor, "B H T Dh"]]:
        """The sequence axis: QK's pattern moves V (after a value residual, when there is one) and W_O writes the
        result. Returns ``(out (B, T, D), v)``, v as it passed hook point ``v`` (the values a KV cache stores)."""
        v = hook("v", v)
        v_mix = v if value_residual is None else value_residual.mix(v, v_first)  # mixed before the sum: V_n'
        if self.fast_path and self.temperature == 1.0 and not getattr(hook, "active", True):
            z = F.scaled_dot_product_attention(q, k, v_mix, is_causal=True)     # fused, same softmax(QKᵀ/√Dh)·V
        else:
            pattern = hook("pattern", attention_pattern(q, k, self.temperature))  # QK: where to look
            z = attend(pattern, hook("v_mix", v_mix))                              # V: what gets moved
        if value_residual is not None:
            z = value_residual.after_attention(z, v, v_first)                 # NeuTRENO's correction term
        if self.xsa:                    # XSA: drop what re-delivers the token's own value (the stream has it)
            z = exclude_self_value(z, v_mix)
        z = hook("z", z)
        out = hook("out", self.o_proj(self.merge_heads(z)))
        return out, v


def set_fast_path(model: nn.Module, on: bool) -> nn.Module:
    """Allow (``on=True``, the default of every layer) or forbid the fused fast path in every
    :class:`CausalSelfAttention` of ``model``; returns the model. Forbidding it makes an un-hooked forward pass run
    the explicit path, e.g. to compare the two or to time the price of the hooks."""
    for m in model.modules():
        if isinstance(m, CausalSelfAttention):
            m.fast_path = on
    return model
