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

from typing import Literal, get_args

import torch
from einops import rearrange
from jaxtyping import Float, Int
from torch import Tensor, nn

X0Mode = Literal["none", "qkv", "shared", "substitute_v", "bank", "scale_v"]
X0Source = Literal["token", "random", "previous"]
MODES: tuple[X0Mode, ...] = get_args(X0Mode)        # what TinyGPTConfig.validate accepts for x0_mode
SOURCES: tuple[X0Source, ...] = get_args(X0Source)  # ... and for x0_source


def random_x0_table(vocab_size: int, d_model: int, seed: int) -> Float[Tensor, "V D"]:
    """One fixed random vector per token id, each row with RMS 1 (the scale of x0 = RMSNorm(embedding)), drawn from a
    generator seeded by ``seed`` alone so that every variant of a seed sees the same table."""
    g = torch.Generator().manual_seed(1_000_003 * (seed + 1))
    t = torch.randn(vocab_size, d_model, generator=g)
    return t / t.pow(2).mean(-1, keepdim=True).sqrt()


def x0_from_source(source: X0Source, x0: Float[Tensor, "B T D"], idx: Int[Tensor, "B T"],
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
    """The x0 path of one layer: what its W_q, W_k, W_v read, given the stream's inputs and x0.

    Named parameters (all scalars): ``alpha_q, beta_q, alpha_k, beta_k, alpha_v, beta_v`` (mode ``qkv``), ``alpha,
    beta`` (``shared``), ``gamma`` (``substitute_v``, ``scale_v`` and ``bank``), and the table ``E_v`` (vocab, D) in
    ``bank`` mode. Initial values (:meth:`reset_parameters`): alpha = gamma = 1, beta = 0, so that every mode but
    ``substitute_v`` and ``bank`` starts as the baseline layer.

    Raises:
        ValueError: on an unknown mode, or ``vocab_size`` missing in bank mode.
    """

    def __init__(self, mode: X0Mode, d_model: int, vocab_size: int | None = None):
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

    def forward(self, q_in: Float[Tensor, "B T D"], k_in: Float[Tensor, "B T D"], v_in: Float[Tensor, "B T D"],
                x0: Float[Tensor, "B T D"], idx: Int[Tensor, "B T"], n_heads: int
                ) -> tuple[Float[Tensor, "B T D"], Float[Tensor, "B T D"], Float[Tensor, "B T D"],
                           Float[Tensor, "B H T Dh"] | None]:
        """The inputs of W_q, W_k, W_v with x0 injected, and the values that replace W_v's output.

        Args:
            q_in, k_in, v_in: the (normalised) inputs the projections would read without x0 (B, T, D).
            x0: what the x0 layers read (B, T, D), see :func:`x0_from_source`.
            idx: token ids (B, T), for the bank's lookup.
            n_heads: H, to split the bank's values into heads.
        Returns:
            ``(q_in, k_in, v_in, v)``: ``v`` is None, except in bank mode: ``gamma · E_v[idx]`` as (B, H, T, Dh)
            (then the layer has no W_v and ``v_in`` is returned unchanged, unused).
        Raises:
            ValueError: (qkv, shared) if an input and x0 differ in shape.
        """
        if self.mode in ("qkv", "shared"):  # the coefficients act on each projection's own input
            (a_q, b_q), (a_k, b_k), (a_v, b_v) = self._alpha_beta()
            return (inject_x0(q_in, x0, a_q, b_q), inject_x0(k_in, x0, a_k, b_k), inject_x0(v_in, x0, a_v, b_v),
                    None)
        if self.mode == "substitute_v":
            return q_in, k_in, self.gamma * x0, None
        if self.mode == "scale_v":          # the control: a scalar on V that never reads x0
            return q_in, k_in, self.gamma * v_in, None
        return q_in, k_in, v_in, self.bank_values(idx, n_heads)

    def _alpha_beta(self) -> list[tuple[Tensor, Tensor]]:
        """``(alpha, beta)`` for q, k and v, in that order (the one shared pair three times in ``shared`` mode)."""
        if self.mode == "shared":
            return [(self.alpha, self.beta)] * 3
        return [(self.alpha_q, self.beta_q), (self.alpha_k, self.beta_k), (self.alpha_v, self.beta_v)]

    def bank_values(self, idx: Int[Tensor, "B T"], n_heads: int) -> Float[Tensor, "B H T Dh"]:
        """Bank-of-values lookup ``gamma · E_v[idx]``, split into heads."""
        return rearrange(self.gamma * self.E_v[idx], "b t (h dh) -> b h t dh", h=n_heads)

    def param_kinds(self) -> dict[str, list[nn.Parameter]]:
        """Every parameter of this layer's x0 path, by kind: ``alpha`` (weights on the stream's input x_i),
        ``beta`` (weights on x0), ``gamma`` (the value scale) and ``table`` (E_v). The official bank-of-values
        optimizer trains the kinds with different settings (``vrs_edu.lab.train.OFFICIAL_X0_GROUPS``)."""
        pairs = self._alpha_beta() if self.mode in ("qkv", "shared") else []
        unique = pairs[:1] if self.mode == "shared" else pairs
        return {"alpha": [a for a, _ in unique], "beta": [b for _, b in unique],
                "gamma": [self.gamma] if self.mode in ("substitute_v", "scale_v", "bank") else [],
                "table": [self.E_v] if self.mode == "bank" else []}

    def coefficients(self) -> list[nn.Parameter]:
        """The scalars (alpha, beta, gamma); the table E_v is not a coefficient."""
        kinds = self.param_kinds()
        return kinds["alpha"] + kinds["beta"] + kinds["gamma"]

    @torch.no_grad()
    def reset_parameters(self, x0_table: Float[Tensor, "V D"] | None = None,
                         w_v: Float[Tensor, "D D"] | None = None) -> None:
        """alpha = gamma = 1, beta = 0; in bank mode ``E_v = x0_table · w_vᵀ``: every token's x0 through the W_V
        the layer would have had without the bank, so that the first forward pass equals ``substitute_v``.

        Args:
            x0_table: RMSNorm of the embedding matrix (V, D); bank mode only.
            w_v: that W_V (D, D); bank mode only.
        Raises:
            ValueError: bank mode without ``x0_table`` and ``w_v``.
        """
        kinds = self.param_kinds()
        for p in kinds["alpha"] + kinds["gamma"]:
            p.fill_(1.0)
        for p in kinds["beta"]:
            p.fill_(0.0)
        if self.mode == "bank":
            if x0_table is None or w_v is None:
                raise ValueError("bank mode needs x0_table and w_v to initialise E_v")
            self.init_bank(x0_table, w_v)

    @torch.no_grad()
    def init_bank(self, x0_table: Float[Tensor, "V D"], w_v: Float[Tensor, "D D"]) -> None:
        """Copy ``x0 · W_Vᵀ`` for every vocabulary row into E_v (x0_table = RMSNorm of the embedding matrix)."""
        self.E_v.copy_(x0_table @ w_v.T)

    def extra_repr(self) -> str:
        return f"mode={self.mode!r}"
