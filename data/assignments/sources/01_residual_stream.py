# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Assignment 01 · The residual stream is a running sum
#
# *Goes with chapter 01 (Two axes: the residual stream along depth).*
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
# ## Exercise 1 — the depth stack from what each block wrote
#
# Block $l$ reads the current state $h_l$ and *adds* what it writes, $y_l$ (its attention output plus its MLP
# output): $h_{l+1} = h_l + y_l$, starting from the embedding $h_0$. So every state is the embedding plus the
# writes of all the blocks before it:
#
# $$h_l = h_0 + y_0 + \dots + y_{l-1}.$$
#
# Write `residual_stack(embedding, outputs)`: `embedding` has shape `(B, T, D)`, `outputs` stacks the L block
# writes, shape `(L, B, T, D)`. Return the depth stack $h_0, \dots, h_L$, shape `(L+1, B, T, D)`.

# %% tags=["solution"]
def residual_stack(embedding, outputs):
    """embedding (B, T, D), outputs (L, B, T, D) -> (L+1, B, T, D) with stack[l] = embedding + outputs[:l].sum(0)."""
    ### BEGIN SOLUTION
    ### HINT: the state after block l is the embedding plus every write up to l: a running sum along depth. Stack
    ### HINT: the embedding with the writes first, so that depth 0 is the embedding itself.
    return torch.cat([embedding[None], outputs]).cumsum(0)
    ### END SOLUTION


# %% tags=["public-test"] check="residual_stack_public" points=1
from vrs_edu.course.exercises.ch01 import check_residual_stack

check_residual_stack(residual_stack)

# %% tags=["hidden-test"] check="residual_stack_hidden" points=2
from vrs_edu.course.exercises.ch01 import check_residual_stack

# other random inputs, then the edges: one position (T = 1), the smallest widths, float64 kept as float64
all(check_residual_stack(residual_stack, seed=s, quiet=True) for s in (11, 12)) and check_residual_stack(residual_stack, seed=13, edges=True, quiet=True)

# %% [markdown]
# ## Exercise 2 — direct logit attribution
#
# The model's logit for a token is $w_U \cdot \mathrm{RMSNorm}(h_L)$, with $w_U$ the token's row of the
# unembedding and $\mathrm{RMSNorm}(h) = h / \mathrm{rms}(h)$, $\mathrm{rms}(h) = \sqrt{\mathrm{mean}(h^2) +
# 10^{-6}}$. RMSNorm divides by *one* number per token; holding that number fixed, the logit splits exactly into one
# term per component of the sum $h_L = c_0 + c_1 + \dots$:
#
# $$\text{logit} = \sum_n \frac{c_n \cdot w_U}{\mathrm{rms}(h_L)}.$$
#
# Write `logit_contributions(components, unembed)`: `components` has shape `(N, D)` (the N terms whose sum is the
# final state of one token), `unembed` has shape `(D,)`. Return the N contributions, shape `(N,)`.

# %% tags=["solution"]
def logit_contributions(components, unembed):
    """components (N, D), unembed (D,) -> (N,) with components[n] · unembed / rms(components.sum(0))."""
    ### BEGIN SOLUTION
    ### HINT: the final norm divides the whole final state by one number (its root mean square, with the model's
    ### HINT: epsilon): compute it once from the sum of all components, then read each component with the unembedding.
    final = components.sum(0)
    rms = (final.pow(2).mean() + 1e-6).sqrt()
    return components @ unembed / rms
    ### END SOLUTION


# %% tags=["public-test"] check="logit_contributions_public" points=1
from vrs_edu.course.exercises.ch01 import check_logit_contributions

check_logit_contributions(logit_contributions)

# %% tags=["hidden-test"] check="logit_contributions_hidden" points=2
from vrs_edu.course.exercises.ch01 import check_logit_contributions

# other random inputs, then the edges: one position (T = 1), the smallest widths, float64 kept as float64
all(check_logit_contributions(logit_contributions, seed=s, quiet=True) for s in (11, 12)) and check_logit_contributions(logit_contributions, seed=13, edges=True, quiet=True)

# %% [markdown]
# ## Use it: take a small model apart
#
# We build an (untrained) 4-layer TinyGPT, record one forward pass, and rebuild its residual stream from the
# embedding and the block writes with *your* `residual_stack`. Then we split the logit of the token the model
# predicts after the last position of the first sequence into the embedding's and each block's direct contribution.

# %%
from vrs_edu.nn import TinyGPT, TinyGPTConfig

model = TinyGPT(TinyGPTConfig(vocab_size=64, n_layers=4, d_model=32, n_heads=2, block_size=16, seed=0,
                              stream_start="embedding"))  # the stream starts at the raw embedding (GPT-2 style)
tokens = torch.randint(0, 64, (2, 16), generator=torch.Generator().manual_seed(0))
out = model(tokens, trace=True)
embedding = out.trace["embed"]
writes = torch.stack([a + m for a, m in zip(out.trace.layers("attn.out"), out.trace.layers("mlp.out"))])
mine = residual_stack(embedding, writes)
print(f"largest difference from the recorded stream: {(mine - out.trace.stack('resid')).abs().max().item():.2e}")

# %%
token = int(out.logits[0, -1].argmax())
parts = torch.cat([embedding[None], writes])[:, 0, -1]          # (L+1, D): one token's components
with torch.no_grad():
    contributions = logit_contributions(parts, model.lm_head.weight[token])
for label, c in zip(["embed"] + [f"block {l}" for l in range(len(writes))], contributions.tolist()):
    print(f"{label:8s} {c:+.3f}")
print(f"sum {contributions.sum().item():+.3f} = the model's logit {out.logits[0, -1, token].item():+.3f}")

# %% tags=["hidden-test"] check="residual_stack_on_model" points=1
# residual_stack on a real model: the stream rebuilt from the embedding and the block writes is the recorded one.
import torch

from vrs_edu.nn import TinyGPT, TinyGPTConfig

_m = TinyGPT(TinyGPTConfig(vocab_size=50, n_layers=5, d_model=48, n_heads=3, block_size=12, seed=7))
_out = _m(torch.randint(0, 50, (3, 12), generator=torch.Generator().manual_seed(7)), trace=True)
_w = torch.stack([a + b for a, b in zip(_out.trace.layers("attn.out"), _out.trace.layers("mlp.out"))])
assert torch.allclose(residual_stack(_out.trace["embed"], _w), _out.trace.stack("resid"), atol=1e-5), \
    "residual_stack does not rebuild a 5-layer model's recorded stream"
True

# %% tags=["hidden-test"] check="logit_contributions_on_model" points=1
# logit_contributions on a real model: the contributions of the embedding and the 5 blocks add up to its logit.
import torch

from vrs_edu.nn import TinyGPT, TinyGPTConfig

_m = TinyGPT(TinyGPTConfig(vocab_size=50, n_layers=5, d_model=48, n_heads=3, block_size=12, seed=7))
_out = _m(torch.randint(0, 50, (3, 12), generator=torch.Generator().manual_seed(7)), trace=True)
_w = torch.stack([a + b for a, b in zip(_out.trace.layers("attn.out"), _out.trace.layers("mlp.out"))])
_parts = torch.cat([_out.trace["embed"][None], _w])[:, 2, 5]
with torch.no_grad():
    _c = logit_contributions(_parts, _m.lm_head.weight[17])
assert torch.allclose(_c.sum(), _out.logits[2, 5, 17], atol=1e-4), \
    "logit_contributions do not add up to the model's logit"
True
