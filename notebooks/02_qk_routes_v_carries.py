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
# **Goals.** Separate attention into its two halves — the pattern, computed from queries and keys, and the content
# it moves, the values — and measure each on a trained model: swap patterns and values between inputs, freeze a
# layer's routing, and read the QK and OV circuits of a head straight off its weights.
#
# **Question.** How much does a deep layer depend on its freshly computed QK pattern?
#
# **Prerequisites.** Chapter 01 (the residual stream, direct logit attribution). Matrix products and `softmax`.
#
# **Expected run time.** About 25 seconds at one thread on an idle 2-core laptop CPU (budget in `book.toml`: 60 s).

# %%
from vrs_edu.course.setup import setup_notebook

setup_notebook(seed=0)

# %% [markdown]
# ## The model and the data
#
# The same trained 6-layer character model as chapter 01, loaded from the checkpoint that one reproduce command
# made (its command, wall time and validation loss are printed from the result file). The experiments below run
# on 4 validation batches: 4 × 32 sequences of 64 characters the model never trained on.

# %%
import torch

from vrs_edu.lab.data import make_token_data
from vrs_edu.lab.experiments import provenance
from vrs_edu.lab.recipes.char_model import load_char_model

model, tok, run = load_char_model()
print(provenance(run))
print(f"validation loss {run['final_val_loss']:.3f} nats (unigram {run['unigram_val_loss']:.3f})")
data = make_token_data(tokenizer=tok, block_size=model.cfg.block_size)
batches = list(data.eval_batches("val", batch_size=32, max_batches=4))
L, H = model.cfg.n_layers, model.cfg.n_heads
sentence = "Keys and values are iterated over in insertion order."
ids = torch.tensor([tok.encode(sentence)])
x, y = ids[:, :-1], ids[:, 1:]
tokens = [tok.token(i) for i in x[0]]
trace = model(x, trace=True).trace
print(f"{L} layers × {H} heads; example sentence of {x.size(1)} input characters")

# %% [markdown]
# ## Two halves of one attention layer
#
# For each head, with `q, k, v` of shape `(T, Dh)` computed from the stream:
#
# $$A = \mathrm{softmax}\!\Big(\frac{q k^\top}{\sqrt{D_h}} + \text{causal mask}\Big) \quad \text{(QK: where to look)},
# \qquad z = A\,v \quad \text{(V: what gets moved)},$$
#
# and the layer writes `W_O · concat_heads(z)` into the residual stream. The pattern `A` never touches the content
# of `v`; `v` never influences where attention looks. The model exposes both as hook points
# (`blocks.{l}.attn.pattern`, `blocks.{l}.attn.v_mix`), so each half can be read or replaced on its own.
#
# The heatmaps show every head's pattern on the first 24 characters of the sentence, in the first and the last
# layer (row = the position that reads, column = the position read).

# %%
import matplotlib.pyplot as plt

from vrs_edu.viz.routing import plot_patterns

n = 16
plot_patterns({l: trace[f"blocks.{l}.attn.pattern"][0, :, :n, :n].numpy() for l in (0, L - 1)},
              tokens[:n])
plt.show()

# %% [markdown]
# Some heads have a shape you can name. Two numbers per head, averaged over the validation batches: the weight on
# the **previous** character (1 = a pure previous-token head, every query on the character just before it) and the
# pattern's **entropy** in nats (0 = looks at one position; large = spreads over many).

# %%
from vrs_edu.lab.routing import head_entropy, head_writes, offset_mass

prev = torch.zeros(L, H)
entropy = torch.zeros(L, H)
write_norm = torch.zeros(L, H)
with torch.no_grad():
    for xb, _ in batches:
        tr = model(xb, trace=True).trace
        for l in range(L):
            p = tr[f"blocks.{l}.attn.pattern"]
            prev[l] += offset_mass(p, 1) / len(batches)
            entropy[l] += head_entropy(p) / len(batches)
            write_norm[l] += head_writes(model, tr, l).norm(dim=-1).mean(dim=(0, 2)) / len(batches)
print("layer  " + "  ".join(f"head {h}: prev / entropy" for h in range(H)))
for l in range(L):
    print(f"{l:5d}  "
          + "  ".join(f"     {prev[l, h]:.3f} / {entropy[l, h]:.3f}  " for h in range(H)))
best = divmod(int(prev.argmax()), H)
print(f"strongest previous-token head: layer {best[0]} head {best[1]} "
      f"({prev.max():.3f} of its weight)")
share = float(prev.max())
print(f"so even the strongest one puts {'most' if share > 0.5 else 'less than half'} of its "
      f"weight on the previous character\nand {1 - share:.3f} elsewhere: "
      f"{'a' if share > 0.9 else 'no'} pure previous-token head here")

# %% [markdown]
# **What each head writes.** A head's write into the stream is `z_h W_O[:, h]ᵀ`; the heads of a layer sum to its
# attention output. The heatmap is the mean norm of each head's write.

# %%
from vrs_edu.viz.routing import plot_head_writes

plot_head_writes(write_norm.numpy())
plt.show()
lw, hw = divmod(int(write_norm.argmax()), H)
print(f"largest write: layer {lw} head {hw}, mean norm {write_norm.max():.3f}; "
      f"smallest: {write_norm.min():.3f}")

# %% [markdown]
# ### Exercise 1 — the causal pattern
#
# *Difficulty 🔴🔴⚪⚪⚪ · about 10 min.* Write it in the stub below; the check says what is missing.
# The worked solution sits in the collapsed cell after it.
#
# Write `attention_pattern(q, k)` for `q, k` of shape `(B, H, T, Dh)`: the scores `q kᵀ / sqrt(Dh)`, future keys
# (`j > i`) set to `-inf`, softmax over the keys. Return `(B, H, T, T)`; every row sums to 1. The checker names the
# usual mistakes (mask direction, missing scale, softmax axis). Then we feed it the model's own `q` and `k`.


# %%
import math


def attention_pattern(q, k):
    """q, k (B, H, T, Dh) -> the causal pattern (B, H, T, T); every row sums to 1."""
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch02 import check_attention_pattern

check_attention_pattern(attention_pattern)

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def attention_pattern(q, k):
    T, Dh = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(Dh)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    return scores.masked_fill(future, float("-inf")).softmax(dim=-1)


check_attention_pattern(attention_pattern)
mine = attention_pattern(trace["blocks.3.attn.q"], trace["blocks.3.attn.k"])
diff = (mine - trace["blocks.3.attn.pattern"]).abs().max()
print(f"layer 3, your pattern vs the model's: largest difference {diff:.1e}")

# %% [markdown]
# ### Exercise 2 — the value-weighted sum
#
# *Difficulty 🔴⚪⚪⚪⚪ · about 5 min.* Write it in the stub below; the check says what is missing.
# The worked solution sits in the collapsed cell after it.
#
# Write `attend(pattern, v)`: `pattern (B, H, T, T)`, `v (B, H, T, Dh)`; return `z (B, H, T, Dh)` with
# `z_i = Σ_j pattern[i, j] · v_j`.


# %%
def attend(pattern, v):
    """pattern (B, H, T, T), v (B, H, T, Dh) -> z (B, H, T, Dh), z_i = sum_j pattern[i, j]
    v_j.
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch02 import check_attend

check_attend(attend)

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def attend(pattern, v):
    return pattern @ v


check_attend(attend)
mine = attend(trace["blocks.3.attn.pattern"], trace["blocks.3.attn.v_mix"])
diff = (mine - trace["blocks.3.attn.z"]).abs().max()
print(f"layer 3, your z vs the model's: largest difference {diff:.1e}")

# %% [markdown]
# ## (a) Pattern swap and (b) value swap
#
# Take every sequence of a batch together with another one (the batch rolled by one). At one layer at a time:
#
# * **pattern swap** — keep this sequence's values, attend with the pattern the layer computed on the *other*
#   sequence;
# * **value swap** — keep this sequence's pattern, move the values the layer computed on the *other* sequence.
#
# Both are paired: the same sequences with and without the swap. The table gives the loss change in nats,
# `± one standard error` over the 128 sequences. The experiments use 4 validation batches (128 sequences), so
# their "clean loss" differs from the checkpoint's validation loss printed above, which averages the whole
# validation split: these batches happen to be harder than the average.

# %%
from vrs_edu.lab.routing import effect_table, swap_experiment
from vrs_edu.viz.routing import plot_layer_effects

swaps = swap_experiment(model, batches)
print(f"clean loss {swaps['clean']:.3f} nats")
print(effect_table(swaps))
plot_layer_effects(swaps, ["pattern swap", "value swap"],
                   "swap one half of one layer with another input's")
plt.show()
ratio = [v.mean / p.mean for p, v in zip(swaps["pattern swap"], swaps["value swap"])]
print("value-swap / pattern-swap loss change per layer:", ", ".join(f"{r:.2f}" for r in ratio))
print(f"the value swap costs more than the pattern swap at {sum(r > 1 for r in ratio)} "
      f"of {L} layers")

# %% [markdown]
# Compare the two columns layer by layer (the ratios and the count are printed under the figure). Where the value
# swap hurts more, the layer's *content* is specific to this text while its *routing* partly transfers from another
# text: much of the routing of a character model is positional (previous characters, the start of a word), so
# another text's pattern is often roughly right. The values carry what the text says. (The two swaps are not
# interventions of equal size, so the ratio compares these two swaps on this model; it is not a constant of nature.)
#
# ## (c) Frozen routing: does a layer need its freshly computed pattern?
#
# Replace one layer's pattern (all heads) at a time, keeping its values, by:
#
# * **uniform** — every position attends equally to all earlier positions (routing by nothing);
# * **previous layer** — the pattern layer `l-1` computed on the same input (head `h` by head `h`);
# * **batch mean** — the layer's own pattern averaged over the 32 sequences of the batch: it keeps what depends on
#   position and forgets what depends on content.
#
# This per-layer table is the chapter's first answer to the seed question.

# %%
from vrs_edu.lab.routing import frozen_routing

frozen = frozen_routing(model, batches)
print(f"clean loss {frozen['clean']:.3f} nats; "
      "loss change when layer l's routing is frozen (nats ± s.e.):")
print(effect_table(frozen))
plot_layer_effects(frozen, ["uniform", "previous layer", "batch mean"],
                   "freeze one layer's routing")
plt.show()
deep = range(L // 2, L)
deep_mean = {}
for mode in ("uniform", "previous layer", "batch mean"):
    vals = [frozen[mode][l].mean for l in deep]
    deep_mean[mode] = sum(vals) / len(vals)
    print(f"{mode:15s}: layers {deep.start}-{deep.stop - 1} mean Δ {deep_mean[mode]:+.3f} nats "
          f"({100 * deep_mean[mode] / frozen['clean']:.1f} % of the clean loss)")
u, pl = frozen["uniform"], frozen["previous layer"]
print(f"uniform routing: layer 0 Δ {u[0].mean:+.3f}, deepest layer Δ {u[-1].mean:+.3f} nats")
print(f"previous layer costs more than uniform at "
      f"{sum(p.mean > q.mean for p, q in zip(pl[1:], u[1:]))} of {L - 1} layers")

# %% [markdown]
# How to read the table:
#
# * Every layer pays when its routing is frozen: none of them is routing-free. Layer 0 pays the most by far; the
#   deep layers pay a fraction of it (printed as a share of the clean loss above).
# * **Batch mean** keeps what the pattern does by position alone. Its Δ is the price of forgetting the content of
#   this particular input; **uniform** minus **batch mean** is what positional routing alone was worth.
# * **Previous layer** is the costliest substitute in the layers counted above: a pattern computed for another layer is not
#   a free replacement for a layer's own, at least in this small model.
#
# So, the first answer to the seed question at our scale: deep layers *do* depend on their freshly computed
# pattern, but less than the first layer, and partly only through its position-dependent part. Chapter 03 asks
# whether giving deep layers the first layer's values changes this; chapter 07 repeats the experiment on a
# pretrained model.
#
# ## (d) The circuits of one head, read off the weights
#
# For a head `h` of layer 0 — whose input is exactly `x0`, the normalised token embedding — two token-by-token
# matrices follow from the weights alone (Elhage et al., 2021):
#
# * **QK circuit** `x0 W_Qᵀ (x0 W_Kᵀ)ᵀ / sqrt(Dh)`: how much a query token wants to attend to a key token (at equal
#   positions; RoPE adds the dependence on distance);
# * **OV circuit** `x0 W_Vᵀ W_Oᵀ W_Uᵀ`: if the head attends to a token, which output logits it raises.
#
# A *copying* head's OV circuit has its largest entry on the diagonal (attend to "e", predict "e"); the copying
# score is the fraction of tokens for which it does (chance: 1/V). The heatmaps show the 20 most frequent
# characters for the layer-0 head with the strongest previous-token pattern.

# %%
from vrs_edu.lab.routing import copying_score, ov_circuit, qk_circuit
from vrs_edu.viz.routing import plot_circuits

V = model.cfg.vocab_size
scores = torch.tensor([[copying_score(ov_circuit(model, l, h)) for h in range(H)]
                       for l in range(L)])
print(f"copying score (chance {1 / V:.3f}); exact for layer 0, "
      "token-identity part only for deeper layers:")
for l in range(L):
    print(f"  layer {l}: " + "  ".join(f"head {h} {scores[l, h]:.3f}" for h in range(H)))
h0 = int(prev[0].argmax())
frequent = torch.bincount(data.train, minlength=V).topk(20).indices
qk, ov = qk_circuit(model, 0, h0), ov_circuit(model, 0, h0)
plot_circuits(qk[frequent][:, frequent].numpy(), ov[frequent][:, frequent].numpy(),
              [tok.token(i) for i in frequent], f"layer 0, head {h0}")
plt.show()
print(f"layer 0 head {h0}: copying score {scores[0, h0]:.3f}, "
      f"previous-token weight {prev[0, h0]:.3f}")
for i in frequent[:5].tolist():
    keys = qk[i, frequent].topk(2).indices
    outs = ov[i].topk(3).indices
    print(f"  query {tok.token(i)!r} attends most to {[tok.token(frequent[j]) for j in keys]}; "
          f"attending to {tok.token(i)!r} raises {[tok.token(j) for j in outs]}")

# %% [markdown]
# Layer 0's copying scores sit at chance (1/V, printed above) and no head anywhere scores far above it: no head
# of this character model copies the character it reads.
# That is no surprise — repeating the character you just saw is rarely the right next character. Nor do the OV rows
# tell a readable story through the unembedding: their top entries (printed) are often rare characters. A layer-0
# head writes mostly for *later layers* to read, and the unembedding's direct reading of its write is only part of
# its effect (chapter 01: direct vs total effect). The QK rows are easier to read: which characters a query prefers
# to look back at. With word tokens (the later chapters), a token carries far more identity and copying it is
# useful more often.
# %% [markdown]
# ## Widget — blend the values toward V₁, change the temperature
#
# For the last layer: the first slider mixes the values it moves between its own `V` (0) and the first layer's
# values `V₁` (1) — a fixed-weight preview of chapter 03's value residual; the second divides the scores by a
# temperature (above 1 flattens the pattern, below 1 sharpens it); the third picks the head shown. The heatmap is
# that head's pattern on the first 16 characters of the sentence. Blending values does not move the pattern of
# the same layer (Q·K never reads V), so the first slider shows on the right: the loss over the sentence along
# w(V_1) at the current temperature, with the current setting in red and the default in grey; the titles give the
# change from the default. Neither knob retrains anything. The static figure below the widget is the default
# setting.

# %% tags=["nbval-ignore-output"]
from vrs_edu.viz.routing import blend_widget

blend_widget(model, x, y, layer=L - 1, tokens=tokens)

# %%
from vrs_edu.lab.routing import blend_and_temperature
from vrs_edu.viz.routing import blend_figure

fig, default = blend_figure(model, x, y, layer=L - 1, tokens=tokens)
plt.show()
print(f"default: loss {default['loss']:.3f} nats, pattern entropy {default['entropy']:.3f} nats")
xb, yb = batches[0]
print("last layer, one validation batch: "
      "loss (nats) by V_1 weight (rows) and temperature (columns)")
temps = (0.5, 1.0, 2.0)
print("w(V_1)  " + "  ".join(f"T={t:<4}" for t in temps))
sweep = {}
for w in (0.0, 0.5, 1.0):
    sweep[w] = [blend_and_temperature(model, xb, yb, L - 1, w, t)["loss"] for t in temps]
    print(f"{w:6.1f}  " + "  ".join(f"{v:.3f} " for v in sweep[w]))

# %% [markdown]
# ### Exercises to think about
#
# 1. In the swap table, at which layer is the value swap most harmful? Relate it to the head-write norms.
# 2. Why is the "previous layer" pattern a better or worse substitute than the uniform one in some layers? (Hint:
#    look at the per-head previous-token weights of consecutive layers.)
# 3. Moving the last layer's values all the way to `V₁` was never trained. Chapter 03 trains models that do it from
#    the start — predict whether their last layer will depend more or less on its fresh pattern.
#
# ## What we measured
#
# All numbers are recomputed from this run's variables.

# %%
print(f"1. Strongest previous-token head: layer {best[0]} head {best[1]}, "
      f"{prev.max():.3f} of its weight.")
print("2. Swaps, Δ loss per layer (nats):")
for name in ("pattern swap", "value swap"):
    print(f"   {name:15s}" + ", ".join(f"{e.mean:+.3f}" for e in swaps[name]))
print(f"3. Frozen routing, Δ loss per layer (nats); uniform in layers {deep.start}-"
      f"{deep.stop - 1} costs {100 * deep_mean['uniform'] / frozen['clean']:.1f} % of the clean "
      f"loss {frozen['clean']:.3f}:")
for mode in ("uniform", "previous layer", "batch mean"):
    print(f"   {mode:15s}"
          + ", ".join("   —  " if e is None else f"{e.mean:+.3f}" for e in frozen[mode]))
print(f"4. Layer-0 copying scores: " + ", ".join(f"{s:.3f}" for s in scores[0])
      + f" (chance {1 / V:.3f}).")
print(f"5. Last layer, V_1 weight 0 -> 1 at temperature 1: loss {sweep[0.0][1]:.3f} -> "
      f"{sweep[1.0][1]:.3f} nats.")
