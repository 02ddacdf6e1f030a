"""Reading the residual stream along depth (chapter 01): decomposition, direct logit attribution, logit lens.

With the standard residual, block l reads ``h_l`` and adds what it writes, ``y_l = attn_out_l + mlp_out_l``:

    h_0 = embedding,    h_{l+1} = h_l + y_l,    so    h_L = embedding + y_0 + ... + y_{L-1}.

The final state is a plain sum, and the logits are ``W_U · RMSNorm(h_L)``. RMSNorm divides by one number per token,
``rms(h_L)``; holding it fixed, every logit splits exactly into one term per block (*direct logit attribution*,
Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits"). Reading an intermediate state ``h_l`` with
the same norm and unembedding is the *logit lens* (nostalgebraist 2020).

Everything here is a plain function of a :class:`~vrs_edu.nn.model.TinyGPT` and token ids, built on its hook points,
so that widgets stay thin and tests can check each function against a hand computation.
Shapes: B batch, T sequence, D width, V vocabulary, L blocks, N components.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from jaxtyping import Float, Int
from torch import Tensor

from vrs_edu.nn.layers import rms_norm
from vrs_edu.nn.model import TinyGPT, Trace

EPS = 1e-6  # the eps of vrs_edu.nn.layers.rms_norm


def require_standard_residual(model: TinyGPT) -> None:
    """The decompositions below hold only for the standard residual: one stream, unit weights along depth, and
    nothing written into it but the blocks' attention and MLP outputs.

    Raises:
        ValueError: the model uses another depth mixer (chapter 05's DenseFormer, ShortSWA, ...), several streams
            (``hyper_connections``: HC, mHC) or writes per-layer embeddings into the stream (``layer_embed``, whose
            write after each MLP is not in ``attn.out + mlp.out``).
    """
    if model.cfg.depth_mixer != "residual":
        raise ValueError(f"this decomposition needs depth_mixer='residual' (fixed unit weights), "
                         f"got depth_mixer={model.cfg.depth_mixer!r}")
    if model.cfg.hyper_connections:
        raise ValueError(f"this decomposition needs one residual stream, got hyper_connections="
                         f"{model.cfg.hyper_connections} ({model.cfg.hc_kind}: several streams, mixed)")
    if model.cfg.layer_embed:
        raise ValueError(f"this decomposition needs a stream written only by attention and MLPs, got layer_embed="
                         f"{model.cfg.layer_embed} (per-layer embeddings are written after each MLP)")


def residual_stack(embedding: Float[Tensor, "B T D"], outputs: Float[Tensor, "L B T D"]) -> Float[Tensor, "L1 B T D"]:
    """The depth stack from the embedding and what each block wrote: ``stack[l] = embedding + Σ_{j<l} outputs[j]``.

    ``stack[0]`` is the embedding, ``stack[L]`` the final state (a running sum with unit weights).

    Raises:
        ValueError: ``outputs`` is not a stack of tensors shaped like ``embedding``.
    """
    if outputs.shape[1:] != embedding.shape:
        raise ValueError(f"outputs must be (L, *embedding.shape) = (L, {', '.join(map(str, embedding.shape))}), "
                         f"got {tuple(outputs.shape)}")
    return torch.cat([embedding[None], outputs]).cumsum(0)


def block_outputs(trace: Trace) -> Float[Tensor, "L B T D"]:
    """What each block wrote into the stream, ``y_l = attn.out + mlp.out`` (from the hook points)."""
    return torch.stack([a + m for a, m in zip(trace.layers("attn.out"), trace.layers("mlp.out"))])


def stream_components(trace: Trace, split: bool = True) -> tuple[list[str], Float[Tensor, "N B T D"]]:
    """The terms whose sum is the final state: the embedding, then per block its attention and MLP writes
    (``split=True``, N = 2L + 1) or the whole block write (N = L + 1). Returns ``(labels, components)``."""
    if split:
        labels, parts = ["embed"], [_stream_start(trace)]
        for l, (a, m) in enumerate(zip(trace.layers("attn.out"), trace.layers("mlp.out"))):
            labels += [f"attn {l}", f"mlp {l}"]
            parts += [a, m]
        return labels, torch.stack(parts)
    ys = block_outputs(trace)
    return ["embed"] + [f"block {l}" for l in range(len(ys))], torch.cat([_stream_start(trace)[None], ys])


def _stream_start(trace: Trace) -> Tensor:
    """The first term of the stream: the embedding as the model put it there (raw, or RMSNorm(embedding) under the
    default ``stream_start``), i.e. the input of block 0 (exact for the standard residual)."""
    return trace["blocks.0.resid_pre"]


def logit_contributions(components: Float[Tensor, "N D"], unembed: Float[Tensor, "D"],
                        eps: float = EPS) -> Float[Tensor, "N"]:
    """Direct logit attribution of one token's logit: ``c_n · w_U / rms(Σ_n c_n)``.

    The final RMSNorm divides by the RMS of the *sum* (one number per token); dividing every component by that same
    number keeps the split exact: the contributions add up to the logit ``w_U · RMSNorm(Σ_n c_n)``.

    Args:
        components: (N, D) terms that sum to the final state (see :func:`stream_components`).
        unembed: (D,) the row of the unembedding (``lm_head.weight[token]``) for the token whose logit is split.
    Raises:
        ValueError: the last axes differ or ``components`` is not 2-D.
    """
    if components.dim() != 2 or unembed.shape != components.shape[-1:]:
        raise ValueError(f"components must be (N, D) and unembed (D,), got {tuple(components.shape)} and "
                         f"{tuple(unembed.shape)}")
    final = components.sum(0)
    rms = (final.pow(2).mean() + eps).sqrt()
    return components @ unembed / rms


@dataclass
class Attribution:
    """One logit split into per-component terms (nats of logit, not probability)."""

    labels: list[str]
    values: list[float]      # contribution of each component; they sum to ``logit``
    logit: float             # the model's logit for ``token`` at ``position``
    token: int
    position: int


@torch.no_grad()
def direct_logit_attribution(model: TinyGPT, idx: Int[Tensor, "B T"], position: int, token: int,
                             batch: int = 0, split: bool = True) -> Attribution:
    """Split the logit of ``token`` at ``position`` of sequence ``batch`` into the embedding's and each block's
    (or each attention / MLP's, ``split=True``) direct contribution.

    Raises:
        ValueError: another depth mixer than the residual, or ``position`` / ``token`` / ``batch`` out of range.
    """
    require_standard_residual(model)
    B, T = idx.shape
    for name, v, n in (("position", position, T), ("token", token, model.cfg.vocab_size), ("batch", batch, B)):
        if not 0 <= v < n:
            raise ValueError(f"{name} must be in 0..{n - 1}, got {v}")
    out = model(idx, trace=True)
    labels, comps = stream_components(out.trace, split)
    values = logit_contributions(comps[:, batch, position], model.lm_head.weight[token])
    return Attribution(labels, values.tolist(), float(out.logits[batch, position, token]), token, position)


def unembed(model: TinyGPT, states: Float[Tensor, "... D"]) -> Float[Tensor, "... V"]:
    """The model's read-out applied to any state: ``W_U · RMSNorm(h)`` (the logit lens when h is intermediate)."""
    return model.lm_head(rms_norm(states))


@torch.no_grad()
def logit_lens(model: TinyGPT, batches) -> dict[str, list[float]]:
    """Read every depth l = 0..L with the final norm and unembedding, averaged over (x, y) batches.

    Returns per depth: ``loss`` (cross-entropy in nats of the next token), ``acc`` (top-1 accuracy) and
    ``agree`` (fraction of positions whose top-1 equals the final layer's top-1). Depth L is the model itself.

    Raises:
        ValueError: another depth mixer than the residual, or no batches.
    """
    require_standard_residual(model)
    sums: dict[str, Tensor] = {}
    count = 0
    for x, y, *_ in batches:
        stack = model(x, trace=True).trace.stack("resid")           # (L+1, B, T, D)
        logits = unembed(model, stack)                              # (L+1, B, T, V)
        top = logits.argmax(-1)
        row = {"loss": F.cross_entropy(logits.flatten(1, 2).transpose(1, 2), y.flatten()[None].expand(len(stack), -1),
                                       reduction="none").sum(-1),
               "acc": (top == y).flatten(1).sum(-1).double(),
               "agree": (top == top[-1]).flatten(1).sum(-1).double()}
        for k, v in row.items():
            sums[k] = sums.get(k, 0) + v.double()
        count += y.numel()
    if not count:
        raise ValueError("batches is empty")
    return {k: (v / count).tolist() for k, v in sums.items()}


@torch.no_grad()
def cosine_to_x0(model: TinyGPT, batches) -> list[float]:
    """Mean cosine similarity between each depth's state h_l and x0 (the token's own normalised embedding), for
    l = 0..L: how much of the token identity the stream still points along. 1 at depth 0 by construction."""
    total, n = None, 0
    for x, *_ in batches:
        tr = model(x, trace=True).trace
        cos = F.cosine_similarity(tr.stack("resid"), tr["x0"][None], dim=-1)   # (L+1, B, T)
        s = cos.flatten(1).sum(-1).double()
        total = s if total is None else total + s
        n += x.numel()
    if not n:
        raise ValueError("batches is empty")
    return (total / n).tolist()


# ---------------------------------------------------------------------------------------------------------------
# Scaling what a block writes (the chapter's widget) and the question "is the stream mere accumulation?"


def scale_block_hooks(scales) -> dict:
    """Hooks that multiply block l's write by ``scales[l]`` *inside* the forward pass: later blocks read the
    scaled stream and recompute. All ones leave the model unchanged; all zeros leave only the embedding.

    Works through the ``resid_pre`` hook points: the hook at ``blocks.{l+1}.resid_pre`` (``resid_final`` for the last
    block) receives ``h_l + y_l``, subtracts the stored ``h_l`` to get ``y_l`` and returns ``h_l + s_l · y_l``.
    The returned dict is for one forward pass at a time (it keeps the current state between hook calls).

    Raises:
        ValueError: an empty ``scales`` or a non-finite scale.
    """
    scales = [float(s) for s in scales]
    if not scales or not all(torch.isfinite(torch.tensor(scales))):
        raise ValueError(f"scales must be a non-empty list of finite numbers, got {scales}")
    L = len(scales)
    state: dict[int, Tensor] = {}

    def receive(l: int):  # hook at the input of block l (l == L: the final state)
        def fn(h: Tensor) -> Tensor:
            if l > 0:
                prev = state[l - 1]
                h = prev + scales[l - 1] * (h - prev)
            state[l] = h
            return h
        return fn

    hooks = {f"blocks.{l}.resid_pre": receive(l) for l in range(L)}
    hooks["resid_final"] = receive(L)
    return hooks


def _check_scales(model: TinyGPT, scales) -> list[float]:
    require_standard_residual(model)
    scales = list(scales)
    if len(scales) != model.cfg.n_layers:
        raise ValueError(f"scales needs one number per block ({model.cfg.n_layers}), got {len(scales)}")
    return scales


@torch.no_grad()
def scaled_blocks_prediction(model: TinyGPT, x: Int[Tensor, "B T"], y: Int[Tensor, "B T"], scales,
                             position: int, batch: int = 0, k: int = 5) -> dict:
    """Run with every block's write multiplied by ``scales`` (one per block) and report the mean loss over ``x``
    (nats) and the top-``k`` next-token probabilities at ``position`` of sequence ``batch``.

    Returns ``{"loss": float, "top_ids": [k ints], "top_probs": [k floats], "target_prob": float}``.
    Raises:
        ValueError: not one scale per block, another depth mixer, or ``position`` out of range.
    """
    scales = _check_scales(model, scales)
    if not 0 <= position < x.size(1):
        raise ValueError(f"position must be in 0..{x.size(1) - 1}, got {position}")
    out = model(x, y, hooks=scale_block_hooks(scales))
    probs = out.logits[batch, position].softmax(-1)
    top = probs.topk(k)
    return {"loss": float(out.loss), "top_ids": top.indices.tolist(), "top_probs": top.values.tolist(),
            "target_prob": float(probs[y[batch, position]])}


@torch.no_grad()
def direct_and_total_effects(model: TinyGPT, batches) -> dict[str, list[float]]:
    """For each block, the loss change (nats) when its write is removed:

    * ``direct``: subtract ``y_l`` from the final state only; no other block notices (what pure accumulation of
      independent terms would predict);
    * ``total``: zero the write inside the forward pass, so every later block reads the changed stream.

    If blocks did not read each other's writes, the two would be equal. Returns
    ``{"clean": [loss], "direct": [Δ per block], "total": [Δ per block]}``.
    """
    L = model.cfg.n_layers
    require_standard_residual(model)
    clean = direct = total = None
    n = 0
    for x, y, *_ in batches:
        out = model(x, y, trace=True)
        final, ys = out.trace["resid_final"], block_outputs(out.trace)
        d = torch.tensor([F.cross_entropy(unembed(model, final - ys[l]).flatten(0, 1), y.flatten()).item()
                          for l in range(L)], dtype=torch.float64)
        t = torch.tensor([model(x, y, hooks=scale_block_hooks([0.0 if j == l else 1.0 for j in range(L)])).loss.item()
                          for l in range(L)], dtype=torch.float64)
        w = y.numel()
        clean = (0 if clean is None else clean) + out.loss.item() * w
        direct = (0 if direct is None else direct) + d * w
        total = (0 if total is None else total) + t * w
        n += w
    if not n:
        raise ValueError("batches is empty")
    c = clean / n
    return {"clean": [c], "direct": (direct / n - c).tolist(), "total": (total / n - c).tolist()}
