"""Depth mixers: how the input of each block is read from the states of earlier layers.

A decoder has two ordered axes: the sequence (attention mixes positions adaptively) and depth (the residual
stream adds block outputs with fixed unit weights). Fix a token, and its states across layers form a sequence
too. This module gives that depth sequence the same family of operators the sequence axis has, from fixed to
adaptive (chapter 05).

Vocabulary (one token, layer index l = 0..L, 0 = embedding):

* ``outputs`` y_0..y_l: y_0 is the embedding, y_j (j >= 1) what block j-1 *wrote* (attention + MLP output).
* ``states``  X_0..X_l: X_0 = embedding, X_j = (input of block j-1) + y_j, the block's state after its residual.

With the standard residual, X_l = y_0 + y_1 + ... + y_l: the residual stream is the running sum of block outputs.
A *sub-layer* mixer (``sublayers = True``: ``attnres_qkv``) is handed the outputs at sub-layer granularity instead,
``outputs`` = [embedding, a_0, m_0, a_1, m_1, ...] (a_j, m_j: what block j's attention and MLP wrote), and also
chooses the MLP's input (:meth:`DepthMixer.mlp_input`).

Every mixer is called as ``mixer(l, states, outputs, hook)`` with lists of (B, T, D) tensors of length l + 1 and
returns a :class:`DepthRead` for block l (``l == L`` is the final read-out before the LM head): ``resid``, the
block's residual input, plus ``q, k, v`` for the mixers that give each projection its own depth mixture (None
otherwise: the projection reads ``resid``).

Single-stream mixers (fixed -> adaptive): ``residual`` (unit weights), ``denseformer`` (learned static weights),
``elcbert`` (learned convex combination), ``attnres`` (softmax over depth, learned pseudo-query), ``shortswa``
(causal attention over the last K layer states; K = L + 1 is the full-memory limit).
Multi-stream routers, which give Q, K and V their *own* depth mixture: ``dca`` (DeepCrossAttention's GRN-v3
combiners), ``mudd`` (MUDDFormer's per-position dynamic weights for Q, K, V and the residual), ``vertical``
(Vertical Attention: a small attention over earlier layers per stream), ``attnres_qkv`` (Attention Residuals with a
pseudo-query per stream q, k, v and r, over sub-layer outputs: the bank-of-values authors' instrument).
Inside attention: ``depth_attention`` (Depth-Attention: a layer's query attends over the keys of earlier layers at
the same position and mixes their values into its own, which the KV cache then stores; no parameters). A control:
``scalar_gain`` (DenseFormer with only its diagonal weight, a learned gain on the stream: no read over depth).

Mixers record their weights at hook point ``depth.{l}.weights`` (one stream) or ``depth.{l}.weights_{q,k,v,r}``
(per stream), always with the *source* axis last (oldest first), so that chapter 05 can draw them
(:func:`vrs_edu.chapters.ch05_depth_as_sequence.readout.depth_weight_matrices` reads them from a trace).

Initialisation (each mixer's ``reset_parameters(init)``): ``residual``, ``denseformer``, ``shortswa``, ``dca``,
``mudd``, ``vertical`` and ``scalar_gain`` start *exactly* as the standard residual; ``elcbert``, ``attnres`` and
``attnres_qkv`` start as a uniform average over their sources (their papers' inits); ``depth_attention`` has no
parameters (its depth weights come from the layer's own q and the earlier layers' k). Their projections are drawn
from N(0, 0.02²) by the seeded initialiser (:class:`~vrs_edu.nn.layers.SeededInit`). Each mixer lists its mixing weights and gates in
``coefficients()``: the optimizer trains them in their own group.
"""
from __future__ import annotations

# MIXERS, ROUTERS and DepthRead are imported for the readers of this overview page (``depth.MIXERS``) too.
from vrs_edu.nn.depth_attention import DepthAttention
from vrs_edu.nn.depth_mixer import MIXERS, ROUTERS, DepthMixer, DepthMixerName, DepthRead, ResidualSum, ScalarGain
from vrs_edu.nn.depth_routers import DeepCrossAttention, MUDDFormer, VerticalAttention
from vrs_edu.nn.depth_weights import ELCBERT, AttentionResiduals, AttentionResidualsQKV, DenseFormerDWA
from vrs_edu.nn.shortswa import ShortSWADepth


def make_depth_mixer(name: DepthMixerName, n_layers: int, d_model: int, window: int | None = None) -> DepthMixer:
    """Build a depth mixer by name (one of :data:`MIXERS`). Raises ValueError on an unknown name, or a
    ``window`` given to a mixer other than ``shortswa``."""
    classes = {"residual": ResidualSum, "denseformer": DenseFormerDWA, "elcbert": ELCBERT,
               "attnres": AttentionResiduals, "dca": DeepCrossAttention, "mudd": MUDDFormer,
               "vertical": VerticalAttention, "attnres_qkv": AttentionResidualsQKV,
               "depth_attention": DepthAttention, "scalar_gain": ScalarGain}
    if name == "shortswa":
        return ShortSWADepth(n_layers, d_model, window)
    if name not in classes:
        raise ValueError(f"depth_mixer must be one of {tuple(classes) + ('shortswa',)}, got {name!r}")
    if window is not None:
        raise ValueError(f"depth_window applies only to depth_mixer='shortswa', not {name!r}")
    return classes[name](n_layers, d_model)
