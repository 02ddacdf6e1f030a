"""Specifications of the minimal implementations in vrs_edu.nn: each test pins a module to its equation."""
import math

import pytest
import torch
import torch.nn.functional as F

from vrs_edu.nn import (CausalSelfAttention, RoPE, TinyGPT, TinyGPTConfig, attend, attention_pattern, inject_x0,
                        mix_values, rms_norm)
from vrs_edu.nn.value_residual import ValueResidual
from vrs_edu.nn.x0 import X0Injection, default_x0_layers


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# --- attention -------------------------------------------------------------------------------------------------

def test_pattern_by_hand_for_two_positions():
    # q = k = [[1, 0], [0, 1]] (one head, Dh = 2): row 0 sees only itself; row 1 sees scores [0, 1] / sqrt(2).
    q = torch.tensor([[[[1.0, 0.0], [0.0, 1.0]]]])
    p = attention_pattern(q, q)
    e = math.exp(1 / math.sqrt(2))
    assert torch.allclose(p[0, 0], torch.tensor([[1.0, 0.0], [1 / (1 + e), e / (1 + e)]]))


def test_pattern_is_causal_and_rows_sum_to_one():
    q, k = randn(2, 3, 5, 4, seed=1), randn(2, 3, 5, 4, seed=2)
    p = attention_pattern(q, k)
    assert torch.all(p.triu(1) == 0)
    assert torch.allclose(p.sum(-1), torch.ones(2, 3, 5))


def test_attention_matches_scaled_dot_product_attention():
    q, k, v = (randn(2, 4, 7, 8, seed=s) for s in (3, 4, 5))
    ours = attend(attention_pattern(q, k), v)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert torch.allclose(ours, ref, atol=1e-6)


def test_module_matches_sdpa_and_can_patch_pattern_and_values():
    torch.manual_seed(0)
    attn = CausalSelfAttention(16, 4)
    x = randn(2, 6, 16, seed=6)
    out, v = attn(x)
    q = attn.split_heads(attn.q_proj(x))
    k = attn.split_heads(attn.k_proj(x))
    ref = attn.o_proj(attn.merge_heads(F.scaled_dot_product_attention(q, k, v, is_causal=True)))
    assert torch.allclose(out, ref, atol=1e-6)

    from vrs_edu.nn.hooks import HookPoints
    uniform = torch.ones(6, 6).tril()
    uniform = (uniform / uniform.sum(-1, keepdim=True)).expand(2, 4, 6, 6)
    hp = HookPoints({"attn.pattern": lambda p: uniform}, record=True)
    out2, v2 = attn(x, hook=hp.scoped("attn"))
    # with a uniform causal pattern, z at position i is the mean of v_0..v_i
    expected_z = torch.cumsum(v2, dim=2) / torch.arange(1, 7).view(1, 1, 6, 1)
    assert torch.allclose(hp.store["attn.z"], expected_z, atol=1e-6)


def test_pattern_input_errors_name_the_problem():
    with pytest.raises(ValueError, match="same shape"):
        attention_pattern(randn(1, 1, 3, 2), randn(1, 1, 4, 2))
    with pytest.raises(ValueError, match="temperature"):
        attention_pattern(randn(1, 1, 3, 2), randn(1, 1, 3, 2), temperature=0)
    with pytest.raises(ValueError, match="divisible"):
        CausalSelfAttention(10, 3)


def test_rope_preserves_norms_and_makes_scores_depend_on_offset_only():
    rope = RoPE(8, 16)
    x = randn(1, 1, 16, 8, seed=7)
    assert torch.allclose(rope(x).norm(dim=-1), x.norm(dim=-1), atol=1e-5)
    q = randn(8, seed=8).expand(1, 1, 16, 8)
    k = randn(8, seed=9).expand(1, 1, 16, 8)
    s = (rope(q) @ rope(k).transpose(-2, -1))[0, 0]
    assert torch.allclose(s[5, 3], s[10, 8], atol=1e-5)  # same offset 2, same score
    with pytest.raises(ValueError, match="exceeds"):
        rope(randn(1, 1, 17, 8))


# --- value residual --------------------------------------------------------------------------------------------

def test_mix_values_equation_and_baseline_limit():
    v, v1 = randn(1, 2, 3, 4, seed=10), randn(1, 2, 3, 4, seed=11)
    assert torch.allclose(mix_values(v, v1, 0.0, 1.0), v)
    assert torch.allclose(mix_values(v, v1, 0.5, 0.5), (v + v1) / 2)
    assert torch.allclose(mix_values(v, v1, 0.3, 2.0), 0.3 * v1 + 2.0 * v)


def test_resformer_mixes_before_the_weighted_sum_and_neutreno_after():
    v, v1 = randn(1, 1, 4, 2, seed=12), randn(1, 1, 4, 2, seed=13)
    p = attention_pattern(randn(1, 1, 4, 2, seed=14), randn(1, 1, 4, 2, seed=15))
    res = ValueResidual("resformer")
    assert torch.allclose(attend(p, res.mix(v, v1)), 0.5 * p @ v1 + 0.5 * p @ v)
    neu = ValueResidual("neutreno")
    z = attend(p, neu.mix(v, v1))
    assert torch.allclose(neu.after_attention(z, v, v1), p @ v + 0.4 * (v1 - v))  # arXiv 2312.00751
    assert torch.allclose(ValueResidual("svformer").mix(v, v1), v1)


def test_learnable_lambdas_at_0_and_1_equal_the_baseline_model():
    idx = torch.randint(0, 64, (2, 12), generator=torch.Generator().manual_seed(0))
    base = TinyGPT(TinyGPTConfig(vocab_size=64, d_model=32, n_layers=3, n_heads=2, block_size=16))
    var = TinyGPT(TinyGPTConfig(vocab_size=64, d_model=32, n_layers=3, n_heads=2, block_size=16,
                                value_residual="learnable"))
    with torch.no_grad():
        for b in var.blocks[1:]:
            b.value_residual.lambda_1.fill_(0.0)
            b.value_residual.lambda_2.fill_(1.0)
    assert torch.equal(base(idx).logits, var(idx).logits)
    assert set(var.coefficients()) == {f"blocks.{l}.value_residual.lambda_{i}" for l in (1, 2) for i in (1, 2)}


def test_svformer_has_fewer_parameters_by_l_minus_1_d_squared():
    kw = dict(vocab_size=64, d_model=32, n_layers=5, n_heads=2, block_size=16)
    base, sv = TinyGPT(TinyGPTConfig(**kw)), TinyGPT(TinyGPTConfig(**kw, value_residual="svformer"))
    assert base.num_params() - sv.num_params() == (5 - 1) * 32 * 32


def test_value_residual_mode_errors():
    with pytest.raises(ValueError, match="value_residual must be one of"):
        ValueResidual("resformr")
    with pytest.raises(ValueError, match="v_first"):
        ValueResidual("resformer").mix(randn(1, 1, 2, 2), None)


# --- x0 injection / bank of values -----------------------------------------------------------------------------

def test_input_mixing_equals_mixing_projections():
    # alpha W(x) + beta W(x0) == W(alpha x + beta x0) for a bias-free W (the reason x0.py mixes inputs).
    W = torch.nn.Linear(8, 8, bias=False)
    x, x0 = randn(2, 3, 8, seed=16), randn(2, 3, 8, seed=17)
    assert torch.allclose(W(inject_x0(x, x0, 0.7, 1.9)), 0.7 * W(x) + 1.9 * W(x0), atol=1e-6)


def test_default_x0_layers_are_the_last_third():
    assert default_x0_layers(12) == (8, 9, 10, 11)
    assert default_x0_layers(6) == (4, 5)


@pytest.mark.parametrize("mode", ["qkv", "shared"])
def test_x0_injection_at_init_equals_baseline_exactly(mode):
    kw = dict(vocab_size=64, d_model=32, n_layers=6, n_heads=2, block_size=16)
    idx = torch.randint(0, 64, (2, 12), generator=torch.Generator().manual_seed(1))
    base, var = TinyGPT(TinyGPTConfig(**kw)), TinyGPT(TinyGPTConfig(**kw, x0_mode=mode))
    assert torch.equal(base(idx).logits, var(idx).logits)
    names = {"qkv": {"alpha_q", "beta_q", "alpha_k", "beta_k", "alpha_v", "beta_v"}, "shared": {"alpha", "beta"}}[mode]
    assert {n.split(".")[-1] for n in var.coefficients()} == names


def test_beta_v_one_alpha_v_zero_makes_values_context_free():
    kw = dict(vocab_size=64, d_model=32, n_layers=3, n_heads=2, block_size=16, x0_mode="qkv", x0_layers=(2,))
    m = TinyGPT(TinyGPTConfig(**kw))
    with torch.no_grad():
        m.blocks[2].x0.alpha_v.fill_(0.0)
        m.blocks[2].x0.beta_v.fill_(1.0)
    idx = torch.randint(0, 64, (1, 10), generator=torch.Generator().manual_seed(2))
    tr = m(idx, trace=True).trace
    expected = m.blocks[2].attn.split_heads(m.blocks[2].attn.v_proj(rms_norm(m.wte(idx))))
    assert torch.allclose(tr["blocks.2.attn.v"], expected, atol=1e-6)


def test_bank_table_starts_as_x0_times_baseline_w_v():
    kw = dict(vocab_size=64, d_model=32, n_layers=3, n_heads=2, block_size=16, x0_layers=(2,))
    base = TinyGPT(TinyGPTConfig(**kw))
    bank = TinyGPT(TinyGPTConfig(**kw, x0_mode="bank"))
    sub = TinyGPT(TinyGPTConfig(**kw, x0_mode="substitute_v"))
    table = rms_norm(base.wte.weight) @ base.blocks[2].attn.v_proj.weight.T
    assert torch.allclose(bank.blocks[2].x0.E_v, table, atol=1e-6)
    assert bank.blocks[2].attn.v_proj is None       # no W_V, no V cache in a bank layer
    idx = torch.randint(0, 64, (2, 12), generator=torch.Generator().manual_seed(3))
    assert torch.allclose(bank(idx).logits, sub(idx).logits, atol=1e-5)  # first forward = substitute_v


def test_x0_errors():
    with pytest.raises(ValueError, match="x0 mode"):
        X0Injection("none", 8)
    with pytest.raises(ValueError, match="x0_layers"):
        TinyGPT(TinyGPTConfig(x0_mode="qkv", x0_layers=(9,)))


# --- TinyGPT ---------------------------------------------------------------------------------------------------

def test_residual_stream_is_the_running_sum_of_block_outputs():
    m = TinyGPT(TinyGPTConfig(vocab_size=64, d_model=32, n_layers=4, n_heads=2, block_size=16))
    idx = torch.randint(0, 64, (2, 12), generator=torch.Generator().manual_seed(4))
    tr = m(idx, trace=True).trace
    total = tr["embed"] + sum(tr[f"blocks.{l}.attn.out"] + tr[f"blocks.{l}.mlp.out"] for l in range(4))
    assert torch.allclose(tr["resid_final"], total, atol=1e-5)
    assert tr.stack("resid").shape == (5, 2, 12, 32)


def test_loss_is_cross_entropy_and_untrained_loss_is_near_log_vocab():
    m = TinyGPT(TinyGPTConfig(vocab_size=64, d_model=32, n_layers=2, n_heads=2, block_size=16))
    idx = torch.randint(0, 64, (4, 16), generator=torch.Generator().manual_seed(5))
    out = m(idx, idx)
    assert torch.allclose(out.loss, F.cross_entropy(out.logits.flatten(0, 1), idx.flatten()))
    assert abs(out.loss.item() - math.log(64)) < 0.1


def test_hooks_patch_and_unknown_hook_is_an_error():
    m = TinyGPT(TinyGPTConfig(vocab_size=64, d_model=32, n_layers=2, n_heads=2, block_size=16))
    idx = torch.randint(0, 64, (1, 8), generator=torch.Generator().manual_seed(6))
    zeroed = m(idx, hooks={"blocks.1.mlp.out": torch.zeros_like}, trace=True).trace
    assert torch.equal(zeroed["blocks.1.mlp.out"], torch.zeros(1, 8, 32))
    with pytest.raises(ValueError, match="does not have"):
        m(idx, hooks={"blocks.7.attn.pattern": lambda p: p})
    with pytest.raises(ValueError, match="must return a tensor of shape"):
        m(idx, hooks={"blocks.0.attn.pattern": lambda p: p[..., :-1]})


def test_model_input_errors():
    m = TinyGPT(TinyGPTConfig(vocab_size=64, d_model=32, n_layers=2, n_heads=2, block_size=16))
    with pytest.raises(ValueError, match="token ids must be in 0..63"):
        m(torch.tensor([[1, 64]]))
    with pytest.raises(ValueError, match="exceeds block_size=16"):
        m(torch.zeros(1, 17, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\(B, T\)"):
        m(torch.zeros(17, dtype=torch.long))
    with pytest.raises(ValueError, match="divisible"):
        TinyGPTConfig(d_model=30, n_heads=4).validate()
