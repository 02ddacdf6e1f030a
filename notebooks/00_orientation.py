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
# # 00 · Orientation
#
# **Goals.** Learn how the course works (chapters in order, widgets, exercises that check themselves), check that
# your environment has everything, and take a first look at a *residual stream* — the running sum every layer of a
# Transformer reads from and writes into.
#
# **Question.** How do I use this course, and what does a residual stream look like?
#
# **Prerequisites.** Python and a first contact with PyTorch tensors. Nothing about Transformers yet.
#
# **Expected run time.** About 40 seconds at one thread on an idle 2-core laptop CPU, most of it a short live
# training run (budget in `book.toml`: 60 s).

# %% [markdown]
# ## How the course works
#
# The course asks one question from two sides: *how does information flow through a Transformer?* Along the
# **sequence**, attention moves information between tokens; along **depth**, the residual stream carries it from
# layer to layer. Attention itself has two halves — **Q·K decides where to look, V is what gets moved** — and the
# course builds up, with measurements, why the V path decides what deep layers carry.
#
# * **Order.** Follow the chapters in order; each one lists its prerequisites. The map is below.
# * **Measurements.** Every number you see was computed by the code above it, on a CPU. Long training runs are
#   made by a command (`vrs-edu reproduce …`) whose saved results the chapter loads; the chapter prints the command
#   and how long it took. Where a published claim does not reproduce at our scale, the chapter says so.
# * **Widgets.** Sliders re-run a small experiment when you move them. A static figure of the default setting sits
#   next to each widget, so the rendered book shows something too.
# * **Exercises.** Each one gives a difficulty (🔴⚪⚪⚪⚪ easy to 🔴🔴🔴🔴🔴 hard) and an expected time. The
#   exercise cell is a stub: the signature, a docstring with the shapes, and `raise NotImplementedError`. Write your
#   code in its place and run the cell; a checker compares your function with the reference on random inputs and,
#   if they disagree, names the likely mistake (on the untouched stub it says "not implemented yet" and gives a
#   hint). "Public checks passed" means your function agrees on these inputs; for chapters 00–05, hidden checks
#   run when the classroom assignment is graded (see the README's teacher's guide). The worked solution follows in
#   a collapsed cell (click its bar to open it); running it replaces your function, so the chapter runs end to end
#   either way.

# %%
from vrs_edu.course.setup import check_environment, setup_notebook

setup_notebook(seed=0)
# raises, listing every missing or too-old package, if something is wrong
versions = check_environment()

# %% tags=["nbval-ignore-output"]
# Versions and threads differ from machine to machine.
import platform

import torch

print(f"Python {platform.python_version()}, {torch.get_num_threads()} torch threads")
for name, version in versions.items():
    print(f"{name:12s} {version}")

# %% [markdown]
# ## The map
#
# The chapter list comes from `book.toml`, the course's single table of contents.

# %%
from vrs_edu.course.book import chapters

for c in chapters():
    print(f"{c.title:50s} budget {c.budget_s:>3d} s\n    {c.question}")

# %% [markdown]
# ## A first look at a residual stream
#
# A decoder-only Transformer turns token ids into vectors (the **embedding**, depth 0), then runs L blocks. Each
# block *reads* the current state, computes something (attention, then an MLP) and *adds* its result back:
#
# $$h^{(l+1)} = h^{(l)} + \mathrm{block}_l\big(h^{(l)}\big).$$
#
# The sequence of states $h^{(0)}, h^{(1)}, \dots, h^{(L)}$ of one token is its **residual stream**: the path
# information takes along depth. We build a small model from the companion package and record every state with
# `trace=True`: `trace.stack("resid")` is the depth stack, shape `(L+1, B, T, D)`.

# %%
from vrs_edu.lab.data import make_token_data
from vrs_edu.nn import TinyGPT, TinyGPTConfig

data = make_token_data(tokenizer="char", block_size=64)
model = TinyGPT(TinyGPTConfig(vocab_size=data.vocab_size, n_layers=6, d_model=64, n_heads=4,
                              block_size=64, seed=0,
                              stream_start="embedding"))  # GPT-2 style: starts at the raw embedding
x, y = next(data.eval_batches("val", batch_size=8, max_batches=1))
stack = model(x, trace=True).trace.stack("resid")
print("depth stack shape (L+1, B, T, D):", tuple(stack.shape))
print("text of the first sequence:", repr(data.tokenizer.decode(x[0])[:60]))

# %% [markdown]
# ### Exercise 0 — the norm of the stream at each depth
#
# *Difficulty 🔴⚪⚪⚪⚪ · about 5 min.* Write it in the stub below; the check says what is missing.
# The worked solution sits in the collapsed cell after it.
#
# Write `mean_stream_norms(stack)`: for a depth stack of shape `(L+1, B, T, D)` return a tensor of shape `(L+1,)`
# holding, at each depth, the L2 norm of every token's D-dimensional state averaged over batch and tokens.


# %%
def mean_stream_norms(stack):
    """stack (L+1, B, T, D) -> (L+1,): at each depth, every token's L2 norm averaged over
    batch and tokens.
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch00 import check_stream_norms

check_stream_norms(mean_stream_norms)

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def mean_stream_norms(stack):
    return stack.norm(dim=-1).mean(dim=(1, 2))


check_stream_norms(mean_stream_norms)

# %% [markdown]
# Now measure the stream of the untrained model, train it for 150 steps on the Python reference documentation
# (most of this chapter's run time), and measure again.

# %%
from vrs_edu.lab.train import TrainConfig, train

before = mean_stream_norms(stack).tolist()
history = train(model, data,
                TrainConfig(steps=150, batch_size=32, warmup=20, eval_every=150, seed=0),
                progress=False)
after = mean_stream_norms(model(x, trace=True).trace.stack("resid")).tolist()
print(f"validation loss after 150 steps: {history.val_loss[-1]:.2f} nats")
print("norm by depth, untrained:", [round(v, 2) for v in before])
print("norm by depth, trained:  ", [round(v, 2) for v in after])
for name, norms in (("untrained", before), ("trained", after)):
    grows = sum(b > a for a, b in zip(norms, norms[1:]))
    print(f"{name}: the norm grows at {grows} of {len(norms) - 1} blocks; "
          f"final / embedding = {norms[-1] / norms[0]:.1f}")
r_before, r_after = before[-1] / before[0], after[-1] / after[0]
print(f"after training the stream ends {r_after / r_before:.1f}× as far above the embedding "
      f"as before:\nthe blocks write {'larger' if r_after > r_before else 'smaller'} outputs "
      f"relative to the embedding")

# %%
import matplotlib.pyplot as plt

from vrs_edu.viz.plots import plot_stream_norms

plot_stream_norms({"untrained": before, "after 150 steps": after},
                  title="residual stream norm along depth")
plt.show()

# %% [markdown]
# The stream **grows along depth** (the counts above): each block *adds* a vector to the state. A block can write
# against the stream and shrink it — count the blocks where the norm did not grow — but nothing ever replaces the
# old state. Training changes how much the blocks write (the last line above). Chapter 01 takes this apart: the
# final state *is* the embedding plus every block's output, and we will read each block's contribution to a
# prediction.
#
# ### Widget — depth and initial scale
#
# Move the sliders: the number of layers and a multiplier on the output projections of every block (how much each
# block writes at initialisation), in steps of 1 and 0.25. The printed line gives the final/embedding ratio and its
# change from the default; the grey curve is the default setting. The static figure below the widget shows the
# default setting, and the ratios one step away from it.

# %% tags=["nbval-ignore-output"]
from vrs_edu.viz.widgets import stream_norm_widget

stream_norm_widget()

# %%
from vrs_edu.lab.explore import stream_norm_readout
from vrs_edu.viz.widgets import stream_norm_figure

fig, norms = stream_norm_figure(n_layers=6, init_scale=1.0)
plt.show()
print(f"default setting: final/embedding norm ratio {norms[-1] / norms[0]:.2f}")
for n_layers in (6, 24):
    for scale in (1.0, 1.25):
        ratio = stream_norm_readout(n_layers, scale)["ratio"]
        print(f"{n_layers:2d} layers, init scale {scale:.2f}: ratio {ratio:.2f}")

# %% [markdown]
# ### Exercises to think about
#
# 1. With `init scale` at 0, every block writes nothing at initialisation. What does the stream look like, and why
#    does training still work? (Hint: gradients flow through the identity path.)
# 2. Move `layers` from 6 to 24 at init scale 1 and compare the ratios printed above with the change one step of
#    `init scale` makes. The output projections are initialised with the `1/sqrt(2L)` scaling of GPT-2: what
#    would the stream do without it?
#
# ## What we measured
#
# * The depth stack of a 6-layer TinyGPT has shape (7, 8, 64, 64).
# * Its stream norm grows along depth at most blocks, before and after 150 steps of training; the counts and the
#   final/embedding ratios are printed above.
# * Next: chapter 01 decomposes the stream into per-block contributions.
