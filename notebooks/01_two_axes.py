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
# # 01 · Two axes: the residual stream along depth
#
# **Goals.** See the two ordered axes of a decoder — the sequence and depth — on a real tensor; verify that the
# final state is exactly the embedding plus every block's output; split a prediction into per-block contributions
# (direct logit attribution); and measure along depth how the stream grows, how much token identity it keeps, and
# what each layer would predict (the logit lens).
#
# **Question.** Is the residual stream mere accumulation?
#
# **Prerequisites.** Chapter 00 (what a residual stream is, how exercises work). PyTorch tensors and
# `softmax`/cross-entropy. No interpretability background needed.
#
# **Expected run time.** About 40 seconds at one thread on an idle 2-core laptop CPU, half of it a short live
# training run (budget in `book.toml`: 60 s).

# %%
from vrs_edu.course.setup import setup_notebook

setup_notebook(seed=0)

# %% [markdown]
# ## A trained model to take apart
#
# We need a model that has *learned* something, or there is nothing to attribute. The chapter loads a 6-layer,
# 64-wide TinyGPT trained on the characters of the Python reference documentation, made by one reproduce command
# (its wall time, printed below, is far longer than a chapter should run). The command, its wall time and its
# validation loss come from the saved result file. The unigram loss is what a model that ignores all context would reach.

# %%
from vrs_edu.lab.experiments import provenance
from vrs_edu.lab.recipes.char_model import load_char_model

model, tok, run = load_char_model()
print(provenance(run))
print(f"{run['n_params']:,} parameters, {run['configs']['train']['steps']} steps; validation loss "
      f"{run['final_val_loss']:.3f} nats vs unigram {run['unigram_val_loss']:.3f} nats")

# %% [markdown]
# ## The two axes on one sentence
#
# We take a sentence from the **validation** split (text the model never trained on) and record every state with
# `trace=True`. The depth stack has shape `(L+1, T, D)` for one sequence: `L+1` depths (the embedding and the
# state after each of the `L` blocks), `T` positions, `D` features.
#
# * Along the **sequence** axis, attention moves information between positions, with weights that depend on the
#   content (chapter 02).
# * Along the **depth** axis, the residual stream *adds*: `h_{l+1} = h_l + block_l(h_l)`, with a fixed weight 1 for
#   every term. Nothing along depth is selected or forgotten — at least not by the connection itself.
#
# The left heatmap is the norm of every state; the right one is its cosine to `x0` — the token's own normalised
# embedding — i.e. how much the state still points along "which character am I".

# %%
import torch

from vrs_edu.lab.data import make_token_data

data = make_token_data(tokenizer=tok, block_size=model.cfg.block_size)
sentence = "Keys and values are iterated over in insertion order."
ids = torch.tensor([tok.encode(sentence)])
x, y = ids[:, :-1], ids[:, 1:]
in_val = tok.decode(data.val).find(sentence) >= 0
print(f"sentence of {len(sentence)} characters, found in the validation split: {in_val}")

trace = model(x, trace=True).trace
stack = trace.stack("resid")[:, 0]                      # (L+1, T, D) for the one sequence
print("depth stack (L+1, T, D):", tuple(stack.shape))

# %%
import matplotlib.pyplot as plt
import torch.nn.functional as F

from vrs_edu.viz.residual import plot_two_axes

norms = stack.norm(dim=-1)                                        # (L+1, T)
cosines = F.cosine_similarity(stack, trace["x0"][0][None], dim=-1)  # (L+1, T)
plot_two_axes(norms.numpy(), cosines.numpy(), [tok.token(i) for i in x[0]])
plt.show()
print(f"mean norm: depth 0 {norms[0].mean():.3f}, depth {len(norms) - 1} {norms[-1].mean():.3f}; "
      f"mean cos to x0: depth 0 {cosines[0].mean():.3f}, "
      f"depth {len(norms) - 1} {cosines[-1].mean():.3f}")

# %% [markdown]
# ## The stream is a running sum
#
# Each block writes `y_l = attn_out_l + mlp_out_l` (both are hook points, `blocks.{l}.attn.out` and
# `blocks.{l}.mlp.out`). If the residual stream is a plain running sum, then
#
# $$h_L = \text{embedding} + y_0 + y_1 + \dots + y_{L-1}$$
#
# exactly, up to float rounding. Check it on the traced tensors.

# %%
from vrs_edu.lab.residual_stream import block_outputs

ys = block_outputs(trace)                                        # (L, B, T, D)
rebuilt = trace["embed"] + ys.sum(0)
diff = (rebuilt - trace["resid_final"]).abs().max().item()
print(f"largest |h_L - (embedding + sum of block outputs)|: {diff:.1e}  (entries of h_L are up to "
      f"{trace['resid_final'].abs().max():.1f})")

# %% [markdown]
# ### Exercise 1 — build the depth stack
#
# *Difficulty 🔴🔴⚪⚪⚪ · about 10 min.* Write it in the stub below; the check says what is missing.
# The worked solution sits in the collapsed cell after it.
#
# Write `residual_stack(embedding, outputs)`: given the embedding `(B, T, D)` and what each block wrote
# `(L, B, T, D)`, return the depth stack `(L+1, B, T, D)` with `stack[0] = embedding` and
# `stack[l] = embedding + outputs[0] + … + outputs[l-1]`. The checker compares it with the package on random
# inputs and names the likely mistake; then we compare it with the model's own trace.


# %%
def residual_stack(embedding, outputs):
    """embedding (B, T, D), outputs (L, B, T, D) -> the depth stack (L+1, B, T, D)."""
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch01 import check_residual_stack

check_residual_stack(residual_stack)

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def residual_stack(embedding, outputs):
    return torch.cat([embedding[None], outputs]).cumsum(0)


check_residual_stack(residual_stack)
mine = residual_stack(trace["embed"], ys)
print(f"your stack vs the model's trace: largest difference "
      f"{(mine - trace.stack('resid')).abs().max():.1e}")

# %% [markdown]
# ## Direct logit attribution: who wrote the prediction?
#
# The logits are `W_U · RMSNorm(h_L)`. RMSNorm divides the whole vector by one number, `rms(h_L)`. Holding that
# number fixed, the logit of a token `t` splits into one term per component of the sum:
#
# $$\text{logit}_t = \sum_{n} \frac{w_{U,t} \cdot c_n}{\text{rms}(h_L)}, \qquad c_n \in \{\text{embedding},
# \text{attn}_0, \text{mlp}_0, \dots\}.$$
#
# This is *direct* attribution: it credits what each component wrote straight into the final sum, not what it
# enabled later blocks to write. We split the logit of the true next character in the middle of a word.

# %%
from vrs_edu.lab.residual_stream import direct_logit_attribution
from vrs_edu.viz.residual import plot_attribution

# the context ends in "...in insert", the next character is "i"
pos = sentence.index("insertion") + 5
target = int(y[0, pos])
att = direct_logit_attribution(model, x, position=pos, token=target)
context = sentence[max(0, pos - 15): pos + 1]
prob = model(x).logits[0, pos].softmax(-1)[target].item()
print(f"context {context!r} -> next {tok.token(target)!r}: logit {att.logit:.3f}, "
      f"probability {prob:.3f}")
print(f"sum of the contributions {sum(att.values):.3f}")
top = sorted(zip(att.values, att.labels), reverse=True)[:3]
print("largest contributions:", ", ".join(f"{lab} {v:+.3f}" for v, lab in top))
plot_attribution(att, tok.token(target), context)
plt.show()

# %% [markdown]
# ### Exercise 2 — split a logit into contributions
#
# *Difficulty 🔴🔴🔴⚪⚪ · about 15 min.* Write it in the stub below; the check says what is missing.
# The worked solution sits in the collapsed cell after it.
#
# Write `logit_contributions(components, unembed)`: `components` is `(N, D)`, terms whose sum is the final state
# of one token; `unembed` is `(D,)`, the unembedding row of one output token. Return the `(N,)` contributions
# `c_n · w_U / rms(Σ c_n)` with `rms(h) = sqrt(mean(h²) + 1e-6)`. They must add up to the logit.


# %%
def logit_contributions(components, unembed):
    """components (N, D), unembed (D,) -> (N,): each component's share of the logit; the
    shares sum to it.
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch01 import check_logit_contributions

check_logit_contributions(logit_contributions)

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
from vrs_edu.lab.residual_stream import stream_components


def logit_contributions(components, unembed):
    final = components.sum(0)
    rms = (final.pow(2).mean() + 1e-6).sqrt()
    return components @ unembed / rms


check_logit_contributions(logit_contributions)
labels, comps = stream_components(trace)
mine = logit_contributions(comps[:, 0, pos], model.lm_head.weight[target].detach())
print(f"your contributions sum to {mine.sum():.3f}; the model's logit is {att.logit:.3f}")

# %% [markdown]
# ## Is it *mere* accumulation?
#
# The sum is exact — but are the terms independent? Remove one block's write in two ways:
#
# * **direct**: subtract `y_l` from the final state only, as if nobody else had read it;
# * **total**: zero `y_l` inside the forward pass, so every later block reads the changed stream and recomputes.
#
# If the stream were a mere pile of independent contributions, the two loss changes would be equal. For the last
# block they are equal by construction (nothing after it reads it). Measured on the first 4 validation batches
# (4 × 32 sequences of 64 characters; their loss is higher than the average over the whole validation split):

# %%
from vrs_edu.lab.residual_stream import direct_and_total_effects
from vrs_edu.viz.residual import plot_effects

batches = list(data.eval_batches("val", batch_size=32, max_batches=4))
effects = direct_and_total_effects(model, batches)
print(f"clean validation loss on these batches: {effects['clean'][0]:.3f} nats")
print("block   Δ direct   Δ total   (nats)")
for l, (d, t) in enumerate(zip(effects["direct"], effects["total"])):
    print(f"{l:5d}   {d:+8.3f}   {t:+7.3f}")
ratio0 = effects["total"][0] / effects["direct"][0]
larger = sum(t > d + 1e-3 for d, t in zip(effects["direct"][:-1], effects["total"][:-1]))
print(f"total > direct for {larger} of the {len(effects['total']) - 1} blocks before the last; "
      f"block 0: total / direct = {ratio0:.2f}")
plot_effects(effects)
plt.show()

# %% [markdown]
# The two columns differ (counts and the ratio for block 0 are printed above): removing an early block costs more
# in total than its direct contribution suggests, because later blocks *read* what it wrote — attention heads and
# MLPs of later layers build on earlier writes. The connection along depth is a sum, but the computation is not a
# pile of independent terms.
#
# ## Along depth: norm, token identity, logit lens
#
# Averaged over the same validation batches, for every depth `l = 0..L`:
#
# * the mean **norm** of the state;
# * the mean **cosine to x0**, the token's own normalised embedding (1 at depth 0 by construction);
# * the **logit lens**: read the state `h_l` with the final RMSNorm and unembedding, as if the model stopped there,
#   and measure the loss, the accuracy, and how often its top guess already equals the final one.

# %%
from vrs_edu.lab.explore import stream_norms
from vrs_edu.lab.residual_stream import cosine_to_x0, logit_lens
from vrs_edu.viz.residual import plot_depth_profile

norm_by_depth = [sum(v) / len(batches)
                 for v in zip(*(stream_norms(model, xb) for xb, _ in batches))]
cos_by_depth = cosine_to_x0(model, batches)
lens = logit_lens(model, batches)
print("depth   norm   cos(x0)   lens loss   lens acc   agrees with final")
for l in range(len(norm_by_depth)):
    print(f"{l:5d} {norm_by_depth[l]:6.3f} {cos_by_depth[l]:9.3f} {lens['loss'][l]:11.3f} "
          f"{lens['acc'][l]:10.3f} {lens['agree'][l]:19.3f}")
plot_depth_profile(norm_by_depth, cos_by_depth, lens["loss"])
plt.show()
print(f"unigram baseline (no context at all): {run['unigram_val_loss']:.3f} nats")

# %% [markdown]
# Read the table from top to bottom: the norm grows, the cosine to `x0` falls (the token's identity becomes a
# smaller share of a growing sum, though it never vanishes), and the logit lens improves layer by layer toward
# the model's loss. Depth 0 holds only the current character; read through the unembedding it does worse than the
# unigram baseline printed under the figure, so this model does not keep a ready-made "which character follows"
# guess in its embedding — the blocks make the prediction.
#
# ### A short live run: does depth usage change with training?
#
# The checkpoint trained for many steps. Here the same preset trains for 150 steps, live, from the same seed; we
# measure its logit lens on the same batches.

# %%
from dataclasses import replace

from vrs_edu.lab.presets import make_run
from vrs_edu.lab.train import train
from vrs_edu.nn import TinyGPT

_, mcfg, tcfg = make_run("char-6x64", steps=150, eval_every=150, eval_batches=4)
live = TinyGPT(replace(mcfg, vocab_size=data.vocab_size))
hist = train(live, data, tcfg, progress=False)
live_lens = logit_lens(live, batches)
print(f"live model after 150 steps: validation loss {hist.val_loss[-1]:.3f} nats")
print("depth   lens loss (150 steps)   lens loss (checkpoint)")
for l in range(len(norm_by_depth)):
    print(f"{l:5d} {live_lens['loss'][l]:23.3f} {lens['loss'][l]:24.3f}")
gain_live = live_lens["loss"][0] - live_lens["loss"][-1]
gain_ckpt = lens["loss"][0] - lens["loss"][-1]
print(f"loss the blocks remove after depth 0: {gain_live:.3f} nats (150 steps) "
      f"vs {gain_ckpt:.3f} nats (checkpoint)")

# %% [markdown]
# Compare the columns: the long-trained model's early depths read *worse* through the unembedding than the
# 150-step model's (its states there are less like finished predictions), while its last depths read far better.
# With training, more of the prediction is assembled by the blocks, and the intermediate states turn into working
# memory rather than early guesses. The logit lens is a reading, not the model's own read-out: it only tells us
# what a state would predict if the model stopped there.

# %% [markdown]
# ## Widget — turn each block up or down
#
# Each slider multiplies what one block writes (0 = the block is silenced, 1 = the model as trained, 2 = doubled).
# The model runs forward with the scaled writes, so later blocks see the change. The bars are the top next-character
# probabilities after the context `…in insert` (the true next character is green) and the black ticks the same
# characters' probabilities in the model as trained; the title holds the loss over the whole sentence and its change
# from the default, in steps of 0.25. The static figure below the widget is the default setting (all ones).

# %% tags=["nbval-ignore-output"]
from vrs_edu.viz.residual import block_scale_widget

block_scale_widget(model, x, y, position=pos, decode=tok.token)

# %%
from vrs_edu.viz.residual import block_scale_figure

L = model.cfg.n_layers
fig, default = block_scale_figure(model, x, y, [1.0] * L, position=pos, decode=tok.token)
plt.show()
print(f"default (all ones): loss on the sentence {default['loss']:.3f} nats, "
      f"p(next = {tok.token(target)!r}) = {default['target_prob']:.3f}")

from vrs_edu.lab.residual_stream import scaled_blocks_prediction

print("block silenced -> loss on the sentence, p(next)")
for l in range(L):
    r = scaled_blocks_prediction(model, x, y, [0.0 if j == l else 1.0 for j in range(L)],
                                 position=pos)
    print(f"  block {l}: {r['loss']:.3f} nats, {r['target_prob']:.3f}")

# %% [markdown]
# ### Exercises to think about
#
# 1. Silence block 0 with its slider. The loss jumps far more than block 0's direct logit attribution suggests.
#    Which table above predicts the jump, and why?
# 2. Double the last block. Does the prediction get more confident or just different? (Hint: the final RMSNorm
#    divides by the norm of the whole sum.)
# 3. The cosine to `x0` falls along depth but stays above 0. Chapter 04 asks whether deep layers *re-read* `x0`
#    through a separate path instead of digging it out of the sum.
#
# ## What we measured
#
# All numbers below are recomputed from this run's variables.

# %%
print(f"1. The final state equals the embedding plus the {L} block outputs to {diff:.1e} "
      f"(float rounding).")
print(f"2. Direct logit attribution: the logit {att.logit:.3f} of {tok.token(target)!r} "
      f"splits into {len(att.values)} terms; the largest is {top[0][1]} ({top[0][0]:+.3f}).")
print(f"3. Removing block 0: Δ loss {effects['direct'][0]:+.3f} directly vs "
      f"{effects['total'][0]:+.3f} in total; last block: {effects['direct'][-1]:+.3f} vs "
      f"{effects['total'][-1]:+.3f} (equal by construction).")
print(f"4. Along depth: norm {norm_by_depth[0]:.3f} -> {norm_by_depth[-1]:.3f}; cos to x0 1.000 -> "
      f"{cos_by_depth[-1]:.3f}; logit-lens loss {lens['loss'][0]:.3f} -> "
      f"{lens['loss'][-1]:.3f} nats.")
print(f"5. Live 150-step model: logit-lens loss {live_lens['loss'][0]:.3f} -> "
      f"{live_lens['loss'][-1]:.3f} nats.")

# %% [markdown]
# **Answer to the question.** Along depth, the *connection* is mere accumulation: an exact sum with unit weights
# (item 1). The *computation* is not: later blocks read and build on what earlier blocks wrote, so removing an early
# block costs more than its direct share (item 3). Chapter 02 opens the other axis — attention — and separates
# where it looks from what it moves.
