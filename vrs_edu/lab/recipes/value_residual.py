"""``vrs-edu reproduce value-residual``: ResFormer's value residual and its variants against the baseline.

Claim under test (Zhou et al., "Value Residual Learning", arXiv 2410.17897): mixing the first layer's values into
every later layer, ``V_n' = λ1·V_1 + λ2·V_n``, lowers the loss at equal steps (−0.027 nats at 82M, 8 layers; the
paper's data-efficiency figure: 13.6–20.3 % less data for equal loss), keeps attention less concentrated (higher
token-importance entropy), reduces over-smoothing, and — with learnable λ — puts more weight on V_1 in deeper layers.

Set-up, sized for the 2-core CPU (``shared/research/cpu-regime-notes.md``: the direction shows only with word tokens
and deep-narrow models): the ``word-8x64`` preset (8 layers like the paper's 82M model, D = 64, word tokens of the
Python reference docs) and the synthetic associative-recall task, five variants (baseline, ResFormer 0.5/0.5,
learnable λ, SVFormer, NeuTRENO λ = 0.4), three seeds each. Same seed ⇒ same initial weights and batches, so the
per-seed differences are paired. Each run logs its loss curve, coefficient trajectories, per-layer metrics and wall
time; the recipe also times one training step of every variant side by side (interleaved, best of several rounds,
so that the equal-wall-time comparison is not decided by whatever else the machine was doing).

The summary (``result["summary"]``) is computed by :mod:`vrs_edu.lab.analysis`; the chapter recomputes and prints it.
"""
from __future__ import annotations

import time
from dataclasses import replace

import torch

from ...nn.model import TinyGPT
from ..analysis import ci_excludes_zero, compare_to_baseline, depth_slope, paired_difference, verdict
from ..data import associative_recall
from ..experiments import compare_variants, recipe
from ..presets import make_run

VARIANTS = {
    "baseline": {},
    "resformer": {"value_residual": "resformer"},
    "learnable": {"value_residual": "learnable"},
    "svformer": {"value_residual": "svformer"},
    "neutreno": {"value_residual": "neutreno"},
}

# Sizes, from measured step times. Planned with word-8x64 ≈ 0.1 s/step at 2 threads on the idle machine; measured
# (best of 5 interleaved rounds, 1 thread, shared machine) word-8x64 ≈ 0.17 s/step and the 4-pair recall task
# (T = 24) ≈ 0.06 s/step. Measured full runs on the idle 2-core machine at 2 threads (the CLI's default): this recipe
# 14.3 min wall, bank-of-values 14.8 min (budget 20 min each; `python -m vrs_edu.bench recipes` reprints them).
# The thread count changes floating-point summation order, so a 1-thread run gives slightly different numbers.
# The pilot recall task (8 pairs) learned too slowly for this budget; with 4 pairs the models get well past copying
# a random context value but do not solve the task: the chapters print the accuracy reached.
CORPUS = {"preset": "word-8x64", "train": {"steps": 240, "eval_every": 20}}
RECALL_TASK = {"n_pairs": 4, "n_key_symbols": 8, "n_value_symbols": 16, "key_len": 2, "n_queries": 4}
RECALL = {"preset": "word-8x64", "train": {"steps": 500, "eval_every": 25, "eval_batches": 8}}
QUICK_STEPS = 12


def step_seconds(preset: str, variants: dict[str, dict], vocab_size: int, seq_len: int, *, rounds: int = 3,
                 steps: int = 3) -> dict[str, float]:
    """Seconds per training step (forward, backward, AdamW) of each variant, measured *interleaved*: every round
    times ``steps`` steps of every variant in turn, and each variant keeps its best round. On a shared machine the
    best round is the least disturbed one, and interleaving exposes every variant to the same background load."""
    models, opts = {}, {}
    _, mcfg, tcfg = make_run(preset)
    g = torch.Generator().manual_seed(0)
    x = torch.randint(vocab_size, (tcfg.batch_size, seq_len), generator=g)
    y = torch.randint(vocab_size, (tcfg.batch_size, seq_len), generator=g)
    for name, over in variants.items():
        model_over = {k: v for k, v in over.items() if k in mcfg.__dataclass_fields__}
        models[name] = TinyGPT(replace(mcfg, vocab_size=vocab_size, **model_over))
        opts[name] = torch.optim.AdamW(models[name].parameters(), lr=1e-4)
    best = {name: float("inf") for name in variants}
    for _ in range(rounds):
        for name, model in models.items():
            t0 = time.perf_counter()
            for _ in range(steps):
                loss = model(x, y).loss
                opts[name].zero_grad(set_to_none=True)
                loss.backward()
                opts[name].step()
            best[name] = min(best[name], (time.perf_counter() - t0) / steps)
    return best


def run_suite(preset: str, variants: dict[str, dict], seeds: list[int], quick: bool, train: dict, *,
              task=None, ablation_for: tuple[str, ...] = (), checkpoint_for: tuple[str, ...] = (),
              checkpoint_as: str | None = None, desc: str = "", corpus=None, tokenizer: str | None = None) -> dict:
    """Train every variant on one data set (the corpus, or ``task``) for every seed with
    :func:`~vrs_edu.lab.experiments.compare_variants` (its runs side by side under ``--jobs``); the substitution
    ablation (``ablation_for``) and the seed-0 checkpoint (``checkpoint_for``) are only paid for where a chapter
    uses them.
    Adds the interleaved step times and the comparison with the baseline. ``corpus`` and ``tokenizer`` (None: the
    defaults) go to ``compare_variants`` unchanged (``vrs-edu reproduce NAME --corpus FILE --tokenizer KIND``)."""
    part = compare_variants(preset, {name: {**({} if quick else train), **over} for name, over in variants.items()},
                            seeds, quick=quick, quick_steps=QUICK_STEPS, ablation=tuple(ablation_for),
                            checkpoint_as=checkpoint_as, checkpoint_for=tuple(checkpoint_for),
                            metric_batches=2 if quick else 4, desc=desc, task=task, corpus=corpus,
                            tokenizer=tokenizer)
    vocab = part["vocab_size"]
    seq_len = task.block_size if task is not None else make_run(preset)[1].block_size
    part["step_seconds"] = step_seconds(preset, variants, vocab, seq_len, rounds=1 if quick else 5,
                                        steps=1 if quick else 3)
    part["comparison"] = compare_to_baseline(part["runs"], part["step_seconds"])
    return part


def lambda_profiles(runs: list[dict], which: str = "lambda_1") -> list[list[float]]:
    """Per seed, the learned λ1 (``which="lambda_1"``, weight on V_1) or λ2 (``"lambda_2"``, weight on the layer's
    own V_n) of blocks 1..L-1 of a ``learnable`` run, in layer order. Raises ValueError for another ``which``."""
    if which not in ("lambda_1", "lambda_2"):
        raise ValueError(f"which must be 'lambda_1' or 'lambda_2', got {which!r}")
    out = []
    for run in runs:
        coef = run["coefficients"]
        layers = sorted(int(k.split(".")[1]) for k in coef if k.endswith(f"value_residual.{which}"))
        out.append([coef[f"blocks.{l}.value_residual.{which}"] for l in layers])
    return out


def claims(part: dict) -> dict:
    """The published claims, each as a computed test on one data set's runs (see the module docstring)."""
    comp = part["comparison"]
    runs = part["runs"]
    res = comp["resformer"]
    out = {
        "loss_gain_final": {"test": "ResFormer − baseline final val loss: 95% CI below 0",
                            "stat": res["paired_final"], "verdict": verdict(ci_excludes_zero(res["paired_final"]))},
        "loss_gain_before_decay": {
            "test": f"ResFormer − baseline val loss at step {res['before_decay_step']} (last eval before the LR "
                    "decay): 95% CI below 0",
            "stat": res["paired_before_decay"], "verdict": verdict(ci_excludes_zero(res["paired_before_decay"]))},
    }
    if "learnable" in runs:
        slopes = [depth_slope(p, range(1, len(p) + 1)) for p in lambda_profiles(runs["learnable"])]
        stat = paired_difference(slopes, [0.0] * len(slopes))
        out["lambda_1_grows_with_depth"] = {
            "test": "learnable λ1 (on V_1): least-squares slope against layer, 95% CI above 0",
            "stat": stat, "verdict": verdict(ci_excludes_zero(stat, "positive"))}
    for metric, direction, word in (("entropy", "positive", "higher"), ("oversmoothing", "negative", "lower")):
        layers = slice(1, None)    # layers >= 1 (index 0 is identical in both: V_1 is layer 0's own value)
        v = [sum(r["layer_metrics"][metric][layers]) / len(r["layer_metrics"][metric][layers])
             for r in runs["resformer"]]
        b = [sum(r["layer_metrics"][metric][layers]) / len(r["layer_metrics"][metric][layers])
             for r in runs["baseline"]]
        stat = paired_difference(v, b)
        out[f"{metric}_{word}"] = {"test": f"ResFormer − baseline mean {metric} over layers ≥ 1: 95% CI "
                                           f"{'above' if direction == 'positive' else 'below'} 0",
                                   "stat": stat, "verdict": verdict(ci_excludes_zero(stat, direction))}
    return out


@recipe("value-residual", "ResFormer 0.5/0.5, learnable λ, SVFormer, NeuTRENO vs baseline (word-8x64 corpus and "
        "associative recall, 3 seeds)")
def value_residual(quick: bool, seeds: list[int], *, corpus=None, tokenizer: str | None = None) -> dict:
    task = associative_recall(**RECALL_TASK)
    corpus = run_suite(CORPUS["preset"], VARIANTS, seeds, quick, CORPUS["train"], checkpoint_for=("resformer",),
                       checkpoint_as="value-residual", desc="corpus ", corpus=corpus, tokenizer=tokenizer)
    recall = run_suite(RECALL["preset"], VARIANTS, seeds, quick, RECALL["train"], task=task, desc="recall ")
    recall["task_settings"] = RECALL_TASK
    return {"variants": VARIANTS, "corpus": corpus, "recall": recall,
            "summary": {"corpus": claims(corpus), "recall": claims(recall)},
            "settings": {"corpus": CORPUS, "recall": RECALL, "quick_steps": QUICK_STEPS}}
