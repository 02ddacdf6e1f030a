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
# **Question.** How do I use this course, and what does a residual stream look like?
#
# **Goals.** Know the four questions the course answers and where; run a chapter, move a widget, do an exercise
# that checks itself; see the *residual stream* of a small model grow along depth.
#
# **Prerequisites.** Python and a first contact with PyTorch tensors. Nothing about Transformers yet.
#
# **Study time.** About 20 minutes. **Expected run time.** About 30 seconds at one thread on a laptop CPU (budget in
# `book.toml`: 60 s), most of it a short live training run.

# %%
from vrs_edu.course.setup import check_environment, setup_notebook

setup_notebook(seed=0)
# raises, listing every missing or too-old package, if something is wrong
versions = check_environment()

# %% tags=["nbval-ignore-output"]
# Versions and threads differ from machine to machine.
import platform

import torch

from vrs_edu.chapters.ch00_orientation import prose

print(prose.environment_line(platform.python_version(), torch.get_num_threads()))
for name, version in versions.items():
    print(f"{name:12s} {version}")

# %% [markdown]
# ## The four questions
#
# A Transformer moves information along two axes: along the **sequence**, attention moves it between tokens; along
# **depth**, the [residual stream](#glossary:residual-stream) carries it from layer to layer. Attention has two
# halves: the queries and keys (**QK**) decide where to look, the values (**V**) are what gets moved.
#
# **The article.** The course answers a Korean-language note on the [value residual](#glossary:value-residual)
# stream, called *the article* throughout (in the chapters, *seed* only ever means a random seed). It reads two
# sources: the "[bank of values](#glossary:bank-of-values)" paper ([He et al., 2026](#cite:he2026bankofvalues),
# *Do Value Vectors in Deep Layers Need Context from the Residual Stream?*) and its second author's follow-up
# post, an Attention-Residuals model with one depth pseudo-query each for q, k and v
# ([Liu, 2026](#cite:liu2026attnresqkv)). Its thesis fits one sentence, *"QK는 기준이고 V는 내용이다"*: QK is the
# criterion and V is the content. It asks four questions, in this order:
#
# 1. How much does a deep layer's attention depend on its freshly computed QK pattern? (measured in chapters 02,
#    07 and 08; answered in chapter 09)
# 2. How much early or previous-layer information is kept through the V path? (measured in chapters 03, 04, 07
#    and 08; answered in chapter 09)
# 3. Is the residual stream mere accumulation, or can it be designed as a selective read over depth?
#    (measured in chapters 01, 05 and 08; answered in chapter 09)
# 4. Can efficiency or interpretability gains come from V reuse rather than from QK? (measured in chapters 06 and
#    08; answered in chapter 09)
#
# The article's conclusion is that looking at attention through QK alone sees only half of it. The course
# measures whether that holds, in small models trained here and in real pretrained weights; chapter 09 answers the
# four questions side by side, each with the toys' and the real models' evidence, and says where the conclusion
# holds.
#
# ## How the course works
#
# * **Order.** Read the chapters in order; each names its prerequisites. The map is below.
# * **Measurements.** Every number is computed by the code above it, on a CPU. Long training runs are made by a
#   command (`vrs-edu reproduce …`) whose saved results a chapter loads and names.
# * **Each chapter** opens with its question and a drawing of the mechanism, shows the effect first (a figure and a
#   sentence), lets you build the intervention yourself, and closes with **The answer**: a short paragraph with the
#   numbers to remember. Its statistics sit in a folded section, **How sure are we?**: click the heading's arrow (in
#   JupyterLab) or the bar under it (in the book) to open it.
# * **Widgets.** Sliders re-run a small experiment. A widget stored with the chapter shows its sliders before
#   anything runs, but responds only once the chapter's cells have run (*Run ▸ Run All Cells*). A static figure of
#   the default setting sits below each widget.
# * **Exercises** say how hard they are (1 to 5), how much they matter for the rest of the course (1 to 5) and how
#   long they take. The exercise cell is a stub: write your code in place of `raise NotImplementedError` and run
#   it; a checker compares your function with the package's on random inputs and names the likely mistake. Hints
#   and the worked solution are folded: open them when you need them. Running the solution replaces your function,
#   so the chapter runs on either way. When the checker's line ends in "hidden checks run when graded", that is for
#   classrooms: a teacher's grader tries more inputs; on your own, a passed public check is all you need. Only the
#   exercises that a classroom assignment also holds say so; the others end at "public checks passed".
# * **Terms** are defined where they first appear, and every one is in the book's glossary (a linked term leads
#   there).

# %% [markdown]
# ## The map
#
# The chapters written so far, from `book.toml`, the course's table of contents: study time (reading, exercises) and
# the run time the chapter must stay within.

# %% tags=["nbval-ignore-output"]
# The map grows as chapters are written (tests/test_manifest.py checks book.toml).
from vrs_edu.course.book import ROOT, appendices, chapters, study_minutes
from vrs_edu.viz.prose import say

written = [c for c in chapters() if (ROOT / "notebooks" / c.file).exists()]
say(prose.chapters_table(written))
say(prose.study_sentence(study_minutes(), appendices()))

# %% [markdown]
# ## A first look at a residual stream
#
# A decoder-only Transformer turns token ids into vectors, the [embedding](#glossary:embedding) (depth 0), then runs
# L blocks. Each block *reads* the current state, computes something (attention, then an MLP) and *adds* its result
# back:
#
# $$h_{l+1} = h_l + \mathrm{block}_l(h_l).$$
#
# The states $h_0, h_1, \dots, h_L$ of one token are its **residual stream**: the path information takes along
# depth.

# %%
import matplotlib.pyplot as plt

from vrs_edu.viz.schematics import residual_stream

residual_stream()
plt.show()

# %% [markdown]
# The companion package builds a small model, `TinyGPT`: 6 blocks of width 64, reading the characters of the Python
# reference documentation. With `trace=True` it records every state: `trace.stack("resid")` is the depth stack, of
# shape `(L+1, B, T, D)` (depths, sequences, positions, features).

# %%
from vrs_edu.lab.data import make_token_data
from vrs_edu.nn import TinyGPT, TinyGPTConfig

data = make_token_data(tokenizer="char", block_size=64)
model = TinyGPT(TinyGPTConfig(vocab_size=data.vocab_size, n_layers=6, d_model=64, n_heads=4,
                              block_size=64, seed=0,
                              stream_start="embedding"))  # GPT-2 style: starts at the raw embedding
x, y = next(data.eval_batches("val", batch_size=8, max_batches=1))
stack = model(x, trace=True).trace.stack("resid")
print(prose.stack_lines(tuple(stack.shape), data.tokenizer.decode(x[0])[:60]))

# %% [markdown]
# ### The effect: the stream grows along depth
#
# The mean norm of the state at every depth, before training and after 150 steps of it (the steps take most of the
# chapter's run time; the loss is in [nats](#glossary:nats)).

# %%
from vrs_edu.chapters.ch00_orientation.figures import training_norms_figure
from vrs_edu.lab.metrics import stream_norms
from vrs_edu.lab.train import TrainConfig, train

before = stream_norms(model, x)
steps = 150
history = train(model, data,
                TrainConfig(steps=steps, batch_size=32, warmup=20, eval_every=steps, seed=0),
                progress=False)
after = stream_norms(model, x)
training_norms_figure(before, after, steps)
plt.show()
grows = [sum(b > a for a, b in zip(n, n[1:])) for n in (before, after)]
say(prose.training_sentence(before, after, history.val_loss[-1], grows, steps))

# %% [markdown]
# Each block *adds* a vector to the state. A block could write against the stream and shrink it, but nothing ever
# replaces the old state; training changes how much the blocks write. Chapter 01 takes the sum apart.
#
# ### Exercise 0: the norm of the stream at each depth
#
# **Difficulty 1/5 · importance 2/5 · about 5 minutes.** The exercise shows how the exercises work.
#
# Write `mean_stream_norms(stack)`: for a depth stack of shape `(L+1, B, T, D)` return a tensor of shape `(L+1,)`
# holding, at each depth, the L2 norm of every token's D-dimensional state, averaged over the batch and the tokens.
# Then compare it with the package's numbers above.
#
# <details><summary>Hint</summary>
#
# Which axis holds one token's D numbers? A norm taken over that axis leaves one number per depth, sequence and
# position; `Tensor.mean` accepts several axes at once.
#
# </details>


# %%
def mean_stream_norms(stack):
    """stack (L+1, B, T, D) -> (L+1,): at each depth, every token's L2 norm averaged over
    batch and tokens.
    """
    raise NotImplementedError  # replace with your code


from vrs_edu.course.exercises.ch00 import check_stream_norms

check_stream_norms(mean_stream_norms)
None  # the check prints what it found; this line keeps the cell from also showing its True/False

# %% jupyter={"source_hidden": true} tags=["hide-input"]
# Worked solution. Running it replaces your function, so the chapter runs on either way.
def mean_stream_norms(stack):
    return stack.norm(dim=-1).mean(dim=(1, 2))


check_stream_norms(mean_stream_norms)
None  # the check prints what it found; this line keeps the cell from also showing its True/False
mine = mean_stream_norms(model(x, trace=True).trace.stack("resid"))
print(prose.norms_line(max(abs(a - b) for a, b in zip(mine.tolist(), after))))

# %% [markdown]
# ### Widget: depth and initial scale
#
# Two sliders: the number of layers, and a multiplier on what every block writes at initialisation (its output
# projections), in steps of 1 and 0.25. The coloured curve is your setting, the grey one the default; the printed
# line gives how far the stream ends above the embedding (final / embedding norm) and its change from the default.
# The static figure below the widget is the default setting; the table under it gives the ratio at 6 and 24 layers,
# init scale 1.00 and 1.25.

# %% tags=["nbval-ignore-output"]
from vrs_edu.chapters.ch00_orientation.figures import stream_norm_widget

stream_norm_widget()

# %%
from vrs_edu.chapters.ch00_orientation.readout import stream_norm_readout
from vrs_edu.chapters.ch00_orientation.figures import stream_norm_figure

fig, norms = stream_norm_figure(n_layers=6, init_scale=1.0)
plt.show()
ratios = {(n, s): stream_norm_readout(n, s)["ratio"] for n in (6, 24) for s in (1.0, 1.25)}
say(prose.ratio_table(ratios))
d_layers = round(ratios[24, 1.0], 2) - round(ratios[6, 1.0], 2)
d_step = ratios[6, 1.25] - ratios[6, 1.0]
say(prose.ratio_sentence(d_layers, d_step))

# %% [markdown]
# ### Questions
#
# 1. With *init scale* at 0, every block writes nothing at initialisation. What does the stream look like, and why
#    can training still change it?
#
# <details><summary>Answer</summary>
#
# Every state equals the embedding: the curve is flat at the embedding's norm. Training still works because the
# gradient reaches every block through the identity path of the sum (the `+ h_l`), and a block whose output
# projection is zero still gets a non-zero gradient for it, so after one step it writes something.
#
# </details>
#
# 2. Four times the layers barely moves the ratio in the table (the line under it gives both changes), while one
#    step of *init scale* moves it visibly. Why?
#
# <details><summary>Answer</summary>
#
# The output projections are initialised with GPT-2's $1/\sqrt{2L}$ scaling: with four times the layers, each block
# writes half as much, so the sum of many small writes grows about as much as the sum of a few larger ones. Without
# it, the stream's norm would grow with the square root of the depth.
#
# </details>
#
# ## The answer
#
# What a residual stream looks like, in this chapter's numbers:

# %%
say(prose.answer(before, after, grows[1], steps))

# %% [markdown] jp-MarkdownHeadingCollapsed=true
# ## How sure are we?

# %% [markdown]
# Each norm above is a mean over the 8 × 64 token positions of one batch, in one model built from one random seed.
# Does the untrained stream grow the same way from other seeds? Three more initialisations, same batch:

# %%
seeds = [1, 2, 3]
others = [stream_norms(TinyGPT(TinyGPTConfig(vocab_size=data.vocab_size, n_layers=6, d_model=64,
                                             n_heads=4, block_size=64, seed=s,
                                             stream_start="embedding")), x)
          for s in seeds]
norms = [before] + others                              # seed 0 is the model above, before training
grow_all = [sum(b > a for a, b in zip(n, n[1:])) for n in norms]
say(*prose.seeds_table([0] + seeds, norms, grow_all, steps))
