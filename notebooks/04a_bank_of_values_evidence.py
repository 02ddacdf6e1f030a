# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Appendix 04 · The evidence behind the bank of values
#
# This appendix holds what stands behind [chapter 04](04_bank_of_values.ipynb)'s numbers without being its lesson:
# the runs' provenance and rates, the instruments the chapter reads only in summary (gradient pressure, the
# substitution ablation, the premise's x0-R² across the course's toys), every declared test with its
# preconditions, the per-layer and per-seed tables, the recall task's tests, the production designs' loss tests,
# the widget model's additive β step, where our recipe differs from the official one, the same tests on a second
# corpus, and the ledger of every run the result files have held. Each section computes its numbers from the
# stored results under `data/results` (and, for the widget's model, its checkpoint).

# %%
from vrs_edu.course.setup import setup_notebook

setup_notebook(seed=0)

# %%
import matplotlib.pyplot as plt

from vrs_edu.chapters.ch04_bank_of_values import prose as ch04
from vrs_edu.chapters.ch04_bank_of_values import recipe as bov
from vrs_edu.chapters.ch04_bank_of_values.previous_chapters import recall as recall_recipe
from vrs_edu.chapters.ch04_bank_of_values.readout import ablation_table
from vrs_edu.lab.analysis import compare_to_baseline
from vrs_edu.lab.by_corpus import verdict_corpus
from vrs_edu.lab.experiments import load_results, load_results_or_none
from vrs_edu.viz.prose import say, table

R = load_results("bank-of-values", corpus=verdict_corpus())
RC = load_results("recall")
RR = load_results_or_none("recall-rates", say=say)
recall_facts = recall_recipe.facts(recall_recipe.with_rates(RC, RR))
bov_arms = R["settings"]["rate_sweep"]                 # arm -> variant, e.g. "×4" -> "qkv_lr4"
sweep = ch04.rate_sweep(R["corpus"], bov_arms)
cfg = R["corpus"]["configs"]["qkv"]
facts = bov.facts(R)
V = bov.verdicts(R)
by = {r.test.name: r for r in V}
described = {d.name: d for d in bov.descriptions(R)}   # shown, not judged: premise fails
abl = ablation_table(R["corpus"]["runs"]["baseline"])
deep_rows = [abl["layers"].index(l) for l in R["corpus"]["coefficient_table"]["layers"]]
abl_largest = max(abs(abl[s][i][0]) for s in "qkv" for i in deep_rows)
comparison = compare_to_baseline(R["corpus"]["runs"], R["corpus"]["step_seconds"])
base_sd = comparison["baseline"].final_sd
opt = {v: {g["name"]: g for g in R["corpus"]["runs"][v][0]["optimizer"]} for v in bov_arms.values()}

# %% [markdown]
# ## The runs and the official rates
#
# The runs' provenance, their set-up, and the rates of the sweep. The official code trains β (and γ) with AdamW at
# `scalar_lr` = 0.5, α at `scalar_lr` × 0.01 (RiddleHe/nanochat `gpt_base.py`), at nanochat's reference batch of
# $B_\text{ref} = 2^{19}$ tokens per step; its training script multiplies every rate by $\sqrt{B / B_\text{ref}}$
# (`scripts/base_train.py`). Our batch is 32 × 64 = 2,048 tokens, so $\text{lr}_\beta = 0.5 / 16 = 0.03125$. The
# sweep trains `qkv` at ×0.25, ×1 and ×4 of these rates (`qkv_lr0.25`, `qkv_lr4`).

# %%
from vrs_edu.lab.analysis import format_comparison
from vrs_edu.lab.by_corpus import train_val_gap
from vrs_edu.lab.experiments import provenance

print(provenance(R))
print(provenance(RC))
print(provenance(RR) if RR else "recall-rates: not made")
gap = train_val_gap(R["corpus"], "baseline")
rates = {arm: (opt[v]['x0_beta_gamma']['lr'], opt[v]['x0_alpha']['lr'])
         for arm, v in bov_arms.items()}
say(ch04.appendix_corpus_sentence(
    R['text_corpus']['name'], R['corpus']['coefficient_table']['layers'], cfg['train']['steps'],
    cfg['train']['batch_size'], cfg['model']['qk_norm'], R['epochs_read']['corpus']['baseline'],
    gap, rates))
print(format_comparison(comparison))

# %% [markdown]
# ## Why the instruments disagree
#
# Earlier versions of this chapter read one instrument at a time and got four answers: V's share below Q's at one
# rate, above at another, undecided on the recall task, and an ablation with too little range. They are not four
# answers to one question. The **share** says where an optimiser carried a coefficient in a few hundred steps; the
# **removal cost** says what the trained model loses without it; the gradient pressure says how hard the loss pulls
# on a path's $x_0$ before anything moved; the substitution ablation asks a model that never had $x_0$ to run on it.
# And all of them rest on a premise, that the deep layers' inputs are mostly context, which x0-R² measures.

# %%
say(ch04.instruments_sentence(sweep, described["v_pressure_above_q"].mean, abl_largest, base_sd))

# %% [markdown]
# ## One premise, one threshold

# %% [markdown]
# **One premise, one threshold.** Every x0 claim of the course rests on the same premise: the deep layers' inputs
# are mostly context, below 0.5 x0-R² (declared once, in `vrs_edu.lab.premises`, before the first full run). Only
# then can a deep layer *need* to re-read $x_0$, and only then can a share or a removal cost say which path needs
# it: above it, every path already reads $x_0$ through its input. Chapter 05 once asked its routers' inputs only
# for less than 0.9, a ceiling set after seeing its runs; it now uses the same 0.5. The stored values on this
# corpus:

# %%
from vrs_edu.lab.premises import DEEP_X0_R2, deep_x0_r2

DM = load_results("depth-mixers", corpus=verdict_corpus())
dm_share = deep_x0_r2(DM["runs"].get("residual", []))
say(ch04.premises_table(facts["deep_context"], bov.DEEP_CONTEXT.threshold, dm_share, DEEP_X0_R2))

# %%
say(ch04.premises_sentence(facts["deep_context"], bov.DEEP_CONTEXT.threshold, dm_share,
                           DEEP_X0_R2))

# %% [markdown]
# The premise fails on this toy, but is that this toy's size? Chapter 03's depth sweep trained the same kind of
# language model at several depths, and the recall task and chapter 08's real decoder measured the same x0-R²:

# %%
say(ch04.lm_toys_sentence(**ch04.lm_toys_evidence()))

# %% [markdown]
# ## The substitution ablation
#
# A second, independent question on models that were never offered $x_0$: take the trained *baselines* and, in one
# layer at a time, replace the input of Q, of K or of V with $x_0$, and measure the loss change on held-out text.
# A path that only needs token identity tolerates the swap. The x0 layers of the coefficient experiment are shaded.

# %%
from vrs_edu.chapters.ch04_bank_of_values.figures import plot_ablation

plot_ablation({R["text_corpus"]["name"]: abl},
              deep_layers=R["corpus"]["coefficient_table"]["layers"])
plt.show()
worst = {s: max(abl[s][i][0] for i in deep_rows) for s in "qkv"}
say(ch04.ablation_sentence(worst, base_sd, abl_largest))

# %% [markdown]
# ## The substitution ablation in numbers
#
# Not a declared test: a swap inside one layer of a deep stack moves the loss by little, so its size is read
# against the baseline's seed-to-seed spread first.

# %%
say(ch04.ablation_rows_table(abl))

# %% [markdown]
# ## Declared tests, preconditions and verdicts
#
# As in chapter 03, the recipe's tests and preconditions (`bank_of_values.TESTS`, `PRECONDITIONS`) were committed
# before the full run. Each test names the claim and its source, the per-seed quantity, the side of a threshold the
# claim predicts and its smallest effect of interest (the paper's loss differences, in
# [bits per byte](#glossary:bits-per-byte), a loss per byte of text rather than per token, converted to nats per
# token on this corpus; the shares: a tenth of a path's input). Families: **primary** (the additive criterion; V
# more than Q; V more than K), `x0-need` (removal costs), `x0-pressure` (gradient pressure), `x0-size` and
# `ch04-size` (the paper's size yardsticks, above 10 for β_v in the last layer, above 2 for γ), `ch04-loss` and
# `ch04-controls` (a control judged only where the gain it would explain is reproduced, else n/a). Every test on the
# learned coefficients is judged at each of the three rates and counts only if its verdict holds at all three
# (an intersection-union test); it is **rate-dependent** only when one rate reproduces it and another contradicts
# it, and any other mixture ("reproduced at ×4 only") is undecided. A test whose precondition fails is
# [out of regime](#glossary:out-of-regime), shown with its [would-be verdict](#glossary:would-be-verdict) (what the
# data say if judged anyway): `sub_epoch` (less than one epoch read), `x0_plateaued` (the coefficients had stopped
# moving, at each rate) and `deep_context` (x0-R² of the x0 layers' inputs below 0.5). Where that last premise is
# known to fail, as on this corpus, the x0 numbers are not declared as tests at all: they are shown as
# descriptions, and the claims are judged on the recall task. `qkv_no_worse` is an
# [equivalence test](#glossary:equivalence-test): the qkv models' loss lies within ±0.01 nats of the
# baseline's. p-values are [Holm-corrected](#glossary:holm-correction) within each family at each rate; an
# undecided test gives its power at its declared effect; verdicts are
# [three-way](#glossary:three-way-verdicts) (reproduced, contradicted, undecided) with a fourth word,
# [negligible](#glossary:negligible), for an interval inside ± the test's smallest effect of interest.

# %%
from vrs_edu.lab.analysis import check_preconditions, precondition_lines
from vrs_edu.viz.prose import verdict_table

V = bov.verdicts(R)
print(precondition_lines(check_preconditions(bov.PRECONDITIONS, facts)))
say(table(*verdict_table(V)))
say(ch04.swept_clauses(V))

# %% [markdown]
# ## The rate sweep in numbers, and the coefficients

# %%
from vrs_edu.lab.analysis import mean_sd
from vrs_edu.chapters.ch04_bank_of_values.figures import plot_betas
from vrs_edu.lab.x0_need import share_margins

rate_sm = {arm: share_margins(R["corpus"]["runs"][v]) for arm, v in bov_arms.items()}
say(ch04.rates_table(
          [[arm, f"{opt[v]['x0_beta_gamma']['lr']:.4f}",
            f"{mean_sd(rate_sm[arm]['share_v'])[0]:.3f}",
            f"{mean_sd(rate_sm[arm]['margin_q'])[0]:+.3f}",
            f"{mean_sd(rate_sm[arm]['margin_k'])[0]:+.3f}",
            f"{mean_sd(rate_sm[arm]['last_beta_v'])[0]:.2f}", f"{facts['qkv_no_worse'][arm]:+.4f}"]
           for arm, v in bov_arms.items()]))
ct = R["corpus"]["coefficient_table"]
NAMES = ("alpha_q", "beta_q", "alpha_k", "beta_k", "alpha_v", "beta_v")
say(*ch04.coefficients_table(
    len(ct['seeds']), NAMES,
    [[l, *(ch04.mean_sd_text([row[i] for row in ct[n]], "+.2f") for n in NAMES)]
     for i, l in enumerate(ct["layers"])]))
plot_betas({"corpus": ct, "recall": RC["recall"]["coefficient_table"]})
plt.show()

# %% [markdown]
# ## Had the coefficients stopped moving?
#
# The plateau criterion: over the quarter of the run just before the learning-rate decay starts (shaded), β
# changed by at most a tenth of its whole change from 0. The criterion is applied to each seed's curve; a mean curve
# that looks flat can hide seeds that still move in opposite directions.

# %%
from vrs_edu.chapters.ch04_bank_of_values.figures import plot_beta_trajectories
from vrs_edu.lab.x0_need import beta_plateau, beta_plateau_window

for name, part in (("corpus", R["corpus"]), ("recall", RC["recall"])):
    runs = part["runs"]["qkv"]
    plot_beta_trajectories(runs, window=beta_plateau_window(runs[0]),
                           title=ch04.trajectories_title(name))
    plt.show()
lines = [ch04.plateau_line(p, part["beta_v_plateau"])
         for p, part in (("corpus", R["corpus"]), ("recall", RC["recall"]))]
fractions = {arm: beta_plateau(R['corpus']['runs'][v], paths='qkv')['fraction']
             for arm, v in bov_arms.items()}
lines.append(ch04.x0_plateau_line(fractions))
say(*lines)

# %% [markdown]
# ## Need, in numbers
#
# Removal cost per path and rate; the baseline's gradient $\partial L / \partial \beta$ at β = 0 per x0 layer; and
# the x0-R² of the x0 layers' inputs in the baseline and the `qkv` models.

# %%
press = [r["x0_pressure"] for r in R["corpus"]["runs"]["baseline"]]
deep = R["corpus"]["coefficient_table"]["layers"]
r2 = {v: {s: mean_sd([sum(r["layer_metrics"][f"x0_r2_{s}"][l] for l in deep) / len(deep)
                      for r in R["corpus"]["runs"][v]])[0] for s in "qkv"}
      for v in ("baseline", *bov_arms.values())}
say(*ch04.need_tables(
    [[arm, *(f"{sum(a['cost'][s]) / len(a['cost'][s]):+.4f}" for s in "qkv")]
     for arm, a in sweep.items()], press[0]["layers"],
    [[s, *(f"{mean_sd([p[s][i] for p in press])[0]:+.2e}" for i in range(len(press[0][s])))]
     for s in "qkv"],
    [[v, *(f"{r2[v][s]:.3f}" for s in "qkv")] for v in r2]))
say(ch04.described_clauses([described[n] for n in (
    "v_needs_x0_more_than_q", "v_needs_x0_more_than_k",
    "v_pressure_above_q", "v_pressure_above_k")]))

# %% [markdown]
# ## The losses, the controls and γ
#
# A loss gain from `qkv` could have cheaper causes: a scalar on the value path (`scale_v`, Table 1 row 2 of the
# paper) or a second input of any kind (`qkv_random`: a fixed random vector per token, same RMS). The paper's
# numbers (Table 1, bits per byte at 135 M): baseline 0.854, substitution 0.845, additive 0.845, scale-only 0.858.
# The paper's yardstick for γ of the substitutive variants (Fig. 2a): above 2.

# %%
rows = []
for variant in ("scale_v", "substitute_v", "bank"):
    runs = R["corpus"]["runs"][variant]
    keys = sorted((k for k in runs[0]["coefficients"] if k.endswith("x0.gamma")),
                  key=lambda k: int(k.split(".")[1]))
    rows.append([variant, ", ".join(f"{k.split('.')[1]}: "
                                    + ch04.mean_sd_text([r["coefficients"][k] for r in runs],
                                                        "+.3f")
                                    for k in keys)])
say(ch04.gamma_table(rows), " ".join(
    f"**{n}**: {by[n]}." for n in ("qkv_loss", "scale_control_costs", "qkv_beats_scale_control",
                                   "qkv_beats_random_x0", "substitute_gamma_above_2",
                                   "bank_gamma_above_2", "substitute_loss",
                                   "substitute_beats_scale_control", "bank_loss",
                                   "bank_beats_scale_control")))

# %% [markdown]
# ## The recall task's tests
#
# The declared check `recall_qkv_lookup_learned` asks, at each rate, whether the `qkv` models whose coefficients are
# read beat the best strategy that never looks a key up; the recall x0 claims count only if they hold at all three
# rates, with the preconditions `recall_deep_context` and `recall_x0_plateaued`.

# %%
from vrs_edu.lab.analysis import t_test

RV = [r for r in recall_recipe.verdicts(RC, RR) if r.test.family.startswith("recall-x0")]
rby = {r.test.name: r for r in RV}
rec, ref = RC["recall"], RC["no_lookup_reference"]
rcomp = compare_to_baseline(rec["runs"], rec["step_seconds"])
print(precondition_lines(check_preconditions(recall_recipe.PRECONDITIONS, recall_facts)))
finals = {v: (rcomp[v].final_mean, mean_sd(rcomp[v].final_val_acc)[0]) for v in ("baseline", "qkv")}
say(ch04.recall_reference_sentence(ref, finals),
    table(*verdict_table(RV)),
    " ".join(f"**{r.test.name}**: {r}." for r in RV if r.arms is not None))

# %% [markdown]
# Per seed at ×1: did the `qkv` model learn lookup, and what did it read? (A description, not a declared test:
# choosing seeds by their outcome after the run is what the declared tests avoid.)

# %%
from vrs_edu.lab.x0_need import share_margins
steps = rec["configs"]["qkv"]["train"]["steps"]
at = {v: [recall_recipe.steps_to_learn(x, ref["loss"], steps)
          for x in sorted(rec["runs"][v], key=lambda x: x["seed"])] for v in ("baseline", "qkv")}
qkv_runs = sorted(rec["runs"]["qkv"], key=lambda x: x["seed"])
sm_r = share_margins(qkv_runs)
sooner = t_test([q - b for q, b in zip(at["qkv"], at["baseline"])])
say(ch04.recall_seeds_table(
          [[x["seed"], at["qkv"][i] < steps, f"{at['baseline'][i]:.0f}, "
            f"{at['qkv'][i]:.0f}", f"{x['final_val_loss']:.3f}",
            *(f"{ch04.run_shares(x)[s]:.3f}" for s in "qkv"), f"{sm_r['margin_q'][i]:+.3f}",
            f"{sm_r['margin_k'][i]:+.3f}"] for i, x in enumerate(qkv_runs)]),
    ch04.sooner_sentence(sooner['mean'], sooner['ci']))

# %% [markdown]
# ## The production designs' loss tests
#
# Chapter 04 reads one test of `vrs-edu reproduce production-designs` (value embeddings against per-layer
# embeddings, the same table size); here are the two designs against the baseline. Each design adds a large table
# to a small model, so each is compared with the other too, and on this toy the deep inputs are already mostly token
# identity: the comparison describes this toy; it does not decide the chapter's claim.

# %%
designs = load_results_or_none("production-designs", corpus=verdict_corpus(), say=say)
say(ch04.embeddings_bullets(designs))

# %% [markdown]
# ## The widget's model, and an additive step of β
#
# Chapter 04's widget multiplies β by a factor. On the same model (seed 0 of the ×1 runs, remade by the recipe's
# runner `compare_variants` into `data/checkpoints/bank-of-values.corpus-kjv/qkv`), an *additive* step of β (+0.5)
# beside it says why the sliders multiply: under QK-norm an added constant barely turns the direction. Earlier
# versions of the chapter read a model of its own instead, trained on the Python docs before the coefficient rates
# were scaled to our batch, beside a short live run compared with saved runs at that other rate; neither could be
# read together with the runs above, and both left the chapter.

# %%
from vrs_edu.chapters.ch04_bank_of_values.readout import beta_reference, beta_shift_readout
from vrs_edu.lab.corpora import get_corpus
from vrs_edu.lab.data import make_token_data
from vrs_edu.lab.experiments import CHECKPOINT_DIR
from vrs_edu.lab.train import load_checkpoint

qkv_model, tok, meta = load_checkpoint(CHECKPOINT_DIR / "bank-of-values.corpus-kjv" / "qkv")
data = make_token_data(get_corpus(R["text_corpus"]["name"]).text, tok,
                       block_size=qkv_model.cfg.block_size)
wbatches = list(data.eval_batches("val", batch_size=32, max_batches=2))
wref = beta_reference(qkv_model, wbatches)
added = {s: beta_shift_readout(qkv_model, wbatches, reference=wref, **{f"d_beta_{s}": 0.5})
         for s in "qk"}
say(ch04.widget_model_sentence(wref['betas'], added))

# %% [markdown]
# ## Scale, and where our recipe differs from the official one
#
# The paper's claim comes from 12 layers (last third = 4 layers), 135 M parameters and about 2 B tokens. Where our
# recipe still differs (RiddleHe/nanochat, `gpt_base_add_init_qkv_learn`): the matrices train with AdamW at 3e-3,
# the official ones with Muon at 0.02 · √(B / 2¹⁹), so a coefficient's rate relative to a matrix's differs
# (computed below); the official $x_0$ has the previous-token "smear" mixed in, ours none; 240 steps instead of
# about 3,760, and 2 target layers of 8 instead of 4 of 12; the value projection starts at std 0.02, the official
# one at $1/\sqrt{d}$.

# %%
from vrs_edu.lab.train import batch_lr_scale

PAPER = {"layers": 12, "params": 135e6, "tokens": 1.97e9}   # BoV paper, Table 1 set-up
t = cfg["train"]
tokens = t["steps"] * t["batch_size"] * cfg["model"]["block_size"]
n_params = R["corpus"]["runs"]["qkv"][0]["n_params"]
ours_ratio = opt["qkv"]["x0_beta_gamma"]["lr"] / opt["qkv"]["matrices"]["lr"]
official_ratio = (0.5 * batch_lr_scale(2 ** 19)) / (0.02 * batch_lr_scale(2 ** 19))
say(ch04.scale_sentence(cfg['model']['n_layers'], n_params, tokens, t['steps'], PAPER, ours_ratio,
                        official_ratio, data.vocab_size))

# %% [markdown]
# ## The same tests on a second corpus
#
# A verdict that holds on one text may be a property of that text. The verdicts above come from the King James
# Bible, read less than once per run; the same recipe also ran on the course's default corpus, the Python reference
# docs, read six times per run, so its loss tests are out of regime. The table recomputes every declared test on
# each corpus (Holm within each corpus); a `*` marks a test whose verdict differs between the corpora, and a second
# list names the tests whose means fall on opposite sides. The recall task is synthetic and is not repeated.

# %%
from vrs_edu.lab.by_corpus import corpus_report, load_by_corpus, verdict_corpora

facts_table, report = corpus_report(load_by_corpus("bank-of-values", verdict_corpora()),
                                    bov.verdicts, "baseline")
say(facts_table)
print(report)

# %% [markdown]
# ## Every claim, and the ledger of runs
#
# Each declared test, its claim with the source, and its verdict (the corpus tests, then the recall task's), then
# every full run the result files have held, failed designs included, and the stored verdicts that changed from one
# run to the next (read from the repository's history: `python -m vrs_edu.lab.ledger`).

# %%
from vrs_edu.lab import ledger
from vrs_edu.lab.analysis import format_measured

print(format_measured(V + RV, claims_title="published claims and controls"))
LG = ledger.load()
for name in ("bank-of-values.corpus-kjv.json", "bank-of-values.json", "recall.json",
             "recall-rates.json"):
    runs_seen = ledger.run_lines(LG, name) + ledger.flip_lines(LG, name, labelled=True)
    say(ch04.ledger_heading(name, bool(runs_seen)),
        *(f"- {line.strip()}" for line in runs_seen))

