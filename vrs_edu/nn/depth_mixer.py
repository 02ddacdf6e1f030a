"""What every depth mixer has: the read it returns (:class:`DepthRead`), the base class (:class:`DepthMixer`),
the standard residual (:class:`ResidualSum`) and the scalar-gain control (:class:`ScalarGain`).

The vocabulary (outputs y_0..y_l, states X_0..X_l, sub-layer outputs) and the list of mixers are in
:mod:`vrs_edu.nn.depth`, which builds any of them by name.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

import torch
from jaxtyping import Float
from torch import Tensor, nn

from vrs_edu.nn.hooks import Hook, no_hook
from vrs_edu.nn.layers import SeededInit

DepthMixerName = Literal["residual", "denseformer", "elcbert", "attnres", "shortswa", "dca", "mudd", "vertical",
                         "attnres_qkv", "depth_attention", "scalar_gain"]
MIXERS: tuple[DepthMixerName, ...] = get_args(DepthMixerName)  # what TinyGPTConfig.validate accepts
# the mixers that build separate q, k, v inputs
ROUTERS: tuple[DepthMixerName, ...] = ("dca", "mudd", "vertical", "attnres_qkv")
# A depth read's inputs: one (B, T, D) tensor per layer 0..l (the states X_j, or the outputs y_j).
Layers = list[Float[Tensor, "B T D"]]


@dataclass(frozen=True)
class DepthRead:
    """What a depth mixer hands block l (at l = L: the LM head).

    ``resid`` (B, T, D) is the block's residual input, the x of ``x + block(x)``. ``q, k, v`` (B, T, D) are the
    inputs of the block's Q, K and V projections when the mixer gives each its own depth mixture (the routers);
    None means that projection reads ``resid``, as in a plain Transformer.
    """

    resid: Float[Tensor, "B T D"]
    q: Float[Tensor, "B T D"] | None = None
    k: Float[Tensor, "B T D"] | None = None
    v: Float[Tensor, "B T D"] | None = None


class DepthMixer(nn.Module):
    """What every depth mixer has. ``forward(l, states, outputs, hook) -> DepthRead`` reads lists of l + 1 tensors
    (B, T, D) (the vocabulary above); ``coefficients()`` lists the mixing weights and gates, which the optimizer
    trains in their own group; ``reset_parameters(init)`` sets every parameter to its initial value. The defaults
    here: one stream, no coefficients, nothing to initialise."""

    streams = ("r",)
    sublayers = False      # True: ``outputs`` are sub-layer outputs and the mixer reads the MLP's input too
    mixes_values = False   # True: the mixer reads V over depth inside attention (:meth:`read_values`)

    def coefficients(self) -> list[nn.Parameter]:
        return []

    @torch.no_grad()
    def reset_parameters(self, init: SeededInit) -> None:
        pass

    def mlp_input(self, l: int, outputs: Layers, attn_out: Float[Tensor, "B T D"],
                  hook: Hook = no_hook) -> Float[Tensor, "B T D"]:
        """The MLP's input in block l, for a sub-layer mixer (``sublayers``); ``outputs`` as in ``forward`` and
        ``attn_out`` what block l's attention just wrote. The other mixers never get this call: their MLP reads the
        residual input plus ``attn_out``, as in a plain Transformer."""
        raise NotImplementedError(f"{type(self).__name__} reads no MLP input (sublayers is False)")

    def read_values(self, l: int, q: Tensor, k: Tensor, v: Tensor, cache: list, hook: Hook = no_hook) -> Tensor:
        """Layer l's values read over depth, for a mixer with ``mixes_values`` (see :class:`DepthAttention`)."""
        raise NotImplementedError(f"{type(self).__name__} does not read values (mixes_values is False)")


class ResidualSum(DepthMixer):
    """The standard residual: block l reads X_l = y_0 + ... + y_l (fixed unit weights, no parameters)."""

    def __init__(self, n_layers: int, d_model: int):
        super().__init__()

    def forward(self, l: int, states: Layers, outputs: Layers, hook: Hook = no_hook) -> DepthRead:
        return DepthRead(states[-1])


class ScalarGain(DepthMixer):
    """The scalar-gain control (``scalar_gain``; from no paper): DenseFormer's rule (arXiv 2402.02622, eq. 1-2) with
    only its diagonal weight, block l (1 <= l < L) reading ``g_l · X_l``.

    A DenseFormer or MUDD win may come from reading earlier layers, or only from rescaling the stream against what
    the next block writes, with static weights trained in the coefficient group (lr ``coef_lr``, 6.7x the matrices'
    rate). This control has the second and not the first: one learned scalar ``gain.{l-1}`` per block l >= 1,
    initialised to 1 (exactly the standard residual), trained in the same group. The final read-out is not scaled
    (RMSNorm before the LM head would undo it, so its gain could never learn). Hook point ``depth.{l}.weights``
    (1,): the weight on the latest state.
    """

    def __init__(self, n_layers: int, d_model: int):
        super().__init__()
        self.n_layers = n_layers
        self.gain = nn.ParameterList([nn.Parameter(torch.tensor(1.0)) for _ in range(1, n_layers)])

    def coefficients(self) -> list[nn.Parameter]:
        return list(self.gain)

    @torch.no_grad()
    def reset_parameters(self, init: SeededInit) -> None:
        """Gains 1: the standard residual."""
        for g in self.gain:
            g.fill_(1.0)

    def forward(self, l: int, states: Layers, outputs: Layers, hook: Hook = no_hook) -> DepthRead:
        if l == 0 or l == self.n_layers:
            return DepthRead(states[-1])
        g = hook(f"depth.{l}.weights", self.gain[l - 1].reshape(1))
        return DepthRead(g * states[-1])
