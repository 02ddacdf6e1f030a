"""``vrs-edu reproduce depth-mixers``: every depth mixer of chapter 05, trained side by side (>= 3 seeds).

The same 8-layer word-level TinyGPT (preset ``word-8x64``, default corpus) with only the depth mixer changed:
standard residual, DenseFormer (arXiv 2402.02622), ELC-BERT (arXiv 2311.02265), Attention Residuals
(arXiv 2603.15031), ShortSWA over depth with K = 2, 4 and the full window (arXiv 2603.16039), and the routers that give
Q, K and V their own depth mixture: DeepCrossAttention (arXiv 2502.06785), MUDDFormer (arXiv 2502.12170) and
Vertical Attention (OpenReview A6uabXKiXc).

**Equal parameter budget.** Every variant shares every parameter of the baseline (same seed ⇒ identical values, so
per-seed differences are paired) and adds only its mixer; each mixer is sized to add at most
:data:`BUDGET_TOLERANCE` of the baseline's parameters (the result file records every count, and the recipe refuses to
run a variant over budget).

For each run the result holds the validation-loss curve, the final loss and accuracy, the parameter counts, the
training time and the learned depth weights: one (L+1, L+1) matrix per stream (row = reading layer, L = the final
read-out; column = source layer, 0 = embedding), averaged over :data:`WEIGHT_BATCHES` validation batches.
Budget: about 12 minutes on an idle 2-core CPU (``--quick``: 6 steps per run, well under a minute).
"""
from __future__ import annotations

import math
import time
from dataclasses import replace

import torch

from ...nn.model import TinyGPT
from ..analysis import DeclaredTest, judge, paired_difference, paired_values, verdict_records
from ..metrics import x0_r2
from ..corpora import corpus_token_data
from ..data import unigram_loss
from ..depth_readout import depth_weight_matrices
from ..experiments import recipe
from ..parallel import map_runs, usable_jobs
from ..options import RunOptions
from ..presets import scaled_run
from ..results import Verdict
from ..train import train

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
}
# Training length: sized so that 10 variants x 5 seeds fit 40 CPU-minutes (one thread per run). Measured step
# times (2 threads, lightly loaded machine): 71 ms (residual) to 173 ms (DCA), 1.7 s per step of all ten variants;
# at one thread we count ~1.4x that, 2.4 s. 5 seeds x 160 steps x 2.4 s ≈ 32 min, + 4 evaluations of the whole
# validation split per run and the x0-R² read-out (≈ 2 min) ≈ 34 CPU-min. (The former 200 steps x 3 seeds: 24 min.)
FULL = dict(steps=160, batch_size=16, warmup=20, eval_every=40, eval_batches=None)
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
    :func:`vrs_edu.lab.depth_readout.depth_weight_matrices`). Empty for the standard residual, which has no weights."""
    acc: dict[str, torch.Tensor] = {}
    for x, _ in batches:
        tr = model(x, trace=True).trace
        for s, m in depth_weight_matrices(tr.tensors, model.cfg.n_layers).items():
            acc[s] = acc.get(s, 0) + m / len(batches)
    return acc


def run_depth_mixers(quick: bool, seeds: list[int], variants: dict[str, dict] | None = None, *, corpus=None,
                     tokenizer: str | None = None, options: RunOptions = RunOptions()) -> dict:
    """Train every variant for every seed; return the payload the runner writes to ``depth-mixers.json``.

    Raises:
        ValueError: a variant whose mixer adds more than :data:`BUDGET_TOLERANCE` of the baseline's parameters.
    """
    variants = VARIANTS if variants is None else variants
    schedule = QUICK if quick else FULL
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
    tasks, names, configs = [], [], {}
    for vname, vover in variants.items():
        for seed in seeds:
            _, mcfg, tcfg = scaled_run(PRESET, options, **schedule, **vover, seed=seed)
            mcfg = replace(mcfg, vocab_size=data.vocab_size, seed=seed)
            tasks.append({"mcfg": mcfg, "tcfg": tcfg, "data": data, "weight_batches": weight_batches,
                          "desc": f"depth-mixers {vname} s{seed}", "options": options})
            names.append(vname)
            configs[vname] = {"model": mcfg.to_dict(), "train": tcfg.__dict__}
    jobs = usable_jobs(options)   # `vrs-edu reproduce --jobs N`: the runs side by side, one thread each
    results = map_runs(train_one_mixer, [{**t, "progress": jobs == 1} for t in tasks], jobs,
                       desc="depth-mixers runs", progress=options.progress)
    runs: dict[str, list[dict]] = {vname: [] for vname in variants}
    for vname, run in zip(names, results):
        runs[vname].append(run)
    return {"preset": PRESET, "corpus": "pydoc_data.topics" if corpus is None else corpus.name, "tokenizer": kind,
            "corpus_tokens": {"train": len(data.train), "val": len(data.val)},
            "vocab_size": data.vocab_size, "unigram_val_loss": unigram_loss(data), "schedule": schedule,
            "budget_tolerance": BUDGET_TOLERANCE, "parameter_counts": counts, "configs": configs, "runs": runs}


def train_one_mixer(mcfg, tcfg, data, weight_batches, desc: str, progress: bool,
                    options: RunOptions = RunOptions()) -> dict:
    """One run of :func:`run_depth_mixers` (module level, so that a worker process can run it)."""
    model = TinyGPT(mcfg)
    t0 = time.process_time()
    hist = train(model, data, tcfg, progress=progress, desc=desc, options=options)
    cpu = time.process_time() - t0
    weights = learned_depth_weights(model, weight_batches)
    r2 = stream_x0_r2(model, weight_batches)
    k = 10 if len(hist.train_loss) >= 10 else 1   # train loss in chunks of 10 steps (keeps the file small)
    return {
        "seed": mcfg.seed, "final_val_loss": hist.val_loss[-1], "final_val_acc": hist.val_acc[-1],
        "x0_r2": r2,
        "eval_steps": hist.eval_steps, "val_loss": hist.val_loss,
        "train_loss_every_10": [sum(hist.train_loss[i:i + k]) / len(hist.train_loss[i:i + k])
                                for i in range(0, len(hist.train_loss), k)],
        "n_params": model.num_params(), "train_wall_s": round(hist.wall_time_s, 2),
        "train_cpu_s": round(cpu, 2),
        "depth_weights": {s: _matrix_to_json(m) for s, m in weights.items()},
    }


@recipe("depth-mixers", "chapter 05: residual, DenseFormer, ELC-BERT, AttnRes, ShortSWA over depth (K=2, 4, full), "
        "DCA, MUDDFormer, Vertical Attention at equal parameter budget; losses, learned depth weights and the x0-R² "
        "of every Q, K, V input (5 seeds)", default_seeds=SEEDS)
def depth_mixers(quick: bool, seeds: list[int], *, corpus=None, tokenizer: str | None = None,
                 options: RunOptions = RunOptions()) -> dict:
    result = run_depth_mixers(quick, seeds, corpus=corpus, tokenizer=tokenizer, options=options)
    result["verdicts"] = verdict_records(verdicts(result))
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
        rows.append({"variant": name, "mean": _mean(losses), "sd": _sd(losses), "n_seeds": len(losses),
                     "delta": _mean(diffs) if diffs else float("nan"),
                     "delta_se": _sd(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else float("nan"),
                     "delta_ci": tuple(ci), "n_better": sum(d < 0 for d in diffs),
                     "n_params": counts["n_params"], "extra": counts["extra"], "overhead": counts["overhead"],
                     "train_cpu_s": _mean([r["train_cpu_s"] for r in runs])})
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


def _mean(xs):
    return sum(xs) / len(xs)


def _sd(xs):
    if len(xs) < 2:
        return float("nan")
    m = _mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


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


def _deep_layers(n_layers: int) -> list[int]:
    return list(range(n_layers - n_layers // 3, n_layers))


TESTS = tuple(
    DeclaredTest(f"{r}_v_reads_x0_more_than_qk", "deep V inputs carry more token identity than Q and K inputs "
                 "(bank-of-values authors' post on AttnRes with a pseudo-query per q, k, v; modded-nanogpt's MUDD record "
                 "dropped the Q/K channels)", f"{r} runs: x0-R² of V's input − max(Q's, K's), mean over the last "
                 "third of the layers", "vs 0", "positive", 0.0, "primary") for r in ROUTERS
) + tuple(
    DeclaredTest(f"{m}_loss", f"the mixer lowers the loss against the standard residual ({src})",
                 f"final val loss, {m} − residual", "same seed", "negative", 0.0, "ch05")
    for m, src in MIXER_SOURCES.items()
)


def test_values(result: dict) -> dict[str, list[float]]:
    """Per-seed values of the declared tests (``TESTS``) from a result made by the current code (runs with
    ``x0_r2``). Tests whose runs are absent are left out."""
    runs = result["runs"]
    out: dict[str, list[float]] = {}
    for r in ROUTERS:
        if r in runs and all("x0_r2" in x for x in runs[r]):
            vals = []
            for x in sorted(runs[r], key=lambda x: x["seed"]):
                deep = _deep_layers(len(x["x0_r2"]["v"]))
                vals.append(sum(x["x0_r2"]["v"][l] - max(x["x0_r2"]["q"][l], x["x0_r2"]["k"][l]) for l in deep)
                            / len(deep))
            out[f"{r}_v_reads_x0_more_than_qk"] = vals
    for m in MIXER_SOURCES:
        if m in runs and "residual" in runs:
            out[f"{m}_loss"] = paired_values(runs[m], runs["residual"])
    return out


def verdicts(result: dict) -> list[Verdict]:
    """Three-way verdicts of the declared tests (:func:`vrs_edu.lab.analysis.judge`); print them with
    :func:`vrs_edu.lab.analysis.format_verdicts`."""
    values = test_values(result)
    return judge([t for t in TESTS if t.name in values], values)
