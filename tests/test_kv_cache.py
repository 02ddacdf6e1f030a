"""KV-cache bytes: the cache built from a real forward pass is complete, and its size matches the formulas
(baseline 2·L·D per token, SVFormer (L+1)·D, bank of values (2L − n_bank)·D plus |V|·D per bank table; the BoV
paper's ΔKV = n_bank · d · (T − |V|), arXiv 2606.02780 sec. 4; Depth-Attention, arXiv 2606.05014: the baseline's
2·L·D, its depth-mixed values stored in place of the own ones, and nothing else needed)."""
import math

import pytest
import torch

from vrs_edu.lab.kv_cache import (ALL_VARIANTS, DEPTH_ATTENTION, VARIANTS, bov_saving, build_kv_cache, cache_bytes,
                                  kv_bytes_per_token, measure, measured_saving, n_bank_layers, value_source)
from vrs_edu.nn import TinyGPT, TinyGPTConfig

CFG = TinyGPTConfig(vocab_size=48, d_model=16, n_layers=6, n_heads=2, block_size=96, seed=0)


def _model(variant):
    return TinyGPT(TinyGPTConfig(**{**CFG.to_dict(), **ALL_VARIANTS[variant]}))


@pytest.mark.parametrize("variant", list(ALL_VARIANTS))
def test_the_cache_holds_everything_the_last_token_needs(variant):
    """Attention of the last position recomputed from the cache alone equals the model's own output."""
    model = _model(variant)
    idx = torch.randint(48, (2, 20), generator=torch.Generator().manual_seed(1))
    cache = build_kv_cache(model, idx)
    tr = model(idx, trace=True).trace
    for l, block in enumerate(model.blocks):
        q = tr[f"blocks.{l}.attn.q"][:, :, -1:]                                  # the new token's query
        v = cache[f"blocks.{l}.v"]
        if v is None:                                                            # bank layer: look the values up
            v = block.x0.bank_values(idx, block.attn.n_heads)
        k = cache[f"blocks.{l}.k"]
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), -1)
        assert torch.allclose(w @ v, tr[f"blocks.{l}.attn.z"][:, :, -1:], atol=1e-6)


def test_which_layers_cache_values():
    assert [value_source(_model("baseline"), l) for l in range(6)] == ["own"] * 6
    assert [value_source(_model("svformer"), l) for l in range(6)] == ["own"] + ["first"] * 5
    assert [value_source(_model("bank"), l) for l in range(6)] == ["own"] * 4 + ["table"] * 2   # last third
    assert [value_source(_model("depth_attention"), l) for l in range(6)] == ["own"] + ["mixed"] * 5
    cache = build_kv_cache(_model("svformer"), torch.zeros(1, 4, dtype=torch.long))
    assert all(cache[f"blocks.{l}.v"] is cache["blocks.0.v"] for l in range(6))              # stored once


@pytest.mark.parametrize("variant", list(ALL_VARIANTS))
def test_measured_bytes_per_token_equal_the_formula_at_every_length(variant):
    rows = [r for r in measure(CFG, [8, 32, 96], batch=2, variants=ALL_VARIANTS) if r["variant"] == variant]
    expected = kv_bytes_per_token(6, 16, variant)
    assert [r["bytes_per_token"] for r in rows] == [expected] * 3
    # by hand for this model (float32, L = 6, D = 16): baseline 2·6·16·4, SVFormer 7·16·4, bank (12 − 2)·16·4,
    # Depth-Attention the baseline's 2·6·16·4
    assert expected == {"baseline": 768, "svformer": 448, "bank": 640, "depth_attention": 768}[variant]


def test_depth_attention_caches_exactly_the_baselines_bytes_and_needs_no_other_state():
    """The new token's depth-mixed values at layer l come from its own q, k, v and the cache entries of earlier
    layers *at its own position*: a decoder needs nothing beyond the KV cache (arXiv 2606.05014, abstract)."""
    rows = measure(CFG, [8, 96], variants={"baseline": {}, **DEPTH_ATTENTION})
    by = {(r["variant"], r["T"]): r["cache_bytes"] for r in rows}
    assert by[("depth_attention", 8)] == by[("baseline", 8)] == 8 * 768                # same bytes, every length
    assert by[("depth_attention", 96)] == by[("baseline", 96)]
    assert _model("depth_attention").num_params() == _model("baseline").num_params()   # and no parameters
    model = _model("depth_attention")
    idx = torch.randint(48, (1, 12), generator=torch.Generator().manual_seed(2))
    cache, tr = build_kv_cache(model, idx), model(idx, trace=True).trace
    for l in range(1, 6):
        q, k, v = (tr[f"blocks.{l}.attn.{n}"][:, :, -1] for n in ("q", "k", "v_self"))   # the new token, fresh
        src = model.depth.sources(l)
        keys = torch.stack([cache[f"blocks.{j}.k"][:, :, -1] for j in src] + [k], -1)      # (B, H, Dh, n)
        vals = torch.stack([cache[f"blocks.{j}.v"][:, :, -1] for j in src] + [v], -1)
        a = torch.softmax((q.unsqueeze(-1) * keys).sum(-2) / math.sqrt(q.size(-1)), -1)   # (B, H, n)
        assert torch.allclose((vals * a.unsqueeze(-2)).sum(-1), cache[f"blocks.{l}.v"][:, :, -1], atol=1e-6)


def test_svformer_halves_the_cache_as_depth_grows():
    ratios = [kv_bytes_per_token(L, 64, "svformer") / kv_bytes_per_token(L, 64) for L in (2, 8, 32)]
    assert ratios == [3 / 4, 9 / 16, 33 / 64]


def test_bank_of_values_breaks_even_at_context_equal_to_the_vocabulary():
    rows = measure(CFG, [16, 48, 96])
    nb = n_bank_layers(6)
    for T in (16, 48, 96):
        assert measured_saving(rows, T) == bov_saving(nb, 16, T, 48) * 4          # float32: 4 bytes a number
    assert measured_saving(rows, 16) < 0 == measured_saving(rows, 48) < measured_saving(rows, 96)
    assert bov_saving(4, 768, 32_768, 32_768) == 0                               # nanochat's vocabulary


def test_cache_bytes_counts_a_shared_tensor_once():
    t = torch.zeros(2, 3)
    assert cache_bytes({"a": t, "b": t, "c": None, "d": torch.zeros(4)}) == 24 + 16


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="variant must be one of .*'depth_attention'"):
        kv_bytes_per_token(6, 16, "gqa")
    with pytest.raises(ValueError, match="n_layers"):
        kv_bytes_per_token(0, 16)
    with pytest.raises(ValueError, match="block_size=96"):
        measure(CFG, [200])
