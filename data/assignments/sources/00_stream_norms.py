# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Assignment 00 · The norm of the residual stream
#
# *Goes with chapter 00 (Orientation).*
#
# **How this works.** Write your code where a cell says `raise NotImplementedError(...)` (the message is a hint),
# then run the check cell below it. A check compares your function with the course's reference on random inputs and
# names the likely mistake when they disagree. "Public checks passed" means your function agrees on *these* inputs:
# when the assignment is graded, hidden checks run on other inputs.
#
# Keep the function names as they are. Do not edit the check cells: the grader replaces them with its own copies,
# so an edited or deleted check cell changes nothing. Before you hand in, run *Restart Kernel and Run All Cells*:
# the grader runs your notebook top to bottom in a fresh Python, with a time limit.

# %%
import torch

from vrs_edu.course.seeds import seed_everything

seed_everything(0)

# %% [markdown]
# ## The task
#
# A decoder-only Transformer keeps, for every token, a *residual stream*: the states $h^{(0)}, \dots, h^{(L)}$
# after the embedding and after each of its L blocks. Stacked, they form the **depth stack**, a tensor of shape
# `(L+1, B, T, D)` (depth, batch, token, model dimension).
#
# Write `mean_stream_norms(stack)`: return a tensor of shape `(L+1,)` holding, at each depth, the L2 norm of every
# token's D-dimensional state, averaged over the batch and the tokens.

# %% tags=["solution"]
def mean_stream_norms(stack):
    """(L+1, B, T, D) depth stack -> (L+1,) mean over batch and tokens of each token state's L2 norm."""
    ### BEGIN SOLUTION
    ### HINT: one length per token state first (which axis holds a state's D numbers?), then one mean per depth over
    ### HINT: every token of every sequence; the result has one number per depth.
    return stack.norm(dim=-1).mean(dim=(1, 2))
    ### END SOLUTION


# %% tags=["public-test"] check="stream_norms_public" points=1
from vrs_edu.course.exercises.ch00 import check_stream_norms

check_stream_norms(mean_stream_norms)

# %% tags=["hidden-test"] check="stream_norms_hidden" points=2
from vrs_edu.course.exercises.ch00 import check_stream_norms

# other random inputs, then the edges: one position (T = 1), the smallest widths, float64 kept as float64
all(check_stream_norms(mean_stream_norms, seed=s, quiet=True) for s in (11, 12)) and check_stream_norms(mean_stream_norms, seed=13, edges=True, quiet=True)

# %% [markdown]
# ## Use it
#
# Once the check passes, measure the stream of a small untrained model: the norm grows with depth, because every
# block *adds* its output to the stream.

# %%
from vrs_edu.nn import TinyGPT, TinyGPTConfig

model = TinyGPT(TinyGPTConfig(vocab_size=64, n_layers=4, d_model=32, n_heads=2, block_size=16, seed=0))
tokens = torch.randint(0, 64, (2, 16), generator=torch.Generator().manual_seed(0))
norms = mean_stream_norms(model(tokens, trace=True).trace.stack("resid"))
print("stream norm by depth:", [round(v, 3) for v in norms.tolist()])

# %% tags=["hidden-test"] check="stream_norms_on_model" points=1
# The learner's function on a real depth stack, against the same computation written out depth by depth.
import torch

from vrs_edu.nn import TinyGPT, TinyGPTConfig

_stack = TinyGPT(TinyGPTConfig(vocab_size=64, n_layers=3, d_model=32, n_heads=2, block_size=8, seed=5))(
    torch.randint(0, 64, (3, 8), generator=torch.Generator().manual_seed(5)), trace=True).trace.stack("resid")
_got = mean_stream_norms(_stack)
_want = torch.stack([_stack[l].norm(dim=-1).mean() for l in range(_stack.size(0))])
assert isinstance(_got, torch.Tensor) and _got.shape == _want.shape, \
    f"on a (4, 3, 8, 32) depth stack: expected shape {tuple(_want.shape)}, got {getattr(_got, 'shape', type(_got))}"
assert torch.allclose(_got, _want, atol=1e-5), "on a model's depth stack the norms differ from the reference"
True
