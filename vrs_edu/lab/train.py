"""Training: AdamW with a separate group for coefficients, warmup then linear decay, gradient clipping, periodic
evaluation, and a history of every loss and every named coefficient. Checkpoints are safetensors + JSON.

The recipe follows the pilot runs (``shared/research/cpu-regime-notes.md``) and the papers' small models: AdamW
(0.9, 0.95), weight decay on matrices only, coefficients (alpha, beta, lambda, depth weights) in their own group with
a higher learning rate and no weight decay (modded-nanogpt trains its lambdas at 0.02), linear warmup, constant LR,
then linear decay to 10 % over the last ``decay_frac`` of the steps.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from tqdm.auto import tqdm

from ..nn.model import TinyGPT, TinyGPTConfig, is_coefficient
from .data import SyntheticTask, TokenData, Tokenizer


@dataclass
class TrainConfig:
    steps: int = 300
    batch_size: int = 32
    lr: float = 3e-3
    coef_lr: float = 2e-2
    weight_decay: float = 0.01
    warmup: int = 30
    decay_frac: float = 0.3
    grad_clip: float = 1.0
    eval_every: int = 100
    eval_batches: int | None = 20   # None: the whole validation split
    seed: int = 0

    def validate(self) -> "TrainConfig":
        if self.steps < 1 or self.batch_size < 1:
            raise ValueError(f"steps and batch_size must be >= 1, got {self.steps} and {self.batch_size}")
        if not 0 <= self.decay_frac <= 1:
            raise ValueError(f"decay_frac must be in [0, 1], got {self.decay_frac}")
        if self.lr <= 0 or self.coef_lr <= 0:
            raise ValueError(f"lr and coef_lr must be > 0, got {self.lr} and {self.coef_lr}")
        return self


@dataclass
class History:
    """What a run logged: step numbers, losses (nats), coefficient trajectories and wall time (seconds)."""

    steps: list[int] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)
    eval_steps: list[int] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    val_acc: list[float] = field(default_factory=list)
    coefficients: dict[str, list] = field(default_factory=dict)
    wall_time_s: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def lr_factor(step: int, cfg: TrainConfig) -> float:
    """Learning-rate multiplier at ``step``: linear warmup to 1, constant, then linear decay to 0.1."""
    if step < cfg.warmup:
        return (step + 1) / cfg.warmup
    decay_start = int(cfg.steps * (1 - cfg.decay_frac))
    if step < decay_start or cfg.decay_frac == 0:
        return 1.0
    return 1.0 - 0.9 * (step - decay_start) / max(1, cfg.steps - decay_start)


def make_optimizer(model: torch.nn.Module, cfg: TrainConfig) -> torch.optim.AdamW:
    """Three groups: matrices (lr, weight decay), other vectors (lr, no decay), coefficients (coef_lr, no decay)."""
    groups = {"matrices": [], "vectors": [], "coefficients": []}
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if is_coefficient(name, p):
            groups["coefficients"].append(p)
        elif p.ndim >= 2:
            groups["matrices"].append(p)
        else:
            groups["vectors"].append(p)
    param_groups = [
        {"params": groups["matrices"], "lr": cfg.lr, "weight_decay": cfg.weight_decay, "name": "matrices"},
        {"params": groups["vectors"], "lr": cfg.lr, "weight_decay": 0.0, "name": "vectors"},
        {"params": groups["coefficients"], "lr": cfg.coef_lr, "weight_decay": 0.0, "name": "coefficients"},
    ]
    for g in param_groups:
        g["base_lr"] = g["lr"]
    return torch.optim.AdamW([g for g in param_groups if g["params"]], betas=(0.9, 0.95))


def masked_loss(logits, targets, mask=None):
    """Mean cross-entropy over all positions, or over the positions where ``mask`` is True."""
    loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="none")
    return loss.mean() if mask is None else loss[mask.flatten()].mean()


@torch.no_grad()
def evaluate(model: TinyGPT, data: TokenData | SyntheticTask, cfg: TrainConfig,
             max_batches: int | None | str = "cfg") -> tuple[float, float]:
    """Validation loss (nats) and next-token accuracy. For a corpus: consecutive windows of the validation split
    (all of it when ``eval_batches`` is None); for a synthetic task: a fixed set drawn with seed 10_000 + seed."""
    was_training = model.training
    model.eval()
    max_batches = cfg.eval_batches if max_batches == "cfg" else max_batches
    total, correct, count = 0.0, 0, 0
    if isinstance(data, SyntheticTask):
        g = torch.Generator().manual_seed(10_000 + cfg.seed)
        batches = [data.batch(cfg.batch_size, g) for _ in range(max_batches or 20)]
    else:
        batches = [(x, y, None) for x, y in data.eval_batches("val", cfg.batch_size, max_batches)]
    for x, y, mask in batches:
        logits = model(x).logits
        per_tok = F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none")
        hit = (logits.argmax(-1) == y).flatten()
        if mask is not None:
            per_tok, hit = per_tok[mask.flatten()], hit[mask.flatten()]
        total += per_tok.sum().item()
        correct += hit.sum().item()
        count += per_tok.numel()
    model.train(was_training)
    return total / count, correct / count


def _snapshot_coefficients(model, history: History) -> None:
    for name, p in model.named_parameters():
        if is_coefficient(name, p):
            history.coefficients.setdefault(name, []).append(p.detach().tolist())


def train(model: TinyGPT, data: TokenData | SyntheticTask, cfg: TrainConfig | None = None, *,
          progress: bool = True, desc: str = "train") -> History:
    """Train ``model`` in place and return its :class:`History`.

    The batches come from a generator seeded with ``cfg.seed``: two models trained with the same seed see the same
    batches in the same order (a paired comparison). Coefficients are logged at every evaluation.
    """
    cfg = (cfg or TrainConfig()).validate()
    if isinstance(data, TokenData) and data.vocab_size > model.cfg.vocab_size:
        raise ValueError(f"the data has vocab_size={data.vocab_size} but the model only {model.cfg.vocab_size}")
    opt = make_optimizer(model, cfg)
    g = torch.Generator().manual_seed(cfg.seed)
    history = History()
    model.train()
    t0 = time.perf_counter()
    bar = tqdm(range(cfg.steps), desc=desc, disable=not progress, leave=False)
    for step in bar:
        for group in opt.param_groups:
            group["lr"] = group["base_lr"] * lr_factor(step, cfg)
        if isinstance(data, SyntheticTask):
            x, y, mask = data.batch(cfg.batch_size, g)
        else:
            (x, y), mask = data.batch("train", cfg.batch_size, g), None
        loss = masked_loss(model(x).logits, y, mask)
        if not math.isfinite(loss.item()):
            raise FloatingPointError(f"loss became {loss.item()} at step {step}; lower lr (now {cfg.lr})")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        history.steps.append(step)
        history.train_loss.append(loss.item())
        if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps:
            vl, va = evaluate(model, data, cfg)
            history.eval_steps.append(step + 1)
            history.val_loss.append(vl)
            history.val_acc.append(va)
            _snapshot_coefficients(model, history)
            bar.set_postfix(val=f"{vl:.3f}")
    history.wall_time_s = time.perf_counter() - t0
    model.eval()
    return history


# ---------------------------------------------------------------------------------------------------------------
# Checkpoints: weights as safetensors (no pickle), config and tokenizer as JSON.


def save_checkpoint(out_dir: str | Path, model: TinyGPT, tokenizer: Tokenizer | None = None,
                    extra: dict | None = None) -> Path:
    """Write ``model.safetensors``, ``config.json`` (model config + ``extra``) and ``tokenizer.json``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    if model.cfg.tie_embeddings:
        state.pop("lm_head.weight", None)
    save_file(state, out / "model.safetensors")
    (out / "config.json").write_text(json.dumps({"model": model.cfg.to_dict(), **(extra or {})}, indent=2))
    if tokenizer is not None:
        (out / "tokenizer.json").write_text(tokenizer.to_json())
    return out


def load_checkpoint(path: str | Path) -> tuple[TinyGPT, Tokenizer | None, dict]:
    """Load a checkpoint written by :func:`save_checkpoint`; returns ``(model, tokenizer or None, config dict)``.

    Raises:
        FileNotFoundError: the folder lacks ``model.safetensors`` or ``config.json``.
        ValueError: the weights do not fit the config (missing, unexpected or mis-shaped tensors, named), or the
            tokenizer's vocabulary differs from the model's.
    """
    path = Path(path)
    for f in ("model.safetensors", "config.json"):
        if not (path / f).exists():
            raise FileNotFoundError(f"checkpoint {path} has no {f}")
    meta = json.loads((path / "config.json").read_text())
    model = TinyGPT(TinyGPTConfig.from_dict(meta["model"]))
    state = load_file(path / "model.safetensors")
    expected = model.state_dict()
    if model.cfg.tie_embeddings:
        state["lm_head.weight"] = state["wte.weight"]
    missing, unexpected = sorted(set(expected) - set(state)), sorted(set(state) - set(expected))
    shapes = [f"{k}: checkpoint {tuple(state[k].shape)} vs config {tuple(expected[k].shape)}"
              for k in set(state) & set(expected) if state[k].shape != expected[k].shape]
    if missing or unexpected or shapes:
        raise ValueError(f"checkpoint {path} does not match its config: missing={missing[:5]} "
                         f"unexpected={unexpected[:5]} shape mismatches={shapes[:5]}")
    model.load_state_dict(state)
    tokenizer = None
    if (path / "tokenizer.json").exists():
        tokenizer = Tokenizer.from_json((path / "tokenizer.json").read_text())
        if tokenizer.vocab_size != model.cfg.vocab_size:
            raise ValueError(f"checkpoint {path}: tokenizer vocabulary {tokenizer.vocab_size} != model vocab_size "
                             f"{model.cfg.vocab_size}")
    model.eval()
    return model, tokenizer, meta
