"""MiniLlama: a minimal Llama-style decoder that loads real pretrained weights (a GGUF file) and exposes every tensor.

Chapter 08 asks the course's questions of a real, deep decoder: SmolLM2-135M-Instruct (30 layers, D = 576, 9 query
heads sharing 3 key/value heads, 49,152-token BPE). This file is the whole model, written in the style of
:mod:`vrs_edu.nn.model` (TinyGPT) so the two read side by side. The name is the architecture's: the Llama family
(Touvron et al., arXiv 2302.13971), which Hugging Face implements as ``LlamaForCausalLM``. What differs from TinyGPT:

* **RMSNorm with a learned gain** ``g ⊙ x / sqrt(mean(x²) + eps)`` (Zhang & Sennrich, arXiv 1910.07467) before each
  sub-layer and before the head; TinyGPT's norms have no gain.
* **Grouped-query attention** (Ainslie et al., arXiv 2305.13245): 9 query heads, but only 3 key and 3 value heads;
  query head h reads key/value head ``h // 3``. The KV cache holds 3 heads per layer, not 9.
* **SwiGLU MLP** ``W_down (SiLU(W_gate x) ⊙ W_up x)`` (Shazeer, arXiv 2002.05202) instead of GELU.
* RoPE with base 100,000 (TinyGPT: 10,000), the embedding **tied** to the output head, no biases anywhere.
* The stream starts at the raw token embedding (GPT-2 style), not at its RMSNorm: ``x0 = embed`` is the token's
  identity, no position, no context, and each layer reads ``norm_l(x_l)`` with its own gain.

Shapes: B batch, T sequence, D = d_model, H = n_heads, Hkv = n_kv_heads, Dh = D / H, L = n_layers, V = vocab_size.

Hook points (the mechanism of TinyGPT, :class:`vrs_edu.nn.hooks.HookPoints`): ``embed`` (B, T, D), the stream at depth
0 (= ``blocks.0.resid_pre``); ``blocks.{l}.resid_pre`` (B, T, D); ``blocks.{l}.attn.{q_in, k_in, v_in}`` (B, T, D),
the normalised inputs of the three projections; ``blocks.{l}.attn.q_pre`` (B, H, T, Dh) and ``k_pre`` (B, Hkv, T, Dh),
the projections' outputs before RoPE (a per-token table of them is context-free); ``blocks.{l}.attn.q`` (B, H, T, Dh)
and ``k`` (B, Hkv, T, Dh) after RoPE; ``blocks.{l}.attn.v`` (B, Hkv, T, Dh); ``blocks.{l}.attn.pattern`` (B, H, T, T);
``blocks.{l}.attn.v_mix`` (B, Hkv, T, Dh), the values the pattern averages (= v: this model has no value residual;
the point is there so that chapter 02's value swap applies unchanged); ``blocks.{l}.attn.z`` (B, H, T, Dh);
``blocks.{l}.attn.out`` (B, T, D); ``blocks.{l}.resid_mid`` (B, T, D); ``blocks.{l}.mlp.out`` (B, T, D);
``resid_final`` (B, T, D), before the final norm. ``pattern`` and ``v_mix`` exist on the explicit path only, as in
TinyGPT: a layer takes it when it is traced or its ``pattern`` or ``v_mix`` is patched (:func:`listens`); otherwise
the fused kernel computes z from q, k and v, patched or not (a patch of q, k or v needs no pattern).

Precision: the model runs in the dtype of its parameters (``model.to(torch.bfloat16)`` for speed); the norms,
the softmax and the pattern are computed in float32 whatever that dtype is, as Hugging Face's implementation does,
and RoPE's tables come from float64 angles (:class:`~vrs_edu.nn.layers.RoPE`).

Weights: :meth:`MiniLlama.from_gguf` reads a GGUF file (llama.cpp's format) with ggml's own reader, the ``gguf``
package, and dequantises every tensor to float32 (:func:`gguf_state_dict`). This module does not import
``transformers``: ``tests/test_llama_parity.py`` checks it against ``transformers.LlamaForCausalLM`` instead.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import torch
import torch.nn.functional as F
from einops import rearrange
from jaxtyping import Float, Int
from torch import Tensor, nn

from vrs_edu.nn.attention import attend, attention_pattern
from vrs_edu.nn.hooks import Hook, HookPoints, no_hook
from vrs_edu.nn.layers import RMSNorm, RoPE  # RMSNorm with a learned gain
from vrs_edu.nn.model import ModelOutput, Trace


@dataclass
class LlamaConfig:
    """The shape of a Llama-style decoder. Defaults are SmolLM2-135M's."""

    vocab_size: int = 49152
    d_model: int = 576
    n_layers: int = 30
    n_heads: int = 9
    n_kv_heads: int = 3
    d_mlp: int = 1536
    max_positions: int = 8192
    rope_base: float = 100_000.0
    norm_eps: float = 9.999999747378752e-06   # 1e-5 as the GGUF file stores it (float32)

    # our field -> the GGUF metadata key (after "<architecture>.")
    GGUF_KEYS = {"d_model": "embedding_length", "n_layers": "block_count", "n_heads": "attention.head_count",
                 "n_kv_heads": "attention.head_count_kv", "d_mlp": "feed_forward_length",
                 "max_positions": "context_length", "rope_base": "rope.freq_base",
                 "norm_eps": "attention.layer_norm_rms_epsilon"}

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @classmethod
    def from_gguf_metadata(cls, meta: dict) -> "LlamaConfig":
        """Read a GGUF file's metadata (``{key: value}``). Raises ValueError for anything this minimal model does
        not implement (another architecture, a rotary dimension other than the head width) or a missing key."""
        arch = meta.get("general.architecture")
        if arch != "llama":
            raise ValueError(f"general.architecture must be 'llama', got {arch!r}")
        missing = [f"llama.{k}" for k in cls.GGUF_KEYS.values() if f"llama.{k}" not in meta]
        if missing:
            raise ValueError(f"GGUF metadata lacks {missing}")
        kw = {ours: meta[f"llama.{theirs}"] for ours, theirs in cls.GGUF_KEYS.items()}
        kw = {k: float(v) if k in ("rope_base", "norm_eps") else int(v) for k, v in kw.items()}
        vocab = meta.get("llama.vocab_size", len(meta.get("tokenizer.ggml.tokens", ())))
        cfg = cls(vocab_size=int(vocab), **kw).validate()
        rot = meta.get("llama.rope.dimension_count", cfg.head_dim)
        if int(rot) != cfg.head_dim:
            raise ValueError(f"only full-width RoPE is implemented: rope.dimension_count={rot}, "
                             f"head dim {cfg.head_dim}")
        return cfg

    def validate(self) -> "LlamaConfig":
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in ("rope_base", "norm_eps"):
                if not v > 0:
                    raise ValueError(f"{f.name} must be > 0, got {v!r}")
            elif not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{f.name} must be a positive integer, got {v!r}")
        if self.d_model % self.n_heads or self.head_dim % 2:
            raise ValueError(f"d_model={self.d_model} must split into n_heads={self.n_heads} heads of even width")
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_heads={self.n_heads} must be a multiple of n_kv_heads={self.n_kv_heads}")
        return self


def repeat_kv(x: Float[Tensor, "B Hkv T Dh"], n_rep: int) -> Float[Tensor, "B H T Dh"]:
    """Each key/value head serves ``n_rep`` consecutive query heads: head h reads kv head ``h // n_rep``."""
    return x if n_rep == 1 else x.repeat_interleave(n_rep, dim=1)


def listens(hook: Hook, points: tuple[str, ...] | None = None) -> bool:
    """Whether anyone reads or patches a point of the module ``hook`` is scoped to: a trace, or a hook whose name
    starts with the scope's prefix (with ``points``: a hook on one of those points of the module). Unlike
    ``hook.active`` (anyone listening anywhere) it lets a layer nobody patches take the fused kernel while another
    layer is patched, so that a run patching layer 20 costs what a plain run costs (the two paths agree up to float
    rounding; the recipe checks what that rounding costs)."""
    root, prefix = getattr(hook, "root", None), getattr(hook, "prefix", None)
    if root is None or prefix is None:          # HookPoints itself, or no_hook
        return getattr(hook, "active", True)
    if root.record:
        return True
    if points is None:
        return any(name.startswith(prefix + ".") for name in root.hooks)
    return any(f"{prefix}.{p}" in root.hooks for p in points)


EXPLICIT_POINTS = ("pattern", "v_mix")   # the attention points only the explicit path has


class LlamaAttention(nn.Module):
    """Causal grouped-query attention with RoPE and separate inputs for Q, K and V.

    ``pattern = softmax(q kᵀ / sqrt(Dh) + causal mask)`` (B, H, T, T), with each kv head's keys shared by its group
    of query heads; ``z = pattern @ v`` (B, H, T, Dh); ``out = W_O · concat_heads(z)``. Parameters ``q_proj``
    (D -> H·Dh), ``k_proj`` and ``v_proj`` (D -> Hkv·Dh), ``o_proj`` (H·Dh -> D), no biases.
    """

    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, d_model // n_heads
        self.q_proj = nn.Linear(d_model, n_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * self.head_dim, d_model, bias=False)

    def forward(self, q_in: Float[Tensor, "B T D"], k_in: Float[Tensor, "B T D"], v_in: Float[Tensor, "B T D"], *,
                rope: RoPE, hook: Hook = no_hook) -> Float[Tensor, "B T D"]:
        q_in, k_in, v_in = hook("q_in", q_in), hook("k_in", k_in), hook("v_in", v_in)
        q = hook("q_pre", rearrange(self.q_proj(q_in), "b t (h dh) -> b h t dh", h=self.n_heads))
        k = hook("k_pre", rearrange(self.k_proj(k_in), "b t (h dh) -> b h t dh", h=self.n_kv_heads))
        v = hook("v", rearrange(self.v_proj(v_in), "b t (h dh) -> b h t dh", h=self.n_kv_heads))
        q, k = hook("q", rope(q)), hook("k", rope(k))   # positions enter through q and k only
        n_rep = self.n_heads // self.n_kv_heads
        if not listens(hook, EXPLICIT_POINTS):   # no trace, no pattern patched: the fused kernel, GQA without copies
            z = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=n_rep > 1)
        else:   # the pattern in float32 whatever the model's dtype (a softmax in bfloat16 would round it)
            pattern = hook("pattern", attention_pattern(q.float(), repeat_kv(k, n_rep).float()))
            v_mix = hook("v_mix", v)
            z = attend(pattern, repeat_kv(v_mix, n_rep).float()).to(q.dtype)
        z = hook("z", z)
        return hook("out", self.o_proj(rearrange(z, "b h t dh -> b t (h dh)")))


class SwiGLU(nn.Module):
    """``W_down (SiLU(W_gate x) ⊙ W_up x)``, D -> d_mlp -> D (arXiv 2002.05202, eq. 6)."""

    def __init__(self, d_model: int, d_mlp: int):
        super().__init__()
        self.gate = nn.Linear(d_model, d_mlp, bias=False)
        self.up = nn.Linear(d_model, d_mlp, bias=False)
        self.down = nn.Linear(d_mlp, d_model, bias=False)

    def forward(self, x: Float[Tensor, "B T D"]) -> Float[Tensor, "B T D"]:
        return self.down(F.silu(self.gate(x)) * self.up(x))


class LlamaBlock(nn.Module):
    """Pre-norm decoder layer: ``h = x + attn(norm(x))``, then ``h + mlp(norm(h))``; each norm has its own gain."""

    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.attn_norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.attn = LlamaAttention(cfg.d_model, cfg.n_heads, cfg.n_kv_heads)
        self.mlp_norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.mlp = SwiGLU(cfg.d_model, cfg.d_mlp)

    def forward(self, x: Float[Tensor, "B T D"], *, rope: RoPE, hook: Hook = no_hook) -> Float[Tensor, "B T D"]:
        h = self.attn_norm(x)
        x = hook("resid_mid", x + self.attn(h, h, h, rope=rope, hook=hook.scoped("attn")))
        return x + hook("mlp.out", self.mlp(self.mlp_norm(x)))


class MiniLlama(nn.Module):
    """A Llama-style decoder whose intermediate tensors can be read or replaced.

    ``forward(idx, targets=None, *, trace=False, hooks=None)`` returns a :class:`~vrs_edu.nn.model.ModelOutput`:
    logits (B, T, V), the mean next-token cross-entropy in nats when ``targets`` (B, T) are given, and a
    :class:`~vrs_edu.nn.model.Trace` when asked (hook names in the module docstring). ``resume`` runs the layers
    from one onwards, starting from a recorded stream state.

    Raises:
        ValueError: idx not (B, T) integer ids, ids outside 0..V-1, T > max_positions, targets of another shape, or a
            hook naming a point that does not exist.
    """

    def __init__(self, cfg: LlamaConfig | None = None):
        super().__init__()
        self.cfg = cfg = (cfg or LlamaConfig()).validate()
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.rope = RoPE(cfg.head_dim, cfg.max_positions, cfg.rope_base)
        self.blocks = nn.ModuleList([LlamaBlock(cfg) for _ in range(cfg.n_layers)])
        self.norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.tok_emb.weight   # tied: the head reads with the embedding's own rows

    def forward(self, idx: Int[Tensor, "B T"], targets: Int[Tensor, "B T"] | None = None, *,
                trace: bool = False, hooks: dict | None = None) -> ModelOutput:
        self._check_input(idx, targets)
        hook = HookPoints(hooks, record=trace)
        x = hook("embed", self.tok_emb(idx))        # x0: the token's identity, the stream at depth 0
        return self._layers(x, 0, targets, hook, trace)

    def resume(self, resid_pre: Float[Tensor, "B T D"], start_layer: int, targets: Int[Tensor, "B T"] | None = None,
               *, trace: bool = False, hooks: dict | None = None) -> ModelOutput:
        """Run only layers ``start_layer..L-1`` and the head, from the stream state ``resid_pre`` (B, T, D) that a
        traced run recorded at ``blocks.{start_layer}.resid_pre``: the same output as the full forward pass with the
        same hooks on those layers, without recomputing the layers below (an experiment that patches layer 20 runs
        10 layers, not 30). Raises ValueError on a layer outside 0..L-1 or a state of the wrong shape."""
        if not 0 <= start_layer < self.cfg.n_layers:
            raise ValueError(f"start_layer must be in 0..{self.cfg.n_layers - 1}, got {start_layer}")
        if resid_pre.dim() != 3 or resid_pre.size(-1) != self.cfg.d_model:
            raise ValueError(f"resid_pre must be (B, T, {self.cfg.d_model}), got {tuple(resid_pre.shape)}")
        if targets is not None and targets.shape != resid_pre.shape[:2]:
            raise ValueError(f"targets must be (B, T) = {tuple(resid_pre.shape[:2])}, got {tuple(targets.shape)}")
        return self._layers(resid_pre, start_layer, targets, HookPoints(hooks, record=trace), trace)

    def _layers(self, x: Tensor, start: int, targets: Tensor | None, hook: HookPoints, trace: bool) -> ModelOutput:
        for l in range(start, self.cfg.n_layers):
            x = hook(f"blocks.{l}.resid_pre", x)
            x = self.blocks[l](x, rope=self.rope, hook=hook.scoped(f"blocks.{l}"))
        x = hook("resid_final", x)
        logits = self.lm_head(self.norm(x))
        hook.check_all_used()
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten())
        return ModelOutput(logits, loss, Trace(hook.store, self.cfg.n_layers) if trace else None)

    def _check_input(self, idx: Tensor, targets: Tensor | None) -> None:
        if idx.dim() != 2 or idx.dtype not in (torch.int32, torch.int64):
            raise ValueError(f"idx must be (B, T) integer token ids, got {idx.dtype} of shape {tuple(idx.shape)}")
        if idx.size(1) > self.cfg.max_positions:
            raise ValueError(f"sequence length T={idx.size(1)} exceeds max_positions={self.cfg.max_positions}")
        if idx.numel() and (idx.min() < 0 or idx.max() >= self.cfg.vocab_size):
            raise ValueError(f"token ids must be in 0..{self.cfg.vocab_size - 1}, "
                             f"got range {int(idx.min())}..{int(idx.max())}")
        if targets is not None and targets.shape != idx.shape:
            raise ValueError(f"targets must have the shape of idx {tuple(idx.shape)}, got {tuple(targets.shape)}")

    def num_params(self) -> int:
        """Parameters, the tied embedding/head counted once."""
        return sum(p.numel() for p in self.parameters())

    # -- loading real weights ---------------------------------------------------------------------------------

    @classmethod
    def from_gguf(cls, path: str | Path) -> "MiniLlama":
        """Load a Llama-architecture GGUF file, every tensor dequantised to float32; returns the model in eval mode.

        Raises:
            FileNotFoundError: the file does not exist.
            ValueError: the file is not a plain Llama (the message says what differs), or a tensor is missing, left
                over or of the wrong shape (the message names them).
        """
        import gguf

        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"{path} does not exist")
        reader = gguf.GGUFReader(str(path))
        model = cls(LlamaConfig.from_gguf_metadata(gguf_metadata(reader)))
        model.load_gguf_state_dict(gguf_state_dict(reader, model.cfg))
        return model.eval()

    @torch.no_grad()
    def load_gguf_state_dict(self, sd: dict[str, Tensor]) -> None:
        """Copy GGUF tensors (llama.cpp's names, :func:`gguf_name`; Q and K already un-permuted) into this model.
        Raises ValueError naming every tensor that is missing, left over or of the wrong shape."""
        problems, used = [], set()
        for name, p in self.named_parameters():   # the tied head is the embedding: named once
            key = gguf_name(name)
            if key not in sd:
                problems.append(f"missing {key}")
            elif tuple(sd[key].shape) != tuple(p.shape):
                problems.append(f"{key}: shape {tuple(sd[key].shape)}, expected {tuple(p.shape)}")
            else:
                p.copy_(sd[key])
            used.add(key)
        problems += [f"unexpected {k}" for k in sorted(set(sd) - used)]
        if problems:
            raise ValueError("GGUF tensors do not match MiniLlama: " + "; ".join(problems[:10]))


# Our parameter names -> llama.cpp's GGUF tensor names.
_GGUF_NAMES = {"attn_norm.weight": "attn_norm.weight", "attn.q_proj.weight": "attn_q.weight",
               "attn.k_proj.weight": "attn_k.weight", "attn.v_proj.weight": "attn_v.weight",
               "attn.o_proj.weight": "attn_output.weight", "mlp_norm.weight": "ffn_norm.weight",
               "mlp.gate.weight": "ffn_gate.weight", "mlp.up.weight": "ffn_up.weight",
               "mlp.down.weight": "ffn_down.weight"}


def gguf_name(name: str) -> str:
    """``blocks.3.attn.q_proj.weight`` -> ``blk.3.attn_q.weight``; ``tok_emb.weight`` -> ``token_embd.weight``;
    ``norm.weight`` -> ``output_norm.weight``. Raises ValueError for a name with no GGUF counterpart."""
    if name == "tok_emb.weight":
        return "token_embd.weight"
    if name == "norm.weight":
        return "output_norm.weight"
    if name.startswith("blocks."):
        _, l, rest = name.split(".", 2)
        if rest in _GGUF_NAMES:
            return f"blk.{l}.{_GGUF_NAMES[rest]}"
    raise ValueError(f"no GGUF name known for parameter {name!r}")


def gguf_metadata(reader) -> dict:
    """The GGUF file's metadata as ``{key: value}`` (scalars and strings; arrays as lists), from ``gguf``'s reader."""
    return {key: field.contents() for key, field in reader.fields.items()}


def unpermute_rotary(w: Tensor, n_heads: int) -> Tensor:
    """Undo llama.cpp's reordering of a Q or K weight (rows = heads × Dh).

    llama.cpp rotates *adjacent* pairs of dimensions (2i, 2i+1); Hugging Face's Llama (and this model) rotates the
    two halves (i, i + Dh/2). When converting to GGUF, llama.cpp reorders each head's rows so that its rotation acts
    on the same pairs (``convert_hf_to_gguf.py``, ``LlamaModel.permute``): row ``2i + j`` of the GGUF head is row
    ``j·Dh/2 + i`` of the original. This is the inverse, as ``transformers``' GGUF loader applies it.
    """
    half = w.shape[0] // n_heads // 2
    return w.reshape(n_heads, half, 2, *w.shape[1:]).transpose(1, 2).reshape(w.shape)


def gguf_state_dict(reader, cfg: LlamaConfig) -> dict[str, Tensor]:
    """Every tensor of the file, dequantised to float32 by ``gguf.dequantize`` (Q8_0, Q4_1, ... -> float32) in
    PyTorch's (out, in) layout; the Q and K weights un-permuted (:func:`unpermute_rotary`)."""
    import gguf

    out = {}
    for t in reader.tensors:
        w = torch.from_numpy(gguf.dequantize(t.data, t.tensor_type).copy())
        if ".attn_q." in t.name:
            w = unpermute_rotary(w, cfg.n_heads)
        elif ".attn_k." in t.name:
            w = unpermute_rotary(w, cfg.n_kv_heads)
        out[t.name] = w
    return out
