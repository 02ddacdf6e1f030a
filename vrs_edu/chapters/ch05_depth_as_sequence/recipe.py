"""``vrs-edu reproduce depth-mixers``: every depth mixer of chapter 05, trained side by side (>= 3 seeds).

The same 8-layer word-level TinyGPT (preset ``word-8x64``, default corpus) with only the depth mixer changed:
standard residual, DenseFormer (arXiv 2402.02622), ELC-BERT (arXiv 2311.02265), Attention Residuals
(arXiv 2603.15031), ShortSWA over depth with K = 2, 4 and the full window (arXiv 2603.16039), and the routers that give
Q, K and V their own depth mixture: DeepCrossAttention (arXiv 2502.06785), MUDDFormer (arXiv 2502.12170) and
Vertical Attention (OpenReview A6uabXKiXc); and a control, the scalar gain (DenseFormer's diagonal only: a learned
gain on the stream, in the same optimizer group, with no read over depth).

**Equal parameter budget.** Every variant shares every parameter of the baseline (same seed ⇒ identical values, so
per-seed differences are paired) and adds only its mixer; each mixer is sized to add at most
:data:`BUDGET_TOLERANCE` of the baseline's parameters (the result file records every count, and the recipe refuses to
run a variant over budget).

For each run the result holds the validation-loss curve, the final loss and accuracy, the parameter counts, the
training time and the learned depth weights: one (L+1, L+1) matrix per stream (row = reading layer, L = the final
read-out; column = source layer, 0 = embedding), averaged over :data:`WEIGHT_BATCHES` validation batches.
Budget: about 18 minutes on an idle 2-core CPU (``--quick``: 6 steps per run, well under a minute). Verdict corpus:
``--corpus kjv`` (a run reads 0.2 epochs of it; the default corpus, read 2 times, puts the loss claims out of
regime). Declared tests, preconditions (:data:`PRECONDITIONS`), effects and the gated scalar-gain controls are below.
The routers' "V reads x0 more than Q and K" is described (:func:`descriptions`, V − Q and V − K apart), not declared:
its premise, deep inputs mostly context (x0-R² below :data:`vrs_edu.lab.premises.DEEP_X0_R2`), fails on every
language-model toy (0.935 here).
"""
from __future__ import annotations

import math
import time
from dataclasses import replace

import torch

from vrs_edu.chapters.ch05_depth_as_sequence.readout import depth_weight_matrices
from vrs_edu.lab.analysis import (DeclaredTest, Precondition, judge, mean, mean_sd, paired_difference, paired_values,
                                  verdict_records)
from vrs_edu.lab.by_corpus import epochs_per_run
from vrs_edu.lab.corpora import corpus_token_data
from vrs_edu.lab.data import unigram_loss
from vrs_edu.lab.experiments import Recipe, run_variants
from vrs_edu.lab.kv_cache import build_kv_cache, cache_bytes
from vrs_edu.lab.metrics import x0_r2
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.premises import (DEEP_X0_R2, DEEP_X0_R2_REASON, LM_TOYS_SHORT, Description, deep_layers, deep_x0_r2,
                                  describe, description_records)
from vrs_edu.lab.presets import scaled_run
from vrs_edu.lab.results import Verdict
from vrs_edu.lab.train import evaluate, train
from vrs_edu.nn.model import TinyGPT

PRESET = "word-8x64"
VARIANTS: dict[str, dict] = {
    "residual": {"depth_mixer": "residual"},
    "denseformer": {"depth_mixer": "denseformer"},
    "elcbert": {"depth_mixer": "elcbert"},
    "attnres": {"depth_mixer": "attnres"},
    "shortswa-k2": {"depth_mixer": "shortswa", "depth_window": 2},
    "shortswa-k4": {"depth_mixer": "shortswa", "depth_window": 4},
    "shortswa-full": {"depth_mixer": "shortswa", "depth_window": None},
    "dca": {"depth_mixer": "dca"},
    "mudd": {"depth_mixer": "mudd"},
    "vertical": {"depth_mixer": "vertical"},
    "scalar_gain": {"depth_mixer": "scalar_gain"},
}
# Training length: sized so that 10 variants x 5 seeds fit 40 CPU-minutes (one thread per run). Measured step
# times (2 threads, lightly loaded machine): 71 ms (residual) to 173 ms (DCA), 1.7 s per step of all ten variants;
# at one thread we count ~1.4x that, 2.4 s. 5 seeds x 160 steps x 2.4 s ≈ 32 min, + 4 evaluations of the whole
# validation split per run and the x0-R² read-out (≈ 2 min) ≈ 34 CPU-min. (The former 200 steps x 3 seeds: 24 min.)
# Evaluated at 80 and 160 steps on the first EVAL_BATCHES validation batches (40 x 16 x 64 = 40,960 tokens; the whole
# split of the default corpus, 45 % of the King James Bible's): the full kjv split four times a run cost 14 of the
# 35 CPU-minutes of its first run. The final train loss is measured on as many training batches (side by side).
EVAL_BATCHES = 40
FULL = dict(steps=160, batch_size=16, warmup=20, eval_every=80, eval_batches=EVAL_BATCHES)
SEEDS = (0, 1, 2, 3, 4)
QUICK = dict(steps=6, batch_size=4, warmup=2, eval_every=6, eval_batches=1)
BUDGET_TOLERANCE = 0.015   # largest allowed relative parameter overhead of a mixer
WEIGHT_BATCHES = 4          # validation batches the learned weights are averaged over (1 in --quick)


def parameter_counts(variants: dict[str, dict] = VARIANTS, vocab_size: int = 2048,
                     options: RunOptions = RunOptions()) -> dict[str, dict]:
    """Parameters of every variant built on :data:`PRESET` (at the size ``options`` ask for):
    ``{"n_params", "extra", "overhead"}`` per variant (extra = parameters the mixer adds to the standard
    residual; overhead = extra / baseline)."""
    _, base_cfg, _ = scaled_run(PRESET, options)
    base = TinyGPT(replace(base_cfg, vocab_size=vocab_size)).num_params()
    out = {}
    for name, over in variants.items():
        _, cfg, _ = scaled_run(PRESET, options, **over)
        n = TinyGPT(replace(cfg, vocab_size=vocab_size)).num_params()
        out[name] = {"n_params": n, "extra": n - base, "overhead": (n - base) / base}
    return out


def _matrix_to_json(m: torch.Tensor) -> list[list[float | None]]:
    return [[None if math.isnan(v) else round(v, 5) for v in row] for row in m.tolist()]


@torch.no_grad()
def learned_depth_weights(model: TinyGPT, batches) -> dict[str, torch.Tensor]:
    """Mean depth-weight matrices per stream over batches (see
    :func:`vrs_edu.chapters.ch05_depth_as_sequence.readout.depth_weight_matrices`; (L+1, 2L+1) over sub-layer outputs for a sub-layer
    mixer). Empty for the standard residual, which has no weights."""
    acc: dict[str, torch.Tensor] = {}
    for x, _ in batches:
        tr = model(x, trace=True).trace
        for s, m in depth_weight_matrices(tr.tensors, model.cfg.n_layers, model.depth.sublayers).items():
            acc[s] = acc.get(s, 0) + m / len(batches)
    return acc


def run_depth_mixers(quick: bool, seeds: list[int], variants: dict[str, dict] | None = None, *, corpus=None,
                     tokenizer: str | None = None, options: RunOptions = RunOptions(), full: dict = FULL,
                     name: str = "depth-mixers") -> dict:
    """Train every variant for every seed (``full``: the schedule of a full run; ``--quick``: :data:`QUICK`); return
    the payload the runner writes to ``<name>.json``. It records ``epochs_read`` (tokens one run reads over the
    training split: below 1, the runs cannot memorise the text).

    Raises:
        ValueError: a variant whose mixer adds more than :data:`BUDGET_TOLERANCE` of the baseline's parameters.
    """
    variants = VARIANTS if variants is None else variants
    schedule = QUICK if quick else full
    preset, mcfg0, _ = scaled_run(PRESET, options, **schedule)
    kind = tokenizer or preset.tokenizer  # corpus / tokenizer: None = the default corpus / the preset's
    data = corpus_token_data(corpus, kind, preset.vocab_size or 2048, mcfg0.block_size)
    counts = parameter_counts(variants, data.vocab_size, options)
    over = {k: v["overhead"] for k, v in counts.items() if v["overhead"] > BUDGET_TOLERANCE}
    if over:
        raise ValueError(
            "variants over the parameter budget: " + ", ".join(f"{k} adds {v:.2%}" for k, v in over.items())
            + f" (tolerance {BUDGET_TOLERANCE:.1%}); a small vocabulary ({data.vocab_size:,} tokens here) shrinks "
            "the shared model: on your own corpus, use a text with at least about 1,500 distinct words")
    weight_batches = list(data.eval_batches("val", schedule["batch_size"], 1 if quick else WEIGHT_BATCHES))
    runs, configs = run_variants(PRESET, variants, seeds, data, train_one_mixer, overrides=schedule, options=options,
                                 desc=f"{name} ", weight_batches=weight_batches)
    return {"preset": PRESET, "corpus": "pydoc_data.topics" if corpus is None else corpus.name, "tokenizer": kind,
            "corpus_tokens": {"train": len(data.train), "val": len(data.val)},
            "epochs_read": schedule["steps"] * schedule["batch_size"] * mcfg0.block_size / len(data.train),
            "vocab_size": data.vocab_size, "unigram_val_loss": unigram_loss(data), "schedule": schedule,
            "budget_tolerance": BUDGET_TOLERANCE, "parameter_counts": counts, "configs": configs, "runs": runs}


def train_one_mixer(mcfg, tcfg, data, weight_batches, desc: str, progress: bool,
                    options: RunOptions = RunOptions()) -> dict:
    """One run of :func:`run_depth_mixers`, the ``measure`` of :func:`~vrs_edu.lab.experiments.run_variants`
    (module level, so that a worker process can run it)."""
    model = TinyGPT(mcfg)
    t0 = time.process_time()
    hist = train(model, data, tcfg, progress=progress, desc=desc, options=options)
    cpu = time.process_time() - t0
    train_loss, _ = evaluate(model, data, tcfg, split="train")   # beside the validation loss: memorisation shows
    weights = learned_depth_weights(model, weight_batches)
    r2 = stream_x0_r2(model, weight_batches)
    k = 10 if len(hist.train_loss) >= 10 else 1   # train loss in chunks of 10 steps (keeps the file small)
    return {
        "seed": mcfg.seed, "final_val_loss": hist.val_loss[-1], "final_val_acc": hist.val_acc[-1],
        "final_train_loss": train_loss,
        "kv_bytes_per_token": cache_bytes(build_kv_cache(model, weight_batches[0][0])) / weight_batches[0][0].numel(),
        "x0_r2": r2,
        "eval_steps": hist.eval_steps, "val_loss": hist.val_loss,
        "train_loss_every_10": [sum(hist.train_loss[i:i + k]) / len(hist.train_loss[i:i + k])
                                for i in range(0, len(hist.train_loss), k)],
        "n_params": model.num_params(), "train_wall_s": round(hist.wall_time_s, 2),
        "train_cpu_s": round(cpu, 2),
        "depth_weights": {s: _matrix_to_json(m) for s, m in weights.items()},
    }


def depth_mixers(quick: bool, seeds: list[int], *, corpus=None, tokenizer: str | None = None,
                 options: RunOptions = RunOptions()) -> dict:
    result = run_depth_mixers(quick, seeds, corpus=corpus, tokenizer=tokenizer, options=options)
    result["verdicts"] = verdict_records(verdicts(result))
    result["descriptions"] = description_records(descriptions(result))
    return result


# ---------------------------------------------------------------------------------------------------------------
# Reading the result file (used by chapter 05 and its tests).


def loss_table(result: dict) -> list[dict]:
    """One row per variant: mean and sd of the final validation loss over seeds, the mean paired difference to
    the standard residual (same seed, same init, same batches) with its standard error and Student-t 95 % interval
    (:func:`vrs_edu.lab.analysis.paired_difference`), and parameter counts."""
    base = {r["seed"]: r["final_val_loss"] for r in result["runs"].get("residual", [])}
    rows = []
    for name, runs in result["runs"].items():
        losses = [r["final_val_loss"] for r in runs]
        paired = [(r["final_val_loss"], base[r["seed"]]) for r in runs if r["seed"] in base]
        diffs = [a - b for a, b in paired]
        ci = paired_difference(*zip(*paired)).ci if paired else (float("nan"), float("nan"))
        counts = result["parameter_counts"][name]
        rows.append({"variant": name, "mean": mean(losses), "sd": mean_sd(losses)[1], "n_seeds": len(losses),
                     "delta": mean(diffs) if diffs else float("nan"),
                     "delta_se": mean_sd(diffs)[1] / math.sqrt(len(diffs)) if len(diffs) > 1 else float("nan"),
                     "delta_ci": tuple(ci), "n_better": sum(d < 0 for d in diffs),
                     "n_params": counts["n_params"], "extra": counts["extra"], "overhead": counts["overhead"],
                     "train_cpu_s": mean([r["train_cpu_s"] for r in runs])})
    return rows


def mean_weights(result: dict, variant: str) -> dict[str, torch.Tensor]:
    """The learned depth-weight matrices of ``variant`` per stream, averaged over seeds (NaN above the diagonal)."""
    out: dict[str, torch.Tensor] = {}
    runs = result["runs"][variant]
    for run in runs:
        for s, m in run["depth_weights"].items():
            t = torch.tensor([[float("nan") if v is None else v for v in row] for row in m])
            out[s] = out.get(s, 0) + t / len(runs)
    return out


def source_share(matrix: torch.Tensor, rows, source: int = 0) -> float:
    """Share of the absolute weight that the reads in ``rows`` put on ``source`` (0 = the embedding), averaged over
    the rows: ``mean_l |M[l, source]| / Σ_j |M[l, j]|``. A uniform read over l + 1 sources gives 1 / (l + 1)."""
    vals = []
    for l in rows:
        row = matrix[l, : l + 1].abs()
        vals.append(float(row[source] / row.sum()))
    return sum(vals) / len(vals)




# ---------------------------------------------------------------------------------------------------------------
# A common basis for the routers, and the pre-declared tests (committed before the full run).
#
# "Share of weight on source 0" compares weights over *states* (DenseFormer, MUDD, ShortSWA: every state already
# contains the embedding) with weights over *outputs* (ELC-BERT, AttnRes, DCA, Vertical): incomparable numbers.
# The common basis here is what each projection actually receives: the x0-R² of the input of Q, K and V in every
# layer (:func:`vrs_edu.lab.metrics.x0_r2`: the share of its variance an affine map of the token's x0 explains).
# ELC-BERT's read-out: the paper's MLM head reads the last layer only; here the final read-out (row L of the depth
# weights) is a learned softmax mix over all outputs, like every other row. This is a documented deviation.


@torch.no_grad()
def stream_x0_r2(model: TinyGPT, batches) -> dict[str, list[float]]:
    """Per layer, the x0-R² of the input of Q, K and V, averaged over ``batches`` of (x, y):
    ``{"q": [L values], "k": [...], "v": [...]}``."""
    acc = {s: [0.0] * model.cfg.n_layers for s in "qkv"}
    for x, _ in batches:
        tr = model(x, trace=True).trace
        token_x0 = torch.nn.functional.rms_norm(tr["embed"], (tr["embed"].size(-1),), eps=1e-6)
        for s in "qkv":
            for l, h in enumerate(tr.layers(f"attn.{s}_in")):
                acc[s][l] += x0_r2(h, token_x0) / len(batches)
    return acc


ROUTERS = ("dca", "mudd", "vertical")   # the mixers that give Q, K and V their own depth mixture
MIXER_SOURCES = {
    "denseformer": "DenseFormer (arXiv 2402.02622, abstract): better perplexity at equal size",
    "elcbert": "ELC-BERT (arXiv 2311.02265): won BabyLM strict and strict-small",
    "attnres": "Attention Residuals (arXiv 2603.15031): equal to a baseline trained with 1.25x compute",
    "shortswa-k2": "ShortSWA over depth (arXiv 2603.16039, a position note without experiments)",
    "shortswa-k4": "ShortSWA over depth (arXiv 2603.16039, a position note without experiments)",
    "shortswa-full": "ShortSWA over depth (arXiv 2603.16039, a position note without experiments)",
    "dca": "DeepCrossAttention (arXiv 2502.06785, abstract): better perplexity at equal training time",
    "mudd": "MUDDFormer (arXiv 2502.12170, abstract): matches Transformers trained with 1.8-2.4x compute",
    "vertical": "Vertical Attention (OpenReview A6uabXKiXc): lower pretraining loss than vanilla",
}


# Smallest effects of interest, declared before the runs (issue 27: in the quantity's units, with their source).
MIXER_GAIN = -0.01
MIXER_GAIN_SOURCE = ("declared: 0.01 nats, about a third of the value residual's published -0.027 (arXiv 2410.17897, "
                     "Table 5); the mixers' abstracts give perplexities at other scales, not a loss in our units")
X0_MARGIN = 0.05
X0_MARGIN_SOURCE = "declared: 0.05 of x0-R² (the post gives heat maps, no number; chapter 04's margins were 0.01-0.15)"
# The premise of the router claims is chapter 04's, declared once (vrs_edu.lab.premises.DEEP_X0_R2, 0.5). The 0.9
# ceiling this module had was set after seeing the stored runs (review 3, H3): it is gone. The name stays, holding the
# one threshold, for the chapters that read it.
DEEP_X0_CEILING = DEEP_X0_R2

# Preconditions (facts read from one number of the result, no statistics).
SUB_EPOCH = Precondition("sub_epoch", "the runs read less than one epoch of their training text, so a lower loss is not "
                         "memorisation (second experiment review, #5; both directions: memorising can fake a gain or, "
                         "by overfitting both arms alike, hide one)", "epochs read by one run", "negative", 1.0,
                         gates="both")
CONTEXT_SHARE = Precondition(
    "context_share", DEEP_X0_R2_REASON,
    "x0-R² of the residual baseline's inputs, mean over the last third of the layers and the seeds", "negative",
    DEEP_X0_R2, gates="both")
# context_share gates no declared test: on the language-model toys it fails at every setting (0.935 on kjv), so the
# routers' x0 numbers are descriptions (:func:`descriptions`); it stays declared so that chapter 05 shows why.
PRECONDITIONS = (SUB_EPOCH, CONTEXT_SHARE)
CONTROLLED = ("denseformer", "mudd")   # the static-weight wins the scalar-gain control explains (review #12)

# The routers' x0 question (the bank-of-values authors' post on AttnRes with a pseudo-query per q, k, v;
# modded-nanogpt's MUDD record dropped the Q/K channels): deep V inputs carry more token identity than Q's and than
# K's, V − Q and V − K apart (review 3, H4: V − max(Q, K) has a null centred below 0). Descriptions, not claims:
# their premise fails on every language-model toy (vrs_edu.lab.premises.LM_TOYS_FAIL).
DESCRIBED = tuple((f"{r}_v_reads_x0_more_than_{s}", f"{r} runs: x0-R² of V's input − {s.upper()}'s, mean over the "
                   "last third of the layers") for r in ROUTERS for s in "qk")
TESTS = tuple(
    DeclaredTest(f"{m}_loss", f"the mixer lowers the loss against the standard residual ({src})",
                 f"final val loss, {m} − residual", "same seed", "negative", 0.0, "ch05", MIXER_GAIN,
                 MIXER_GAIN_SOURCE, requires=("sub_epoch",))
    for m, src in MIXER_SOURCES.items()
) + tuple(
    DeclaredTest(f"{m}_beats_scalar_gain", f"the {m} gain needs its read over depth, not only a learned gain on the "
                 "stream trained at the coefficient rate (6.7x the base rate)", f"final val loss, {m} − scalar_gain",
                 "same seed", "negative", 0.0, "ch05_controls", MIXER_GAIN, MIXER_GAIN_SOURCE, kind="control",
                 gate=f"{m}_loss", requires=("sub_epoch",))
    for m in CONTROLLED
)


def _by_seed(runs: list[dict]) -> list[dict]:
    return sorted(runs, key=lambda x: x["seed"])


def epochs_read(result: dict) -> float:
    """Epochs of the training split one run reads (stored since the verdict-corpus runs; computed from the
    schedule and the corpus size for older files; NaN when neither is recorded: the precondition then fails)."""
    if "epochs_read" in result:
        return result["epochs_read"]
    try:
        return epochs_per_run(result, "residual")["epochs"]
    except KeyError:
        return float("nan")


def facts(result: dict) -> dict[str, float]:
    """The values of :data:`PRECONDITIONS` on ``result``."""
    return {"sub_epoch": epochs_read(result), "context_share": deep_x0_r2(result["runs"].get("residual", []))}


def test_values(result: dict) -> dict[str, list[float]]:
    """Per-seed values of the declared tests (``TESTS``) from a result made by the current code (runs with
    ``x0_r2``). Tests whose runs are absent are left out."""
    runs = result["runs"]
    out: dict[str, list[float]] = {}
    for m in MIXER_SOURCES:
        if m in runs and "residual" in runs:
            out[f"{m}_loss"] = paired_values(runs[m], runs["residual"])
    for m in CONTROLLED:
        if m in runs and "scalar_gain" in runs:
            out[f"{m}_beats_scalar_gain"] = paired_values(runs[m], runs["scalar_gain"])
    return out


def router_margin(runs: list[dict], other: str) -> list[float]:
    """Per seed (seed order): the x0-R² of V's input − ``other``'s (``"q"`` or ``"k"``), mean over the last third of
    the layers."""
    vals = []
    for x in _by_seed(runs):
        deep = deep_layers(len(x["x0_r2"]["v"]))
        vals.append(sum(x["x0_r2"]["v"][l] - x["x0_r2"][other][l] for l in deep) / len(deep))
    return vals


def descriptions(result: dict) -> list[Description]:
    """The routers' V − Q and V − K x0-R² margins (:data:`DESCRIBED`) with their 95 % intervals: shown, not judged
    (their premise, ``context_share`` < :data:`vrs_edu.lab.premises.DEEP_X0_R2`, fails on the language-model toys).
    Routers whose runs lack ``x0_r2`` are left out."""
    runs, out = result["runs"], []
    for r in ROUTERS:
        if r in runs and all("x0_r2" in x for x in runs[r]):
            for s in "qk":
                name = f"{r}_v_reads_x0_more_than_{s}"
                out.append(describe(name, dict(DESCRIBED)[name], router_margin(runs[r], s), LM_TOYS_SHORT))
    return out


def verdicts(result: dict) -> list[Verdict]:
    """Verdicts of the declared tests (:func:`vrs_edu.lab.analysis.judge`: reproduced, contradicted, undecided; out of
    regime when a precondition fails; n/a for a control whose claim is not reproduced); print them with
    :func:`vrs_edu.lab.analysis.format_verdicts`."""
    values = test_values(result)
    tests = [t for t in TESTS if t.name in values and (t.gate is None or t.gate in values)]
    return judge(tests, values, preconditions=PRECONDITIONS, facts=facts(result), seeds=result.get("seeds"))


# `vrs-edu reproduce depth-mixers` (the table of every recipe: vrs_edu.recipes)
RECIPE = Recipe("depth-mixers", depth_mixers,
                "chapter 05: residual, DenseFormer, ELC-BERT, AttnRes, ShortSWA over depth (K=2, 4, full), DCA, "
                "MUDDFormer, Vertical Attention at equal parameter budget; losses, learned depth weights and the "
                "x0-R² of every Q, K, V input (5 seeds)",
                default_seeds=SEEDS, text=True, verdicts=verdicts)
