"""Named model + data + training sizes, validated when they are defined and again after every override.

``make_run(preset)`` returns the three configs; every field can be overridden by keyword. The first four presets
are sized for the 2-core CPU this course is tested on; the ``bpe-*`` and ``paper-12x768`` presets are for a GPU
(README, "Scaling up"). ``paper-12x768`` follows the shape of the papers' smallest 12-layer models (12 layers,
d 768, 12 heads: GPT-2 small, ResFormer's 180M model, the bank-of-values paper's 135M model) with an 8,192-token
BPE vocabulary, which makes it about 100 M parameters; the papers' larger vocabularies (32 k-50 k) account for the
rest of their counts.

``python -m vrs_edu.lab.presets`` prints the presets table of the README (parameter counts, FLOPs and memory,
all computed by the functions below).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from vrs_edu.lab.data import TOKENIZERS, default_corpus_text
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.train import TrainConfig
from vrs_edu.nn.model import TinyGPT, TinyGPTConfig


@dataclass(frozen=True)
class Preset:
    name: str
    tokenizer: str           # char | word | bpe
    vocab_size: int          # for word / bpe; char takes the corpus' characters
    model: dict
    train: dict
    about: str
    for_gpu: bool = False    # sized for a GPU (README, "Scaling up"); the others run on the 2-core CPU

    def __post_init__(self):
        # A preset that cannot run fails where it is defined, with the reason, not later inside a training run.
        try:
            if self.tokenizer not in TOKENIZERS:
                raise ValueError(f"tokenizer must be one of {TOKENIZERS}, got {self.tokenizer!r}")
            if self.tokenizer != "char" and self.vocab_size < 16:
                raise ValueError(f"vocab_size must be >= 16 for a {self.tokenizer} tokenizer, got {self.vocab_size}")
            TinyGPTConfig(**{"vocab_size": max(self.vocab_size, 16), **self.model}).validate()
            validate_train(TrainConfig(**self.train))
        except (TypeError, ValueError) as e:
            raise ValueError(f"preset {self.name!r}: {e}") from None


def validate_train(cfg: TrainConfig) -> TrainConfig:
    """:meth:`TrainConfig.validate` plus the fields it leaves out. Raises ValueError naming the field."""
    cfg.validate()
    for name in ("eval_every", "warmup"):
        v = getattr(cfg, name)
        if not isinstance(v, int) or v < (1 if name == "eval_every" else 0):
            raise ValueError(f"{name} must be an integer >= {1 if name == 'eval_every' else 0}, got {v!r}")
    if cfg.eval_batches is not None and cfg.eval_batches < 1:
        raise ValueError(f"eval_batches must be >= 1 or None (the whole split), got {cfg.eval_batches}")
    if cfg.grad_clip <= 0 or cfg.weight_decay < 0:
        raise ValueError(f"grad_clip must be > 0 and weight_decay >= 0, got {cfg.grad_clip} and {cfg.weight_decay}")
    return cfg


def _bytes(n: float) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


PRESETS = {
    p.name: p for p in [
        Preset("tiny", "char", 0, dict(d_model=32, n_layers=2, n_heads=2, block_size=32),
               dict(steps=20, batch_size=8, eval_every=10, eval_batches=2),
               "for tests: trains in about a second"),
        # char-6x64 keeps the GPT-2-style raw-embedding start: the stored checkpoint chapters 01-02 load was trained
        # with it, and their live runs compare against it. Every other preset takes the default RMSNorm(embedding).
        Preset("char-6x64", "char", 0, dict(d_model=64, n_layers=6, n_heads=4, block_size=64,
                                            stream_start="embedding"),
               dict(steps=300, batch_size=32, lr=3e-3, warmup=30, eval_every=100, eval_batches=20),
               "6 layers on characters; readable attention patterns (chapters 00-02)"),
        Preset("word-8x64", "word", 2048, dict(d_model=64, n_layers=8, n_heads=4, block_size=64),
               dict(steps=600, batch_size=32, lr=3e-3, warmup=50, eval_every=100, eval_batches=None),
               "8 deep-narrow layers on word tokens: where token identity is worth re-reading (chapters 03-05)"),
        Preset("word-12x64", "word", 2048, dict(d_model=64, n_layers=12, n_heads=4, block_size=64),
               dict(steps=1000, batch_size=32, lr=3e-3, warmup=50, eval_every=100, eval_batches=None),
               "12 layers like the bank-of-values paper's smallest model, 160x narrower"),
        # GPU presets. Learning rates follow the usual AdamW schedule for these widths (ResFormer trains its 82M-468M
        # models at 6e-4); the coefficient group keeps coef_lr. They need a corpus of your own (--corpus): the
        # default corpus has ~0.1 M BPE tokens, which a 100 M-parameter model memorises.
        Preset("bpe-12x256", "bpe", 8192, dict(d_model=256, n_layers=12, n_heads=4, block_size=256),
               dict(steps=5000, batch_size=64, lr=1.5e-3, warmup=200, weight_decay=0.1, eval_every=500,
                    eval_batches=50),
               "GPU: 12 layers, d 256, BPE 8k (~14 M parameters); one GPU, minutes", for_gpu=True),
        Preset("bpe-8x512", "bpe", 8192, dict(d_model=512, n_layers=8, n_heads=8, block_size=512),
               dict(steps=10000, batch_size=32, lr=1e-3, warmup=200, weight_decay=0.1, eval_every=500,
                    eval_batches=50),
               "GPU: ResFormer's 82M shape (8 layers, d 512, 8 heads) with a BPE 8k vocabulary", for_gpu=True),
        Preset("paper-12x768", "bpe", 8192, dict(d_model=768, n_layers=12, n_heads=12, block_size=512),
               dict(steps=20000, batch_size=32, lr=6e-4, warmup=500, weight_decay=0.1, eval_every=1000,
                    eval_batches=100),
               "GPU, paper scale: 12 layers, d 768, 12 heads, BPE 8k (~100 M parameters)", for_gpu=True),
    ]
}


def make_run(preset: str, **overrides) -> tuple[Preset, TinyGPTConfig, TrainConfig]:
    """The preset's model and train configs with ``overrides`` applied (a key may belong to either).

    Both configs are validated after the overrides (:meth:`TinyGPTConfig.validate`, :func:`validate_train`), so e.g.
    ``make_run("word-8x64", n_heads=3)`` fails here, naming the fields, rather than inside a training run.

    Raises:
        ValueError: an unknown preset (the message lists the known ones), an unknown override key, or a
            combination that cannot run.
    """
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; known presets: {sorted(PRESETS)}")
    p = PRESETS[preset]
    mfields, tfields = set(TinyGPTConfig.__dataclass_fields__), set(TrainConfig.__dataclass_fields__)
    unknown = sorted(set(overrides) - mfields - tfields)
    if unknown:
        raise ValueError(f"unknown settings {unknown}; model settings: {sorted(mfields)}, "
                         f"training settings: {sorted(tfields)}")
    mcfg = TinyGPTConfig(**{**p.model, **{k: v for k, v in overrides.items() if k in mfields}})
    tcfg = TrainConfig(**{**p.train, **{k: v for k, v in overrides.items() if k in tfields}})
    try:
        mcfg.validate()
        validate_train(tcfg)
    except ValueError as e:
        raise ValueError(f"preset {preset!r} with {overrides}: {e}") from None
    return p, mcfg, tcfg


def scaled_run(preset: str, options: RunOptions, **overrides) -> tuple[Preset, TinyGPTConfig, TrainConfig]:
    """:func:`make_run` at the size ``options`` ask for: ``options.preset``, when set, replaces ``preset``, and
    ``options.settings`` are applied after ``overrides``. This is how ``vrs-edu reproduce value-residual --preset
    paper-12x768 --set steps=20000`` reruns a chapter's recipe at a larger scale without another codebase: the
    recipe builds its runs with ``scaled_run`` and the options it was given (its variants still apply).

    Raises:
        ValueError: as :func:`make_run` (an unknown preset or setting, a combination that cannot run).
    """
    return make_run(options.preset or preset, **{**overrides, **options.overrides})


# ---------------------------------------------------------------------------------------------------------------
# Sizes: parameters, compute and memory of a preset, computed (not typed) for the README's presets table.


def nominal_vocab(p: Preset) -> int:
    """The vocabulary a preset's model gets on the default corpus: its ``vocab_size`` for word/bpe (a corpus too
    small for that many BPE merges yields fewer), the number of distinct characters for ``char``."""
    if p.tokenizer != "char":
        return p.vocab_size

    return len(set(default_corpus_text()))


def model_for(p: Preset, device: str | torch.device = "meta", **overrides) -> TinyGPT:
    """The preset's model with its nominal vocabulary; on the ``meta`` device by default (shapes, no memory)."""
    _, mcfg, _ = make_run(p.name, **overrides)
    mcfg = TinyGPTConfig(**{**mcfg.to_dict(), "vocab_size": nominal_vocab(p)})
    with torch.device(device):
        return TinyGPT(mcfg)


def train_flops_per_step(model: TinyGPT, batch_size: int, seq_len: int | None = None) -> float:
    """Forward + backward FLOPs of one optimizer step: ``3 · 2 · B·T · (N_matmul + 2·L·T·D)``.

    ``N_matmul`` = parameters used in matrix products (all but the token embedding, a lookup); ``2·L·T·D`` per
    token are the attention scores and the weighted sum of values (TinyGPT computes the full T x T pattern, so no
    causal halving). Backward costs twice the forward (Kaplan et al. 2020, arXiv 2001.08361, sec. 2.1).
    """
    cfg = model.cfg
    T = seq_len or cfg.block_size
    n_matmul = model.num_params() - model.wte.weight.numel()
    return 6.0 * batch_size * T * (n_matmul + 2 * cfg.n_layers * T * cfg.d_model)


def activation_bytes(model: TinyGPT, seq_len: int | None = None, bf16: bool = True) -> int:
    """Bytes of the tensors autograd keeps for the backward pass of one sequence (batch 1), measured.

    Runs one forward pass of ``model`` (a real CPU model) with ``torch.autograd.graph.saved_tensors_hooks`` and
    sums the sizes of the distinct storages saved for backward, including the loss's. ``bf16=True`` runs it under
    CPU bf16 autocast as a stand-in for CUDA's (their casting lists are close, not identical). Activation memory
    grows linearly with the batch, so multiply by B.
    """
    T = seq_len or model.cfg.block_size
    seen: dict[int, int] = {}

    def pack(t):
        if t.device.type != "meta" and t.untyped_storage().nbytes():
            seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    idx = torch.zeros(1, T, dtype=torch.long)
    ctx = torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else torch.autocast("cpu", enabled=False)
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), ctx:
        model(idx, idx).loss.backward()
    model.zero_grad(set_to_none=True)
    return sum(n for ptr, n in seen.items() if ptr not in params)


def training_memory(model: TinyGPT, batch_size: int, world_size: int = 1, act_bytes_per_seq: int | None = None,
                    seq_len: int | None = None) -> dict:
    """Expected GPU memory (bytes) of one training process: weights, gradients and AdamW moments in fp32
    (4 + 4 + 8 = 16 bytes per parameter, replicated on every rank by DDP) plus activations for the rank's share of
    the batch (:func:`activation_bytes` x B / world size). Excludes the CUDA context and allocator slack (~1 GB)."""
    n = model.num_params()
    act = act_bytes_per_seq if act_bytes_per_seq is not None else activation_bytes(model, seq_len)
    per_rank = batch_size // world_size
    return {"states": 16 * n, "activations": act * per_rank, "total": 16 * n + act * per_rank}


# Peak dense bf16 tensor-core throughput (TFLOP/s) from NVIDIA's data sheets; what a run reaches is a fraction of
# it (the model FLOPs utilisation, MFU), which nobody has measured for this code: no GPU was available when the
# presets were written. The estimates below *assume* one.
GPU_PEAK_TFLOPS = {"A100": 312.0, "H100 SXM": 989.0}
ASSUMED_MFU = 0.25           # a cautious guess for eager PyTorch with explicit (non-flash) attention
ASSUMED_SCALING = 0.9        # DDP efficiency per GPU on N > 1 GPUs of one machine (gradient all-reduce overhead)


def estimated_seconds(flops_per_step: float, steps: int, peak_tflops: float, n_gpus: int = 1,
                      mfu: float = ASSUMED_MFU, scaling: float = ASSUMED_SCALING) -> float:
    """Wall time (s) of ``steps`` steps: FLOPs / (peak · MFU · N GPUs · scaling efficiency when N > 1).
    An estimate from assumptions, not a measurement."""
    return steps * flops_per_step / (peak_tflops * 1e12 * mfu * n_gpus * (scaling if n_gpus > 1 else 1.0))


def _duration(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h"


def time_table(n_gpus: int = 8) -> str:
    """The README's estimated-time table (markdown), from :func:`train_flops_per_step` and the assumptions above."""
    gpus = list(GPU_PEAK_TFLOPS)
    head = " | ".join(f"1 x {g} | {n_gpus} x {g}" for g in gpus)
    rows = [f"| preset | steps | total PFLOP | {head} |", "|---|---|---|" + "---|---|" * len(gpus)]
    for p in PRESETS.values():
        if not p.for_gpu:  # tiny models are bound by kernel launches, not FLOPs: the estimate says nothing there
            continue
        _, mcfg, tcfg = make_run(p.name)
        f = train_flops_per_step(model_for(p), tcfg.batch_size)
        cells = " | ".join(f"{_duration(estimated_seconds(f, tcfg.steps, GPU_PEAK_TFLOPS[g]))} | "
                           f"{_duration(estimated_seconds(f, tcfg.steps, GPU_PEAK_TFLOPS[g], n_gpus))}" for g in gpus)
        rows.append(f"| `{p.name}` | {tcfg.steps:,} | {f * tcfg.steps / 1e15:.3g} | {cells} |")
    return "\n".join(rows)


def table(measure_memory: bool = True) -> str:
    """The README's presets table (markdown): shape, parameters, tokens and FLOPs per step, and memory."""
    rows = ["| preset | tokenizer (vocab) | layers x d (heads) | T x B | parameters | tokens/step | "
            "TFLOP/step | memory, 1 GPU |", "|---|---|---|---|---|---|---|---|"]
    for p in PRESETS.values():
        _, mcfg, tcfg = make_run(p.name)
        meta = model_for(p)
        flops = train_flops_per_step(meta, tcfg.batch_size)
        mem = "n/a"
        if measure_memory:
            real = model_for(p, "cpu")
            m = training_memory(real, tcfg.batch_size)
            mem = " ".join([_bytes(m["total"]), f"({_bytes(m['states'])} + {_bytes(m['activations'])})"])
            del real
        rows.append(f"| `{p.name}` | {p.tokenizer} ({nominal_vocab(p):,}) | {mcfg.n_layers} x {mcfg.d_model} "
                    f"({mcfg.n_heads}) | {mcfg.block_size} x {tcfg.batch_size} | {meta.num_params() / 1e6:.2f} M | "
                    f"{tcfg.batch_size * mcfg.block_size:,} | {flops / 1e12:.3g} | {mem} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
    print()
    print(f"Estimated training time at an assumed MFU of {ASSUMED_MFU:.0%} (and {ASSUMED_SCALING:.0%} scaling "
          f"efficiency on several GPUs):")
    print()
    print(time_table())
