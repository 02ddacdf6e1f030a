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
# **Question.** Is the residual stream mere accumulation? (The first half of the article's third question: *is the
# residual stream mere accumulation, or can it be designed as a selective read over depth?* Chapter 05 takes the
# second half.)
#
# **Goals.** See the two ordered axes of a decoder, the sequence and depth, on a real tensor; check that the final
# state is exactly the embedding plus every block's output; split a prediction into per-block contributions
# (direct logit attribution); measure what removing one block's write costs, directly and in total; read each layer
# with the logit lens.
#
# **Prerequisites.** Chapter 00 (what a residual stream is, how exercises work). PyTorch tensors, `softmax` and
# cross-entropy. No interpretability background needed.
#
# **Study time.** About 45 minutes. **Expected run time.** About 30 seconds at one thread on a laptop CPU (budget in
# `book.toml`: 60 s), half of it a short live training run.

# %%
from vrs_edu.course.setup import setup_notebook

setup_notebook(seed=0)

# %% [markdown]
# ## The mechanism
#
# Along the **sequence**, attention moves information between positions with weights that depend on the content
# (chapter 02). Along **depth**, the [residual stream](#glossary:residual-stream) adds: each block reads the state
# and writes $y_l = \mathrm{attn}_l + \mathrm{mlp}_l$ back into it, with a fixed weight 1 for every term,
#
# $$h_{l+1} = h_l + y_l, \qquad h_L = \text{embedding} + y_0 + y_1 + \dots + y_{L-1}.$$
#
# Nothing along depth is selected or forgotten, at least not by the connection itself. Whether the *computation*
# is a mere pile of terms is the chapter's question.

# %%
import matplotlib.pyplot as plt

from vrs_edu.viz.schematics import residual_stream

residual_stream()
plt.show()

# %% [markdown]
# ## A trained model to take apart
#
# A model must have *learned* something for its writes to be worth attributing. The chapter loads a 6-layer,
# 64-wide TinyGPT trained on the characters of the Python reference documentation by one reproduce command, whose
# wall time (far longer than a chapter may run) comes from the saved result file. The
# [unigram loss](#glossary:unigram-loss) is what a model that ignores all context reaches.

# %%
from vrs_edu.lab.experiments import provenance
from vrs_edu.lab.char_model import load_char_model

model, tok, run = load_char_model()
from vrs_edu.chapters.ch01_two_axes import prose

print(provenance(run))
steps = run["configs"]["train"]["steps"]
print(prose.checkpoint_line(run["n_params"], steps, run["final_val_loss"], run["unigram_val_loss"]))

# %% [markdown]
# ## The effect: later blocks build on earlier writes
#
# Remove one block's write $y_l$ in two ways, and measure the loss on 4 validation batches (4 × 32 sequences of 64
# characters):
#
# * **direct**: subtract $y_l$ from the final state only, as if no later block had read it;
# * **total**: zero $y_l$ inside the forward pass, so that every later block reads the changed stream.
#
# If the stream were a pile of independent contributions, the two would be equal. For the last block they are equal
# by construction: nothing after it reads it.

# %%
from vrs_edu.lab.data import make_token_data
from vrs_edu.chapters.ch01_two_axes.readout import direct_and_total_effects
from vrs_edu.viz.prose import say
from vrs_edu.chapters.ch01_two_axes.figures import plot_effects

data = make_token_data(tokenizer=tok, block_size=model.cfg.block_size)
batches = list(data.eval_batches("val", batch_size=32, max_batches=4))
effects = direct_and_total_effects(model, batches)
L = model.cfg.n_layers
plot_effects(effects)
plt.show()
larger = sum(t > d + 1e-3 for d, t in zip(effects["direct"][:-1], effects["total"][:-1]))
d0, t0 = effects["direct"][0], effects["total"][0]
say(prose.effects_sentence(d0, t0, larger, L - 1))

# %% [markdown]
# Removing an early block costs more than its own contribution to the sum, because the attention heads and MLPs of
# later layers build on what it wrote. The connection along depth is a sum; the computation is not a pile of
# independent terms. The rest of the chapter checks the sum and takes it apart.
#
# ## The two axes on one sentence
#
# A sentence from the **validation** split (text the model never trained on), traced: the depth stack has shape
# `(L+1, T, D)` for one sequence, `L+1` depths (the embedding and the state after each block), `T` positions, `D`
# features. The upper heatmap is the norm of every state; the lower one its cosine to [x0](#glossary:x0), the
# token's own normalised embedding: how much the state still points along "which character am I".

# %%
import torch
import torch.nn.functional as F

from vrs_edu.chapters.ch01_two_axes.figures import plot_two_axes

sentence = "Keys and values are iterated over in insertion order."
ids = torch.tensor([tok.encode(sentence)])
x, y = ids[:, :-1], ids[:, 1:]
trace = model(x, trace=True).trace
stack = trace.stack("resid")[:, 0]                      # (L+1, T, D) for the one sequence
norms = stack.norm(dim=-1)                                        # (L+1, T)
cosines = F.cosine_similarity(stack, trace["x0"][0][None], dim=-1)  # (L+1, T)
plot_two_axes(norms.numpy(), cosines.numpy(), [tok.token(i) for i in x[0]])
plt.show()
in_val = tok.decode(data.val).find(sentence) >= 0
say(prose.two_axes_sentence(norms[0].mean(), norms[-1].mean(), cosines[0].mean(),
                            cosines[-1].mean(), len(sentence), in_val))

# %% [markdown]
# ## The stream is a running sum
#
# Each block's write is recorded at two hook points, `blocks.{l}.attn.out` and `blocks.{l}.mlp.out`. If the stream
# is a plain running sum, the final state is the embedding plus all of them, exactly up to float rounding.

# %%
from vrs_edu.chapters.ch01_two_axes.readout import block_outputs

ys = block_outputs(trace)                                        # (L, B, T, D)
rebuilt = trace["embed"] + ys.sum(0)
diff = (rebuilt - trace["resid_final"]).abs().max().item()
# float32 rounding: the last digits of this error change with the CPU's kernels; the bound does not.
BOUND = 1e-5
print(prose.rebuilt_line(diff, BOUND, trace["resid_final"].abs().max()))

# %% [markdown]
# ### Exercise 1: build the depth stack
#
# **Difficulty 2/5 · importance 3/5 · about 10 minutes.**
#
# Write `residual_stack(embedding, outputs)`: given the embedding `(B, T, D)` and what each block wrote
# `(L, B, T, D)`, return the depth stack `(L+1, B, T, D)` with `stack[0] = embedding` and
# `stack[l] = embedding + outputs[0] + … + outputs[l-1]`. The checker compares it with the package on random
# inputs; then we compare it with the model's own trace.
#
# <details><summary>Hint</summary>
#
# The stack is a running sum along depth of one sequence of terms: which tensor comes first in that sequence? torch
# has a function for a running sum along an axis.
#
# </details>


# %%
def residual_stack(embedding, outputs):
    """embedding (B, T, D), outputs (L, B, T, D) -> the depth stack (L+1, B, T, D)."""
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch01 import check_residual_stack

check_residual_stack(residual_stack)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def residual_stack(embedding, outputs):
    return torch.cat([embedding[None], outputs]).cumsum(0)


check_residual_stack(residual_stack)
None  # the check prints what it found; this line keeps the cell from also showing its True/False
mine = residual_stack(trace["embed"], ys)
print(prose.stack_line((mine - trace.stack("resid")).abs().max()))

# %% [markdown]
# **The package's own code.** The same running sum is the loop of `TinyGPT.forward` (`vrs_edu/nn/model.py`). With
# the plain residual (every model of this chapter), the depth read `read.resid` is the last state $h_l$ (the code's
# comment calls it $X_l$), and the block's write `y = a + m` (attention plus MLP) is added to it:
# `states.append(x + y)` is $h_{l+1} = h_l + y_l$. The block runs in three steps: `project` (Q, K and V from $h_l$),
# `attend` (across tokens: `a`) and `feed_forward` (the MLP: `m`). The rest (`x0`, `v_first`, the two
# `if self.depth...` reads) serves the variants of chapters 03–05; here it changes nothing.

# %%
from vrs_edu.nn import TinyGPT
from vrs_edu.viz.prose import say, source

say(source(TinyGPT.forward, start="for l, block in enumerate(self.blocks):",
           stop="states.append(x + y)"))

# %% [markdown]
# ## Direct logit attribution: who wrote the prediction?
#
# The logits are $W_U \cdot \mathrm{RMSNorm}(h_L)$. [RMSNorm](#glossary:rmsnorm) divides a vector by its root mean
# square, $\mathrm{rms}(h) = \sqrt{\mathrm{mean}(h^2) + \epsilon}$: one number for the whole vector. Holding that
# number fixed, the logit of a token $t$ splits into one term per component $c_n$ of the sum:
#
# $$\text{logit}_t = \sum_{n} \frac{w_{U,t} \cdot c_n}{\text{rms}(h_L)}, \qquad c_n \in \{\text{embedding},
# \text{attn}_0, \text{mlp}_0, \dots\}.$$
#
# This is [direct logit attribution](#glossary:direct-logit-attribution) (DLA): it credits what each component wrote
# straight into the final sum, not what it enabled later blocks to write (the *total* effect above). We split the
# logit of the true next character in the middle of a word.

# %%
from vrs_edu.chapters.ch01_two_axes.readout import direct_logit_attribution
from vrs_edu.chapters.ch01_two_axes.figures import plot_attribution

# the context ends in "...in insert", the next character is "i"
pos = sentence.index("insertion") + 5
target = int(y[0, pos])
att = direct_logit_attribution(model, x, position=pos, token=target)
context = sentence[max(0, pos - 15): pos + 1]
prob = model(x).logits[0, pos].softmax(-1)[target].item()
top = sorted(zip(att.values, att.labels), reverse=True)[:3]
plot_attribution(att, tok.token(target), context)
plt.show()
say(prose.attribution_sentence(context, tok.token(target), att.logit, prob, len(att.values),
                               sum(att.values), top))

# %% [markdown]
# ### Exercise 2: split a logit into contributions
#
# **Difficulty 3/5 · importance 4/5 · about 15 minutes.** Direct logit attribution returns in chapters 02 and 06.
#
# Write `logit_contributions(components, unembed)`: `components` is `(N, D)`, terms whose sum is the final state
# of one token; `unembed` is `(D,)`, the unembedding row of one output token. Return the `(N,)` contributions
# $c_n \cdot w_U / \mathrm{rms}(\sum_n c_n)$ with $\mathrm{rms}(h) = \sqrt{\mathrm{mean}(h^2) + 10^{-6}}$. They must
# add up to the logit.
#
# <details><summary>Hint</summary>
#
# The RMS is taken once, of the *sum* of the components, not of each one: that is what keeps the split exact.
# A matrix–vector product gives every component's dot product with the unembedding row at once.
#
# </details>


# %%
def logit_contributions(components, unembed):
    """components (N, D), unembed (D,) -> (N,): each component's share of the logit; the
    shares sum to it.
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch01 import check_logit_contributions

check_logit_contributions(logit_contributions)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
from vrs_edu.chapters.ch01_two_axes.readout import stream_components


def logit_contributions(components, unembed):
    final = components.sum(0)
    rms = (final.pow(2).mean() + 1e-6).sqrt()
    return components @ unembed / rms


check_logit_contributions(logit_contributions)
None  # the check prints what it found; this line keeps the cell from also showing its True/False
labels, comps = stream_components(trace)
mine = logit_contributions(comps[:, 0, pos], model.lm_head.weight[target].detach())
print(prose.contributions_line(mine.sum(), att.logit))

# %% [markdown]
# ### Exercise 3: the direct and the total effect of one block
#
# **Difficulty 3/5 · importance 5/5 · about 20 minutes.** This is the chapter's idea in code: the figure at the
# top of the chapter came from it.
#
# Write `block_effect(model, x, y, layer)`: return `(direct, total)`, two floats in [nats](#glossary:nats), the
# change of the loss `model(x, y).loss` when block `layer`'s write $y_l$ is removed
#
# * **directly**: from the final state only, $h_L - y_l$, read out as the model reads its final state (its final
#   RMSNorm, then its unembedding), with no other block noticing;
# * **in total**: inside the forward pass, so that every later block reads the changed stream.
#
# Each is the loss without the write minus the clean loss (positive when the block helped). The checker runs your
# function on small random models whose blocks are made to write strongly, and names the mistakes it recognises;
# in a random model removing a block can also lower the loss, so some of its expected effects are negative.
#
# <details><summary>Hint</summary>
#
# `model(x, y, trace=True).trace` holds the final state (`"resid_final"`) and each block's two writes
# (`"blocks.{l}.attn.out"`, `"blocks.{l}.mlp.out"`); the model's read-out is
# `unembed(model, h)` from `vrs_edu.chapters.ch01_two_axes.readout`, and `model(x, y).loss` is the mean
# cross-entropy over every position, `F.cross_entropy(logits.flatten(0, 1), y.flatten())`.
# For the total, the same names are hook points: `model(x, y, hooks={name: function})` replaces what passes a
# point by what the function returns.
#
# </details>


# %%
def block_effect(model, x, y, layer):
    """model, x (B, T), y (B, T), layer -> (direct, total): the loss changes, in nats, when
    block `layer`'s write is removed from the final state only, and inside the forward pass.
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch01 import check_block_effect

check_block_effect(block_effect)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
import torch.nn.functional as F

from vrs_edu.chapters.ch01_two_axes.readout import unembed


def block_effect(model, x, y, layer):
    out = model(x, y, trace=True)
    write = out.trace[f"blocks.{layer}.attn.out"] + out.trace[f"blocks.{layer}.mlp.out"]
    logits = unembed(model, out.trace["resid_final"] - write)           # the final state without it
    direct = F.cross_entropy(logits.flatten(0, 1), y.flatten()).item() - out.loss.item()
    zero = {f"blocks.{layer}.{part}": torch.zeros_like for part in ("attn.out", "mlp.out")}
    total = model(x, y, hooks=zero).loss.item() - out.loss.item()     # later blocks see it gone
    return direct, total


check_block_effect(block_effect)
None  # the check prints what it found; this line keeps the cell from also showing its True/False
xb, yb = batches[0]
mine = block_effect(model, xb, yb, 0)
print(prose.block_effect_line(*mine))

# %% [markdown]
# ## Along depth: norm, token identity, logit lens
#
# Averaged over the same validation batches, for every depth $l = 0..L$: the mean **norm** of the state; its mean
# **cosine to x0** (1 at depth 0 by construction); and the [logit lens](#glossary:logit-lens): read the state $h_l$
# with the final RMSNorm and unembedding, as if the model stopped there, and measure the loss.

# %%
from vrs_edu.lab.metrics import stream_norms
from vrs_edu.chapters.ch01_two_axes.readout import cosine_to_x0, logit_lens
from vrs_edu.chapters.ch01_two_axes.figures import plot_depth_profile

norm_by_depth = [sum(v) / len(batches)
                 for v in zip(*(stream_norms(model, xb) for xb, _ in batches))]
cos_by_depth = cosine_to_x0(model, batches)
lens = logit_lens(model, batches)
plot_depth_profile(norm_by_depth, cos_by_depth, lens["loss"])
plt.show()
say(*prose.depth_table(norm_by_depth, cos_by_depth, lens, run["unigram_val_loss"]))
n_seq = sum(xb.size(0) for xb, _ in batches)
say(prose.last_depth_sentence(lens["loss"][-1], len(batches), n_seq, run["final_val_loss"]))

# %% [markdown]
# The norm grows, the cosine to x0 falls (the token's identity becomes a smaller share of a growing sum, though it
# never vanishes), and the logit lens improves layer by layer toward the model's own loss on these batches (its
# last row). Read through the unembedding, depth 0 does worse than the unigram baseline: this model keeps no
# ready-made "which character follows" guess in its embedding; the blocks make the prediction.
#
# ### A short live run: does depth usage change with training?
#
# The same preset trains for 150 steps, live, from the same seed; its logit lens is read on the same batches.

# %%
from dataclasses import replace

from vrs_edu.lab.presets import make_run
from vrs_edu.lab.train import train
from vrs_edu.nn import TinyGPT

live_steps = 150
_, mcfg, tcfg = make_run("char-6x64", steps=live_steps, eval_every=live_steps, eval_batches=4)
live = TinyGPT(replace(mcfg, vocab_size=data.vocab_size))
hist = train(live, data, tcfg, progress=False)
live_lens = logit_lens(live, batches)
say(*prose.live_lens_table(live_lens["loss"], lens["loss"], hist.val_loss[-1], live_steps))

# %% [markdown]
# The long-trained model's early depths read *worse* through the unembedding than the 150-step model's, while its
# last depths read far better: with training, more of the prediction is assembled by the blocks, and the
# intermediate states become working memory for later blocks rather than early guesses. The logit lens is a
# reading, not the model's own output: it says what a state would predict if the model stopped there.
#
# ## Widget: turn each block up or down
#
# Each slider multiplies what one block writes (0 = silenced, 1 = as trained, 2 = doubled), in steps of 0.25. The
# model runs forward with the scaled writes, so later blocks see the change. The bars are the top next-character
# probabilities after the context `…in insert` (the true next character in green), the black ticks the same
# characters' probabilities in the model as trained; the title holds the loss over the whole sentence and its
# change from the default. The static figure below the widget is the default setting (all ones).

# %% tags=["nbval-ignore-output"]
from vrs_edu.chapters.ch01_two_axes.figures import block_scale_widget

block_scale_widget(model, x, y, position=pos, decode=tok.token)

# %%
from vrs_edu.chapters.ch01_two_axes.readout import scaled_blocks_prediction
from vrs_edu.chapters.ch01_two_axes.figures import block_scale_figure

fig, default = block_scale_figure(model, x, y, [1.0] * L, position=pos, decode=tok.token)
plt.show()
silenced = [scaled_blocks_prediction(model, x, y, [0.0 if j == l else 1.0 for j in range(L)],
                                     position=pos) for l in range(L)]
say(*prose.silenced_table(default["loss"], tok.token(target), default["target_prob"], silenced))

# %% [markdown]
# ### Questions
#
# 1. Silence block 0 with its slider: the loss jumps far more than block 0's direct logit attribution suggests.
#    Which measurement of this chapter predicts the jump?
#
# <details><summary>Answer</summary>
#
# The *total* effect of removing block 0 (the first figure), not its direct effect or its logit attribution: later
# blocks read what block 0 wrote, and silencing it changes what they compute. The widget measures a total effect.
#
# </details>
#
# 2. Double the last block. Does the prediction become more confident, or just different?
#
# <details><summary>Answer</summary>
#
# Mostly different: the final RMSNorm divides by the norm of the whole sum, so doubling one term changes the
# *direction* of the final state (more of the last block's write, less of the rest) rather than simply scaling the
# logits up.
#
# </details>
#
# 3. The cosine to x0 falls along depth but stays above 0. Is the token's identity still available to deep layers?
#
# <details><summary>Answer</summary>
#
# It is still in the sum, as a shrinking share of it; a deep layer that needs it must dig it out of everything else
# written there. Chapter 04 asks whether deep layers would rather re-read x0 through a path of their own.
#
# </details>
#
# ## The answer

# %%
say(prose.answer(L, diff, BOUND, t0, d0, lens["loss"][0], lens["loss"][-1]))

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## How sure are we?

# %% [markdown]
# The running sum is exact up to float rounding (checked above against a bound of 1e-5). The effects are means over
# 128 validation sequences of **one** trained model: how much do they move between the four batches of 32
# sequences (the first four of the validation split, not random draws)? Each batch measured on its own:

# %%
per_batch = [direct_and_total_effects(model, [b]) for b in batches]
ratios = [e["total"][0] / e["direct"][0] for e in per_batch]
counts = [sum(t > d + 1e-3 for d, t in zip(e["direct"][:-1], e["total"][:-1])) for e in per_batch]
say(*prose.per_batch_table(per_batch, ratios, counts, L - 1))

# %% [markdown]
# So the gap between direct and total effects is no accident of one batch. What the chapter cannot tell is how it
# varies between models: it takes apart one model, trained once with one seed. Chapter 03 trains several seeds of
# each model it compares, and says how their results are judged.
