"""Small, fast experiments behind the widgets: plain functions that return numbers, so they are tested without a
browser and the widgets (vrs_edu.chapters.ch00_orientation.figures) stay thin."""
from __future__ import annotations

import math

import torch

from vrs_edu.lab.metrics import stream_norms
from vrs_edu.nn.model import TinyGPT, TinyGPTConfig


@torch.no_grad()
def untrained_stream_norms(n_layers: int = 6, init_scale: float = 1.0, seed: int = 0, d_model: int = 64,
                           seq_len: int = 32) -> list[float]:
    """Residual-stream norm across depth of a *freshly initialised* TinyGPT whose block output projections
    (attention ``o_proj`` and MLP ``down``) are multiplied by ``init_scale``. Random token ids, fixed by ``seed``.

    Raises:
        ValueError: ``n_layers`` outside 1..48, or ``init_scale`` negative, NaN or infinite.
    """
    if not 1 <= n_layers <= 48:
        raise ValueError(f"n_layers must be in 1..48, got {n_layers}")
    if not (math.isfinite(init_scale) and init_scale >= 0):   # NaN fails every comparison: test it by name
        raise ValueError(f"init_scale must be a finite number >= 0, got {init_scale}")
    # the GPT-2-style raw-embedding start, as chapter 00's model: the question is how far the blocks lift the stream
    # above a small embedding
    model = TinyGPT(TinyGPTConfig(n_layers=n_layers, d_model=d_model, block_size=seq_len, seed=seed,
                                  stream_start="embedding"))
    for block in model.blocks:
        block.attn.o_proj.weight.mul_(init_scale)
        block.mlp.down.weight.mul_(init_scale)
    idx = torch.randint(model.cfg.vocab_size, (4, seq_len), generator=torch.Generator().manual_seed(seed))
    return stream_norms(model, idx)


DEFAULT = {"n_layers": 6, "init_scale": 1.0}   # the chapter-00 widget's starting setting


def stream_norm_readout(n_layers: int = 6, init_scale: float = 1.0) -> dict:
    """The numbers the widget shows: ``{"norms": [L+1 values], "ratio": final / embedding norm, "default_norms",
    "default_ratio"}`` (default = 6 layers, init scale 1).

    Raises:
        ValueError: ``n_layers`` outside 1..48, or ``init_scale`` negative, NaN or infinite (naming the argument).
    """
    norms = untrained_stream_norms(n_layers=n_layers, init_scale=init_scale)
    base = untrained_stream_norms(**DEFAULT)
    return {"norms": norms, "ratio": norms[-1] / norms[0], "default_norms": base, "default_ratio": base[-1] / base[0]}
