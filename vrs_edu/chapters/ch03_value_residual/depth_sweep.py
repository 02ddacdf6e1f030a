"""``vrs-edu reproduce depth-sweep --corpus kjv``: does ResFormer's premise appear as the model gets deeper?

The article's question is about depth, and the value-residual claims (Zhou et al., "Value Residual Learning", arXiv
2410.17897) are claims about deep models: attention concentrates in the middle and deep layers of a deep baseline
(v1, Fig. 1), the value residual relieves it, its loss gain holds from 82 M (8 layers) to 468 M (24 layers, v1 Table
5: −0.027, −0.032, −0.027 nats), and learned λ put more weight on V_1 in deeper layers. Chapter 03 measures them at
8 layers of width 64, where the baseline does *not* concentrate attention. This recipe asks at 4, 8 and 16 layers
of the same width, same corpus, same schedule, 4 paired seeds each, against a baseline tuned at every depth:

* the learning rate, per depth, on held-out seeds (:data:`TUNING_SEEDS`, never an evaluated seed): the baseline at
  each rate of :data:`TUNING_LRS` for the full schedule, and the rate with the lowest mean final validation loss
  (:func:`choose_lrs`); both variants then train at that depth's rate on the evaluated seeds. (Review 3, M1: with
  one rate tuned at 8 layers the baseline got worse with depth, 4.425 → 4.457 from 4 to 24 layers, and the "gain
  that grows with depth" was that degradation.)
* the value-residual gain: final validation loss of ``learnable`` (λ1 = λ2 = 0.5 at init: ResFormer's mix at step 0,
  then learned; ResFormer v5's Learnable-ResFormer) − the tuned baseline's, and one declared test on its *trend*
  with depth: the per-seed least-squares slope of the gain against log₂(layers). It counts as reproduced only where
  the tuned baseline does not itself get worse with depth (:data:`BASELINE_NOT_WORSE`);
* attention concentration: the baseline's token-importance entropy over layers ≥ 1 against uniform causal attention
  (chapter 03's premise check, at each depth), and the x0-R² of its deepest third's inputs (how much token identity
  the deep layers still carry: chapter 04's premise);
* λ1's growth: the slope of the learned λ1 against layer at each depth.

Why ``learnable`` and not the fixed 0.5/0.5 as well, and why not 24 layers: the budget (30 minutes on the 2 cores;
the estimate is at :data:`DEPTHS`). Chapter 03's fixed-mix ResFormer is at 8 layers in ``value-residual``.
"""
from __future__ import annotations

import math

from vrs_edu.chapters.ch03_value_residual.recipe import (CORPUS, QUICK_STEPS, VERDICT_CORPUS, epochs_read,
                                                         lambda_plateau, lambda_profiles)
from vrs_edu.lab.analysis import (DeclaredTest, Precondition, check_preconditions, depth_slope, judge, paired_values,
                                  verdict_records)
from vrs_edu.lab.experiments import Recipe, compare_variants
from vrs_edu.lab.metrics import uniform_causal_entropy
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.results import Verdict

DEPTHS = (16, 8, 4)              # the longest runs first, so that the two cores finish together
SEEDS = (0, 1, 2, 3)             # the evaluated seeds (chapter 03's first four)
TUNING_SEEDS = (100, 101)        # the learning rate's held-out seeds: never an evaluated seed (>= 100)
# The preset's 3e-3 (tuned at 8 layers only), doubled and quadrupled. Re-declared before the run of 2026-12-03 (2nd):
# the grid (1.5e-3, 3e-3, 6e-3) chose 6e-3, its top edge, at every depth (mean loss still falling at 4 and 8
# layers), so the grid moves up one step at the same cost; 1.5e-3 was the worst rate at every depth.
TUNING_LRS = (3e-3, 6e-3, 1.2e-2)
PRESET_LR = 3e-3
VARIANTS = {"learnable": {"value_residual": "learnable"}, "baseline": {}}
# Budget: 30 min wall on the 2 cores (`--jobs 2`, one thread per run), tuning included. Per-run wall times of the
# recorded 4-24-layer run (2026-12-01, --jobs 2, 240 steps with their 12 curve evaluations) plus ≈ 8 s for the layer
# metrics and the whole-split final evaluation: baseline 40, 57, 92, 141 s and learnable 41, 62, 104, 153 s at 4, 8,
# 16, 24 layers (one step alone, one thread, quiet machine, 2026-12-03: 0.107, 0.193, 0.347, 0.487 s).
#   chosen — depths 4, 8, 16; tuning 3 rates × 2 seeds × the baseline (189 s) = 1,134 CPU-s; evaluation 4 seeds ×
#   (189 + 207 s) = 1,584 CPU-s; 2,718 CPU-s / 2 cores = 1,359 s, + two phases' tails (≤ 100 s each) and start-up
#   ≈ 1,500 s ≈ 25 min. The --quick run of this design (2026-12-03, --jobs 2, load 0.3-2.0): 217.8 s wall, 423 CPU-s
#   for its 36 runs of 12 steps, of which 152 s training: ≈ 7.5 CPU-s per run outside training, as assumed.
#   rejected — 5 evaluated seeds: ≈ 28 min (the last run, estimated at 23 min, took 29.3); 24 layers kept with 4
#   seeds: the evaluation alone is 2,760 CPU-s, 23 min, and one tuning seed adds 990 CPU-s: ≈ 32 min; tuning runs
#   shorter than the evaluated schedule: a shorter run prefers a larger rate, so it would tune for another run.
# (Estimates; what the recorded run took: its result file, and ``make bench``.)
TRAIN = CORPUS["train"]


def name(variant: str, L: int) -> str:
    return f"{variant}_L{L}"


def tuning_name(L: int, lr: float) -> str:
    return f"baseline_L{L}_lr{lr:g}"


def runs_at(part: dict, variant: str, L: int) -> list[dict]:
    return sorted(part["runs"][name(variant, L)], key=lambda r: r["seed"])


def depths_in(part: dict) -> list[int]:
    """The depths whose runs the result holds, shallow to deep."""
    return sorted(int(k.split("_L")[1]) for k in part["runs"] if k.startswith("baseline_L"))


def check_seeds(seeds, tuning_seeds) -> None:
    """The learning rate is chosen on seeds the verdicts never read. Raises ValueError (naming the argument) when a
    tuning seed is below 100 or is also an evaluated seed."""
    low = sorted(s for s in tuning_seeds if s < 100)
    if low:
        raise ValueError(f"tuning_seeds must be >= 100 (held out from every evaluated seed), got {low}")
    both = sorted(set(seeds) & set(tuning_seeds))
    if both:
        raise ValueError(f"tuning_seeds must be disjoint from the evaluated seeds (--seeds) {sorted(seeds)}: {both} "
                         "are in both")


def tuning_losses(tuning: dict) -> dict[int, dict[float, float]]:
    """``{depth: {lr: mean final validation loss over the tuning seeds}}`` of a tuning part (runs named by
    :func:`tuning_name`; the whole validation split, nats)."""
    out: dict[int, dict[float, float]] = {}
    for key, runs in tuning["runs"].items():
        depth, lr = key.removeprefix("baseline_L").split("_lr")
        out.setdefault(int(depth), {})[float(lr)] = sum(r["final_val_loss"] for r in runs) / len(runs)
    return {L: dict(sorted(out[L].items())) for L in sorted(out)}


LR_RULE = ("at each depth, the rate whose baseline runs on the tuning seeds end with the lowest mean final validation "
           "loss (whole split); on a tie, the one nearest the preset's 3e-3 (log scale), then the smaller")


def choose_lrs(tuning: dict) -> dict[int, float]:
    """``{depth: lr}`` by the rule declared before the tuning runs (:data:`LR_RULE`): at each depth, the rate whose
    baseline runs on the tuning seeds end with the lowest mean final validation loss; on a tie, the one nearest the
    preset's 3e-3 (log scale), then the smaller. ``tuning``: the result's ``"tuning"`` part."""
    return {L: min(by_lr, key=lambda lr: (by_lr[lr], round(abs(math.log(lr / PRESET_LR)), 9), lr))
            for L, by_lr in tuning_losses(tuning).items()}


def depth_sweep(quick: bool, seeds: list[int], *, corpus=None, tokenizer: str | None = None,
                options: RunOptions = RunOptions(), tuning_seeds=TUNING_SEEDS, depths=DEPTHS) -> dict:
    """The recipe: at each of ``depths`` (layers; the declared run: :data:`DEPTHS`), the baseline's rate tuned on
    ``tuning_seeds`` over :data:`TUNING_LRS`, then the baseline and the learnable value residual at that rate on
    ``seeds``; the preconditions and verdicts of :func:`tests` for those depths.

    Raises:
        ValueError: a tuning seed below 100 or also in ``seeds`` (:func:`check_seeds`); fewer than two depths, or a
            depth below 3 (λ1's slope over layers needs two layers after the first).
    """
    check_seeds(seeds, tuning_seeds)
    if len(set(depths)) < 2 or min(depths) < 3:
        raise ValueError(f"depths must be at least two distinct numbers of layers >= 3, got {tuple(depths)}")
    common = {"quick": quick, "quick_steps": QUICK_STEPS, "metric_batches": 2 if quick else 4, "corpus": corpus,
              "tokenizer": tokenizer, "options": options, "final_eval": True}
    train = {} if quick else TRAIN
    tuning_variants = {tuning_name(L, lr): {**train, "n_layers": L, "lr": lr} for L in depths for lr in TUNING_LRS}
    tuning = compare_variants(CORPUS["preset"], tuning_variants, list(tuning_seeds), desc="depth lr ", **common)
    chosen = choose_lrs(tuning)
    variants = {name(v, L): {**train, "n_layers": L, "lr": chosen[L], **over}
                for L in depths for v, over in VARIANTS.items()}
    part = compare_variants(CORPUS["preset"], variants, seeds, desc="depth ", **common)
    result = {"variants": variants, "corpus": part, "tuning": tuning,
              "lr_tuning": {"seeds": list(tuning_seeds), "lrs": list(TUNING_LRS),
                            "mean_val_loss": {str(L): {f"{lr:g}": x for lr, x in by.items()}
                                              for L, by in tuning_losses(tuning).items()},
                            "chosen_lr": {str(L): lr for L, lr in sorted(chosen.items())},
                            # a rate at the grid's edge may not be the best one: the grid is what the budget allows
                            "at_grid_edge": {str(L): lr in (min(TUNING_LRS), max(TUNING_LRS))
                                             for L, lr in sorted(chosen.items())},
                            "rule": LR_RULE},
              "settings": {"depths": sorted(depths), "train": TRAIN, "quick_steps": QUICK_STEPS,
                           "verdict_corpus": VERDICT_CORPUS}}
    result["preconditions"] = [o.to_record() for o in check_preconditions(preconditions(sorted(depths)),
                                                                          facts(result)).values()]
    result["verdicts"] = verdict_records(verdicts(result))
    return result


# ---------------------------------------------------------------------------------------------------------------
# Pre-declared preconditions and tests (committed before the full run; see git history).

SUB_EPOCH = Precondition("sub_epoch", "loss verdicts come from runs that cannot memorise their training text: each "
                         "run reads less than one epoch of it", "tokens one run reads / training tokens (epochs)",
                         "negative", 1.0)
# The smallest trend of interest, in nats per doubling of depth: a gain 0.005 nats larger per doubling (0.010 from 4
# to 16 layers, about a third of the paper's 0.027). The same number bounds how much the tuned baseline itself may
# get worse per doubling: a baseline that degrades by more could make a "growing gain" on its own (review 3, M1).
TREND_EFFECT = 0.005
BASELINE_NOT_WORSE = Precondition(
    "baseline_not_worse_with_depth", "the tuned baseline does not get worse with depth, so a gain that grows with "
    f"depth is the value residual's, not the baseline's degradation (review 3, M1); allowed: less than the trend's "
    f"smallest effect, {TREND_EFFECT} nats per doubling", "evaluated seeds: mean of the per-seed least-squares slope "
    "of the tuned baseline's final val loss against log2(layers) (nats per doubling)", "negative", TREND_EFFECT,
    gates="reproduced")


def preconditions(depths) -> tuple[Precondition, ...]:
    return (SUB_EPOCH, BASELINE_NOT_WORSE,
            *(Precondition(f"lambdas_plateaued_L{L}", f"at {L} layers the learned λ1 had stopped moving when the LR "
                           "decay began", "share of (seed, layer) λ1 trajectories that plateaued", "positive", 0.5)
              for L in depths))


def tests(depths) -> tuple[DeclaredTest, ...]:
    """The declared tests for the given depths (the full run: 4, 8, 16)."""
    out = [DeclaredTest("gain_grows_with_depth", "the value residual's gain grows with depth (ResFormer's premise: "
                        "deeper models concentrate attention more and re-reading V_1 relieves it; v1 Fig. 1)",
                        "per seed: least-squares slope of (learnable − tuned baseline final val loss) against "
                        "log2(layers)", "vs 0", "negative", 0.0, "primary", -TREND_EFFECT,
                        f"declared: a gain {TREND_EFFECT} nats larger per doubling of depth, "
                        f"{TREND_EFFECT * math.log2(max(depths) / min(depths)):.3f} from {min(depths)} to "
                        f"{max(depths)} layers", requires=("sub_epoch", "baseline_not_worse_with_depth"))]
    out += [DeclaredTest(f"baseline_concentrated_L{L}", f"premise at {L} layers: the baseline concentrates attention "
                         "(ResFormer v1, Fig. 1)", "baseline mean token-importance entropy over layers ≥ 1 − the "
                         "uniform-causal entropy", "vs uniform causal attention", "negative", 0.0, "depth-setup",
                         -0.05, "declared: as chapter 03's", kind="check") for L in depths]
    out += [DeclaredTest(f"gain_L{L}", f"at {L} layers the value residual (learnable λ) lowers the loss (ResFormer v5; "
                         "modded-nanogpt record #9: −0.021)", "final val loss, learnable − tuned baseline (both at "
                         "the baseline's rate for this depth)", "same seed", "negative", 0.0, "depth-gain", -0.021,
                         "paper: modded-nanogpt record #9, −0.021 nats", requires=("sub_epoch",)) for L in depths]
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


def deep_x0_r2_by_depth(part: dict) -> dict[int, list[float]]:
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


def baseline_trend(part: dict) -> list[float]:
    """Per seed, the least-squares slope of the baseline's final val loss against log2(layers) over the depths run
    (nats per doubling; above 0 = the deeper baselines end worse)."""
    ds = depths_in(part)
    per = {L: runs_at(part, "baseline", L) for L in ds}
    return [depth_slope([per[L][i]["final_val_loss"] for L in ds], [math.log2(L) for L in ds])
            for i in range(len(per[ds[0]]))]


def gain_trend(part: dict) -> list[float]:
    """Per seed, the least-squares slope of the gain against log2(layers) over the depths run (nats per doubling)."""
    g, ds = gains(part), depths_in(part)
    return [depth_slope([g[L][i] for L in ds], [math.log2(L) for L in ds]) for i in range(len(g[ds[0]]))]


def facts(result: dict) -> dict[str, float]:
    part = result["corpus"]
    out = {"sub_epoch": max(epochs_read(part, name("baseline", L)) for L in depths_in(part))}
    slopes = baseline_trend(part) if len(depths_in(part)) >= 2 else [math.nan]
    out["baseline_not_worse_with_depth"] = sum(slopes) / len(slopes)
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


# `vrs-edu reproduce depth-sweep` (the table of every recipe: vrs_edu.recipes)
RECIPE = Recipe("depth-sweep", depth_sweep,
                "value-residual gain, attention concentration and λ1's growth at 4, 8 and 16 layers of width 64 "
                "(baseline and learnable λ at the baseline's rate tuned per depth on held-out seeds 100-101; 4 paired"
                " seeds; verdicts on --corpus kjv)",
                default_seeds=SEEDS, budget_s=30 * 60, text=True, verdicts=verdicts)
