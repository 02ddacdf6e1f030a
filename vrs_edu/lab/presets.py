"""Named model + data + training sizes. Each is sized for the 2-core CPU this course is tested on.

``make_run(preset)`` returns the three configs; every field can be overridden by keyword.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..nn.model import TinyGPTConfig
from .train import TrainConfig


@dataclass(frozen=True)
class Preset:
    name: str
    tokenizer: str           # char | word | bpe
    vocab_size: int          # for word / bpe; char takes the corpus' characters
    model: dict
    train: dict
    about: str


PRESETS = {
    p.name: p for p in [
        Preset("tiny", "char", 0, dict(d_model=32, n_layers=2, n_heads=2, block_size=32),
               dict(steps=20, batch_size=8, eval_every=10, eval_batches=2),
               "for tests: trains in about a second"),
        Preset("char-6x64", "char", 0, dict(d_model=64, n_layers=6, n_heads=4, block_size=64),
               dict(steps=300, batch_size=32, lr=3e-3, warmup=30, eval_every=100, eval_batches=20),
               "6 layers on characters; readable attention patterns (chapters 00-02)"),
        Preset("word-8x64", "word", 2048, dict(d_model=64, n_layers=8, n_heads=4, block_size=64),
               dict(steps=600, batch_size=32, lr=3e-3, warmup=50, eval_every=100, eval_batches=None),
               "8 deep-narrow layers on word tokens: where token identity is worth re-reading (chapters 03-05)"),
        Preset("word-12x64", "word", 2048, dict(d_model=64, n_layers=12, n_heads=4, block_size=64),
               dict(steps=1000, batch_size=32, lr=3e-3, warmup=50, eval_every=100, eval_batches=None),
               "12 layers like the bank-of-values paper's smallest model, 160x narrower"),
    ]
}


def make_run(preset: str, **overrides) -> tuple[Preset, TinyGPTConfig, TrainConfig]:
    """The preset's model and train configs with ``overrides`` applied (a key may belong to either).

    Raises:
        ValueError: an unknown preset (the message lists the known ones) or an unknown override key.
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
    return p, mcfg, tcfg
