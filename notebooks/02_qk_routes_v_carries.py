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
# # 02 · QK routes, V carries
#
# **Question.** How much does a deep layer's attention depend on its freshly computed QK pattern? (The article's first
# question, asked of a small trained model.)
#
# **Goals.** Separate attention into its two halves, the pattern computed from queries and keys and the content it
# moves, the values; build the *value swap* yourself; swap each half between inputs and freeze a layer's routing,
# and measure what each costs; read a head by the norm of what it moves as well as by its weights.
#
# **Prerequisites.** Chapter 01 (the residual stream, direct and total effects, hook points). Matrix products and
# `softmax`.
#
# **Study time.** About 45 minutes. **Expected run time.** About 20 seconds at one thread on a laptop CPU (budget in
# `book.toml`: 60 s).

# %%
from vrs_edu.course.setup import setup_notebook

setup_notebook(seed=0)

# %% [markdown]
# ## The mechanism
#
# For each head, with $q, k, v$ of shape `(T, Dh)` computed from the stream:
#
# $$A = \mathrm{softmax}\Big(\frac{q k^\top}{\sqrt{D_h}} + \text{causal mask}\Big) \quad \text{(QK: where to look)},
# \qquad z = A\,v \quad \text{(V: what gets moved)},$$
#
# and the layer writes $W_O \cdot \mathrm{concat}_h(z)$ into the [residual stream](#glossary:residual-stream). The
# [attention pattern](#glossary:attention-pattern) $A$ never touches the content of $v$, and $v$ never decides where
# attention looks. The [causal mask](#glossary:causal-mask) keeps a position from reading the ones after it. Two
# swaps take one half from another input and keep the other:

# %%
import matplotlib.pyplot as plt

from vrs_edu.viz.schematics import attention_halves

attention_halves()
plt.show()

# %% [markdown]
# The package's two halves, each a few lines (`vrs_edu/nn/attention.py`):

# %%
from vrs_edu.nn.attention import attend, attention_pattern
from vrs_edu.viz.prose import say, source

say(source(attention_pattern, start="T, Dh ="), source(attend, start="return"))

# %% [markdown]
# ## The model and the data
#
# The same trained 6-layer character model as chapter 01, loaded from the checkpoint that one reproduce command made.
# The experiments run on 4 validation batches, 4 × 32 sequences of 64 characters the model never trained on.

# %%
import torch

from vrs_edu.lab.data import make_token_data
from vrs_edu.lab.experiments import provenance
from vrs_edu.lab.char_model import load_char_model
from vrs_edu.chapters.ch02_qk_routes_v_carries import prose

model, tok, run = load_char_model()
print(provenance(run))
data = make_token_data(tokenizer=tok, block_size=model.cfg.block_size)
batches = list(data.eval_batches("val", batch_size=32, max_batches=4))
L, H = model.cfg.n_layers, model.cfg.n_heads
sentence = "Keys and values are iterated over in insertion order."
ids = torch.tensor([tok.encode(sentence)])
x, y = ids[:, :-1], ids[:, 1:]
tokens = [tok.token(i) for i in x[0]]
trace = model(x, trace=True).trace
print(prose.model_line(L, H, run["final_val_loss"]))

# %% [markdown]
# ## The effect: values carry the text, patterns transfer
#
# Pair every sequence of a batch with another one (the batch rolled by one). At one layer at a time, the
# [pattern swap](#glossary:pattern-swap) keeps this sequence's values and attends with the pattern the layer computed
# on the other sequence; the [value swap](#glossary:value-swap) keeps this sequence's pattern and moves the other
# sequence's values. The bars are the loss change in [nats](#glossary:nats), averaged over the 128 sequences.

# %%
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import swap_experiment
from vrs_edu.chapters.ch02_qk_routes_v_carries.figures import plot_layer_effects

swaps = swap_experiment(model, batches)
plot_layer_effects(swaps, ["pattern swap", "value swap"], prose.swap_title())
plt.show()
ratio = [v.mean / p.mean for p, v in zip(swaps["pattern swap"], swaps["value swap"])]
say(prose.swap_sentence(ratio, swaps["clean"]))

# %% [markdown]
# Where the value swap hurts more, the layer's *content* is specific to this text while its *routing* partly
# transfers from another: much of a character model's routing is positional (the previous characters, the start of
# a word), so another text's pattern is often roughly right. The values carry what the text says. The two swaps are
# not interventions of equal size, so the ratio compares these two swaps on this model, not a constant of nature.
#
# ### Exercise 1: the causal pattern
#
# **Difficulty 2/5 · importance 3/5 · about 10 minutes.** The QK half.
#
# Write `attention_pattern(q, k)` for `q, k` of shape `(B, H, T, Dh)`: the scores $q k^\top / \sqrt{D_h}$, future
# keys ($j > i$) excluded, softmax over the keys. Return `(B, H, T, T)`; every row sums to 1. Then it gets the
# model's own `q` and `k`.
#
# <details><summary>Hint</summary>
#
# Which axis of the scores is "the keys"? A key after the query must end with weight exactly 0 after the softmax:
# what score gives that? `torch.triu` builds a triangle of booleans.
#
# </details>


# %%
import math


def attention_pattern(q, k):
    """q, k (B, H, T, Dh) -> the causal pattern (B, H, T, T); every row sums to 1."""
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch02 import check_attention_pattern

check_attention_pattern(attention_pattern)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def attention_pattern(q, k):
    T, Dh = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(Dh)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    return scores.masked_fill(future, float("-inf")).softmax(dim=-1)


check_attention_pattern(attention_pattern)
None  # the check prints what it found; this line keeps the cell from also showing its True/False
mine = attention_pattern(trace["blocks.3.attn.q"], trace["blocks.3.attn.k"])
diff = (mine - trace["blocks.3.attn.pattern"]).abs().max()
print(prose.difference_line("pattern", diff))

# %% [markdown]
# ### Exercise 2: the value-weighted sum
#
# **Difficulty 1/5 · importance 3/5 · about 5 minutes.** The V half.
#
# Write `attend(pattern, v)`: `pattern (B, H, T, T)`, `v (B, H, T, Dh)`; return `z (B, H, T, Dh)` with
# $z_i = \sum_j \text{pattern}_{ij} \, v_j$.
#
# <details><summary>Hint</summary>
#
# Row $i$ of the pattern holds query $i$'s weights over the keys $j$: a weighted sum over $j$ for every $i$ at once
# is one familiar operation.
#
# </details>


# %%
def attend(pattern, v):
    """pattern (B, H, T, T), v (B, H, T, Dh) -> z (B, H, T, Dh), z_i = sum_j pattern[i, j]
    v_j.
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch02 import check_attend

check_attend(attend)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def attend(pattern, v):
    return pattern @ v


check_attend(attend)
None  # the check prints what it found; this line keeps the cell from also showing its True/False
mine = attend(trace["blocks.3.attn.pattern"], trace["blocks.3.attn.v_mix"])
diff = (mine - trace["blocks.3.attn.z"]).abs().max()
print(prose.difference_line("z", diff))

# %% [markdown]
# ### Exercise 3: build the value swap
#
# **Difficulty 3/5 · importance 5/5 · about 20 minutes.** The chapter's intervention, and the way every later
# chapter intervenes on a model.
#
# Write `value_swap_loss(model, x, y, layer)`: the mean loss (nats) of the batch `x` (targets `y`) when layer
# `layer` keeps the pattern it computes on `x` but moves the values it computed on *another sequence*: the batch
# rolled by one sequence (sequence $i$ gets the values of sequence $i-1$). Two tools from chapter 01: a traced run,
# `model(x, trace=True).trace[name]`, reads a tensor at a hook point, and a patched run,
# `model(x, y, hooks={name: fn}).loss`, replaces it by `fn(tensor)`, which must return a tensor of the same shape.
# The values a layer's pattern averages sit at the hook point `blocks.{layer}.attn.v_mix`.
#
# <details><summary>Hint 1</summary>
#
# You need two forward passes. Which input does the first one read, and what do you keep from it?
#
# </details>
#
# <details><summary>Hint 2</summary>
#
# `torch.roll` shifts a tensor along one axis. The patch's function may ignore its argument: it only has to return
# the replacement.
#
# </details>


# %%
def value_swap_loss(model, x, y, layer):
    """model: a TinyGPT; x, y (B, T) token ids and targets; layer: 0..L-1 -> the mean loss
    (a float, nats) when the layer moves the values computed on x rolled by one sequence.
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch02 import check_value_swap

check_value_swap(value_swap_loss)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def value_swap_loss(model, x, y, layer):
    name = f"blocks.{layer}.attn.v_mix"
    with torch.no_grad():
        donor = model(x.roll(1, 0), trace=True).trace[name]     # the other sequences' values
        return float(model(x, y, hooks={name: lambda v: donor}).loss)


check_value_swap(value_swap_loss)
None  # the check prints what it found; this line keeps the cell from also showing its True/False
xb, yb = batches[0]
with torch.no_grad():
    clean = float(model(xb, yb).loss)
print(prose.value_swap_line(clean, value_swap_loss(model, xb, yb, L - 1)))

# %% [markdown]
# ## Attention is not only a weight
#
# The heatmaps of attention show the weights alone, but a head moves vectors. What head $h$ adds to query $i$'s
# stream is a sum over the sources $j$ ([Kobayashi et al., 2020, arXiv 2004.10102](#cite:kobayashi2020attention)):
#
# $$\sum_j \alpha_{ij}\, f(x_j), \qquad f(x_j) = v_j\, W_O^{h\top}, \qquad
# \lVert \alpha_{ij}\, f(x_j) \rVert = \alpha_{ij}\, \lVert f(x_j) \rVert,$$
#
# where $\alpha_{ij}$ is the head's attention weight (QK) and $W_O^h$ the $D_h$ columns of the output projection
# that the head writes through. The [transformed value](#glossary:transformed-value) $f(x_j)$ is what source $j$
# would write at weight 1, made by V and O; its length $\lVert f(x_j) \rVert$ is the factor the weights leave out.
# [Norm-based attribution](#glossary:norm-based-attribution) reads the head by $\lVert \alpha_{ij} f(x_j) \rVert$,
# each query's row normalised to sum to 1 like the weights: the *norm map*, beside the *weight map* $\alpha$.

# %%
from vrs_edu.viz.schematics import weight_times_norm

weight_times_norm()
plt.show()

# %% [markdown]
# The sentence, read both ways, at the head whose two maps differ most (by the total-variation distance between
# the rows, $\tfrac12 \sum_j |a_{ij} - b_{ij}|$, averaged over the queries), on its first 16 characters:

# %%
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import (attention_views, most_different_head,
                                                               source_shares)
from vrs_edu.chapters.ch02_qk_routes_v_carries.figures import plot_weight_vs_norm

views = attention_views(model, x)
nl, nh = most_different_head(views)
first = slice(0, 16)   # the first 16 characters, as in the chapter's other heatmaps
weight, norm = (views[k][nl, 0, nh, first, first] for k in ("weight", "norm"))
plot_weight_vs_norm(weight, norm, tokens[first], nl, nh)
plt.show()
top = source_shares(views, nl, nh, tokens)[0]
drawn = tokens[first].count(top["token"])
say(prose.norm_view_sentence(nl, nh, top, len(tokens), drawn, first.stop))

# %% [markdown]
# The weight map over-states what the spaces give: the head puts weight on them and moves little from them. The
# paper found the same in BERT, whose heaviest weights sit on frequent tokens ([CLS], [SEP], full stops) with short
# vectors. A weight map answers "where does the head look"; only the norm map answers "what does it move".
#
# ### Widget: read a head by its weight or by its norm
#
# The sliders pick a layer and a head; the toggle reads its map by the weight $\alpha$ or by the norm
# $\lVert \alpha f(x) \rVert$ (per query, as above). The bars on the right are $\lVert f(x_j) \rVert$ of each
# source, the factor by which the norm view rescales each column before the rows are normalised; the title gives how
# far the head's two maps are apart on the whole sentence. The static figure below the widget is the default
# setting: the head above, read by its weight.

# %% tags=["nbval-ignore-output"]
from vrs_edu.chapters.ch02_qk_routes_v_carries.figures import norm_view_widget

norm_view_widget(model, x, tokens, layer=nl, head=nh)

# %%
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import map_distance
from vrs_edu.chapters.ch02_qk_routes_v_carries.figures import norm_view_figure

norm_view_figure(views, nl, nh, "weight", tokens)
plt.show()
apart = map_distance(views["weight"][:, 0], views["norm"][:, 0])     # (L, H)
say(prose.map_distance_sentence(L * H, apart.min(), apart.max(), apart.mean()))

# %% [markdown]
# ### Exercise 4: the norm-based contributions of one head
#
# **Difficulty 3/5 · importance 4/5 · about 15 minutes.** The factor the weights leave out, computed from the
# model's own tensors.
#
# Write `head_contributions(pattern, v, w_o, head)`: `pattern (B, H, T, T)` and `v (B, H, T, Dh)` of one layer,
# `w_o (D, H·Dh)` the weight of its output projection as `nn.Linear` stores it (out × in), and a head index. Return
# the vectors $\alpha_{ij} f(x_j)$ of that head, shape `(B, T, T, D)`: entry `[b, i, j]` is what source $j$ gives
# query $i$. Summed over $j$ they are what the head writes; their norms are its norm map. After the check, a cell runs
# your function on the toy's own tensors and compares it with the head's output and the figure above.
#
# <details><summary>Hint 1</summary>
#
# The heads' outputs are concatenated before $W_O$ reads them. Which of its columns meet head $h$'s $D_h$ numbers?
#
# </details>
#
# <details><summary>Hint 2</summary>
#
# The result has one axis more than the pattern and one more than $f$. Give each a new axis of length 1 in the
# right place and let broadcasting pair every query with every source.
#
# </details>


# %%
def head_contributions(pattern, v, w_o, head):
    """pattern (B, H, T, T), v (B, H, T, Dh), w_o (D, H·Dh), head -> (B, T, T, D): entry
    [b, i, j] is alpha_ij f(x_j), what source j gives query i through the head.
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch02 import check_head_contributions

check_head_contributions(head_contributions)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def head_contributions(pattern, v, w_o, head):
    Dh = v.size(-1)
    w_o_h = w_o[:, head * Dh:(head + 1) * Dh]       # (D, Dh): the columns head h writes through
    v_h = v[:, head]                                # (B, T, Dh): its values, one per source j
    f = v_h @ w_o_h.T                               # (B, T, D): f(x_j), what j writes at weight 1
    alpha = pattern[:, head]                        # (B, T, T): row i = query, column j = source
    return alpha[..., None] * f[:, None, :, :]      # (B, T, T, D): alpha_ij f(x_j)


check_head_contributions(head_contributions)
None  # the check prints what it found; this line keeps the cell from also showing its True/False
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import head_writes

attn = model.blocks[nl].attn
mine = head_contributions(trace[f"blocks.{nl}.attn.pattern"], trace[f"blocks.{nl}.attn.v_mix"],
                          attn.o_proj.weight, nh)
writes = torch.allclose(mine.sum(dim=2), head_writes(model, trace, nl)[:, nh], atol=1e-5)
norms = mine.norm(dim=-1)                           # (B, T, T): the head's norm map, unnormalised
shares = torch.allclose(norms / norms.sum(-1, keepdim=True), views["norm"][nl, :, nh], atol=1e-5)
print(prose.contributions_line(nl, nh, writes, shares))

# %% [markdown]
# ## Does a deep layer need its fresh pattern?
#
# The article's question, measured by [frozen routing](#glossary:frozen-routing): replace one layer's pattern (all
# heads) at a time, keeping its values, by
#
# * **uniform**: every position attends equally to all earlier positions (routing by nothing);
# * **previous layer**: the pattern layer $l-1$ computed on the same input (head by head);
# * **batch mean**: the layer's own pattern averaged over the 32 sequences of the batch, which keeps what depends on
#   position and forgets what depends on content.

# %%
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import frozen_routing

frozen = frozen_routing(model, batches)
plot_layer_effects(frozen, ["uniform", "previous layer", "batch mean"], prose.frozen_title())
plt.show()
deep = range(L // 2, L)
deep_share = {m: sum(frozen[m][l].mean for l in deep) / len(deep) / frozen["clean"]
              for m in ("uniform", "previous layer", "batch mean")}
u, pl = frozen["uniform"], frozen["previous layer"]
costliest = sum(p.mean > q.mean for p, q in zip(pl[1:], u[1:]))
say(prose.frozen_sentence(u[0].mean, deep, deep_share, costliest, L - 1))

# %% [markdown]
# Every layer pays when its routing is frozen: none is routing-free. Layer 0 pays the most by far, the deep layers a
# fraction of it, and partly only for the position-dependent part of their pattern (uniform minus batch mean is
# what positional routing alone was worth). A pattern computed for another layer is no free replacement for a
# layer's own, at least in this small model.
#
# ## Widget: blend the values toward V₁, change the temperature
#
# For the last layer: the first slider mixes the values it moves between its own V (0) and the first layer's values
# V₁ (1), a fixed-weight preview of chapter 03's [value residual](#glossary:value-residual); the second divides the
# scores by a temperature (above 1 flattens the pattern, below 1 sharpens it); the third picks the head shown. The
# heatmap is that head's pattern on the first 16 characters of the sentence. Blending the values does not move the
# pattern of the same layer (QK never reads V), so the right panel shows it: the loss over the sentence along the
# V₁ weight at the current temperature, your setting in red and the default in grey; the titles give the change
# from the default. Neither knob retrains anything. The static figure below the widget is the default setting.

# %% tags=["nbval-ignore-output"]
from vrs_edu.chapters.ch02_qk_routes_v_carries.figures import blend_widget

blend_widget(model, x, y, layer=L - 1, tokens=tokens)

# %%
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import blend_and_temperature
from vrs_edu.viz.prose import table
from vrs_edu.chapters.ch02_qk_routes_v_carries.figures import blend_figure

fig, default = blend_figure(model, x, y, layer=L - 1, tokens=tokens)
plt.show()
temps = (0.5, 1.0, 2.0)
sweep = {w: [blend_and_temperature(model, xb, yb, L - 1, w, t)["loss"] for t in temps]
         for w in (0.0, 0.5, 1.0)}
say(*prose.blend_table(default, temps, sweep))

# %% [markdown]
# ## 2026's designs on the two halves: K = V (Gemma 4) and exclusive self-attention
#
# Two designs of 2026, one shipped and one published, act on exactly the split this chapter makes.
#
# * **[K = V](#glossary:k-v-attention)** (Gemma 4's global layers, config field `attention_k_eq_v`): a layer has
#   no $W_V$; its value is its own key projection, normalised without a gain and not rotated ([RoPE](#glossary:rope),
#   the rotation that gives queries and keys their positions, is applied to the key only). The content a token
#   offers *is* its key. If a model loses nothing by it, "where to look" and "what is moved" need not be two
#   learned projections: they can be two uses of one vector.
# * **[Exclusive self-attention](#glossary:exclusive-self-attention)** (XSA,
#   [arXiv 2603.09078](#cite:zhai2026xsa)): a head's output at position $i$, $y_i = \sum_j A_{ij} v_j$ (the
#   chapter's $z$; XSA's paper and the package's code call it $y$), often points along the token's own value
#   $v_i$, re-delivering what the residual stream already holds at $i$. XSA removes that component and keeps
#   $z_i = y_i - \frac{y_i \cdot v_i}{\|v_i\|^2} v_i$, so attention carries only what comes from other positions.
#   Q, K and the pattern are untouched: only the V side changes.

# %%
from vrs_edu.viz.schematics import k_eq_v_and_xsa

k_eq_v_and_xsa()
plt.show()

# %% [markdown]
# **The package's own code** (`vrs_edu/nn/k_eq_v.py`, `vrs_edu/nn/attention.py`): a K = V layer's values, and
# XSA's one subtraction, applied after the weighted sum and before $W_O$.

# %%
from vrs_edu.nn.attention import exclude_self_value
from vrs_edu.nn.k_eq_v import values_from_keys

say(source(values_from_keys), source(exclude_self_value, start="v_hat ="))

# %% [markdown]
# **XSA's premise, in this model.** How much of what each head moves to position $i$ lies along $v_i$? The cosine
# between each head's output $y_i$ and the token's own value, against the cosine with another sequence's value at
# the same position (what any two values share), and the share of the output's squared norm XSA would remove:

# %%
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import (alignment_rows, alignment_sentence,
                                                              own_value_alignment)

align = own_value_alignment(model, batches)
say(table(*alignment_rows(align)), alignment_sentence(align, head_dim=model.cfg.d_model // H))

# %% [markdown]
# That is the premise, not the effect: a model trained *with* XSA learns to use what is left. Chapter 06 trains
# both designs from scratch on the course's 8-layer word model against the strong baseline (five
# [paired seeds](#glossary:paired-seeds) on the King James Bible, `vrs-edu reproduce production-designs`); each
# was given a test before the run: "no worse within ±0.01 nats" for K = V, "lower than the baseline's" for XSA
# (0.01 nats is the smallest effect of interest declared with it).
#
# ### How to read a verdict
#
# These are the first verdicts of the course; every later chapter uses the same five words. Before a run, each claim
# gets a [declared test](#glossary:declared-test): what is measured (here a difference of validation losses, in
# nats), which sign supports the claim, and a [smallest effect of interest](#glossary:smallest-effect-of-interest),
# the smallest difference that would matter. After the runs, the test says one of these
# [three-way verdicts](#glossary:three-way-verdicts), or one of two words that qualify them:
#
# | verdict | what it means |
# |---|---|
# | [reproduced](#glossary:reproduced) | decided (p below 0.05 after the [Holm correction](#glossary:holm-correction), which raises the p-values of a family of tests judged together so one lucky test is not read as a finding) and the difference points the way the claim says |
# | [contradicted](#glossary:contradicted) | decided, and the difference points the other way |
# | [undecided](#glossary:undecided) | the runs cannot tell: the Holm-corrected p is not below 0.05 (most often because the 95 % interval holds both outcomes). Not "no effect" |
# | [negligible](#glossary:negligible) | the whole 95 % interval lies inside ± the smallest effect: whatever the effect is, it is too small to matter |
# | [out of regime](#glossary:out-of-regime) | a [precondition](#glossary:precondition) declared with the test failed (e.g. a run read its text more than once), so the claim is not judged here; its [would-be verdict](#glossary:would-be-verdict) is shown beside it |
#
# A "no worse" claim is an [equivalence test](#glossary:equivalence-test): it is reproduced only when the whole
# interval lies inside ± its margin. An interval clear of 0 can still be *undecided*: the interval is uncorrected
# (it answers this one test alone), while the verdict's p-value is Holm-corrected for all the tests declared
# together, so noise could explain the difference once the number of tests is allowed for. Such a line says its
# corrected p. Two rarer words appear in a few tables:
# *n/a (would be: …)* for a control whose claim did not reproduce, so it has nothing to control, and
# [rate-dependent](#glossary:rate-dependent) for a claim decided in opposite directions at two learning rates
# (chapter 04). A verdict holds for the model, corpus and scale it was measured on, and the sentence that states it
# names them.

# %%
from vrs_edu.lab.by_corpus import verdict_corpus
from vrs_edu.lab.experiments import load_results_or_none
from vrs_edu.viz.prose import declared_result

designs = load_results_or_none("production-designs", corpus=verdict_corpus(), say=say)
say(f"* **K = V**: {declared_result(designs, 'k_eq_v_no_worse')}.\n"
    f"* **XSA**: {declared_result(designs, 'xsa_loss')}.")

# %% [markdown]
# ### Questions
#
# 1. At which layer is the value swap most harmful, and is that the layer whose routing matters most too?
#
# <details><summary>Answer</summary>
#
# Layer 0, in both figures, and layer 3 is the cheapest in both. Layer 0 is the only layer whose input is the bare
# embedding: its values are the token identities every later layer builds on, and its pattern is what first mixes
# neighbouring characters.
#
# </details>
#
# 2. Why is the previous layer's pattern a worse substitute than the uniform one at most layers?
#
# <details><summary>Answer</summary>
#
# A uniform pattern averages over the prefix and loses little of any one position; a wrong *sharp* pattern puts its
# weight on positions this layer does not want. Consecutive layers of this model look at different offsets (the
# previous-token weights in *Going further* below differ from layer to layer), so the previous layer's pattern is
# sharp and wrong.
#
# </details>
#
# 3. Moving the last layer's values all the way to V₁ in the widget was never trained. Would a model trained to do
#    it from the start depend more or less on its fresh pattern in the last layer?
#
# <details><summary>Answer</summary>
#
# This chapter cannot say: an untrained intervention only measures this model. Chapter 03 trains models with a value
# residual from the start and measures them.
#
# </details>
#
# 4. The head of *Attention is not only a weight* puts far more of its weight on the spaces than it moves from
#    them. Is that weight wasted?
#
# <details><summary>Answer</summary>
#
# Not necessarily. The softmax makes every query's weights sum to 1, so a head with little to fetch for a query can
# put its weight on sources whose vectors are short and write little ([attention sinks](#glossary:attention-sink) are
# the extreme case). The weight map reads that as attention to the spaces, the norm map as a small write. Whether
# the small write matters is a question for an intervention (chapter 01's total effect), not for either map.
#
# </details>
#
# ## The answer

# %%
say(prose.answer(u[0].mean, frozen["clean"], deep_share["uniform"], ratio))

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## How sure are we?

# %% [markdown]
# Each bar above is a mean over 128 validation sequences of a *paired* difference: the same sequence with and
# without the intervention, so what varies between sequences cancels. Its standard error across the sequences:

# %%
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import effect_rows

p_swap, v_swap = swaps["pattern swap"], swaps["value swap"]
gap = [(v.mean - p.mean) / math.hypot(v.se, p.se) for p, v in zip(p_swap, v_swap)]
say(*prose.effect_tables(effect_rows(swaps, ["pattern swap", "value swap"]), effect_rows(frozen),
                         gap, swaps["clean"], run["final_val_loss"]))

# %% [markdown]
# So the ordering of the two swaps is no fluke of these sequences. What the chapter cannot tell is how it would vary
# between models: it measures one model, trained once, with one seed. Chapter 07 checks the ordering from another
# side, in weights trained elsewhere.

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## Going further: the heads and their circuits

# %% [markdown]
# Two numbers per head, averaged over the validation batches: the weight on the **previous** character (1 = a pure
# previous-token head) and the pattern's **entropy** in nats (0 = looks at one position); and the mean norm of
# what each head writes into the stream ($z_h W_O[:, h]^\top$; the heads of a layer sum to its attention output).

# %%
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import head_profile
from vrs_edu.chapters.ch02_qk_routes_v_carries.figures import plot_head_writes, plot_patterns

heads = head_profile(model, batches)
n = 16
plot_patterns({l: trace[f"blocks.{l}.attn.pattern"][0, :, :n, :n].numpy() for l in (0, L - 1)},
              tokens[:n])
plt.show()
plot_head_writes(heads["write"].numpy())
plt.show()
best = divmod(int(heads["prev"].argmax()), H)
say(*prose.heads_table(n, best, heads["prev"].max(), heads["prev"], heads["entropy"]))

# %% [markdown]
# For a head of layer 0, whose input is exactly [x0](#glossary:x0), two token-by-token matrices follow from the
# weights alone, the
# [QK and OV circuits](#glossary:qk-and-ov-circuits) ([Elhage et al., 2021](#cite:elhage2021framework)): the QK
# circuit $x_0 W_Q^\top (x_0 W_K^\top)^\top / \sqrt{D_h}$, how much a query token wants to attend to a key token at
# equal positions ([RoPE](#glossary:rope), the rotary position embedding, adds the dependence on distance), and the
# OV circuit $x_0 W_V^\top W_O^\top W_U^\top$, which output logits the head raises when it attends to a token. A
# *copying* head's OV circuit has its largest entry on the diagonal; the copying score is the fraction of tokens
# for which it does (chance: 1/V).

# %%
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import copying_score, ov_circuit, qk_circuit
from vrs_edu.chapters.ch02_qk_routes_v_carries.figures import plot_circuits

V = model.cfg.vocab_size
scores = torch.tensor([[copying_score(ov_circuit(model, l, h)) for h in range(H)]
                       for l in range(L)])
h0 = int(heads["prev"][0].argmax())
frequent = torch.bincount(data.train, minlength=V).topk(20).indices
qk, ov = qk_circuit(model, 0, h0), ov_circuit(model, 0, h0)
plot_circuits(qk[frequent][:, frequent].numpy(), ov[frequent][:, frequent].numpy(),
              [tok.token(i) for i in frequent], prose.head_label(0, h0))
plt.show()
layer0 = ", ".join(f"{s:.3f}" for s in scores[0])
say(prose.copying_sentence(1 / V, scores.max(), divmod(int(scores.argmax()), H)[0], layer0))

# %% [markdown]
# No head of this character model copies the character it reads, and no surprise: repeating the character just seen
# is rarely the right next character. Nor do the OV rows read well through the unembedding: a layer-0 head writes
# mostly for *later layers* to read, and the unembedding's direct reading of its write is only part of its effect
# (chapter 01: direct and total effects). With word tokens (the later chapters) a token carries far more identity,
# and copying it is useful more often.
