"""Depth mixers as specifications: the ShortSWA duality, each mixer's initialisation, each router's definition.

Sources: duality and the window W_{t,l} — Zhang, arXiv 2603.16039, sec. 2.2; DenseFormer arXiv 2402.02622; ELC-BERT
arXiv 2311.02265; Attention Residuals arXiv 2603.15031; DeepCrossAttention arXiv 2502.06785; MUDDFormer arXiv
2502.12170; Vertical Attention OpenReview A6uabXKiXc. Inits: only DenseFormer's DWA (α_ii = 1, others 0) starts as
the standard residual; ELC-BERT's zero logits and Attention Residuals' zero pseudo-query start as the uniform mean of
their sources, and are tested against that definition.
"""
import math

import pytest
import torch
from einops import rearrange

from vrs_edu.lab.depth_readout import depth_weight_matrices, states_from_trace
from vrs_edu.nn import TinyGPT, TinyGPTConfig
from vrs_edu.nn.attention import attend, attention_pattern
from vrs_edu.nn.depth import (
    MIXERS, ROUTERS, AttentionResiduals, DeepCrossAttention, ELCBERT, MUDDFormer, ShortSWADepth, VerticalAttention,
    depth_short_swa, make_depth_mixer, short_swa,
)
from vrs_edu.nn.layers import rms_norm



@pytest.fixture(autouse=True)
def _float64():
    """Compare two computations in float64, so that a disagreement is a bug and not rounding noise."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


def _weights(D, E, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(E, D, generator=g) / math.sqrt(D) for _ in range(3)]


def explicit_depth_swa(stack, K, w_q, w_k, w_v, n_heads=1):
    """The paper's equation, one token and one layer at a time: z_t^(l) = softmax(q Kmatᵀ/sqrt(d_k)) Vmat over the
    window W_{t,l} = [h_t^(max(0, l-K+1)); ...; h_t^(l)]."""
    L1, B, T, D = stack.shape
    E = w_q.size(0)
    dh = E // n_heads
    out = torch.zeros(L1, B, T, E)
    for b in range(B):
        for t in range(T):
            for l in range(L1):
                W = stack[max(0, l - K + 1): l + 1, b, t]           # (K_l, D)
                for h in range(n_heads):
                    sl = slice(h * dh, (h + 1) * dh)
                    q = w_q[sl] @ stack[l, b, t]                     # (dh,)
                    kmat, vmat = W @ w_k[sl].T, W @ w_v[sl].T        # (K_l, dh)
                    a = torch.softmax(kmat @ q / math.sqrt(dh), 0)
                    out[l, b, t, sl] = a @ vmat
    return out


# --- the duality -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("K,n_heads,E", [(1, 1, 8), (2, 1, 8), (3, 2, 8), (4, 1, 8), (9, 2, 8), (3, 2, 4)])
def test_depth_short_swa_is_short_swa_on_the_transposed_tensor_and_the_papers_equation(K, n_heads, E):
    L1, B, T, D = 6, 2, 3, 8
    stack = torch.randn(L1, B, T, D, generator=torch.Generator().manual_seed(K))
    w = _weights(D, E, seed=K)                          # E < D: a low-rank read, as ShortSWADepth uses
    depth = depth_short_swa(stack, K, *w, n_heads=n_heads)
    seq = short_swa(rearrange(stack, "l b t d -> (b t) l d"), K, *w, n_heads=n_heads)   # depth as the sequence axis
    assert torch.allclose(depth, rearrange(seq, "(b t) l d -> l b t d", b=B), atol=1e-12)
    assert torch.allclose(depth, explicit_depth_swa(stack, K, *w, n_heads), atol=1e-12)


def test_full_window_is_plain_causal_attention_over_depth():
    L1, B, T, D = 7, 2, 4, 8
    stack = torch.randn(L1, B, T, D, generator=torch.Generator().manual_seed(1))
    w_q, w_k, w_v = _weights(D, D, seed=1)
    full = depth_short_swa(stack, L1, w_q, w_k, w_v)
    # the package's plain causal attention, with depth as its "T" axis: (B·T, 1 head, L+1, D)
    q, k, v = (rearrange(stack @ w.T, "l b t d -> (b t) 1 l d") for w in (w_q, w_k, w_v))
    plain = rearrange(attend(attention_pattern(q, k), v), "(b t) 1 l d -> l b t d", b=B)
    assert torch.allclose(full, plain, atol=1e-12)
    # and a window larger than the depth changes nothing
    assert torch.allclose(depth_short_swa(stack, 100, w_q, w_k, w_v), full, atol=1e-12)


def test_window_one_reads_only_the_current_layer():
    stack = torch.randn(5, 1, 2, 4)
    w = [torch.eye(4)] * 3
    assert torch.allclose(depth_short_swa(stack, 1, *w), stack)


def test_short_swa_rejects_bad_input():
    x = torch.randn(2, 5, 8)
    w = _weights(8, 8)
    with pytest.raises(ValueError, match="window"):
        short_swa(x, 0, *w)
    with pytest.raises(ValueError, match="n_heads"):
        short_swa(x, 2, *w, n_heads=3)
    with pytest.raises(ValueError, match="w_k"):
        short_swa(x, 2, w[0], torch.randn(8, 5), w[2])
    with pytest.raises(ValueError, match=r"\(N, S, D\)"):
        short_swa(torch.randn(5, 8), 2, *w)
    with pytest.raises(ValueError, match=r"\(L\+1, B, T, D\)"):
        depth_short_swa(x, 2, *w)


# --- the family inside TinyGPT -----------------------------------------------------------------------------------

def _model(mixer, window=None, seed=0, **kw):
    cfg = TinyGPTConfig(vocab_size=50, d_model=16, n_layers=4, n_heads=2, block_size=8, depth_mixer=mixer,
                        depth_window=window, seed=seed, **kw)
    return TinyGPT(cfg)


IDX = torch.randint(50, (2, 8), generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("mixer,window", [("denseformer", None), ("shortswa", 2), ("shortswa", None), ("dca", None),
                                          ("mudd", None)])
def test_identity_inits_reproduce_the_standard_residual_exactly(mixer, window):
    base = _model("residual")(IDX, trace=True)
    out = _model(mixer, window)(IDX, trace=True)
    assert torch.equal(out.logits, base.logits)
    assert torch.equal(out.trace.stack("resid"), base.trace.stack("resid"))


def test_vertical_attention_init_reproduces_the_standard_residual():
    # uniform weights give (l+1)·mean(y_j) = X_l; the sum is the same number up to float rounding
    base, va = _model("residual")(IDX), _model("vertical")(IDX)
    assert torch.allclose(va.logits, base.logits, atol=1e-10)


def _sources(n=4, B=2, T=3, D=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(B, T, D, generator=g) for _ in range(n)]


@pytest.mark.parametrize("cls", [ELCBERT, AttentionResiduals])
def test_elcbert_and_attnres_start_as_the_uniform_mean_of_their_sources(cls):
    # the papers' inits: zero logits / zero pseudo-query give uniform weights, not the standard residual
    mixer = cls(n_layers=5, d_model=8)
    outputs = _sources(4)
    seen = {}
    out = mixer(3, outputs, outputs, hook=lambda name, t: seen.setdefault(name, t))
    w = seen["depth.3.weights"]
    assert w.shape[-1] == 4
    assert torch.allclose(w, torch.full_like(w, 0.25))
    assert torch.allclose(w.sum(-1), torch.ones(()))
    assert torch.allclose(out.resid, torch.stack(outputs).mean(0), atol=1e-12)


def test_attnres_follows_its_definition_with_a_trained_pseudo_query():
    mixer = AttentionResiduals(n_layers=5, d_model=8)
    with torch.no_grad():
        mixer.pseudo_query[2].normal_()
    ys = _sources(4)
    w = torch.softmax(torch.stack([(rms_norm(y) * mixer.pseudo_query[2]).sum(-1) for y in ys], -1), -1)
    expected = sum(w[..., j:j + 1] * ys[j] for j in range(4))
    assert torch.allclose(mixer(3, ys, ys).resid, expected, atol=1e-12)


def test_incremental_shortswa_in_the_model_equals_the_batch_computation_on_the_final_stack():
    for window in (2, 3, None):
        model = _model("shortswa", window, seed=3)
        with torch.no_grad():
            model.depth.o_proj.weight.normal_(0, 0.5)       # make the depth read matter
        tr = model(IDX, trace=True).trace
        L = model.cfg.n_layers
        # the states X_0..X_L a decoder holds: X_0 = embedding, X_{j+1} = (input of block j) + (what block j wrote)
        states = [tr["embed"]] + [tr[f"blocks.{j}.resid_pre"] + tr[f"blocks.{j}.attn.out"] + tr[f"blocks.{j}.mlp.out"]
                                  for j in range(L)]
        assert torch.equal(states_from_trace(tr.tensors, L), torch.stack(states))
        d = model.depth
        z = depth_short_swa(rms_norm(torch.stack(states)), window or L + 1, d.q_proj.weight, d.k_proj.weight,
                            d.v_proj.weight)                                     # all layers at once
        reads = torch.stack(states) + d.o_proj(z)                                # (L+1, B, T, D)
        assert torch.allclose(tr.stack("resid"), reads, atol=1e-10)


def test_shortswa_depth_rejects_a_window_that_cannot_be_filled():
    with pytest.raises(ValueError, match="1..L\\+1"):
        ShortSWADepth(n_layers=4, d_model=8, window=6)
    with pytest.raises(ValueError, match="divisible"):
        ShortSWADepth(n_layers=4, d_model=8, n_heads=3, d_attn=8)


def test_make_depth_mixer_registers_every_mixer_and_rejects_bad_names():
    for name in MIXERS:
        assert make_depth_mixer(name, 4, 16) is not None
    assert set(ROUTERS) <= set(MIXERS)
    with pytest.raises(ValueError, match="depth_mixer must be one of"):
        make_depth_mixer("hyper", 4, 16)
    with pytest.raises(ValueError, match="only to depth_mixer='shortswa'"):
        make_depth_mixer("dca", 4, 16, window=2)


# --- the routers: each against its own definition ----------------------------------------------------------------

def _perturb(mixer, seed=0):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in mixer.parameters():
            p.add_(torch.randn(p.shape, generator=g) * 0.5)
    return mixer


def test_dca_is_three_grn_v3_combiners():
    mixer = _perturb(DeepCrossAttention(n_layers=5, d_model=8))
    ys = _sources(4)
    out = mixer(3, ys, ys)
    b, w, gamma = mixer.dwa[2], mixer.dyn_proj[2], mixer.gamma[2]               # (3, 4, D), (3, D), ()
    assert gamma != 0                                                           # _perturb moved it off its init
    for c, s in enumerate(("q", "k", "v")):
        # x^c = Σ_j (b_{c,j} + gamma·ReLU(w_c · RMSNorm(y_j))) ⊙ y_j, the per-feature GRN-v3 weight
        expected = sum((b[c, j] + gamma * torch.relu((rms_norm(ys[j]) * w[c]).sum(-1, keepdim=True))) * ys[j]
                       for j in range(4))
        assert torch.allclose(getattr(out, s), expected, atol=1e-12)
    assert torch.equal(out.resid, out.q)
    six = _sources(6, seed=1)
    final = mixer(5, six, six)                                                 # the read-out: one combiner, r only
    assert final.q is None and final.k is None and final.v is None


def test_dca_input_dependent_weights_learn():
    """The input-dependent part must get a gradient: gamma at the first step, w once gamma is off 0 (with w at 0
    behind a ReLU, as the reference code starts it, neither would ever move)."""
    model = _model("dca")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(2):
        opt.zero_grad()
        model(IDX, IDX).loss.backward()
        gates = torch.stack([g.grad for g in model.depth.gamma])
        assert (gates != 0).all()
        w_grad = torch.stack([w.grad.abs().sum() for w in model.depth.dyn_proj])
        assert (w_grad == 0).all() if step == 0 else (w_grad > 0).all()
        opt.step()


def test_mudd_is_static_plus_dynamic_dense_weights_per_stream():
    mixer = _perturb(MUDDFormer(n_layers=5, d_model=8))
    xs = _sources(4)
    seen = {}
    out = mixer(3, xs, xs, hook=lambda name, t: seen.setdefault(name, t))
    hidden = torch.nn.functional.gelu(rms_norm(xs[-1]) @ mixer.dyn_up[2].weight.T)
    dyn = (hidden @ mixer.dyn_down[2].weight.T).reshape(2, 3, 4, 4)           # (B, T, C, n)
    for c, s in enumerate(("q", "k", "v", "r")):
        a = mixer.dwa[2][c] + mixer.gamma[2] * dyn[:, :, c]                    # (B, T, n): per position
        assert torch.allclose(seen[f"depth.3.weights_{s}"], a, atol=1e-12)
        read = out.resid if s == "r" else getattr(out, s)
        assert torch.allclose(read, sum(a[..., j:j + 1] * xs[j] for j in range(4)), atol=1e-12)


def test_vertical_attention_is_a_softmax_over_depth_per_stream():
    mixer = _perturb(VerticalAttention(n_layers=5, d_model=8))
    ys = _sources(4)
    states = _sources(4, seed=2)
    seen = {}
    out = mixer(3, states, ys, hook=lambda name, t: seen.setdefault(name, t))
    q = rms_norm(states[-1]) @ mixer.query_proj[2].weight.T                    # (B, T, 3·d_key)
    keys = [rms_norm(y) @ mixer.key_proj[2].weight.T for y in ys]
    for c, s in enumerate(("q", "k", "v")):
        qc = q[..., c * 4:(c + 1) * 4]
        w = torch.softmax(torch.stack([(qc * k).sum(-1) / 2.0 for k in keys], -1), -1)
        assert torch.allclose(seen[f"depth.3.weights_{s}"], w, atol=1e-12)
        assert torch.allclose(w.sum(-1), torch.ones(()))
        assert torch.allclose(getattr(out, s), 4 * sum(w[..., j:j + 1] * ys[j] for j in range(4)), atol=1e-12)
    assert torch.equal(out.resid, states[-1])                                   # the stream itself is untouched


@pytest.mark.parametrize("mixer", ROUTERS)
def test_routers_give_q_k_v_their_own_inputs_and_weights(mixer):
    model = _model(mixer, seed=1)
    _perturb(model.depth, seed=1)
    tr = model(IDX, trace=True).trace
    L = model.cfg.n_layers
    for l in range(1, L):
        for s in ("q", "k", "v"):
            w = tr[f"depth.{l}.weights_{s}"]
            assert w.shape == (2, 8, l + 1)                                     # (B, T, sources), source axis last
        assert not torch.allclose(tr[f"blocks.{l}.attn.q_in"], tr[f"blocks.{l}.attn.v_in"])
    mats = depth_weight_matrices(tr.tensors, L)
    assert {"q", "k", "v"} <= set(mats)
    assert mats["v"].shape == (L + 1, L + 1)
    assert torch.isnan(mats["v"][1, 2:]).all() and not torch.isnan(mats["v"][L - 1, :L]).any()


@pytest.mark.parametrize("mixer", ROUTERS)
def test_patching_the_v_weights_onto_the_embedding_makes_v_read_x0(mixer):
    # the hook points carry the weights that are used: put all of V's weight on source 0 (the embedding)
    model = _model(mixer, seed=2)
    _perturb(model.depth, seed=2)
    l = 3
    onto_embedding = lambda w: torch.nn.functional.one_hot(torch.zeros(w.shape[:-1], dtype=torch.long),
                                                           w.size(-1)).to(w.dtype)
    tr = model(IDX, trace=True, hooks={f"depth.{l}.weights_v": onto_embedding}).trace
    if mixer == "dca":   # DCA adds a static per-feature deviation to the shared weight: remove it for this check
        with torch.no_grad():
            model.depth.dwa[l - 1].copy_(model.depth.dwa[l - 1].mean(-1, keepdim=True).expand_as(model.depth.dwa[l - 1]))
        tr = model(IDX, trace=True, hooks={f"depth.{l}.weights_v": onto_embedding}).trace
    # v_in = RMSNorm(c · embedding) for some c > 0: the direction of x0 (the magnitude differs only by RMSNorm's eps)
    unit = torch.nn.functional.normalize
    assert torch.allclose(unit(tr[f"blocks.{l}.attn.v_in"], dim=-1), unit(tr["x0"], dim=-1), atol=1e-9)
    assert not torch.allclose(unit(tr[f"blocks.{l}.attn.q_in"], dim=-1), unit(tr["x0"], dim=-1), atol=1e-3)


def test_depth_weight_matrices_place_the_shortswa_window_on_the_source_layers():
    model = _model("shortswa", 2, seed=0)
    tr = model(IDX, trace=True).trace
    m = depth_weight_matrices(tr.tensors, 4)["r"]
    assert torch.allclose(m[0, 0], torch.tensor(1.0))
    for l in range(1, 5):
        assert torch.allclose(m[l, l - 1:l + 1].sum(), torch.tensor(1.0))       # the window: l-1 and l
        assert (m[l, : l - 1] == 0).all()                                         # nothing older is read
    residual = _model("residual")
    assert depth_weight_matrices(residual(IDX, trace=True).trace.tensors, 4) == {}  # no weights
