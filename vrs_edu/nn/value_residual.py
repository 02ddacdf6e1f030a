"""Value residual learning: later layers re-read the first layer's values V_1.

Sources (equations restated in our notation; n is the 1-based layer, V_1 = H_0 W_1^V):

* **ResFormer** (Zhou et al., "Value Residual Learning", arXiv 2410.17897, eq. for U_n):
  ``V_n' = λ1·V_1 + λ2·V_n`` applied *before* the attention-weighted sum, so ``U_n = A_n V_n'``.
  Fixed λ1 = λ2 = 0.5 in the official code ("identity" ResFormer); learnable per-layer λ1, λ2 (init 0.5) in the paper.
* **SVFormer** (same paper): layers n >= 2 own no W_V and reuse V_1: ``U_n = A_n V_1`` (the V cache is stored once).
* **NeuTRENO** (Nguyen, Nguyen, Baraniuk, arXiv 2312.00751): ``U_n = A_n V_n + λ (V_1 − V_n)`` with λ = 0.4,
  added *after* the attention sum.

Layer 1 (index 0 in code) is never mixed: its values *are* V_1.
"""
from __future__ import annotations

from typing import Literal, get_args

import torch
from jaxtyping import Float
from torch import Tensor, nn

ValueResidualMode = Literal["none", "resformer", "learnable", "svformer", "neutreno"]
MODES: tuple[ValueResidualMode, ...] = get_args(ValueResidualMode)  # what TinyGPTConfig.validate accepts


def mix_values(v: Float[Tensor, "B H T Dh"], v_first: Float[Tensor, "B H T Dh"],
               lambda_1: float | Tensor, lambda_2: float | Tensor) -> Float[Tensor, "B H T Dh"]:
    """ResFormer's value residual ``V_n' = λ1·V_1 + λ2·V_n`` (arXiv 2410.17897). λ1 = 0, λ2 = 1 is the baseline.

    Raises:
        ValueError: if ``v`` and ``v_first`` differ in shape.
    """
    if v.shape != v_first.shape:
        raise ValueError(f"v and v_first must have the same shape, got {tuple(v.shape)} and {tuple(v_first.shape)}")
    return lambda_1 * v_first + lambda_2 * v


class ValueResidual(nn.Module):
    """The value-mixing rule of one layer n >= 2 (index >= 1).

    Named coefficients: ``lambda_1`` (weight on V_1) and ``lambda_2`` (weight on V_n), both 0.5 at init; they are
    parameters in ``learnable`` mode and fixed buffers in ``resformer`` mode. ``neutreno_lambda`` (0.4) is a buffer.

    Args:
        mode: one of ``none, resformer, learnable, svformer, neutreno``.
    Raises:
        ValueError: on an unknown mode, or when v_first is missing at call time.
    """

    def __init__(self, mode: ValueResidualMode, neutreno_lambda: float = 0.4):
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"value_residual must be one of {MODES}, got {mode!r}")
        self.mode = mode
        if mode == "learnable":
            self.lambda_1 = nn.Parameter(torch.tensor(0.5))
            self.lambda_2 = nn.Parameter(torch.tensor(0.5))
        elif mode == "resformer":
            self.register_buffer("lambda_1", torch.tensor(0.5))
            self.register_buffer("lambda_2", torch.tensor(0.5))
        if mode == "neutreno":
            self.register_buffer("neutreno_lambda", torch.tensor(float(neutreno_lambda)))

    def coefficients(self) -> list[nn.Parameter]:
        """The learnable coefficients (``lambda_1, lambda_2`` in ``learnable`` mode; none otherwise)."""
        return [self.lambda_1, self.lambda_2] if self.mode == "learnable" else []

    @torch.no_grad()
    def reset_parameters(self) -> None:
        """λ1 = λ2 = 0.5 (the paper's init; the buffers of the other modes never change)."""
        for p in self.coefficients():
            p.fill_(0.5)

    def _need(self, v_first: Tensor | None) -> None:
        if v_first is None:
            raise ValueError(f"value residual mode {self.mode!r} needs v_first (the first layer's values)")

    def mix(self, v: Float[Tensor, "B H T Dh"],
            v_first: Float[Tensor, "B H T Dh"] | None) -> Float[Tensor, "B H T Dh"]:
        """Values the pattern averages: V_n' (resformer/learnable), V_1 (svformer), V_n (none/neutreno)."""
        if self.mode in ("resformer", "learnable"):
            self._need(v_first)
            return mix_values(v, v_first, self.lambda_1, self.lambda_2)
        if self.mode == "svformer":
            self._need(v_first)
            return v_first
        return v

    def after_attention(self, z: Float[Tensor, "B H T Dh"], v: Float[Tensor, "B H T Dh"],
                        v_first: Float[Tensor, "B H T Dh"] | None) -> Float[Tensor, "B H T Dh"]:
        """NeuTRENO adds ``λ (V_1 − V_n)`` after the attention sum; every other mode returns z unchanged."""
        if self.mode == "neutreno":
            self._need(v_first)
            return z + self.neutreno_lambda * (v_first - v)
        return z

    def extra_repr(self) -> str:
        return f"mode={self.mode!r}"
