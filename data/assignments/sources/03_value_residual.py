# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Assignment 03 · Value residual learning
#
# *Goes with chapter 03 (Value residual learning).*
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
# ## Task 1 — attention with a value residual
#
# In a plain Transformer, layer $n$ averages its *own* values: $U_n = A_n V_n$, with $A_n$ its causal attention
# pattern. **ResFormer** (Zhou et al., "Value Residual Learning", arXiv 2410.17897) lets every later layer re-read
# the values of the first layer, $V_1$: it mixes them into its own values *before* the attention-weighted sum,
#
# $$V_n' = \lambda_1 V_1 + \lambda_2 V_n, \qquad U_n = A_n V_n',$$
#
# so $V_1$ is read at exactly the positions layer $n$ attends to. (The official code fixes
# $\lambda_1 = \lambda_2 = 0.5$; the paper also learns them.)
#
# Write `value_residual_attention(pattern, v, v_first, lambda_1, lambda_2)`: `pattern` has shape `(B, H, T, T)`,
# `v` (this layer's values $V_n$) and `v_first` ($V_1$) have shape `(B, H, T, Dh)`, the lambdas are numbers.
# Return $U_n$, shape `(B, H, T, Dh)`.

# %% tags=["solution"]
def value_residual_attention(pattern, v, v_first, lambda_1, lambda_2):
    """pattern (B, H, T, T), v and v_first (B, H, T, Dh) -> U (B, H, T, Dh) = pattern @ (λ1·v_first + λ2·v)."""
    ### BEGIN SOLUTION
    ### HINT: the value residual mixes values, not outputs: decide which values this layer's pattern moves (layer 1's
    ### HINT: and its own, weighed by the two lambdas), then let the pattern move them.
    mixed = lambda_1 * v_first + lambda_2 * v
    return pattern @ mixed
    ### END SOLUTION


# %% tags=["public-test"] check="value_residual_public" points=1
from vrs_edu.course.exercises.ch03 import check_value_residual_attention

check_value_residual_attention(value_residual_attention)

# %% tags=["hidden-test"] check="value_residual_hidden" points=2
from vrs_edu.course.exercises.ch03 import check_value_residual_attention

# other random inputs, then the edges: one position (T = 1), the smallest widths, float64 kept as float64
all(check_value_residual_attention(value_residual_attention, seed=s, quiet=True) for s in (11, 12)) and check_value_residual_attention(value_residual_attention, seed=13, edges=True, quiet=True)

# %% tags=["hidden-test"] check="value_residual_limits" points=1
# The two limits of the formula: λ1 = 0, λ2 = 1 is plain attention; λ1 = 1, λ2 = 0 averages V_1 alone (SVFormer).
import torch

_g = torch.Generator().manual_seed(4)
_a = torch.randn(2, 3, 6, 6, generator=_g).masked_fill(~torch.ones(6, 6, dtype=torch.bool).tril(), float("-inf"))
_a = _a.softmax(-1)
_v, _v1 = torch.randn(2, 3, 6, 5, generator=_g), torch.randn(2, 3, 6, 5, generator=_g)
assert torch.allclose(value_residual_attention(_a, _v, _v1, 0.0, 1.0), _a @ _v, atol=1e-5), \
    "with lambda_1 = 0 and lambda_2 = 1 the result must be plain attention, pattern @ v"
assert torch.allclose(value_residual_attention(_a, _v, _v1, 1.0, 0.0), _a @ _v1, atol=1e-5), \
    "with lambda_1 = 1 and lambda_2 = 0 the result must be pattern @ v_first"
True

# %% [markdown]
# ## Use it: inside a TinyGPT with learnable λ
#
# A TinyGPT with `value_residual="learnable"` keeps one $(\lambda_1, \lambda_2)$ pair per layer $n \ge 2$. We set
# them to unequal values (training would move them), record a forward pass, and recompute block 2's attention
# output from its pattern, its own values and the first layer's values with *your* function.

# %%
from vrs_edu.nn import TinyGPT, TinyGPTConfig

model = TinyGPT(TinyGPTConfig(vocab_size=64, n_layers=4, d_model=32, n_heads=2, block_size=16,
                              value_residual="learnable", seed=0))
with torch.no_grad():
    model.blocks[2].value_residual.lambda_1.fill_(0.3)
    model.blocks[2].value_residual.lambda_2.fill_(0.9)
tr = model(torch.randint(0, 64, (2, 16), generator=torch.Generator().manual_seed(0)), trace=True).trace
u = value_residual_attention(tr["blocks.2.attn.pattern"], tr["blocks.2.attn.v"], tr["blocks.0.attn.v"], 0.3, 0.9)
print(f"largest difference from block 2's recorded output z: {(u - tr['blocks.2.attn.z']).abs().max().item():.2e}")
plain = tr["blocks.2.attn.pattern"] @ tr["blocks.2.attn.v"]
print(f"share of z's norm that the value residual changed: {((u - plain).norm() / u.norm()).item():.3f}")

# %% tags=["hidden-test"] check="value_residual_on_model" points=1
# The function inside a real model (learnable λ set to unequal values): it must reproduce block 3's z.
import torch

from vrs_edu.nn import TinyGPT, TinyGPTConfig

_m = TinyGPT(TinyGPTConfig(vocab_size=40, n_layers=4, d_model=24, n_heads=3, block_size=9,
                           value_residual="learnable", seed=11))
with torch.no_grad():
    _m.blocks[3].value_residual.lambda_1.fill_(0.8)
    _m.blocks[3].value_residual.lambda_2.fill_(0.25)
_tr = _m(torch.randint(0, 40, (2, 9), generator=torch.Generator().manual_seed(11)), trace=True).trace
_u = value_residual_attention(_tr["blocks.3.attn.pattern"], _tr["blocks.3.attn.v"], _tr["blocks.0.attn.v"], 0.8, 0.25)
assert torch.allclose(_u, _tr["blocks.3.attn.z"], atol=1e-5), "the result differs from the model's block 3 output z"
True

# %% [markdown]
# ## Task 2 — how much of the output comes from V_1
#
# The chapter's question (the article's second) is how much early information a layer keeps through V. The
# coefficients alone do not answer it: what reaches query $i$ is $V_1$ *averaged by this layer's pattern*, and its
# size depends on $V_1$, on $V_n$ and on where the query looks. Because the pattern acts linearly, the output
# splits exactly into two parts,
#
# $$U_n = A_n(\lambda_1 V_1) + A_n(\lambda_2 V_n),$$
#
# one made of the first layer's values and one of this layer's own. The **norm-based view** (Kobayashi et al.,
# "Attention is Not Only a Weight", arXiv 2004.10102) reads each part by its length, the Euclidean norm
# $\lVert \cdot \rVert$ of its row over the $D_h$ features, rather than by a weight. The **V_1 share** of query $i$ is
#
# $$s_i = \frac{\lVert [A_n(\lambda_1 V_1)]_i \rVert}{\lVert [A_n(\lambda_1 V_1)]_i \rVert
# + \lVert [A_n(\lambda_2 V_n)]_i \rVert} \in [0, 1]:$$
#
# 0 when $\lambda_1 = 0$ (plain attention), 1 when $\lambda_2 = 0$ (SVFormer, which reads $V_1$ alone), and
# $\lambda_1 / (\lambda_1 + \lambda_2)$ when $V_1 = V_n$ and both lambdas are positive. It divides by the *sum* of
# the two lengths, not by the length of $U_n$: the two parts can point in opposite directions and partly cancel, and
# the share must still say how much each one brought.
#
# Write `v1_share(pattern, v, v_first, lambda_1, lambda_2)`, with the arguments of `value_residual_attention` (the
# lambdas are not both zero). Return the share of every query in every head, shape `(B, H, T)`. Build it with your
# `value_residual_attention`.

# %% tags=["solution"]
def v1_share(pattern, v, v_first, lambda_1, lambda_2):
    """pattern (B, H, T, T), v and v_first (B, H, T, Dh) -> (B, H, T): per query, V_1's share of the
    output by norms, ‖A(λ1·v_first)‖ / (‖A(λ1·v_first)‖ + ‖A(λ2·v)‖), the norms over Dh."""
    ### BEGIN SOLUTION
    ### HINT: with one of the two lambdas set to zero, your value_residual_attention gives one part
    ### HINT: of the output alone; measure each part's length over the features (one per query) and
    ### HINT: divide V_1's by their sum.
    from_first = value_residual_attention(pattern, v, v_first, lambda_1, 0.0)   # A·(λ1·V_1)
    from_own = value_residual_attention(pattern, v, v_first, 0.0, lambda_2)     # A·(λ2·V_n)
    first_length = from_first.norm(dim=-1)
    own_length = from_own.norm(dim=-1)
    total = first_length + own_length
    return first_length / total
    ### END SOLUTION


# %% tags=["public-test"] check="v1_share_public" points=1
from vrs_edu.course.exercises.ch03 import check_v1_share

check_v1_share(v1_share)

# %% tags=["hidden-test"] check="v1_share_hidden" points=2
from vrs_edu.course.exercises.ch03 import check_v1_share

# other random inputs, then the edges: one position (T = 1), the smallest widths, float64 kept as float64
(all(check_v1_share(v1_share, seed=s, quiet=True) for s in (11, 12))
 and check_v1_share(v1_share, seed=13, edges=True, quiet=True))

# %% tags=["hidden-test"] check="v1_share_limits" points=1
# The limits of the share: λ1 = 0 gives 0, λ2 = 0 gives 1, and V_1 = V_n gives λ1 / (λ1 + λ2).
import torch

_g = torch.Generator().manual_seed(5)
_a = torch.randn(2, 3, 6, 6, generator=_g)
_a = _a.masked_fill(~torch.ones(6, 6, dtype=torch.bool).tril(), float("-inf")).softmax(-1)
_v, _v1 = torch.randn(2, 3, 6, 5, generator=_g), 3.0 * torch.randn(2, 3, 6, 5, generator=_g)
assert torch.allclose(v1_share(_a, _v, _v1, 0.0, 0.8), torch.zeros(2, 3, 6), atol=1e-6), \
    "with lambda_1 = 0 nothing comes from V_1: every share must be 0"
assert torch.allclose(v1_share(_a, _v, _v1, 0.7, 0.0), torch.ones(2, 3, 6), atol=1e-6), \
    "with lambda_2 = 0 everything comes from V_1: every share must be 1"
assert torch.allclose(v1_share(_a, _v, _v, 0.3, 0.9), torch.full((2, 3, 6), 0.25), atol=1e-5), \
    "with v_first equal to v the share must be lambda_1 / (lambda_1 + lambda_2) = 0.3 / 1.2 = 0.25"
True

# %% [markdown]
# ## Use it: the V_1 share, layer by layer
#
# We give blocks 1, 2 and 3 of a TinyGPT with learnable λ three different pairs, record a forward pass, and measure
# with *your* function how much of each block's attention output comes from $V_1$, query by query. The model is
# untrained, so its $V_1$ and $V_n$ have similar lengths and the mean share lands near $\lambda_1 / (\lambda_1 +
# \lambda_2)$; the spread over queries is what the pattern adds. On a trained model (chapter 03's checkpoint) the
# same function says how much of $V_1$ the layers really carry.

# %%
from vrs_edu.nn import TinyGPT, TinyGPTConfig

model = TinyGPT(TinyGPTConfig(vocab_size=64, n_layers=4, d_model=32, n_heads=2, block_size=16,
                              value_residual="learnable", seed=0))
lambdas = {1: (0.5, 0.5), 2: (0.3, 0.9), 3: (0.9, 0.3)}     # block n: (λ1, λ2)
with torch.no_grad():
    for n, (l1, l2) in lambdas.items():
        model.blocks[n].value_residual.lambda_1.fill_(l1)
        model.blocks[n].value_residual.lambda_2.fill_(l2)
tr = model(torch.randint(0, 64, (2, 16), generator=torch.Generator().manual_seed(0)), trace=True).trace
v_first = tr["blocks.0.attn.v"]
for n, (l1, l2) in lambdas.items():
    share = v1_share(tr[f"blocks.{n}.attn.pattern"], tr[f"blocks.{n}.attn.v"], v_first, l1, l2)
    print(f"block {n}: λ1 / (λ1 + λ2) = {l1 / (l1 + l2):.2f}; V_1 share measured: mean "
          f"{share.mean().item():.2f}, over the queries {share.min().item():.2f} to "
          f"{share.max().item():.2f}")
