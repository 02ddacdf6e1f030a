"""Training-step cost of TinyGPT against a plain reference of the same shape, measured side by side.

* TinyGPT's fast path (nobody listens: fused ``F.scaled_dot_product_attention``) vs ``PlainGPT`` below: a
  nanoGPT-style model with no hooks, one fused qkv projection and the same arithmetic (RoPE, parameter-free RMSNorm,
  ``F.scaled_dot_product_attention(is_causal=True)``, GELU MLP) — the reference a practitioner would pick; target
  ratio <= 1.02.
* TinyGPT's explicit path (what a trace or patch runs: softmax(QKᵀ)V written out, every hook point) vs its fast
  path: the price of the hooks, printed.
* Value residual and x0 injection vs the baseline TinyGPT — target <= 1.05.
* Achieved training FLOP/s (6·N·tokens + attention) as a fraction of a large ``torch.mm`` on this machine.
Each configuration is timed in interleaved rounds and the median step time is reported.
"""
from __future__ import annotations

import os
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn

from vrs_edu.nn.attention import set_fast_path
from vrs_edu.nn.layers import RoPE, rms_norm
from vrs_edu.nn.model import TinyGPT, TinyGPTConfig


class PlainBlock(nn.Module):
    def __init__(self, d, h, rope):
        super().__init__()
        self.h, self.rope = h, rope
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.up = nn.Linear(d, 4 * d, bias=False)
        self.down = nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(rms_norm(x)).view(B, T, 3, self.h, D // self.h).permute(2, 0, 3, 1, 4)
        q, k = self.rope(q), self.rope(k)
        z = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(z.transpose(1, 2).reshape(B, T, D))
        return x + self.down(F.gelu(self.up(rms_norm(x))))


class PlainGPT(nn.Module):
    def __init__(self, cfg: TinyGPTConfig):
        super().__init__()
        rope = RoPE(cfg.d_model // cfg.n_heads, cfg.block_size)
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = nn.ModuleList([PlainBlock(cfg.d_model, cfg.n_heads, rope) for _ in range(cfg.n_layers)])
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)

    def forward(self, idx, targets):
        x = self.wte(idx)
        for b in self.blocks:
            x = b(x)
        logits = self.head(rms_norm(x))
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


def _step_fn(model, plain: bool):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step(x, y):
        loss = model(x, y) if plain else model(x, y).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


def time_steps(configs: dict, B: int, T: int, vocab: int, rounds: int, steps_per_round: int) -> dict[str, float]:
    """Median seconds per training step for each named step function, interleaved round by round."""
    g = torch.Generator().manual_seed(0)
    x = torch.randint(vocab, (B, T), generator=g)
    y = torch.randint(vocab, (B, T), generator=g)
    for fn in configs.values():  # warm-up
        fn(x, y)
    times = {k: [] for k in configs}
    for _ in range(rounds):
        for name, fn in configs.items():
            t0 = time.perf_counter()
            for _ in range(steps_per_round):
                fn(x, y)
            times[name].append((time.perf_counter() - t0) / steps_per_round)
    return {k: statistics.median(v) for k, v in times.items()}


def load_average() -> str:
    """``load average 1/5/15 min: a, b, c`` (a busy machine makes every wall time noisier), or '' where the OS has none."""
    try:
        return "load average 1/5/15 min: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return ""


def mm_flops(n: int = 1024, repeats: int = 20) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    t0 = time.perf_counter()
    for _ in range(repeats):
        a @ b
    return 2 * n ** 3 * repeats / (time.perf_counter() - t0)


def run(args) -> None:
    previous = torch.get_num_threads()
    torch.set_num_threads(1)   # the shape the recipes train at: one thread per run (see `vrs-edu reproduce --jobs`)
    try:
        _run(args)
    finally:
        torch.set_num_threads(previous)


def _run(args) -> None:
    torch.manual_seed(0)
    B, T, vocab = 32, 64, 2048
    base = TinyGPTConfig(vocab_size=vocab, d_model=64, n_layers=8, n_heads=4, block_size=T)
    rounds, spr = (3, 3) if args.quick else (7, 5)
    variant = lambda **over: TinyGPT(TinyGPTConfig(**{**base.__dict__, **over}))
    models = {
        "SDPA reference (nanoGPT-style)": (PlainGPT(base), True),
        "TinyGPT": (TinyGPT(base), False),
        "TinyGPT explicit path": (set_fast_path(TinyGPT(base), False), False),
        "TinyGPT + value residual (learnable)": (variant(value_residual="learnable"), False),
        "TinyGPT + x0 injection (qkv)": (variant(x0_mode="qkv"), False),
    }
    t = time_steps({k: _step_fn(m, plain) for k, (m, plain) in models.items()}, B, T, vocab, rounds, spr)
    print(f"shape: B={B} T={T} D={base.d_model} L={base.n_layers} H={base.n_heads} vocab={vocab}; "
          f"{torch.get_num_threads()} threads; median of {rounds} rounds x {spr} steps; {load_average()}")
    for k, v in t.items():
        print(f"  {k:40s} {v * 1e3:7.1f} ms/step")
    ref = t["SDPA reference (nanoGPT-style)"]
    print(f"  ratio TinyGPT (fast path) / SDPA reference:   {t['TinyGPT'] / ref:.3f}  (target <= 1.02)")
    print(f"  ratio explicit path / fast path:             {t['TinyGPT explicit path'] / t['TinyGPT']:.3f}  "
          f"(the price of the hook points)")
    for k in list(t)[3:]:
        print(f"  ratio {k.split('+')[1].strip():32s} / TinyGPT: {t[k] / t['TinyGPT']:.3f}  (target <= 1.05)")
    m = models["TinyGPT"][0]
    n_params = sum(p.numel() for p in m.parameters())
    flops = 6 * n_params * B * T + 12 * base.n_layers * B * T * T * base.d_model  # matmuls fwd+bwd, attention incl.
    peak = mm_flops()
    achieved = flops / t["TinyGPT"]
    print(f"  TinyGPT training: {achieved / 1e9:.2f} GFLOP/s = {achieved / peak:.1%} of a 1024x1024 torch.mm "
          f"({peak / 1e9:.1f} GFLOP/s)")
