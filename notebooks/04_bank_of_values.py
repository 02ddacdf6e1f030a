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
# # 04 · The bank of values
#
# **Goals.** Give each deep layer a choice: let its queries, keys and values each re-read the context-free token
# identity $x_0$ with their own learned weight, and read what training chose; ask the same question a second way,
# by replacing the input of Q, K or V with $x_0$ in trained models (the substitution ablation); try the variants that
# drop context from V altogether (`V := γ·W_V x0`, a learned table of values per token); and state plainly what of
# the published finding reproduces at our scale.
#
# **Question.** Through which path (Q, K or V) do deep layers re-read x0?
#
# **Prerequisites.** Chapter 03 (the value residual, paired comparisons across seeds, confidence intervals).
#
# **Expected run time.** About 50 seconds on a 2-core laptop CPU, most of it a short live training run (budget in
# `book.toml`: 90 s). The long runs were made beforehand by `vrs-edu reproduce bank-of-values`; this chapter loads
# their results.

# %%
from vrs_edu.course.setup import setup_notebook

setup_notebook(seed=0)

# %% [markdown]
# ## x0 for Q, K and V, separately
#
# Chapter 03 mixed the first layer's *values* into every layer. He, Liu, Huang and Zhang ("Do Value Vectors in Deep
# Layers Need Context from the Residual Stream?", arXiv 2606.02780) ask which part of attention wants token identity
# at all. Let $x_i$ be the (normalised) residual stream entering block $i$ and $x_0 = \mathrm{RMSNorm}(\text{token
# embedding})$: the token's identity, with no context. In each of the last third of the layers, every projection
# gets its own two scalars:
#
# $$q = \alpha_q\, W_q x_i + \beta_q\, W_q x_0,\qquad k = \alpha_k\, W_k x_i + \beta_k\, W_k x_0,\qquad
#   v = \alpha_v\, W_v x_i + \beta_v\, W_v x_0,$$
#
# starting at $\alpha = 1$, $\beta = 0$ — exactly the baseline. Training then decides. The paper's finding (12
# layers, 135 M parameters, about 2 B tokens): the weight on $x_0$ grows large for **V** (its learned context-free
# coefficients stay above 2, above 10 in the last layer) while Q and K keep reading the stream. The variants:
#
# | variant | what the last-third layers do | source |
# |---|---|---|
# | `baseline` | $q, k, v$ from $x_i$ | – |
# | `qkv` | the six coefficients above | the experiment (`gpt_base_add_init_qkv_learn`) |
# | `shared` | one $\alpha, \beta$ for q, k and v together | the paper's control |
# | `substitute_v` | $v = \gamma\, W_v x_0$: values ignore the context | BoV Table 1, rows 8–9 |
# | `bank` | $v = \gamma\, E_v[\text{token}]$, a learned table initialised to $W_v x_0$; no $W_v$, no V cache | the bank of values |
#
# ### Exercise 4.1 — x0 injection for one projection
#
# *Difficulty 🔴🔴⚪⚪⚪ · about 10 min.* Write it in the stub below; the check says what is missing.
# The worked solution sits in the collapsed cell after it.
#
# Write `x0_projection(x, embedding, weight, alpha, beta)`: `x` is the normalised stream `(B, T, D)`, `embedding`
# the raw token embeddings `(B, T, D)`, `weight` an `nn.Linear` weight `(D, D)` (no bias). Return
# $\alpha\, W x + \beta\, W x_0$ with $x_0 = \mathrm{RMSNorm}(\text{embedding})$, shape `(B, T, D)`. The
# parameter-free RMSNorm is `vrs_edu.nn.layers.rms_norm`.

# %%
from vrs_edu.nn.layers import rms_norm


def x0_projection(x, embedding, weight, alpha, beta):
    """x, embedding (B, T, D), weight (D, D), floats alpha, beta -> alpha W(x) + beta W(x0),
    shape (B, T, D).
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch04 import check_x0_projection

check_x0_projection(x0_projection)

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def x0_projection(x, embedding, weight, alpha, beta):
    x0 = rms_norm(embedding)
    return alpha * x @ weight.T + beta * x0 @ weight.T


check_x0_projection(x0_projection)

# %% [markdown]
# Because $W$ has no bias, $\alpha W x + \beta W x_0 = W(\alpha x + \beta x_0)$: the package mixes the projection's
# *input* once instead of projecting twice. A trace of a (random) `qkv` model shows the two agree on the model's own
# tensors, with its coefficients set to something other than the initial 1 and 0:

# %%
import torch

from vrs_edu.nn import TinyGPT, TinyGPTConfig

toy = TinyGPT(TinyGPTConfig(vocab_size=100, n_layers=3, d_model=32, n_heads=2, x0_mode="qkv", seed=0))
blk = toy.blocks[2]
with torch.no_grad():
    blk.x0.alpha_v.fill_(0.7)
    blk.x0.beta_v.fill_(1.3)
idx = torch.randint(100, (2, 12), generator=torch.Generator().manual_seed(0))
tr = toy(idx, trace=True).trace
mine = x0_projection(rms_norm(tr["blocks.2.resid_pre"]), tr["embed"], blk.attn.v_proj.weight, 0.7, 1.3)
package = blk.attn.v_proj(tr["blocks.2.attn.v_in"])
print(f"largest difference from the model's own v projection in layer 2: {(mine - package).abs().max():.1e}")

# %% [markdown]
# ## The saved experiment
#
# `vrs-edu reproduce bank-of-values` trains the five variants on the same two data sets as chapter 03 — the
# `word-8x64` corpus model and the associative-recall task (two-token keys, single-token answers) — three seeds
# each, paired. With 8 layers, "the last third" is layers 6 and 7 — counted from 0, as in the code and in every
# printout (`blocks.0` is the paper's layer 1), so these are the last two of eight. On the trained baselines it also
# runs the substitution ablation.

# %%
from vrs_edu.lab.analysis import compare_to_baseline, format_comparison
from vrs_edu.lab.experiments import load_results, provenance

R = load_results("bank-of-values")
print(provenance(R))
for p in ("corpus", "recall"):
    part = R[p]
    t = part["configs"]["baseline"]["train"]
    print(f"{p:7s}: x0 layers {part['coefficient_table']['layers']}, {t['steps']} steps of {t['batch_size']} sequences")
for p in ("corpus", "recall"):
    print(f"== {p} ==")
    print(format_comparison(compare_to_baseline(R[p]["runs"], R[p]["step_seconds"]), accuracy=(p == "recall")))
    print()

# %% [markdown]
# ## What training chose: β_q, β_k, β_v per layer and seed
#
# Top row: the learned weight on $x_0$ of each projection in each x0 layer, one marker per seed (the line is the
# seed mean). Bottom row: the weight $\alpha$ on the residual stream. Both inputs have unit RMS (parameter-free
# RMSNorm), so $\alpha$ and $\beta$ are directly comparable.

# %%
import matplotlib.pyplot as plt

from vrs_edu.viz.bank import plot_betas

plot_betas({p: R[p]["coefficient_table"] for p in ("corpus", "recall")})
plt.show()

# %%
from vrs_edu.lab.analysis import mean_sd

for p in ("corpus", "recall"):
    t = R[p]["coefficient_table"]
    print(f"== {p}: final coefficients, mean ± sd over {len(t['seeds'])} seeds ==")
    print("layer  " + "  ".join(f"{n:>15s}" for n in ("alpha_q", "beta_q", "alpha_k", "beta_k", "alpha_v", "beta_v")))
    for i, l in enumerate(t["layers"]):
        cells = []
        for n in ("alpha_q", "beta_q", "alpha_k", "beta_k", "alpha_v", "beta_v"):
            m, sd = mean_sd([row[i] for row in t[n]])
            cells.append(f"{m:+.3f} ± {sd:.3f}")
        print(f"{l:5d}  " + "  ".join(f"{c:>15s}" for c in cells))

# %% [markdown]
# $\beta$ alone misses half of the story: a path can also turn down its weight $\alpha$ on the stream. The **x0
# share** $\beta / (|\alpha| + |\beta|)$ counts both — 0 = the projection reads only the residual stream, 1 = only
# $x_0$ — and stays bounded when $\alpha$ nears 0 (the pilot notes and chapter 07 use $\beta/\alpha$ for the same
# purpose).

# %%
from vrs_edu.lab.recipes.bank_of_values import x0_shares

for p in ("corpus", "recall"):
    t = R[p]["coefficient_table"]
    sh = x0_shares(t)
    print(f"== {p}: x0 share per layer, mean ± sd over seeds ==")
    for i, l in enumerate(t["layers"]):
        print(f"layer {l}: " + "   ".join(f"{s} {mean_sd([row[i] for row in sh[s]])[0]:+.3f} ± "
                                        f"{mean_sd([row[i] for row in sh[s]])[1]:.3f}" for s in "qkv"))
    largest = sum(all(v > max(q, k) for q, k, v in zip(rq, rk, rv)) for rq, rk, rv in zip(sh["q"], sh["k"], sh["v"]))
    print(f"seeds in which V has the largest x0 share in every x0 layer: {largest} of {len(t['seeds'])}")

# %% [markdown]
# How the coefficients moved during training (mean across seeds; one line per x0 layer):

# %%
from vrs_edu.viz.bank import plot_beta_trajectories

plot_beta_trajectories(R["corpus"]["runs"]["qkv"], title="corpus: β during training")
plt.show()

# %% [markdown]
# The control and the substitutive variants have one coefficient each per layer:

# %%
for p in ("corpus", "recall"):
    for variant, name in (("shared", "beta"), ("substitute_v", "gamma"), ("bank", "gamma")):
        runs = R[p]["runs"][variant]
        keys = sorted((k for k in runs[0]["coefficients"] if k.endswith(f"x0.{name}")),
                      key=lambda k: int(k.split(".")[1]))
        vals = [mean_sd([r["coefficients"][k] for r in runs]) for k in keys]
        print(f"{p:7s} {variant:13s} {name:5s} per layer " + ", ".join(
            f"{k.split('.')[1]}: {m:+.3f} ± {sd:.3f}" for k, (m, sd) in zip(keys, vals)))

# %% [markdown]
# ## The substitution ablation
#
# A second, independent question on models that were never offered $x_0$: take the trained *baselines*, and in one
# layer at a time replace the input of Q, of K or of V with $x_0$ (the token identity, no context); measure the loss
# change on held-out data. A path that only needs token identity tolerates the swap; a path that needs context
# does not. The x0 layers of the coefficient experiment are shaded.

# %%
from vrs_edu.viz.bank import ablation_table, plot_ablation

tables = {p: ablation_table(R[p]["runs"]["baseline"]) for p in ("corpus", "recall")}
plot_ablation(tables, deep_layers=R["corpus"]["coefficient_table"]["layers"])
plt.show()
for p, t in tables.items():
    print(f"== {p}: Δ loss (nats) when the input := x0, mean ± sd over seeds ==")
    print("layer " + "".join(f"{s + ' input':>18s}" for s in "qkv"))
    for i, l in enumerate(t["layers"]):
        print(f"{l:5d} " + "".join(f"{t[s][i][0]:>+10.3f} ± {t[s][i][1]:.3f}" for s in "qkv"))

# %% [markdown]
# ## Does the published finding reproduce?
#
# Each line is a computed test (95 % Student-t interval across seeds; "reproduced" only when the interval lies on
# the published side):
#
# * **direction** — per seed, the mean over x0 layers of $\beta_v - \max(\beta_q, \beta_k)$ is above 0;
# * **direction, by share** — the same with the x0 share $\beta/(|\alpha|+|\beta|)$ in place of $\beta$;
# * **magnitude** — per seed, the mean $\beta_v$ over x0 layers exceeds 2, the paper's learned coefficient;
# * **near zero** — the mean $\beta_q$ (and, separately, $\beta_k$) over x0 layers is within ±0.5 of 0: its whole
#   interval lies inside that band. The paper reports no Q/K numbers, so the band is our choice — a quarter of the
#   paper's $\beta_v$ — and an interval that is merely wide does *not* count as "near zero";
# * **the full claim** — direction, magnitude and both near-zero tests;
# * **substitutive coefficient** — when V reads *only* $x_0$ (`substitute_v`, `bank`), its learned scale $\gamma$
#   exceeds 2, as the paper's substitutive variants do;
# * **ablation** — in the x0 layers, replacing V's input by $x_0$ costs less than replacing Q's or K's;
# * **loss** — the substitutive variants and the bank are not just harmless but better than the baseline.

# %%
from vrs_edu.lab.recipes.bank_of_values import claims

C = {p: claims(R[p]) for p in ("corpus", "recall")}
for p in ("corpus", "recall"):
    for key, c in C[p].items():
        s = c.get("stat")
        nums = (f"\n{'':24s}mean {s['mean']:+.4f}, 95% CI [{s['ci'][0]:+.4f}, {s['ci'][1]:+.4f}], per seed "
                + ", ".join(f"{d:+.3f}" for d in s["diffs"])) if s else ""
        print(f"{p:7s} {c['verdict']:15s} {c['test']}{nums}")

# %% [markdown]
# ## A live run: the coefficients of one short training
#
# One `qkv` model, seed 0, 150 steps on the corpus (the saved runs' schedule, compressed). The six coefficients of
# each x0 layer are printed, and the direction test of the saved runs — is $\beta_v$ above both $\beta_q$ and
# $\beta_k$? — is applied to this one run.

# %%
from dataclasses import replace

from vrs_edu.lab.analysis import read_live_run
from vrs_edu.lab.data import make_token_data
from vrs_edu.lab.experiments import CHECKPOINT_DIR
from vrs_edu.lab.presets import make_run
from vrs_edu.lab.train import load_checkpoint, train

qkv_model, tok, meta = load_checkpoint(CHECKPOINT_DIR / "bank-of-values" / "qkv")
data = make_token_data(tokenizer=tok, block_size=qkv_model.cfg.block_size)
_, mcfg, tcfg = make_run("word-8x64", steps=150, eval_every=50, seed=0, x0_mode="qkv")
live = TinyGPT(replace(mcfg, vocab_size=data.vocab_size))
hist = train(live, data, tcfg, progress=False)
print(f"validation loss after {tcfg.steps} steps: {hist.val_loss[-1]:.3f} nats")
margins = []
for l, b in enumerate(live.blocks):
    if b.x0 is not None:
        x = b.x0
        print(f"layer {l}: α_q {x.alpha_q.item():+.3f} β_q {x.beta_q.item():+.3f} | α_k {x.alpha_k.item():+.3f} "
              f"β_k {x.beta_k.item():+.3f} | α_v {x.alpha_v.item():+.3f} β_v {x.beta_v.item():+.3f}")
        margins.append(x.beta_v.item() - max(x.beta_q.item(), x.beta_k.item()))
live_margin = sum(margins) / len(margins)
saved = C["corpus"]["beta_v_exceeds_beta_q_and_beta_k"]["stat"]
print(f"live run: mean β_v − max(β_q, β_k) = {live_margin:+.3f}; saved runs: {saved['mean']:+.3f} "
      f"(sd across seeds {saved['sd']:.3f})")
print(read_live_run(live_margin, saved["mean"], saved["sd"]))

# %% [markdown]
# ## Widget — which path uses its x0, and which tolerates more?
#
# The checkpoint is the seed-0 `qkv` model of the saved corpus runs. The sliders *add* extra $x_0$ to the input of
# Q, K or V in every x0 layer, on top of the learned $\beta$, at inference; the readout gives the loss and its
# change from the trained model. Two questions hide in the sliders. Moving a slider *left* takes away the $x_0$ that
# training gave the path: a path that relies on its $x_0$ hurts. Moving it *right* pushes in more than training
# chose: a path that tolerates token identity does not mind. The sliders move in steps of 0.5; each path's setting
# is the large dot on its own curve.

# %% tags=["nbval-ignore-output"]
from vrs_edu.viz.bank import beta_figure, beta_widget

wbatches = list(data.eval_batches("val", batch_size=32, max_batches=2))
beta_widget(qkv_model, wbatches)

# %% [markdown]
# The default state as a static figure: the loss change when only one path's $\beta$ is shifted, for each path.
# Below it, the cleanest version of the left-hand question: set one path's learned $\beta$ to 0 in both x0
# layers (that path then reads only the residual stream) and measure what the model loses.

# %%
from vrs_edu.viz.bank import x0_removal_cost

fig, now, sweep = beta_figure(qkv_model, wbatches)
plt.show()
for s in "qkv":
    print(f"only β_{s} shifted: " + ", ".join(f"{d:+.1f} → {x:+.3f}" for d, x in zip(sweep["shifts"], sweep[s])))
cost = x0_removal_cost(qkv_model, wbatches)
print("loss change when a path's learned x0 is removed (β := 0): "
      + ", ".join(f"{s} {cost[s]:+.3f}" for s in "qkv") + " nats")
uses = max("qkv", key=lambda s: cost[s])
tolerates = min("qkv", key=lambda s: sweep[s][-1])
print(f"relies most on its x0: {uses}; tolerates extra x0 (+{sweep['shifts'][-1]:.0f}) best: {tolerates}")

# %% [markdown]
# ### Exercises to think about
#
# 1. In the recall task, the answer is a single token fetched by a two-token key. Which of q, k, v *must* read
#    context, and which could read $x_0$ alone? Do the learned coefficients agree?
# 2. The bank of values stores one vector per vocabulary entry and layer instead of a V cache. At which context
#    length does it save memory for our word vocabulary (`data.vocab_size`)? For the paper's 32,768-token one?
# 3. The substitution ablation and the learned β ask different questions: what the trained model *tolerates* vs
#    what training *chooses*. Can they disagree? Find a layer where they do.
#
# ## Scale
#
# The paper's claim comes from 12 layers (last third = 4 layers), 135 M parameters and about 2 B tokens at
# 1.5e18 FLOPs; ours are computed below from the saved configuration. Coefficients move only as far as the gradient
# pushes them during training, so the number of steps matters as much as the size. With three seeds, a test whose
# interval edge sits near zero is undecided: rerunning the same command with another torch thread count (which
# reorders floating-point sums) can move it across the line, as chapter 03 notes.

# %%
PAPER = {"layers": 12, "params": 135e6, "tokens": 1.97e9}   # BoV paper, Table 1 set-up
ours = R["corpus"]
t = ours["configs"]["qkv"]["train"]
tokens = t["steps"] * t["batch_size"] * ours["configs"]["qkv"]["model"]["block_size"]
n_params = ours["runs"]["qkv"][0]["n_params"]
print(f"ours: {ours['configs']['qkv']['model']['n_layers']} layers, {n_params:,} parameters, {tokens:,} tokens, "
      f"{t['steps']} steps; paper: {PAPER['layers']} layers, {PAPER['params'] / n_params:.0f}× the parameters, "
      f"{PAPER['tokens'] / tokens:,.0f}× the tokens")
print(f"our word vocabulary (data.vocab_size, for exercise 2): {data.vocab_size:,} entries")

# %% [markdown]
# ## What we measured
#
# Every verdict is computed from the saved runs (numbers in the cells above); the summary below reprints the
# coefficient means behind the main claim.

# %%
for p in ("corpus", "recall"):
    t = R[p]["coefficient_table"]
    sh = x0_shares(t)
    share = {s: mean_sd([sum(row) / len(row) for row in sh[s]])[0] for s in "qkv"}
    order = " > ".join(sorted("qkv", key=lambda s: -share[s]))
    print(f"{p:7s} x0 share, mean over x0 layers and seeds: " + ", ".join(f"{s} {share[s]:+.3f}" for s in "qkv")
          + f" (order {order})")
    means = {n: mean_sd([sum(row) / len(row) for row in t[n]])[0] for n in ("beta_q", "beta_k", "beta_v")}
    print(f"{p:7s} mean over x0 layers and seeds: β_q {means['beta_q']:+.3f}, β_k {means['beta_k']:+.3f}, "
          f"β_v {means['beta_v']:+.3f}; claim 'β_v large while β_q, β_k ≈ 0': "
          f"{C[p]['beta_v_large_while_beta_qk_near_zero']['verdict']} "
          f"(direction {C[p]['beta_v_exceeds_beta_q_and_beta_k']['verdict']}, "
          f"direction by share {C[p]['x0_share_v_exceeds_q_and_k']['verdict']}, "
          f"magnitude {C[p]['beta_v_above_paper_magnitude']['verdict']}, "
          f"β_q near zero {C[p]['beta_q_near_zero']['verdict']}, β_k near zero {C[p]['beta_k_near_zero']['verdict']}, "
          f"ablation {C[p]['v_tolerates_x0_substitution']['verdict']})")

# %% [markdown]
# * The exercise's formula is what the model computes in its x0 layers.
# * The learned coefficients, the substitution ablation and the loss of the substitutive variants are three
#   different ways to ask whether deep values want token identity; the lines above say which of them support the
#   published finding at this scale, and the tables show by how much.
# * Next: chapter 05 turns the depth axis itself into something a layer can attend over.
