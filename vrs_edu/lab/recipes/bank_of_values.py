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
"""
from __future__ import annotations


from ..analysis import DeclaredTest, judge, paired_values, plateau, verdict_records
from ..experiments import recipe
from ..options import RunOptions
from ..results import Verdict
from .value_residual import CORPUS, QUICK_STEPS, SEEDS, run_suite

VARIANTS = {
    "baseline": {},
    "qkv": {"x0_mode": "qkv"},
    "shared": {"x0_mode": "shared"},
    "substitute_v": {"x0_mode": "substitute_v"},
    "bank": {"x0_mode": "bank"},
}
def x0_layers(run: dict, mode: str = "qkv") -> list[int]:
    """The layers that carry x0 coefficients in a run (read from its coefficient names)."""
    key = {"qkv": "x0.beta_v", "shared": "x0.beta", "substitute_v": "x0.gamma", "bank": "x0.gamma"}[mode]
    return sorted({int(k.split(".")[1]) for k in run["coefficients"] if k.endswith(key)})


def coefficient_table(runs: list[dict]) -> dict:
    """For ``qkv`` runs: ``{"layers": [...], "alpha_q": [[per layer] per seed], "beta_q": ..., ...}``."""
    layers = x0_layers(runs[0])
    table = {"layers": layers, "seeds": [r["seed"] for r in runs]}
    for name in ("alpha_q", "beta_q", "alpha_k", "beta_k", "alpha_v", "beta_v"):
        table[name] = [[r["coefficients"][f"blocks.{l}.x0.{name}"] for l in layers] for r in runs]
    return table


@recipe("bank-of-values", "x0 coefficients for Q, K, V (QK-norm, official coefficient LRs) against the scale-only, "
        "random-x0 and previous-token-x0 controls; V := γ·W_V(x0); bank of values; the substitution ablation "
        "(word-8x64 corpus, 5 seeds; the recall task is `reproduce recall`)", default_seeds=SEEDS)
def bank_of_values(quick: bool, seeds: list[int], *, corpus=None, tokenizer: str | None = None,
                   options: RunOptions = RunOptions()) -> dict:
    corpus = run_suite(CORPUS["preset"], VARIANTS_V2, seeds, quick, CORPUS["train"], ablation_for=("baseline",),
                       checkpoint_for=("qkv",), checkpoint_as="bank-of-values", desc="corpus ", corpus=corpus,
                       tokenizer=tokenizer, options=options)
    corpus["coefficient_table"] = coefficient_table(corpus["runs"]["qkv"])
    corpus["beta_v_plateau"] = beta_plateau(corpus["runs"]["qkv"])
    corpus["coefficient_table_course_lr"] = coefficient_table(corpus["runs"]["qkv_course"])
    result = {"variants": VARIANTS_V2, "corpus": corpus,
              "settings": {"corpus": CORPUS, "quick_steps": QUICK_STEPS,
                           "paper_last_layer_coef": PAPER_LAST_LAYER_COEF,
                           "paper_substitutive_coef": PAPER_SUBSTITUTIVE_COEF, "verdicts_use": "qkv (coef_opt=official)"}}
    result["verdicts"] = verdict_records(verdicts(result))
    return result


# ---------------------------------------------------------------------------------------------------------------
# The experiment as the current code runs it, and its pre-declared tests (committed before the full run).
#
# Set-up: every variant has the strong baseline (stream starts at RMSNorm(embedding)) and QK-norm, as the official
# code (nanochat ``gpt_base.py``: ``q, k = norm(q), norm(k)`` after the x0 mix), so the common scale of (α_q, β_q)
# is no attention temperature and only scale-free quantities are read: the x0 share β / (|α| + |β|). The x0
# coefficients train with the official optimizer settings (``coef_opt="official"``: β and γ at AdamW lr 0.5, betas
# (0.96, 0.95); α at lr 0.005, wd 0.05; the bank table E_v at lr 0.15); the verdicts use these runs.
# Controls: ``scale_v`` (V := γ·W_V x_i, the BoV paper's Table 1 row 2: a scalar on V that never reads x0) and
# ``qkv_random`` (the same six coefficients, but x0 replaced by a fixed random per-token vector of the same RMS).

SETUP = {"qk_norm": True, "coef_opt": "official"}
VARIANTS_V2 = {
    "baseline": {**SETUP},
    "qkv": {**SETUP, "x0_mode": "qkv"},
    "scale_v": {**SETUP, "x0_mode": "scale_v"},
    "qkv_random": {**SETUP, "x0_mode": "qkv", "x0_source": "random"},
    "substitute_v": {**SETUP, "x0_mode": "substitute_v"},
    "bank": {**SETUP, "x0_mode": "bank"},
    "qkv_previous": {**SETUP, "x0_mode": "qkv", "x0_source": "previous"},
    # the same experiment at the course's coefficient LR (0.02 for every coefficient), shown next to the official one
    "qkv_course": {**SETUP, "x0_mode": "qkv", "coef_opt": "course"},
}
# The associative-recall task, where the coefficients are read from models that have learned lookup, is a recipe of
# its own (``recall.py``): it needs 1,500 steps at batch 64, which would not fit this budget.
# Budget (1 thread; word-8x64 ≈ 0.17 s/step, qkv/bank a few % more; pilot runs above):
#   corpus: 8 variants × 5 seeds × 240 steps × 0.17 s ≈ 27 min, + evaluations (≈ 4 s/run) ≈ 30 min, + the
#           substitution ablation on 5 baselines (≈ 100 forward passes each) ≈ 1 min;
#                                                                                         Total ≈ 31 CPU-min.
# (Estimates. What the recorded run took, wall and CPU: its result file, and ``make bench``.)
# Pilot (seed 0, 240 steps, official LRs + QK-norm): β_v rose to 3.3 (layer 6) and 3.7 (layer 7) and was still
# rising at step 240; at 480 steps it reached 3.8-4.2, but the validation loss rose after step 260 (the corpus is
# small: training longer overfits). ``beta_v_plateau`` reports the plateau criterion on every run.
# Yardsticks, each from its source. The paper (arXiv 2606.02780) reports only V-side coefficients (Fig. 2):
# additive variants: |coef(Ṽ)| ≫ |coef(V)|, the last layer |coef(Ṽ)| > 10; substitutive variants: coef(Ṽ) > 2
# in every target layer, > 10 in the last. "β_q, β_k ≈ 0 while β_v grows" is from an author's post, not the paper.
PAPER_LAST_LAYER_COEF = 10.0     # BoV paper, Fig. 2 (additive and substitutive): last layer > 10
PAPER_SUBSTITUTIVE_COEF = 2.0    # BoV paper, Fig. 2a (substitutive only): > 2 in every target layer

TESTS = (
    DeclaredTest("additive_criterion", "additive x0 into V: the context-free part's coefficient dominates V's own "
                 "(BoV paper, Fig. 2, Sec. 3 (i): 'much larger in magnitude'; we test |β_v| > |α_v|)",
                 "qkv runs: x0 share of V's input |β_v| / (|α_v| + |β_v|), mean over the x0 layers", "vs 0.5",
                 "positive", 0.5, "primary"),
    DeclaredTest("v_reads_x0_more_than_qk", "deep layers re-read x0 through V, while Q and K keep reading the stream "
                 "(author's post, not in the paper)", "qkv runs: share_v − max(share_q, share_k), share = β/(|α|+|β|), "
                 "mean over the x0 layers", "vs 0", "positive", 0.0, "primary"),
    DeclaredTest("beta_v_last_layer_above_10", "the last layer's coefficient on the context-free value exceeds 10 "
                 "(BoV paper, Fig. 2)", "qkv runs: |β_v| in the last layer", "vs 10", "positive",
                 PAPER_LAST_LAYER_COEF, "ch04"),
    DeclaredTest("substitute_gamma_above_2", "substitutive x0·W_V: the learned coefficient stays above 2 (BoV paper, "
                 "Fig. 2a)", "substitute_v runs: mean γ over the x0 layers", "vs 2", "positive",
                 PAPER_SUBSTITUTIVE_COEF, "ch04"),
    DeclaredTest("bank_gamma_above_2", "the bank's coefficient behaves like the substitutive one (BoV paper, Fig. 2a "
                 "yardstick)", "bank runs: mean γ over the x0 layers", "vs 2", "positive", PAPER_SUBSTITUTIVE_COEF,
                 "ch04"),
    DeclaredTest("qkv_loss", "x0 added to the deep layers lowers the loss (BoV Table 1, row 13 vs 1: 0.845 vs 0.854 "
                 "bits per byte)", "final val loss, qkv − baseline", "same seed", "negative", 0.0, "ch04"),
    DeclaredTest("qkv_beats_scale_control", "the gain needs x0, not just one more scalar on the value path",
                 "final val loss, qkv − scale_v", "same seed, control", "negative", 0.0, "ch04"),
    DeclaredTest("qkv_beats_random_x0", "the gain needs the token's identity, not any fixed per-token vector",
                 "final val loss, qkv − qkv_random", "same seed, control", "negative", 0.0, "ch04"),
    DeclaredTest("qkv_beats_previous_x0", "the gain needs the token itself, not the previous token's identity (cheap "
                 "bigram context, like nanochat's smear)", "final val loss, qkv − qkv_previous", "same seed, control",
                 "negative", 0.0, "ch04"),
    DeclaredTest("substitute_loss", "values replaced by x0·W_V lower the loss (BoV Table 1, row 9: 0.845 vs 0.854)",
                 "final val loss, substitute_v − baseline", "same seed", "negative", 0.0, "ch04"),
    DeclaredTest("substitute_beats_scale_control", "substitution beats the scale-only control (BoV Table 1, row 9 "
                 "vs row 2: 0.845 vs 0.858)", "final val loss, substitute_v − scale_v", "same seed, control",
                 "negative", 0.0, "ch04"),
    DeclaredTest("bank_loss", "the bank of values lowers the loss (BoV Table 2, 780 M: 0.722 → 0.714 bits per byte)",
                 "final val loss, bank − baseline", "same seed", "negative", 0.0, "ch04"),
    DeclaredTest("bank_beats_scale_control", "the bank beats the scale-only control", "final val loss, bank − "
                 "scale_v", "same seed, control", "negative", 0.0, "ch04"),
    DeclaredTest("scale_control_costs", "a learned scale on plain V does not help (BoV Table 1, row 2: 0.858 vs "
                 "0.854)", "final val loss, scale_v − baseline", "same seed", "positive", 0.0, "ch04"),
)


def _share(a: float, b: float) -> float:
    return abs(b) / (abs(a) + abs(b)) if abs(a) + abs(b) > 0 else 0.0


def share_margins(runs: list[dict]) -> dict[str, list[float]]:
    """Per qkv run (seed order): ``share_v`` = mean over the x0 layers of |β_v| / (|α_v| + |β_v|), and ``margin`` =
    mean over the x0 layers of share_v − max(share_q, share_k) (scale-free under QK-norm)."""
    out = {"share_v": [], "margin": [], "last_beta_v": []}
    for r in sorted(runs, key=lambda r: r["seed"]):
        c, ls = r["coefficients"], x0_layers(r)
        sh = {s: [_share(c[f"blocks.{l}.x0.alpha_{s}"], c[f"blocks.{l}.x0.beta_{s}"]) for l in ls] for s in "qkv"}
        out["share_v"].append(sum(sh["v"]) / len(ls))
        out["margin"].append(sum(v - max(q, k) for q, k, v in zip(sh["q"], sh["k"], sh["v"])) / len(ls))
        out["last_beta_v"].append(abs(c[f"blocks.{ls[-1]}.x0.beta_v"]))
    return out


def plateau_window(run: dict, decay_frac: float = 0.3) -> tuple[float, float]:
    """The steps (start, end) over which :func:`beta_plateau` judges a run: a quarter of the run, ending where the
    learning-rate decay starts (``decay_frac`` of the steps before the end; 1,200 steps → (540, 840)), so that the
    decay, which slows every update, cannot make a plateau by itself. A schedule with no constant phase before its
    last log gets the last logged interval."""
    h = run["history"]
    steps = h["eval_steps"]
    xs = [0, *steps] if steps[0] > 0 else steps   # β starts at 0 (step 0), before the first logged evaluation
    n = h["steps"][-1] + 1
    decay_start = int(n * (1 - decay_frac))
    window = (max(xs[0], decay_start - n / 4), min(decay_start, xs[-1]))
    return window if window[0] < window[1] else (xs[-2], xs[-1])


def beta_plateau(runs: list[dict], tol: float = 0.1, decay_frac: float = 0.3) -> dict:
    """Did β_v stop moving before the LR decay? For every qkv run and x0 layer, :func:`~vrs_edu.lab.analysis.plateau`
    on the logged β_v trajectory (from its initial 0) over :func:`plateau_window` (``decay_frac``: the training
    schedule's, 0.3 by default). Returns ``{"reached": n, "of": m,
    "per_run": [[ratio per layer] per seed]}``."""
    per_run, reached, total = [], 0, 0
    for r in sorted(runs, key=lambda r: r["seed"]):
        h = r["history"]
        steps = h["eval_steps"]   # coefficients are logged at every evaluation
        window = plateau_window(r, decay_frac)
        ratios = []
        for l in x0_layers(r):
            beta = h["coefficients"][f"blocks.{l}.x0.beta_v"]
            # β starts at 0 (step 0), before the first logged evaluation: the total change counts from there
            xs, ys = ([0, *steps], [0.0, *beta]) if steps[0] > 0 else (steps, beta)
            p = plateau(xs, ys, window, tol)
            ratios.append(p["ratio"])
            reached += p["reached"]
            total += 1
        per_run.append(ratios)
    return {"reached": reached, "of": total, "tol": tol, "per_run": per_run}


def test_values(result: dict) -> dict[str, list[float]]:
    """Per-seed values of every declared test (``TESTS``) from a result made by the current code (``VARIANTS_V2``;
    Tests whose runs are absent are left out."""
    c = result["corpus"]["runs"]
    out: dict[str, list[float]] = {}
    if "qkv" in c:
        sm = share_margins(c["qkv"])
        out.update(additive_criterion=sm["share_v"], v_reads_x0_more_than_qk=sm["margin"],
                   beta_v_last_layer_above_10=sm["last_beta_v"])
    for name in ("substitute_v", "bank"):
        if name in c:
            key = "substitute_gamma_above_2" if name == "substitute_v" else "bank_gamma_above_2"
            out[key] = [sum(r["coefficients"][f"blocks.{l}.x0.gamma"] for l in x0_layers(r, name))
                        / len(x0_layers(r, name)) for r in sorted(c[name], key=lambda r: r["seed"])]
    pairs = {"qkv_loss": ("qkv", "baseline"), "qkv_beats_scale_control": ("qkv", "scale_v"),
             "qkv_beats_random_x0": ("qkv", "qkv_random"), "qkv_beats_previous_x0": ("qkv", "qkv_previous"),
             "substitute_loss": ("substitute_v", "baseline"),
             "substitute_beats_scale_control": ("substitute_v", "scale_v"), "bank_loss": ("bank", "baseline"),
             "bank_beats_scale_control": ("bank", "scale_v"), "scale_control_costs": ("scale_v", "baseline")}
    for key, (a, b) in pairs.items():
        if a in c and b in c:
            out[key] = paired_values(c[a], c[b])
    return out


def verdicts(result: dict) -> list[Verdict]:
    """The three-way verdicts of the declared tests (:func:`vrs_edu.lab.analysis.judge`) on a result made by the
    current code; print them with :func:`vrs_edu.lab.analysis.format_verdicts`."""
    values = test_values(result)
    return judge([t for t in TESTS if t.name in values], values)
