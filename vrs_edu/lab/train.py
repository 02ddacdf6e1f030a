"""Training: AdamW with a separate group for coefficients, warmup then linear decay, gradient clipping, periodic
evaluation, and a history of every loss and every named coefficient. Checkpoints are safetensors + JSON.

The recipe is the one of the pilot runs made on the course's 2-core CPU before the course was written, after the
papers' small models: AdamW (0.9, 0.95), weight decay on matrices only, coefficients (alpha, beta, lambda, depth
weights) in their own group with a higher learning rate and no weight decay (modded-nanogpt trains its lambdas at
0.02), linear warmup, constant LR, then linear decay to 10 % over the last ``decay_frac`` of the steps.

Scaling up (``README.md``, "Scaling up"): ``train`` also takes a ``device`` (:mod:`vrs_edu.lab.device`: bf16
autocast on CUDA, fp32 on CPU), an optional ``torch.compile``, DistributedDataParallel when the process was started
by ``torchrun`` (:mod:`vrs_edu.lab.distributed`), and checkpoint/resume: with ``checkpoint_dir`` and
``checkpoint_every`` it writes the full training state (weights, optimizer moments, the batch generator's state,
the history so far), and ``resume=True`` continues from the last one with the same results as an uninterrupted run.
Commands pass these down to every ``train`` call as one :class:`~vrs_edu.lab.options.RunOptions` (``options=``).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import time
import zlib
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, get_args

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file

from vrs_edu.lab import distributed
from vrs_edu.lab.data import SyntheticTask, TokenData, Tokenizer
from vrs_edu.lab.device import autocast, autocast_dtype, resolve_device
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.progress import progress_bar
from vrs_edu.nn.model import TinyGPT, TinyGPTConfig

# The x0 coefficients' optimizer: the course's coefficient group, or the official bank-of-values groups
# (``OFFICIAL_X0_GROUPS`` below).
CoefOpt = Literal["course", "official"]
COEF_OPTS: tuple[CoefOpt, ...] = get_args(CoefOpt)  # what TrainConfig.validate accepts


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
    coef_opt: CoefOpt = "course"    # course | official: the x0 coefficients' optimizer (see COEF_OPTS)
    coef_lr_scale: float = 1.0      # official x0 groups: their batch-scaled rates × this (a declared rate sweep)
    seed: int = 0

    def validate(self) -> "TrainConfig":
        # One field per message, so that a command's error names the setting the user typed (`--set steps=-5`)
        for name in ("steps", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 0 <= self.decay_frac <= 1:
            raise ValueError(f"decay_frac must be in [0, 1], got {self.decay_frac}")
        for name in ("lr", "coef_lr", "coef_lr_scale"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.coef_opt not in COEF_OPTS:
            raise ValueError(f"coef_opt must be one of {COEF_OPTS}, got {self.coef_opt!r}")
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


# The official bank-of-values settings, as the source scales them. RiddleHe/nanochat (commit 11f320b)
# ``nanochat/model/gpt_base.py`` setup_optimizer: the x0 weights β (and γ, line 1049) in an AdamW group at
# ``scalar_lr``, betas (0.96, 0.95), no decay (line 1102); the stream weights α at ``scalar_lr · 0.01``, betas
# (0.8, 0.95), weight decay 0.05 (line 1100); value-embedding tables at betas (0.8, 0.995), decay 0.01 (line 1111;
# the bank table E_v takes the paper's lr 0.15, Sec. 4). ``scalar_lr`` is 0.5 *at the reference batch* B_ref = 2¹⁹
# tokens: ``scripts/base_train.py`` multiplies every rate by √(B / B_ref) (RiddleHe/nanochat lines 290-297 and 315;
# karpathy/nanochat commit 92d63d4, lines 274 and 287-294, 312: "AdamW: sqrt scaling is standard"). So at B tokens
# per step
#
#     lr_β = 0.5 · √(B / 2¹⁹),   lr_α = 0.005 · √(B / 2¹⁹),   lr_table = 0.15 · √(B / 2¹⁹)
#
# — at the course's 32 × 64 = 2,048 tokens: √(2048 / 524288) = 1/16, lr_β = 0.03125, lr_α = 3.125e-4. Every group
# follows the same warmup/decay schedule. ``OFFICIAL_X0_GROUPS`` holds the rates at B_ref; :func:`official_x0_groups`
# scales them (and by ``TrainConfig.coef_lr_scale``, the factor a declared rate sweep varies).
# Deviations that remain from the official recipe (listed in chapter 04): matrices train with AdamW 3e-3 here, Muon
# 0.02·√(B/B_ref) there; no previous-token "smear" in x0; 240 steps instead of ~3,760; 2 target layers of 8 (4 of 12).
B_REF = 2 ** 19
OFFICIAL_X0_GROUPS = {
    "x0_beta_gamma": {"lr": 0.5, "weight_decay": 0.0, "betas": (0.96, 0.95)},
    "x0_alpha": {"lr": 0.005, "weight_decay": 0.05, "betas": (0.8, 0.95)},
    "bank_table": {"lr": 0.15, "weight_decay": 0.01, "betas": (0.8, 0.995)},
}


def batch_lr_scale(tokens_per_step: int) -> float:
    """nanochat's batch-size rule for AdamW rates, ``√(B / 2¹⁹)`` (``scripts/base_train.py``): 2,048 tokens → 1/16.
    Raises ValueError for a non-positive B."""
    if tokens_per_step <= 0:
        raise ValueError(f"tokens_per_step must be > 0, got {tokens_per_step}")
    return math.sqrt(tokens_per_step / B_REF)


def official_x0_groups(tokens_per_step: int, coef_lr_scale: float = 1.0) -> dict[str, dict]:
    """The official x0 optimizer groups at ``tokens_per_step`` tokens per step: every rate times
    :func:`batch_lr_scale`, and the coefficient groups (α, β/γ) also times ``coef_lr_scale`` (a rate sweep's factor;
    the table keeps 1). Betas and weight decay as the source has them. Raises ValueError on non-positive inputs."""
    if coef_lr_scale <= 0:
        raise ValueError(f"coef_lr_scale must be > 0, got {coef_lr_scale}")
    s = batch_lr_scale(tokens_per_step)
    return {g: {**v, "lr": v["lr"] * s * (1.0 if g == "bank_table" else coef_lr_scale)}
            for g, v in OFFICIAL_X0_GROUPS.items()}


# Which kinds of x0 parameter (``X0Injection.param_kinds``) each official group takes.
OFFICIAL_X0_KINDS = {"x0_beta_gamma": ("beta", "gamma"), "x0_alpha": ("alpha",), "bank_table": ("table",)}


def param_groups(model: TinyGPT, coef_opt: CoefOpt = "course") -> dict[str, list[torch.nn.Parameter]]:
    """Every trainable parameter in exactly one optimizer group, from what the modules declare.

    ``coefficients``: what the x0 paths, value residuals and depth mixer list in ``coefficients()``
    (:meth:`TinyGPT.coefficients`). With ``coef_opt == "official"`` the x0 parameters instead go to the groups of
    ``OFFICIAL_X0_GROUPS``, by the kind each x0 path declares (``param_kinds()``). Every other parameter goes by its
    shape: ``matrices`` (2-D and up, weight decay) or ``vectors``. Under ``course`` the bank table E_v, declared
    no coefficient, is a matrix: it takes the base lr *with* weight decay. Within a group the parameters keep the
    model's parameter order (a training checkpoint stores the optimizer state in that order).

    Raises:
        ValueError: a module declares a parameter in two groups, or the groups do not cover every trainable
            parameter exactly once (:func:`check_param_groups`).
    """
    declared = {"coefficients": list(model.coefficients().values())}
    if coef_opt == "official":
        kinds = [x0.param_kinds() for x0 in model.x0_paths()]
        declared.update({g: [p for k in kinds for kind in OFFICIAL_X0_KINDS[g] for p in k[kind]]
                         for g in OFFICIAL_X0_GROUPS})
        official = {id(p) for g in OFFICIAL_X0_GROUPS for p in declared[g]}
        declared["coefficients"] = [p for p in declared["coefficients"] if id(p) not in official]
    names = {id(p): n for n, p in model.named_parameters()}
    group_of: dict[int, str] = {}
    for g, ps in declared.items():
        for p in ps:
            if id(p) in group_of:
                raise ValueError(f"parameter {names.get(id(p), '?')} is declared in two optimizer groups: "
                                 f"{group_of[id(p)]} and {g}")
            group_of[id(p)] = g
    groups: dict[str, list] = {"matrices": [], "vectors": [], "coefficients": [], **{g: [] for g in OFFICIAL_X0_GROUPS}}
    for name, p in model.named_parameters():
        if p.requires_grad:
            groups[group_of.get(id(p), "matrices" if p.ndim >= 2 else "vectors")].append(p)
    check_param_groups(model, groups)
    return groups


def check_param_groups(model: torch.nn.Module, groups: dict[str, list]) -> None:
    """Check that ``groups`` (group name -> parameters) hold every trainable parameter of ``model`` exactly once
    and nothing else.

    Raises:
        ValueError: naming the parameters left out, those in more than one group (or twice in one), and any that
            are not trainable parameters of the model.
    """
    names = {id(p): n for n, p in model.named_parameters() if p.requires_grad}
    placed = [(id(p), g) for g, ps in groups.items() for p in ps]
    count = Counter(i for i, _ in placed)
    missing = [n for i, n in names.items() if count[i] == 0]
    doubled = sorted({names.get(i, "?") for i, _ in placed if count[i] > 1})
    foreign = sorted({g for i, g in placed if i not in names})
    if missing or doubled or foreign:
        raise ValueError(f"optimizer groups must hold every trainable parameter exactly once: left out {missing}, "
                         f"more than once {doubled}, groups holding a tensor that is not a trainable parameter of "
                         f"the model {foreign}")


def make_optimizer(model: TinyGPT, cfg: TrainConfig, tokens_per_step: int | None = None) -> torch.optim.AdamW:
    """AdamW over :func:`param_groups`: matrices (lr, weight decay), vectors (lr, no decay), coefficients
    (coef_lr, no decay), and with ``cfg.coef_opt == "official"`` the x0 parameters in the official bank-of-values
    groups at the source's batch-scaled rates (:func:`official_x0_groups` at ``tokens_per_step``, default
    ``cfg.batch_size × model.cfg.block_size``; value-residual λ and depth-mixing weights stay coefficients). Empty
    groups are left out. Each group records its ``name`` and ``base_lr`` (the schedule scales ``lr`` from it)."""
    groups = param_groups(model, cfg.coef_opt)
    tokens = tokens_per_step or cfg.batch_size * model.cfg.block_size
    settings = {"matrices": {"lr": cfg.lr, "weight_decay": cfg.weight_decay},
                "vectors": {"lr": cfg.lr, "weight_decay": 0.0},
                "coefficients": {"lr": cfg.coef_lr, "weight_decay": 0.0},
                **official_x0_groups(tokens, cfg.coef_lr_scale)}
    opt_groups = [{"params": ps, "name": g, **settings[g]} for g, ps in groups.items() if ps]
    for g in opt_groups:
        g["base_lr"] = g["lr"]
    return torch.optim.AdamW(opt_groups, betas=(0.9, 0.95))


def optimizer_settings(opt: torch.optim.Optimizer) -> list[dict]:
    """What each optimizer group trains with, JSON-ready: ``[{"name", "lr", "betas", "weight_decay", "n_params"}]``
    (``lr`` the group's base rate; ``n_params`` the numbers it holds): what a result records of every run."""
    return [{"name": g["name"], "lr": g["base_lr"], "betas": list(g["betas"]), "weight_decay": g["weight_decay"],
             "n_params": sum(p.numel() for p in g["params"])} for g in opt.param_groups]


def masked_loss(logits, targets, mask=None):
    """Mean cross-entropy over all positions, or over the positions where ``mask`` is True."""
    loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="none")
    return loss.mean() if mask is None else loss[mask.flatten()].mean()


@torch.no_grad()
def evaluate(model: TinyGPT, data: TokenData | SyntheticTask, cfg: TrainConfig,
             max_batches: int | None | str = "cfg", *, precision: str = "auto",
             world: distributed.World | None = None, split: str = "val") -> tuple[float, float]:
    """Validation loss (nats) and next-token accuracy. For a corpus: consecutive windows of the validation split
    (all of it when ``eval_batches`` is None; ``split="train"``: of the training split, the same way: the loss on
    text the model may have read, beside the validation loss); for a synthetic task: a fixed set drawn with seed
    10_000 + seed (``split`` does not apply).

    Runs on the model's device (bf16 autocast on CUDA unless ``precision="fp32"``). With ``world`` (what
    :func:`train` passes under ``torchrun``) the batches are dealt out over the ranks and the sums all-reduced, so
    every rank returns the same numbers; every rank must then call it.
    """
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    amp = autocast_dtype(device, precision)
    w = world or distributed.World()
    max_batches = cfg.eval_batches if max_batches == "cfg" else max_batches
    total, correct, count = 0.0, 0, 0
    if isinstance(data, SyntheticTask):
        g = torch.Generator().manual_seed(10_000 + cfg.seed)
        batches = [data.batch(cfg.batch_size, g) for _ in range(max_batches or 20)]
    else:
        batches = [(x, y, None) for x, y in data.eval_batches(split, cfg.batch_size, max_batches)]
    for x, y, mask in batches[w.rank::w.size]:
        x, y = x.to(device), y.to(device)
        with autocast(device, amp):
            logits = model(x).logits
        per_tok = F.cross_entropy(logits.flatten(0, 1).float(), y.flatten(), reduction="none")
        hit = (logits.argmax(-1) == y).flatten()
        if mask is not None:
            mask = mask.to(device).flatten()
            per_tok, hit = per_tok[mask], hit[mask]
        total += per_tok.sum().item()
        correct += hit.sum().item()
        count += per_tok.numel()
    if w.size > 1:
        total, correct, count = distributed.all_reduce_sum([total, correct, count], device)
    model.train(was_training)
    return total / count, correct / count


def _snapshot_coefficients(model: TinyGPT, history: History) -> None:
    for name, p in model.coefficients().items():
        history.coefficients.setdefault(name, []).append(p.detach().tolist())


def train(model: TinyGPT, data: TokenData | SyntheticTask, cfg: TrainConfig | None = None, *,
          progress: bool = True, desc: str = "train", device: str | torch.device | None = None,
          precision: str | None = None, compile: bool | str | None = None,
          checkpoint_dir: str | Path | None = None, checkpoint_every: int | None = None,
          resume: bool | None = None, options: RunOptions | None = None) -> History:
    """Train ``model`` in place and return its :class:`History`.

    The batches come from a generator seeded with ``cfg.seed``: two models trained with the same seed see the same
    batches in the same order (a paired comparison). Coefficients are logged at every evaluation.

    Args:
        progress: draw a progress bar. It stays off when ``options.progress`` is False (the commands'
            ``--quiet``) and when ``TQDM_DISABLE`` is set (see :mod:`vrs_edu.lab.progress`).
        device: where to train (see :func:`~vrs_edu.lab.device.resolve_device`); None = ``options.device``,
            else wherever the model is. The model is moved back to where it came from afterwards, so
            callers that measure it on CPU tensors keep working.
        precision: ``auto`` = bf16 autocast on CUDA, fp32 elsewhere; ``fp32`` turns autocast off.
        compile: ``True`` runs the model through ``torch.compile`` (a string names its backend); off by default.
        checkpoint_dir: folder for the training state; written every ``checkpoint_every`` steps and at the end.
        resume: continue from the newest checkpoint in ``checkpoint_dir`` (start from step 0 when there is none).
            The checkpoint's training config, model config and data must equal this call's.
        options: the command's :class:`~vrs_edu.lab.options.RunOptions` (None: the defaults); the keywords above
            win over them where given. With ``options.checkpoint_root`` and no ``checkpoint_dir`` the run
            checkpoints to its own folder under the root (:func:`run_key`).

    Under ``torchrun`` (a process group initialised, see :mod:`vrs_edu.lab.distributed`) the model is wrapped in
    DistributedDataParallel; ``cfg.batch_size`` is the *global* batch, split over the ranks; rank 0 alone shows
    the progress bar and writes checkpoints; every rank returns the same history.

    Raises:
        ValueError: a bad config, a data vocabulary larger than the model's, a global batch that the processes
            cannot share equally, or a checkpoint that does not belong to this run.
        FloatingPointError: the loss became NaN or infinite.
    """
    cfg = (cfg or TrainConfig()).validate()
    if isinstance(data, TokenData) and data.vocab_size > model.cfg.vocab_size:
        raise ValueError(f"the data has vocab_size={data.vocab_size} but the model only {model.cfg.vocab_size}")
    opts = options or RunOptions()
    precision = opts.precision if precision is None else precision
    compile = opts.compile if compile is None else compile
    resume = opts.resume if resume is None else resume
    every = opts.checkpoint_every if checkpoint_every is None else checkpoint_every
    if every is not None and every < 1:
        raise ValueError(f"checkpoint_every must be >= 1, got {every}")
    if checkpoint_dir is None and opts.checkpoint_root is not None:
        checkpoint_dir = Path(opts.checkpoint_root) / run_key(model, data, cfg, desc)
    if resume and checkpoint_dir is None:
        raise ValueError("resume=True needs a checkpoint_dir (or options.checkpoint_root)")
    w = distributed.world()
    distributed.check_batch(cfg.batch_size, w)

    home = next(model.parameters()).device
    device = opts.device if device is None else device
    dev = home if device is None else resolve_device(device)
    amp = autocast_dtype(dev, precision)
    model.to(dev)
    opt = make_optimizer(model, cfg, cfg.batch_size * data.block_size)
    g = torch.Generator().manual_seed(cfg.seed)
    history, start, wall_before = History(), 0, 0.0
    fingerprint = data_fingerprint(data)
    if resume:
        state = load_training_state(checkpoint_dir, model, opt, g, cfg, fingerprint)
        if state is not None:
            history, start, wall_before = state["history"], state["step"], state["history"].wall_time_s
        if progress and w.is_main:
            print(f"{desc}: " + (f"resumed from step {start} of {cfg.steps} ({checkpoint_dir})" if state else
                                 f"no checkpoint in {checkpoint_dir} yet: starting from step 0"))
    net = distributed.wrap(model, dev, model.cfg.vocab_size) if w.size > 1 else model
    if compile:
        net = torch.compile(net) if compile is True else torch.compile(net, backend=compile)

    model.train()
    t0 = time.perf_counter()
    # TQDM_DISABLE=1 switches the bar off as well (progress_bar reads it; tqdm ignores it once disable= is passed).
    bar = progress_bar(range(start, cfg.steps), show=progress and opts.progress and w.is_main, desc=desc,
                       leave=False, initial=start, total=cfg.steps)
    for step in bar:
        for group in opt.param_groups:
            group["lr"] = group["base_lr"] * lr_factor(step, cfg)
        # Every rank draws the whole global batch (same generator, same order as one process) and keeps its rows.
        if isinstance(data, SyntheticTask):
            x, y, mask = data.batch(cfg.batch_size, g)
        else:
            (x, y), mask = data.batch("train", cfg.batch_size, g), None
        n_scored = int(mask.sum()) if mask is not None else y.numel()
        x, y, mask = (None if t is None else distributed.shard(t, w).to(dev, non_blocking=True) for t in (x, y, mask))
        with autocast(dev, amp):
            logits = net(x).logits
            if w.size == 1:
                loss = masked_loss(logits, y, mask)
            else:
                loss = distributed.shard_loss(logits, y, mask, n_scored, w)
        value = loss.item() if w.size == 1 else distributed.all_reduce_sum([loss.item() / w.size], dev)[0]
        if not math.isfinite(value):
            raise FloatingPointError(f"loss became {value} at step {step}; lower lr (now {cfg.lr})")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        history.steps.append(step)
        history.train_loss.append(value)
        if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps:
            vl, va = evaluate(model, data, cfg, precision=precision, world=w)
            history.eval_steps.append(step + 1)
            history.val_loss.append(vl)
            history.val_acc.append(va)
            _snapshot_coefficients(model, history)
            bar.set_postfix(val=f"{vl:.3f}")
        history.wall_time_s = wall_before + time.perf_counter() - t0
        if checkpoint_dir is not None and ((every and (step + 1) % every == 0) or step + 1 == cfg.steps):
            save_training_state(checkpoint_dir, model, opt, g, step + 1, history, cfg, fingerprint,
                                getattr(data, "tokenizer", None))
    bar.close()
    history.wall_time_s = wall_before + time.perf_counter() - t0
    model.eval()
    model.to(home)
    return history


# ---------------------------------------------------------------------------------------------------------------
# Checkpoints: weights as safetensors (no pickle), config and tokenizer as JSON.


def save_checkpoint(out_dir: str | Path, model: TinyGPT, tokenizer: Tokenizer | None = None,
                    extra: dict | None = None) -> Path:
    """Write ``model.safetensors``, ``config.json`` (model config + ``extra``) and ``tokenizer.json``.

    Under ``torchrun`` only rank 0 writes (every rank holds the same weights); the others just return the path.
    """
    out = Path(out_dir)
    if not distributed.is_main():
        return out
    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
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
    _load_weights(model, path)
    tokenizer = None
    if (path / "tokenizer.json").exists():
        tokenizer = Tokenizer.from_json((path / "tokenizer.json").read_text())
        if tokenizer.vocab_size != model.cfg.vocab_size:
            raise ValueError(f"checkpoint {path}: tokenizer vocabulary {tokenizer.vocab_size} != model vocab_size "
                             f"{model.cfg.vocab_size}")
    model.eval()
    return model, tokenizer, meta


def _load_weights(model: TinyGPT, path: Path) -> None:
    """Load ``path/model.safetensors`` into ``model`` (on its device), naming every tensor that does not fit."""
    device = next(model.parameters()).device
    state = load_file(path / "model.safetensors", device=str(device))
    if model.cfg.depth_mixer == "vertical":   # a one-time migration: Vertical Attention's query projection was
        # saved as `pseudo_query` (a name borrowed from Attention Residuals) before it was named for what it is
        state = {k.replace("depth.pseudo_query.", "depth.query_proj.", 1): v for k, v in state.items()}
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


# ---------------------------------------------------------------------------------------------------------------
# Training state for resume: everything that decides the rest of a run. A checkpoint folder ``step-NNNNNNN/``
# holds the weights (a normal checkpoint, :func:`load_checkpoint` reads it), the AdamW moments and step counts
# (``optimizer.safetensors`` + ``optimizer.json``), the batch generator's state (``rng.safetensors``) and the history
# so far (``state.json``). The file ``latest`` names the newest complete folder; it is replaced atomically after
# the folder is written, so an interruption while writing leaves the previous checkpoint in charge.
# (TinyGPT has no dropout, so no other random state influences training.)


def data_fingerprint(data: TokenData | SyntheticTask) -> dict:
    """What identifies the training data: a CRC of the token ids (corpus) or the task's name and shape."""
    if isinstance(data, SyntheticTask):
        return {"task": data.name, "vocab_size": data.vocab_size, "block_size": data.block_size}
    return {"train_tokens": len(data.train), "val_tokens": len(data.val), "block_size": data.block_size,
            "vocab_size": data.vocab_size, "crc32": zlib.crc32(data.train.numpy().tobytes())}


def run_key(model: TinyGPT, data: TokenData | SyntheticTask, cfg: TrainConfig, desc: str) -> str:
    """A folder name for one run: its description plus a hash of model config, training config and data.

    Two calls get the same key only when they would compute the same thing, so a recipe rerun with ``--resume``
    finds each of its runs' checkpoints (finished runs load at once, the interrupted one continues).
    """
    blob = json.dumps([model.cfg.to_dict(), asdict(cfg), data_fingerprint(data)], sort_keys=True, default=str)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", desc).strip("-") or "run"
    return f"{slug}-{hashlib.sha1(blob.encode()).hexdigest()[:10]}"


def latest_checkpoint(checkpoint_dir: str | Path) -> Path | None:
    """The newest complete training-state folder in ``checkpoint_dir``, or None."""
    pointer = Path(checkpoint_dir) / "latest"
    if not pointer.exists():
        return None
    path = Path(checkpoint_dir) / pointer.read_text().strip()
    if not (path / "state.json").exists():
        raise FileNotFoundError(f"{pointer} names {path.name}, which has no state.json: the checkpoint folder is "
                                f"damaged; delete {checkpoint_dir} to start over")
    return path


def save_training_state(checkpoint_dir: str | Path, model: TinyGPT, opt: torch.optim.Optimizer,
                        generator: torch.Generator, step: int, history: History, cfg: TrainConfig,
                        fingerprint: dict, tokenizer: Tokenizer | None = None) -> Path:
    """Write ``checkpoint_dir/step-{step}/`` (rank 0 only), point ``latest`` at it, delete older ones."""
    root = Path(checkpoint_dir)
    out = root / f"step-{step:07d}"
    if distributed.is_main():
        save_checkpoint(out, model, tokenizer, {"train": asdict(cfg), "step": step})
        sd = opt.state_dict()
        tensors, scalars = {}, {}
        for pid, st in sd["state"].items():
            for k, v in st.items():
                if torch.is_tensor(v):
                    tensors[f"{pid}.{k}"] = v.detach().cpu().contiguous()
                else:
                    scalars.setdefault(str(pid), {})[k] = v
        save_file(tensors, out / "optimizer.safetensors")
        (out / "optimizer.json").write_text(json.dumps({"param_groups": sd["param_groups"], "state": scalars}))
        save_file({"generator": generator.get_state()}, out / "rng.safetensors")
        (out / "state.json").write_text(json.dumps(
            {"step": step, "train": asdict(cfg), "model": model.cfg.to_dict(), "data": fingerprint,
             "world_size": distributed.world().size, "history": history.to_dict()}, indent=1))
        tmp = root / "latest.tmp"
        tmp.write_text(out.name)
        os.replace(tmp, root / "latest")
        for old in root.glob("step-*"):
            if old != out and old.is_dir():
                shutil.rmtree(old)
    distributed.barrier()
    return out


def load_training_state(checkpoint_dir: str | Path, model: TinyGPT, opt: torch.optim.Optimizer,
                        generator: torch.Generator, cfg: TrainConfig, fingerprint: dict) -> dict | None:
    """Restore weights, optimizer and generator from the newest checkpoint in ``checkpoint_dir`` (in place).

    Returns ``{"step": steps done, "history": History}``, or None when there is no checkpoint yet.

    Raises:
        ValueError: the checkpoint was written by a run with another training config, model config or data
            (the message names the fields that differ).
    """
    path = latest_checkpoint(checkpoint_dir)
    if path is None:
        return None
    state = json.loads((path / "state.json").read_text())
    now = {"train": asdict(cfg), "model": model.cfg.to_dict(), "data": fingerprint}
    now = json.loads(json.dumps(now))  # tuples -> lists, as in the file
    diff = [f"{part}.{k}: checkpoint {state[part].get(k)!r} vs now {v!r}"
            for part in now for k, v in now[part].items() if state[part].get(k) != v]
    if diff:
        raise ValueError(f"checkpoint {path} belongs to another run: {diff[:6]}; use another checkpoint folder "
                         f"or drop --resume")
    _load_weights(model, path)
    tensors = load_file(path / "optimizer.safetensors")
    meta = json.loads((path / "optimizer.json").read_text())
    opt_state: dict[int, dict] = {}
    for key, v in tensors.items():
        pid, name = key.split(".", 1)
        opt_state.setdefault(int(pid), {})[name] = v
    for pid, st in meta["state"].items():
        opt_state.setdefault(int(pid), {}).update(st)
    groups = [{**g, "betas": tuple(g["betas"])} if "betas" in g else g for g in meta["param_groups"]]
    opt.load_state_dict({"state": opt_state, "param_groups": groups})
    generator.set_state(load_file(path / "rng.safetensors")["generator"])
    return {"step": state["step"], "history": History(**state["history"])}
