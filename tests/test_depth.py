"""Depth mixers as specifications: the ShortSWA duality, each mixer's initialisation, each router's definition.

Sources: duality and the window W_{t,l} — Zhang, arXiv 2603.16039, sec. 2.2; DenseFormer arXiv 2402.02622; ELC-BERT
arXiv 2311.02265; Attention Residuals arXiv 2603.15031; DeepCrossAttention arXiv 2502.06785; MUDDFormer arXiv
2502.12170; Vertical Attention OpenReview A6uabXKiXc; Attention Residuals per stream over sub-layer outputs
(RiddleHe/nanochat ``gpt_attn_res_qkv.py``); Depth-Attention arXiv 2606.05014 (its authors' code). Inits: only
DenseFormer's DWA (α_ii = 1, others 0) starts as the standard residual; ELC-BERT's zero logits and Attention
Residuals' zero pseudo-query start as the uniform mean of their sources, and are tested against that definition.
"""
import math

import pytest
import torch
from einops import rearrange

from vrs_edu.chapters.ch05_depth_as_sequence.readout import depth_weight_matrices, states_from_trace
from vrs_edu.nn import TinyGPT, TinyGPTConfig
from vrs_edu.nn.attention import attend, attention_pattern
from vrs_edu.nn.depth_mixer import MIXERS, ROUTERS
from vrs_edu.nn.depth_weights import AttentionResiduals, ELCBERT
from vrs_edu.nn.depth_routers import DeepCrossAttention, MUDDFormer, VerticalAttention
from vrs_edu.nn.shortswa import ShortSWADepth, depth_short_swa, short_swa
from vrs_edu.nn.depth import make_depth_mixer
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
                                          ("mudd", None), ("scalar_gain", None)])
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
    L, sub = model.cfg.n_layers, model.depth.sublayers
    for l in range(1, L):
        for s in ("q", "k", "v"):
            w = tr[f"depth.{l}.weights_{s}"]
            # (B, T, sources), source axis last: l + 1 layers, or 2l + 1 sub-layer outputs (attnres_qkv)
            assert w.shape == (2, 8, 2 * l + 1 if sub else l + 1)
        assert not torch.allclose(tr[f"blocks.{l}.attn.q_in"], tr[f"blocks.{l}.attn.v_in"])
    mats = depth_weight_matrices(tr.tensors, L, sublayers=sub)
    assert {"q", "k", "v"} <= set(mats)
    n1 = 3 if sub else 2                                                        # the sources block 1 reads
    assert mats["v"].shape == (L + 1, 2 * L + 1 if sub else L + 1)
    assert torch.isnan(mats["v"][1, n1:]).all() and not torch.isnan(mats["v"][L - 1, :n1]).any()


# --- Attention Residuals per stream, over sub-layer outputs (the bank-of-values authors' instrument) -------------

def _sublayer_outputs(tr, upto_block: int) -> list[torch.Tensor]:
    """[embedding, a_0, m_0, ..., a_{l-1}, m_{l-1}] from a trace: what each sub-layer wrote."""
    out = [tr["embed"]]
    for j in range(upto_block):
        out += [tr[f"blocks.{j}.attn.out"], tr[f"blocks.{j}.mlp.out"]]
    return out


def _attn_res(w, ys):
    """Σ_j softmax_j(w · RMSNorm(y_j)) y_j, written out (arXiv 2603.15031; RiddleHe/nanochat ``_attn_res``)."""
    a = torch.softmax(torch.stack([(rms_norm(y) * w).sum(-1) for y in ys], -1), -1)
    return sum(a[..., j:j + 1] * ys[j] for j in range(len(ys)))


def test_attnres_qkv_q_k_v_and_the_mlp_each_read_their_own_softmax_over_sub_layer_outputs():
    model = _model("attnres_qkv", seed=4)
    _perturb(model.depth, seed=4)                                             # every query off its zero init
    tr = model(IDX, trace=True).trace
    L, pq = model.cfg.n_layers, model.depth.pseudo_query
    assert [tuple(w.shape) for w in pq] == [(1, 16)] + [(4, 16)] * (L - 1) + [(1, 16)]
    for l in range(1, L):
        ys = _sublayer_outputs(tr, l)                                         # 2l + 1 sources
        for c, s in enumerate("qkv"):
            assert torch.allclose(tr[f"blocks.{l}.attn.{s}_in"], rms_norm(_attn_res(pq[l][c], ys)), atol=1e-12)
    for l in range(L):                                                        # the MLP reads a_l too: 2l + 2
        ys = _sublayer_outputs(tr, l) + [tr[f"blocks.{l}.attn.out"]]
        mlp_in = rms_norm(_attn_res(pq[l][-1], ys))
        assert torch.allclose(tr[f"blocks.{l}.mlp.out"], model.blocks[l].mlp(mlp_in), atol=1e-12)
    final = _attn_res(pq[L][0], _sublayer_outputs(tr, L))                      # 2L + 1 sources
    assert torch.allclose(tr["resid_final"], final, atol=1e-12)
    assert torch.allclose(model(IDX).logits, model.lm_head(rms_norm(final)), atol=1e-10)
    # block 0 has one source: q, k and v read the embedding
    assert torch.allclose(tr["blocks.0.attn.q_in"], rms_norm(tr["embed"]), atol=1e-12)


def test_attnres_qkv_starts_as_the_uniform_mean_of_its_sources():
    tr = _model("attnres_qkv")(IDX, trace=True).trace
    for l in range(1, 4):
        w = tr[f"depth.{l}.weights_v"]
        assert torch.allclose(w, torch.full_like(w, 1 / (2 * l + 1)))
        ys = torch.stack(_sublayer_outputs(tr, l))
        assert torch.allclose(tr[f"blocks.{l}.attn.v_in"], rms_norm(ys.mean(0)), atol=1e-12)
    assert torch.allclose(tr["depth.4.weights_r"], torch.full((2, 8, 9), 1 / 9))


def test_sublayer_weight_matrices_name_attention_and_mlp_sources():
    from vrs_edu.chapters.ch05_depth_as_sequence.readout import sublayer_sources
    assert sublayer_sources(2) == ["embedding", "attn 0", "mlp 0", "attn 1", "mlp 1"]
    tr = _model("attnres_qkv")(IDX, trace=True).trace
    mats = depth_weight_matrices(tr.tensors, 4, sublayers=True)
    assert set(mats) == {"q", "k", "v", "r"} and mats["r"].shape == (5, 9)
    assert torch.allclose(mats["v"][2, :5], torch.full((5,), 0.2)) and torch.isnan(mats["v"][2, 5:]).all()
    assert torch.allclose(mats["r"][2, :6], torch.full((6,), 1 / 6)) and torch.isnan(mats["r"][2, 6:]).all()
    assert torch.isnan(mats["q"][0]).all() and torch.isnan(mats["q"][4]).all()  # no q read in block 0, nor at L


# --- Depth-Attention (arXiv 2606.05014): V read over depth inside attention, no parameters ------------------------

def test_depth_attention_reads_every_stride_th_earlier_layer():
    mixer = make_depth_mixer("depth_attention", 8, 16)
    assert mixer.stride == 4                                                   # L // 2, as the released configs
    assert [mixer.sources(l) for l in range(8)] == [[], [0], [0], [0], [0], [0, 4], [0, 4], [0, 4]]
    assert make_depth_mixer("depth_attention", 4, 16).sources(3) == [0, 2]


def test_depth_attention_mixes_the_cached_values_by_its_query_one_position_at_a_time():
    model = _model("depth_attention", seed=5)
    tr = model(IDX, trace=True).trace
    L, H, Dh = 4, 2, 8
    S = {l: model.depth.sources(l) for l in range(L)}                          # stride 2: {1: [0], 2: [0], 3: [0, 2]}
    assert torch.equal(tr["blocks.0.attn.v"], tr["blocks.0.attn.v_self"])      # layer 0 reads nothing
    for l in range(1, L):
        q, k_own, v_own = (tr[f"blocks.{l}.attn.{n}"] for n in ("q", "k", "v_self"))
        got, w = tr[f"blocks.{l}.attn.v"], tr[f"depth.{l}.weights"]
        for b in range(2):
            for t in range(8):
                for h in range(H):
                    keys = [tr[f"blocks.{j}.attn.k"][b, h, t] for j in S[l]] + [k_own[b, h, t]]
                    vals = [tr[f"blocks.{j}.attn.v"][b, h, t] for j in S[l]] + [v_own[b, h, t]]  # cached ṽ_j
                    a = torch.softmax(torch.stack([q[b, h, t] @ kj for kj in keys]) / math.sqrt(Dh), 0)
                    assert torch.allclose(got[b, h, t], sum(ai * vj for ai, vj in zip(a, vals)), atol=1e-12)
                    assert torch.allclose(w[b, h, t, S[l] + [l]], a, atol=1e-12)
        outside = [j for j in range(l + 1) if j not in S[l] + [l]]
        assert (w[..., outside] == 0).all()                                    # layer 1 of layer 3: not a source


def test_depth_attention_adds_no_parameters_and_with_all_weight_on_itself_is_the_plain_transformer():
    base, da = _model("residual", seed=6), _model("depth_attention", seed=6)
    assert [(n, p.shape) for n, p in da.named_parameters()] == [(n, p.shape) for n, p in base.named_parameters()]
    assert da.depth.coefficients() == []
    on_self = lambda w: torch.nn.functional.one_hot(torch.full(w.shape[:-1], w.size(-1) - 1), w.size(-1)).to(w.dtype)
    hooks = {f"depth.{l}.weights": on_self for l in range(1, 4)}
    assert torch.allclose(da(IDX, hooks=hooks).logits, base(IDX).logits, atol=1e-12)
    assert not torch.allclose(da(IDX).logits, base(IDX).logits, atol=1e-6)      # unpatched, it reads other layers


def test_depth_attention_refuses_what_would_change_nothing():
    with pytest.raises(ValueError, match="value_residual='svformer' with depth_mixer='depth_attention'"):
        TinyGPTConfig(vocab_size=50, d_model=16, n_layers=4, n_heads=2, value_residual="svformer",
                      depth_mixer="depth_attention").validate()
    with pytest.raises(ValueError, match="depth_mixer='depth_attention' with n_layers=1"):
        TinyGPTConfig(vocab_size=50, d_model=16, n_layers=1, n_heads=2, depth_mixer="depth_attention").validate()
    with pytest.raises(ValueError, match="layer 2 reads the cache of layers 0..1, got 1"):
        make_depth_mixer("depth_attention", 4, 16).read_values(2, *[torch.zeros(1, 1, 2, 4)] * 3, cache=[None])


# --- the scalar-gain control -----------------------------------------------------------------------------------

def test_scalar_gain_reads_the_latest_state_times_one_learned_scalar_per_block():
    model = _model("scalar_gain", seed=7)
    with torch.no_grad():
        for i, g in enumerate(model.depth.gain):
            g.fill_(0.5 + i)
    assert len(model.depth.gain) == 3 and model.depth.coefficients() == list(model.depth.gain)  # blocks 1..L-1
    tr = model(IDX, trace=True).trace
    for l in range(1, 4):
        prev = tr[f"blocks.{l - 1}.resid_pre"] + tr[f"blocks.{l - 1}.attn.out"] + tr[f"blocks.{l - 1}.mlp.out"]
        assert torch.allclose(tr[f"blocks.{l}.resid_pre"], (l - 0.5) * prev, atol=1e-12)   # g_l · X_l
    last = tr["blocks.3.resid_pre"] + tr["blocks.3.attn.out"] + tr["blocks.3.mlp.out"]
    assert torch.allclose(tr["resid_final"], last, atol=1e-12)                 # the read-out is not scaled
    mats = depth_weight_matrices(tr.tensors, 4)["r"]
    assert mats[2, 2] == 1.5 and (mats[2, :2] == 0).all()                      # all weight on the latest state


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
