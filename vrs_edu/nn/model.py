"""TinyGPT: a small decoder-only Transformer whose every intermediate tensor can be read or replaced.

Readable top to bottom, in the style of nanoGPT's ``model.py``: a config dataclass, a pre-norm ``Block``
(attention then MLP, each adding into the residual stream) and ``TinyGPT``. On top of the plain model it carries
the course's variants, each switched on by one config field:

* ``value_residual``: ``none | resformer | learnable | svformer | neutreno`` (:mod:`vrs_edu.nn.value_residual`)
* ``x0_mode``: ``none | qkv | shared | substitute_v | bank | scale_v`` on ``x0_layers``, reading ``x0_source``
  (``token | random | previous``) (:mod:`vrs_edu.nn.x0`)
* ``stream_start``: ``rmsnorm`` (default, nanochat) or ``embedding`` (GPT-2); ``qk_norm`` (official BoV code)
* ``depth_mixer``: ``residual | denseformer | elcbert | attnres | shortswa | dca | mudd | vertical | attnres_qkv |
  depth_attention | scalar_gain`` (:mod:`vrs_edu.nn.depth`)
* what 2026's production models chose on the same axes (chapter 06; each off by default, one field each):
  ``k_eq_v`` (V is the key projection: Gemma 4's ``attention_k_eq_v``, :mod:`vrs_edu.nn.k_eq_v`), ``kv_share``
  (a layer attends over an earlier layer's K, V and computes none: CLA, arXiv 2405.12981, and Gemma 4's
  ``num_kv_shared_layers``, :mod:`vrs_edu.nn.kv_sharing`), ``value_embed`` (gated token tables added to V:
  nanochat, modded-nanogpt) and ``layer_embed`` (per-layer token embeddings into the stream: Gemma 3n's
  ``hidden_size_per_layer_input``, :mod:`vrs_edu.nn.layer_embeddings`), ``hyper_connections`` with ``hc_kind``
  (n residual streams: HC, arXiv 2409.19606; mHC, arXiv 2512.24880, :mod:`vrs_edu.nn.hyper_connections`), ``xsa``
  (exclusive self-attention, arXiv 2603.09078, :mod:`vrs_edu.nn.xsa`); ``mlp_hidden`` sizes the MLP of a
  parameter-matched control.

Shapes: B batch, T sequence, D = d_model, H = n_heads, L = n_layers, V = vocab_size.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, get_args

import torch
import torch.nn.functional as F
from jaxtyping import Float, Int
from torch import Tensor, nn

from vrs_edu.nn import value_residual as vr, x0 as x0mod
from vrs_edu.nn.attention import CausalSelfAttention
from vrs_edu.nn.depth import make_depth_mixer
from vrs_edu.nn.depth_mixer import MIXERS, ROUTERS, DepthMixerName, DepthRead
from vrs_edu.nn.hooks import Hook, HookPoints, no_hook
from vrs_edu.nn.hyper_connections import HC_KINDS, HCKind, HyperConnectionStreams
from vrs_edu.nn.layer_embeddings import PerLayerEmbeddings, PerLayerInput, ValueEmbedding
from vrs_edu.nn.layers import MLP, RoPE, SeededInit, residual_std, rms_norm
from vrs_edu.nn.value_residual import ValueResidualMode
from vrs_edu.nn.x0 import X0Mode, X0Source

# Where the residual stream starts (the functions are ``STREAM_STARTS`` below).
StreamStart = Literal["rmsnorm", "embedding"]


@dataclass
class TinyGPTConfig:
    """Everything that defines a TinyGPT. Invalid combinations raise ValueError in :meth:`validate`."""

    vocab_size: int = 256
    d_model: int = 64
    n_layers: int = 6
    n_heads: int = 4
    block_size: int = 64          # longest sequence T the model accepts
    mlp_ratio: int = 4
    value_residual: ValueResidualMode = "none"  # none | resformer | learnable | svformer | neutreno
    neutreno_lambda: float = 0.4
    x0_mode: X0Mode = "none"      # none | qkv | shared | substitute_v | bank | scale_v
    x0_layers: tuple[int, ...] | None = None  # None: the last third of the layers
    # depth_mixer: residual | denseformer | elcbert | attnres | shortswa | dca | mudd | vertical | attnres_qkv |
    # depth_attention | scalar_gain
    depth_mixer: DepthMixerName = "residual"
    depth_window: int | None = None  # K for depth_mixer="shortswa"; None = full memory
    tie_embeddings: bool = False
    # Where the residual stream starts (the baseline is a named setting, see ``STREAM_STARTS``):
    # "rmsnorm" = RMSNorm(embedding), as nanochat and modded-nanogpt; "embedding" = the raw embedding, GPT-2 style.
    stream_start: StreamStart = "rmsnorm"
    qk_norm: bool = False         # RMSNorm q and k per head, then scale by 1.2 (the official bank-of-values code)
    x0_source: X0Source = "token"  # token | random | previous: what the x0 layers read (controls, see x0.py)
    # 2026 production designs (chapter 06), each off by default:
    k_eq_v: bool = False          # V = RMSNorm(x W_K) per head, before RoPE; no W_V (Gemma 4 ``attention_k_eq_v``)
    kv_share: tuple[int, ...] | None = None  # donor layer of every layer: sharers attend over its K, V (CLA)
    value_embed: bool = False     # gated token tables added to V on alternating layers, the last included (nanochat)
    layer_embed: int = 0          # P: per-layer token embeddings written after each MLP (Gemma 3n PLE); 0 = off
    hyper_connections: int = 0    # n residual streams instead of one (HC / mHC); 0 = off
    hc_kind: HCKind = "mhc"       # hc (Zhu et al.) | mhc (doubly-stochastic stream mixing, DeepSeek-V4)
    xsa: bool = False             # exclusive self-attention: each head's output loses its own-value component
    mlp_hidden: int | None = None  # the MLP's hidden width; None = mlp_ratio · d_model (parameter-matched controls)
    seed: int = 0

    def validate(self) -> "TinyGPTConfig":
        """Refuse every config that cannot build a working TinyGPT, here and nowhere else (the presets, the
        command line and ``TinyGPT`` call this); returns ``self``.

        Raises:
            ValueError: naming the field, what it allows and what it got: a size that is not a positive integer;
                ``d_model`` not divisible by ``n_heads``, or an odd head width (RoPE rotates pairs of dimensions);
                a mode outside its tuple (``value_residual``, ``x0_mode``, ``depth_mixer``, ``stream_start``,
                ``x0_source``); ``neutreno_lambda`` not a finite number; ``x0_layers`` not distinct layer indices
                in 0..n_layers-1, or empty while ``x0_mode`` builds x0 paths; ``depth_window`` outside
                1..n_layers + 1 (a token's depth sequence has L + 1 states) or set for a mixer other than
                ``shortswa``; ``tie_embeddings``/``qk_norm``/``k_eq_v``/``value_embed``/``xsa`` not a bool;
                ``mlp_hidden`` not None or a positive integer; ``layer_embed`` not an integer >= 0;
                ``hyper_connections`` outside 0..16; ``hc_kind`` outside its tuple; ``kv_share`` not a plan of
                donors (:func:`check_kv_share`); ``seed`` not an integer; and the combinations that cannot work or
                build parts nothing reads (:func:`refuse_dead_parts`, :func:`refuse_design_conflicts`).
        """
        for name in ("vocab_size", "d_model", "n_layers", "n_heads", "block_size", "mlp_ratio"):
            value = getattr(self, name)
            if not _is_int(value) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}: every head needs "
                             f"d_model / n_heads whole dimensions (n_heads in {head_counts(self.d_model)})")
        if (self.d_model // self.n_heads) % 2:
            raise ValueError(f"head dim d_model/n_heads = {self.d_model // self.n_heads} must be even for RoPE "
                             f"(n_heads in {head_counts(self.d_model)}), got n_heads={self.n_heads}")
        _one_of("value_residual", self.value_residual, vr.MODES)
        if not _is_number(self.neutreno_lambda) or not math.isfinite(self.neutreno_lambda):
            raise ValueError(f"neutreno_lambda must be a finite number, got {self.neutreno_lambda!r}")
        _one_of("x0_mode", self.x0_mode, x0mod.MODES)
        if self.x0_layers is not None:
            layers = self.x0_layers
            if (not isinstance(layers, (tuple, list)) or not all(_is_int(l) and 0 <= l < self.n_layers
                                                                  for l in layers) or len(set(layers)) < len(layers)):
                raise ValueError(f"x0_layers must be None (the last third) or distinct layer indices in "
                                 f"0..{self.n_layers - 1}, got {layers!r}")
            if not layers and self.x0_mode != "none":
                raise ValueError(f"x0_layers must name at least one layer for x0_mode={self.x0_mode!r} (an empty "
                                 f"tuple builds no x0 path), got {layers!r}")
        _one_of("depth_mixer", self.depth_mixer, MIXERS)
        if self.depth_window is not None:
            if self.depth_mixer != "shortswa":
                raise ValueError(f"depth_window applies only to depth_mixer='shortswa', not {self.depth_mixer!r}: "
                                 f"it must be None, got {self.depth_window!r}")
            if not _is_int(self.depth_window) or not 1 <= self.depth_window <= self.n_layers + 1:
                raise ValueError(f"depth_window K={self.depth_window!r} must be in 1..n_layers + 1 = "
                                 f"1..{self.n_layers + 1} (a token's depth sequence has n_layers + 1 states) or "
                                 f"None (full memory); larger windows can never fill")
        for name in ("tie_embeddings", "qk_norm", "k_eq_v", "value_embed", "xsa"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.mlp_hidden is not None and (not _is_int(self.mlp_hidden) or self.mlp_hidden < 1):
            raise ValueError(f"mlp_hidden must be None (mlp_ratio · d_model) or a positive integer, "
                             f"got {self.mlp_hidden!r}")
        if not _is_int(self.layer_embed) or self.layer_embed < 0:
            raise ValueError(f"layer_embed must be an integer >= 0 (P, the width of each layer's token vector; "
                             f"0 = off), got {self.layer_embed!r}")
        if not _is_int(self.hyper_connections) or not 0 <= self.hyper_connections <= 16:
            raise ValueError(f"hyper_connections must be an integer in 0..16 (the number of residual streams; 0 = "
                             f"the one plain stream), got {self.hyper_connections!r}")
        _one_of("hc_kind", self.hc_kind, HC_KINDS)
        check_kv_share(self.kv_share, self.n_layers)
        _one_of("stream_start", self.stream_start, get_args(StreamStart))
        _one_of("x0_source", self.x0_source, x0mod.SOURCES)
        if not _is_int(self.seed):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")
        if self.x0_source != "token" and self.x0_mode in ("none", "bank", "scale_v"):
            raise ValueError(f"x0_source={self.x0_source!r} needs an x0_mode that reads x0 (qkv, shared, "
                             f"substitute_v), got x0_mode={self.x0_mode!r}")
        if self.x0_mode == "bank" and self.value_residual != "none" and 0 in self.resolved_x0_layers():
            raise ValueError("a bank-of-values layer 0 cannot provide V_1 for a value residual")
        refuse_dead_parts(self)
        refuse_design_conflicts(self)
        return self

    def sharing_layers(self) -> tuple[int, ...]:
        """The layers that read an earlier layer's K, V (``kv_share``) and compute none of their own."""
        return () if self.kv_share is None else tuple(l for l, d in enumerate(self.kv_share) if d != l)

    def value_embed_layers(self) -> tuple[int, ...]:
        """The layers with a value embedding: nanochat's ``has_ve``, alternating with the last always included."""
        return tuple(l for l in range(self.n_layers) if l % 2 == (self.n_layers - 1) % 2) if self.value_embed else ()

    def resolved_x0_layers(self) -> tuple[int, ...]:
        if self.x0_mode == "none":
            return ()
        return tuple(self.x0_layers) if self.x0_layers is not None else x0mod.default_x0_layers(self.n_layers)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TinyGPTConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown TinyGPTConfig fields: {unknown}")
        d = dict(d)
        # A config written before ``stream_start`` existed was trained with the raw-embedding start: keep it.
        d.setdefault("stream_start", "embedding")
        for name in ("x0_layers", "kv_share"):   # JSON stores tuples as lists
            if d.get(name) is not None:
                d[name] = tuple(d[name])
        return cls(**d).validate()


@dataclass
class Trace:
    """Every tensor that passed a hook point during one forward pass, by name (detached).

    ``trace["blocks.2.attn.pattern"]`` is one tensor; ``trace.stack("resid")`` is the depth stack
    (L+1, B, T, D): the input of every block and the final state; ``trace.layers("attn.v")`` lists one per block.
    """

    tensors: dict[str, Tensor] = field(default_factory=dict)
    n_layers: int = 0

    def __getitem__(self, name: str) -> Tensor:
        if name not in self.tensors:
            raise KeyError(f"no hook point {name!r} in this trace; valid names: trace.names()")
        return self.tensors[name]

    def names(self) -> list[str]:
        return list(self.tensors)

    def layers(self, suffix: str) -> list[Tensor]:
        return [self[f"blocks.{l}.{suffix}"] for l in range(self.n_layers)]

    def stack(self, what: str = "resid") -> Float[Tensor, "L1 B T D"]:
        if what != "resid":
            return torch.stack(self.layers(what))
        return torch.stack(self.layers("resid_pre") + [self["resid_final"]])


@dataclass
class ModelOutput:
    logits: Float[Tensor, "B T V"]
    loss: Tensor | None = None
    trace: Trace | None = None


class Block(nn.Module):
    """Pre-norm Transformer block: attention, then MLP, in three steps that :meth:`TinyGPT.forward` calls in order
    (so that a depth mixer can read between them): :meth:`project` (the residual input x (B, T, D) and the depth
    mixer's :class:`~vrs_edu.nn.depth_mixer.DepthRead`, with separate Q/K/V inputs for the routers, to q, k, v),
    :meth:`attend` (across tokens: ``attn_out`` (B, T, D) and the values v (B, H, T, Dh); layer 0's are V_1) and
    :meth:`feed_forward` (``mlp_out`` (B, T, D)). The stream adds what the block *writes*, attn_out + mlp_out (and,
    with ``layer_embed``, :meth:`layer_input`'s write).

    The production designs change parts, not the order: a KV-sharing layer (``kv_donor`` != its index) gets its
    donor's (k, v) in :meth:`project` and owns no ``k_proj``/``v_proj``; a value-embedding layer adds its gated
    token row to v there (``value_embed``); ``layer_input`` (Gemma 3n's per-layer input) writes after the MLP."""

    def __init__(self, cfg: TinyGPTConfig, layer: int):
        super().__init__()
        self.layer = layer
        self.svformer = cfg.value_residual == "svformer" and layer > 0
        self.kv_donor = layer if cfg.kv_share is None else cfg.kv_share[layer]   # CLA: whose K, V this layer reads
        self.x0 = (x0mod.X0Injection(cfg.x0_mode, cfg.d_model, cfg.vocab_size)
                   if layer in cfg.resolved_x0_layers() else None)
        owns_v = not self.svformer and (self.x0 is None or self.x0.owns_v_proj)
        self.attn = CausalSelfAttention(cfg.d_model, cfg.n_heads, has_v_proj=owns_v, qk_norm=cfg.qk_norm,
                                        k_eq_v=cfg.k_eq_v, has_kv_proj=self.kv_donor == layer, xsa=cfg.xsa)
        # nanochat's gate reads the first 32 channels of the layer's input (all of them in a narrower model)
        self.value_embed = (ValueEmbedding(cfg.vocab_size, cfg.n_heads, cfg.d_model // cfg.n_heads,
                                           gate_channels=min(32, cfg.d_model))
                            if layer in cfg.value_embed_layers() else None)
        self.value_residual = (vr.ValueResidual(cfg.value_residual, cfg.neutreno_lambda)
                               if layer > 0 and cfg.value_residual != "none" else None)
        self.mlp = MLP(cfg.d_model, cfg.mlp_ratio, cfg.mlp_hidden)
        self.per_layer_input = PerLayerInput(cfg.d_model, cfg.layer_embed) if cfg.layer_embed else None

    @property
    def shares_kv(self) -> bool:
        """Whether this layer attends over an earlier layer's K, V (and caches none of its own)."""
        return self.kv_donor != self.layer

    def project(self, x: Float[Tensor, "B T D"], read: DepthRead, *, x0: Float[Tensor, "B T D"],
                idx: Int[Tensor, "B T"], v_first: Float[Tensor, "B H T Dh"] | None, rope: RoPE,
                kv: tuple[Tensor, Tensor] | None = None, hook: Hook = no_hook
                ) -> tuple[Float[Tensor, "B H T Dh"], Float[Tensor, "B H T Dh"], Float[Tensor, "B H T Dh"]]:
        """Attention's inputs: q, k and v (B, H, T, Dh). x (B, T, D): the residual input; ``read.q/k/v``, when set,
        replace norm(x) as the projections' inputs; x0 (B, T, D); idx (B, T) token ids; v_first: V_1, None in
        layer 0; kv: the donor's (k, v) of a KV-sharing layer, else None."""
        xn = rms_norm(x)
        q_in, k_in, v_in = (xn if s is None else rms_norm(s) for s in (read.q, read.k, read.v))
        v = v_first if self.svformer else None  # SVFormer: no W_V, attend over V_1 (x0 is never on such a layer)
        if self.x0 is not None:                 # x0 into the projections' inputs, or the bank's values as v
            q_in, k_in, v_in, v = self.x0(q_in, k_in, v_in, x0, idx, self.attn.n_heads)
        q, k, v = self.attn.project(q_in, k_in, v_in, rope=rope, v=v, kv=kv, hook=hook.scoped("attn"))
        if self.value_embed is not None:        # nanochat: v + g ⊙ E_l[token], g read from the layer's input
            v = self.value_embed(v, v_in, idx)
        return q, k, v

    def attend(self, q: Float[Tensor, "B H T Dh"], k: Float[Tensor, "B H T Dh"], v: Float[Tensor, "B H T Dh"], *,
               v_first: Float[Tensor, "B H T Dh"] | None, hook: Hook = no_hook
               ) -> tuple[Float[Tensor, "B T D"], Float[Tensor, "B H T Dh"]]:
        """Across tokens: attention with this layer's value residual. Returns (attn_out (B, T, D), v)."""
        return self.attn.mix(q, k, v, v_first=v_first, value_residual=self.value_residual, hook=hook.scoped("attn"))

    def feed_forward(self, mlp_in: Float[Tensor, "B T D"], hook: Hook = no_hook) -> Float[Tensor, "B T D"]:
        """The MLP's write (B, T, D) from its input (x + attn_out in a plain block)."""
        return hook("mlp.out", self.mlp(rms_norm(mlp_in)))

    def layer_input(self, h: Float[Tensor, "B T D"], p_l: Float[Tensor, "B T P"],
                    hook: Hook = no_hook) -> Float[Tensor, "B T D"]:
        """Gemma 3n / 4's per-layer input: what this layer adds after its MLP (B, T, D), from the stream h (B, T, D)
        at that point and the token's own vector for this layer p_l (B, T, P)."""
        return hook("per_layer.out", self.per_layer_input.write(h, p_l))

    @torch.no_grad()
    def reset_parameters(self, init: SeededInit, out_std: float, x0_table: Tensor | None = None) -> None:
        """Attention and MLP (what they write into the stream from N(0, out_std²)), the x0 path and the value
        residual. A bank table starts as ``x0_table · W_Vᵀ`` with the W_V this layer would have had without the
        bank: drawn as ``attn.v_proj.weight``, the baseline's W_V of the same seed."""
        self.attn.reset_parameters(init.scoped("attn"), out_std)
        self.mlp.reset_parameters(init.scoped("mlp"), out_std)
        if self.x0 is not None:
            d = self.attn.o_proj.in_features
            w_v = init.normal("attn.v_proj.weight", (d, d)) if self.x0.mode == "bank" else None
            self.x0.reset_parameters(x0_table, w_v)
        if self.value_residual is not None:
            self.value_residual.reset_parameters()
        if self.value_embed is not None:   # nanochat: the table drawn like an embedding, the gate 0 (g = 2·σ(0) = 1)
            init.normal_(self, "value_embed.table.weight")
            self.value_embed.gate.weight.zero_()
        if self.per_layer_input is not None:   # Gemma's gate and projection drawn, its norm's gain 1
            init.normal_(self, "per_layer_input.gate.weight")
            init.normal_(self, "per_layer_input.proj.weight")
            self.per_layer_input.post_norm.weight.fill_(1.0)


class TinyGPT(nn.Module):
    """Decoder-only Transformer with RoPE, parameter-free RMSNorm, pre-norm blocks and an untied LM head.

    ``forward(idx, targets=None, trace=False, hooks=None)`` returns a :class:`ModelOutput`:
    logits (B, T, V), mean cross-entropy in nats when ``targets`` is given, and a :class:`Trace` when asked.

    Hook points: ``embed`` (the stream's first term: ``wte(idx)``, or its RMSNorm under the default
    ``stream_start``), ``x0`` (B, T, D); ``blocks.{l}.resid_pre`` (B, T, D); ``blocks.{l}.attn.{q_in, k_in,
    v_in, q, k, v, pattern, v_mix, z, out}``; ``blocks.{l}.mlp.out``; ``depth.{l}.weights`` (and
    ``depth.{l}.weights_{q,k,v,r}`` for the routers that give each stream its own depth mixture); ``resid_final``.
    With ``layer_embed``: ``per_layer`` (B, T, L, P) and ``blocks.{l}.per_layer.out`` (B, T, D); with mHC
    ``depth.{l}.attn.comb``, ``depth.{l}.mlp.comb`` (B, T, n, n). Under ``hyper_connections`` ``resid_pre`` is the
    streams collapsed for the block's attention, and ``resid_final`` for the LM head.

    Raises:
        ValueError: on an invalid config, token ids outside 0..V-1, a sequence longer than ``block_size``,
            targets of another shape than idx, or a hook naming a point that does not exist.
    """

    def __init__(self, cfg: TinyGPTConfig):
        super().__init__()
        self.cfg = cfg.validate()
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.rope = RoPE(cfg.d_model // cfg.n_heads, cfg.block_size)
        self.blocks = nn.ModuleList([Block(cfg, l) for l in range(cfg.n_layers)])
        # n residual streams take the depth mixer's place: they too decide what each sub-layer reads over depth
        self.depth = (HyperConnectionStreams(cfg.hc_kind, cfg.hyper_connections, cfg.n_layers, cfg.d_model)
                      if cfg.hyper_connections else
                      make_depth_mixer(cfg.depth_mixer, cfg.n_layers, cfg.d_model, cfg.depth_window))
        self.per_layer = (PerLayerEmbeddings(cfg.vocab_size, cfg.n_layers, cfg.d_model, cfg.layer_embed)
                          if cfg.layer_embed else None)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        # The random-x0 control's fixed table: rebuilt from the seed, so it is not stored in checkpoints.
        self.register_buffer("x0_random", x0mod.random_x0_table(cfg.vocab_size, cfg.d_model, cfg.seed)
                             if cfg.x0_source == "random" else None, persistent=False)
        self.reset_parameters()
        if cfg.tie_embeddings:
            self.lm_head.weight = self.wte.weight

    @torch.no_grad()
    def reset_parameters(self) -> None:
        """GPT-2 style init, every module initialising its own parameters (``reset_parameters``).

        Random weights come from :class:`~vrs_edu.nn.layers.SeededInit`: each parameter from its own generator,
        seeded by (``cfg.seed``, parameter name), so that a variant and the baseline built with the same seed share
        *identical* values for every parameter they have in common (a paired comparison then differs only in the
        variant itself). N(0, 0.02²), and N(0, (0.02/sqrt(2L))²) for the projections that write into the residual
        stream; coefficients take their documented initial values; the depth mixers start as (or, ELC-BERT and
        Attention Residuals, as a uniform average over) the standard residual.
        """
        init = SeededInit(self.cfg.seed)
        init.normal_(self, "wte.weight")
        x0_table = rms_norm(self.wte.weight) if self.cfg.x0_mode == "bank" else None  # a bank starts as x0 · W_Vᵀ
        for l, block in enumerate(self.blocks):
            block.reset_parameters(init.scoped(f"blocks.{l}"), residual_std(self.cfg.n_layers), x0_table)
        self.depth.reset_parameters(init.scoped("depth"))
        if self.per_layer is not None:   # Gemma 3n's packed table and projection drawn, the norm's gain 1
            init.normal_(self, "per_layer.embed.weight")
            init.normal_(self, "per_layer.model_proj.weight")
            self.per_layer.proj_norm.weight.fill_(1.0)
        if self.lm_head.weight is not self.wte.weight:  # tied embeddings: the head is the embedding
            init.normal_(self, "lm_head.weight")

    def forward(self, idx: Int[Tensor, "B T"], targets: Int[Tensor, "B T"] | None = None, *,
                trace: bool = False, hooks: dict | None = None) -> ModelOutput:
        self._check_input(idx, targets)
        hook = HookPoints(hooks, record=trace)
        # "embed" is what the embedding puts into the stream: wte(idx), or RMSNorm of it (``stream_start``), so that
        # the stream is always embed + Σ block writes. x0 = RMSNorm(embed) is the same token identity either way.
        emb = hook("embed", STREAM_STARTS[self.cfg.stream_start](self.wte(idx)))
        # x0 = RMSNorm(wte(idx)): context-free token identity (positions enter only through RoPE), or a control.
        # Under the RMSNorm start that is ``embed`` itself (normalising twice would differ by RMSNorm's eps).
        token = emb if self.cfg.stream_start == "rmsnorm" else rms_norm(emb)
        x0 = hook("x0", x0mod.x0_from_source(self.cfg.x0_source, token, idx, self.x0_random))
        states, outputs = [emb], [emb]  # X_0..X_l and y_0..y_l (the vocabulary of vrs_edu.nn.depth)
        kv_cache: list[tuple[Tensor, Tensor]] = []   # (k, v) per layer so far, for Depth-Attention's read of V
        layer_kv: list[tuple[Tensor, Tensor]] = []   # each layer's (k, v) as cached, for the KV-sharing layers
        # Gemma 3n's per-layer inputs: one P-wide vector per token and layer, from the token and its embedding
        per_layer = None if self.per_layer is None else hook("per_layer", self.per_layer(idx, emb))
        v_first = None
        for l, block in enumerate(self.blocks):
            # With the plain residual mixer, read.resid is the last state X_l and read.q/k/v are None: this loop is
            # ``x = x + block(x)``. Other mixers read x (and the routers Q, K, V's inputs) from earlier layers.
            read = self.depth(l, states, outputs, hook)
            x = hook(f"blocks.{l}.resid_pre", read.resid)
            h = hook.scoped(f"blocks.{l}")
            donor_kv = layer_kv[block.kv_donor] if block.shares_kv else None   # CLA: an earlier layer's K, V
            q, k, v = block.project(x, read, x0=x0, idx=idx, v_first=v_first, rope=self.rope, kv=donor_kv, hook=h)
            if self.depth.mixes_values:   # Depth-Attention: this position's V read over depth, before the sequence
                v = self.depth.read_values(l, q, k, h("attn.v_self", v), cache=kv_cache, hook=hook)
            a, v = block.attend(q, k, v, v_first=v_first, hook=h)
            layer_kv.append((k, v))
            # the MLP reads x + attn_out; a sub-layer mixer reads its input over depth (attention outputs apart)
            mlp_in = self.depth.mlp_input(l, outputs, a, hook=hook) if self.depth.sublayers else x + a
            m = block.feed_forward(mlp_in, h)
            if l == 0:
                v_first = v   # V_1: the first layer's values, for value residuals
            y = a + m
            if per_layer is not None:     # Gemma 3n / 4: the token's vector for this layer, gated by the stream
                y = y + block.layer_input(x + y, per_layer[:, :, l], h)
            if self.depth.sublayers:
                outputs.extend((a, m))   # attention and MLP outputs as separate sources
            else:
                outputs.append(y)
            states.append(x + y)
        final = hook("resid_final", self.depth(self.cfg.n_layers, states, outputs, hook).resid)
        logits = self.lm_head(rms_norm(final))
        hook.check_all_used()
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return ModelOutput(logits, loss, Trace(hook.store, self.cfg.n_layers) if trace else None)

    def _check_input(self, idx: Tensor, targets: Tensor | None) -> None:
        if idx.dim() != 2:
            raise ValueError(f"idx must be (B, T) token ids, got shape {tuple(idx.shape)}")
        if idx.size(1) > self.cfg.block_size:
            raise ValueError(f"sequence length T={idx.size(1)} exceeds block_size={self.cfg.block_size}")
        if idx.numel() and (idx.min() < 0 or idx.max() >= self.cfg.vocab_size):
            raise ValueError(f"token ids must be in 0..{self.cfg.vocab_size - 1}, "
                             f"got range {int(idx.min())}..{int(idx.max())}")
        if targets is not None and targets.shape != idx.shape:
            raise ValueError(f"targets must have the shape of idx {tuple(idx.shape)}, got {tuple(targets.shape)}")

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def coefficients(self) -> dict[str, Tensor]:
        """Every learnable coefficient, by parameter name in parameter order: what the x0 paths, the value residuals
        and the depth mixer declare in their ``coefficients()`` (scalars and mixing weights)."""
        owners = [m for b in self.blocks for m in (b.x0, b.value_residual) if m is not None] + [self.depth]
        # (hyper-connections sit in the depth mixer's place: their mixing weights are listed there)
        declared = {id(p) for m in owners for p in m.coefficients()}
        return {n: p for n, p in self.named_parameters() if id(p) in declared}

    def x0_paths(self) -> list[x0mod.X0Injection]:
        """The x0 injections of the x0 layers, in layer order (empty without x0)."""
        return [b.x0 for b in self.blocks if b.x0 is not None]


def _identity(x: Tensor) -> Tensor:
    return x


# The start of the residual stream, by name. "rmsnorm" (default, every recipe): x = RMSNorm(wte(idx)), as nanochat
# (``x = norm(self.transformer.wte(idx))``) and modded-nanogpt. "embedding": the raw N(0, 0.02) embedding, as GPT-2;
# after a short run its RMS stays ~0.05 while the blocks write ~1, so token identity is nearly silent in the stream,
# and shortcuts that re-deliver it (value residual, x0 into V) then look better than they are (chapter 03).
STREAM_STARTS: dict[StreamStart, Callable[[Tensor], Tensor]] = {"rmsnorm": rms_norm, "embedding": _identity}


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _one_of(name: str, value, allowed: tuple) -> None:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


def head_counts(d_model: int) -> list[int]:
    """The head counts (up to 64) that split ``d_model`` into whole heads of even width (RoPE)."""
    return [h for h in range(1, min(d_model, 64) + 1) if d_model % h == 0 and (d_model // h) % 2 == 0]


def refuse_dead_parts(cfg: TinyGPTConfig) -> None:
    """Refuse the combinations that would build parts nothing reads (parameters that never get a gradient, or a
    setting that changes nothing), naming both settings. A test trains every value_residual × x0_mode ×
    depth_mixer combination and checks that every parameter of an accepted one gets a gradient.

    Raises:
        ValueError: SVFormer with x0 on a layer >= 1 (those layers attend over V_1: their x0 path to V, or their
            table, is never read); SVFormer with a router depth mixer (its V inputs of layers >= 1 are never
            read); a router with an x0 mode that replaces V's input (``substitute_v``, ``bank``: the router's V
            stream at those layers is never read); a value residual with a single layer (there is no later layer
            to re-read V_1); ShortSWA over a window of one state (softmax over one score is 1 whatever q and k
            are: q_proj and k_proj would never learn); Depth-Attention with SVFormer (every layer's values are
            V_1, so a mixture of them is V_1: the setting changes nothing) or with a single layer (no earlier layer
            to read). ``x0_layers`` with ``x0_mode='none'`` builds nothing and is accepted: it is the baseline of a
            paired comparison that shares every other setting.
    """
    late_x0 = [l for l in cfg.resolved_x0_layers() if l > 0]
    if cfg.value_residual == "svformer" and late_x0:
        raise ValueError(f"value_residual='svformer' with x0_mode={cfg.x0_mode!r} on layers {late_x0}: SVFormer "
                         f"layers >= 1 attend over V_1, so their x0 parameters for V would never be used; put x0 on "
                         f"layer 0 only (x0_layers=(0,)) or choose another value_residual")
    if cfg.value_residual == "svformer" and cfg.depth_mixer in ROUTERS:
        raise ValueError(f"value_residual='svformer' with depth_mixer={cfg.depth_mixer!r}: the router builds a V "
                         f"input for every layer, but SVFormer layers >= 1 attend over V_1 and never read it")
    if cfg.depth_mixer in ROUTERS and cfg.x0_mode in ("substitute_v", "bank"):
        raise ValueError(f"depth_mixer={cfg.depth_mixer!r} with x0_mode={cfg.x0_mode!r}: the router's V input of "
                         f"layers {list(cfg.resolved_x0_layers())} is never read (x0 or the table replaces it)")
    if cfg.value_residual != "none" and cfg.n_layers < 2:
        raise ValueError(f"value_residual={cfg.value_residual!r} with n_layers={cfg.n_layers}: a value residual "
                         f"mixes V_1 into layers 2..L, and there are none")
    if cfg.depth_mixer == "depth_attention" and cfg.value_residual == "svformer":
        raise ValueError("value_residual='svformer' with depth_mixer='depth_attention': SVFormer layers attend over "
                         "V_1, so Depth-Attention's mixture of the cached values is V_1 again and changes nothing")
    if cfg.depth_mixer == "depth_attention" and cfg.n_layers < 2:
        raise ValueError(f"depth_mixer='depth_attention' with n_layers={cfg.n_layers}: layer 0 has no earlier layer "
                         f"whose values it could read")
    if cfg.depth_mixer == "shortswa" and cfg.depth_window == 1:
        raise ValueError("depth_mixer='shortswa' with depth_window=1: a softmax over one state is 1 whatever q and k "
                         "are, so q_proj and k_proj would never learn; use depth_window >= 2")


def check_kv_share(donors, n_layers: int) -> None:
    """Refuse a ``kv_share`` that is not a plan of donors: None, or one entry per layer, each an earlier (or the
    same) layer that computes its own K, V (``donors[d] == d``), with at least one layer sharing. CLA's plan of
    factor 2 is ``vrs_edu.nn.kv_sharing.cla_donors(n_layers, 2)``, e.g. (0, 0, 2, 2) for four layers.

    Raises:
        ValueError: naming ``kv_share``, what it allows and what it got.
    """
    if donors is None:
        return
    ok = (isinstance(donors, (tuple, list)) and len(donors) == n_layers and all(_is_int(d) for d in donors)
          and all(0 <= d <= l and donors[d] == d for l, d in enumerate(donors)))
    if not ok:
        raise ValueError(f"kv_share must be None or one donor layer per layer ({n_layers} entries), each an earlier "
                         f"layer that computes its own K, V (donors[d] == d), got {donors!r}")
    if all(d == l for l, d in enumerate(donors)):
        raise ValueError(f"kv_share={donors!r} lets no layer share (every layer is its own donor): use None")


def refuse_design_conflicts(cfg: TinyGPTConfig) -> None:
    """Refuse the production designs (chapter 06) in combinations that cannot work or build parts nothing reads,
    naming both settings.

    Raises:
        ValueError: ``kv_share`` with a value residual (it mixes each layer's own V with V_1; a sharing layer has
            none), with Depth-Attention or a router (their per-layer V or K, V inputs of the sharing layers are
            never read), with x0 or a value embedding on a sharing layer (no K, V projection to feed); ``k_eq_v``
            with an x0 mode or a router (V has no input of its own: it is the key projection); ``layer_embed``
            or ``hyper_connections`` with another depth mixer than ``residual`` (the per-layer input is written
            after the MLP into the plain stream; the streams take the depth mixer's place).
    """
    sharers = set(cfg.sharing_layers())
    if sharers and cfg.value_residual != "none":
        raise ValueError(f"kv_share with value_residual={cfg.value_residual!r}: a value residual mixes each layer's "
                         f"own V with V_1, and the sharing layers {sorted(sharers)} have no V of their own")
    if sharers and (cfg.depth_mixer in ROUTERS or cfg.depth_mixer == "depth_attention"):
        raise ValueError(f"kv_share with depth_mixer={cfg.depth_mixer!r}: the mixer reads or writes the K, V of "
                         f"every layer, and the sharing layers {sorted(sharers)} compute none")
    for name, layers in (("x0_mode", cfg.resolved_x0_layers()), ("value_embed", cfg.value_embed_layers())):
        if sharers & set(layers):
            raise ValueError(f"kv_share with {name}={getattr(cfg, name)!r} on the sharing layers "
                             f"{sorted(sharers & set(layers))}: those layers compute no K, V to feed")
    if cfg.k_eq_v and (cfg.x0_mode != "none" or cfg.depth_mixer in ROUTERS):
        raise ValueError(f"k_eq_v with x0_mode={cfg.x0_mode!r}, depth_mixer={cfg.depth_mixer!r}: under K = V the "
                         f"values are the key projection, so an x0 path or a router stream into V is never read")
    for name in ("layer_embed", "hyper_connections"):
        if getattr(cfg, name) and cfg.depth_mixer != "residual":
            raise ValueError(f"{name}={getattr(cfg, name)!r} with depth_mixer={cfg.depth_mixer!r}: it is built "
                             f"for the plain residual stream (depth_mixer='residual')")
    if cfg.layer_embed and cfg.hyper_connections:
        raise ValueError(f"layer_embed={cfg.layer_embed} with hyper_connections={cfg.hyper_connections}: the "
                         f"per-layer input is written into the plain residual stream")
