# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Assignment 02 · Causal attention: QK routes, V carries
#
# *Goes with chapter 02 (QK routes, V carries).*
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
import math

import torch

from vrs_edu.course.seeds import seed_everything

seed_everything(0)

# %% [markdown]
# ## Exercise 1 — where to look: the causal attention pattern
#
# Attention has two halves. The first, **Q·K**, decides where each position looks: query $i$ scores every key $j$
# with $q_i \cdot k_j / \sqrt{D_h}$, future keys ($j > i$) are masked out, and a softmax over the keys turns the
# scores of row $i$ into weights that sum to 1 (Vaswani et al. 2017, arXiv 1706.03762, eq. 1).
#
# Write `attention_pattern(q, k)`: `q` and `k` have shape `(B, H, T, Dh)` (batch, heads, positions, head
# dimension). Return the pattern, shape `(B, H, T, T)`: row $i$ is query $i$'s distribution over keys $0..i$, and
# every entry above the diagonal is exactly 0.

# %% tags=["solution"]
def attention_pattern(q, k):
    """q, k (B, H, T, Dh) -> (B, H, T, T): softmax over keys of q·k / sqrt(Dh), future keys masked."""
    ### BEGIN SOLUTION
    ### HINT: three steps: how well each query matches each key, scaled so it does not grow with Dh; no query may
    ### HINT: see a key after it (which entries of a T x T matrix are those?); then weights that sum to 1 per query.
    T, Dh = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(Dh)
    future = ~torch.ones(T, T, dtype=torch.bool).tril()
    return scores.masked_fill(future, float("-inf")).softmax(dim=-1)
    ### END SOLUTION


# %% tags=["public-test"] check="attention_pattern_public" points=1
from vrs_edu.course.exercises.ch02 import check_attention_pattern

check_attention_pattern(attention_pattern)

# %% tags=["hidden-test"] check="attention_pattern_hidden" points=2
from vrs_edu.course.exercises.ch02 import check_attention_pattern

# other random inputs, then the edges: one position (T = 1), the smallest widths, float64 kept as float64
all(check_attention_pattern(attention_pattern, seed=s, quiet=True) for s in (11, 12)) and check_attention_pattern(attention_pattern, seed=13, edges=True, quiet=True)

# %% tags=["hidden-test"] check="attention_pattern_no_future" points=1
# Causality as a property: changing the keys of later positions must not change what earlier queries attend to.
import torch

_g = torch.Generator().manual_seed(3)
_q, _k = torch.randn(2, 2, 9, 8, generator=_g), torch.randn(2, 2, 9, 8, generator=_g)
_k2 = _k.clone()
_k2[:, :, 5:] = torch.randn(2, 2, 4, 8, generator=_g) * 10
_p, _p2 = attention_pattern(_q, _k), attention_pattern(_q, _k2)
assert torch.allclose(_p.sum(-1), torch.ones(2, 2, 9), atol=1e-5), "rows of the pattern must sum to 1"
assert torch.allclose(_p[:, :, :5], _p2[:, :, :5], atol=1e-6), "changing keys 5..8 changed what queries 0..4 attend to"
True

# %% [markdown]
# ## Exercise 2 — what gets moved: the value-weighted sum
#
# The second half, **V**, is what attention moves: position $i$ receives $z_i = \sum_j p_{ij}\, v_j$, the values
# of the positions it looks at, weighted by its row of the pattern.
#
# Write `attend(pattern, v)`: `pattern` has shape `(B, H, T, T)`, `v` has shape `(B, H, T, Dh)`. Return `z`,
# shape `(B, H, T, Dh)`.

# %% tags=["solution"]
def attend(pattern, v):
    """pattern (B, H, T, T), v (B, H, T, Dh) -> z (B, H, T, Dh) with z_i = sum_j pattern[i, j] v_j."""
    ### BEGIN SOLUTION
    ### HINT: output i is a weighted sum of the value vectors, with row i of the pattern as its weights.
    return pattern @ v
    ### END SOLUTION


# %% tags=["public-test"] check="attend_public" points=1
from vrs_edu.course.exercises.ch02 import check_attend

check_attend(attend)

# %% tags=["hidden-test"] check="attend_hidden" points=2
from vrs_edu.course.exercises.ch02 import check_attend

# other random inputs, then the edges: one position (T = 1), the smallest widths, float64 kept as float64
all(check_attend(attend, seed=s, quiet=True) for s in (11, 12)) and check_attend(attend, seed=13, edges=True, quiet=True)

# %% [markdown]
# ## Use it: recompute a model's attention
#
# A TinyGPT records, at every block, its queries and keys (after the rotary position embedding), its pattern, the
# values the pattern averages, and the result z. Recompute block 1's pattern and z with your two functions.

# %%
from vrs_edu.nn import TinyGPT, TinyGPTConfig

model = TinyGPT(TinyGPTConfig(vocab_size=64, n_layers=3, d_model=32, n_heads=4, block_size=16, seed=0))
tr = model(torch.randint(0, 64, (2, 16), generator=torch.Generator().manual_seed(0)), trace=True).trace
pattern = attention_pattern(tr["blocks.1.attn.q"], tr["blocks.1.attn.k"])
z = attend(pattern, tr["blocks.1.attn.v_mix"])
print(f"pattern: largest difference from the model's {(pattern - tr['blocks.1.attn.pattern']).abs().max().item():.2e}")
print(f"z:       largest difference from the model's {(z - tr['blocks.1.attn.z']).abs().max().item():.2e}")
print(f"weight the last position puts on itself, averaged over heads: {pattern[0, :, -1, -1].mean().item():.3f}")

# %% tags=["hidden-test"] check="attention_pattern_on_model" points=1
# attention_pattern inside a real model (rotary positions, 4 heads): it must reproduce block 1's pattern.
import torch

from vrs_edu.nn import TinyGPT, TinyGPTConfig

_tr = TinyGPT(TinyGPTConfig(vocab_size=40, n_layers=2, d_model=48, n_heads=4, block_size=10, seed=9))(
    torch.randint(0, 40, (3, 10), generator=torch.Generator().manual_seed(9)), trace=True).trace
assert torch.allclose(attention_pattern(_tr["blocks.1.attn.q"], _tr["blocks.1.attn.k"]), _tr["blocks.1.attn.pattern"],
                      atol=1e-5), "the pattern differs from the model's"
True

# %% tags=["hidden-test"] check="attend_on_model" points=1
# attend inside the same model, on its own pattern and values: it must reproduce block 1's z.
import torch

from vrs_edu.nn import TinyGPT, TinyGPTConfig

_tr = TinyGPT(TinyGPTConfig(vocab_size=40, n_layers=2, d_model=48, n_heads=4, block_size=10, seed=9))(
    torch.randint(0, 40, (3, 10), generator=torch.Generator().manual_seed(9)), trace=True).trace
assert torch.allclose(attend(_tr["blocks.1.attn.pattern"], _tr["blocks.1.attn.v_mix"]), _tr["blocks.1.attn.z"],
                      atol=1e-5), "z differs from the model's"
True
