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
# **Question.** Can the residual stream be a selective read over depth — each block attending over its own
# token's last few layer states — rather than a sum of everything earlier blocks wrote? (The article's third
# question; its sub-question: in deep layers, does V read the token embedding while Q and K read recent layers?)
#
# **Goals.** See that a token's states across layers form a sequence, and that a causal softmax read over its last
# K states is sliding-window attention along that sequence, checked on a trained stack to float precision. Write
# that read for a whole stack. Compare a family of reads over depth with the plain residual sum on paired seeds,
# and ask whether V's read chooses the embedding.
#
# **Prerequisites.** Chapter 01 (the residual stream as a running sum), chapter 02 (attention), chapter 02's primer
# on verdicts, chapter 03 (paired seeds, a strong baseline), chapter 04 ([x0](#glossary:x0) and which path re-reads it).
#
# **Study time.** About 45 minutes. **Expected run time.** About 30 seconds at one thread on an idle 2-core laptop
# CPU (budget in `book.toml`: 60 s).

# %%
from vrs_edu.course.setup import setup_notebook

setup_notebook(seed=0)

# %% [markdown]
# ## The mechanism: depth is a sequence too
#
# Along **depth**, the [residual stream](#glossary:residual-stream) mixes layers with fixed unit weights: block
# $l$ reads $X_l = y_0 + \dots + y_l$, the [embedding](#glossary:embedding) plus every earlier write. Fix one token
# $t$: its states $h_t^{(0)}, \dots, h_t^{(L)}$ are an ordered sequence of length $L+1$, like a sentence. The
# residual-stream duality ([Zhang, arXiv 2603.16039](#cite:zhang2026duality), sec. 2.2) lets block $l$ attend over
# the window of its last $K$ states,
#
# $$W^{(K)}_{t,l} = \big[h_t^{(\max(0,\,l-K+1))}; \dots; h_t^{(l)}\big],\qquad
#   z_t^{(l)} = \mathrm{softmax}\!\Big(\frac{q\,(W^{(K)}_{t,l}W_K)^\top}{\sqrt{d_k}}\Big)\,W^{(K)}_{t,l}W_V,
#   \quad q = W_Q h_t^{(l)}:$$
#
# causal sliding-window attention, [ShortSWA](#glossary:shortswa), run along depth. Below: block 4 reads its
# token's last two states (top); the same operator on the sequence reads the last two positions (bottom).

# %%
import matplotlib.pyplot as plt

from vrs_edu.viz.schematics import depth_mixer

depth_mixer(window=2, n_states=5)
plt.show()

# %% [markdown]
# With the window as long as the depth ($K = l + 1$, the *full window*), the read is attention over all earlier
# layers' states of the token: the form of Attention Residuals (built below), whose query is a learned vector per
# layer instead of $W_Q h^{(l)}$.
#
# ## The effect: which reads over depth lower the loss
#
# `vrs-edu reproduce depth-mixers --corpus kjv` and `vrs-edu reproduce v-over-depth --corpus kjv` trained every
# read of this chapter (a [depth mixer](#glossary:depth-mixer); the rows are defined in "The family" below)
# against the plain residual sum on the King James Bible — less than one epoch, so a lower loss is not
# memorisation — on [paired seeds](#glossary:paired-seeds). Each row: the mean change of the final validation loss
# in [nats](#glossary:nats), its 95 % [interval](#glossary:interval), coloured by the verdict of its
# [declared test](#glossary:declared-test): green reproduced, red contradicted, grey undecided, purple out of
# regime, blue negligible (all explained in "How sure are we?").

# %%
from vrs_edu.lab.experiments import load_results_or_none
from vrs_edu.chapters.ch05_depth_as_sequence import v_over_depth as vod_recipe
from vrs_edu.chapters.ch05_depth_as_sequence.figures import plot_loss_effects
from vrs_edu.chapters.ch05_depth_as_sequence.results import load_depth_results
from vrs_edu.chapters.ch05_depth_as_sequence import prose as ch05
from vrs_edu.lab.verdict_words import verdict_label
from vrs_edu.viz.prose import say

corpus, result, vod, rows, vod_rows, loss_rows = load_depth_results(say=say)
if result is not None and vod is not None:
    effects = vod_recipe.loss_effects(rows, list(vod_rows.values()))
    plot_loss_effects(effects, ch05.effects_title(result['corpus'], len(result['seeds']),
                                                  result['schedule']['steps'],
                                                  vod['schedule']['steps']))
    plt.show()
    say(ch05.effect_sentence(effects))

# %% [markdown]
# Small models, early in training, one text: an early-training ranking. The rest of the chapter builds the reads
# and checks the duality on a real stack.
#
# ## The duality, checked on a real stack
#
# A small model whose blocks read through ShortSWA over depth with $K = 2$ (its output projection starts at zero,
# so it begins as the standard residual), trained briefly on the Python reference documentation:

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
say(ch05.live_sentence(6, 2, live_train.steps, history.val_loss[-1]))

# %% [markdown]
# Rebuild the depth stack of *states* it read over, then compute every layer's read three ways: (1)
# `depth_short_swa` on the stack, (2) `short_swa` along the *sequence* axis of the transposed tensor, (3) the
# equation looped over one token's layers. Then compare with what the model fed each block in its forward pass.

# %%
from einops import rearrange

from vrs_edu.chapters.ch05_depth_as_sequence.readout import equation_by_loop, states_from_trace
from vrs_edu.nn.shortswa import depth_short_swa, short_swa
from vrs_edu.nn.layers import rms_norm

x, y = next(data.eval_batches("val", batch_size=4, max_batches=1))
trace = live(x, trace=True).trace
L, K, mixer = live.cfg.n_layers, live.cfg.depth_window, live.depth
X = rms_norm(states_from_trace(trace.tensors, L))     # (L+1, B, T, D), normalised as the mixer does
w = (mixer.q_proj.weight, mixer.k_proj.weight, mixer.v_proj.weight)

z_depth = depth_short_swa(X, K, *w)                   # (1) along depth
X_seq = rearrange(X, "l b t d -> (b t) l d")          # (2) depth as the sequence axis
z_seq = rearrange(short_swa(X_seq, K, *w), "(b t) l e -> l b t e", b=x.size(0))
b, t = 0, 7                                           # (3) one token, layer by layer
z_loop = equation_by_loop(X[:, b, t], K, *w)          # (L+1, E)

# %%
model_reads = trace.stack("resid")                    # what each block (and the head) actually read
rebuilt = states_from_trace(trace.tensors, L) + mixer.o_proj(z_depth)
checks = [z_depth - z_seq,                            # (1) vs (2), the same function transposed
          z_depth[:, b, t] - z_loop,                  # (1) vs (3), the paper's equation looped
          model_reads - rebuilt]                      # (1) vs the model's own reads, block by block
say(ch05.equivalence_table([float(d.detach().abs().max()) for d in checks]))

# %% [markdown]
# (1) vs (2) holds by construction (one function, transposed). The informative rows are the hand-written loop and
# the model's own reads: one operator, and only the axis we call the sequence makes it "depth".
#
# ## The family, from fixed to adaptive
#
# Each mixer decides what block $l$ reads from earlier layers of the same token; they differ in how the weights
# are made. A **pseudo-query** is a learned vector $w_l$ per layer that plays the query's role; block $l$'s
# weights are then $\mathrm{softmax}_j(w_l \cdot \mathrm{RMSNorm}(y_j))$ over the outputs $y_j$
# ([RMSNorm](#glossary:rmsnorm): each vector divided by its root mean square).
#
# | mixer | weights over earlier layers | at initialisation |
# |---|---|---|
# | **residual** | fixed: 1 on every output (= the latest state $X_l$) | — |
# | **[DenseFormer](#glossary:denseformer)** ([2402.02622](#cite:pagliardini2024denseformer)) | learned static scalars over states $X_j$ | the residual |
# | **[ELC-BERT](#glossary:elc-bert)** ([2311.02265](#cite:charpentier2023elcbert)) | learned static softmax over outputs $y_j$ | uniform |
# | **[Attention Residuals](#glossary:attention-residuals)** ([2603.15031](#cite:kimi2026attnres)) | per token: softmax of a pseudo-query · RMSNorm$(y_j)$ | uniform |
# | **ShortSWA over depth**, K = 2, 4, full | per token: attention over the last K states | the residual |
# | **scalar gain** (a control) | $g_l X_l$ only: no read of older layers | the residual |
# | **`attnres_qkv`** ([code](#cite:riddlehe2026attnresqkvcode)) | a pseudo-query each for q, k, v and the MLP | uniform |
# | **Depth-Attention** ([2606.05014](#cite:zeng2026depthattention)) | the layer's query over earlier layers' cached keys | no parameters |
#
# Three **routers** give Q, K and V their own mixtures: **DCA** (DeepCrossAttention,
# [2502.06785](#cite:heddes2025dca)), **[MUDDFormer](#glossary:muddformer)** ([2502.12170](#cite:xiao2025muddformer):
# static plus per-position weights from a small MLP) and **Vertical Attention**
# ([OpenReview](#cite:kojima2026vertical)). The scalar gain tests
# whether a win needs the read of older layers or only a learned rescaling.
#
# ## Per stream: does V choose the embedding?
#
# The [bank-of-values](#glossary:bank-of-values) authors report ([a post](#cite:liu2026attnresqkv)) that with one
# pseudo-query per stream (`attnres_qkv`: no residual sum, every input a choice over the embedding and every
# attention and MLP output), deep V keeps reading the embedding while Q and K read recent layers. What each stream
# chose here, a row per reading block, a column per source:

# %%
from vrs_edu.chapters.ch05_depth_as_sequence.readout import sublayer_sources
from vrs_edu.chapters.ch05_depth_as_sequence.figures import plot_sublayer_streams

if vod is not None:
    vod_L = vod["configs"]["residual"]["model"]["n_layers"]
    plot_sublayer_streams(vod_recipe.mean_stream_weights(vod), sublayer_sources(vod_L))
    plt.show()
    emb = vod_recipe.stream_profile(vod, vod_recipe.embedding_weight)
    deep = vod_recipe.deep_blocks(vod_L)
    shares = {s: sum(emb[s][l] for l in deep) / len(deep) for s in "qkv"}
    say(ch05.embedding_read_sentence(deep[0], deep[-1], shares, uniform=1 / (2 * deep[0] + 1)))

# %% [markdown]
# Whether that holds beyond the seeds' noise is in "How sure are we?".
#
# ## Depth-Attention: the query reads V over depth
#
# Depth-Attention ([Zeng et al.](#cite:zeng2026depthattention)) adds no parameters: layer $l$'s own query scores
# the keys that earlier layers $S(l)$ cached *at the same position* and mixes their values into its own,
#
# $$a_{l,j} = \mathrm{softmax}_{j \in S(l)\cup\{l\}}\Big(\frac{q_l \cdot k_j}{\sqrt{d_h}}\Big),\qquad
#   \tilde v_l = \sum_{j \in S(l)} a_{l,j}\,\tilde v_j + a_{l,l}\,v_l,$$
#
# then attends over $\tilde V_l$ and caches $\tilde v_l$ in place of $v_l$: the [KV cache](#glossary:kv-cache)
# stays the baseline's. It is a [value residual](#glossary:value-residual) whose weights the query chooses per
# token and head — [ResFormer](#glossary:resformer)'s $\lambda$ of chapter 03, made selective.

# %%
if vod is not None:
    reads = vod_recipe.depth_attention_reads(vod)
    d_res = vod_rows["depth_attention_loss"]
    say(ch05.depth_attention_sentence(reads, d_res))

# %% [markdown]
# ## Several streams, mixed: hyper-connections and mHC
#
# [Hyper-connections](#glossary:hyper-connections) ([Zhu et al.](#cite:zhu2025hyperconnections)) widen the depth
# path instead: $n$ residual streams per token; each block reads a learned mix of them (*pre*), writes its output
# back to each with its own weight (*post*), and an $n \times n$ matrix mixes the streams (*comb*).
# [mHC](#glossary:mhc) ([Xie et al.](#cite:xie2025mhc)), which DeepSeek-V4 ships with 4 streams, makes the weights
# depend on the token and projects *comb* onto doubly-stochastic matrices (rows and columns sum to 1) by Sinkhorn
# steps, so that repeated mixing neither blows the streams up nor lets them fade.

# %%
from vrs_edu.viz.schematics import hyper_connections

hyper_connections(n_streams=4)
plt.show()

# %%
designs = load_results_or_none("production-designs", corpus=corpus, say=say)
say(ch05.mhc_sentence(designs))

# %% [markdown]
# ## What a depth window costs
#
# The duality is an operator identity, not a systems one (sec. 2.4): a window of $K$ costs $O(T K d)$ per block,
# the full window $O(T L d)$. On the sequence axis the same window needs one layer's states at a time and, at
# inference, a K-token cache per layer that sliding-window kernels already serve; over depth it needs every earlier
# state of every token kept until the last layer has read it. Measured (peak bytes the computation allocates):

# %%
from vrs_edu.bench.depth import cost_table, ratios

(cost,) = ratios(cost_table(depths=(32,), windows=(2,), B=2, T=32, D=32, repeats=1))
say(ch05.memory_sentence(cost))

# %% [markdown]
# ## Widget — the depth window K
#
# Move K: the left panel shows which earlier layers each read may use; the right panel the learned ShortSWA weights
# of the trained model with that K (the runs trained K = 2, 4 and the full window). The static figure shows K = 2.

# %% tags=["nbval-ignore-output"]
from vrs_edu.chapters.ch05_depth_as_sequence.figures import window_widget
from vrs_edu.chapters.ch05_depth_as_sequence.recipe import mean_weights

if result is not None:
    n_layers = result["configs"]["residual"]["model"]["n_layers"]
    learned = {2: mean_weights(result, "shortswa-k2")["r"],
               4: mean_weights(result, "shortswa-k4")["r"],
               n_layers + 1: mean_weights(result, "shortswa-full")["r"]}
    widget_layers = n_layers
else:   # without saved results: the live 6-layer model of this chapter (K = 2 only)
    from vrs_edu.chapters.ch05_depth_as_sequence.recipe import learned_depth_weights

    learned = {K: learned_depth_weights(live, [(x, y)])["r"]}
    widget_layers = L
window_widget(widget_layers, learned, window=2)

# %%
from vrs_edu.chapters.ch05_depth_as_sequence.figures import window_figure

fig, readout = window_figure(widget_layers, 2, learned)
plt.show()
say(ch05.window_readout_sentence(readout['n_sources'][-1], widget_layers + 1,
                                 readout['oldest_weight']))

# %% [markdown]
# ## Exercise — ShortSWA over depth for a whole stack
#
# **Difficulty 3/5 · importance 5/5 · about 20 minutes.** This is the chapter's operator: the model above runs it
# at every block.
#
# Write `depth_swa_stack(X, window, w_q, w_k, w_v)`: `X` is a depth stack `(L+1, B, T, D)`, the weights are
# `nn.Linear` weights `(E, D)`. Return `(L+1, B, T, E)`: for every layer $l$ and every token, the read $z^{(l)}$
# of the chapter's equation — the query from the token's state at layer $l$, keys and values from its own states
# in the window. The checker compares with the package on random stacks and names the mistakes it recognises.
#
# <details><summary>Hint</summary>
#
# Loop over the layers only; every token is handled at once by the batch axes. Near the bottom the window is
# shorter: layer $l$ has only $l+1$ states to read. The softmax runs over the window, one score per layer in it,
# and `torch.einsum` keeps the B and T axes apart from the window axis.
#
# </details>

# %%
import math


def depth_swa_stack(X, window, w_q, w_k, w_v):
    """X (L+1, B, T, D), int window K, w_q, w_k, w_v (E, D) -> (L+1, B, T, E): each token's
    causal read over its own last K layer states, at every layer.
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch05 import check_depth_swa_stack

check_depth_swa_stack(depth_swa_stack)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def depth_swa_stack(X, window, w_q, w_k, w_v):
    out = []
    for l in range(X.size(0)):
        W = X[max(0, l - window + 1): l + 1]          # (K_l, B, T, D), K_l = min(K, l + 1)
        q = X[l] @ w_q.T                              # (B, T, E): the query of layer l
        k, v = W @ w_k.T, W @ w_v.T                   # (K_l, B, T, E): the window's keys, values
        scores = torch.einsum("bte,kbte->btk", q, k) / math.sqrt(q.size(-1))
        a = scores.softmax(dim=-1)                    # over the window, per token
        out.append(torch.einsum("btk,kbte->bte", a, v))
    return torch.stack(out)


check_depth_swa_stack(depth_swa_stack)
None  # the check prints what it found; this line keeps the cell from also showing its True/False
mine = depth_swa_stack(X, K, *w)
print(ch05.stack_check_line(bool((mine - z_depth).abs().max() < 1e-5)))

# %% [markdown]
# **The package's own code** (`vrs_edu/nn/shortswa.py`): over depth, ShortSWA is the sequence-axis `short_swa`
# on the transposed stack, and `short_swa` gathers each window with `unfold` instead of a loop.

# %%
from vrs_edu.viz.prose import source

say(source(depth_short_swa, start="L1, B, T, D ="), source(short_swa, start="K = min(window, S)"))

# %% [markdown]
# ### Questions
#
# 1. With K = 1, what does ShortSWA over depth reduce to, and why does the model still differ from the residual?
#
# <details><summary>Answer</summary>
#
# A softmax over one score is 1, so $z_l = W_V\,\mathrm{RMSNorm}(X_l)$ and block $l$ reads
# $X_l + W_O W_V\,\mathrm{RMSNorm}(X_l)$: nothing is selected over depth, but a learned linear map of the current
# state is added. It starts at zero (`o_proj` starts at zero), so the model begins as the residual.
#
# </details>
#
# 2. Which router weights would make a router behave like chapter 04's bank of values?
#
# <details><summary>Answer</summary>
#
# All of V's weight on the embedding in the deep layers, while Q and K keep mixing recent layers: V's input is then
# a function of the token alone, and $W_V$ applied to it a table looked up by the token — the bank with its rows
# tied to the embedding. The per-stream figure measures exactly that weight.
#
# </details>
#
# 3. Trained Depth-Attention layers put most of their depth weight on layer 0's values. Which variant of chapter 03
#    does that resemble, and what does Depth-Attention add?
#
# <details><summary>Answer</summary>
#
# ResFormer, which mixes the first layer's values into later layers with a learned $\lambda$ per layer.
# Depth-Attention's weight is computed by the layer's query, so it differs per token and head, at no parameter
# cost; both keep the baseline's cache.
#
# </details>
#
# ## The answer

# %%
from vrs_edu.lab.corpora import NAMED
from vrs_edu.chapters.ch05_depth_as_sequence.prose import short_answer

if result is not None and vod is not None:
    c = result["corpus"]
    text = NAMED[c][1].split(",")[0] if c in NAMED else c       # "King James Version of the Bible"
    regime = ch05.regime_text(n_layers, len(result['seeds']), result['epochs_read'],
                              vod['epochs_read'], c, text)
    say(short_answer(loss_rows, vod_rows["depth_attention_loss"],
                     [verdict_label(r) for r in vod_rows.values() if r.test.family == "streams"],
                     regime), ch05.next_chapters_sentence())

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## How sure are we?

# %% [markdown]
# Every claim was a test declared in code before the full runs (`recipe.TESTS`, `v_over_depth.TESTS`): "lower final
# loss than the residual, same seed" per read, corrected together by [Holm](#glossary:holm-correction)'s method.
# Each verdict is one of the [three-way verdicts](#glossary:three-way-verdicts) — reproduced, contradicted,
# undecided — or [negligible](#glossary:negligible) (the interval inside ± the smallest effect declared), or
# [out of regime](#glossary:out-of-regime): a declared precondition failed, shown with its would-be verdict.
# Controls are judged only where the gain they explain is reproduced. The run ledgers, per-variant tables, the
# routers, the second corpus and the cost tables are in [Appendix 05](05a_depth_as_sequence_evidence.ipynb).

# %%
if result is not None and vod is not None:
    judged = rows + [vod_rows[n] for n in ("depth_attention_loss", "depth_attention_beats_attnres",
                                           "attnres_qkv_weights_moved", "attnres_qkv_no_worse",
                                           "v_prefers_mlp_outputs")]
    say(ch05.verdicts_table(judged), ch05.descriptions_sentence(vod_recipe.descriptions(vod)))
