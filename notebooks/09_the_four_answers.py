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
# # 09 · The four answers
#
# **Question.** The article asked four questions. (1) How much does a deep layer's attention depend on its
# freshly computed QK pattern? (2) How much early or previous-layer information is kept through the V path? (3) Is
# the residual stream mere accumulation, or can it be designed as a selective read over depth? (4) Can efficiency
# or interpretability gains come from V reuse rather than from QK? And it concluded: *QK decides where to look, V is
# what is moved; looking at attention through QK alone sees only half.* Does that hold, question by question?
#
# **Goals.** For each question, quote the strongest number the course measured *for* the conclusion and the
# strongest *against* it, each with the model, corpus and regime it holds in; say why a number counts on its side;
# answer each question in one line; ask a trained model question 1 yourself.
#
# **Prerequisites.** Chapters 01-08: this chapter measures little of its own; it weighs what they measured.
#
# **Study time.** About 45 minutes: reading the four arguments, the exercise and the questions.
#
# **Expected run time.** About 15 seconds at one thread on a busy 2-core machine (budget in `book.toml`: 60 s):
# chapter 02's swaps on the toy character model are rerun on its own data; everything else is read from the
# stored results.

# %%
from vrs_edu.course.setup import setup_notebook

setup_notebook(seed=0)

import matplotlib.pyplot as plt
import torch

from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import swap_experiment
from vrs_edu.chapters.ch09_the_four_answers import answers as A, argument as G
from vrs_edu.chapters.ch09_the_four_answers.figures import plot_for_against
from vrs_edu.chapters.ch09_the_four_answers.production_map import production_map
from vrs_edu.course.exercises.ch09 import check_pattern_or_values
from vrs_edu.lab.by_corpus import verdict_corpus
from vrs_edu.lab.char_model import load_char_model
from vrs_edu.lab.data import make_token_data
from vrs_edu.lab.experiments import load_results_or_none
from vrs_edu.viz.prose import say, table
from vrs_edu.viz.schematics import attention_halves

# %% [markdown]
# ## Two halves, two axes
#
# Attention has two halves: the queries and keys decide *where* a position looks (the pattern), the values decide
# *what* is moved. Questions 1 and 2 ask how much each half of a deep layer carries; question 3 asks the same of the
# depth axis, the [residual stream](#glossary:residual-stream); question 4 asks what reusing the value half buys.
# The evidence comes from three kinds of model: the toys trained here (chapters 01-06: a character-level model on
# the Python documentation, word-level models on the King James Bible), a real encoder (chapter 07,
# all-MiniLM-L6-v2) and a real 30-layer decoder (chapter 08, SmolLM2), measured *post hoc*: a part replaced after
# training, in a model that was never trained to work without it.

# %%
attention_halves()
plt.show()

# %% [markdown]
# ## How to read the argument
#
# A number speaks *for* the conclusion when it points the way the conclusion needs: for question 1, losing what a
# layer moves costs more than losing where it looks; for question 3, a depth read lowers the loss. It speaks
# *against* when it points the other way. Of each side's numbers the strongest is shown: one that decides its side
# before one that does not, then the larger. Every number is a change of the loss in [nats](#glossary:nats) with
# its 95 % interval, and the verdict of the test declared before its run (chapter 02's primer explains them): *reproduced*
# or *contradicted* names the claim tested; *negligible*, too small to matter; *undecided*, noise could explain it
# once the number of tests is allowed for.
#
# Question 1 asks *how much*, so it also gets a measure that takes no side: what the deep layers' fresh pattern is
# worth (**How much.**). Needing the pattern and V mattering more are both what the conclusion says: QK is half,
# not nothing.
#
# In the figure each number has a panel of its own, "for" on the left and "against" on the right, with its own
# scale, so a small gain is not lost beside a large cost. The shaded stretch of each axis is where a number would
# speak for the conclusion: above 0 in question 1 (V costs more), below 0 in questions 2 and 3 (a lower loss),
# below the 0.05-nat tolerance (dashed) for a cost in question 4. A filled mark decides its side, a hollow one
# does not.
#
# The toy character model's [pattern swap](#glossary:pattern-swap) and [value swap](#glossary:value-swap)
# (chapter 02) are rerun here on its own data, as one of question 1's candidates; everything else is read from the
# stored results. A label names the model and whether it was measured post hoc, and a toy's corpus (KJV: the King
# James Bible); SmolLM2 was measured on the Python documentation.

# %%
toy, tok, toy_results = load_char_model()
data = make_token_data(tokenizer=tok, block_size=toy.cfg.block_size)
batches = list(data.eval_batches("val", batch_size=32, max_batches=4))
swaps = A.toy_swap_evidence(swap_experiment(toy, batches))
ev = A.gather_evidence(swaps=swaps, char_cfg=toy.cfg, char_corpus=toy_results["corpus"])
rows = G.argument_rows(G.build_candidates(ev))
plot_for_against(rows)
plt.show()

# %% [markdown]
# ## 1. How much does a deep layer's attention depend on its freshly computed QK pattern?
#
# Chapter 02 swapped one half of one layer with another text's on the toy; chapter 08 did it on the decoder's last
# third, and also gave the whole third stand-in patterns ([frozen routing](#glossary:frozen-routing): another
# text's, the previous layer's): what that costs is the question's "how much". If the pattern were all that
# mattered, losing it would cost more than losing the values. Chapters 07 and 08 also read each deep layer by what it moves, the lengths
# $\lVert \alpha_{ij} f(x_j) \rVert$ with $f(x) = x W_V W_O$, not by its weights $\alpha$ alone
# ([norm-based attribution](#glossary:norm-based-attribution), Kobayashi et al., arXiv 2004.10102), and counted how
# much of a token's new state comes from its context once the residual is added (the
# [context-mixing ratio](#glossary:context-mixing-ratio), arXiv 2109.07152): the paragraph before the answer.

# %%
def argue(n, *extra):
    """Question n's two sides, any extra sentences, then its one-line answer."""
    say(*G.argue_paragraphs(rows[n - 1], *extra))


argue(1, A.norm_view_sentence(ev["norms"]))

# %% [markdown]
# Against: one layer at a time the picture is finer. Chapter 08 found single late layers that tolerate another
# text's pattern; that says how much *one* layer needs its own pattern, not which half counts more, so it is not a
# number against the conclusion.
#
# The numbers behind the swaps are judged in [chapter 02's "How sure are we?"](02_qk_routes_v_carries.ipynb) and
# [chapter 08's](08_real_decoder.ipynb); the norm-based view in [chapter 07's](07_real_model.ipynb).
#
# ## 2. How much early or previous-layer information is kept through the V path?
#
# Two kinds of evidence answer different questions. The toys were *trained* with a path to
# [x0](#glossary:x0) (chapter 04's V := x0 and [bank of values](#glossary:bank-of-values)): can a model keep early
# information in V when it learns to? The decoder was trained the standard way, and a projection was replaced
# *after* training by a [per-token table](#glossary:per-token-table), the token's identity and nothing else (chapter
# 08): does a standard model already carry only early information in V? A table that stands in cheaply means
# yes; a table that costs much means the path carries what the context added.

# %%
argue(2)

# %% [markdown]
# The toys' verdicts are judged in [chapter 04's "How sure are we?"](04_bank_of_values.ipynb), the decoder's in
# [chapter 08's](08_real_decoder.ipynb).
#
# ## 3. Is the residual stream mere accumulation, or can it be designed as a selective read over depth?
#
# Chapter 01 showed that the stream *is* a running sum: the final state equals the embedding plus every block's
# output. Chapter 05 replaced the sum by reads over depth ([depth mixers](#glossary:depth-mixer): DenseFormer,
# MUDDFormer, [ShortSWA](#glossary:shortswa) over depth, Depth-Attention) and tested each against the residual, all
# trained from the start on the toy. A real decoder cannot be redesigned after training, only read. Chapter 06
# trained one production design of this kind too, beside a control with as many parameters.

# %%
designs = ev["designs"]
argue(3, G.mhc_sentence(designs.get("mhc_loss"), designs.get("mhc_beats_matched"),
                        ev["regimes"].get("production-designs")))

# %% [markdown]
# The depth reads are judged in [chapter 05's "How sure are we?"](05_depth_as_sequence.ipynb), mHC in
# [chapter 06's](06_what_v_reuse_buys.ipynb).
#
# ## 4. Can efficiency or interpretability gains come from V reuse rather than from QK?
#
# The [KV cache](#glossary:kv-cache) a decoder keeps per token is counted exactly (chapter 06); the question is
# what each reuse costs in loss. The toys were trained with the reuse ([SVFormer](#glossary:svformer)'s single V);
# on the real decoder the reuse is imposed after training. Interpretability: where V is a table, a layer's output
# is its pattern times rows that can be read without running the model (chapter 06 checks it to 1e-5); QK still
# decides where each head looks.

# %%
argue(4)

# %% [markdown]
# SVFormer is judged with the [value residual](#glossary:value-residual) in
# [chapter 03's "How sure are we?"](03_value_residual.ipynb), the decoder's reuse in
# [chapter 08's](08_real_decoder.ipynb).
#
# ## What 2026's models chose: a production map
#
# Since the article, shipped models have turned its questions into design decisions, most of them a field of the
# model's configuration in Hugging Face's `transformers` (nanochat's value embeddings are a flag of its own code,
# and exclusive self-attention is a paper, not yet a shipped model). Chapters 02, 04, 05 and 06 build each design
# in `vrs_edu.nn`, check it against the official code, and train it on the course's toy against the strong
# baseline (`vrs-edu reproduce production-designs`, five [paired seeds](#glossary:paired-seeds) on the King James
# Bible); two of them are also asked of SmolLM2 after training (`vrs-edu reproduce decoder-kv-designs`). "Δ loss"
# is the design's final loss minus the baseline's, in nats, with its 95 % interval and its verdict; the verdict
# is [Holm](#glossary:holm-correction)-corrected over the six designs and the interval is not, so an interval
# clear of 0 can read *undecided*: the corrected p beside it is then not below 0.05 (chapter 02's primer). "Cache"
# is the bytes it keeps per token against the baseline's.

# %%
stored = load_results_or_none("production-designs", corpus=verdict_corpus(), say=say)
kv_designs = load_results_or_none("decoder-kv-designs", say=say)
say(table(*production_map(stored, {n: v.to_record() for n, v in designs.items()}, kv_designs)))

# %% [markdown]
# ## Exercise — ask a trained model question 1
#
# **Difficulty 3/5 · importance 5/5 · about 20 minutes.** This is the chapter's first question, asked of a model
# instead of read from a table.
#
# Write `pattern_or_values(model, x, y, layer)`: return `(uniform, pattern, values)`, three floats in nats, the
# change of the loss `model(x, y).loss` when layer `layer`'s attention
#
# * **looks nowhere in particular**: its pattern (every head) is replaced by the uniform causal pattern, where
#   position $i$ spreads $1/(i+1)$ over positions $0..i$;
# * **looks where another text would**: its pattern is the one the layer computed on another text, the batch
#   rolled by one sequence, `x.roll(1, 0)`;
# * **moves another text's values**: it keeps this text's pattern, but moves the values the layer computed on
#   that other text.
#
# Each is the loss with the change minus the clean loss. The cell after the solution asks the trained character
# model of chapters 01-02 at its last layer, and says what its numbers answer.
#
# <details><summary>Hint</summary>
#
# Chapter 02's hook points name what to replace: `blocks.{layer}.attn.pattern` (the weights, shape
# `(B, H, T, T)`) and `blocks.{layer}.attn.v_mix` (the values the pattern mixes); `model(x, trace=True).trace`
# holds what each point carried on a text, and `model(x, y, hooks={name: function})` replaces what passes a point
# by what the function returns (a `(T, T)` pattern needs `.expand_as(old)`). A lower triangle of ones is
# `torch.ones(T, T).tril()`.
#
# </details>

# %%
def pattern_or_values(model, x, y, layer):
    """model, x (B, T), y (B, T), layer -> (uniform, pattern, values): the loss changes, in
    nats, when the layer's pattern is uniform, when it is another text's, and when its values
    are another text's.
    """
    raise NotImplementedError  # replace with your code


check_pattern_or_values(pattern_or_values)
None  # the check prints what it found; this line keeps the cell from also showing its True/False


# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
@torch.no_grad()
def pattern_or_values(model, x, y, layer):
    point = f"blocks.{layer}.attn."
    clean = model(x, y).loss.item()
    other = model(x.roll(1, 0), trace=True).trace                   # another text, same layer
    T = x.size(1)
    lower = torch.ones(T, T).tril()
    uniform = lower / lower.sum(-1, keepdim=True)                   # row i: 1/(i+1) on 0..i

    def cost(name, value):
        hooks = {point + name: lambda old: value.expand_as(old)}
        return model(x, y, hooks=hooks).loss.item() - clean

    return (cost("pattern", uniform), cost("pattern", other[point + "pattern"]),
            cost("v_mix", other[point + "v_mix"]))


check_pattern_or_values(pattern_or_values)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %%
last = toy.cfg.n_layers - 1
costs = torch.tensor([pattern_or_values(toy, xb, yb, last) for xb, yb, *_ in batches]).mean(0)
say(G.capstone_sentence(last, toy.cfg.n_layers, *costs.tolist()))

# %% [markdown]
# ### Questions to think about
#
# 1. Question 1's answer says the value swap costs more than the pattern swap. Why does that not mean a deep
#    layer's pattern is unimportant?
#
#    <details><summary>Answer</summary>
#
#    Because both swaps cost something. Swapped in the real decoder's whole last third at once, another text's
#    pattern costs far more than the 0.05-nat tolerance, and so does the previous layer's: the third as a whole
#    needs its fresh pattern. One layer at a time the picture is finer: chapter 08 found single late layers that
#    tolerate another text's pattern. The swaps only say which half carries more of what is specific to *this*
#    text; a pattern from a text of the same kind is often roughly right, its values are not. QK alone sees half;
#    it is not the useless half.
#
#    </details>
#
# 2. The toys say V can hold token identity at no cost; the real decoder says its deep V is the projection that
#    tolerates a per-token table worst. Is that a contradiction?
#
#    <details><summary>Answer</summary>
#
#    No: they answer different questions. The toy was *trained* with the table or with V := x0 and learned weights
#    that work with it; the decoder was trained the standard way and had its V replaced afterwards, so its later
#    layers expect the context its V normally carries. The second says what a standard decoder does; only the first
#    speaks to the bank-of-values paper's trained claim, and at a much smaller scale.
#
#    </details>
#
# 3. Question 3's strongest number against is undecided. What would you need to call question 3 a plain yes for a
#    real model?
#
#    <details><summary>Answer</summary>
#
#    A real model *trained* with a depth read, against a baseline trained the same way and a control with as many
#    extra parameters that selects nothing (mHC's matched control is one), on more than one corpus; and ShortSWA,
#    the design the question names, decided one way or the other. A trained residual model can only be read, not
#    redesigned after the fact; the toys' results hold for their own shape, corpus and few hundred steps.
#
#    </details>
#
# ## The answer

# %%
say(*G.answer_paragraphs(rows))

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## How sure are we?

# %% [markdown]
# Each number above is a declared test (or a description) of the chapter that measured it, and is judged there
# with its interval, its p-value after Holm's correction and its power; this chapter re-prints none of them. See
# [chapter 02's "How sure are we?"](02_qk_routes_v_carries.ipynb) (the swaps),
# [chapter 03's](03_value_residual.ipynb) (the value residual, SVFormer),
# [chapter 04's](04_bank_of_values.ipynb) (the x0 paths, the bank of values),
# [chapter 05's](05_depth_as_sequence.ipynb) (the depth reads),
# [chapter 06's](06_what_v_reuse_buys.ipynb) (the production designs, mHC),
# [chapter 07's](07_real_model.ipynb) (the encoder) and [chapter 08's](08_real_decoder.ipynb) (the decoder, with
# the checks its claims rest on). What the numbers of the argument rest on:

# %%
say(G.footing_sentence(rows))
