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
# ## The task — attention with a value residual
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
