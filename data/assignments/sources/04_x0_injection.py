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
# ## Task 1 — x0 injection
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

# %% [markdown]
# ## Task 2 — how much of a projection comes from x0
#
# The chapter asks *through which projection* deep layers re-read the token's identity. The glossary's **x0 share**
# reads the answer from the coefficients alone, $|\beta| / (|\alpha| + |\beta|)$; but what the layer receives is
# the projection, and its two terms are vectors whose lengths also depend on $x$, on $x_0$ and on $W$:
#
# $$W(\alpha\, x + \beta\, x_0) = \underbrace{\alpha\, W x}_{\text{from the stream}}
# + \underbrace{\beta\, W x_0}_{\text{from } x_0}.$$
#
# The **norm-based view** (Kobayashi et al., "Attention is Not Only a Weight", arXiv 2004.10102) reads each term by
# its length, the Euclidean norm $\lVert \cdot \rVert$ of its row over the $D_{out}$ features. The **measured x0
# share** of token $t$ is
#
# $$s_t = \frac{\lVert \beta\, W x_{0,t} \rVert}{\lVert \alpha\, W x_t \rVert + \lVert \beta\, W x_{0,t} \rVert}
# \in [0, 1]:$$
#
# 0 when $\beta = 0$ (the plain layer), 1 when $\alpha = 0$ (the projection reads only x0), and the coefficient
# share $|\beta| / (|\alpha| + |\beta|)$ when $x = x_0$. It divides by the *sum* of the two lengths, not by the
# length of the projection: the two terms can point in opposite directions and partly cancel. Measured for $W_Q$,
# $W_K$ and $W_V$ of the same layer, it says which path reads the token's identity.
#
# Write `x0_norm_share(x, embedding, weight, alpha, beta)`, with the arguments of `x0_projection` (`alpha` and
# `beta` are not both zero). Return the share of every token, shape `(B, T)`. Build it with your `x0_projection`.

# %% tags=["solution"]
def x0_norm_share(x, embedding, weight, alpha, beta):
    """x, embedding (B, T, D), weight (D_out, D) -> (B, T): per token, x0's share of the projection
    by norms over D_out: ‖beta·W(x0)‖ / (‖alpha·W(x)‖ + ‖beta·W(x0)‖), x0 = RMSNorm(embedding)."""
    ### BEGIN SOLUTION
    ### HINT: with one of the two coefficients set to zero, your x0_projection gives one term of the
    ### HINT: projection alone; measure each term's length over the output features (one per token)
    ### HINT: and divide x0's by their sum.
    from_x0 = x0_projection(x, embedding, weight, 0.0, beta)          # beta·W(x0)
    from_stream = x0_projection(x, embedding, weight, alpha, 0.0)     # alpha·W(x)
    x0_length = from_x0.norm(dim=-1)
    stream_length = from_stream.norm(dim=-1)
    total = stream_length + x0_length
    return x0_length / total
    ### END SOLUTION


# %% tags=["public-test"] check="x0_norm_share_public" points=1
from vrs_edu.course.exercises.ch04 import check_x0_norm_share

check_x0_norm_share(x0_norm_share)

# %% tags=["hidden-test"] check="x0_norm_share_hidden" points=2
from vrs_edu.course.exercises.ch04 import check_x0_norm_share

# other random inputs, then the edges: one token, the smallest widths, float64 kept as float64
(all(check_x0_norm_share(x0_norm_share, seed=s, quiet=True) for s in (11, 12))
 and check_x0_norm_share(x0_norm_share, seed=13, edges=True, quiet=True))

# %% tags=["hidden-test"] check="x0_norm_share_limits" points=1
# The limits: beta = 0 gives 0, alpha = 0 gives 1, and x = x0 gives |beta| / (|alpha| + |beta|).
import torch

from vrs_edu.nn.layers import rms_norm

_g = torch.Generator().manual_seed(9)
_x, _e = torch.randn(2, 5, 12, generator=_g), torch.randn(2, 5, 12, generator=_g) * 4
_w = torch.randn(20, 12, generator=_g)
assert torch.allclose(x0_norm_share(_x, _e, _w, 0.8, 0.0), torch.zeros(2, 5), atol=1e-6), \
    "with beta = 0 nothing comes from x0: every share must be 0"
assert torch.allclose(x0_norm_share(_x, _e, _w, 0.0, 1.1), torch.ones(2, 5), atol=1e-6), \
    "with alpha = 0 everything comes from x0: every share must be 1"
_same = x0_norm_share(rms_norm(_e), _e, _w, 0.6, -1.8)
assert torch.allclose(_same, torch.full((2, 5), 0.75), atol=1e-5), \
    "with x equal to x0 the share must be |beta| / (|alpha| + |beta|) = 1.8 / 2.4 = 0.75"
True

# %% [markdown]
# ## Use it: which path reads x0?
#
# We give block 5's three paths the coefficients that chapter 04's trained `qkv` checkpoint learned at its last
# layer (layer 7 of 8; $\beta_Q$ is negative: Q subtracts x0) and measure with *your* function, token by token,
# how much of $W_Q$'s, $W_K$'s and $W_V$'s output comes from x0. In this untrained model the blocks write almost
# nothing, so the stream $x$ at block 5 is still almost $x_0$ itself (the cell prints their cosine): that is the
# case $x = x_0$, where the measured share *is* the coefficient share. To see the measurement part from the
# coefficients, the cell also measures with a stream that is not $x_0$: each token's stream replaced by the
# previous token's normalised embedding, as if the blocks had written the context in. Then $W$ lengthens the two
# inputs differently, token by token. (On chapter 04's trained checkpoint the two readings agreed within a few
# hundredths when we tried: there the coefficients tell which path reads x0.)

# %%
from vrs_edu.nn import TinyGPT, TinyGPTConfig

model = TinyGPT(TinyGPTConfig(vocab_size=64, n_layers=6, d_model=32, n_heads=2, block_size=16,
                              x0_mode="qkv", seed=0))
block = model.blocks[5]
learned = {"q": (0.90, -12.31), "k": (1.01, 3.03), "v": (0.76, 4.40)}    # path: (alpha, beta)
with torch.no_grad():
    for path, (a, b) in learned.items():
        getattr(block.x0, f"alpha_{path}").fill_(a)
        getattr(block.x0, f"beta_{path}").fill_(b)
tokens = torch.randint(0, 64, (2, 16), generator=torch.Generator().manual_seed(0))
x = rms_norm(model(tokens, trace=True).trace["blocks.5.resid_pre"])
embedding = model.wte(tokens)
cosine = torch.nn.functional.cosine_similarity(x, rms_norm(embedding), dim=-1).mean().item()
print(f"cosine of the stream at block 5 with x0: {cosine:.4f}")
other = rms_norm(model.wte(tokens.roll(1, dims=1)))   # a stream that is not x0: the previous token
for path, (a, b) in learned.items():
    weight = getattr(block.attn, f"{path}_proj").weight
    with torch.no_grad():
        share = x0_norm_share(x, embedding, weight, a, b)
        apart = x0_norm_share(other, embedding, weight, a, b)
    print(f"W_{path.upper()}: coefficient share {abs(b) / (abs(a) + abs(b)):.3f}; measured: "
          f"{share.mean().item():.3f} with the model's stream, {apart.min().item():.3f} to "
          f"{apart.max().item():.3f} over the tokens with a stream that is not x0")
