"""x0 injection into Q, K and V, and the bank of values.

Source: He, Liu, Huang, Zhang, "Do Value Vectors in Deep Layers Need Context from the Residual Stream?",
arXiv 2606.02780 (the "bank of values" paper), Sec. 3 and eq. 3–6; code RiddleHe/nanochat, model type
``gpt_base_add_init_qkv_learn``. At each target layer, with x_i = norm(residual stream) and
x0 = RMSNorm(token embedding) (context-free token identity, no position information):

    q = alpha_q · W_q(x_i) + beta_q · W_q(x0)
    k = alpha_k · W_k(x_i) + beta_k · W_k(x0)
    v = alpha_v · W_v(x_i) + beta_v · W_v(x0)          init alpha = 1, beta = 0 (so the layer starts as the baseline)

Because W has no bias, ``alpha·W(x_i) + beta·W(x0) = W(alpha·x_i + beta·x0)``: we mix the *inputs* of each
projection, which is the same number computed once instead of twice (a test checks the equality).

Modes:
* ``qkv``: the six coefficients above (the experiment).
* ``shared``: one ``alpha, beta`` for q, k and v together (the paper's control ``add_init_qkv_shared_learn``).
* ``substitute_v``: ``V := gamma · W_v(x0)`` — the values no longer read the residual stream at all (gamma init 1).
* ``scale_v``: ``V := gamma · W_v(x_i)`` — the scale-only control (BoV paper, Table 1): one more scalar on the value
  path that never reads x0 (gamma init 1, so the layer starts as the baseline).
* ``bank``: ``v = gamma · E_v[token]`` with a learned per-layer table ``E_v`` (vocab, D) initialised to x0·W_Vᵀ, so
  the first forward pass equals ``substitute_v``; the layer keeps no W_V and no V cache (BoV, eq. 3–6).

Controls for *what* x0 carries (``x0_source``, see :func:`x0_from_source`): ``token`` (RMSNorm of the token's
embedding, the experiment), ``random`` (a fixed random vector per token id, RMS 1 like x0: a second input that is
token-specific but was never the model's own embedding) and ``previous`` (the previous token's x0: cheap bigram
context instead of identity; position 0 gets zeros).
"""
from __future__ import annotations

import torch
from einops import rearrange
from jaxtyping import Float, Int
from torch import Tensor, nn

MODES = ("none", "qkv", "shared", "substitute_v", "bank", "scale_v")
SOURCES = ("token", "random", "previous")


def random_x0_table(vocab_size: int, d_model: int, seed: int) -> Float[Tensor, "V D"]:
    """One fixed random vector per token id, each row with RMS 1 (the scale of x0 = RMSNorm(embedding)), drawn from a
    generator seeded by ``seed`` alone so that every variant of a seed sees the same table."""
    g = torch.Generator().manual_seed(1_000_003 * (seed + 1))
    t = torch.randn(vocab_size, d_model, generator=g)
    return t / t.pow(2).mean(-1, keepdim=True).sqrt()


def x0_from_source(source: str, x0: Float[Tensor, "B T D"], idx: Int[Tensor, "B T"],
                   random_table: Tensor | None = None) -> Float[Tensor, "B T D"]:
    """What the x0 layers read. ``token``: x0 itself; ``random``: ``random_table[idx]``; ``previous``: x0 shifted
    one position right (position 0 gets zeros). Raises ValueError on an unknown source or a missing table."""
    if source == "token":
        return x0
    if source == "random":
        if random_table is None:
            raise ValueError("x0_source='random' needs the model's random table (TinyGPT builds it from the seed)")
        return random_table[idx]
    if source == "previous":
        return torch.cat([torch.zeros_like(x0[:, :1]), x0[:, :-1]], 1)
    raise ValueError(f"x0 source must be one of {SOURCES}, got {source!r}")


def default_x0_layers(n_layers: int) -> tuple[int, ...]:
    """The last third of the layers (0-based), as in the paper: 12 layers -> (8, 9, 10, 11)."""
    return tuple(range(n_layers - n_layers // 3, n_layers)) if n_layers >= 3 else (n_layers - 1,)


def inject_x0(x: Float[Tensor, "B T D"], x0: Float[Tensor, "B T D"], alpha: float | Tensor,
              beta: float | Tensor) -> Float[Tensor, "B T D"]:
    """The input one projection sees: ``alpha · x_i + beta · x0`` (then W is applied). Raises ValueError on shapes."""
    if x.shape != x0.shape:
        raise ValueError(f"x and x0 must have the same shape (B, T, D), got {tuple(x.shape)} and {tuple(x0.shape)}")
    return alpha * x + beta * x0


class X0Injection(nn.Module):
    """Per-layer x0 coefficients. Named parameters (all scalars): ``alpha_q, beta_q, alpha_k, beta_k, alpha_v,
    beta_v`` (mode ``qkv``), ``alpha, beta`` (``shared``), ``gamma`` (``substitute_v`` and ``bank``), and the table
    ``E_v`` (vocab, D) in ``bank`` mode; ``gamma`` also in ``scale_v``.

    Raises:
        ValueError: on an unknown mode, or ``vocab_size`` missing in bank mode.
    """

    def __init__(self, mode: str, d_model: int, vocab_size: int | None = None):
        super().__init__()
        if mode not in MODES or mode == "none":
            raise ValueError(f"x0 mode must be one of {MODES[1:]}, got {mode!r}")
        self.mode = mode
        one, zero = (lambda: nn.Parameter(torch.tensor(1.0))), (lambda: nn.Parameter(torch.tensor(0.0)))
        if mode == "qkv":
            self.alpha_q, self.beta_q = one(), zero()
            self.alpha_k, self.beta_k = one(), zero()
            self.alpha_v, self.beta_v = one(), zero()
        elif mode == "shared":
            self.alpha, self.beta = one(), zero()
        else:
            self.gamma = one()
        if mode == "bank":
            if vocab_size is None:
                raise ValueError("bank mode needs vocab_size")
            self.E_v = nn.Parameter(torch.zeros(vocab_size, d_model))

    @property
    def owns_v_proj(self) -> bool:
        """Bank layers replace W_V by the table; every other mode keeps the layer's own W_V."""
        return self.mode != "bank"

    def inputs(self, x: Float[Tensor, "B T D"], x0: Float[Tensor, "B T D"]):
        """The inputs of W_q, W_k, W_v as a tuple ``(q_in, k_in, v_in)`` (bank mode: v_in is None)."""
        if self.mode == "qkv":
            return (inject_x0(x, x0, self.alpha_q, self.beta_q), inject_x0(x, x0, self.alpha_k, self.beta_k),
                    inject_x0(x, x0, self.alpha_v, self.beta_v))
        if self.mode == "shared":
            mixed = inject_x0(x, x0, self.alpha, self.beta)
            return mixed, mixed, mixed
        if self.mode == "substitute_v":
            return x, x, self.gamma * x0
        if self.mode == "scale_v":
            return x, x, self.gamma * x
        return x, x, None

    def bank_values(self, idx: Int[Tensor, "B T"], n_heads: int) -> Float[Tensor, "B H T Dh"]:
        """Bank-of-values lookup ``gamma · E_v[idx]``, split into heads."""
        return rearrange(self.gamma * self.E_v[idx], "b t (h dh) -> b h t dh", h=n_heads)

    @torch.no_grad()
    def init_bank(self, x0_table: Float[Tensor, "V D"], w_v: Float[Tensor, "D D"]) -> None:
        """Copy ``x0 · W_Vᵀ`` for every vocabulary row into E_v (x0_table = RMSNorm of the embedding matrix)."""
        self.E_v.copy_(x0_table @ w_v.T)

    def extra_repr(self) -> str:
        return f"mode={self.mode!r}"
