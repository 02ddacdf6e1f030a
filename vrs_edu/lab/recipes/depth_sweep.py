"""``vrs-edu reproduce depth-sweep --corpus kjv``: does ResFormer's premise appear as the model gets deeper?

The seed question is about depth, and the value-residual claims (Zhou et al., "Value Residual Learning", arXiv
2410.17897) are claims about deep models: attention concentrates in the middle and deep layers of a deep baseline
(v1, Fig. 1), the value residual relieves it, its loss gain holds from 82 M (8 layers) to 468 M (24 layers, v1 Table
5: −0.027, −0.032, −0.027 nats), and learned λ put more weight on V_1 in deeper layers. Chapter 03 measures them at
8 layers of width 64, where the baseline does *not* concentrate attention. This recipe asks at 4, 8, 16 and 24
layers of the same width, same corpus, same schedule, 5 paired seeds each:

* the value-residual gain: final validation loss of ``learnable`` (λ1 = λ2 = 0.5 at init: ResFormer's mix at step 0,
  then learned; ResFormer v5's Learnable-ResFormer) − the baseline's, and one declared test on its *trend* with
  depth: the per-seed least-squares slope of the gain against log₂(layers);
* attention concentration: the baseline's token-importance entropy over layers ≥ 1 against uniform causal attention
  (chapter 03's premise check, at each depth), and the x0-R² of its deepest third's inputs (how much token identity
  the deep layers still carry: chapter 04's premise);
* λ1's growth: the slope of the learned λ1 against layer at each depth.

Why ``learnable`` and not the fixed 0.5/0.5 as well: three variants at four depths would take 68 CPU-min (34 min on
the 2 cores, over the 30-min budget); ``learnable`` gives the gain and λ1's growth from the same runs. Chapter 03's
fixed-mix ResFormer is at 8 layers in ``value-residual``.
"""
from __future__ import annotations

import math

from ..analysis import (DeclaredTest, Precondition, check_preconditions, depth_slope, judge, paired_values,
                        verdict_records)
from ..experiments import compare_variants, recipe
from ..metrics import uniform_causal_entropy
from ..options import RunOptions
from ..results import Verdict
from .value_residual import CORPUS, QUICK_STEPS, SEEDS, VERDICT_CORPUS, epochs_read, lambda_plateau, lambda_profiles

DEPTHS = (24, 16, 8, 4)          # the longest runs first, so that the two cores finish together
VARIANTS = {"baseline": {}, "learnable": {"value_residual": "learnable"}}
# Budget (one thread per run; 30 min wall on the 2 cores, the allowance for this recipe): a training step of
# word-8x64 costs ≈ 0.17 s, roughly 0.17 · (L + 3.3) / 11.3 s at L layers of width 64 (the LM head and embedding
# cost about 2.3 layers, the optimiser one): 0.11, 0.17, 0.29 and 0.41 s at 4, 8, 16, 24 layers, 0.98 s for one
# seed of one variant at all four. 2 variants × 5 seeds × 240 steps × 0.98 s ≈ 39 CPU-min, + evaluations (the
# declared 4-batch subset 12 times, the whole split once) ≈ 45 CPU-min: 23 min wall. (Estimates; what the recorded
# run took: its result file, and ``make bench``.)
TRAIN = CORPUS["train"]


def name(variant: str, L: int) -> str:
    return f"{variant}_L{L}"


def runs_at(part: dict, variant: str, L: int) -> list[dict]:
    return sorted(part["runs"][name(variant, L)], key=lambda r: r["seed"])


def depths_in(part: dict) -> list[int]:
    """The depths whose runs the result holds, shallow to deep."""
    return sorted(int(k.split("_L")[1]) for k in part["runs"] if k.startswith("baseline_L"))


@recipe("depth-sweep", "value-residual gain, attention concentration and λ1's growth at 4, 8, 16 and 24 layers of "
        "width 64 (baseline and learnable λ, 5 paired seeds; verdicts on --corpus kjv)", default_seeds=SEEDS,
        budget_s=30 * 60)
def depth_sweep(quick: bool, seeds: list[int], *, corpus=None, tokenizer: str | None = None,
                options: RunOptions = RunOptions()) -> dict:
    variants = {name(v, L): {**({} if quick else TRAIN), "n_layers": L, **over}
                for L in DEPTHS for v, over in VARIANTS.items()}
    part = compare_variants(CORPUS["preset"], variants, seeds, quick=quick, quick_steps=QUICK_STEPS,
                            metric_batches=2 if quick else 4, desc="depth ", corpus=corpus, tokenizer=tokenizer,
                            options=options, final_eval=True)
    result = {"variants": variants, "corpus": part,
              "settings": {"depths": sorted(DEPTHS), "train": TRAIN, "quick_steps": QUICK_STEPS,
                           "verdict_corpus": VERDICT_CORPUS}}
    result["preconditions"] = [o.to_record() for o in check_preconditions(preconditions(sorted(DEPTHS)),
                                                                          facts(result)).values()]
    result["verdicts"] = verdict_records(verdicts(result))
    return result


# ---------------------------------------------------------------------------------------------------------------
# Pre-declared preconditions and tests (committed before the full run; see git history).

SUB_EPOCH = Precondition("sub_epoch", "loss verdicts come from runs that cannot memorise their training text: each "
                         "run reads less than one epoch of it", "tokens one run reads / training tokens (epochs)",
                         "negative", 1.0)


def preconditions(depths) -> tuple[Precondition, ...]:
    return (SUB_EPOCH, *(Precondition(f"lambdas_plateaued_L{L}", f"at {L} layers the learned λ1 had stopped moving "
                                      "when the LR decay began", "share of (seed, layer) λ1 trajectories that "
                                      "plateaued", "positive", 0.5) for L in depths))


def tests(depths) -> tuple[DeclaredTest, ...]:
    """The declared tests for the given depths (the full run: 4, 8, 16, 24)."""
    out = [DeclaredTest("gain_grows_with_depth", "the value residual's gain grows with depth (ResFormer's premise: "
                        "deeper models concentrate attention more and re-reading V_1 relieves it; v1 Fig. 1)",
                        "per seed: least-squares slope of (learnable − baseline final val loss) against log2(layers)",
                        "vs 0", "negative", 0.0, "primary", -0.005,
                        "declared: a gain 0.005 nats larger per doubling of depth, 0.013 from 4 to 24 layers, "
                        "half the paper's gain", requires=("sub_epoch",))]
    out += [DeclaredTest(f"baseline_concentrated_L{L}", f"premise at {L} layers: the baseline concentrates attention "
                         "(ResFormer v1, Fig. 1)", "baseline mean token-importance entropy over layers ≥ 1 − the "
                         "uniform-causal entropy", "vs uniform causal attention", "negative", 0.0, "depth-setup",
                         -0.05, "declared: as chapter 03's", kind="check") for L in depths]
    out += [DeclaredTest(f"gain_L{L}", f"at {L} layers the value residual (learnable λ) lowers the loss (ResFormer v5; "
                         "modded-nanogpt record #9: −0.021)", "final val loss, learnable − baseline", "same seed",
                         "negative", 0.0, "depth-gain", -0.021, "paper: modded-nanogpt record #9, −0.021 nats",
                         requires=("sub_epoch",)) for L in depths]
    out += [DeclaredTest(f"lambda1_grows_L{L}", f"at {L} layers the learned λ1 is larger in deeper layers (ResFormer, "
                         "secondary source)", "least-squares slope of λ1 against layer", "vs 0", "positive", 0.0,
                         "depth-lambda", 0.02 * 7 / (L - 1), "declared: λ1 from 0.5 to 0.64 from the first to the last "
                         "layer with one (chapter 03's 0.02 per layer at 8 layers)",
                         requires=(f"lambdas_plateaued_L{L}",)) for L in depths]
    return tuple(out)


TESTS = tests(sorted(DEPTHS))


def _mean_over_layers(run: dict, metric: str, first: int = 1) -> float:
    vals = run["layer_metrics"][metric][first:]
    return sum(vals) / len(vals)


def gains(part: dict) -> dict[int, list[float]]:
    """Per depth, the per-seed final val loss of learnable − baseline (nats)."""
    return {L: paired_values(part["runs"][name("learnable", L)], part["runs"][name("baseline", L)])
            for L in depths_in(part)}


def concentration(part: dict) -> dict[int, list[float]]:
    """Per depth, the baseline's mean entropy over layers ≥ 1 − the uniform-causal entropy at its T, per seed."""
    T = part["configs"][name("baseline", depths_in(part)[0])]["model"]["block_size"]
    ref = uniform_causal_entropy(T)
    return {L: [_mean_over_layers(r, "entropy") - ref for r in runs_at(part, "baseline", L)] for L in depths_in(part)}


def deep_x0_r2(part: dict) -> dict[int, list[float]]:
    """Per depth, per seed: the baseline's x0-R² of the inputs of its last third of layers (mean over Q, K, V)."""
    out = {}
    for L in depths_in(part):
        deep = range(L - max(1, L // 3), L)
        out[L] = [sum(r["layer_metrics"][f"x0_r2_{s}"][l] for s in "qkv" for l in deep) / (3 * len(deep))
                  for r in runs_at(part, "baseline", L)]
    return out


def lambda_slopes(part: dict) -> dict[int, list[float]]:
    """Per depth, per seed: the least-squares slope of the learned λ1 against layer (blocks 1..L-1)."""
    return {L: [depth_slope(p, range(1, len(p) + 1)) for p in lambda_profiles(runs_at(part, "learnable", L))]
            for L in depths_in(part)}


def gain_trend(part: dict) -> list[float]:
    """Per seed, the least-squares slope of the gain against log2(layers) over the depths run (nats per doubling)."""
    g, ds = gains(part), depths_in(part)
    return [depth_slope([g[L][i] for L in ds], [math.log2(L) for L in ds]) for i in range(len(g[ds[0]]))]


def facts(result: dict) -> dict[str, float]:
    part = result["corpus"]
    out = {"sub_epoch": max(epochs_read(part, name("baseline", L)) for L in depths_in(part))}
    for L in depths_in(part):
        out[f"lambdas_plateaued_L{L}"] = lambda_plateau(runs_at(part, "learnable", L))["fraction"]
    return out


def test_values(result: dict) -> dict[str, list[float]]:
    part = result["corpus"]
    out: dict[str, list[float]] = {}
    if len(depths_in(part)) >= 2:
        out["gain_grows_with_depth"] = gain_trend(part)
    for L, v in concentration(part).items():
        out[f"baseline_concentrated_L{L}"] = v
    for L, v in gains(part).items():
        out[f"gain_L{L}"] = v
    for L, v in lambda_slopes(part).items():
        out[f"lambda1_grows_L{L}"] = v
    return out


def verdicts(result: dict) -> list[Verdict]:
    """The verdicts of the declared tests (:func:`vrs_edu.lab.analysis.judge`) for the depths the result holds."""
    ds = depths_in(result["corpus"])
    values = test_values(result)
    present = [t for t in tests(ds) if t.name in values]
    return judge(present, values, preconditions=preconditions(ds), facts=facts(result))
