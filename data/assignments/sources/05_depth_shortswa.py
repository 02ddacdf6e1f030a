# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Assignment 05 · Depth as a sequence: causal ShortSWA over depth
#
# *Goes with chapter 05 (Depth as a sequence).*
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
from vrs_edu.nn.layers import rms_norm

seed_everything(0)

# %% [markdown]
# ## Task 1 — one token reads its own earlier layers
#
# Fix one token. Its states after the embedding and after each block, $h^{(0)}, h^{(1)}, \dots, h^{(L)}$, form a
# sequence along depth, and the standard residual reads it with fixed unit weights. **ShortSWA over depth** (Zhang,
# "Residual Stream Duality", arXiv 2603.16039, sec. 2.2) reads it the way attention reads a sentence, but causally
# and through a short window: layer $l$ attends to the last $K$ states, $h^{(\max(0, l-K+1))}, \dots, h^{(l)}$
# (itself included, never a later layer),
#
# $$\text{out}_l = \mathrm{softmax}\!\Big(\frac{q_l\, K_w^\top}{\sqrt{E}}\Big) V_w, \qquad q_l = W_Q h^{(l)},\;
# K_w, V_w = W_K, W_V \text{ applied to the window's states}.$$
#
# Write `depth_swa_one_token(h, window, w_q, w_k, w_v)`: `h` has shape `(L+1, D)` (the layer states of one token),
# `window` is K ≥ 1, the three weights have shape `(E, D)` (`nn.Linear` layout: apply as `h @ w.T`). Return the
# L + 1 reads, shape `(L+1, E)`. A loop over the layers is fine.

# %% tags=["solution"]
def depth_swa_one_token(h, window, w_q, w_k, w_v):
    """h (L+1, D), window K, w_q / w_k / w_v (E, D) -> (L+1, E): layer l attends to layers max(0, l-K+1)..l."""
    ### BEGIN SOLUTION
    ### HINT: attention over depth, one token at a time: each layer's state is a query; the keys and values are the
    ### HINT: states of the last `window` layers up to and including it (never a later one), scaled as in attention.
    q, k, v = h @ w_q.T, h @ w_k.T, h @ w_v.T
    reads = []
    for l in range(h.size(0)):
        lo = max(0, l - window + 1)
        weights = (k[lo:l + 1] @ q[l] / math.sqrt(q.size(-1))).softmax(dim=-1)
        reads.append(weights @ v[lo:l + 1])
    return torch.stack(reads)
    ### END SOLUTION


# %% tags=["public-test"] check="depth_swa_public" points=1
from vrs_edu.course.exercises.ch05 import check_depth_swa_one_token

check_depth_swa_one_token(depth_swa_one_token)

# %% tags=["hidden-test"] check="depth_swa_hidden" points=2
from vrs_edu.course.exercises.ch05 import check_depth_swa_one_token

# other random inputs, then the edges: one position (T = 1), the smallest widths, float64 kept as float64
all(check_depth_swa_one_token(depth_swa_one_token, seed=s, quiet=True) for s in (11, 12)) and check_depth_swa_one_token(depth_swa_one_token, seed=13, edges=True, quiet=True)

# %% tags=["hidden-test"] check="depth_swa_limits" points=1
# The two limits: K = 1 reads only the layer itself (out_l = W_V h_l); K = S is full causal attention over depth.
import math

import torch

_g = torch.Generator().manual_seed(8)
_x, _wq, _wk, _wv = (torch.randn(*s, generator=_g) for s in ((6, 10), (6, 10), (6, 10), (6, 10)))
assert torch.allclose(depth_swa_one_token(_x, 1, _wq, _wk, _wv), _x @ _wv.T, atol=1e-5), \
    "with window 1 each layer reads only itself: the result must be h @ w_v.T"
_s = (_x @ _wq.T) @ (_x @ _wk.T).T / math.sqrt(6)
_full = _s.masked_fill(~torch.ones(6, 6, dtype=torch.bool).tril(), float("-inf")).softmax(-1) @ (_x @ _wv.T)
assert torch.allclose(depth_swa_one_token(_x, 6, _wq, _wk, _wv), _full, atol=1e-5), \
    "with window = S the result must be full causal attention over depth"
True

# %% [markdown]
# ## Use it: the depth mixer of a TinyGPT
#
# A TinyGPT with `depth_mixer="shortswa"` and `depth_window=3` gives every block, as its residual input, the plain
# stream plus $W_O \cdot \text{out}_l$, where $\text{out}_l$ is this read over the RMS-normalised layer states (one
# set of weights for all layers). $W_O$ starts at zero (the model then *is* the standard residual); we give it
# random values, rebuild the layer states of one token from the recorded trace, and recompute every block's input
# with *your* function.

# %%
from vrs_edu.nn import TinyGPT, TinyGPTConfig

model = TinyGPT(TinyGPTConfig(vocab_size=64, n_layers=6, d_model=32, n_heads=2, block_size=16,
                              depth_mixer="shortswa", depth_window=3, seed=0, stream_start="embedding"))
mixer = model.depth
with torch.no_grad():
    mixer.o_proj.weight.normal_(0.0, 0.2, generator=torch.Generator().manual_seed(0))
tr = model(torch.randint(0, 64, (2, 16), generator=torch.Generator().manual_seed(0)), trace=True).trace
writes = [a + m for a, m in zip(tr.layers("attn.out"), tr.layers("mlp.out"))]
states = torch.stack([tr["embed"]] + [tr[f"blocks.{l}.resid_pre"] + writes[l] for l in range(6)])[:, 0, 5]
inputs = torch.stack([tr[f"blocks.{l}.resid_pre"] for l in range(6)] + [tr["resid_final"]])[:, 0, 5]
with torch.no_grad():
    reads = depth_swa_one_token(rms_norm(states), 3, mixer.q_proj.weight, mixer.k_proj.weight, mixer.v_proj.weight)
    rebuilt = states + reads @ mixer.o_proj.weight.T
print(f"largest difference from the recorded block inputs: {(rebuilt - inputs).abs().max().item():.2e}")
print("size of the depth read relative to the stream, by layer:",
      [round(v, 3) for v in ((inputs - states).norm(dim=-1) / states.norm(dim=-1)).tolist()])

# %% tags=["hidden-test"] check="depth_swa_on_model" points=1
# The function inside a real model (window 2, 5 layers, E = 6): it must reproduce every block input of one token.
import torch

from vrs_edu.nn import TinyGPT, TinyGPTConfig
from vrs_edu.nn.layers import rms_norm

_m = TinyGPT(TinyGPTConfig(vocab_size=30, n_layers=5, d_model=24, n_heads=2, block_size=8,
                           depth_mixer="shortswa", depth_window=2, seed=21, stream_start="embedding"))
with torch.no_grad():
    _m.depth.o_proj.weight.normal_(0.0, 0.3, generator=torch.Generator().manual_seed(21))
_tr = _m(torch.randint(0, 30, (2, 8), generator=torch.Generator().manual_seed(21)), trace=True).trace
_w = [a + b for a, b in zip(_tr.layers("attn.out"), _tr.layers("mlp.out"))]
_x = torch.stack([_tr["embed"]] + [_tr[f"blocks.{l}.resid_pre"] + _w[l] for l in range(5)])[:, 1, 6]
_in = torch.stack([_tr[f"blocks.{l}.resid_pre"] for l in range(5)] + [_tr["resid_final"]])[:, 1, 6]
with torch.no_grad():
    _r = depth_swa_one_token(rms_norm(_x), 2, _m.depth.q_proj.weight, _m.depth.k_proj.weight, _m.depth.v_proj.weight)
    assert torch.allclose(_x + _r @ _m.depth.o_proj.weight.T, _in, atol=1e-5), \
        "the depth read differs from the model's ShortSWA depth mixer"
True

# %% [markdown]
# ## Task 2 — which layers does a token read?
#
# The chapter asks whether the residual stream can be a *selective* read over depth rather than a sum of everything
# earlier blocks wrote, and, in the deep layers, whether a read picks the token's embedding or its recent layers.
# The reads of Task 1 do not show that; their weights do. Layer $l$'s weights,
# $a_l = \mathrm{softmax}(q_l K_w^\top / \sqrt{E})$, say how much it takes from each layer of its window. Written as
# one row per layer, with 0 for the layers outside the window, they form the **depth pattern**, an $(L+1) \times
# (L+1)$ matrix: the attention pattern of chapter 02, with layers in place of positions. Every row sums to 1; row
# $l$ is 0 above the diagonal (causal) and left of column $\max(0, l-K+1)$ (the window). With $K = L + 1$, the full
# window, it is causal attention over all earlier layers, and column 0 then says how much each read takes from the
# embedding. (Task 1's reads are this pattern times the values: `depth_read_weights(...) @ (h @ w_v.T)`.)
#
# Write `depth_read_weights(h, window, w_q, w_k)`, with the arguments of `depth_swa_one_token` but no `w_v`. Return
# the depth pattern, shape `(L+1, L+1)`. A loop over the layers is fine.

# %% tags=["solution"]
def depth_read_weights(h, window, w_q, w_k):
    """h (L+1, D), window K, w_q / w_k (E, D) -> (L+1, L+1): row l holds layer l's softmax weights
    over layers max(0, l-K+1)..l (the causal window), 0 elsewhere; every row sums to 1."""
    ### BEGIN SOLUTION
    ### HINT: the scores and the window of your depth_swa_one_token, stopped before the values:
    ### HINT: start from a square of zeros in the dtype of h, and fill each layer's row, over its
    ### HINT: window only, with its softmax weights.
    q, k = h @ w_q.T, h @ w_k.T
    S = h.size(0)
    weights = h.new_zeros(S, S)
    for l in range(S):
        lo = max(0, l - window + 1)
        scores = k[lo:l + 1] @ q[l] / math.sqrt(q.size(-1))
        weights[l, lo:l + 1] = scores.softmax(dim=-1)
    return weights
    ### END SOLUTION


# %% tags=["public-test"] check="depth_read_weights_public" points=1
from vrs_edu.course.exercises.ch05 import check_depth_read_weights

check_depth_read_weights(depth_read_weights)

# %% tags=["hidden-test"] check="depth_read_weights_hidden" points=2
from vrs_edu.course.exercises.ch05 import check_depth_read_weights

# other random inputs, then the edges: one layer, a window longer than the stack, E = 1, float64
(all(check_depth_read_weights(depth_read_weights, seed=s, quiet=True) for s in (11, 12))
 and check_depth_read_weights(depth_read_weights, seed=13, edges=True, quiet=True))

# %% tags=["hidden-test"] check="depth_read_weights_limits" points=1
# The limits: K = 1 reads only the layer itself (the identity); K = S is full causal attention.
import math

import torch

_g = torch.Generator().manual_seed(10)
_x, _wq, _wk = (torch.randn(*s, generator=_g) for s in ((6, 10), (4, 10), (4, 10)))
assert torch.allclose(depth_read_weights(_x, 1, _wq, _wk), torch.eye(6), atol=1e-6), \
    "with window 1 each layer gives all its weight to itself: the result must be the identity"
_s = (_x @ _wq.T) @ (_x @ _wk.T).T / math.sqrt(4)
_full = _s.masked_fill(~torch.ones(6, 6, dtype=torch.bool).tril(), float("-inf")).softmax(-1)
assert torch.allclose(depth_read_weights(_x, 6, _wq, _wk), _full, atol=1e-5), \
    "with window = S the result must be the full causal attention pattern over depth"
True

# %% [markdown]
# ## Use it: does the last read take the embedding or the latest layer?
#
# A TinyGPT with `depth_mixer="shortswa"` and no `depth_window` reads over the full window. We give its read random
# weights (at initialisation $W_Q$ and $W_K$ are so small that every read is nearly uniform), rebuild the layer
# states of every token from the trace, compute each token's depth pattern with *your* function, and compare the
# final read (row $L$, the input of the model's head) with the weights the model recorded. Then: how much weight
# does that read put on the embedding (column 0), and how much on the most recent state (column $L$)? The model is
# untrained and its read weights are random, so the numbers show what the measurement reads, not what training
# would choose; chapter 05 reads trained models. (`stream_start="embedding"` makes the embedding the first state
# of the depth sequence, column 0; the model records each read's weights as `depth.{l}.weights`, shape
# (B, T, 1, l + 1): one query per token, hence the `[:, :, 0]` below.)

# %%
from vrs_edu.nn import TinyGPT, TinyGPTConfig

model = TinyGPT(TinyGPTConfig(vocab_size=64, n_layers=6, d_model=32, n_heads=2, block_size=16,
                              depth_mixer="shortswa", seed=0, stream_start="embedding"))
mixer = model.depth
g = torch.Generator().manual_seed(1)
with torch.no_grad():
    for proj in (mixer.q_proj, mixer.k_proj, mixer.o_proj):
        proj.weight.normal_(0.0, 0.3, generator=g)
tr = model(torch.randint(0, 64, (2, 16), generator=torch.Generator().manual_seed(0)), trace=True).trace
writes = [a + m for a, m in zip(tr.layers("attn.out"), tr.layers("mlp.out"))]
states = torch.stack([tr["embed"]] + [tr[f"blocks.{l}.resid_pre"] + writes[l] for l in range(6)])
w_q, w_k = mixer.q_proj.weight, mixer.k_proj.weight
with torch.no_grad():   # one depth pattern (7, 7) per token; states[:, b, t]: token (b, t)'s layers
    patterns = torch.stack([depth_read_weights(rms_norm(states[:, b, t]), 7, w_q, w_k)
                            for b in range(2) for t in range(16)])
recorded = tr["depth.6.weights"][:, :, 0].flatten(0, 1)     # the final read's weights, (B·T, 7)
gap = (patterns[:, 6] - recorded).abs().max().item()
print(f"largest difference from the recorded final read: {gap:.2e}")
print(f"the final read's weight on the embedding: {patterns[:, 6, 0].mean().item():.2f}, on the "
      f"most recent state: {patterns[:, 6, 6].mean().item():.2f} (mean over the 32 tokens)")
on_embedding = patterns[:, :, 0].mean(0).tolist()
print("weight on the embedding, read by read:", [round(w, 2) for w in on_embedding])
# the yardstick: a uniform read l spreads its weight evenly over its l + 1 states (read 0 sees only the
# embedding, so it is 1 either way); above 1 / (l + 1) the read favours the embedding, below it neglects it
print("a uniform read would give:         ", [round(1 / (l + 1), 2) for l in range(7)])

# %% tags=["hidden-test"] check="depth_read_weights_on_model" points=1
# The function inside a real model (window 2, 5 layers, E = 6): every recorded read's weights.
import torch

from vrs_edu.nn import TinyGPT, TinyGPTConfig
from vrs_edu.nn.layers import rms_norm

_m = TinyGPT(TinyGPTConfig(vocab_size=30, n_layers=5, d_model=24, n_heads=2, block_size=8,
                           depth_mixer="shortswa", depth_window=2, seed=21, stream_start="embedding"))
_g = torch.Generator().manual_seed(22)
with torch.no_grad():
    for _p in (_m.depth.q_proj, _m.depth.k_proj):
        _p.weight.normal_(0.0, 0.4, generator=_g)
_tr = _m(torch.randint(0, 30, (2, 8), generator=torch.Generator().manual_seed(21)), trace=True).trace
_w = [a + b for a, b in zip(_tr.layers("attn.out"), _tr.layers("mlp.out"))]
_x = torch.stack([_tr["embed"]] + [_tr[f"blocks.{l}.resid_pre"] + _w[l] for l in range(5)])[:, 1, 6]
with torch.no_grad():
    _pat = depth_read_weights(rms_norm(_x), 2, _m.depth.q_proj.weight, _m.depth.k_proj.weight)
for _l in range(6):
    _rec = _tr[f"depth.{_l}.weights"][1, 6, 0]          # (K_l,): the window's weights, oldest first
    assert torch.allclose(_pat[_l, max(0, _l - 1):_l + 1], _rec, atol=1e-5), \
        f"row {_l} differs from the weights of the model's depth read at layer {_l}"
    assert _pat[_l, :max(0, _l - 1)].abs().sum() == 0 and _pat[_l, _l + 1:].abs().sum() == 0, \
        f"row {_l} gives weight to layers outside its window"
True
