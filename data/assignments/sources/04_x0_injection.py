# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Assignment 04 · Re-reading x0: injection into one projection
#
# *Goes with chapter 04 (The bank of values).*
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
from vrs_edu.nn.layers import rms_norm

seed_everything(0)

# %% [markdown]
# ## The task — x0 injection
#
# Deep layers can re-read the token's identity directly: $x_0 = \mathrm{RMSNorm}(\text{embedding})$, the
# context-free embedding on the same scale as the normalised residual stream. *x0 injection* feeds it into one of
# the attention projections $W \in \{W_Q, W_K, W_V\}$ of a layer, next to the stream $x$:
#
# $$W(\alpha\, x + \beta\, x_0) = \alpha\, W x + \beta\, W x_0,$$
#
# with two learned scalars per projection ($\alpha = 1, \beta = 0$ at initialisation: the plain layer). Chapter 04
# asks *through which projection* deep layers use it.
#
# Write `x0_projection(x, embedding, weight, alpha, beta)`: `x` (the normalised residual stream entering the
# projection) and `embedding` have shape `(B, T, D)`; `weight` is an `nn.Linear` weight, shape `(D_out, D_in)`,
# applied as `z @ weight.T` (no bias); `alpha` and `beta` are numbers. Return the projection, shape `(B, T, D_out)`.
# `rms_norm` (parameter-free RMSNorm over the last axis) is imported above.

# %% tags=["solution"]
def x0_projection(x, embedding, weight, alpha, beta):
    """x, embedding (B, T, D), weight (D_out, D) -> (B, T, D_out) = alpha·W(x) + beta·W(RMSNorm(embedding))."""
    ### BEGIN SOLUTION
    ### HINT: the embedding is normalised as the layer's own input is; the projection is linear, so mixing the two
    ### HINT: inputs first and projecting once gives the same as projecting each.
    x0 = rms_norm(embedding)
    return (alpha * x + beta * x0) @ weight.T
    ### END SOLUTION


# %% tags=["public-test"] check="x0_projection_public" points=1
from vrs_edu.course.exercises.ch04 import check_x0_projection

check_x0_projection(x0_projection)

# %% tags=["hidden-test"] check="x0_projection_hidden" points=2
from vrs_edu.course.exercises.ch04 import check_x0_projection

# other random inputs, then the edges: one position (T = 1), the smallest widths, float64 kept as float64
all(check_x0_projection(x0_projection, seed=s, quiet=True) for s in (11, 12)) and check_x0_projection(x0_projection, seed=13, edges=True, quiet=True)

# %% tags=["hidden-test"] check="x0_projection_rectangular" points=1
# A projection that changes the width (D_out != D), and the initial coefficients (alpha = 1, beta = 0: no x0 at all).
import torch

from vrs_edu.nn.layers import rms_norm

_g = torch.Generator().manual_seed(6)
_x, _e = torch.randn(2, 5, 12, generator=_g), torch.randn(2, 5, 12, generator=_g) * 4
_w = torch.randn(20, 12, generator=_g)
_got = x0_projection(_x, _e, _w, 0.6, 1.3)
assert _got.shape == (2, 5, 20), f"weight of shape (20, 12) maps D = 12 to 20 features, got shape {tuple(_got.shape)}"
assert torch.allclose(_got, 0.6 * _x @ _w.T + 1.3 * rms_norm(_e) @ _w.T, atol=1e-4), "values differ for D_out != D"
assert torch.allclose(x0_projection(_x, _e, _w, 1.0, 0.0), _x @ _w.T, atol=1e-5), \
    "with alpha = 1 and beta = 0 the result must be the plain projection x @ weight.T"
True

# %% [markdown]
# ## Use it: the value projection of a TinyGPT with x0 injection
#
# A TinyGPT with `x0_mode="qkv"` injects x0 into $W_Q$, $W_K$ and $W_V$ of its last third of layers, each with its
# own $(\alpha, \beta)$. We set block 5's value coefficients to non-trivial values and recompute its values from
# the normalised stream, the embedding and $W_V$ with *your* function.

# %%
from vrs_edu.nn import TinyGPT, TinyGPTConfig

model = TinyGPT(TinyGPTConfig(vocab_size=64, n_layers=6, d_model=32, n_heads=2, block_size=16, x0_mode="qkv", seed=0))
block = model.blocks[5]
with torch.no_grad():
    block.x0.alpha_v.fill_(0.7)
    block.x0.beta_v.fill_(0.6)
tokens = torch.randint(0, 64, (2, 16), generator=torch.Generator().manual_seed(0))
tr = model(tokens, trace=True).trace
x = rms_norm(tr["blocks.5.resid_pre"])
with torch.no_grad():
    v = x0_projection(x, model.wte(tokens), block.attn.v_proj.weight, 0.7, 0.6)   # the raw token embedding
v_heads = v.view(2, 16, 2, 16).transpose(1, 2)                 # (B, T, D) -> (B, H, T, Dh)
print(f"largest difference from block 5's recorded values: {(v_heads - tr['blocks.5.attn.v']).abs().max().item():.2e}")
share = (0.6 * tr["x0"] @ block.attn.v_proj.weight.T).norm() / v.norm()
print(f"share of the values' norm that comes from x0: {share.item():.3f}")

# %% tags=["hidden-test"] check="x0_projection_on_model" points=1
# The function inside a real model: it must reproduce the recorded values of an x0-injected layer.
import torch

from vrs_edu.nn import TinyGPT, TinyGPTConfig
from vrs_edu.nn.layers import rms_norm

_m = TinyGPT(TinyGPTConfig(vocab_size=30, n_layers=3, d_model=24, n_heads=3, block_size=8, x0_mode="qkv", seed=13))
_b = _m.blocks[2]
with torch.no_grad():
    _b.x0.alpha_v.fill_(0.4)
    _b.x0.beta_v.fill_(1.5)
_idx = torch.randint(0, 30, (3, 8), generator=torch.Generator().manual_seed(13))
_tr = _m(_idx, trace=True).trace
with torch.no_grad():   # the raw token embedding: x0_projection normalises it itself
    _v = x0_projection(rms_norm(_tr["blocks.2.resid_pre"]), _m.wte(_idx), _b.attn.v_proj.weight, 0.4, 1.5)
assert torch.allclose(_v.view(3, 8, 3, 8).transpose(1, 2), _tr["blocks.2.attn.v"], atol=1e-5), \
    "the result differs from the model's values at an x0-injected layer"
True
