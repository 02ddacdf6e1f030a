"""Interventions on the real decoder (chapter 08): context-free substitutions and chapter 02's swaps, measured as
paired loss changes per evaluation sequence.

**Per-token tables** (:func:`calibrate`, :class:`TokenTables`). For every layer l and every token id i, the mean of
``q_l = W_Q·norm_l(x_l)`` (before RoPE), of ``k_l`` (before RoPE) and of ``v_l`` over the positions where token i
occurs in the *calibration* text (disjoint from the evaluation sequences). Replacing a projection's output by its
table row is a **context-free substitution**: the layer then knows, through that path, which token sits at each
position and nothing of the context (RoPE still rotates q and k by position). A token the calibration text never
holds gets the projection's mean over all calibration positions (the coverage is reported). The bank-of-values paper
(He et al., arXiv 2606.02780) *trains* models with such a table for V; here the table is read off a model trained
the standard way, after training: it asks whether a standard decoder already carries only token identity in that
projection — a different question (the chapter says which one it answers).

**Hook builders** (``SetHooks``: ``(layers, x, clean trace, donor trace) -> hooks``, None where a condition does not
apply): the tables (:func:`table_hooks`); ``V := W_V·norm_l(x0)``, the substitutive form of the paper with the
layer's own norm (:func:`x0_hooks`); ``V_l := V_1`` (a post-hoc SVFormer, arXiv 2410.17897; :func:`v1_hooks`); adjacent
layers sharing one V (:func:`shared_v_hooks`); chapter 02's pattern and value swaps and frozen routing, reused from
:mod:`vrs_edu.chapters.ch02_qk_routes_v_carries.readout` one layer at a time (:func:`each`); and an identity patch, which changes nothing but the
computing path (:func:`identity_hooks`).

**The engine** (:func:`paired_losses`): for each batch of evaluation sequences, one plain forward pass gives the clean
per-sequence loss, one traced pass the tensors the hooks read; each condition then re-runs only the layers from the
first one it patches (:meth:`~vrs_edu.nn.llama.MiniLlama.resume`). The donor of a swap is the batch rolled by one
sequence (sequence i gets sequence i-1's pattern or values; the model treats sequences independently, so the donor's
trace is the clean trace rolled). Shapes: B batch, T sequence, D width, L layers, S table rows.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from einops import rearrange
from jaxtyping import Float, Int
from torch import Tensor

from vrs_edu.chapters.ch02_qk_routes_v_carries import readout as routing
from vrs_edu.nn.hooks import HookPoints
from vrs_edu.nn.llama import MiniLlama

# The three context-free estimators of a projection, by the condition names the recipe measures them under (here,
# beside the conditions, so that the recipe and the read-outs name them from one place).
ESTIMATORS = {"mean": "{P} table", "shrunk": "{P} table (shrunk)", "x0": "{P} := W_{P}·norm(x0)"}
ESTIMATOR_WORDS = {"mean": "the mean table", "shrunk": "the shrunk table", "x0": "W·norm(x0)"}


def estimator(est: str, p: str) -> str:
    """The condition name of estimator ``est`` (a key of :data:`ESTIMATORS`) for projection ``p`` ("Q", "K", "V")."""
    return ESTIMATORS[est].format(P=p)

PROJ = ("q", "k", "v")
SHRINK = 5.0   # pseudo-count of the shrunk table, (n·m + 5·g)/(n + 5): declared with the recipe's tests, before the run
HOOK_OF = {"q": "q_pre", "k": "k_pre", "v": "v"}   # where a table replaces each projection's output

SetHooks = Callable[[list[int], Tensor, "object", "object"], dict | None]


# ---------------------------------------------------------------------------------------------------------------
# Per-token tables from the calibration split


@dataclass
class TokenTables:
    """Sums of each projection's output per (calibration half, layer, table row), and what is needed to turn them
    into means. Row 0 is the fallback: the projection's mean over every calibration position; rows 1..S-1 are the
    tokens in ``tokens`` (those the evaluation needs). ``counts`` (V,) counts every token's calibration occurrences
    (both halves), ``half_counts`` (2, S) the table rows' occurrences per half.

    ``means(p, halves, shrink)`` (L, S, D_p) are the tables (cached): ``halves=(0, 1)`` all the calibration text,
    ``(0,)`` or ``(1,)`` one half (the split-half check); ``shrink=k`` > 0 pulls each row toward the global mean g
    as if k more positions held g: ``(n·m + k·g) / (n + k)`` (n the row's count, m its mean). A rare token's mean
    is noisy; shrinkage trades that noise for a bias toward g (:data:`SHRINK`, the second estimator).
    """

    slots: Int[Tensor, "V"]                 # token id -> table row (0: not a tabled token)
    tokens: Int[Tensor, "S1"]               # the token id of each row 1..S-1
    counts: Int[Tensor, "V"]
    half_counts: Int[Tensor, "2 S"]
    sums: dict[str, Tensor]                 # p -> (2, L, S, D_p) float32
    global_sums: dict[str, Tensor]          # p -> (2, L, D_p) float64
    half_positions: Int[Tensor, "2"]
    _cache: dict = field(default_factory=dict, repr=False)

    def means(self, p: str, halves: tuple[int, ...] = (0, 1), shrink: float = 0.0) -> Float[Tensor, "L S D"]:
        if shrink < 0:
            raise ValueError(f"shrink must be >= 0 (pseudo-counts of the global mean), got {shrink}")
        key = (p, tuple(halves), float(shrink))
        if key not in self._cache:
            h = list(halves)
            n = self.half_counts[h].sum(0).float()                               # (S,)
            glob = (self.global_sums[p][h].sum(0) / self.half_positions[h].sum()).float()   # (L, D)
            # (sum + k·g) / (n + k): k = 0 is the plain mean; a row never seen falls back to g below either way
            tab = (self.sums[p][h].sum(0) + shrink * glob[:, None, :]) / (n + shrink).clamp_min(1)[None, :, None]
            seen = (n > 0)[None, :, None]
            seen[:, 0] = False                                                   # row 0 is always the fallback
            self._cache[key] = torch.where(seen, tab, glob[:, None, :])
        return self._cache[key]

    def lookup(self, p: str, layer: int, ids: Int[Tensor, "B T"], halves: tuple[int, ...] = (0, 1),
               shrink: float = 0.0) -> Float[Tensor, "B T D"]:
        """The table rows of ``ids`` at ``layer``. Raises ValueError for a token that has no row (it was not among
        the tokens the tables were made for)."""
        rows = self.slots[ids]
        if (rows == 0).any():
            missing = sorted(set(ids[rows == 0].tolist()))[:5]
            raise ValueError(f"tokens {missing} have no table row: calibrate with them in needed_tokens")
        return self.means(p, halves, shrink)[layer][rows]

    def coverage(self, ids: Int[Tensor, "..."], min_count: int = 1) -> float:
        """Share of the positions in ``ids`` whose token occurs at least ``min_count`` times in the calibration
        text (the others get the fallback row)."""
        return float((self.counts[ids] >= min_count).double().mean())

    def rows_for(self, ids: Int[Tensor, "N"]) -> dict[str, Tensor]:
        """The full-calibration table rows of ``ids`` at every layer, ``{p: (L, N, D_p)}`` (to store for a demo)."""
        return {p: self.means(p)[:, self.slots[ids]] for p in PROJ}


def per_token_means(values: Float[Tensor, "N D"], ids: Int[Tensor, "N"], vocab_size: int) -> Float[Tensor, "V D"]:
    """The per-token table of one projection, from scratch: row i is the mean of ``values`` over the positions whose
    token is i; a token that never occurs gets the mean over all positions (the best context-free guess without
    its own data). What :func:`calibrate` computes for every layer at once (chapter 08's exercise).

    Raises:
        ValueError: ``values`` not (N, D), ``ids`` not (N,), or an id outside 0..vocab_size-1.
    """
    if values.dim() != 2 or ids.shape != values.shape[:1]:
        raise ValueError(f"values must be (N, D) and ids (N,), got {tuple(values.shape)} and {tuple(ids.shape)}")
    if ids.numel() and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError(f"ids must be in 0..{vocab_size - 1}")
    sums = torch.zeros(vocab_size, values.size(1), dtype=values.dtype).index_add_(0, ids, values)
    counts = torch.bincount(ids, minlength=vocab_size).to(values.dtype)[:, None]
    return torch.where(counts > 0, sums / counts.clamp_min(1), values.mean(0))


def _heads_to_features(t: Tensor) -> Tensor:
    return rearrange(t, "b h t d -> b t (h d)")


@torch.no_grad()
def calibrate(model: MiniLlama, windows: Int[Tensor, "N T1"], halves: Int[Tensor, "N"],
              needed_tokens: Int[Tensor, "S1"], batch_size: int = 8, progress: Callable | None = None) -> TokenTables:
    """Per-token sums of q (before RoPE), k (before RoPE) and v at every layer over the calibration ``windows``
    (inputs = all but each window's last token), kept per calibration half (``halves``, 0/1 per window). Only the
    ``needed_tokens`` get a table row; every token is counted. The windows run one half at a time.

    Raises:
        ValueError: ``halves`` not one 0/1 entry per window, or a needed token outside the vocabulary.
    """
    cfg = model.cfg
    if halves.shape != windows.shape[:1] or not set(halves.tolist()) <= {0, 1}:
        raise ValueError(f"halves must hold one 0/1 entry per window ({len(windows)}), got shape {tuple(halves.shape)}")
    needed = torch.unique(needed_tokens)
    if needed.numel() and (needed.min() < 0 or needed.max() >= cfg.vocab_size):
        raise ValueError(f"needed_tokens must be in 0..{cfg.vocab_size - 1}")
    slots = torch.zeros(cfg.vocab_size, dtype=torch.long)
    slots[needed] = torch.arange(1, len(needed) + 1)
    S, L = len(needed) + 1, cfg.n_layers
    width = {"q": cfg.n_heads * cfg.head_dim, "k": cfg.n_kv_heads * cfg.head_dim, "v": cfg.n_kv_heads * cfg.head_dim}
    sums = {p: torch.zeros(2, L, S, width[p]) for p in PROJ}
    global_sums = {p: torch.zeros(2, L, width[p], dtype=torch.float64) for p in PROJ}
    half_counts = torch.zeros(2, S, dtype=torch.long)
    counts = torch.zeros(cfg.vocab_size, dtype=torch.long)
    half_positions = torch.zeros(2, dtype=torch.long)
    for h in (0, 1):
        members = torch.nonzero(halves == h).flatten()
        for idx in members.split(batch_size):
            x = windows[idx, :-1]
            rows = slots[x]                                               # (B, T)
            counts += torch.bincount(x.flatten(), minlength=cfg.vocab_size)
            half_counts[h] += torch.bincount(rows.flatten(), minlength=S)
            half_positions[h] += x.numel()

            def accumulate(p: str, l: int, rows=rows, h=h):
                def fn(t: Tensor) -> Tensor:
                    y = _heads_to_features(t).float().flatten(0, 1)       # (B·T, D_p)
                    sums[p][h, l].index_add_(0, rows.flatten(), y)
                    global_sums[p][h, l] += y.sum(0).double()
                    return t
                return fn

            hooks = {f"blocks.{l}.attn.{HOOK_OF[p]}": accumulate(p, l) for l in range(L) for p in PROJ}
            run_layers(model, x, L, hooks)       # the tables read no logits: the head is not run
            if progress is not None:
                progress(len(x))
    return TokenTables(slots, needed, counts, half_counts, sums, global_sums, half_positions)


@torch.no_grad()
def run_layers(model: MiniLlama, idx: Int[Tensor, "B T"], upto: int, hooks: dict | None = None
               ) -> Float[Tensor, "B T D"]:
    """The stream entering layer ``upto`` (``upto`` = L: the last layer's output, before the final norm), computed
    by the embedding and layers 0..upto-1 only, with ``hooks`` on their points as in the model's forward pass (the
    same names, ``blocks.{l}.attn.v`` …): what the model computes up to there, without the layers above and the
    49,152-row head."""
    hook = HookPoints(hooks)
    x = hook("embed", model.tok_emb(idx))
    for l in range(upto):
        x = hook(f"blocks.{l}.resid_pre", x)
        x = model.blocks[l](x, rope=model.rope, hook=hook.scoped(f"blocks.{l}"))
    hook.check_all_used()       # a hook on a point at or above ``upto`` would never run
    return x


@torch.no_grad()
def stream_at(model: MiniLlama, windows: Int[Tensor, "N T1"], layer: int, batch_size: int = 8
              ) -> Float[Tensor, "N T D"]:
    """The stream entering ``layer`` at every input position of ``windows`` (the model's dtype), computed by the
    embedding and the layers below it only. Raises ValueError on a layer outside 0..L-1."""
    if not 0 <= layer < model.cfg.n_layers:
        raise ValueError(f"layer must be in 0..{model.cfg.n_layers - 1}, got {layer}")
    return torch.cat([run_layers(model, w[:, :-1], layer) for w in windows.split(batch_size)])


# ---------------------------------------------------------------------------------------------------------------
# Hook builders: (layers, x, clean trace, donor trace) -> hooks


def each(hooks_for: routing.HooksFor) -> SetHooks:
    """A set-of-layers builder from chapter 02's one-layer builders (:mod:`vrs_edu.chapters.ch02_qk_routes_v_carries.readout`): the union of their
    hooks; None if none of the layers admits the condition (e.g. "previous layer" at layer 0 alone)."""
    def build(layers, x, clean, donor):
        hooks = {}
        for l in layers:
            h = hooks_for(l, x, clean, donor)
            if h is not None:
                hooks.update(h)
        return hooks or None
    return build


def _set(name: str, value: Tensor) -> dict:
    return {name: lambda old, v=value: v.to(old.dtype).expand_as(old)}


def table_hooks(tables: TokenTables, p: str, halves: tuple[int, ...] = (0, 1), shrink: float = 0.0) -> SetHooks:
    """Replace projection ``p``'s output (q or k before RoPE, or v) at each layer by its per-token table row (the
    mean table; with ``shrink`` = k > 0 the table shrunk toward the global mean, :meth:`TokenTables.means`)."""
    if p not in PROJ:
        raise ValueError(f"p must be one of {PROJ}, got {p!r}")

    def build(layers, x, clean, donor):
        out = {}
        for l in layers:
            value = tables.lookup(p, l, x, halves, shrink)                     # (B, T, D_p)
            # the heads split as the replaced tensor's (B, H, T, Dh): no clean tensor needed, so a light run works
            out[f"blocks.{l}.attn.{HOOK_OF[p]}"] = (
                lambda old, v=value: rearrange(v, "b t (h d) -> b h t d", h=old.size(1)).to(old.dtype))
        return out
    return build


def x0_hooks(model: MiniLlama, p: str) -> SetHooks:
    """Feed projection ``p`` (q, k or v) the token's context-free embedding through the layer's own norm, ``p_in :=
    norm_l(x0)``: for V, the bank-of-values paper's substitutive ``W_V·norm(x0)``; for Q and K, ``W_Q·norm_l(x0)``
    and ``W_K·norm_l(x0)``, then rotated by RoPE as usual (the hook sits before the projection). No calibration is
    needed (the third estimator); at layer 0 it changes nothing, x0 *is* layer 0's input."""
    if p not in PROJ:
        raise ValueError(f"p must be one of {PROJ}, got {p!r}")

    def build(layers, x, clean, donor):
        return {f"blocks.{l}.attn.{p}_in": (lambda old, l=l: model.blocks[l].attn_norm(clean["embed"]).to(old.dtype))
                for l in layers}
    return build


def v1_hooks(layers, x, clean, donor):
    """Each layer (but layer 0) attends over V_1, layer 0's values on the same input: a post-hoc SVFormer (Zhou et
    al., arXiv 2410.17897) in those layers, whose own V is then never computed nor cached."""
    return {f"blocks.{l}.attn.v": (lambda old: clean["blocks.0.attn.v"].to(old.dtype)) for l in layers if l > 0} or None


def shared_v_hooks(layers, x, clean, donor):
    """Adjacent layers share one V: in each consecutive pair of ``layers`` (first, second), the second attends over
    the first's values of the same (patched) run, so only half of these layers' V is cached."""
    hooks, store = {}, {}
    for a, b in zip(layers[0::2], layers[1::2]):
        if b != a + 1:
            raise ValueError(f"shared V needs consecutive layers, got {a} and {b}")
        hooks[f"blocks.{a}.attn.v"] = lambda t, a=a: store.__setitem__(a, t) or t
        hooks[f"blocks.{b}.attn.v"] = lambda t, a=a: store[a].to(t.dtype)
    return hooks or None


def identity_hooks(layers, x, clean, donor):
    """Hooks that return what they get (pattern and values): nothing changes but the computing path (those layers
    take the explicit attention path). What it costs is the rounding of the comparison itself."""
    out = {}
    for l in layers:
        out[f"blocks.{l}.attn.pattern"] = lambda t: t
        out[f"blocks.{l}.attn.v"] = lambda t: t
    return out


# Chapter 02's experiments, one layer at a time (routing's builders, unchanged)
PATTERN_CONDITIONS: dict[str, SetHooks] = {
    "uniform pattern": each(routing.uniform_routing),
    "previous layer's pattern": each(routing.previous_layer_routing),
    "pattern swap": each(routing.pattern_swap),
    "value swap": each(routing.value_swap),
}


# ---------------------------------------------------------------------------------------------------------------
# The engine


def sequence_losses(logits: Float[Tensor, "B T V"], y: Int[Tensor, "B T"]) -> Float[Tensor, "B"]:
    """Mean next-token cross-entropy (nats) of each sequence, computed in float32 over the rows of (B·T, V) —
    the same numbers as :func:`vrs_edu.chapters.ch02_qk_routes_v_carries.readout.per_sequence_loss` (to float rounding), without its transposed
    (B, V, T) layout, whose strided softmax costs three times as much over a 49,152-token vocabulary."""
    B, T = y.shape
    return F.cross_entropy(logits.flatten(0, 1).float(), y.flatten(), reduction="none").view(B, T).mean(-1)


class RolledTrace:
    """The trace of the batch rolled by one sequence (sequence i sees sequence i-1's tensors): the donor of a swap.
    The model treats the sequences of a batch independently, so this is the donor's own clean trace."""

    def __init__(self, trace):
        self.trace = trace

    def __getitem__(self, name: str) -> Tensor:
        return self.trace[name].roll(1, 0)


@dataclass(frozen=True)
class Condition:
    """One intervention: ``build`` (a :data:`SetHooks`) applied to ``layers`` at once."""

    layers: tuple[int, ...]
    build: SetHooks


@torch.no_grad()
def paired_losses(model: MiniLlama, windows: Int[Tensor, "N T1"], conditions: dict[str, Condition],
                  batch_size: int = 8, on_batch: Callable | None = None, progress: Callable | None = None,
                  capture: tuple[str, ...] | None = None) -> dict:
    """The paired loss change of every condition on every sequence of ``windows`` (inputs = all but the last token
    of each window, targets = all but the first).

    Returns ``{"clean": (N,) per-sequence loss in nats, name: (N,) loss with the condition − clean loss}`` (NaN for
    a condition that does not apply, e.g. the previous layer's pattern at layer 0). ``on_batch(x, y, trace, logits)``,
    if given, is called with each batch's clean trace (to measure more from it). ``progress(n)`` after each batch.

    The sequences are cut into equal batches of at most ``batch_size`` (never a batch of one: a swap needs a donor).

    ``capture``: the names of the only points the conditions read (e.g. ``("embed", "blocks.20.resid_pre")`` for
    table and x0 substitutions of the last third). Then one plain, fused forward pass records them by hooks and
    gives the clean loss too — no separate traced pass (about half the cost of a batch with few conditions); the
    swaps, which read patterns, need the full trace (``capture=None``), as does ``on_batch``.

    Raises:
        ValueError: fewer than 2 windows; ``on_batch`` with ``capture``.
    """
    if len(windows) < 2:
        raise ValueError(f"need at least 2 sequences (a swap takes its donor from the batch), got {len(windows)}")
    if capture is not None and on_batch is not None:
        raise ValueError("on_batch reads the full clean trace: give capture=None with it")
    out: dict[str, list[Tensor]] = {"clean": [], **{name: [] for name in conditions}}
    n_batches = -(-len(windows) // batch_size)
    for idx in torch.arange(len(windows)).tensor_split(n_batches):   # equal batches, none of a lone sequence
        w = windows[idx]
        x, y = w[:, :-1], w[:, 1:]
        if capture is None:
            clean = sequence_losses(model(x).logits, y)                   # the fused path, as an unpatched model
            traced = model(x, trace=True)
            tr = traced.trace
            if on_batch is not None:
                on_batch(x, y, tr, traced.logits)
        else:                  # the same fused pass, recording only the points the conditions read
            tr = {}
            keep = {n: (lambda t, n=n: tr.__setitem__(n, t) or t) for n in capture}
            clean = sequence_losses(model(x, hooks=keep).logits, y)
        donor = RolledTrace(tr)
        out["clean"].append(clean)
        for name, c in conditions.items():
            hooks = c.build(list(c.layers), x, tr, donor)
            if hooks is None:
                out[name].append(torch.full_like(clean, math.nan))
                continue
            first = min(int(n.split(".")[1]) for n in hooks)
            res = model.resume(tr[f"blocks.{first}.resid_pre"], first, hooks=hooks)
            out[name].append(sequence_losses(res.logits, y) - clean)
        if progress is not None:
            progress(len(w))
    return {k: torch.cat(v).double() for k, v in out.items()}


def sets_by_third(names_builders: dict[str, SetHooks], third_layers: dict[str, list[int]]) -> dict[str, Condition]:
    """``{"<name> · <third>": Condition}`` for every builder and third of the layers."""
    return {f"{name} · {third}": Condition(tuple(layers), b) for name, b in names_builders.items()
            for third, layers in third_layers.items()}


def sets_by_layer(names_builders: dict[str, SetHooks], n_layers: int) -> dict[str, Condition]:
    """``{"<name> · <l>": Condition}`` for every builder and single layer."""
    return {f"{name} · {l}": Condition((l,), b) for name, b in names_builders.items() for l in range(n_layers)}


# ---------------------------------------------------------------------------------------------------------------
# The bridge: a table fitted to the loss rather than estimated as a mean


def fit_table(model: MiniLlama, resid: Float[Tensor, "N T D"], windows: Int[Tensor, "N T1"], layer: int, p: str,
              init: Float[Tensor, "S D"], slots: Int[Tensor, "V"], steps: int = 200, batch_size: int = 8,
              lr: float = 1e-2, seed: int = 0) -> tuple[Tensor, list[float]]:
    """Train only one layer's table for projection ``p`` (rows ``init``, looked up through ``slots``) by next-token
    loss on the calibration ``windows``, every weight of the model frozen; ``resid`` is the stream entering
    ``layer`` at those windows (:func:`stream_at`), so each step runs layers ``layer..L-1``
    only. Adam at ``lr`` for ``steps`` steps of ``batch_size`` windows drawn with ``seed``. Returns the fitted table
    (S, D) and the training loss per step (nats).

    Raises:
        ValueError: ``resid`` and ``windows`` of different lengths, or a window token without a table row.
    """
    if len(resid) != len(windows):
        raise ValueError(f"resid and windows must cover the same windows, got {len(resid)} and {len(windows)}")
    if (slots[windows[:, :-1]] == 0).any():
        raise ValueError("every calibration token needs a table row to fit (calibrate with them all)")
    flags = [q.requires_grad for q in model.parameters()]
    for q in model.parameters():
        q.requires_grad_(False)
    table = init.detach().clone().float().requires_grad_(True)
    opt = torch.optim.Adam([table], lr=lr)
    g = torch.Generator().manual_seed(seed)
    name = f"blocks.{layer}.attn.{HOOK_OF[p]}"
    losses = []
    for _ in range(steps):
        idx = torch.randint(len(windows), (batch_size,), generator=g)
        x, y = windows[idx, :-1], windows[idx, 1:]
        value = table[slots[x]]

        def replace(old: Tensor) -> Tensor:
            return rearrange(value, "b t (h d) -> b h t d", h=old.size(1)).to(old.dtype)

        out = model.resume(resid[idx], layer, y, hooks={name: replace})
        opt.zero_grad()
        out.loss.backward()
        opt.step()
        losses.append(float(out.loss.detach()))
    for q, f in zip(model.parameters(), flags):
        q.requires_grad_(f)
    return table.detach(), losses
