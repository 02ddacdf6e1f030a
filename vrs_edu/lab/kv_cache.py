"""KV-cache memory: measured from the cache tensors the model builds, next to the formulas (chapter 06).

A decoder that generates token by token keeps, for every layer, the keys and values of every token it has read: the
KV cache. What V reuse changes is the V half of it:

* **baseline**: every layer caches its own K and V — ``2 · L · D`` numbers per token.
* **SVFormer** (Zhou et al., arXiv 2410.17897): layers 2..L own no W_V and attend over V_1, so V is cached once —
  ``(L + 1) · D`` numbers per token, about half.
* **bank of values** (He et al., arXiv 2606.02780, sec. 4): a bank layer's values are ``γ · E_v[token id]``, a table
  lookup, so the layer caches no V at all; it pays a per-layer table of ``|V| · D`` numbers instead, independent of
  the context. The paper's saving for ``L/3`` bank layers and context T: ``ΔKV = (L/3) · d · (T − |V|)`` numbers per
  sequence, positive once T exceeds the vocabulary size |V| (the break-even context).
* **Depth-Attention** (Zeng et al., arXiv 2606.05014): a layer mixes the cached values of earlier layers at the
  same position into its own and caches the mixture *in place of* its own values, so the cache is the baseline's,
  ``2 · L · D`` numbers per token, and nothing else is kept (:class:`vrs_edu.nn.depth_attention.DepthAttention`).
* **KV sharing** (``kv_share``; CLA, arXiv 2405.12981): a sharing layer caches nothing, it reads its donor's K and V.
  K = V, value and per-layer embeddings, hyper-connections and XSA cache what the baseline caches
  (:func:`config_kv_bytes_per_token` counts any config).

:func:`build_kv_cache` collects the tensors a decoder would keep after reading ``idx`` *from a real forward pass* of
the model (its hook points ``blocks.{l}.attn.k`` / ``attn.v``), sharing one tensor where layers share values;
:func:`cache_bytes` counts the bytes of the distinct tensors. The formulas (:func:`kv_bytes_per_token`,
:func:`bov_saving`) are checked against those measurements in the tests and in chapter 06.
"""
from __future__ import annotations

from dataclasses import replace

import torch
from torch import Tensor

from vrs_edu.nn.model import TinyGPT, TinyGPTConfig
from vrs_edu.nn.x0 import default_x0_layers

VARIANTS = {"baseline": {}, "svformer": {"value_residual": "svformer"}, "bank": {"x0_mode": "bank"}}
DEPTH_ATTENTION = {"depth_attention": {"depth_mixer": "depth_attention"}}   # a V read, not a V reuse
ALL_VARIANTS = {**VARIANTS, **DEPTH_ATTENTION}   # every variant the formulas know


def value_source(model: TinyGPT, layer: int) -> str:
    """Where layer ``layer`` gets its values at decode time: ``"own"`` (its W_V: cached), ``"first"`` (SVFormer:
    V_1, cached once by layer 0), ``"table"`` (bank of values: looked up from the token id, nothing cached),
    ``"mixed"`` (Depth-Attention, layers >= 1: its values mixed with earlier layers' cached ones, cached in place
    of its own) or ``"donor"`` (KV sharing: its donor's K and V, nothing cached)."""
    block = model.blocks[layer]
    if block.shares_kv:
        return "donor"
    if model.depth.mixes_values and layer > 0:
        return "mixed"
    if block.x0 is not None and block.x0.mode == "bank":
        return "table"
    if block.svformer:
        return "first"
    return "own"


@torch.no_grad()
def build_kv_cache(model: TinyGPT, idx: Tensor) -> dict[str, Tensor | None]:
    """The KV cache after reading ``idx`` (B, T): ``{"blocks.{l}.k": (B, H, T, Dh), "blocks.{l}.v": ... or None}``.

    Keys are cached after RoPE (as decoders do). Values: a layer with its own W_V caches its own values (with
    Depth-Attention: its depth-mixed values, hook point ``attn.v``); an SVFormer layer's entry *is* layer 0's tensor
    (the same object: stored once); a bank layer's entry is None (its values are a table lookup of the token ids).
    Raises ValueError (from the model) on bad token ids or T.
    """
    model.eval()
    tr = model(idx, trace=True).trace
    cache: dict[str, Tensor | None] = {}
    for l in range(model.cfg.n_layers):
        src, donor = value_source(model, l), model.blocks[l].kv_donor
        cache[f"blocks.{l}.k"] = cache[f"blocks.{donor}.k"] if src == "donor" else tr[f"blocks.{l}.attn.k"].contiguous()
        if src == "donor":   # KV sharing: the donor's tensors, stored once
            cache[f"blocks.{l}.v"] = cache[f"blocks.{donor}.v"]
        elif src in ("own", "mixed"):
            cache[f"blocks.{l}.v"] = tr[f"blocks.{l}.attn.v"].contiguous()
        elif src == "first":
            cache[f"blocks.{l}.v"] = cache["blocks.0.v"]
        else:
            cache[f"blocks.{l}.v"] = None
    return cache


def cache_bytes(cache: dict[str, Tensor | None]) -> int:
    """Bytes held by the distinct tensors of a cache (a tensor shared by several layers counts once)."""
    seen: dict[int, int] = {}
    for t in cache.values():
        if t is not None:
            seen[id(t)] = t.numel() * t.element_size()
    return sum(seen.values())


def table_bytes(model: TinyGPT) -> int:
    """Bytes of the bank-of-values tables E_v (|V| × D per bank layer): fixed memory, independent of the context."""
    return sum(b.x0.E_v.numel() * b.x0.E_v.element_size() for b in model.blocks
               if b.x0 is not None and b.x0.mode == "bank")


def measure(cfg: TinyGPTConfig, lengths: list[int], batch: int = 1, seed: int = 0,
            variants: dict[str, dict] = VARIANTS) -> list[dict]:
    """Build each of ``variants`` (name -> config overrides; default :data:`VARIANTS`, chapter 06's V reuses) from
    ``cfg`` and measure its cache after reading random token ids of every length in ``lengths``. Returns one row
    per (variant, T): ``cache_bytes``, ``bytes_per_token`` (per sequence position of one sequence), ``table_bytes``
    and ``n_cached_v`` (distinct V tensors).

    Raises:
        ValueError: a length outside 1..cfg.block_size.
    """
    bad = [T for T in lengths if not 1 <= T <= cfg.block_size]
    if bad:
        raise ValueError(f"lengths must be in 1..block_size={cfg.block_size}, got {bad}")
    g = torch.Generator().manual_seed(seed)
    rows = []
    for name, over in variants.items():
        model = TinyGPT(replace(cfg, **over))
        for T in lengths:
            idx = torch.randint(cfg.vocab_size, (batch, T), generator=g)
            cache = build_kv_cache(model, idx)
            nbytes = cache_bytes(cache)
            n_v = len({id(t) for k, t in cache.items() if k.endswith(".v") and t is not None})
            rows.append({"variant": name, "T": T, "batch": batch, "cache_bytes": nbytes,
                         "bytes_per_token": nbytes / (batch * T), "table_bytes": table_bytes(model),
                         "n_cached_v": n_v, "n_layers": cfg.n_layers, "d_model": cfg.d_model})
    return rows


# ---------------------------------------------------------------------------------------------------------------
# The formulas.


def n_bank_layers(n_layers: int) -> int:
    """Bank layers in the course's default placement, the last third (``vrs_edu.nn.x0.default_x0_layers``)."""
    return len(default_x0_layers(n_layers))


def kv_bytes_per_token(n_layers: int, d_model: int, variant: str = "baseline", bytes_per_number: int = 4,
                       bank_layers: int | None = None) -> int:
    """KV-cache bytes per token of one sequence: ``baseline`` 2·L·D, ``svformer`` (L+1)·D, ``bank`` (2·L − n_bank)·D
    numbers (K in every layer; V in every non-bank layer), ``depth_attention`` 2·L·D (the mixed values replace the
    own ones), times ``bytes_per_number`` (4 for float32, 2 for bf16).

    Raises:
        ValueError: an unknown variant, or non-positive sizes.
    """
    if variant not in ALL_VARIANTS:
        raise ValueError(f"variant must be one of {tuple(ALL_VARIANTS)}, got {variant!r}")
    if n_layers < 1 or d_model < 1 or bytes_per_number < 1:
        raise ValueError(f"n_layers, d_model and bytes_per_number must be >= 1, got {n_layers}, {d_model}, "
                         f"{bytes_per_number}")
    if variant in ("baseline", "depth_attention"):
        numbers = 2 * n_layers * d_model
    elif variant == "svformer":
        numbers = (n_layers + 1) * d_model
    else:
        nb = n_bank_layers(n_layers) if bank_layers is None else bank_layers
        numbers = (2 * n_layers - nb) * d_model
    return numbers * bytes_per_number


def config_kv_bytes_per_token(cfg: TinyGPTConfig, bytes_per_number: int = 4) -> int:
    """KV-cache bytes per token of one sequence, from the config alone: D numbers of K for every layer that computes
    its own keys (not a ``kv_share`` sharing layer), D of V for every such layer whose values are neither V_1
    (SVFormer) nor a table lookup (bank layers); × ``bytes_per_number`` (4 float32, 2 bf16). K = V stores both: K
    is rotated, V is not (as Gemma 4's cache does)."""
    own = [d == l for l, d in enumerate(cfg.kv_share or range(cfg.n_layers))]
    reuse_v = {l for l in range(1, cfg.n_layers) if cfg.value_residual == "svformer"}
    reuse_v |= set(cfg.resolved_x0_layers()) if cfg.x0_mode == "bank" else set()
    return (sum(own) + sum(o and l not in reuse_v for l, o in enumerate(own))) * cfg.d_model * bytes_per_number


def bov_saving(n_bank: int, d_model: int, context: int, vocab_size: int) -> int:
    """The bank-of-values paper's memory saving in numbers, ``ΔKV = n_bank · d · (T − |V|)`` (arXiv 2606.02780,
    sec. 4, with n_bank = L/3): V cache no longer kept for T tokens, minus the tables' |V|·d per bank layer.
    Positive when T > |V|; zero at the break-even context T = |V|."""
    return n_bank * d_model * (context - vocab_size)


def measured_saving(rows: list[dict], T: int) -> int:
    """ΔKV in bytes from :func:`measure` rows at context T: (baseline cache) − (bank cache + bank tables)."""
    by = {(r["variant"], r["T"]): r for r in rows}
    base, bank = by[("baseline", T)], by[("bank", T)]
    return base["cache_bytes"] - (bank["cache_bytes"] + bank["table_bytes"])


def kv_summary(n_layers: int = 12, d_model: int = 768, context: int = 2048, vocab_size: int = 32768,
               bytes_per_number: int = 2, batch: int = 1) -> dict:
    """Bytes for one batch of ``batch`` sequences of ``context`` tokens: ``baseline`` and ``svformer`` caches, the
    bank model's cache plus its tables (``bank_total``; the tables are shared by the batch), the bank's saving over
    the baseline (the BoV paper's ΔKV for B·T tokens, in bytes; negative below break-even) and the break-even
    context ``|V| / batch`` (tokens per sequence; a float).

    Raises:
        ValueError: ``batch`` < 1 (the sizes are checked by :func:`kv_bytes_per_token`).
    """
    if batch < 1:
        raise ValueError(f"batch must be >= 1 sequence, got {batch}")
    nb = n_bank_layers(n_layers)
    tokens = batch * context
    bank_cache = kv_bytes_per_token(n_layers, d_model, "bank", bytes_per_number) * tokens
    tables = nb * vocab_size * d_model * bytes_per_number
    return {"baseline": kv_bytes_per_token(n_layers, d_model, "baseline", bytes_per_number) * tokens,
            "svformer": kv_bytes_per_token(n_layers, d_model, "svformer", bytes_per_number) * tokens,
            "bank_cache": bank_cache, "bank_tables": tables, "bank_total": bank_cache + tables,
            "bank_saving": bov_saving(nb, d_model, tokens, vocab_size) * bytes_per_number,
            "break_even_context": vocab_size / batch, "n_bank_layers": nb, "batch": batch}
