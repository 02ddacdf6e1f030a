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
# **Question.** What does mixing the first layer's values $V_1$ into later layers change in a small trained model
# (loss, entropy, smoothing)? (The article's second question, how much early information is kept through the V path,
# asked of a model built to keep it.)
#
# **Goals.** Build ResFormer's [value residual](#glossary:value-residual) into a stack of attention layers
# yourself; see what it changes in a small trained model (the loss, how spread out attention is); read the mixing
# weights the model learns; and learn, once for the whole course, why a comparison pairs its seeds and needs a
# strong baseline.
#
# **Prerequisites.** Chapter 02 (attention = a pattern from Q·K that moves values V). Knowing what a mean and its
# spread across repeated runs are helps.
#
# **Study time.** About 50 minutes. **Expected run time.** About a minute at one thread on a 2-core laptop CPU,
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
# every later layer carry the *first* layer's content too. Layer 1 computes its values $V_1$ from the token
# embeddings. Every later layer $n \ge 2$ mixes them into its own values $V_n$ **before** the attention-weighted
# sum:
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
# The variants the course trains against a plain [pre-norm](#glossary:post-ln-and-pre-norm) Transformer:
#
# | variant | values that layer $n \ge 2$ averages | source |
# |---|---|---|
# | `resformer` | $0.5\,V_1 + 0.5\,V_n$, fixed | official ResFormer code |
# | `learnable` | $\lambda_{n,1} V_1 + \lambda_{n,2} V_n$, learned per layer, both 0.5 at the start | ResFormer paper |
# | `svformer` | $V_1$ only: later layers own no $W^V$ | ResFormer paper ([SVFormer](#glossary:svformer)) |
# | `neutreno` | $V_n$, then $+\,0.4\,(V_1 - V_n)$ added *after* the sum | [arXiv 2312.00751](#cite:nguyen2023neutreno) ([NeuTRENO](#glossary:neutreno)) |
#
# The papers report a lower loss at equal steps (−0.027 [nats](#glossary:nats) per token at 82 M parameters),
# attention that is less concentrated in deep layers, and less [over-smoothing](#glossary:over-smoothing) (the
# tokens' states growing alike with depth).
#
# ## The effect: smaller than the paper's
#
# `vrs-edu reproduce value-residual --corpus kjv` trained every variant on the King James Bible split into words: 8
# layers (like the paper's 82 M model) but only 64 wide, 240 steps that read less than one epoch of the text, five
# seeds each. Each dot is a variant's final validation loss minus the baseline's, averaged over the seeds, with
# the range of the true mean that the 5 paired seeds allow (Exercise 3.2 computes it); the dotted line is the
# paper's gain.

# %%
from vrs_edu.chapters.ch03_value_residual import depth_sweep as ds_recipe
from vrs_edu.chapters.ch03_value_residual import prose as c3
from vrs_edu.chapters.ch03_value_residual import recipe as vr_recipe
from vrs_edu.chapters.ch03_value_residual.figures import plot_loss_gains
from vrs_edu.lab.by_corpus import verdict_corpus
from vrs_edu.lab.experiments import load_results
from vrs_edu.viz.prose import say

R = load_results("value-residual", corpus=verdict_corpus())
DS = load_results("depth-sweep", corpus=verdict_corpus())
by = {r.test.name: r for r in vr_recipe.verdicts(R)}
dby = {r.test.name: r for r in ds_recipe.verdicts(DS)}

paper = by["resformer_loss"].test.effect_for_power      # the paper's 82 M gain, in nats
plot_loss_gains(c3.gain_rows(by), paper,
                c3.gains_title(R['text_corpus']['name']))
plt.show()
r = by["resformer_loss"]
say(c3.effect_sentence("ResFormer", r.mean, r.ci, r, r.n, paper))

# %% [markdown]
# A dot left of the black line is a lower loss than the baseline's; a range that crosses the line means these
# five seeds cannot tell the sign of the change. The grey band is ± the smallest effect declared with the test
# before the run: a range wholly inside it is [negligible](#glossary:negligible), too small to matter whichever its
# sign.
#
# ## Paired seeds, and a baseline worth beating
#
# Two habits make a difference of a few thousandths of a nat measurable at all, and every later chapter relies on
# them.
#
# **[Paired seeds](#glossary:paired-seeds).** With the same seed, baseline and variant start from the same initial
# weights for every parameter they share and read the same batches in the same order. Their difference on that
# seed is then free of the luck of the start and of the data; the chapter averages the per-seed differences.
#
# **A strong [baseline](#glossary:baseline).** Every model's [residual stream](#glossary:residual-stream) starts at
# the [RMSNorm](#glossary:rmsnorm) of the token embedding (RMSNorm divides a vector by its root-mean-square size),
# as in [nanochat](#cite:karpathy2025nanochat) and [modded-nanogpt](#cite:jordan2024moddednanogpt). GPT-2 starts
# it at the *raw* embedding, initialised small, which the blocks' writes soon drown; a value residual, which hands
# every layer values computed from the normalised embedding, could look like a gain against that weak baseline
# just because it repairs the weakness. So the recipe also trains the weak pair, `baseline_raw` and
# `resformer_raw`.

# %%
from vrs_edu.lab.analysis import compare_to_baseline, paired_difference

runs = R["corpus"]["runs"]
comparison = compare_to_baseline(runs, R["corpus"]["step_seconds"])


def finals(v):
    return [x["final_val_loss"] for x in sorted(runs[v], key=lambda x: x["seed"])]


weak = paired_difference(finals("resformer_raw"), finals("baseline_raw"))
say(c3.stream_start_table(comparison['baseline_raw'].final_mean,
                          comparison['resformer_raw'].final_mean, weak.mean,
                          comparison['baseline'].final_mean, comparison['resformer'].final_mean,
                          r.mean),
    c3.baseline_lesson(weak.mean, r.mean, by["weak_baseline_inflates_gain"].mean,
                       by["strong_baseline_better"].mean))

# %% [markdown]
# Before believing that a method "beats the baseline", ask whether the baseline is the one practitioners would
# use, and whether the method might only be repairing its weakness.
#
# ### Exercise 3.1 — wire the value residual into a stack of attention layers
#
# **Difficulty 3/5 · importance 5/5 · about 20 minutes.** The chapter's intervention, built by you. Write it in the
# stub below; the check names the mistakes it recognises. The worked solution sits in the collapsed cell after it.
#
# Write `value_residual_stack(x, layers, lambdas)`: a stack of one-head causal attention layers (no norms, no
# MLPs). `x` `(B, T, D)` is the stream entering the first layer; `layers` is a list of dicts, one per layer, with
# the matrices `"W_q"`, `"W_k"`, `"W_v"`, `"W_o"`, each `(D, D)`; `lambdas` holds one pair `(λ1, λ2)` per layer
# *after* the first. Layer $n$ computes $q, k, v$ from its input $h$ (`h @ W_q`, …) and its causal pattern $A_n$;
# the first layer's $v$ is $V_1$; every later layer averages $V_n' = \lambda_1 V_1 + \lambda_2 V_n$ with its own
# $A_n$; each layer adds $(A_n V_n')\,W_o$ to the stream. Return the stream after the last layer, `(B, T, D)`.
# Chapter 02's `attention_pattern(q, k)` and `attend(pattern, v)` are imported for you.
#
# <details><summary>Hint</summary>
#
# One loop over the layers, carrying the stream. Which variable must survive from the loop's first pass to all the
# later ones, and is it recomputed anywhere?
#
# </details>

# %%
from vrs_edu.course.exercises.ch03 import check_value_residual_stack
from vrs_edu.nn.attention import attend, attention_pattern


def value_residual_stack(x, layers, lambdas):
    """x (B, T, D); layers: list of {"W_q", "W_k", "W_v", "W_o"}, each (D, D); lambdas: a
    (λ1, λ2) per layer after the first -> the stream after the last layer, (B, T, D).
    """
    raise NotImplementedError  # replace with your code


check_value_residual_stack(value_residual_stack)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def value_residual_stack(x, layers, lambdas):
    h, v_first = x, None
    for n, layer in enumerate(layers):
        q, k, v = h @ layer["W_q"], h @ layer["W_k"], h @ layer["W_v"]
        pattern = attention_pattern(q, k)               # this layer's own A_n
        if n == 0:
            v_first = v                                 # V_1, kept for every later layer
        else:
            lam1, lam2 = lambdas[n - 1]
            v = lam1 * v_first + lam2 * v               # V_n' = λ1·V_1 + λ2·V_n, before the average
        h = h + attend(pattern, v) @ layer["W_o"]       # each layer adds its output to the stream
    return h


check_value_residual_stack(value_residual_stack)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% [markdown]
# **The package's own code** (`vrs_edu/nn/value_residual.py`): the mixing your loop does, which every later layer
# of the chapter's models applies before its pattern averages the values. SVFormer's branch returns $V_1$ itself;
# the last line serves the baseline and NeuTRENO, whose $V_1$ term is added after the average.

# %%
from vrs_edu.nn.value_residual import ValueResidual, mix_values
from vrs_edu.viz.prose import source

say(source(mix_values, start="if v.shape"), source(ValueResidual.mix, start="if self.mode"))

# %% [markdown]
# ### Exercise 3.2 — the paired comparison
#
# **Difficulty 2/5 · importance 5/5 · about 10 minutes.** How the chapter turns five pairs of runs into a range.
#
# Write `paired_interval(variant, baseline)`: two tensors of shape `(n,)`, the final losses of a variant and of the
# baseline, one per seed, in the same seed order. Return `(mean, low, high)`, floats: the mean $\bar d$ of the
# per-seed differences $d_i$ = variant − baseline and its 95 % Student-t interval
# $\bar d \pm t_{0.975,\,n-1}\; s / \sqrt{n}$, where $s$ is the sample standard deviation of the $d_i$ and
# $t_{0.975,\,n-1}$ is `scipy.stats.t.ppf(0.975, n - 1)` (2.78 for five seeds).
#
# <details><summary>Hint</summary>
#
# Which comes first, the subtraction or the averaging? torch's `std` has a keyword that decides the denominator.
#
# </details>

# %%
from scipy import stats

from vrs_edu.course.exercises.ch03 import check_paired_interval


def paired_interval(variant, baseline):
    """variant (n,), baseline (n,), one final loss per seed -> (mean, low, high) of the
    per-seed differences variant − baseline, a 95 % Student-t interval.
    """
    raise NotImplementedError  # replace with your code


check_paired_interval(paired_interval)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def paired_interval(variant, baseline):
    d = variant - baseline                             # one difference per seed: the pairs
    n = d.numel()
    half = stats.t.ppf(0.975, n - 1) * d.std(correction=1).item() / n ** 0.5
    return d.mean().item(), d.mean().item() - half, d.mean().item() + half


check_paired_interval(paired_interval)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% [markdown]
# Your function on the saved runs, next to what the chapter's figure showed for ResFormer:

# %%
import torch

mine = paired_interval(torch.tensor(finals("resformer")), torch.tensor(finals("baseline")))
n, sds = r.n, [comparison[v].final_sd for v in ("resformer", "baseline")]
paired_half = mine[2] - mine[0]
unpaired_half = stats.t.ppf(0.975, 2 * n - 2) * ((sds[0] ** 2 + sds[1] ** 2) / n) ** 0.5
say(c3.pairing_sentence(mine, r.mean, r.ci, unpaired_half, paired_half))

# %% [markdown]
# ## Inside the layers: attention entropy and over-smoothing
#
# ResFormer's explanation of its gain is about attention. Per layer, after training, on held-out text, the mean
# over the seeds (`vrs_edu.lab.metrics.layer_metrics`):
#
# * **[attention entropy](#glossary:attention-entropy)**: how spread out attention is, in nats. The dashed line is
#   uniform causal attention (query $i$ spreads $1/(i+1)$ over keys $0..i$); below it, attention piles onto few
#   keys, the concentration ResFormer says the value residual relieves;
# * **[attention sink](#glossary:attention-sink)** mass: the attention queries put on position 0, where many heads
#   park attention they do not need, and the **sink value norm**, $\lVert v_0\rVert$ over the other positions';
# * **over-smoothing**: the mean cosine similarity of the tokens' states at each depth (1 = all alike).

# %%
from vrs_edu.chapters.ch03_value_residual.figures import plot_lambdas, plot_layer_metrics
from vrs_edu.lab.metrics import uniform_causal_entropy

T_corpus = R["corpus"]["configs"]["baseline"]["model"]["block_size"]
plot_layer_metrics(R["corpus"], ("baseline", "resformer", "learnable", "svformer", "neutreno"),
                   title=c3.layer_metrics_title(R['text_corpus']['name']),
                   entropy_reference=uniform_causal_entropy(T_corpus))
plt.show()
gap = by["baseline_concentrated"]
say(c3.entropy_sentence(gap.mean, gap))

# %% [markdown]
# **The learned λ.** In the `learnable` variant every layer $n \ge 2$ learns its own $\lambda_{n,1}$ (on $V_1$)
# and $\lambda_{n,2}$, both starting at 0.5; the paper reports that deeper layers weigh $V_1$ more. Left: the final
# values per layer, one line per seed; right: $\lambda_{n,1}$ during training. The figures count blocks from 0:
# `blocks.0` computes $V_1$, so block $k$ is layer $n = k + 1$ of the formula.

# %%
plot_lambdas(R["corpus"])
plt.show()
lp = vr_recipe.lambda_plateau(R["corpus"]["runs"]["learnable"])
say(c3.lambda_sentence(by["lambda1_grows_with_depth"].mean, lp["reached"], lp["of"]))

# %% [markdown]
# ## Deeper: does the gain grow with depth?
#
# The article's question is about depth, and so is ResFormer's argument. `vrs-edu reproduce depth-sweep --corpus
# kjv` trains the baseline and the learnable value residual at **4, 8 and 16 layers**, four paired seeds each, the
# baseline's learning rate tuned at each depth on held-out seeds. Left: the gain per depth; middle: the baseline's
# entropy minus uniform causal attention's; right: the slope of the learned λ1 against layer.

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
# Baseline and ResFormer, seed 0, on the course's default corpus (the Python docs), for far fewer steps than the
# saved runs. Change `LIVE_STEPS` or `seed=0` and rerun to see how much one run moves.

# %%
from dataclasses import replace

from vrs_edu.chapters.ch03_value_residual.recipe import VARIANTS
from vrs_edu.lab.data import make_token_data
from vrs_edu.lab.experiments import CHECKPOINT_DIR
from vrs_edu.lab.presets import make_run
from vrs_edu.lab.train import load_checkpoint, train
from vrs_edu.nn import TinyGPT

LIVE_STEPS = 60   # the live run's length: change it and rerun
vr_model, tok, meta = load_checkpoint(CHECKPOINT_DIR / "value-residual" / "resformer")
data = make_token_data(tokenizer=tok, block_size=vr_model.cfg.block_size)
live = {}
for name in ("baseline", "resformer"):
    _, mcfg, tcfg = make_run("word-8x64", steps=LIVE_STEPS, eval_every=20, seed=0, **VARIANTS[name])
    live[name] = train(TinyGPT(replace(mcfg, vocab_size=data.vocab_size)), data, tcfg,
                       progress=False)
deltas = [a - b for a, b in zip(live["resformer"].val_loss, live["baseline"].val_loss)]
say(c3.live_table(live["baseline"].eval_steps, live["baseline"].val_loss, deltas))

# %% [markdown]
# ## Widget — turn V_1 up and down in a trained model
#
# The checkpoint is the seed-0 `resformer` model of the saved runs on the Python docs, trained with λ1 = λ2 = 0.5
# in every layer. The sliders set λ1 (weight on $V_1$) and λ2 (weight on $V_n$) of all its layers *at inference*,
# without retraining. Left: each layer's attention entropy as a change from the trained setting (fixed scale
# ±0.1 nats); right: the (λ1, λ2) plane with the trained setting (grey) and yours (red), each with its loss. The
# widget responds once the chapter has run; the figure below it shows its opening setting, λ1 = 0, λ2 = 1.

# %% tags=["nbval-ignore-output"]
from vrs_edu.chapters.ch03_value_residual.figures import (DEFAULT_LAMBDAS, lambda_figure,
                                                          lambda_widget)
from vrs_edu.chapters.ch03_value_residual.readout import lambda_readout

wbatches = list(data.eval_batches("val", batch_size=32, max_batches=2))
lambda_widget(vr_model, wbatches)

# %%
fig, now, trained = lambda_figure(vr_model, wbatches, *DEFAULT_LAMBDAS)
plt.show()
rows = []
for l1 in (0.0, 0.25, 0.5, 0.75, 1.0):
    x = lambda_readout(vr_model, wbatches, l1, 1 - l1)
    rows.append([f"{l1:.2f}", f"{1 - l1:.2f}", f"{x['loss']:.3f}",
                 f"{x['loss'] - trained['loss']:+.3f}", f"{mean(x['entropy'][1:]):.3f}"])
say(*c3.lambda_line_table(rows))

# %% [markdown]
# At inference λ changes what a layer *writes*, not where it looks: a layer's pattern comes from its Q and K, which
# read the stream *before* the layer. An entropy difference between a trained baseline and a trained ResFormer is
# a product of *training* with $V_1$.
#
# ### Questions
#
# 1. NeuTRENO adds $\lambda(V_1 - V_n)$ *after* the attention sum, ResFormer mixes *before*. Write both as
#    $U_n = A_n(\cdot) + (\cdot)$ and say which one lets the pattern decide where $V_1$ is read.
#
# <details><summary>Answer</summary>
#
# ResFormer: $U_n = A_n(\lambda_1 V_1 + \lambda_2 V_n) + 0$: query $i$ reads the first layer's values at the
# positions it attends to. NeuTRENO: $U_n = A_n V_n + \lambda(V_1 - V_n)$: the added term is the first layer's value
# *at position $i$ itself*, whatever the pattern does. Only ResFormer lets the pattern choose.
#
# </details>
#
# 2. SVFormer stores the V cache once instead of once per layer. With $L$ layers, what fraction of the baseline's
#    [KV cache](#glossary:kv-cache) does it keep?
#
# <details><summary>Answer</summary>
#
# The baseline caches K and V at every layer, $2L$ tensors per token; SVFormer caches K at every layer and V once,
# $L + 1$: a fraction $(L+1)/(2L)$, 9/16 ≈ 56 % for 8 layers. Chapter 06 prices it against the loss.
#
# </details>
#
# 3. In Exercise 3.2, why subtract seed by seed instead of comparing the mean of five variant runs with the mean of
#    five baseline runs?
#
# <details><summary>Answer</summary>
#
# Much of a run's final loss can be the luck of its seed (its initial weights, the order of its batches). Paired
# runs share that luck, so it cancels in their difference; unpaired means keep both runs' luck. And the pairs
# answer the question asked: how does *this* start respond to the change? Where the luck is small, pairing may not
# narrow the range; the sentence under Exercise 3.2 says whether it does for these runs.
#
# </details>
#
# ## The answer

# %%
say(c3.answer(r.mean, r.ci, paper, depths[-1], deep_gain[-1], gap.mean,
              deeper_baselines_worse=val["baseline"][-1] > val["baseline"][0],
              verdict=r, n=r.n, smoothing=by["oversmoothing_lower"]))

# %% [markdown]
# Next: chapter 04 asks the same question from the other side: if deep layers want the token's identity, do they
# take it through Q, K or V? The statistics behind every sentence of this chapter follow, folded.

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## How sure are we?

# %% [markdown]
# Each test was [declared](#glossary:declared-test) in code before its runs (`recipe.TESTS`; the git history
# shows the order): the published claim, the per-seed quantity, the side the claim predicts and the
# [smallest effect of interest](#glossary:smallest-effect-of-interest). Each interval is the 95 % Student-t interval
# of the paired differences (Exercise 3.2's). The claims of a family are
# [Holm-corrected](#glossary:holm-correction) together; the checks of the set-up are corrected on their own. A
# verdict is one of the [three-way verdicts](#glossary:three-way-verdicts) — [reproduced](#glossary:reproduced),
# [contradicted](#glossary:contradicted), [undecided](#glossary:undecided) — or negligible (the interval lies
# inside ± the smallest effect), or [out of regime](#glossary:out-of-regime): a
# [precondition](#glossary:precondition) failed, and the verdict the numbers would give stands beside it.

# %%
from vrs_edu.lab.analysis import check_preconditions

pre = [*check_preconditions(vr_recipe.PRECONDITIONS, vr_recipe.facts(R)).values(),
       ds_recipe.BASELINE_NOT_WORSE.judge(ds_recipe.facts(DS)["baseline_not_worse_with_depth"])]
say(c3.verdicts_table([*by.values(), dby["gain_grows_with_depth"]]),
    c3.preconditions_sentence(pre, paper, r.n, r.power))

# %% [markdown]
# The declared tests' claims and sources, the preconditions' numbers, the per-layer tables, the loss curves, the
# same tests on a second corpus, an associative-recall task and how its learning rate was chosen, the depth
# sweep's tests, and the ledger of every run are in
# [Appendix 03](03a_value_residual_evidence.ipynb).
