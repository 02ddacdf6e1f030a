"""``vrs-edu reproduce bank-of-values``: through which path — Q, K or V — do deep layers re-read x0?

Claims under test (He, Liu, Huang, Zhang, "Do Value Vectors in Deep Layers Need Context from the Residual Stream?",
arXiv 2606.02780; code RiddleHe/nanochat, model type ``gpt_base_add_init_qkv_learn``): when each last-third layer
learns ``q = α_q·W_q(x_i) + β_q·W_q(x0)`` and the same for k and v (α = 1, β = 0 at init), the x0 weight of V grows
large (the paper's learned context-free coefficients exceed 2, and 10 in the last layer) while Q and K keep reading
the residual stream (β_q, β_k ≈ 0); values may be replaced by a context-free lookup (``V := γ·W_V(x0)``, or a learned
table per token — the bank of values) without loss.

Variants (``x0_mode``, on the default last third of the layers) and controls: see ``VARIANTS_V2`` below. One data
set, the ``word-8x64`` corpus (the model of chapter 03); the associative-recall task, whose answers are single
tokens — pure token identity fetched by key — is ``vrs-edu reproduce recall``. Five seeds, paired. On the trained
baselines the recipe also runs the context-free substitution ablation (replace the input of Q, K or V by x0, one at a
time, per layer), a second, independent way to ask the same question.

The x0-share and x0-need claims are not declared here, only described (:func:`descriptions`), because their premise
— deep inputs mostly context, x0-R² below :data:`vrs_edu.lab.premises.DEEP_X0_R2` — fails on every language-model toy
(0.85 here, 0.83-0.88 at every depth 4-24); ``vrs-edu reproduce recall`` judges them where it holds.
"""
from __future__ import annotations

import math

from vrs_edu.chapters.ch03_value_residual.recipe import (CORPUS, QUICK_STEPS, SEEDS, VERDICT_CORPUS, epochs_read,
                                                         run_suite)
from vrs_edu.lab.analysis import (DeclaredTest, Precondition, check_preconditions, judge, paired_values,
                                  trajectory_plateaus, verdict_records)
from vrs_edu.lab.experiments import Recipe
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.premises import (DEEP_X0_R2, DEEP_X0_R2_REASON, LM_TOYS_SHORT, NO_WORSE_MARGIN, NO_WORSE_SOURCE,
                                  Description, describe, description_records)
from vrs_edu.lab.results import Verdict
from vrs_edu.lab.x0_need import (RATE_FACTORS, RATE_SWEEP, VARIANTS_V2, beta_plateau, coefficient_table, need_margins,
                                 pressure_ratios, share_margins, x0_layers)


def bank_of_values(quick: bool, seeds: list[int], *, corpus=None, tokenizer: str | None = None,
                   options: RunOptions = RunOptions()) -> dict:
    corpus = run_suite(CORPUS["preset"], VARIANTS_V2, seeds, quick, CORPUS["train"], ablation_for=("baseline",),
                       checkpoint_for=("qkv",), checkpoint_as="bank-of-values", desc="corpus ", corpus=corpus,
                       tokenizer=tokenizer, options=options, x0_need=True)
    corpus["coefficient_table"] = coefficient_table(corpus["runs"]["qkv"])
    corpus["coefficient_tables"] = {arm: coefficient_table(corpus["runs"][v]) for arm, v in RATE_SWEEP.items()
                                    if v in corpus["runs"]}
    corpus["beta_v_plateau"] = beta_plateau(corpus["runs"]["qkv"])
    result = {"variants": VARIANTS_V2, "corpus": corpus,
              "settings": {"corpus": CORPUS, "quick_steps": QUICK_STEPS, "rate_sweep": RATE_SWEEP,
                           "rate_factors": RATE_FACTORS, "paper_last_layer_coef": PAPER_LAST_LAYER_COEF,
                           "paper_substitutive_coef": PAPER_SUBSTITUTIVE_COEF, "verdict_corpus": VERDICT_CORPUS}}
    result["preconditions"] = [o.to_record() for o in check_preconditions(PRECONDITIONS, facts(result)).values()]
    result["verdicts"] = verdict_records(verdicts(result))
    result["descriptions"] = description_records(descriptions(result))
    return result


# ---------------------------------------------------------------------------------------------------------------
# The experiment as the current code runs it, and its pre-declared preconditions and tests (committed before the
# full run; see git history).
#
# Set-up: every variant has the strong baseline (stream starts at RMSNorm(embedding)) and QK-norm, as the official
# code (nanochat ``gpt_base.py``: ``q, k = norm(q), norm(k)`` after the x0 mix), so the common scale of (α_q, β_q)
# is no attention temperature and only scale-free quantities are read: the x0 share |β| / (|α| + |β|). The x0
# coefficients train with the official optimizer settings *as the source scales them to a batch*
# (``coef_opt="official"``, :func:`vrs_edu.lab.train.official_x0_groups`: at our 2,048 tokens per step β and γ at
# AdamW lr 0.5 · √(2048/2¹⁹) = 0.03125, betas (0.96, 0.95); α at 3.125e-4, betas (0.8, 0.95), wd 0.05; the bank
# table E_v at 0.15/16). The earlier runs trained β at 0.5, the rate at the reference batch of 2¹⁹ tokens: 16 times
# the source's rule at ours. Controls: ``scale_v`` (V := γ·W_V x_i, the BoV paper's Table 1 row 2: a scalar on V
# that never reads x0) and ``qkv_random`` (the same six coefficients, but x0 replaced by a fixed random per-token
# vector of the same RMS).
#
# The rate sweep (review 2, finding 1: both primary verdicts flipped between lr 0.02 and 0.5): the coefficient
# claims are judged at the nominal rate and at ×0.25 and ×4 of it (``coef_lr_scale``; a 16× span, which holds the
# earlier "course" lr 0.02 ≈ ×0.64 and lies a factor 4 either side of the source's rule); a claim counts only if its
# verdict holds at all three, else it is *rate-dependent*. ``qkv_previous`` (the previous token's x0) and ``qkv_course``
# (lr 0.02) left the recipe: the sweep's two arms took their budget (their last runs: git history of this file's
# results).

# The associative-recall task, where the coefficients are read from models that have learned lookup, is a recipe of
# its own (``recall.py``): it needs 1,200 steps at batch 64, which would not fit this budget.
# Budget (1 thread; word-8x64 ≈ 0.17 s/step, qkv/bank a few % more; 20 min wall on the 2 cores):
#   8 variants × 5 seeds × 240 steps × 0.17 s ≈ 27 CPU-min, + per run 12 evaluations of the declared 4-batch subset
#   and one whole-split final evaluation (≈ 4 s on kjv) ≈ 30 CPU-min, + the substitution ablation on 5 baselines and
#   the need measures (≈ 1 min)                                                    ≈ 31 CPU-min, 16 min wall.
# (Estimates. What the recorded run took, wall and CPU: its result file, and ``make bench``.)
# Earlier pilot (python-docs, seed 0, 240 steps, β at lr 0.5 + QK-norm): β_v rose to 3.3-3.7 and was still rising at
# step 240; at 480 steps 3.8-4.2, but the validation loss rose after step 260 (a small corpus, read 6 times).
# Yardsticks, each from its source. The paper (arXiv 2606.02780) reports only V-side coefficients (Fig. 2):
# additive variants: |coef(Ṽ)| ≫ |coef(V)|, the last layer |coef(Ṽ)| > 10; substitutive variants: coef(Ṽ) > 2
# in every target layer, > 10 in the last. "β_q, β_k ≈ 0 while β_v grows" is from an author's post, not the paper.
PAPER_LAST_LAYER_COEF = 10.0     # BoV paper, Fig. 2 (additive and substitutive): last layer > 10
PAPER_SUBSTITUTIVE_COEF = 2.0    # BoV paper, Fig. 2a (substitutive only): > 2 in every target layer
# The paper's losses are bits per byte; ours nats per token. On kjv, the verdict corpus, the word tokenizer makes
# 916,934 tokens of 4,138,926 UTF-8 bytes: 4.514 bytes per token, so 1 bit per byte = 4.514 · ln 2 = 3.129 nats per
# token (a test recomputes it from the corpus).
KJV_BYTES_PER_TOKEN = 4.514
NATS_PER_BPB = KJV_BYTES_PER_TOKEN * math.log(2)


def _bpb(delta_bpb: float) -> float:
    """A published difference in bits per byte as nats per token on the verdict corpus (3 decimals)."""
    return round(delta_bpb * NATS_PER_BPB, 3)


# The premise every x0-share and x0-need claim rests on is declared once, for every chapter (vrs_edu.lab.premises).
# On this recipe's language-model toy it fails at every setting (deep inputs 0.85 x0-R² on kjv, 0.83-0.88 at every
# depth 4-24), so those claims are not declared here: their numbers are descriptions (:func:`descriptions`), and
# the claims themselves are judged on the recall task (``recall.py``, deep inputs 0.39), where the premise holds.
SUB_EPOCH = Precondition("sub_epoch", "loss verdicts come from runs that cannot memorise their training text: each "
                         "run reads less than one epoch of it (both directions: memorising can fake a variant's gain "
                         "or, by overfitting both arms alike, hide one)", "tokens one run reads / training tokens "
                         "(epochs)", "negative", 1.0, gates="both")
DEEP_CONTEXT = Precondition("deep_context", DEEP_X0_R2_REASON, "trained baselines: x0-R² of the x0 layers' inputs "
                            "(mean of Q, K, V inputs and seeds)", "negative", DEEP_X0_R2, gates="both")
X0_PLATEAUED = Precondition("x0_plateaued", "the x0 coefficients had stopped moving when the LR decay began, so "
                            "their shares are where training settled, not how far an optimiser drifted (both "
                            "directions: a coefficient still moving may end above or below its snapshot)",
                            "share of the (seed, layer, path) β trajectories whose change in the quarter before the "
                            "decay is ≤ 0.1 × their whole change, at each rate", "positive", 0.5, gates="both")
SUBSTITUTE_PLATEAUED = Precondition("substitute_plateaued", "γ of substitute_v had stopped moving before the decay "
                                    "(both directions: a γ still moving may end above or below 2)",
                                    "share of (seed, layer) γ trajectories that plateaued", "positive", 0.5,
                                    gates="both")
BANK_PLATEAUED = Precondition("bank_plateaued", "γ of the bank had stopped moving before the decay (both directions)",
                              "share of (seed, layer) γ trajectories that plateaued", "positive", 0.5, gates="both")
# deep_context and x0_plateaued gate no declared test here any more; they stay declared, so that chapter 04 shows
# why the x0 numbers are descriptions.
PRECONDITIONS = (SUB_EPOCH, DEEP_CONTEXT, X0_PLATEAUED, SUBSTITUTE_PLATEAUED, BANK_PLATEAUED)

_SHARE = "declared: a tenth of a path's input"
# The x0 claims of the paper and the author's post, measured here as descriptions only (name, quantity):
# additive_criterion (|β_v| > |α_v|), V's x0 share above Q's and K's, V's need above Q's and K's, the gradient
# pressure, and the last layer's |β_v| > 10 (an additive x0 read stays small where the input is 0.85 x0 already:
# the same premise).
DESCRIBED = (
    ("additive_criterion", "qkv runs: x0 share of V's input |β_v| / (|α_v| + |β_v|), mean over the x0 layers "
     "(the paper's claim: above 0.5)"),
    ("v_reads_x0_more_than_q", "qkv runs: share_v − share_q, mean over the x0 layers"),
    ("v_reads_x0_more_than_k", "qkv runs: share_v − share_k, mean over the x0 layers"),
    ("v_needs_x0_more_than_q", "qkv runs: loss rise when β_v := 0 in every x0 layer − the rise when β_q := 0 (nats)"),
    ("v_needs_x0_more_than_k", "qkv runs: loss rise when β_v := 0 − the rise when β_k := 0 (nats)"),
    ("v_pressure_above_q", "trained baselines: mean over the x0 layers of ln(|∂L/∂β_v| / |∂L/∂β_q|) at β = 0"),
    ("v_pressure_above_k", "trained baselines: mean over the x0 layers of ln(|∂L/∂β_v| / |∂L/∂β_k|) at β = 0"),
    ("beta_v_last_layer_above_10", "qkv runs: |β_v| in the last layer (the paper's claim: above 10)"),
)
TESTS = (
    # a check of the set-up, the course's one "no worse" rule (vrs_edu.lab.premises): an equivalence test per arm
    DeclaredTest("qkv_no_worse", "the qkv models whose coefficients are read are no worse than the baseline: their "
                 "loss lies within ±0.01 nats of it (a model that loses by reading x0 says little about what deep "
                 "layers need)", "final val loss, qkv − baseline (nats), at each rate", "same seed, within ±0.01",
                 "negative", 0.0, "ch04-setup", -NO_WORSE_MARGIN, NO_WORSE_SOURCE, kind="check", sweep="coef_lr",
                 form="equivalence"),
    # the paper's size yardsticks
    DeclaredTest("substitute_gamma_above_2", "substitutive x0·W_V: the learned coefficient stays above 2 (BoV paper, "
                 "Fig. 2a)", "substitute_v runs: mean γ over the x0 layers", "vs 2", "positive",
                 PAPER_SUBSTITUTIVE_COEF, "ch04-size", 0.5, "declared: 2.5 against the paper's 2",
                 requires=("substitute_plateaued",)),
    DeclaredTest("bank_gamma_above_2", "the bank's coefficient behaves like the substitutive one (BoV paper, Fig. 2a "
                 "yardstick)", "bank runs: mean γ over the x0 layers", "vs 2", "positive", PAPER_SUBSTITUTIVE_COEF,
                 "ch04-size", 0.5, "declared: 2.5 against the paper's 2", requires=("bank_plateaued",)),
    # the losses (sub-epoch runs only)
    DeclaredTest("qkv_loss", "x0 added to the deep layers lowers the loss (BoV Table 1, row 13 vs 1: 0.845 vs 0.854 "
                 "bits per byte)", "final val loss, qkv − baseline", "same seed", "negative", 0.0, "ch04-loss",
                 _bpb(-0.009), "paper: −0.009 bits per byte × 3.129 nats per token per bit per byte",
                 requires=("sub_epoch",)),
    DeclaredTest("substitute_loss", "values replaced by x0·W_V lower the loss (BoV Table 1, row 9: 0.845 vs 0.854)",
                 "final val loss, substitute_v − baseline", "same seed", "negative", 0.0, "ch04-loss", _bpb(-0.009),
                 "paper: −0.009 bits per byte, converted", requires=("sub_epoch",)),
    DeclaredTest("bank_loss", "the bank of values lowers the loss (BoV Table 2, 780 M: 0.722 → 0.714 bits per byte)",
                 "final val loss, bank − baseline", "same seed", "negative", 0.0, "ch04-loss", _bpb(-0.008),
                 "paper: −0.008 bits per byte, converted", requires=("sub_epoch",)),
    DeclaredTest("scale_control_costs", "a learned scale on plain V does not help (BoV Table 1, row 2: 0.858 vs "
                 "0.854)", "final val loss, scale_v − baseline", "same seed", "positive", 0.0, "ch04-loss",
                 _bpb(0.004), "paper: +0.004 bits per byte, converted", requires=("sub_epoch",)),
    # controls: judged only where the gain they would explain is reproduced
    DeclaredTest("qkv_beats_scale_control", "the gain needs x0, not just one more scalar on the value path (BoV "
                 "Table 1, row 13 vs row 2: 0.845 vs 0.858)", "final val loss, qkv − scale_v", "same seed, control",
                 "negative", 0.0, "ch04-controls", _bpb(-0.013), "paper: −0.013 bits per byte, converted",
                 kind="control", gate="qkv_loss", requires=("sub_epoch",)),
    DeclaredTest("qkv_beats_random_x0", "the gain needs the token's identity, not any fixed per-token vector",
                 "final val loss, qkv − qkv_random", "same seed, control", "negative", 0.0, "ch04-controls",
                 _bpb(-0.009), "declared: the whole of qkv's published gain", kind="control", gate="qkv_loss",
                 requires=("sub_epoch",)),
    DeclaredTest("substitute_beats_scale_control", "substitution beats the scale-only control (BoV Table 1, row 9 "
                 "vs row 2: 0.845 vs 0.858)", "final val loss, substitute_v − scale_v", "same seed, control",
                 "negative", 0.0, "ch04-controls", _bpb(-0.013), "paper: −0.013 bits per byte, converted",
                 kind="control", gate="substitute_loss", requires=("sub_epoch",)),
    DeclaredTest("bank_beats_scale_control", "the bank beats the scale-only control", "final val loss, bank − "
                 "scale_v", "same seed, control", "negative", 0.0, "ch04-controls", _bpb(-0.008),
                 "declared: the whole of the bank's published gain", kind="control", gate="bank_loss",
                 requires=("sub_epoch",)),
)


def gamma_plateau(runs: list[dict], mode: str) -> dict:
    """:func:`~vrs_edu.lab.analysis.trajectory_plateaus` of γ (init 1) in ``substitute_v`` or ``bank`` runs."""
    return trajectory_plateaus(runs, lambda r: [f"blocks.{l}.x0.gamma" for l in x0_layers(r, mode)], 1.0)


def _arms(c: dict) -> dict[str, str]:
    """The arms of the rate sweep whose runs the result holds, nominal first."""
    return {arm: v for arm, v in RATE_SWEEP.items() if v in c}


def facts(result: dict) -> dict:
    """The value of each declared precondition (``PRECONDITIONS``) on a result of this recipe; the coefficient ones
    per arm of the rate sweep."""
    part = result["corpus"]
    c = part["runs"]
    out: dict = {"sub_epoch": epochs_read(part)}
    base = sorted(c["baseline"], key=lambda r: r["seed"])
    if "qkv" in c:
        deep = x0_layers(c["qkv"][0])
        out["deep_context"] = sum(r["layer_metrics"][f"x0_r2_{s}"][l] for r in base for s in "qkv" for l in deep) / (
            3 * len(deep) * len(base))
        arms = _arms(c)
        out["x0_plateaued"] = {a: beta_plateau(c[v], paths="qkv")["fraction"] for a, v in arms.items()}
        # Not a precondition any more (the check qkv_no_worse judges it, an equivalence test): the mean per arm
        # stays here for chapter 04's rate table.
        out["qkv_no_worse"] = {a: sum(paired_values(c[v], c["baseline"])) / len(c[v]) for a, v in arms.items()}
    for mode, name in (("substitute_v", "substitute_plateaued"), ("bank", "bank_plateaued")):
        if mode in c:
            out[name] = gamma_plateau(c[mode], mode)["fraction"]
    return out


def described_values(result: dict) -> dict:
    """Per-seed values of the numbers in :data:`DESCRIBED` (``{arm: list}`` for the swept ones, nominal arm first);
    those whose runs are absent are left out."""
    c = result["corpus"]["runs"]
    out: dict = {}
    arms = _arms(c)
    if arms:
        sm = {a: share_margins(c[v]) for a, v in arms.items()}
        for name, key in (("additive_criterion", "share_v"), ("v_reads_x0_more_than_q", "margin_q"),
                          ("v_reads_x0_more_than_k", "margin_k"), ("beta_v_last_layer_above_10", "last_beta_v")):
            out[name] = {a: sm[a][key] for a in arms}
        if all("x0_removal_cost" in r for v in arms.values() for r in c[v]):
            nm = {a: need_margins(c[v]) for a, v in arms.items()}
            out["v_needs_x0_more_than_q"] = {a: nm[a]["margin_q"] for a in arms}
            out["v_needs_x0_more_than_k"] = {a: nm[a]["margin_k"] for a in arms}
    if all("x0_pressure" in r for r in c["baseline"]):
        pr = pressure_ratios(c["baseline"])
        out.update(v_pressure_above_q=pr["log_v_over_q"], v_pressure_above_k=pr["log_v_over_k"])
    return out


def descriptions(result: dict) -> list[Description]:
    """The x0 numbers of :data:`DESCRIBED` with their 95 % intervals, per arm of the rate sweep where swept, in that
    order: shown, never judged, because their premise (``deep_context``, :data:`vrs_edu.lab.premises.DEEP_X0_R2`)
    fails on every language-model toy (:data:`vrs_edu.lab.premises.LM_TOYS_FAIL`); ``recall.verdicts`` judges them."""
    values = described_values(result)
    return [describe(name, quantity, values[name], LM_TOYS_SHORT + "; the recall task judges it") for name, quantity in DESCRIBED
            if name in values]


def test_values(result: dict) -> dict:
    """Per-seed values of every declared test (``TESTS``) from a result made by the current code (``VARIANTS_V2``):
    a list per test, ``{arm: list}`` for the swept ones. Tests whose runs are absent are left out."""
    c = result["corpus"]["runs"]
    out: dict = {}
    arms = _arms(c)
    if arms and "baseline" in c:
        out["qkv_no_worse"] = {a: paired_values(c[v], c["baseline"]) for a, v in arms.items()}
    for name in ("substitute_v", "bank"):
        if name in c:
            key = "substitute_gamma_above_2" if name == "substitute_v" else "bank_gamma_above_2"
            out[key] = [sum(r["coefficients"][f"blocks.{l}.x0.gamma"] for l in x0_layers(r, name))
                        / len(x0_layers(r, name)) for r in sorted(c[name], key=lambda r: r["seed"])]
    pairs = {"qkv_loss": ("qkv", "baseline"), "qkv_beats_scale_control": ("qkv", "scale_v"),
             "qkv_beats_random_x0": ("qkv", "qkv_random"), "substitute_loss": ("substitute_v", "baseline"),
             "substitute_beats_scale_control": ("substitute_v", "scale_v"), "bank_loss": ("bank", "baseline"),
             "bank_beats_scale_control": ("bank", "scale_v"), "scale_control_costs": ("scale_v", "baseline")}
    for key, (a, b) in pairs.items():
        if a in c and b in c:
            out[key] = paired_values(c[a], c[b])
    return out


def verdicts(result: dict) -> list[Verdict]:
    """The verdicts of the declared tests (:func:`vrs_edu.lab.analysis.judge`, preconditions read by :func:`facts`)
    on a result made by the current code; print them with :func:`vrs_edu.lab.analysis.format_verdicts`. A control
    whose gate was not run is left out with it."""
    values = test_values(result)
    f = facts(result)
    present = [t for t in TESTS if t.name in values and all(r in f or r in values for r in t.requires)
               and (t.gate is None or t.gate in values)]
    return judge(present, values, preconditions=PRECONDITIONS, facts=f)


# `vrs-edu reproduce bank-of-values` (the table of every recipe: vrs_edu.recipes)
RECIPE = Recipe("bank-of-values", bank_of_values,
                "x0 coefficients for Q, K, V (QK-norm, the official coefficient rates scaled to our batch, swept "
                "×0.25-×4) with the need for x0 beside them, against the scale-only and random-x0 controls; V := "
                "γ·W_V(x0); bank of values; the substitution ablation (word-8x64, 5 seeds; verdicts on --corpus kjv; "
                "the recall task is `reproduce recall`)",
                default_seeds=SEEDS, text=True, verdicts=verdicts)
