"""Small building blocks shared by every model in the course: RMSNorm, rotary position embedding, MLP, and the
seeded initialiser every module's ``reset_parameters`` draws from.

Shapes: B batch, T sequence, D model width, H heads, Dh = D / H.
"""
from __future__ import annotations

import math
import zlib

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

    The angles ``m·θ_i`` (position m, ``θ_i = base^(-2i/Dh)``) and their cos and sin are computed once in float64;
    each input dtype (and device) gets its own cast of them, cached. A table computed in float32 and only cast
    would carry float32's rounding into a float64 model (about 1e-6 at m ~ 100, 2e-4 at m ~ 4,000), and one
    computed in bfloat16 would be far off (bfloat16 cannot even hold the position 257). The float64 tables are plain
    attributes, not buffers, so that ``model.to(torch.bfloat16)`` cannot round them.

    Args:
        head_dim: Dh, must be even.
        max_len: largest sequence length T the model will see.
        base: the rotation base (10,000 as in the paper; Llama-style models choose their own, e.g. 100,000).
    Raises:
        ValueError: if ``head_dim`` is odd or a sequence longer than ``max_len`` is rotated.
    """

    def __init__(self, head_dim: int, max_len: int, base: float = 10_000.0):
        super().__init__()
        if head_dim % 2:
            raise ValueError(f"head_dim must be even for RoPE, got {head_dim}")
        inv_freq = float(base) ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
        angles = torch.outer(torch.arange(max_len, dtype=torch.float64), inv_freq)  # (T, Dh/2), float64
        self.cos64, self.sin64 = angles.cos(), angles.sin()
        self._cast: dict[tuple[torch.dtype, torch.device], tuple[Tensor, Tensor]] = {}  # (dtype, device) -> tables
        self.max_len = max_len

    def tables(self, dtype: torch.dtype, device: torch.device | str = "cpu") -> tuple[Tensor, Tensor]:
        """``(cos, sin)``, each (max_len, Dh/2): the float64 tables cast once to ``dtype`` on ``device``."""
        key = (dtype, torch.device(device))
        if key not in self._cast:
            self._cast[key] = (self.cos64.to(device=key[1], dtype=dtype), self.sin64.to(device=key[1], dtype=dtype))
        return self._cast[key]

    def forward(self, x: Float[Tensor, "B H T Dh"]) -> Float[Tensor, "B H T Dh"]:
        T = x.size(-2)
        if T > self.max_len:
            raise ValueError(f"sequence length T={T} exceeds the RoPE table (max_len={self.max_len})")
        cos, sin = self.tables(x.dtype, x.device)
        cos, sin = cos[:T], sin[:T]
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class RMSNorm(nn.Module):
    """``g ⊙ x / sqrt(mean(x²) + eps)`` over the last axis, with a learned gain g (D,) that starts at 1 (Zhang &
    Sennrich, arXiv 1910.07467); computed in float32 and cast back to the input's dtype. The real models' norm
    (MiniLlama, Gemma's q/k norms and per-layer inputs); TinyGPT's own norms are :func:`rms_norm`, without a gain."""

    def __init__(self, d_model: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.eps = eps

    def forward(self, x: Float[Tensor, "... D"]) -> Float[Tensor, "... D"]:
        return F.rms_norm(x.float(), (x.size(-1),), self.weight.float(), self.eps).to(x.dtype)


class MLP(nn.Module):
    """Two-layer feed-forward network ``W_down · GELU(W_up · x)`` (D -> ratio·D -> D, or D -> hidden -> D when
    ``hidden`` is given: a parameter-matched control widens or narrows it)."""

    def __init__(self, d_model: int, ratio: int = 4, hidden: int | None = None):
        super().__init__()
        hidden = ratio * d_model if hidden is None else hidden
        self.up = nn.Linear(d_model, hidden, bias=False)
        self.down = nn.Linear(hidden, d_model, bias=False)

    def forward(self, x: Float[Tensor, "B T D"]) -> Float[Tensor, "B T D"]:
        return self.down(F.gelu(self.up(x)))

    @torch.no_grad()
    def reset_parameters(self, init: "SeededInit", out_std: float = 0.02) -> None:
        """``up`` from N(0, 0.02²); ``down``, which writes into the residual stream, from N(0, out_std²)."""
        init.normal_(self, "up.weight")
        init.normal_(self, "down.weight", out_std)


def check_heads(d_model: int, n_heads: int) -> int:
    """Return Dh = D / H, or raise a ValueError naming both numbers when D is not divisible by H."""
    if n_heads < 1 or d_model % n_heads:
        raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
    return d_model // n_heads


def residual_std(n_layers: int, std: float = 0.02) -> float:
    """GPT-2's scaled init for projections that write into the residual stream: std / sqrt(2·L)."""
    return std / math.sqrt(2 * n_layers)


class SeededInit:
    """Draws every parameter from its own generator, seeded by ``(seed, full parameter name)``.

    Seeding by name means that a variant and the baseline built with the same seed share *identical* values for
    every parameter they have in common, whatever else each model has: a paired comparison then differs only in the
    variant itself. A module's ``reset_parameters(init)`` names its parameters relative to itself;
    ``init.scoped("blocks.3")`` hands a sub-module the same initialiser with its prefix, so that the generator of
    ``q_proj.weight`` inside ``blocks.3.attn`` is seeded by ``"blocks.3.attn.q_proj.weight"``.
    """

    def __init__(self, seed: int, prefix: str = ""):
        self.seed, self.prefix = seed, prefix

    def scoped(self, prefix: str) -> "SeededInit":
        return SeededInit(self.seed, f"{self.prefix}{prefix}.")

    def generator(self, name: str) -> torch.Generator:
        """The generator of parameter ``name`` (relative to this scope)."""
        return torch.Generator().manual_seed(zlib.crc32(f"{self.seed}:{self.prefix}{name}".encode()))

    def normal(self, name: str, shape: tuple[int, ...], std: float = 0.02) -> Tensor:
        """A fresh tensor of ``shape`` from N(0, std²), drawn as parameter ``name`` would be."""
        return torch.empty(shape).normal_(0.0, std, generator=self.generator(name))

    def normal_(self, module: nn.Module, name: str, std: float = 0.02) -> None:
        """Fill ``module``'s parameter ``name`` (e.g. ``"q_proj.weight"``) in place from N(0, std²).

        Raises:
            AttributeError: ``module`` has no parameter of that name.
        """
        module.get_parameter(name).normal_(0.0, std, generator=self.generator(name))
