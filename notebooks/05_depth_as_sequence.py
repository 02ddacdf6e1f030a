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
# (DeepCrossAttention, MUDDFormer, Vertical Attention). Read what the trained mixers learned to read, and measure
# what a depth window costs.
#
# **Question.** Can the residual stream be a selective read over depth (ShortSWA over depth)?
#
# **Prerequisites.** Chapter 01 (the residual stream as a running sum), chapter 02 (attention: pattern and values),
# chapter 04 (x0, the token embedding, and which path re-reads it).
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

_, live_cfg, live_train = make_run("word-8x64", n_layers=6, depth_mixer="shortswa", depth_window=2, steps=120,
                                   batch_size=16, warmup=20, eval_every=120, eval_batches=8)
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

from vrs_edu.nn.depth import depth_short_swa, short_swa, states_from_trace
from vrs_edu.nn.layers import rms_norm

x, y = next(data.eval_batches("val", batch_size=4, max_batches=1))
trace = live(x, trace=True).trace
L, K, mixer = live.cfg.n_layers, live.cfg.depth_window, live.depth
X = rms_norm(states_from_trace(trace.tensors, L))                     # (L+1, B, T, D), normalised as the mixer does
w = (mixer.q_proj.weight, mixer.k_proj.weight, mixer.v_proj.weight)

z_depth = depth_short_swa(X, K, *w)                                                       # (1) along depth
z_seq = rearrange(short_swa(rearrange(X, "l b t d -> (b t) l d"), K, *w), "(b t) l e -> l b t e", b=x.size(0))  # (2)
b, t = 0, 7                                                                               # (3) one token, by hand
z_loop = []
for l in range(L + 1):
    window = X[max(0, l - K + 1): l + 1, b, t]                                            # W_{t,l}: (K_l, D)
    q = w[0] @ X[l, b, t]
    scores = (window @ w[1].T) @ q / q.numel() ** 0.5
    z_loop.append(torch.softmax(scores, 0) @ (window @ w[2].T))
z_loop = torch.stack(z_loop)
model_reads = trace.stack("resid")                                    # what each block (and the head) actually read
rebuilt = states_from_trace(trace.tensors, L) + mixer.o_proj(z_depth)

for name, diff in [("depth_short_swa vs short_swa on the transposed tensor", z_depth - z_seq),
                   ("depth_short_swa vs the paper's loop for one token", z_depth[:, b, t] - z_loop),
                   ("the model's own reads vs the batch computation", model_reads - rebuilt)]:
    print(f"{name:56s} agree to float precision (max |Δ| < 1e-5): {bool(diff.abs().max() < 1e-5)}")

# %% [markdown]
# Three computations, one operator. The only thing that makes it "depth" rather than "sequence" is which axis we
# call the sequence.
#
# ## The family, from fixed to adaptive
#
# Every mixer below decides what block $l$ reads from the earlier layers of the same token. They differ in how the
# weights are made:
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
# another): **DeepCrossAttention** (arXiv 2502.06785: three GRN-v3 combiners, per-feature static weights plus a
# ReLU of a learned query on each source), **MUDDFormer** (arXiv 2502.12170: static plus per-position dynamic weights
# for Q, K, V and the residual, from a small MLP on the current state) and **Vertical Attention** (OpenReview
# A6uabXKiXc: a small softmax attention over earlier layers per stream). Our three routers start as the standard
# residual (Vertical Attention up to float rounding; `tests/test_depth.py` checks each init and each definition).
#
# To compare them fairly the recipe keeps the parameter budget equal: every variant shares all the baseline's
# parameters and adds only its mixer, sized to stay within a small budget (printed below).

# %%
from vrs_edu.lab.recipes.depth_mixers import BUDGET_TOLERANCE, parameter_counts

counts = parameter_counts(vocab_size=data.vocab_size)
print(f"{'variant':14s} {'parameters':>10s} {'added':>6s} {'overhead':>8s}   (budget: ≤ {BUDGET_TOLERANCE:.1%})")
for name, c in counts.items():
    print(f"{name:14s} {c['n_params']:10,d} {c['extra']:6,d} {c['overhead']:8.2%}")

# %% [markdown]
# ## Trained side by side: `vrs-edu reproduce depth-mixers`
#
# All variants × three seeds of the 8-layer word model of chapters 03–04 take longer than a chapter may, so one
# command trains them and saves losses and learned depth weights to `data/results/depth-mixers.json`. Same seed ⇒
# identical initial values for every shared parameter and the same batches, so "variant − residual" is a *paired*
# difference per seed.

# %%
from vrs_edu.lab.experiments import load_results, provenance
from vrs_edu.lab.recipes.depth_mixers import loss_table, mean_weights, source_share

try:
    result = load_results("depth-mixers")
except FileNotFoundError as e:
    result = None
    print(f"no saved results yet: {e}\n(run it from the repository root; the cells below then use it)")
else:
    cpu_min = sum(r["train_cpu_s"] for runs in result["runs"].values() for r in runs) / 60
    print(provenance(result))
    print(f"{result['schedule']['steps']} steps per run; {cpu_min:.1f} CPU-minutes of training in all")
    print(f"unigram baseline (context-free) {result['unigram_val_loss']:.3f} nats\n")
    print(f"{'variant':14s} {'val loss':>15s} {'Δ vs residual (paired)':>24s} {'95% CI':>18s} {'better':>7s}")
    for row in loss_table(result):
        lo, hi = row["delta_ci"]
        print(f"{row['variant']:14s} {row['mean']:7.3f} ± {row['sd']:.3f} {row['delta']:+14.3f} ± {row['delta_se']:.3f}"
              f"   [{lo:+.3f}, {hi:+.3f}] {row['n_better']:4d}/{row['n_seeds']}")

# %% [markdown]
# Read the table as chapter 03 taught: a difference counts only when its 95 % interval excludes 0, and at this
# scale (a few hundred steps of an 8-layer, 64-wide model) the seed-to-seed spread is as large as the effects the
# papers report. The `better` column counts the seeds on which the variant beat the residual.
#
# ## What do the mixers learn to read?
#
# Each heatmap shows, for every reading layer (row; the last row is the read-out before the LM head) the average
# weight on every source layer (column; 0 = the embedding), averaged over tokens, validation batches and seeds.
# DenseFormer and ShortSWA weigh **states** $X_j$, ELC-BERT and Attention Residuals weigh **outputs** $y_j$ (where
# $y_0$ is the embedding): a weight on source 0 is a direct read of the embedding in both.

# %%
import matplotlib.pyplot as plt

from vrs_edu.viz.depth import plot_mixers

single = ("denseformer", "elcbert", "attnres", "shortswa-full")
if result is not None:
    n_layers = result["configs"]["residual"]["model"]["n_layers"]
    deep_rows = list(range(n_layers - n_layers // 3, n_layers + 1))          # the last third of reads, read-out too
    weights = {name: mean_weights(result, name)["r"] for name in single}
    plot_mixers(weights)
    plt.show()
    print(f"share of |weight| on the embedding (source 0) in the deep reads (rows {deep_rows[0]}-{deep_rows[-1]}); "
          f"a uniform read would give {sum(1 / (l + 1) for l in deep_rows) / len(deep_rows):.3f}:")
    for name, m in weights.items():
        print(f"  {name:14s} {source_share(m, deep_rows, 0):.3f}   (on the latest source: "
              f"{sum(source_share(m, [l], l) for l in deep_rows) / len(deep_rows):.3f})")
    swa = source_share(weights["shortswa-full"], deep_rows, 0)
    print(f"shortswa-full's {swa:.3f} is a share of its correction only: block l reads X_l + W_O·z_l,\n"
          f"and {swa:.3f} of z_l's attention goes to the normalised embedding")
else:
    print("heatmaps need data/results/depth-mixers.json: `vrs-edu reproduce depth-mixers`")

# %% [markdown]
# **Reading ShortSWA's row.** The mixers weigh different things. DenseFormer's, ELC-BERT's and Attention Residuals'
# weights *are* the block's input: a large weight on source 0 means the block reads mostly the embedding. ShortSWA
# over depth keeps the whole residual and adds a correction on top: block $l$ reads $X_l + W_O\,z_l$, where $z_l$
# is a softmax attention over the RMS-normalised states in its window. Its heatmap shows that softmax, so a large
# weight on source 0 says that the *correction* is built almost entirely from the embedding — not that the block
# stops reading its own stream, which still enters with weight 1. How large the correction is next to $X_l$ depends
# on $W_O$, which the heatmap does not show.
#
# ### Per stream: do V's inputs read the embedding while Q and K read recent layers?
#
# Chapter 04 asked which path re-reads x0 by giving each projection its own x0 coefficient. The routers ask the
# same question from a second angle: each of Q, K and V gets its own mixture over *all* earlier layers, and training
# decides. The bank-of-values authors report, for an Attention-Residuals model with one pseudo-query per projection,
# that deep V keeps reading the token embedding while Q and K read recent layers (a follow-up note, not in the
# paper: Yuchen Liu's post of 2026-06-03, listed on the references page). One colour scale per row.

# %%
from vrs_edu.viz.depth import plot_router_streams

if result is not None:
    routers = {name: mean_weights(result, name) for name in ("dca", "mudd", "vertical")}
    plot_router_streams(routers)
    plt.show()
    print(f"deep reads (rows {deep_rows[0]}-{n_layers - 1}): share of |weight| on the embedding / on the latest source")
    router_rows = [l for l in deep_rows if l < n_layers]
    stream_shares = {}
    for name, mats in routers.items():
        stream_shares[name] = {s: source_share(mats[s], router_rows, 0) for s in "qkv"}
        latest = {s: sum(source_share(mats[s], [l], l) for l in router_rows) / len(router_rows) for s in "qkv"}
        print(f"  {name:9s} " + "   ".join(f"{s.upper()} {stream_shares[name][s]:.3f} / {latest[s]:.3f}" for s in "qkv"))
    n_v_top = sum(sh["v"] > max(sh["q"], sh["k"]) for sh in stream_shares.values())
    print(f"V reads the embedding more than both Q and K in {n_v_top} of {len(routers)} routers")

# %% [markdown]
# Compare with chapter 04's answer, which came from learned x0 coefficients and the substitution ablation
# (`vrs-edu reproduce bank-of-values`):

# %%
try:
    bov = load_results("bank-of-values")
except FileNotFoundError as e:
    print(f"chapter 04's results are not there yet: {e}")
else:
    table = bov["corpus"]["coefficient_table"]
    betas = {s: sum(sum(r) / len(r) for r in table[f"beta_{s}"]) / len(table["seeds"]) for s in "qkv"}
    print(f"chapter 04 (`{bov['command']}`), layers {table['layers']}, {len(table['seeds'])} seeds:\n"
          "    mean learned x0 weight " + ", ".join(f"β_{s} {betas[s]:+.3f}" for s in "qkv"))
    verdicts = bov["summary"]["corpus"]
    print(f"chapter 04's test 'β_v exceeds β_q and β_k': {verdicts['beta_v_exceeds_beta_q_and_beta_k']['verdict']}")

# %% [markdown]
# Two instruments, one question. Where the two agree (V reads token identity more than Q and K do), the claim has
# support from two independent measurements on our scale; where they disagree, neither is strong enough alone.
# The printed numbers above decide which case you are in — small models trained for minutes often land between.
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
# to change the shortcut itself, the paper points to Deep Delta Learning instead.
#
# ## Widget — the depth window K
#
# Move K: the left panel shows which earlier layers each read may use; the right panel shows the learned ShortSWA
# weights of the trained model with that K (the recipe trains K = 2, 4 and the full window). The static figure below
# the widget shows K = 2.

# %% tags=["nbval-ignore-output"]
from vrs_edu.viz.depth import window_widget

if result is not None:
    learned = {2: mean_weights(result, "shortswa-k2")["r"], 4: mean_weights(result, "shortswa-k4")["r"],
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
print(f"K = 2: the read-out uses {readout['n_sources'][-1]} of {widget_layers + 1} sources; deep reads put "
      f"{readout['oldest_weight']:.3f} of their weight on the older of their two sources")

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
        W = h[max(0, l - window + 1): l + 1]                   # the layer itself and up to K-1 layers below
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
# * On a real trained stack, ShortSWA over depth equals ShortSWA along the sequence axis of the transposed tensor
#   and the paper's equation written as a loop, to float precision; the model's incremental depth reads equal the
#   batch computation.
# * The parameter cost of every mixer (printed above), all within the recipe's budget.
# * From `vrs-edu reproduce depth-mixers`: the final validation loss of each mixer against the standard residual
#   (paired over seeds, with 95 % intervals), heatmaps of the learned depth weights, the embedding's share in the
#   deep reads, and — per stream for the three routers — whether V reads the embedding more than Q and K do, next to
#   chapter 04's answer.
# * The cost of a depth window: full window vs K = 2, 4 at L = 8, 16, 32 in time and memory, against the cost model
#   (L+1)/K, and the memory of the same window on the sequence axis.
# * Next: chapter 06 asks what reusing V buys — KV-cache memory and interpretability — and answers the course's
#   questions with the numbers measured so far.
