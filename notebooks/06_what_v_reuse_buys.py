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
# # 06 · What V reuse buys
#
# **Question.** Can efficiency or interpretability come from V reuse rather than QK? (The article's fourth
# question: can efficiency or interpretability gains come from V reuse rather than from QK?)
#
# **Goals.** Measure the memory a decoder keeps per token when its deep layers reuse values — SVFormer (every
# layer reads $V_1$) and the bank of values (deep layers look their values up by token id) — on the cache tensors
# the model really builds; find the context at which the bank's tables pay for themselves; see that
# Depth-Attention reads V over depth at no cache cost; price what 2026's models chose (K = V, a cache shared by two
# layers) in bytes and in loss; and read what a head writes straight off a token table.
#
# **Prerequisites.** Chapters 02 (what V carries), 03 (SVFormer, and the lesson on paired seeds and baselines),
# 04 (x0 and the bank of values) and 05 (Depth-Attention).
#
# **Study time.** About 35 minutes. **Expected run time.** About 30 seconds at one thread on an idle 2-core
# laptop CPU (budget in `book.toml`: 60 s).

# %%
from vrs_edu.course.setup import setup_notebook

setup_notebook(seed=0)

# %% [markdown]
# ## The mechanism: what a decoder keeps per token
#
# A decoder generating text keeps, for every layer, the keys and values of every token it has read, so that each
# new token attends to the past without recomputing it: the [KV cache](#glossary:kv-cache). Its size grows by the
# same amount for every token read, the cache's [bytes per token](#glossary:bytes-per-token). With L layers of
# width d, and counting numbers (4 bytes each in float32):
#
# * **baseline**: each layer caches its own K and V, $2\,L\,d$ numbers per token;
# * **[SVFormer](#glossary:svformer)** ([arXiv 2410.17897](#cite:zhou2025valueresidual)): layers 2..L own no $W_V$
#   and attend over $V_1$, so V is cached once: $(L+1)\,d$;
# * **[bank of values](#glossary:bank-of-values)** ([arXiv 2606.02780](#cite:he2026bankofvalues), sec. 4): a bank
#   layer's value is $\gamma\,E_v[\text{token id}]$, a table lookup, so it caches no V, $(2L - n_\text{bank})\,d$;
#   it keeps a table of $|V|\cdot d$ numbers per bank layer instead, whatever the context.
#
# The keys stay in every variant: QK still decides where each layer looks. The picture shows a 6-layer model,
# one column per layer: blue boxes are the keys a layer keeps, orange ones its values, dashed ones values it does
# not keep.

# %%
import matplotlib.pyplot as plt

from vrs_edu.viz.schematics import kv_cache

kv_cache(n_layers=6)
plt.show()

# %% [markdown]
# **The package's own code** (`vrs_edu/nn/x0.py`, `vrs_edu/nn/value_residual.py`): a bank layer's values are one
# row of its table per token, and an SVFormer layer attends over $V_1$; neither computes values from its own
# context, so neither has values of its own to cache.

# %%
from vrs_edu.nn.value_residual import ValueResidual
from vrs_edu.nn.x0 import X0Injection
from vrs_edu.viz.prose import say, source

say(source(X0Injection.bank_values),
    source(ValueResidual.mix, start='if self.mode == "svformer"', stop="return v_first"))

# %% [markdown]
# ## The effect: reusing V shrinks the cache
#
# `build_kv_cache(model, idx)` runs a model once over `idx` and collects the tensors a decoder would keep: each
# layer's keys after [RoPE](#glossary:rope), and its values: the layer's own, layer 0's tensor itself for SVFormer
# (stored once), or nothing for a bank layer (`tests/test_kv_cache.py` checks that the last token's attention,
# recomputed from the cache alone, equals the model's). We measure the course's 8-layer, 64-wide word model at
# three context lengths, and, for the next section, Depth-Attention.

# %%
from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import cache_sentence, cache_table
from vrs_edu.lab.kv_cache import DEPTH_ATTENTION, kv_bytes_per_token, measure
from vrs_edu.nn import TinyGPTConfig
from vrs_edu.chapters.ch06_what_v_reuse_buys.figures import plot_cache_per_token
from vrs_edu.viz.prose import say, table

course_cfg = TinyGPTConfig(vocab_size=2048, d_model=64, n_layers=8, n_heads=4, block_size=1024)
lengths = [64, 256, 1024]
rows = measure(course_cfg, lengths)
da_rows = measure(course_cfg, lengths, variants=DEPTH_ATTENTION)
plot_cache_per_token(rows + da_rows)
plt.show()
say(cache_sentence(rows))

# %% [markdown]
# SVFormer's cache is $(L+1)/(2L)$ of the baseline's, the bank's $(2L - n_\text{bank})/(2L)$. The measurement
# beside the formulas, at every length (float32, one sequence):

# %%
def formula(r):
    return kv_bytes_per_token(r["n_layers"], r["d_model"], r["variant"])


say(table(*cache_table(rows, formula)))

# %% [markdown]
# ## The break-even context
#
# The bank's tables are a fixed cost; the V cache it no longer keeps grows with the context. The bank-of-values
# paper gives the saving for $n_\text{bank} = L/3$ bank layers at context $T$:
#
# $$\Delta KV = \tfrac{L}{3}\, d\, (T - |V|)\ \text{numbers},$$
#
# positive only once the context is longer than the vocabulary: the
# [break-even context](#glossary:break-even-context) is $T = |V|$. On the course model ($|V| = 2048$) every
# context we can run is shorter; a character vocabulary puts the break-even inside them. The measured saving is
# (baseline cache) − (bank cache + tables):

# %%
from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import saving_sentence
from vrs_edu.lab.data import default_corpus_text, train_tokenizer
from vrs_edu.lab.kv_cache import bov_saving, measured_saving, n_bank_layers
from vrs_edu.chapters.ch06_what_v_reuse_buys.figures import plot_break_even

char_vocab = train_tokenizer(default_corpus_text(), "char").vocab_size
char_cfg = TinyGPTConfig(vocab_size=char_vocab, d_model=64, n_layers=6, n_heads=4, block_size=512)
char_lengths = [char_vocab // 2, char_vocab, 2 * char_vocab, 3 * char_vocab, 4 * char_vocab]
char_rows = measure(char_cfg, char_lengths)
saved = {T: measured_saving(char_rows, T) for T in char_lengths}
nb_c = n_bank_layers(char_cfg.n_layers)
paper = {T: bov_saving(nb_c, char_cfg.d_model, T, char_vocab) * 4 for T in char_lengths}
plot_break_even(saved, paper, char_vocab)
plt.show()
course_saved = {T: measured_saving(rows, T) for T in lengths}
say(saving_sentence(saved, char_vocab, f"a {char_cfg.n_layers}-layer character model"),
    saving_sentence(course_saved, course_cfg.vocab_size, "the course's word model"))

# %% [markdown]
# These counts are for **one sequence**. A decoder serving a batch of B sequences keeps B caches but one copy of
# the tables (they are parameters, shared by every sequence), so the bank saves memory once B·T exceeds |V|: the
# break-even context is T = |V|/B. SVFormer's cache is smaller than the baseline's at every length and batch.
#
# **And what does the saving cost in quality?** Chapters 03 and 04 trained SVFormer and the bank of values against
# the strong baseline on the King James Bible, five [paired seeds](#glossary:paired-seeds) (chapter 03 explains
# why seeds are paired). The change of the final validation loss, in [nats](#glossary:nats):

# %%
from vrs_edu.lab.by_corpus import verdict_corpus
from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import live_test, quality_sentence
from vrs_edu.lab.experiments import load_results_or_none
from vrs_edu.chapters.ch06_what_v_reuse_buys.previous_chapters import (bank_of_values_verdicts,
                                                                       value_residual_verdicts)

quality = {v: load_results_or_none(recipe, corpus=verdict_corpus(), say=say)
           for recipe, v in (("value-residual", "svformer"), ("bank-of-values", "bank"))}
declared = {"svformer": "svformer_cost", "bank": "bank_loss"}   # each variant's declared loss test
# judged now, with the current rules
judges = {"svformer": value_residual_verdicts, "bank": bank_of_values_verdicts}
made = {v: r for v, r in quality.items() if r is not None}
judged = {v: live_test(r, judges[v], declared[v]) for v, r in made.items()}
say(quality_sentence({v: r["corpus"]["comparison"][v]["paired_final"] for v, r in made.items()},
                     judged))

# %% [markdown]
# The declared tests behind these numbers, and what they can and cannot decide, are in "How sure are we?" at the
# end.
#
# ## Depth-Attention: a read of V over depth at no cache cost
#
# [Depth-Attention](#glossary:depth-attention) ([Zeng et al., arXiv 2606.05014](#cite:zeng2026depthattention);
# chapter 05) goes the other way from SVFormer and the bank: it keeps every layer's values, lets a layer's query
# mix the *cached* values of earlier layers at the same position into its own, and stores the mixture in place of
# its own values. So its cache is the baseline's, $2\,L\,d$ numbers per token (the purple bar above), and nothing
# else is kept. What its read of V over depth did to the loss, from chapter 05's runs at equal steps:

# %%
from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import depth_attention_sentence
from vrs_edu.chapters.ch06_what_v_reuse_buys.previous_chapters import v_over_depth_verdicts

vod = load_results_or_none("v-over-depth", corpus=verdict_corpus(), say=say)
if vod is not None:
    da = {r.test.name: r for r in v_over_depth_verdicts(vod) if r.test.family == "depth_attention"}
    d = da["depth_attention_loss"]
    say(depth_attention_sentence(d.mean, len(d.values), da_rows[0]["bytes_per_token"], d))

# %% [markdown]
# ## What 2026's models chose: K = V and a cache shared by two layers
#
# Two designs shipped in 2026 take V reuse further than SVFormer, in two directions: one removes the value
# projection (parameters, not cache), the other the K and V cache of every second layer.
#
# * **[K = V](#glossary:k-v-attention)** (Gemma 4's global layers, config field `attention_k_eq_v`): a layer owns no
#   $W_V$. Its value is its key projection, normalised without a gain and never rotated, so the content a token
#   offers is its key. The cache still holds two tensors per layer (the rotated K and the unrotated V), so the
#   saving is in parameters, not bytes.
# * **[Cross-layer KV sharing](#glossary:cross-layer-kv-sharing)** (CLA, [arXiv 2405.12981](#cite:brandon2024cla); Gemma 4's last
#   layers, `num_kv_shared_layers`): a sharing layer computes no K and no V and attends over the ones an earlier
#   layer cached. It keeps its own query, so QK still decides *where* per layer; *what* can be read is fixed by
#   the donor. With every second layer sharing (factor 2), the cache is half the baseline's.
#
# In the picture, each column is a layer; a dashed box is a tensor the layer reads from its left neighbour
# instead of caching its own.

# %%
from vrs_edu.viz.schematics import shared_kv

shared_kv(n_layers=6)
plt.show()

# %% [markdown]
# **The package's own code** (`vrs_edu/nn/k_eq_v.py`, `vrs_edu/nn/kv_sharing.py`): the values of a K = V layer,
# and the bytes a cache grows by per token when some layers own their K and V and the others borrow them.

# %%
from vrs_edu.nn.k_eq_v import values_from_keys
from vrs_edu.nn.kv_sharing import kv_cache_bytes_per_token

say(source(values_from_keys), source(kv_cache_bytes_per_token))

# %% [markdown]
# **What they cost in loss.** `vrs-edu reproduce production-designs` trains each of 2026's designs on the
# course's 8-layer word model against the strong baseline, five paired seeds on the King James Bible, with two
# parameter-matched controls: the baseline with a smaller MLP (as many parameters as K = V and CLA) and with a
# larger one (as many as mHC, the design chapter 05 shows). Each design has a test declared before the run:
# "no worse than the baseline within ±0.01 nats" for the two that remove parameters, "lower than the baseline's"
# for the others (0.01 nats is the smallest effect of interest declared with them). The price list, with the
# bytes each variant's cache grows by per token (float32, one sequence):

# %%
from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import designs_sentence, designs_table
from vrs_edu.chapters.ch06_what_v_reuse_buys.recipe import verdicts as design_verdicts

designs = load_results_or_none("production-designs", corpus=verdict_corpus(), say=say)
if designs is not None:
    design_rows = design_verdicts(designs)   # judged once: read here and in "How sure are we?"
    design_judged = {r.test.name: r.to_record() for r in design_rows}
    say(table(*designs_table(designs, design_judged)), designs_sentence(designs, design_judged))

# %% [markdown]
# And post hoc, in a real decoder trained with separate K and V (SmolLM2, the 30-layer model of chapter 08):
# could its layers have done with K = V, or with a neighbour's cache? `vrs-edu reproduce decoder-kv-designs`
# fits, per layer, a linear map from K to V (ridge regression) on calibration text and measures on other text how
# much of V it predicts ($R^2$) and what the loss becomes when V is replaced by that prediction; and what a layer
# loses when it reads its neighbour's K and V instead of its own.

# %%
from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import post_hoc_sentence

kv_designs = load_results_or_none("decoder-kv-designs", say=say)
if kv_designs is not None:
    say(post_hoc_sentence(kv_designs))

# %% [markdown]
# ## Widget — the cache at any size
#
# Move the sliders to size a model. The defaults are a GPT-2-small-sized model (L = 12, d = 768) with a
# 32,768-token vocabulary, in bf16, serving a batch of B = 32 sequences of T = 2048 tokens. Memory is counted
# **for the whole batch**: B caches and one copy of the bank's tables. The figure draws it against the context on
# log axes, a dot at this T on each curve; the dashed line is the break-even context T = |V|/B, the solid line the
# current T, and the thin grey curves the default setting, so every move shows against them. Each step of T, |V|
# or B doubles what it scales. The widget responds once the chapter runs; the static figure below it shows the
# default setting, and the readout below that the same model for one sequence.

# %% tags=["nbval-ignore-output"]
from vrs_edu.chapters.ch06_what_v_reuse_buys.figures import kv_widget

kv_widget(batch=32)

# %%
from vrs_edu.lab.kv_cache import kv_summary
from vrs_edu.chapters.ch06_what_v_reuse_buys.figures import kv_figure, kv_text

fig, s = kv_figure(batch=32)
plt.show()
say(*(kv_text(kv_summary(batch=batch), 2048) for batch in (32, 1)))

# %% [markdown]
# ## Reading what a head writes off the token table
#
# In a bank layer the value at position $j$ is $\gamma\,E_v[x_j]$: it depends on the token and nothing else. So a
# head's output at position $i$ is
#
# $$\text{out}_h(i) = \sum_j a^h_{ij}\; \underbrace{W_O^h\,\gamma\,E_v^h[x_j]}_{\mathrm{OV}_h(x_j)},$$
#
# an attention-weighted sum of **rows of one table** $\mathrm{OV}_h$, indexed by token. QK decides *which* tokens'
# rows are summed; *what* they contribute can be read once, for the whole vocabulary, without running the model.
# In an ordinary layer the value of a token is computed from the stream at its position, so it may change with
# the context; a table of its values is then at best an approximation.
#
# We train a small word model whose last third of layers are bank layers (`x0_mode="bank"`), briefly.

# %%
from dataclasses import replace

from vrs_edu.lab.data import make_token_data
from vrs_edu.lab.presets import make_run
from vrs_edu.lab.train import train
from vrs_edu.nn import TinyGPT

_, bank_cfg, bank_train = make_run("word-8x64", n_layers=6, x0_mode="bank", steps=150,
                                   batch_size=16, warmup=20, eval_every=150, eval_batches=8)
data = make_token_data(tokenizer="word", vocab_size=2048, block_size=bank_cfg.block_size)
bank_model = TinyGPT(replace(bank_cfg, vocab_size=data.vocab_size))
from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import bank_run_sentence

history = train(bank_model, data, bank_train, progress=False)
bank_layers = bank_model.cfg.resolved_x0_layers()
say(bank_run_sentence(bank_layers, bank_model.cfg.n_layers, bank_train.steps, history.val_loss[-1]))

# %% [markdown]
# First, the values themselves: for every token that occurs several times in a validation batch, how alike are
# its value vectors at its different positions (mean cosine similarity)? In a bank layer they are one vector by
# construction; in the layer just below, an ordinary one, they *can* depend on the context.

# %%
from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import (context_sentence, cosine_table,
                                                        same_token_value_cosine)

x, y = next(data.eval_batches("val", batch_size=8, max_batches=1))
trace = bank_model(x, trace=True).trace
cosines = {l: same_token_value_cosine(trace[f"blocks.{l}.attn.v"], x)
           for l in (bank_layers[0] - 1, *bank_layers)}
say(table(*cosine_table(cosines, bank_layers)),
    context_sentence(cosines[bank_layers[0] - 1], bank_train.steps))

# %% [markdown]
# Now the decomposition, checked on the trained model: summing each head's pattern times the rows of its OV table
# should give exactly the layer's attention output.

# %%
from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import (decomposition_sentence,
                                                        output_from_table, ov_tables)

layer = bank_layers[-1]
ov = ov_tables(bank_model.blocks[layer], bank_model.cfg.n_heads)     # (H, |V|, D)
rebuilt = output_from_table(trace[f"blocks.{layer}.attn.pattern"], ov, x)
largest = float((rebuilt - trace[f"blocks.{layer}.attn.out"]).abs().max())
# (the bound, not the difference itself: float32 rounding differs from one CPU to another)
say(decomposition_sentence(layer, largest))

# %% [markdown]
# So what each head can write is a property of the table. Among the 400 most frequent training tokens, which rows
# write the most (largest $\lVert \mathrm{OV}_h[\text{token}]\rVert$), and which next tokens does that row push up
# when read directly through the unembedding, $W_U\,\mathrm{OV}_h[\text{token}]$? (That is the
# [logit lens](#glossary:logit-lens) applied to one row, ignoring the final norm's rescaling.)

# %%
import torch

from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import (loudest_rows, loudest_sentence,
                                                        loudest_table)

freq = torch.bincount(data.train, minlength=data.vocab_size)
loud = loudest_rows(ov, bank_model.lm_head.weight.detach(), freq, data.tokenizer.token)
say(loudest_sentence(layer, loud), table(*loudest_table(loud)))

# %% [markdown]
# A short run gives a rough table; the point is the method: every row above was read off $E_v$, $W_O$ and $W_U$ —
# parameters — not from a forward pass. With V reading [x0](#glossary:x0) through a table, "what does this head
# write when it attends to token *w*?" has one answer per token, which is what makes such layers readable. The QK
# half still decides where each head looks, and that part stays contextual.
#
# ## Exercise — the KV cache of a variant, by hand
#
# **Difficulty 2/5 · importance 4/5 · about 15 minutes.** The chapter's own count: write it, then check it
# against the cache the model built above.
#
# Write `kv_cache_bytes(n_layers, d_model, seq_len, variant, bytes_per_number)`: the bytes a decoder keeps for one
# sequence of `seq_len` tokens, for `variant` in `"baseline"`, `"svformer"`, `"bank"` (the bank layers are the
# last third: `n_layers // 3` of them, at least one).
#
# <details><summary>Hint 1</summary>
#
# Count per token and per layer first: which of K and V does each layer of each variant keep? Then scale.
#
# </details>
#
# <details><summary>Hint 2</summary>
#
# SVFormer's layers keep their keys; only V is shared, and a shared tensor is stored once. A bank layer keeps its
# keys too.
#
# </details>


# %%
def kv_cache_bytes(n_layers, d_model, seq_len, variant, bytes_per_number):
    """ints n_layers, d_model, seq_len, bytes_per_number; variant 'baseline', 'svformer' or
    'bank' -> int bytes.
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch06 import check_kv_cache_bytes

check_kv_cache_bytes(kv_cache_bytes)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def kv_cache_bytes(n_layers, d_model, seq_len, variant, bytes_per_number):
    n_bank = max(1, n_layers // 3)                         # whole layers, at least one
    v_layers = {"baseline": n_layers, "svformer": 1, "bank": n_layers - n_bank}[variant]
    # K in every layer, V where cached
    return (n_layers + v_layers) * d_model * seq_len * bytes_per_number


check_kv_cache_bytes(kv_cache_bytes)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% [markdown]
# Your estimate against the cache `build_kv_cache` measured on the course model:

# %%
from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import estimate_table


def estimate(r):
    return kv_cache_bytes(r["n_layers"], r["d_model"], r["T"], r["variant"], 4)


say(table(*estimate_table(rows, estimate)))

# %% [markdown]
# ### Exercises to think about
#
# 1. [Grouped-query attention](#glossary:grouped-query-attention) (GQA;
#    [Ainslie et al.](#cite:ainslie2023gqa)) lets g query heads share one key head and one value head, so each
#    layer caches $2d/g$ numbers per token; SVFormer shares V between layers. Write the bytes per token of a model
#    that does both, and say which of the two saves more at L = 12 and g = 4.
#
# <details><summary>Answer</summary>
#
# Both: $(L + 1)\,d/g$ numbers per token (K per layer, V once, each $d/g$ wide). Against the baseline's $2Ld$,
# GQA alone keeps $1/g$ (a quarter at g = 4); SVFormer alone keeps $(L+1)/(2L)$, 13/24 at L = 12, a little more
# than half. So GQA saves more, and the two multiply: $(L+1)/(2Lg)$, 13/96 of the baseline. GQA shrinks both
# halves of the cache; V reuse only the V half, and it does not touch QK.
#
# </details>
#
# 2. For one sequence the bank's break-even is T = |V|; for a batch of B sequences, T = |V|/B. Why does a larger
#    vocabulary make the bank *less* attractive for memory? What would have to hold for it to be worth it anyway?
#
# <details><summary>Answer</summary>
#
# The tables grow with |V| (one $|V| \times d$ table per bank layer) while the V cache they replace grows with
# B·T, so a larger vocabulary pushes the break-even to longer contexts or larger batches. The bank is worth it
# anyway when its quality gain or its readability is what one wants, or when batches and contexts are large
# (long-context serving), where the tables are small next to the caches.
#
# </details>
#
# 3. The OV table tells what a head writes for each token. What would you still need in order to predict the
#    head's output on a sentence?
#
# <details><summary>Answer</summary>
#
# The attention pattern: which positions the head reads and how much. That is QK's half, computed from the
# context at run time, so it cannot be tabulated per token. The table answers "what", the pattern "where".
#
# </details>
#
# The article's four questions are answered together, the toy models' evidence beside the real decoder's, in
# chapter 09 ("09 · The four answers").
#
# ## The answer

# %%
from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import answer

say(answer(rows, course_cfg.vocab_size, largest, cosines[bank_layers[0] - 1]))

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## How sure are we?

# %% [markdown]
# **The counts.** The bytes are counted on the tensors a forward pass produced, and the formulas are checked
# against them at every length, on both vocabularies:

# %%
from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import counts_sentence

char_equal = all(measured_saving(char_rows, T) == paper[T] for T in char_lengths)
course_equal = all(measured_saving(rows, T) == bov_saving(n_bank_layers(8), 64, T, 2048) * 4
                   for T in lengths)
say(counts_sentence(course_equal, char_equal,
                    all(r["bytes_per_token"] == formula(r) for r in rows + da_rows)))

# %% [markdown]
# **The quality costs.** Each loss difference above is the mean over paired seeds of a test declared before its
# run, read at *our* scale and judged here with the recipes' current rules (chapter 03's lesson:
# [three-way verdicts](#glossary:three-way-verdicts), the [Holm correction](#glossary:holm-correction) within each
# chapter's family; a test is [negligible](#glossary:negligible) when its whole interval lies inside ± the smallest
# effect declared with it, too small to matter whichever its sign, and
# [out of regime](#glossary:out-of-regime) when its precondition fails, shown then with its
# [would-be verdict](#glossary:would-be-verdict), what the numbers say if judged anyway). The declared claims and
# their verdicts:

# %%
from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import depth_attention_line, quality_line

lines = []
for v, test, ch in (("svformer", "svformer_cost", "03"), ("bank", "bank_loss", "04")):
    if quality[v] is not None:
        lines.append(quality_line(ch, quality[v]["command"], v,
                                  quality[v]["corpus"]["comparison"][v]["paired_final"], test,
                                  judged[v]))
if vod is not None:
    lines += [depth_attention_line(vod["command"], r) for r in da.values()]
say("\n".join(lines))

# %% [markdown]
# **2026's designs.** Nine declared tests: six, one per design against the baseline (Holm-corrected together);
# two controls (judged only when the gain they explain is reproduced: does mHC beat the baseline with as many
# parameters, do value embeddings beat a token table of the same size written into the stream); and one check of
# the set-up (can this model see the loss of 5 % of its parameters at all?). Each with its interval (the test's
# own, before the correction: an interval clear of 0 can still be undecided once the six tests are corrected
# together) and smallest effect in nats:

# %%
from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import designs_list, removal_sentence

if designs is not None:
    say(designs_list(designs["command"], design_rows))
    say(removal_sentence(design_judged["removal_visible"]))

# %% [markdown]
# How to read them. **reproduced** means decided in the published direction after the correction. A test whose
# interval lies on the other side of 0 from its claim, but whose verdict is undecided, did not decide against the
# claim as declared; the claim is simply not supported at this scale. A **negligible** one is decided in a third
# way: whatever its sign, the change is smaller than the effect the claim is about, so it is neither a cost nor a
# gain. These are small models trained for a few hundred steps (120 for 2026's designs) on one corpus: a verdict
# holds for that regime. The head-reading section trains one model for
# 150 steps on one seed; its decomposition is exact by construction of a bank layer, while its table of loud rows
# and the ordinary layer's cosine describe that one model only.
