"""QK routes, V carries (chapter 02): experiments that separate where attention looks from what it moves.

An attention layer computes a pattern ``A = softmax(q kᵀ / sqrt(Dh))`` from queries and keys (*routing*), then moves
``z = A v`` (the *content*). Because the model exposes both at hook points (``blocks.{l}.attn.pattern`` and
``blocks.{l}.attn.v_mix``, the values the pattern averages), each half can be replaced on its own:

* **pattern swap**: keep this input's values, take the pattern computed on another input;
* **value swap**: keep this input's pattern, take the values computed on another input;
* **frozen routing**: replace one layer's pattern by a fixed one (uniform over the causal prefix, the previous
  layer's pattern, or the batch-average pattern, which keeps position but forgets content) and measure the loss change.

Every experiment is paired: the same sequences with and without the intervention, so the loss change is measured per
sequence and reported with its standard error across sequences. The circuits of one head (Elhage et al. 2021, "A
Mathematical Framework for Transformer Circuits") are read off the weights: the QK circuit ``x0 W_Qᵀ W_K x0ᵀ``
(which token attends to which) and the OV circuit ``x0 W_Vᵀ W_Oᵀ W_Uᵀ`` (what a token, once attended to, raises).

The norm-based view (Kobayashi et al., EMNLP 2020, arXiv 2004.10102; the instrument is
:mod:`vrs_edu.nn.attribution`) reads a head two ways: by its weight α_ij alone (QK), and by the norm of what it moves,
‖α_ij f(x_j)‖ with f(x_j) = v_j W_O^hᵀ (QK, V and O). :func:`attention_views` computes both for every layer and
head, :func:`head_contributions` the vectors α_ij f(x_j) of one head (the reference of the chapter's exercise 4).

Shapes: B batch, T sequence, D width, H heads, Dh = D / H, V vocabulary, L blocks.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from jaxtyping import Float, Int
from torch import Tensor

from vrs_edu.i18n.language import resolve_language
from vrs_edu.nn.attention import causal_mask
from vrs_edu.nn.attribution import norm_map, source_share, transformed_values
from vrs_edu.nn.layers import rms_norm
from vrs_edu.nn.model import TinyGPT, Trace

# ---------------------------------------------------------------------------------------------------------------
# Paired loss changes


def per_sequence_loss(logits: Float[Tensor, "B T V"], y: Int[Tensor, "B T"]) -> Float[Tensor, "B"]:
    """Mean next-token cross-entropy (nats) of each sequence."""
    return F.cross_entropy(logits.transpose(1, 2), y, reduction="none").mean(-1)


@dataclass
class Effect:
    """A paired loss change over sequences: mean (nats, intervention − clean) and its standard error."""

    mean: float
    se: float
    n: int


def _effect(deltas: list[Tensor]) -> Effect:
    d = torch.cat(deltas).double()
    se = float(d.std(unbiased=True) / math.sqrt(len(d))) if len(d) > 1 else float("nan")
    return Effect(float(d.mean()), se, len(d))


HooksFor = Callable[[int, Tensor, Trace, Trace], dict]  # (layer, x, clean trace, donor trace) -> hooks


@torch.no_grad()
def layer_interventions(model: TinyGPT, batches, conditions: dict[str, HooksFor], layers=None,
                        donor: Callable[[Tensor], Tensor] | None = None) -> dict:
    """Run every condition at every layer and return the paired loss changes.

    ``conditions`` maps a name to ``hooks_for(layer, x, clean_trace, donor_trace) -> hooks`` (a hooks dict for
    :meth:`TinyGPT.forward`, or ``None`` when the condition does not apply at that layer, e.g. "previous layer" at
    layer 0). ``donor(x)`` builds the other input for swaps (default: the batch rolled by one sequence, so every
    sequence gets a different sequence of the same batch). Returns ``{"clean": loss, "layers": [...],
    name: [Effect per layer or None]}``.

    Raises:
        ValueError: no batches, or a batch of one sequence with the default donor (it would be its own donor).
    """
    L = model.cfg.n_layers
    layers = list(range(L)) if layers is None else list(layers)
    default_donor = donor is None
    donor = donor or (lambda x: x.roll(1, 0))
    clean_losses: list[Tensor] = []
    deltas: dict[str, dict[int, list[Tensor]]] = {name: {l: [] for l in layers} for name in conditions}
    skipped: dict[str, set[int]] = {name: set() for name in conditions}
    for x, y, *_ in batches:
        if x.size(0) < 2 and default_donor:
            raise ValueError(f"swaps need at least 2 sequences per batch, got a batch of shape {tuple(x.shape)}")
        out = model(x, trace=True)
        clean = per_sequence_loss(out.logits, y)
        clean_losses.append(clean)
        donor_trace = model(donor(x), trace=True).trace
        for name, hooks_for in conditions.items():
            for l in layers:
                hooks = hooks_for(l, x, out.trace, donor_trace)
                if hooks is None:
                    skipped[name].add(l)
                    continue
                deltas[name][l].append(per_sequence_loss(model(x, hooks=hooks).logits, y) - clean)
    if not clean_losses:
        raise ValueError("batches is empty")
    result: dict = {"clean": float(torch.cat(clean_losses).mean()), "layers": layers}
    for name in conditions:
        result[name] = [None if l in skipped[name] else _effect(deltas[name][l]) for l in layers]
    return result


# ---------------------------------------------------------------------------------------------------------------
# The interventions


def uniform_causal_pattern(T: int) -> Float[Tensor, "T T"]:
    """Row i spreads weight 1/(i+1) over key positions 0..i: attention that routes by nothing at all."""
    m = causal_mask(T).float()
    return m / m.sum(-1, keepdim=True)


def _set(name: str, value: Tensor) -> dict:
    return {name: lambda _old, v=value: v.expand_as(_old)}


def pattern_swap(l, x, clean, donor):
    """Keep this input's values; attend with the pattern the layer computed on the donor input."""
    return _set(f"blocks.{l}.attn.pattern", donor[f"blocks.{l}.attn.pattern"])


def value_swap(l, x, clean, donor):
    """Keep this input's pattern; move the values the layer computed on the donor input."""
    return _set(f"blocks.{l}.attn.v_mix", donor[f"blocks.{l}.attn.v_mix"])


def uniform_routing(l, x, clean, donor):
    """Replace the layer's pattern (all heads) by the uniform causal pattern."""
    return _set(f"blocks.{l}.attn.pattern", uniform_causal_pattern(x.size(1)))


def previous_layer_routing(l, x, clean, donor):
    """Replace layer l's pattern by layer l-1's (head h by head h) from the same input; none for layer 0."""
    return None if l == 0 else _set(f"blocks.{l}.attn.pattern", clean[f"blocks.{l - 1}.attn.pattern"])


def mean_routing(l, x, clean, donor):
    """Replace the pattern by its average over the batch: per head and position, content forgotten."""
    return _set(f"blocks.{l}.attn.pattern", clean[f"blocks.{l}.attn.pattern"].mean(0, keepdim=True))


SWAPS = {"pattern swap": pattern_swap, "value swap": value_swap}
FROZEN = {"uniform": uniform_routing, "previous layer": previous_layer_routing, "batch mean": mean_routing}


def swap_experiment(model: TinyGPT, batches, layers=None) -> dict:
    """Pattern swap and value swap at each layer, one layer at a time (see :func:`layer_interventions`)."""
    return layer_interventions(model, batches, SWAPS, layers)


def frozen_routing(model: TinyGPT, batches, layers=None, modes=tuple(FROZEN)) -> dict:
    """Freeze one layer's routing at a time to each of ``modes`` (``uniform``, ``previous layer``, ``batch mean``)
    and measure the loss change: how much the layer depends on its freshly computed QK pattern.

    Raises:
        ValueError: an unknown mode (the message lists the known ones).
    """
    unknown = sorted(set(modes) - set(FROZEN))
    if unknown:
        raise ValueError(f"unknown frozen-routing modes {unknown}; known: {list(FROZEN)}")
    return layer_interventions(model, batches, {m: FROZEN[m] for m in modes}, layers)


def effect_table(result: dict, names: list[str] | None = None) -> str:
    """A plain-text table of a :func:`layer_interventions` result: one row per layer, ``Δ ± se`` in nats."""
    names = names or [k for k in result if k not in ("clean", "layers")]
    head = f"{'layer':>5s} " + " ".join(f"{n:>18s}" for n in names)
    rows = [head]
    for i, l in enumerate(result["layers"]):
        cells = [f"{'—':>18s}" if result[n][i] is None else f"{result[n][i].mean:+9.3f} ± {result[n][i].se:.3f}"
                 .rjust(18) for n in names]
        rows.append(f"{l:>5d} " + " ".join(cells))
    return "\n".join(rows)


def effect_rows(result: dict, names: list[str] | None = None) -> list[list[str]]:
    """The rows of :func:`effect_table` as cells (``"+0.810 ± 0.024"``, ``"—"`` where a condition does not apply),
    one row per layer, for a table a chapter renders as Markdown."""
    names = names or [k for k in result if k not in ("clean", "layers")]
    return [[str(l)] + ["—" if result[n][i] is None else f"{result[n][i].mean:+.3f} ± {result[n][i].se:.3f}"
                        for n in names] for i, l in enumerate(result["layers"])]


# ---------------------------------------------------------------------------------------------------------------
# Reading patterns; what each head writes; the QK and OV circuits of a head


def head_entropy(pattern: Float[Tensor, "B H T T"]) -> Float[Tensor, "H"]:
    """Mean entropy (nats) of each head's attention rows, over queries and the batch: 0 when every query looks at a
    single key, ln(i + 1) for query i when it spreads uniformly over its prefix.

    Raises:
        ValueError: ``pattern`` is not (B, H, T, T).
    """
    if pattern.dim() != 4 or pattern.size(-1) != pattern.size(-2):
        raise ValueError(f"pattern must be (B, H, T, T), got {tuple(pattern.shape)}")
    return -(pattern * pattern.clamp_min(1e-30).log()).sum(-1).mean(dim=(0, 2))


def offset_mass(pattern: Float[Tensor, "B H T T"], offset: int = 1) -> Float[Tensor, "H"]:
    """Mean weight a query at position i puts on the key at i - ``offset`` (over queries i >= offset and the batch),
    per head. ``offset=1`` is the previous token (a previous-token head scores near 1), ``offset=0`` the token itself.

    Raises:
        ValueError: ``pattern`` is not (B, H, T, T) or ``offset`` is outside 0..T-1.
    """
    if pattern.dim() != 4 or pattern.size(-1) != pattern.size(-2):
        raise ValueError(f"pattern must be (B, H, T, T), got {tuple(pattern.shape)}")
    if not 0 <= offset < pattern.size(-1):
        raise ValueError(f"offset must be in 0..{pattern.size(-1) - 1}, got {offset}")
    return pattern.diagonal(offset=-offset, dim1=-2, dim2=-1).mean(dim=(0, 2))


def head_writes(model: TinyGPT, trace: Trace, layer: int) -> Float[Tensor, "B H T D"]:
    """What each head of ``layer`` adds to the residual stream: ``z_h W_O[:, h]ᵀ``. Summed over heads this is the
    layer's ``attn.out`` (the output projection has no bias)."""
    attn = model.blocks[layer].attn
    z = trace[f"blocks.{layer}.attn.z"]                                  # (B, H, T, Dh)
    w_o = attn.o_proj.weight.view(-1, attn.n_heads, attn.head_dim)       # (D, H, Dh)
    return torch.einsum("bhtk,dhk->bhtd", z, w_o)


@torch.no_grad()
def head_profile(model: TinyGPT, batches) -> dict[str, Tensor]:
    """Three numbers per head (each an (L, H) tensor, averaged over ``batches``): ``prev``, the weight on the
    previous token (:func:`offset_mass`); ``entropy``, of its pattern in nats (:func:`head_entropy`); ``write``, the
    mean norm of what it adds to the stream (:func:`head_writes`). Raises ValueError on no batches."""
    batches = list(batches)
    if not batches:
        raise ValueError("batches is empty")
    L, H = model.cfg.n_layers, model.cfg.n_heads
    out = {k: torch.zeros(L, H) for k in ("prev", "entropy", "write")}
    for x, *_ in batches:
        tr = model(x, trace=True).trace
        for l in range(L):
            p = tr[f"blocks.{l}.attn.pattern"]
            out["prev"][l] += offset_mass(p, 1) / len(batches)
            out["entropy"][l] += head_entropy(p) / len(batches)
            out["write"][l] += head_writes(model, tr, l).norm(dim=-1).mean(dim=(0, 2)) / len(batches)
    return out


@torch.no_grad()
def value_swap_loss(model: TinyGPT, x: Int[Tensor, "B T"], y: Int[Tensor, "B T"], layer: int) -> float:
    """The mean loss (nats) of ``x`` when layer ``layer`` moves the values it computed on the batch rolled by one
    sequence (each sequence keeps its own pattern): chapter 02's value swap for one batch, the reference of its
    exercise. Raises ValueError for a batch of one sequence (it would be its own donor) or a layer out of range."""
    if x.size(0) < 2:
        raise ValueError(f"a value swap needs at least 2 sequences, got a batch of shape {tuple(x.shape)}")
    if not 0 <= layer < model.cfg.n_layers:
        raise ValueError(f"layer must be in 0..{model.cfg.n_layers - 1}, got {layer}")
    name = f"blocks.{layer}.attn.v_mix"
    donor = model(x.roll(1, 0), trace=True).trace[name]
    return float(model(x, y, hooks={name: lambda v: donor}).loss)


def _head_weights(model: TinyGPT, layer: int, head: int, which: str) -> Tensor:
    if not 0 <= layer < model.cfg.n_layers:
        raise ValueError(f"layer must be in 0..{model.cfg.n_layers - 1}, got {layer}")
    attn = model.blocks[layer].attn
    if not 0 <= head < attn.n_heads:
        raise ValueError(f"head must be in 0..{attn.n_heads - 1}, got {head}")
    proj = getattr(attn, f"{which}_proj")
    if proj is None:
        raise ValueError(f"layer {layer} has no {which}_proj (SVFormer / bank of values): its OV circuit is not "
                         f"a weight product")
    rows = slice(head * attn.head_dim, (head + 1) * attn.head_dim)
    return proj.weight[rows] if which != "o" else proj.weight[:, rows]  # (Dh, D) for q, k, v; (D, Dh) for o


@torch.no_grad()
def token_embeddings(model: TinyGPT) -> Float[Tensor, "V D"]:
    """x0 of every token: RMSNorm of its embedding (what layer 0 reads, with no context)."""
    return rms_norm(model.wte.weight)


@torch.no_grad()
def qk_circuit(model: TinyGPT, layer: int, head: int) -> Float[Tensor, "V V"]:
    """Token-to-token attention scores of one head, ``(x0 W_Qᵀ)(x0 W_Kᵀ)ᵀ / sqrt(Dh)``: row = query token,
    column = key token. Exact for layer 0 at relative distance 0 (RoPE rotates the scores by the offset and deeper
    layers read the stream, not x0); elsewhere it is the token-identity part of the score only.

    Raises:
        ValueError: ``layer`` or ``head`` out of range.
    """
    e = token_embeddings(model)
    q = e @ _head_weights(model, layer, head, "q").T
    k = e @ _head_weights(model, layer, head, "k").T
    return q @ k.T / math.sqrt(q.size(-1))


@torch.no_grad()
def ov_circuit(model: TinyGPT, layer: int, head: int) -> Float[Tensor, "V V"]:
    """What attending to a token writes, read by the unembedding: ``x0 W_Vᵀ W_Oᵀ W_Uᵀ``; row = attended (source)
    token, column = output token whose logit it raises (before the final norm's per-token scale).

    Raises:
        ValueError: ``layer`` or ``head`` out of range, or a layer without its own W_V.
    """
    e = token_embeddings(model)
    return e @ _head_weights(model, layer, head, "v").T @ _head_weights(model, layer, head, "o").T \
        @ model.lm_head.weight.T


def copying_score(ov: Float[Tensor, "V V"]) -> float:
    """Fraction of source tokens whose own output logit is the largest in their OV row: 1 for a pure copying head,
    about 1/V for a head that writes unrelated tokens.

    Raises:
        ValueError: ``ov`` is not square.
    """
    if ov.dim() != 2 or ov.size(0) != ov.size(1):
        raise ValueError(f"ov must be a square (V, V) matrix, got {tuple(ov.shape)}")
    return float((ov.argmax(-1) == torch.arange(ov.size(0))).double().mean())


# ---------------------------------------------------------------------------------------------------------------
# The widget's experiment: blend the value source toward V_1 and change the attention temperature


@contextmanager
def attention_temperature(model: TinyGPT, layer: int, temperature: float):
    """Temporarily divide layer ``layer``'s scores by ``temperature`` (>1 flattens the pattern, <1 sharpens it).

    Raises:
        ValueError: a non-positive temperature or a layer out of range.
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if not 0 <= layer < model.cfg.n_layers:
        raise ValueError(f"layer must be in 0..{model.cfg.n_layers - 1}, got {layer}")
    attn = model.blocks[layer].attn
    old = attn.temperature
    attn.temperature = float(temperature)
    try:
        yield
    finally:
        attn.temperature = old


def value_blend_hooks(layer: int, weight: float) -> dict:
    """Hooks that make layer ``layer`` move ``(1 - w)·V_l + w·V_1`` instead of its own values V_l, where V_1 is
    layer 0's values on the same input (ResFormer's value residual with a fixed weight, chapter 03 in preview).

    Raises:
        ValueError: ``weight`` outside [0, 1].
    """
    if not 0 <= weight <= 1:
        raise ValueError(f"weight must be in [0, 1], got {weight}")
    store: dict[str, Tensor] = {}

    def keep_v1(v: Tensor) -> Tensor:
        store["v1"] = v
        return v

    def blend(v: Tensor) -> Tensor:
        return (1 - weight) * v + weight * store["v1"]

    if layer == 0:  # V_1 *is* layer 0's own value: nothing to blend
        return {}
    return {"blocks.0.attn.v": keep_v1, f"blocks.{layer}.attn.v_mix": blend}


@torch.no_grad()
def blend_and_temperature(model: TinyGPT, x: Int[Tensor, "B T"], y: Int[Tensor, "B T"], layer: int,
                          weight: float = 0.0, temperature: float = 1.0, head: int = 0, batch: int = 0) -> dict:
    """Loss (nats, mean over ``x``) and one head's pattern of sequence ``batch`` when layer ``layer`` moves the
    blended values and attends at ``temperature``. Returns ``{"loss": float, "pattern": (T, T) tensor,
    "entropy": mean entropy (nats) of that layer's pattern rows over all heads and sequences}``.

    Raises:
        ValueError: ``layer``, ``head``, ``weight`` or ``temperature`` out of range.
    """
    if not 0 <= head < model.cfg.n_heads:
        raise ValueError(f"head must be in 0..{model.cfg.n_heads - 1}, got {head}")
    with attention_temperature(model, layer, temperature):
        out = model(x, y, trace=True, hooks=value_blend_hooks(layer, weight))
    p = out.trace[f"blocks.{layer}.attn.pattern"]
    return {"loss": float(out.loss), "pattern": p[batch, head], "entropy": float(head_entropy(p).mean())}


# ---------------------------------------------------------------------------------------------------------------
# Attention is not only a weight: the norm-based view of one head (Kobayashi et al. 2020, arXiv 2004.10102)


def head_contributions(pattern: Float[Tensor, "B H T T"], v: Float[Tensor, "B H T Dh"], w_o: Float[Tensor, "D HDh"],
                       head: int) -> Float[Tensor, "B T T D"]:
    """The vectors α_ij f(x_j) of head ``head``: what source j gives query i through that head, with f(x_j) =
    v_j W_O^hᵀ the *transformed value* (W_O^h: the Dh columns of ``w_o``, the output projection's (D, H·Dh) weight,
    that the head writes through). Summed over j they are the head's write into the stream (:func:`head_writes`);
    their norms ‖α_ij f(x_j)‖ are the head's norm-based map (Kobayashi et al., arXiv 2004.10102, eq. 5). The
    reference of chapter 02's exercise 4.

    Raises ValueError when ``head`` is out of range or the shapes do not fit together (naming them)."""
    H, Dh = v.shape[1], v.shape[-1]
    if pattern.dim() != 4 or pattern.shape[:2] != v.shape[:2] or pattern.shape[-1] != v.shape[2]:
        raise ValueError(f"head_contributions: expected pattern (B, H, T, T) and v (B, H, T, Dh) of the same B, H, T, "
                         f"got pattern {tuple(pattern.shape)} and v {tuple(v.shape)}")
    if not 0 <= head < H:
        raise ValueError(f"head_contributions: expected head in 0..{H - 1}, got {head}")
    f = transformed_values(v, w_o, H)[:, head]                                 # (B, T, D): f(x_j), raises on w_o
    return pattern[:, head, :, :, None] * f[:, None, :, :]                  # (B, T, T, D): α_ij f(x_j)


def row_shares(m: Float[Tensor, "... T T"]) -> Float[Tensor, "... T T"]:
    """Each query's row normalised to sum to 1, so that a norm-based map and the weights (whose rows already sum to
    1) are read on one scale, as Kobayashi et al. (arXiv 2004.10102, §4) compare them."""
    return m / m.sum(dim=-1, keepdim=True)


@torch.no_grad()
def attention_views(model: TinyGPT, x: Int[Tensor, "B T"]) -> dict[str, Tensor]:
    """Both readings of every head of every layer on ``x``: ``"weight"``, the pattern α (L, B, H, T, T); ``"norm"``,
    the norm-based map ‖α_ij f_h(x_j)‖ normalised per query (:func:`row_shares`), (L, B, H, T, T); ``"f_norm"``, the
    length ‖f_h(x_j)‖ of each source's transformed value (L, B, H, T)."""
    trace = model(x, trace=True).trace
    weight, norm, f_norm = [], [], []
    for l, block in enumerate(model.blocks):
        attn = block.attn
        pattern = trace[f"blocks.{l}.attn.pattern"]
        f = transformed_values(trace[f"blocks.{l}.attn.v_mix"], attn.o_proj.weight, attn.n_heads)
        weight.append(pattern)
        norm.append(row_shares(norm_map(pattern, f)))
        f_norm.append(f.norm(dim=-1))
    return {"weight": torch.stack(weight), "norm": torch.stack(norm), "f_norm": torch.stack(f_norm)}


def map_distance(weight: Float[Tensor, "... T T"], norm: Float[Tensor, "... T T"]) -> Float[Tensor, "..."]:
    """How far two maps whose rows sum to 1 are apart: the total-variation distance ½ Σ_j |a_ij − b_ij| of each
    query's row, averaged over the queries (0: the same map; 1: disjoint sources)."""
    return 0.5 * (weight - norm).abs().sum(dim=-1).mean(dim=-1)


def most_different_head(views: dict[str, Tensor], batch: int = 0) -> tuple[int, int]:
    """(layer, head) whose weight map and norm map differ most (:func:`map_distance`) on sequence ``batch`` of an
    :func:`attention_views` result."""
    d = map_distance(views["weight"][:, batch], views["norm"][:, batch])    # (L, H)
    layer, head = divmod(int(d.argmax()), d.shape[1])
    return layer, head


def source_shares(views: dict[str, Tensor], layer: int, head: int, tokens: list[str], batch: int = 0) -> list[dict]:
    """For every distinct token of sequence ``batch`` (``tokens``, one per position), the share of one head's
    attention its occurrences receive, read by the weight and by the norm
    (:func:`vrs_edu.nn.attribution.source_share`, over the queries at or after its first occurrence: those that can
    see it), with the mean length ‖f(x_j)‖ of its vectors and of the other positions' (``"f_norm_others"``). Sorted
    by the size of the change from weight to norm, largest first. Each entry: ``{"token", "count", "weight", "norm",
    "f_norm", "f_norm_others"}``.

    Raises ValueError when ``tokens`` does not have one token per position."""
    T = views["weight"].shape[-1]
    if len(tokens) != T:
        raise ValueError(f"source_shares: expected {T} tokens (one per position), got {len(tokens)}")
    weight, norm = views["weight"][layer, batch, head][None], views["norm"][layer, batch, head][None]
    f_norm = views["f_norm"][layer, batch, head]
    out = []
    for token in dict.fromkeys(tokens):                                     # distinct, in order of appearance
        src = torch.tensor([[t == token for t in tokens]])
        queries = torch.arange(T)[None] >= int(src[0].nonzero()[0])
        count = int(src.sum())
        out.append({"token": token, "count": count, "weight": float(source_share(weight, src, queries)),
                    "norm": float(source_share(norm, src, queries)), "f_norm": float(f_norm[src[0]].mean()),
                    "f_norm_others": float(f_norm[~src[0]].mean()) if count < T else float("nan")})
    return sorted(out, key=lambda s: -abs(s["norm"] - s["weight"]))


# ---------------------------------------------------------------------------------------------------------------
# XSA's premise

@torch.no_grad()
def own_value_alignment(model: TinyGPT, batches) -> dict[str, list[float]]:
    """How much of what a head moves to position i is position i's own value: the premise of exclusive
    self-attention (XSA, Zhai, arXiv 2603.09078, the "attention similarity bias"). Per layer, means over batches,
    sequences, heads and positions i ≥ 1 (at i = 0 the causal pattern makes z_0 = v_0 exactly):

    * ``own``: the cosine between the head's output z_i = Σ_j A_ij v_j and the token's own value v_i;
    * ``other``: the same with the value at position i of another sequence of the batch (the batch rolled by one),
      what two unrelated values share (their common direction);
    * ``removed``: the share of ‖z_i‖² along v_i (the cosine squared): what XSA would take out of the head's output.

    The values are those the pattern averaged (hook point ``v_mix``). Raises ValueError on no batches.
    """
    batches = list(batches)
    if not batches:
        raise ValueError("batches is empty")
    L = model.cfg.n_layers
    sums = {k: torch.zeros(L, dtype=torch.float64) for k in ("own", "other", "removed")}
    for x, *_ in batches:
        tr = model(x, trace=True).trace
        for l in range(L):
            z = tr[f"blocks.{l}.attn.z"][:, :, 1:]                     # (B, H, T-1, Dh)
            v = tr[f"blocks.{l}.attn.v_mix"][:, :, 1:]
            own = F.cosine_similarity(z, v, dim=-1)
            sums["own"][l] += own.mean().double()
            sums["other"][l] += F.cosine_similarity(z, v.roll(1, dims=0), dim=-1).mean().double()
            sums["removed"][l] += own.square().mean().double()
    return {k: (s / len(batches)).tolist() for k, s in sums.items()}


def alignment_rows(align: dict[str, list[float]], lang: str | None = None) -> tuple[list[str], list[list]]:
    """(columns, rows) of :func:`own_value_alignment`'s numbers, one row per layer; the columns in ``lang``."""
    columns = (["층", "cos(출력, 자기 값)", "cos(출력, 다른 값)", "평균 cos²: XSA가 없애는 몫"]
               if resolve_language(lang) == "ko" else
               ["layer", "cos(output, own value)", "cos(output, another value)", "mean cos²: the share XSA removes"])
    return columns, [[l, f"{o:.3f}", f"{a:.3f}", f"{r:.0%}"]
                     for l, (o, a, r) in enumerate(zip(align["own"], align["other"], align["removed"]))]


def alignment_sentence(align: dict[str, list[float]], head_dim: int, lang: str | None = None) -> str:
    """XSA's premise in words: whether every layer's output leans further toward its own value than toward an
    unrelated one (the ranges of both cosines), and the share XSA would remove, beside the 1/Dh that two random
    directions in a head's ``head_dim`` dimensions give (the mean of cos² of random directions)."""
    own, other, removed = align["own"], align["other"], align["removed"]
    leans = sum(o > a for o, a in zip(own, other))
    if resolve_language(lang) == "ko":
        lead = ("모든 층의 출력이 토큰 자신의 값 쪽으로 기웁니다" if leans == len(own) else
                f"{len(own)}개 층 중 {leans}개 층의 출력이 다른 값보다 토큰 자신의 값 쪽으로 더 기웁니다")
        return (f"{lead}: 코사인 {min(own):.2f}~{max(own):.2f}이며, 관계없는 값과는 {min(other):.2f}~"
                f"{max(other):.2f}입니다. XSA는 각 헤드가 옮기는 것에서 제곱 노름의 {min(removed):.0%}~"
                f"{max(removed):.0%}를 덜어 냅니다(평균의 제곱이 아니라 제곱 코사인의 평균입니다. 헤드의 {head_dim}"
                f"차원에서 무작위 방향 두 개는 약 {1 / head_dim:.0%}를 줍니다).")
    lead = ("Every layer's output leans toward the token's own value" if leans == len(own) else
            f"{leans} of {len(own)} layers' outputs lean further toward the token's own value than toward another")
    return (f"{lead}: cosine {min(own):.2f} to {max(own):.2f}, against {min(other):.2f} to {max(other):.2f} with an "
            f"unrelated value. XSA would take {min(removed):.0%} to {max(removed):.0%} of the squared norm out of "
            f"what each head moves (the mean of the squared cosines, not the square of the mean; two random "
            f"directions in a head's {head_dim} dimensions give about {1 / head_dim:.0%}).")
