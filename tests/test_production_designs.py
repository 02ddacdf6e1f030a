"""Specifications of the 2026 production designs in ``vrs_edu.nn``: K = V attention, cross-layer KV sharing,
per-layer and value embeddings, hyper-connections (HC and mHC), exclusive self-attention.

Each test states a known input and the value it must give: from a hand computation, the paper's definition, or the
official ``transformers`` module with the same weights (tiny random configurations, float32). The parity tests import
transformers inside the test and are skipped, with the reason, when it is missing.

What the official code allows to isolate, and what it does not:

* K = V: ``Gemma4TextAttention`` of a global layer with ``attention_k_eq_v=True``, called alone. Isolated.
* KV sharing: the storing layer's and a reusing layer's ``Gemma4TextAttention``, called in order with the same
  ``shared_kv_states`` dict, as ``Gemma4TextModel.forward`` calls them. Isolated at the attention level (the
  rest of a Gemma 4 decoder layer — four norms, MLP, layer scalar — is not part of the idea and is not compared).
* Per-layer embeddings: Gemma 3n's ``get_per_layer_inputs`` + ``project_per_layer_inputs`` on a tiny
  ``Gemma3nTextModel``, and Gemma 4's per-layer path in ``Gemma4TextDecoderLayer.forward`` with the attention and
  MLP contributions zeroed (``post_attention_layernorm`` and ``post_feedforward_layernorm`` gains set to 0). Gemma
  3n's *layer-level* path is not compared: it runs after AltUp's predict/correct and writes into AltUp streams 1..n-1,
  which cannot be separated from AltUp without reimplementing it.
* Value embeddings (nanochat, modded-nanogpt) have no transformers module: hand computation only.
* mHC: ``DeepseekV4HyperConnection`` alone (pre, post, comb, the collapsed input), ``DeepseekV4HyperHead`` (the
  final collapse), and one whole ``DeepseekV4DecoderLayer`` (two hyper-connection steps) with its attention and MoE
  replaced by small fixed stand-ins.
* HC (Zhu et al.) and XSA have no transformers module: the paper's definition by hand.
"""
import math
import os

import pytest
import torch
import torch.nn.functional as F

from vrs_edu.nn.hyper_connections import HyperConnection, HyperHead, ManifoldHyperConnection, sinkhorn
from vrs_edu.nn.k_eq_v import KEqVAttention
from vrs_edu.nn.kv_sharing import (KVSharingAttention, cla_donors, gemma4_donors, kv_cache_bytes_per_token,
                                   run_shared_stack)
from vrs_edu.nn.layer_embeddings import PerLayerEmbeddings, PerLayerInput, ValueEmbedding
from vrs_edu.nn.layers import RoPE
from vrs_edu.nn.xsa import ExclusiveSelfAttention, exclude_self_value

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

PARITY_TOL = 1e-5          # max |Δ| between our module and the official one, float32, same weights
D, H, HKV, DH, T, B = 16, 2, 1, 8, 6, 2


def randomise(module: torch.nn.Module, seed: int) -> torch.nn.Module:
    """Every parameter from N(0, 0.3²) (norm gains around 1), so that no test passes by zeros or ones."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.3 + (1.0 if "norm" in name else 0.0))
    return module


def gemma4_config(**overrides):
    pytest.importorskip("transformers", reason="parity with Gemma 4 needs transformers (real-model extra)")
    from transformers.models.gemma4.configuration_gemma4 import Gemma4TextConfig

    rope = {"rope_type": "default", "rope_theta": 10_000.0}   # full-width RoPE, base 10,000, as vrs_edu.nn.RoPE
    kw = dict(vocab_size=32, hidden_size=D, intermediate_size=32, num_hidden_layers=1, num_attention_heads=H,
              num_key_value_heads=HKV, head_dim=DH, global_head_dim=DH, num_global_key_value_heads=HKV,
              layer_types=["full_attention"], hidden_size_per_layer_input=0,
              rope_parameters={"full_attention": rope, "sliding_attention": rope})
    cfg = Gemma4TextConfig(**{**kw, **overrides})
    cfg._attn_implementation = "sdpa"      # mask None + is_causal: plain causal attention
    return cfg


def gemma4_rope(cfg, x):
    from transformers.models.gemma4.modeling_gemma4 import Gemma4TextRotaryEmbedding

    return Gemma4TextRotaryEmbedding(cfg)(x, torch.arange(x.size(1))[None], "full_attention")


# ---------------------------------------------------------------------------------------------------- 1. K = V

def test_k_eq_v_values_are_the_gain_free_rms_norm_of_the_key_projection_by_hand():
    """x = [[3, 4]], W_K = I, one head of width 2: k_raw = (3, 4), RMS = sqrt((9 + 16) / 2), v = (3, 4) / 3.5355."""
    att = KEqVAttention(d_model=2, n_heads=1, n_kv_heads=1, head_dim=2)
    with torch.no_grad():
        att.k_proj.weight.copy_(torch.eye(2))
        att.k_norm.weight.copy_(torch.tensor([5.0, -7.0]))   # the key's gain must NOT reach the value
    _, k, v = att.project(torch.tensor([[[3.0, 4.0]]]), RoPE(2, 4))
    rms = math.sqrt((9 + 16) / 2 + 1e-6)
    assert torch.allclose(v[0, 0, 0], torch.tensor([3 / rms, 4 / rms]), atol=1e-6)
    assert torch.allclose(k[0, 0, 0], torch.tensor([5 * 3 / rms, -7 * 4 / rms]), atol=1e-5)   # position 0: no turn
    assert not any("v_proj" in n for n, _ in att.named_parameters())


def test_k_eq_v_values_carry_no_position_while_keys_are_rotated():
    """The same token at positions 0 and 3: its value is identical, its key is not (V is taken before RoPE)."""
    att = randomise(KEqVAttention(D, H, HKV, DH), 1)
    x = torch.randn(1, 1, D).expand(1, 4, D)
    _, k, v = att.project(x, RoPE(DH, 8))
    assert torch.equal(v[..., 0, :], v[..., 3, :])
    assert not torch.allclose(k[..., 0, :], k[..., 3, :], atol=1e-3)


def test_k_eq_v_rejects_a_wrong_width_in_one_line():
    with pytest.raises(ValueError, match=r"x must be \(B, T, D=16\), got shape \(2, 3, 8\)"):
        KEqVAttention(D, H, HKV, DH)(torch.zeros(2, 3, 8), RoPE(DH, 8))


def test_k_eq_v_matches_gemma4_global_attention():
    from transformers.models.gemma4.modeling_gemma4 import Gemma4TextAttention

    cfg = gemma4_config(attention_k_eq_v=True)
    theirs = randomise(Gemma4TextAttention(cfg, 0), 2).eval()
    assert theirs.v_proj is None and theirs.use_alternative_attention
    ours = KEqVAttention(D, H, HKV, DH, eps=cfg.rms_norm_eps)
    missing, unexpected = ours.load_state_dict(theirs.state_dict(), strict=False)
    assert not missing and set(unexpected) <= {"v_norm.weight"}          # v_norm has no weight: nothing left out
    x = torch.randn(B, T, D, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        want, _ = theirs(x, gemma4_rope(cfg, x), None, {})
        got = ours(x, RoPE(DH, T))
    assert (got - want).abs().max() <= PARITY_TOL


# ---------------------------------------------------------------------------------------------------- 2. KV sharing

def test_donor_plans_of_cla_and_gemma4():
    assert cla_donors(4, 2) == [0, 0, 2, 2] and cla_donors(3, 1) == [0, 1, 2]
    assert gemma4_donors(["sliding", "full"] * 3, 2) == [0, 1, 2, 3, 2, 3]
    assert gemma4_donors(["full"] * 4, 2) == [0, 1, 1, 1]
    with pytest.raises(ValueError, match="num_kv_shared_layers must be in 0..3"):
        gemma4_donors(["full"] * 4, 4)


def test_a_sharing_layer_attends_over_the_donors_kv_by_hand():
    rope = RoPE(DH, T)
    donor = randomise(KVSharingAttention(D, H, HKV, DH, owns_kv=True), 4)
    sharer = randomise(KVSharingAttention(D, H, HKV, DH, owns_kv=False), 5)
    assert {n.split(".")[0] for n, _ in sharer.named_parameters()} == {"q_proj", "q_norm", "o_proj"}
    g = torch.Generator().manual_seed(6)
    x0, x1 = torch.randn(B, T, D, generator=g), torch.randn(B, T, D, generator=g)
    outs, cache = run_shared_stack([donor, sharer], [0, 0], [x0, x1], rope)
    k, v = cache[0]
    assert list(cache) == [0]                                         # the sharer stored nothing
    # by hand: the sharer's own queries, the donor's K and V, softmax without 1/sqrt(Dh), W_O
    q = rope(F.rms_norm(sharer.q_proj(x1).view(B, T, H, DH).transpose(1, 2), (DH,), sharer.q_norm.weight, 1e-6))
    scores = q @ k.transpose(-1, -2) + torch.full((T, T), float("-inf")).triu(1)
    z = scores.softmax(-1) @ v                                        # H = 2 query heads read the one kv head
    want = sharer.o_proj(z.transpose(1, 2).reshape(B, T, H * DH))
    assert (outs[1] - want).abs().max() <= 1e-5
    _, kv_again = sharer(x1, rope, cache[0])
    assert kv_again[0] is k and kv_again[1] is v                      # the pair passes through untouched


def test_kv_cache_bytes_per_token_count_only_the_donor_layers():
    """4 layers, the last 2 sharing, Hkv = 1, Dh = 8, float32: 2 (K and V) · 1 · 8 · 4 bytes · 2 layers = 128."""
    rope = RoPE(DH, T)
    donors = gemma4_donors(["full"] * 4, 2)
    layers = [KVSharingAttention(D, H, HKV, DH, owns_kv=d == l) for l, d in enumerate(donors)]
    _, cache = run_shared_stack(layers, donors, [torch.randn(1, T, D)] * 4, rope)
    stored = sum(t[0, :, 0].numel() * t.element_size() for kv in cache.values() for t in kv)   # one token's bytes
    assert kv_cache_bytes_per_token(donors, HKV, DH, 4) == stored == 128
    assert kv_cache_bytes_per_token(cla_donors(4, 1), HKV, DH, 4) == 256   # without sharing: twice as much


def test_kv_sharing_rejects_a_sharer_without_kv_in_one_line():
    sharer = KVSharingAttention(D, H, HKV, DH, owns_kv=False)
    with pytest.raises(ValueError, match=r"kv must be the donor's \(k, v\), each \(1, 1, 6, 8\).*got None"):
        sharer(torch.zeros(1, T, D), RoPE(DH, T))


def test_kv_sharing_matches_gemma4_store_and_reuse_layers():
    from transformers.models.gemma4.modeling_gemma4 import Gemma4TextAttention

    cfg = gemma4_config(num_hidden_layers=4, layer_types=["full_attention"] * 4, num_kv_shared_layers=2)
    assert cfg.kv_sharing_modes == [None, "store", "reuse", "reuse"]
    assert gemma4_donors(cfg.layer_types, cfg.num_kv_shared_layers) == [0, 1, 1, 1]
    store, reuse = (randomise(Gemma4TextAttention(cfg, i), 7 + i).eval() for i in (1, 2))
    assert not hasattr(reuse, "k_proj")
    donor, sharer = KVSharingAttention(D, H, HKV, DH, True), KVSharingAttention(D, H, HKV, DH, False)
    for ours, theirs in ((donor, store), (sharer, reuse)):
        missing, unexpected = ours.load_state_dict(theirs.state_dict(), strict=False)
        assert not missing and not unexpected
    g = torch.Generator().manual_seed(9)
    x1, x2 = torch.randn(B, T, D, generator=g), torch.randn(B, T, D, generator=g)
    shared, pos = {}, gemma4_rope(cfg, x1)
    with torch.no_grad():
        want1, _ = store(x1, pos, None, shared)
        want2, _ = reuse(x2, pos, None, shared)
        (got1, got2), _ = run_shared_stack([donor, sharer], [0, 0], [x1, x2], RoPE(DH, T))
    assert max((got1 - want1).abs().max(), (got2 - want2).abs().max()) <= PARITY_TOL


# ---------------------------------------------------------------------------------------- 3. layer and value embeddings

def test_per_layer_input_by_hand():
    """D = 2, P = 1, gate = [1, 0], proj = [[1], [1]]: with p_l = 2 the added vector is RMSNorm((a, a)) = (1, 1)
    whatever a = 2·GELU(h_0) > 0 is; p_l = 0 adds nothing at all."""
    ple = PerLayerInput(d_model=2, d_layer=1)
    with torch.no_grad():
        ple.gate.weight.copy_(torch.tensor([[1.0, 0.0]]))
        ple.proj.weight.copy_(torch.tensor([[1.0], [1.0]]))
    h = torch.tensor([[[0.7, -3.0]]])
    assert torch.allclose(ple(h, torch.tensor([[[2.0]]])), h + 1.0, atol=1e-5)
    assert torch.equal(ple(h, torch.zeros(1, 1, 1)), h)


def test_per_layer_embeddings_by_hand():
    """One layer, P = 2, D = 2, W_m = 0: p = (0 + E[idx]·sqrt(2)) / sqrt(2) = E[idx]; with E = 0 and W_m = I,
    p = RMSNorm(e / sqrt(2)) / sqrt(2)."""
    pe = PerLayerEmbeddings(vocab_size=3, n_layers=1, d_model=2, d_layer=2)
    idx, e = torch.tensor([[2]]), torch.tensor([[[3.0, 4.0]]])
    with torch.no_grad():
        pe.model_proj.weight.zero_()
        pe.embed.weight.copy_(torch.tensor([[0.0, 0.0], [0.0, 0.0], [1.5, -2.0]]))
    assert torch.allclose(pe(idx, e)[0, 0, 0], torch.tensor([1.5, -2.0]), atol=1e-6)
    with torch.no_grad():
        pe.model_proj.weight.copy_(torch.eye(2))
        pe.embed.weight.zero_()
    assert torch.allclose(pe(idx, e)[0, 0, 0], torch.tensor([3.0, 4.0]) / math.sqrt(12.5) / math.sqrt(2), atol=1e-6)


def test_value_embedding_adds_the_gated_token_row_by_hand():
    """Gate weights 0: g = 2·sigmoid(0) = 1, so v gains exactly E[idx]; gate weights pushing the logit to -inf: 0."""
    ve = ValueEmbedding(vocab_size=4, n_kv_heads=1, head_dim=2, gate_channels=2)
    with torch.no_grad():
        ve.table.weight.copy_(torch.arange(8.0).view(4, 2))
        ve.gate.weight.zero_()
    v, x, idx = torch.zeros(1, 1, 1, 2), torch.tensor([[[1.0, 1.0, 9.0]]]), torch.tensor([[3]])
    assert torch.equal(ve(v, x, idx)[0, 0, 0], torch.tensor([6.0, 7.0]))
    with torch.no_grad():
        ve.gate.weight.fill_(-100.0)
    assert ve(v, x, idx).abs().max() < 1e-30
    with pytest.raises(ValueError, match=r"idx must lie in 0..3, got 4..4"):
        ve(v, x, torch.tensor([[4]]))


def test_per_layer_embeddings_match_gemma3n():
    pytest.importorskip("transformers", reason="parity with Gemma 3n needs transformers (real-model extra)")
    from transformers.models.gemma3n.configuration_gemma3n import Gemma3nTextConfig
    from transformers.models.gemma3n.modeling_gemma3n import Gemma3nTextModel

    L, P, V = 3, 4, 32
    cfg = Gemma3nTextConfig(vocab_size=V, vocab_size_per_layer_input=V, hidden_size=D, hidden_size_per_layer_input=P,
                            intermediate_size=32, num_hidden_layers=L, num_attention_heads=H, num_key_value_heads=HKV,
                            head_dim=DH, laurel_rank=4, num_kv_shared_layers=0, activation_sparsity_pattern=[0.0] * L,
                            layer_types=["full_attention"] * L)
    model = Gemma3nTextModel(cfg).eval()
    ours = randomise(PerLayerEmbeddings(V, L, D, P, eps=cfg.rms_norm_eps), 10)
    with torch.no_grad():
        model.embed_tokens_per_layer.weight.copy_(ours.embed.weight)
        model.per_layer_model_projection.weight.copy_(ours.model_proj.weight)
        model.per_layer_projection_norm.weight.copy_(ours.proj_norm.weight)
        idx = torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(11))
        e = model.embed_tokens(idx)                                # Gemma's main embedding, scaled by sqrt(D)
        want = model.project_per_layer_inputs(e, model.get_per_layer_inputs(idx))
        got = ours(idx, e)
    assert got.shape == want.shape == (B, T, L, P)
    assert (got - want).abs().max() <= PARITY_TOL


def test_per_layer_input_matches_gemma4_decoder_layer_with_attention_and_mlp_silenced():
    from transformers.models.gemma4.modeling_gemma4 import Gemma4TextDecoderLayer

    P = 4
    cfg = gemma4_config(hidden_size_per_layer_input=P, vocab_size_per_layer_input=32)
    layer = randomise(Gemma4TextDecoderLayer(cfg, 0), 12).eval()
    ours = PerLayerInput(D, P, eps=cfg.rms_norm_eps)
    with torch.no_grad():
        layer.post_attention_layernorm.weight.zero_()     # attention adds 0
        layer.post_feedforward_layernorm.weight.zero_()   # the MLP adds 0: the layer is h + PLE(h)
        ours.gate.weight.copy_(layer.per_layer_input_gate.weight)
        ours.proj.weight.copy_(layer.per_layer_projection.weight)
        ours.post_norm.weight.copy_(layer.post_per_layer_input_norm.weight)
        g = torch.Generator().manual_seed(13)
        h, p_l = torch.randn(B, T, D, generator=g), torch.randn(B, T, P, generator=g)
        want = layer(h, p_l, shared_kv_states={}, position_embeddings=gemma4_rope(cfg, h), attention_mask=None)
        got = ours(h, p_l)
    assert (got - want).abs().max() <= PARITY_TOL


# ------------------------------------------------------------------------------------------------ 4. hyper-connections

def test_sinkhorn_gives_a_doubly_stochastic_matrix():
    logits = torch.randn(5, 4, 4, generator=torch.Generator().manual_seed(14), dtype=torch.float64)
    m = sinkhorn(logits, iters=20, eps=1e-9)
    assert (m >= 0).all()
    assert (m.sum(-1) - 1).abs().max() <= 1e-6 and (m.sum(-2) - 1).abs().max() <= 1e-6
    # DeepSeek-V4's own eps = 1e-6 costs each column sum s / (s + 1e-6): 1 - 1e-6 at most, in float32 too
    m32 = sinkhorn(logits.float(), iters=20, eps=1e-6)
    assert (m32.sum(-1) - 1).abs().max() <= 2e-6 and (m32.sum(-2) - 1).abs().max() <= 2e-6


def test_sinkhorn_keeps_a_permutation_and_rejects_a_non_square_input():
    perm = torch.eye(3)[[2, 0, 1]]
    assert (sinkhorn(perm * 30.0, iters=20, eps=0.0) - perm).abs().max() <= 1e-6
    with pytest.raises(ValueError, match=r"logits must be \(\.\.\., n, n\), got shape \(2, 3\)"):
        sinkhorn(torch.zeros(2, 3))


def test_hyper_connection_at_init_is_the_identity_path():
    """Zhu et al.'s init at layer k = 5 with n = 4: the block reads stream 5 mod 4 = 1, the streams pass unchanged,
    and the block's output is added to every stream with weight 1."""
    n = 4
    hc = HyperConnection(D, n, layer_idx=5)
    Hs = torch.randn(B, T, n, D, generator=torch.Generator().manual_seed(15))
    h_in, mixed, beta = hc.read(Hs)
    assert torch.equal(h_in, Hs[..., 1, :]) and torch.equal(mixed, Hs) and torch.equal(beta, torch.ones(B, T, n))
    h_out = torch.randn(B, T, D)
    assert torch.equal(hc.write(h_out, mixed, beta), Hs + h_out[..., None, :])
    # n = 1 with the embedding as the stream: exactly the Pre-Norm residual x + f(x)
    hc1 = HyperConnection(D, 1, layer_idx=0)
    x = Hs[..., :1, :]
    h_in, mixed, beta = hc1.read(x)
    assert torch.equal(hc1.write(torch.tanh(h_in), mixed, beta)[..., 0, :], x[..., 0, :] + torch.tanh(x[..., 0, :]))


def test_hyper_connection_rejects_streams_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"streams must be \(B, T, n=4, D=16\), got shape \(2, 6, 16\)"):
        HyperConnection(D, 4, 0).read(torch.zeros(B, T, D))


def test_manifold_hyper_connection_comb_is_doubly_stochastic():
    mhc = randomise(ManifoldHyperConnection(D, 4), 16)
    _, comb, _ = mhc(torch.randn(B, T, 4, D))
    assert (comb >= 0).all()
    assert (comb.sum(-1) - 1).abs().max() <= 2e-6 and (comb.sum(-2) - 1).abs().max() <= 2e-6


def deepseek_v4_config(n):
    pytest.importorskip("transformers", reason="parity with DeepSeek-V4 needs transformers (real-model extra)")
    from transformers.models.deepseek_v4.configuration_deepseek_v4 import DeepseekV4Config

    return DeepseekV4Config(hidden_size=D, hc_mult=n, num_hidden_layers=1, vocab_size=16, num_attention_heads=2,
                            head_dim=8, q_lora_rank=8, n_routed_experts=2, num_experts_per_tok=1,
                            moe_intermediate_size=8, o_groups=1, o_lora_rank=8, index_n_heads=1, index_head_dim=8,
                            index_topk=4)


def test_manifold_hyper_connection_matches_deepseek_v4():
    from transformers.models.deepseek_v4.modeling_deepseek_v4 import DeepseekV4HyperConnection

    n = 3
    cfg = deepseek_v4_config(n)
    theirs = randomise(DeepseekV4HyperConnection(cfg), 17)
    ours = ManifoldHyperConnection(D, n, cfg.hc_sinkhorn_iters, cfg.hc_eps, cfg.rms_norm_eps)
    ours.load_state_dict(theirs.state_dict())
    Hs = torch.randn(B, T, n, D, generator=torch.Generator().manual_seed(18))
    with torch.no_grad():
        diffs = [(a - b).abs().max() for a, b in zip(ours(Hs), theirs(Hs))]   # post, comb, collapsed
    assert max(diffs) <= PARITY_TOL


def test_hyper_head_matches_deepseek_v4():
    from transformers.models.deepseek_v4.modeling_deepseek_v4 import DeepseekV4HyperHead

    n = 3
    cfg = deepseek_v4_config(n)
    theirs = randomise(DeepseekV4HyperHead(cfg), 26)
    ours = HyperHead(D, n, cfg.hc_eps, cfg.rms_norm_eps)
    ours.load_state_dict(theirs.state_dict())
    Hs = torch.randn(B, T, n, D, generator=torch.Generator().manual_seed(27))
    with torch.no_grad():
        assert (ours(Hs) - theirs(Hs)).abs().max() <= PARITY_TOL


class _Stand(torch.nn.Module):
    """A fixed block standing in for DeepSeek-V4's attention (returns a pair) or its MoE (takes input_ids)."""

    def __init__(self, seed: int, pair: bool):
        super().__init__()
        self.w = torch.randn(D, D, generator=torch.Generator().manual_seed(seed)) / math.sqrt(D)
        self.pair = pair

    def forward(self, x, **kwargs):
        y = torch.tanh(x @ self.w)
        return (y, None) if self.pair else y


def test_one_decoder_layer_of_hyper_connection_steps_matches_deepseek_v4():
    from transformers.models.deepseek_v4.modeling_deepseek_v4 import DeepseekV4DecoderLayer

    n = 3
    cfg = deepseek_v4_config(n)
    layer = DeepseekV4DecoderLayer(cfg, 0)
    randomise(layer.attn_hc, 19), randomise(layer.ffn_hc, 20)
    layer.self_attn, layer.mlp = _Stand(21, pair=True), _Stand(22, pair=False)
    attn_hc, ffn_hc = (ManifoldHyperConnection(D, n, cfg.hc_sinkhorn_iters, cfg.hc_eps, cfg.rms_norm_eps)
                       for _ in range(2))
    attn_hc.load_state_dict(layer.attn_hc.state_dict())
    ffn_hc.load_state_dict(layer.ffn_hc.state_dict())
    Hs = torch.randn(B, T, n, D, generator=torch.Generator().manual_seed(23))
    with torch.no_grad():
        want = layer(Hs)
        got = Hs
        for hc, block in ((attn_hc, layer.self_attn), (ffn_hc, layer.mlp)):   # the RMSNorms' gains are 1 at init
            post, comb, h_in = hc(got)
            out = block(F.rms_norm(h_in, (D,), eps=cfg.rms_norm_eps))
            got = hc.write(got, out[0] if isinstance(out, tuple) else out, post, comb)
    assert (got - want).abs().max() <= PARITY_TOL


# --------------------------------------------------------------------------------------------------------- 5. XSA

def test_xsa_output_is_orthogonal_to_the_own_value_by_hand():
    """y = (3, 4), v = (1, 0): z = (3, 4) - 3·(1, 0) = (0, 4)."""
    z = exclude_self_value(torch.tensor([3.0, 4.0]).view(1, 1, 1, 2), torch.tensor([1.0, 0.0]).view(1, 1, 1, 2))
    assert torch.equal(z.flatten(), torch.tensor([0.0, 4.0]))
    g = torch.Generator().manual_seed(24)
    y, v = torch.randn(B, H, T, DH, generator=g, dtype=torch.float64), torch.randn(B, H, T, DH, generator=g,
                                                                                 dtype=torch.float64)
    z = exclude_self_value(y, v)
    want = y - (y * v).sum(-1, keepdim=True) / (v * v).sum(-1, keepdim=True) * v    # the paper's formula
    assert (z - want).abs().max() <= 1e-12
    assert (z * v).sum(-1).abs().max() <= 1e-6


def test_xsa_leaves_an_already_orthogonal_output_and_a_zero_value_alone():
    y, v = torch.tensor([0.0, 2.0, -1.0]).view(1, 1, 1, 3), torch.tensor([5.0, 0.0, 0.0]).view(1, 1, 1, 3)
    assert torch.equal(exclude_self_value(y, v), y)
    z = exclude_self_value(y, torch.zeros_like(v))
    assert not z.isnan().any() and torch.equal(z, y)


def test_xsa_attention_output_before_w_o_is_orthogonal_to_each_tokens_value():
    att = randomise(ExclusiveSelfAttention(D, H), 25).double()
    x = torch.randn(B, T, D, dtype=torch.float64)
    z = torch.linalg.solve(att.o_proj.weight, att(x).transpose(-1, -2)).transpose(-1, -2)   # undo W_O
    v = att.v_proj(x)
    assert (z.view(B, T, H, DH) * v.view(B, T, H, DH)).sum(-1).abs().max() <= 1e-6
    with pytest.raises(ValueError, match=r"x must be \(B, T, D=16\)"):
        att(torch.zeros(B, T, 4, dtype=torch.float64))
