"""Small building blocks shared by every model in the course: RMSNorm, rotary position embedding, MLP.

Shapes: B batch, T sequence, D model width, H heads, Dh = D / H.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from jaxtyping import Float
from torch import Tensor, nn


def rms_norm(x: Float[Tensor, "... D"], eps: float = 1e-6) -> Float[Tensor, "... D"]:
    """Parameter-free RMSNorm: ``x / sqrt(mean(x**2) + eps)`` over the last axis.

    The course uses norms *without* a learned gain (as nanochat and modded-nanogpt do), so that the normalised
    residual stream ``norm(x_i)`` and the normalised token embedding ``x0`` live on the same scale: swapping one for
    the other (chapter 04's substitution ablation) changes the information, not the magnitude.
    """
    return F.rms_norm(x, (x.size(-1),), eps=eps)


class RoPE(nn.Module):
    """Rotary position embedding (Su et al., arXiv 2104.09864, eq. 34), rotate-half form.

    Positions enter attention *only* through the rotation of q and k; the residual stream and the values carry no
    position information. That is what makes ``x0`` (the normalised token embedding) context-free token identity.

    Args:
        head_dim: Dh, must be even.
        max_len: largest sequence length T the model will see.
        base: the rotation base (10,000 as in the paper).
    Raises:
        ValueError: if ``head_dim`` is odd or a sequence longer than ``max_len`` is rotated.
    """

    def __init__(self, head_dim: int, max_len: int, base: float = 10_000.0):
        super().__init__()
        if head_dim % 2:
            raise ValueError(f"head_dim must be even for RoPE, got {head_dim}")
        inv_freq = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
        angles = torch.outer(torch.arange(max_len, dtype=torch.float32), inv_freq)  # (T, Dh/2)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)
        self.max_len = max_len

    def forward(self, x: Float[Tensor, "B H T Dh"]) -> Float[Tensor, "B H T Dh"]:
        T = x.size(-2)
        if T > self.max_len:
            raise ValueError(f"sequence length T={T} exceeds the RoPE table (max_len={self.max_len})")
        cos, sin = self.cos[:T].to(x.dtype), self.sin[:T].to(x.dtype)
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class MLP(nn.Module):
    """Two-layer feed-forward network ``W_down · GELU(W_up · x)`` (D -> ratio·D -> D)."""

    def __init__(self, d_model: int, ratio: int = 4):
        super().__init__()
        self.up = nn.Linear(d_model, ratio * d_model, bias=False)
        self.down = nn.Linear(ratio * d_model, d_model, bias=False)

    def forward(self, x: Float[Tensor, "B T D"]) -> Float[Tensor, "B T D"]:
        return self.down(F.gelu(self.up(x)))


def check_heads(d_model: int, n_heads: int) -> int:
    """Return Dh = D / H, or raise a ValueError naming both numbers when D is not divisible by H."""
    if n_heads < 1 or d_model % n_heads:
        raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
    return d_model // n_heads


def residual_std(n_layers: int, std: float = 0.02) -> float:
    """GPT-2's scaled init for projections that write into the residual stream: std / sqrt(2·L)."""
    return std / math.sqrt(2 * n_layers)
