"""MiniBert: a minimal post-LN BERT encoder that loads real pretrained weights and exposes every tensor.

Chapter 07 asks the course's questions of a model nobody here trained: all-MiniLM-L6-v2 (6 layers, D = 384,
12 heads, a BERT encoder fine-tuned for sentence embeddings). This file is the whole model, written in the same
style as :mod:`vrs_edu.nn.model` (TinyGPT) so the two read side by side. What differs from TinyGPT:

* **Encoder, not decoder**: no causal mask; every token attends to every (non-padding) token of the sentence.
* **Post-LN**: each sub-layer's output is *added* to the stream and then the *sum* is normalised,
  ``h = LayerNorm(h + sublayer(h))`` (Devlin et al., arXiv 1810.04805; Vaswani et al., arXiv 1706.03762 §3.1).
  TinyGPT is pre-norm (``h = h + sublayer(norm(h))``): its stream is a plain running sum, BERT's is re-normalised
  twice per layer, so no earlier state survives unscaled.
* **Absolute positions** are added to the token embedding before the first LayerNorm, so the stream carries position
  from depth 0 on (TinyGPT's RoPE puts positions into q and k only).
* LayerNorm with a learned gain and bias, biases on every linear map, exact (erf) GELU in the MLP.

Shapes: B batch, T sequence, D = d_model, H = n_heads, Dh = D / H, L = n_layers.

Hook points (the same mechanism as TinyGPT, :class:`vrs_edu.nn.hooks.HookPoints`):
``embed.token`` (B, T, D): the word-embedding row of each token — token identity, no position, no context;
``x0`` (B, T, D): the embedding layer's output ``LayerNorm(token + position + segment)``, context-free, the stream at
depth 0; ``blocks.{l}.resid_pre`` (B, T, D); ``blocks.{l}.attn.{q_in, k_in, v_in}`` (B, T, D);
``blocks.{l}.attn.{q, k, v}`` (B, H, T, Dh); ``blocks.{l}.attn.pattern`` (B, H, T, T); ``blocks.{l}.attn.z``
(B, H, T, Dh); ``blocks.{l}.attn.out`` (B, T, D); ``blocks.{l}.resid_mid`` (after the first LayerNorm);
``blocks.{l}.mlp.out``; ``resid_final`` (B, T, D). ``trace.stack("resid")`` is the depth stack (L+1, B, T, D).

Weights: :meth:`MiniBert.from_pretrained` reads a Hugging Face BERT folder (``config.json`` + ``model.safetensors``)
with ``safetensors``; :func:`load_tokenizer` reads its ``tokenizer.json`` with HF ``tokenizers``. This module does not
import ``transformers``: ``tests/test_bert_parity.py`` checks it against ``transformers.BertModel`` instead.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from pathlib import Path

import torch
import torch.nn.functional as F
from einops import rearrange
from jaxtyping import Bool, Float, Int
from safetensors.torch import load_file
from tokenizers import Tokenizer
from torch import Tensor, nn

from vrs_edu.nn.hooks import HookPoints, no_hook
from vrs_edu.nn.model import Trace


@dataclass
class BertConfig:
    """The shape of a BERT encoder. Defaults are all-MiniLM-L6-v2's."""

    vocab_size: int = 30522
    d_model: int = 384
    n_layers: int = 6
    n_heads: int = 12
    d_mlp: int = 1536
    max_positions: int = 512
    type_vocab_size: int = 2
    ln_eps: float = 1e-12

    HF_KEYS = {"vocab_size": "vocab_size", "d_model": "hidden_size", "n_layers": "num_hidden_layers",
               "n_heads": "num_attention_heads", "d_mlp": "intermediate_size",
               "max_positions": "max_position_embeddings", "type_vocab_size": "type_vocab_size",
               "ln_eps": "layer_norm_eps"}

    @classmethod
    def from_hf(cls, hf: dict) -> "BertConfig":
        """Read a Hugging Face ``config.json`` dict. Raises ValueError for anything this minimal model does not
        implement (another activation, relative positions, a non-BERT model type)."""
        if hf.get("model_type", "bert") != "bert":
            raise ValueError(f"config model_type must be 'bert', got {hf.get('model_type')!r}")
        if hf.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"only hidden_act='gelu' (exact erf GELU) is implemented, got {hf['hidden_act']!r}")
        if hf.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError("only absolute position embeddings are implemented, "
                             f"got {hf['position_embedding_type']!r}")
        missing = [k for k in cls.HF_KEYS.values() if k not in hf]
        if missing:
            raise ValueError(f"config.json lacks {missing}")
        return cls(**{ours: hf[theirs] for ours, theirs in cls.HF_KEYS.items()}).validate()

    def validate(self) -> "BertConfig":
        for f in fields(self):
            if f.name != "ln_eps" and (not isinstance(getattr(self, f.name), int) or getattr(self, f.name) < 1):
                raise ValueError(f"{f.name} must be a positive integer, got {getattr(self, f.name)!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} must be divisible by n_heads={self.n_heads}")
        return self


@dataclass
class BertOutput:
    hidden: Float[Tensor, "B T D"]          # last layer's hidden states (= trace["resid_final"])
    embedding: Float[Tensor, "B D"]         # the sentence embedding: masked mean of `hidden`, L2-normalised
    trace: Trace | None = None


def sentence_embedding(hidden: Float[Tensor, "B T D"], mask: Bool[Tensor, "B T"]) -> Float[Tensor, "B D"]:
    """all-MiniLM-L6-v2's sentence embedding: mean of the token states over the real (non-padding) tokens, then
    L2-normalised (its ``modules.json``: Transformer → Pooling(mean) → Normalize). The cosine of two embeddings is
    their dot product."""
    m = mask.unsqueeze(-1).to(hidden.dtype)
    mean = (hidden * m).sum(1) / m.sum(1).clamp_min(1.0)
    return F.normalize(mean, dim=-1)


class BertSelfAttention(nn.Module):
    """Bidirectional multi-head attention with separate inputs for Q, K and V (chapter 04's substitution ablation
    feeds x0 into one of them). ``pattern = softmax(q kᵀ / sqrt(Dh))`` over the non-padding keys (arXiv 1706.03762,
    eq. 1); ``z = pattern @ v``; ``out = W_O · concat_heads(z) + b_O``."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)

    def forward(self, q_in: Float[Tensor, "B T D"], k_in: Float[Tensor, "B T D"], v_in: Float[Tensor, "B T D"],
                key_mask: Bool[Tensor, "B T"], hook=no_hook) -> Float[Tensor, "B T D"]:
        q_in, k_in, v_in = hook("q_in", q_in), hook("k_in", k_in), hook("v_in", v_in)
        split = lambda x: rearrange(x, "b t (h dh) -> b h t dh", h=self.n_heads)  # noqa: E731
        q = hook("q", split(self.q_proj(q_in)))
        k = hook("k", split(self.k_proj(k_in)))
        v = hook("v", split(self.v_proj(v_in)))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)               # (B, H, T, T)
        scores = scores.masked_fill(~key_mask[:, None, None, :], float("-inf"))    # padding is never looked at
        pattern = hook("pattern", scores.softmax(dim=-1))                          # QK: where to look
        z = hook("z", pattern @ v)                                                 # V: what gets moved
        return hook("out", self.o_proj(rearrange(z, "b h t dh -> b t (h dh)")))


class BertMLP(nn.Module):
    def __init__(self, d_model: int, d_mlp: int):
        super().__init__()
        self.up = nn.Linear(d_model, d_mlp)
        self.down = nn.Linear(d_mlp, d_model)

    def forward(self, x: Float[Tensor, "B T D"]) -> Float[Tensor, "B T D"]:
        return self.down(F.gelu(self.up(x)))  # exact erf GELU, BERT's "gelu"


class BertBlock(nn.Module):
    """Post-LN encoder layer: ``h = LN(x + attn(x))``, then ``LN(h + mlp(h))``."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.attn = BertSelfAttention(cfg.d_model, cfg.n_heads)
        self.ln_attn = nn.LayerNorm(cfg.d_model, eps=cfg.ln_eps)
        self.mlp = BertMLP(cfg.d_model, cfg.d_mlp)
        self.ln_mlp = nn.LayerNorm(cfg.d_model, eps=cfg.ln_eps)

    def forward(self, x: Float[Tensor, "B T D"], key_mask: Bool[Tensor, "B T"], hook=no_hook) -> Float[Tensor, "B T D"]:
        h = hook("resid_mid", self.ln_attn(x + self.attn(x, x, x, key_mask, hook=hook.scoped("attn"))))
        return self.ln_mlp(h + hook("mlp.out", self.mlp(h)))


class MiniBert(nn.Module):
    """A BERT encoder (no pooler, no MLM head) whose intermediate tensors can be read or replaced.

    ``forward(input_ids, attention_mask=None, *, trace=False, hooks=None)`` returns a :class:`BertOutput`: the last
    layer's hidden states (B, T, D), the sentence embedding (B, D) and, when asked, a :class:`~vrs_edu.nn.model.Trace`
    (hook names in the module docstring). All tokens get segment (token-type) id 0: single sentences.

    Raises:
        ValueError: input_ids not (B, T), ids outside 0..V-1, T > max_positions, a mask of another shape or a row
            without any real token, or a hook naming a point that does not exist.
    """

    def __init__(self, cfg: BertConfig | None = None):
        super().__init__()
        self.cfg = cfg = (cfg or BertConfig()).validate()
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.max_positions, cfg.d_model)
        self.type_emb = nn.Embedding(cfg.type_vocab_size, cfg.d_model)
        self.emb_ln = nn.LayerNorm(cfg.d_model, eps=cfg.ln_eps)
        self.blocks = nn.ModuleList([BertBlock(cfg) for _ in range(cfg.n_layers)])

    def forward(self, input_ids: Int[Tensor, "B T"], attention_mask: Bool[Tensor, "B T"] | None = None, *,
                trace: bool = False, hooks: dict | None = None) -> BertOutput:
        mask = self._check_input(input_ids, attention_mask)
        hook = HookPoints(hooks, record=trace)
        T = input_ids.size(1)
        tok = hook("embed.token", self.tok_emb(input_ids))
        pos = self.pos_emb.weight[:T] + self.type_emb.weight[0]      # (T, D), the same for every sentence
        x = hook("x0", self.emb_ln(tok + pos))                        # context-free: token and position only
        return self._layers(x, mask, 0, hook, trace)

    def resume(self, resid_pre: Float[Tensor, "B T D"], attention_mask: Bool[Tensor, "B T"], start_layer: int, *,
               trace: bool = False, hooks: dict | None = None) -> BertOutput:
        """Run only layers ``start_layer..L-1``, starting from the stream state ``resid_pre`` (B, T, D) that a traced
        run recorded at ``blocks.{start_layer}.resid_pre``. Gives the same output as the full forward pass with the
        same hooks on those layers, at a fraction of the cost (an experiment that patches layer 4 need not recompute
        layers 0-3). Raises ValueError on a layer outside 0..L-1 or mismatched shapes."""
        if not 0 <= start_layer < self.cfg.n_layers:
            raise ValueError(f"start_layer must be in 0..{self.cfg.n_layers - 1}, got {start_layer}")
        if resid_pre.dim() != 3 or resid_pre.size(-1) != self.cfg.d_model or attention_mask.shape != resid_pre.shape[:2]:
            raise ValueError(f"resid_pre must be (B, T, {self.cfg.d_model}) and attention_mask (B, T), got "
                             f"{tuple(resid_pre.shape)} and {tuple(attention_mask.shape)}")
        return self._layers(resid_pre, attention_mask.bool(), start_layer, HookPoints(hooks, record=trace), trace)

    def _layers(self, x: Tensor, mask: Tensor, start: int, hook: HookPoints, trace: bool) -> BertOutput:
        for l in range(start, self.cfg.n_layers):
            x = hook(f"blocks.{l}.resid_pre", x)
            x = self.blocks[l](x, mask, hook=hook.scoped(f"blocks.{l}"))
        x = hook("resid_final", x)
        hook.check_all_used()
        return BertOutput(x, sentence_embedding(x, mask), Trace(hook.store, self.cfg.n_layers) if trace else None)

    def _check_input(self, ids: Tensor, mask: Tensor | None) -> Tensor:
        if ids.dim() != 2 or ids.dtype not in (torch.int32, torch.int64):
            raise ValueError(f"input_ids must be (B, T) integer token ids, got {ids.dtype} of shape {tuple(ids.shape)}")
        if ids.size(1) > self.cfg.max_positions:
            raise ValueError(f"sequence length T={ids.size(1)} exceeds max_positions={self.cfg.max_positions}")
        if ids.numel() and (ids.min() < 0 or ids.max() >= self.cfg.vocab_size):
            raise ValueError(f"token ids must be in 0..{self.cfg.vocab_size - 1}, "
                             f"got range {int(ids.min())}..{int(ids.max())}")
        if mask is None:
            return torch.ones_like(ids, dtype=torch.bool)
        if mask.shape != ids.shape:
            raise ValueError(f"attention_mask must have the shape of input_ids {tuple(ids.shape)}, "
                             f"got {tuple(mask.shape)}")
        mask = mask.bool()
        if not mask.any(1).all():
            raise ValueError("every row of attention_mask needs at least one real (True / 1) token")
        return mask

    # -- loading real weights ---------------------------------------------------------------------------------

    @classmethod
    def from_pretrained(cls, folder: str | Path) -> "MiniBert":
        """Load a Hugging Face BERT folder (``config.json`` + ``model.safetensors``); returns the model in eval mode.

        Raises:
            FileNotFoundError: a file is missing.
            ValueError: the config is not a plain BERT, or the checkpoint lacks a weight / has one of the wrong shape
                (the message names them).
        """
        folder = Path(folder)
        for name in ("config.json", "model.safetensors"):
            if not (folder / name).is_file():
                raise FileNotFoundError(f"{folder / name} does not exist")
        model = cls(BertConfig.from_hf(json.loads((folder / "config.json").read_text())))
        model.load_hf_state_dict(load_file(folder / "model.safetensors"))
        return model.eval()

    @torch.no_grad()
    def load_hf_state_dict(self, sd: dict[str, Tensor]) -> None:
        """Copy Hugging Face ``BertModel`` weights (names from :func:`hf_name`) into this model. The pooler and the
        ``position_ids`` buffer are not part of the encoder and are ignored; anything else missing or left over, or
        of the wrong shape, raises ValueError."""
        sd = {k.removeprefix("bert."): v for k, v in sd.items()}
        problems, used = [], set()
        for name, p in self.named_parameters():
            key = hf_name(name)
            if key not in sd:
                problems.append(f"missing {key}")
            elif sd[key].shape != p.shape:
                problems.append(f"{key}: shape {tuple(sd[key].shape)}, expected {tuple(p.shape)}")
            else:
                p.copy_(sd[key])
                used.add(key)
        extra = sorted(k for k in set(sd) - used if not k.startswith(("pooler.", "embeddings.position_ids", "cls.")))
        problems += [f"unexpected {k}" for k in extra]
        if problems:
            raise ValueError("checkpoint does not match MiniBert: " + "; ".join(problems[:10]))


# Our parameter names -> Hugging Face BertModel's (applied in order, first match per prefix).
_HF_NAMES = [
    ("tok_emb.", "embeddings.word_embeddings."), ("pos_emb.", "embeddings.position_embeddings."),
    ("type_emb.", "embeddings.token_type_embeddings."), ("emb_ln.", "embeddings.LayerNorm."),
    ("attn.q_proj.", "attention.self.query."), ("attn.k_proj.", "attention.self.key."),
    ("attn.v_proj.", "attention.self.value."), ("attn.o_proj.", "attention.output.dense."),
    ("ln_attn.", "attention.output.LayerNorm."), ("mlp.up.", "intermediate.dense."),
    ("mlp.down.", "output.dense."), ("ln_mlp.", "output.LayerNorm."),
]


def hf_name(name: str) -> str:
    """``blocks.3.attn.q_proj.weight`` -> ``encoder.layer.3.attention.self.query.weight`` (and so on)."""
    head, rest = "", name
    if name.startswith("blocks."):
        _, l, rest = name.split(".", 2)
        head = f"encoder.layer.{l}."
    for ours, theirs in _HF_NAMES:
        if rest.startswith(ours):
            return head + theirs + rest[len(ours):]
    raise ValueError(f"no Hugging Face name known for parameter {name!r}")


# -- tokenizer --------------------------------------------------------------------------------------------------

def load_tokenizer(path: str | Path, max_length: int = 128):
    """The model's WordPiece tokenizer from its ``tokenizer.json`` (HF ``tokenizers``), set to pad each batch to its
    longest sentence (not to a fixed 128) and to truncate at ``max_length`` tokens, [CLS] and [SEP] included."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    if max_length < 3:
        raise ValueError(f"max_length must be >= 3 ([CLS], one token, [SEP]), got {max_length}")
    tok = Tokenizer.from_file(str(path))
    tok.no_padding()
    tok.enable_padding(pad_id=tok.token_to_id("[PAD]"), pad_token="[PAD]")
    tok.enable_truncation(max_length=max_length)
    return tok


def tokenize(tokenizer, sentences: list[str]) -> tuple[Int[Tensor, "B T"], Bool[Tensor, "B T"]]:
    """Token ids (B, T) and the attention mask (B, T) (True = real token) of a batch of sentences."""
    if isinstance(sentences, str) or not sentences:
        raise ValueError("sentences must be a non-empty list of strings")
    enc = tokenizer.encode_batch(list(sentences))
    ids = torch.tensor([e.ids for e in enc], dtype=torch.long)
    mask = torch.tensor([e.attention_mask for e in enc], dtype=torch.bool)
    return ids, mask
