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
# or interpretability gains come from V reuse rather than from QK? And it concluded: *looking at attention through
# QK alone sees only half.* This chapter answers the four, in that order, in one place.
#
# **Goals.** Read each answer with the toy models' evidence and the real models' evidence side by side; say where
# the article's conclusion holds and where it does not (which model, which corpus, which scale); judge a claim across
# the rates it was tested at, by the course's own rule; see which 2026 model made which question a design decision.
#
# **Prerequisites.** Chapters 01-08: this chapter measures little of its own; it gathers what they measured.
#
# **Study time.** About 45 minutes: reading the four tables, the exercise and the questions.
#
# **Expected run time.** About 30 seconds at one thread on a busy 2-core machine (budget in `book.toml`: 60 s):
# chapter 02's swaps on the toy character model and chapter 07's on the real encoder are rerun on their own data;
# everything else is read from the stored results.

# %%
from vrs_edu.course.setup import setup_notebook

setup_notebook(seed=0)

import matplotlib.pyplot as plt

from vrs_edu.chapters.ch09_the_four_answers import answers as A
from vrs_edu.viz.prose import say, table

# %% [markdown]
# ## Two halves, two axes
#
# Attention has two halves: the queries and keys decide *where* a position looks (the pattern), the values decide
# *what* is moved. Questions 1 and 2 ask how much each half of a deep layer carries; question 3 asks the same of the
# depth axis, the [residual stream](#glossary:residual-stream); question 4 asks what reusing the value half buys.
# The evidence comes from three kinds of model: the toys trained here (chapters 01-06), a real encoder (chapter 07)
# and a real 30-layer decoder (chapter 08).

# %%
from vrs_edu.viz.schematics import attention_halves

attention_halves()
plt.show()

# %% [markdown]
# ## The effect first
#
# Chapter 02's [pattern swap](#glossary:pattern-swap) and [value swap](#glossary:value-swap) on the toy character
# model, and chapter 07's on the real encoder, rerun on the same data as there (the encoder's are cosines, not
# nats: they appear in question 1's table, not in the figure); every other number is read from a
# stored result. Each panel of the figure shows one question's key loss changes in [nats](#glossary:nats), with
# error bars over seeds or sequences: blue the toys, red the real decoder (a wide range of sizes is drawn on a
# scale linear near 0 and logarithmic beyond).

# %%
from vrs_edu.lab.data import make_token_data
from vrs_edu.lab.char_model import load_char_model
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import swap_experiment

toy, tok, _ = load_char_model()
data = make_token_data(tokenizer=tok, block_size=toy.cfg.block_size)
batches = list(data.eval_batches("val", batch_size=32, max_batches=4))
swaps = A.toy_swap_evidence(swap_experiment(toy, batches))

# %%
from vrs_edu.chapters.ch07_real_model import probes
from vrs_edu.chapters.ch07_real_model.model import corpus_sentences, load_real_model

real = load_real_model()
sentences = corpus_sentences(400, real=real)
encoder = A.encoder_evidence(probes.encoder_swap(real, sentences[::8], "pattern"),
                             probes.encoder_swap(real, sentences[::8], "value"),
                             probes.encoder_substitution_ablation(real, sentences[::10]),
                             probes.probe_table(probes.collect_activations(real, sentences),
                                                features="token"))

# %%
from vrs_edu.chapters.ch09_the_four_answers.figures import plot_four_answers

answers = A.course_answers(swaps=swaps, encoder=encoder)
plot_four_answers(answers)
plt.show()
say(A.conclusion(answers))

# %% [markdown]
# Each of the four sections below has a table: one row per instrument (the measurement that answers part of the
# question), the toys' number, the real encoder's and the real decoder's where it has one (a dash where a model was
# not measured that way), what the numbers say in words, and the chapters that measured them. The words name the
# course's verdicts of a test fixed before its run: *reproduced* (the published
# direction, beyond noise), *contradicted* (the opposite direction), *undecided*, *negligible* (the interval lies
# inside ± the test's declared smallest effect: too small to matter, whichever its sign); *out of regime* when a
# premise the test needed failed, printed with the verdict the data would give if judged anyway (its would-be
# verdict); *rate-dependent* only when one rate reproduces a claim and another contradicts it. A number whose
# premise is known to fail is shown as a *description*, with no verdict. Each holds for its model, corpus and scale
# only.
#
# ## 1. How much does a deep layer's attention depend on its freshly computed QK pattern?
#
# Chapter 02 swapped one half of one layer with another input's on the toy character model, chapter 07 on the
# encoder, chapter 08 on the decoder's last third (with [frozen routing](#glossary:frozen-routing) stand-ins: the
# previous layer's pattern, a uniform one). Chapter 02's numbers are loss changes, chapter 07's cosines of a
# sentence embedding: different models (a small character model trained here; all-MiniLM-L6-v2, an encoder with
# no next-token loss) and different measures, so their sizes do not compare; what compares is the count of layers
# where the value swap hurts more.
#
# The last row reads the same layers without swapping anything. A layer's output is $\sum_j \alpha_{ij} f(x_j)$:
# the weight $\alpha$ comes from QK, the vector $f(x) = x W_V W_O$ from V and O. Chapters 02, 07 and 08 read each
# layer by its weights and by the lengths $\lVert \alpha_{ij} f(x_j) \rVert$ of what it moves
# ([norm-based attribution](#glossary:norm-based-attribution), Kobayashi et al., arXiv 2004.10102), and count how
# much of a token's new state comes from its context once the residual is added (the
# [context-mixing ratio](#glossary:context-mixing-ratio), arXiv 2109.07152). The gap between the readings has two
# parts. Where a layer looks but moves little (the first-token sink, [CLS], [SEP] and punctuation), the values'
# norms make the difference: that is the routing the weights alone mis-state. How little a token takes from its
# context at all is mostly the residual, which the weights never claimed to count; the row gives both parts.

# %%
def show(answer):
    """An answer's table and its computed sentence, as Markdown."""
    say(table(A.COLUMNS, answer["rows"], align="llllll"), answer["sentence"])


show(answers[0])

# %% [markdown]
# ## 2. How much early or previous-layer information is kept through the V path?
#
# Two kinds of evidence, which answer different questions. The toys *trained* with a path to [x0](#glossary:x0)
# (chapter 04's [x0 share](#glossary:x0-share) and its V := x0 model) or to V_1 (chapter 03's
# [ResFormer](#glossary:resformer)): can a model keep early information through V when it learns to? The real
# models were trained the standard way, and a projection is replaced *after* training, by x0 (chapter 07's
# [substitution ablation](#glossary:substitution-ablation)) or by a [per-token table](#glossary:per-token-table)
# (chapter 08): does a standard model already carry only token identity in V? That post-hoc question neither
# reproduces nor contradicts the [bank of values](#glossary:bank-of-values) paper, whose models learn W_V with the table
# in place.

# %%
show(answers[1])

# %% [markdown]
# ## 3. Is the residual stream mere accumulation, or can it be designed as a selective read over depth?
#
# Chapter 01 showed that the stream *is* a running sum: the final state equals the embedding plus every block's
# output. Chapter 05 replaced the sum by reads over depth ([depth mixers](#glossary:depth-mixer): DenseFormer,
# MUDDFormer, [ShortSWA](#glossary:shortswa) over depth, Depth-Attention) and tested each against the residual,
# and DenseFormer and MUDDFormer also against a control that learns a scale per layer but selects nothing (the
# scalar gain). That control has fewer extra parameters than either mixer (the table gives the counts): it rules
# out a gain from any per-layer scale, not one from the parameters. The real decoder is a plain residual; it cannot
# be redesigned after training, only read.

# %%
show(answers[2])

# %% [markdown]
# ## 4. Can efficiency or interpretability gains come from V reuse rather than from QK?
#
# The [KV cache](#glossary:kv-cache) a decoder keeps per token is counted exactly (chapter 06); the question is
# what each reuse costs in loss. The toys were trained with the reuse ([SVFormer](#glossary:svformer)'s single V,
# the bank's token lookup); on the real decoder the reuse is imposed after training and priced in nats.
# Interpretability: where V is a table, a layer's output is its pattern times rows that can be read without running
# the model (chapter 06 checks it to 1e-5); QK still decides where each head looks.

# %%
show(answers[3])

# %% [markdown]
# ## What 2026's models chose: a production map
#
# Since the article, shipped models have turned its questions into design decisions, most of them a field of the
# model's configuration in Hugging Face's `transformers` (nanochat's value embeddings are a flag of its own code,
# and exclusive self-attention is a paper, not yet a shipped model). The map covers all four questions. Chapters 02, 04, 05 and 06 build each design in `vrs_edu.nn`,
# check it against the official code, and train it on the course's toy against the strong baseline
# (`vrs-edu reproduce production-designs`, five paired seeds on the King James Bible); two of them are also asked
# of SmolLM2 after training (`vrs-edu reproduce decoder-kv-designs`). Which model makes which choice, the question
# it answers, and what the course measured ("Δ loss" is the design's final loss minus the baseline's, in nats, with
# its 95 % interval and the verdict of its declared test, Holm-corrected over the six designs; "cache" the bytes
# it keeps per token against the baseline's):

# %%
from vrs_edu.chapters.ch06_what_v_reuse_buys.recipe import verdicts as design_verdicts
from vrs_edu.chapters.ch09_the_four_answers.production_map import production_map
from vrs_edu.lab.by_corpus import verdict_corpus
from vrs_edu.lab.experiments import load_results_or_none

designs = load_results_or_none("production-designs", corpus=verdict_corpus(), say=say)
design_judged = ({} if designs is None else
                 {r.test.name: r.to_record() for r in design_verdicts(designs)})
kv_designs = load_results_or_none("decoder-kv-designs", say=say)
say(table(*production_map(designs, design_judged, kv_designs)))

# %% [markdown]
# ## Exercise — judge a claim across the three rates
#
# **Difficulty 2/5 · importance 5/5 · about 15 minutes.**
#
# Chapter 04 judged each of its x0 claims at three coefficient learning rates (×0.25, ×1, ×4), because the learned
# shares moved with the rate. One verdict per rate is not yet an answer: the claim needs one verdict. Write
# `swept_verdict(verdicts)`: given one verdict per rate, return the claim's verdict by the course's rule. A claim is
# reproduced (or contradicted, or [negligible](#glossary:negligible)) only if it is so at *every* rate. It is
# *rate-dependent* only when the rates decide it in opposite directions: reproduced at one, contradicted at
# another. Every other mixture is *undecided*: "reproduced at ×4, undecided at ×1" says the slower rates lacked the
# power to decide, not that the effect changes with the rate. A rate that could not be judged
# ([out of regime](#glossary:out-of-regime), n/a) cannot vouch for the claim; when no rate was judged the claim is
# out of regime (n/a when none is out of regime). And a sweep needs at least three rates to decide anything. The
# cell after the solution applies your function to the stored arms of every swept claim (the recall task's, and
# any other stored sweep's).
#
# <details><summary>Hint</summary>
#
# Order the cases: first "every arm says the same"; then "one arm reproduced and another contradicted"; then "no
# arm was judged" (every arm out of regime or n/a); everything else is undecided; and the count of arms last, since
# it can only weaken a decided verdict.
#
# </details>

# %%
def swept_verdict(verdicts):
    """verdicts: list of str, one per rate -> str, the claim's verdict."""
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch09 import check_swept_verdict

check_swept_verdict(swept_verdict)
None  # the check prints what it found; this line keeps the cell from also showing its True/False


# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def swept_verdict(verdicts):
    judged = {v for v in verdicts if v not in ("out of regime", "n/a")}
    if len(set(verdicts)) == 1:
        out = verdicts[0]
    elif {"reproduced", "contradicted"} <= judged:     # decided in opposite directions
        out = "rate-dependent"
    elif not judged:                                  # no arm was judged
        out = "out of regime" if "out of regime" in verdicts else "n/a"
    else:                                             # decided at some rates only, or not decided
        out = "undecided"
    decided = ("reproduced", "contradicted", "negligible")
    return "undecided" if out in decided and len(verdicts) < 3 else out


check_swept_verdict(swept_verdict)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %%
from vrs_edu.lab.by_corpus import verdict_corpus
from vrs_edu.lab.experiments import load_results_or_none
from vrs_edu.chapters.ch04_bank_of_values import recipe as bank_of_values
from vrs_edu.chapters.ch03_value_residual import recall

bov = load_results_or_none("bank-of-values", corpus=verdict_corpus(), say=say)
rc = load_results_or_none("recall", say=say)
rates = load_results_or_none("recall-rates", say=say)
claims = [*(bank_of_values.verdicts(bov) if bov else []),
          *(recall.verdicts(rc, rates) if rc else [])]
say(*[f"`{c.test.name}`: " + ", ".join(f"{a} {x.verdict}" for a, x in c.arms)
      + f" → yours: **{swept_verdict([x.verdict for _, x in c.arms])}**, the course's: "
      f"**{c.verdict}**" for c in claims if c.arms])

# %% [markdown]
# ### Questions to think about
#
# 1. Question 1's table says the value swap costs more than the pattern swap in every model measured. Why does that
#    not mean a deep layer's pattern is unimportant?
#
#    <details><summary>Answer</summary>
#
#    Because both swaps cost something. Swapped in the real decoder's whole last third at once, another sequence's
#    pattern costs far more than the 0.05-nat tolerance, and so does the previous layer's: the third as a whole
#    needs its fresh pattern. One layer at a time the picture is finer: several single late layers tolerate another
#    sequence's pattern within 0.05 nats (question 1's sentence counts them), so "a deep layer needs its fresh
#    pattern" holds for the layers together, not for each. The swaps only say which half carries more of what is
#    specific to *this* text; a pattern from a text of the same kind is often roughly right, its values are not. QK
#    alone sees half; it is not the useless half.
#
#    </details>
#
# 2. The toys say deep V can be token identity at no cost; the real decoder says its deep V is the projection that
#    tolerates a per-token table worst. Is that a contradiction?
#
#    <details><summary>Answer</summary>
#
#    No: they answer different questions. The toy was *trained* with V := x0 and learned weights that work with it;
#    the decoder was trained the standard way and had its V replaced afterwards, so its later layers expect the
#    context its V normally carries. The second says what a standard decoder does; only the first speaks to the
#    bank-of-values paper's trained claim, and at a much smaller scale.
#
#    </details>
#
# 3. Question 3 is answered "partly" from toys alone. What would you need to say the same of a
#    real model?
#
#    <details><summary>Answer</summary>
#
#    A real model *trained* with a depth read, against a baseline trained the same way and a control with as many
#    extra parameters that selects nothing (the toys' scalar gain has fewer than the mixers), on more than one
#    corpus. A trained residual model can only be read (what its last layers
#    read), not redesigned after the fact; the toys' results hold for their own shape and corpus ("The answer"
#    names them).
#
#    </details>
#
# ## The answer

# %%
q1, q2, q3, q4 = answers
say(f"**Q1.** {q1['sentence']}", f"**Q2.** {q2['sentence']}", f"**Q3.** {q3['sentence']}",
    f"**Q4.** {q4['sentence']}",
    A.conclusion(answers) + f" The toys: {A.regimes_sentence(toy.cfg)}; the real models were "
    "measured on the Python documentation, the decoder post hoc.")

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## How sure are we?

# %% [markdown]
# Every toy verdict above is a test declared before its run, recomputed here from the stored runs by today's rules:
# its mean and 95 % interval over [paired seeds](#glossary:paired-seeds), the p-value after
# [Holm](#glossary:holm-correction)'s correction within its family, the verdict and, when undecided, the power it
# had (chapter 03 explains how to read them). These are the lines behind the four tables, recipe by recipe, on the
# verdict corpus.

# %%
lines = A.declared_lines()
for entry in lines[:4]:
    head = f"**{entry['title']}** (chapter {entry['chapter']}, `{entry['command']}`)"
    say(head + (": not made yet" if entry["missing"] else ""),
        *([f"```text\n" + "\n".join(entry["lines"]) + "\n```"] if entry["lines"] else []))

# %% [markdown]
# ### Aside: the recall task
#
# Chapters 03 and 04 also trained on an associative-recall task, where a model must look a key up. It is not one of
# the article's questions, but it is where the x0 claims are judged: its deep inputs are mostly context (the premise
# the language-model toys lack). They count only across the rate sweep (the `recall-rates` result), and its lines
# are about retrieval only where its checks (the models learned the lookup) are reproduced.

# %%
recall = lines[4]
say(f"**{recall['title']}** (chapters {recall['chapter']}): " + (recall["missing"] or ""),
    *([f"```text\n" + "\n".join(recall["lines"]) + "\n```"] if recall["lines"] else []))

# %% [markdown]
# The real decoder's verdicts are chapter 08's (its "How sure are we?" section holds the table): one model, one
# corpus, one run, evaluation sequences as the unit of replication. A claim whose declared check failed is out of
# regime: it is not counted, and it is shown with the verdict it would get if judged anyway.

# %%
from vrs_edu.chapters.ch08_real_decoder import recipe as real_decoder

decoder = load_results_or_none("real-decoder", say=say)
rows = real_decoder.verdicts(decoder) if decoder else []
failed = [r.test.name for r in rows
          if r.test.name in real_decoder.CHECKS and r.verdict != "reproduced"]
out = [f"`{r.test.name}` {A.verdict_phrase(r)}" for r in rows if r.verdict == "out of regime"]
say(f"Checks not reproduced in the stored run: {', '.join(failed) or 'none'}; "
    f"{len(out)} of {len(rows)} declared tests out of regime"
    + (": " + "; ".join(out) if out else "") + ".")
