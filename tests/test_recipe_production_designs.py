"""The 2026 production designs inside TinyGPT (one config field each) and chapter 06's ``production-designs`` recipe.

Known inputs: small TinyGPTs with each design switched on, and the default configs of before the designs existed.
Expected:
* the default models are the models of before, bit for bit in their parameters (sha256 of every name and value,
  computed with the code of before this change) and in their outputs and three training steps (to float rounding);
* each design has its defining property inside TinyGPT: K = V has no W_V and its V is the RMS-normalised key
  projection before RoPE; a KV-sharing layer has no K, V projection and its K, V (and cache entries) are its donor's;
  a value-embedding layer's V gains its table row; the per-layer input is part of what a block writes; mHC's stream
  mixing is doubly stochastic; XSA's output is orthogonal to each token's own value; HC with one stream is the
  plain residual at init;
* the KV-cache bytes per token, from the config and measured from a real cache, equal the hand count;
* invalid values and combinations raise one-line ValueErrors naming the settings;
* the recipe's controls are parameter-matched, and its quick mode stores every declared verdict, the designs' table
  and the step times.
"""
import hashlib
import math

import pytest
import torch
import torch.nn.functional as F

from vrs_edu.chapters.ch06_what_v_reuse_buys import recipe as pd
from vrs_edu.lab.experiments import load_results, run_recipe
from vrs_edu.lab.kv_cache import build_kv_cache, cache_bytes, config_kv_bytes_per_token, value_source
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.presets import scaled_run
from vrs_edu.lab.train import TrainConfig, make_optimizer, param_groups
from vrs_edu.nn import TinyGPT, TinyGPTConfig
from vrs_edu.nn.kv_sharing import cla_donors
from vrs_edu.recipes import RECIPES

SMALL = dict(vocab_size=40, d_model=16, n_layers=6, n_heads=2, block_size=12)
IDX = torch.randint(40, (2, 12), generator=torch.Generator().manual_seed(0))
DESIGNS = {
    "k_eq_v": dict(k_eq_v=True),
    "kv_share": dict(kv_share=(0, 0, 2, 2, 4, 4)),
    "value_embed": dict(value_embed=True),
    "layer_embed": dict(layer_embed=8),
    "mhc": dict(hyper_connections=3),
    "hc": dict(hyper_connections=3, hc_kind="hc"),
    "xsa": dict(xsa=True),
    "mlp_hidden": dict(mlp_hidden=40),
    "k_eq_v+kv_share": dict(k_eq_v=True, kv_share=(0, 0, 2, 2, 4, 4)),
}


def model(**over) -> TinyGPT:
    return TinyGPT(TinyGPTConfig(**{**SMALL, **over}))


# --- the default models are the models of before -----------------------------------------------------------------

# Computed before the designs were added (same script): parameter hash, count, logits on fixed ids, and the losses of
# three AdamW steps (lr 1e-2) on them.
BEFORE = {
    "default": (dict(seed=0), "75ceb0c53ef32ece3626d959581aac17ff94cf9a560c329b3c96f7fa2d30ba25", 327680,
                -0.456973205076622, 4138.969749819842, [5.544496536254883, 4.653226375579834, 4.006967067718506]),
    "word8x64": (dict(vocab_size=2048, d_model=64, n_layers=8, n_heads=4, block_size=64, seed=3),
                 "91a9880fdd6b3c04553ce28674947f49d22f59a1e7e57606cd8515c7b19e6532", 655360, 52.18948873503575,
                 33508.400926919465, [7.628958702087402, 6.589759349822998, 5.752419948577881]),
    "vr_x0": (dict(vocab_size=64, d_model=32, n_layers=4, n_heads=2, block_size=16, value_residual="learnable",
                   x0_mode="qkv", seed=1), "02d1d147bf9b12f154fd1ee47c45ad1ad35a2eafb68ac6f0e6b8033fd95de395", 53260,
              0.14361600363736216, 181.16174604903972, [4.152595520019531, 3.71209979057312, 3.3696258068084717]),
}


@pytest.mark.parametrize("name", list(BEFORE))
def test_the_default_models_are_unchanged(name):
    over, sha, n_params, logit_sum, logit_abs, losses = BEFORE[name]
    cfg = TinyGPTConfig(**over)
    m = TinyGPT(cfg)
    h = hashlib.sha256()
    for n, p in m.named_parameters():
        h.update(n.encode())
        h.update(p.detach().numpy().tobytes())
    assert h.hexdigest() == sha and m.num_params() == n_params
    idx = torch.randint(cfg.vocab_size, (2, cfg.block_size), generator=torch.Generator().manual_seed(7))
    with torch.no_grad():
        logits = m(idx).logits.double()
    assert logits.sum().item() == pytest.approx(logit_sum, abs=1e-3)
    assert logits.abs().sum().item() == pytest.approx(logit_abs, rel=1e-6)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
    got = []
    for _ in range(3):
        loss = m(idx, idx.roll(-1, 1)).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        got.append(loss.item())
    assert got == pytest.approx(losses, abs=1e-5)


# --- every field builds, trains every parameter, and keeps the two attention paths equal --------------------------

@pytest.mark.parametrize("name", list(DESIGNS))
def test_every_design_builds_and_trains_every_parameter(name):
    m = model(**DESIGNS[name])
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    alive = set()
    for _ in range(3):                       # zero-initialised gates and projections open after one step
        opt.zero_grad(set_to_none=True)
        m(IDX, IDX).loss.backward()
        alive |= {n for n, p in m.named_parameters() if p.grad is not None and p.grad.abs().sum() > 0}
        opt.step()
    assert [n for n, _ in m.named_parameters() if n not in alive] == []
    with torch.no_grad():                    # the fused kernel and the hooked path compute the same logits
        assert torch.allclose(m(IDX).logits, m(IDX, trace=True).logits, atol=1e-5)
    groups = param_groups(m)                 # every parameter in exactly one optimizer group
    assert sum(len(ps) for ps in groups.values()) == len(list(m.parameters()))
    make_optimizer(m, TrainConfig())


def test_the_configs_round_trip_through_json_dicts():
    cfg = TinyGPTConfig(**SMALL, kv_share=(0, 0, 2, 2, 4, 4), k_eq_v=True, hyper_connections=2, hc_kind="hc")
    d = {k: list(v) if isinstance(v, tuple) else v for k, v in cfg.to_dict().items()}   # as JSON stores it
    assert TinyGPTConfig.from_dict(d) == cfg


# --- each design's defining property -------------------------------------------------------------------------------

def _heads(x, H):
    B, T, D = x.shape
    return x.view(B, T, H, D // H).transpose(1, 2)


def test_k_eq_v_has_no_w_v_and_its_values_are_the_normalised_key_projection_before_rope():
    m = model(k_eq_v=True)
    assert not any(".v_proj." in n for n, _ in m.named_parameters())
    tr = m(IDX, trace=True).trace
    for l, b in enumerate(m.blocks):
        k_raw = _heads(b.attn.k_proj(tr[f"blocks.{l}.attn.k_in"]), 2)
        assert torch.allclose(tr[f"blocks.{l}.attn.v"], F.rms_norm(k_raw, (8,), eps=1e-6), atol=1e-6)
        assert f"blocks.{l}.attn.v_in" not in tr.names()        # V has no input of its own
    same = torch.full((1, 5), 3)                                  # one token at five positions: one value, five keys
    tr = m(same, trace=True).trace
    v, k = tr["blocks.0.attn.v"], tr["blocks.0.attn.k"]
    assert torch.allclose(v[..., 0, :], v[..., 4, :]) and not torch.allclose(k[..., 0, :], k[..., 4, :], atol=1e-4)


def test_a_sharing_layer_has_no_kv_projection_and_reads_its_donors_kv():
    m = model(kv_share=tuple(cla_donors(6, 2)))
    assert [b.shares_kv for b in m.blocks] == [False, True] * 3
    for b in m.blocks[1::2]:
        assert b.attn.k_proj is None and b.attn.v_proj is None
    tr = m(IDX, trace=True).trace
    for l in (1, 3, 5):
        assert torch.equal(tr[f"blocks.{l}.attn.k"], tr[f"blocks.{l - 1}.attn.k"])
        assert torch.equal(tr[f"blocks.{l}.attn.v"], tr[f"blocks.{l - 1}.attn.v"])
        assert not torch.equal(tr[f"blocks.{l}.attn.q"], tr[f"blocks.{l - 1}.attn.q"])   # its own queries
    cache = build_kv_cache(m, IDX)
    assert [value_source(m, l) for l in range(6)] == ["own", "donor"] * 3
    assert all(cache[f"blocks.{l}.{s}"] is cache[f"blocks.{l - 1}.{s}"] for l in (1, 3, 5) for s in "kv")


def test_the_cache_of_a_sharing_model_holds_what_the_last_token_needs():
    m = model(kv_share=(0, 0, 0, 3, 3, 3))   # Gemma 4's plan: later layers reuse an earlier donor's K, V
    cache = build_kv_cache(m, IDX)
    tr = m(IDX, trace=True).trace
    for l in range(6):
        q = tr[f"blocks.{l}.attn.q"][:, :, -1:]
        w = torch.softmax(q @ cache[f"blocks.{l}.k"].transpose(-2, -1) / math.sqrt(8), -1)
        assert torch.allclose(w @ cache[f"blocks.{l}.v"], tr[f"blocks.{l}.attn.z"][:, :, -1:], atol=1e-6)


def test_value_embeddings_sit_on_alternating_layers_with_the_last_and_add_their_table_row():
    m = model(value_embed=True)
    assert [b.value_embed is not None for b in m.blocks] == [False, True] * 3   # nanochat's has_ve, L = 6
    tr = m(IDX, trace=True).trace
    b = m.blocks[3]
    own = _heads(b.attn.v_proj(tr["blocks.3.attn.v_in"]), 2)
    row = _heads(b.value_embed.table(IDX), 2)               # gate weights 0 at init: g = 2·sigmoid(0) = 1
    assert torch.allclose(tr["blocks.3.attn.v"], own + row, atol=1e-6)


def test_the_per_layer_input_is_part_of_what_each_block_writes():
    m = model(layer_embed=8)
    tr = m(IDX, trace=True).trace
    assert tr["per_layer"].shape == (2, 12, 6, 8)
    for l in range(5):
        write = tr[f"blocks.{l}.attn.out"] + tr[f"blocks.{l}.mlp.out"] + tr[f"blocks.{l}.per_layer.out"]
        assert torch.allclose(tr[f"blocks.{l + 1}.resid_pre"], tr[f"blocks.{l}.resid_pre"] + write, atol=1e-5)


def test_mhc_mixes_the_streams_with_doubly_stochastic_matrices():
    m = model(hyper_connections=4)
    tr = m(IDX, trace=True).trace
    for l in range(6):
        for part in ("attn", "mlp"):
            comb = tr[f"depth.{l}.{part}.comb"]
            assert comb.shape == (2, 12, 4, 4) and (comb > 0).all()
            assert torch.allclose(comb.sum(-2), torch.ones(2, 12, 4), atol=1e-5)     # columns (the last step)
            assert torch.allclose(comb.sum(-1), torch.ones(2, 12, 4), atol=1e-3)     # rows (Sinkhorn's error)
    n_hc = 2 * 6 * ((2 + 4) * 4 * 4 * 16 + (2 + 4) * 4 + 3) + (4 * 4 * 16 + 4 + 1)   # fn, base, scale; the head
    assert m.num_params() - model().num_params() == n_hc


def test_hc_with_one_stream_is_the_plain_residual_at_init():
    """n = 1, A_m = 1, A_r = 1, B = 1, dynamic part 0: H ← h_out + H, the standard residual (same seed, same
    shared weights)."""
    with torch.no_grad():
        assert torch.allclose(model(hyper_connections=1, hc_kind="hc")(IDX).logits, model()(IDX).logits, atol=1e-6)


def test_xsa_output_is_orthogonal_to_each_tokens_own_value():
    m = model(xsa=True)
    tr = m(IDX, trace=True).trace
    for l in range(6):
        dots = (tr[f"blocks.{l}.attn.z"] * tr[f"blocks.{l}.attn.v_mix"]).sum(-1)
        assert dots.abs().max() < 1e-6
    assert m.num_params() == model().num_params()


# --- KV-cache bytes per token -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name, by_hand", [("baseline", 2 * 6 * 16 * 4), ("k_eq_v", 2 * 6 * 16 * 4),
                                           ("kv_share", 2 * 3 * 16 * 4), ("value_embed", 2 * 6 * 16 * 4),
                                           ("layer_embed", 2 * 6 * 16 * 4), ("mhc", 2 * 6 * 16 * 4),
                                           ("xsa", 2 * 6 * 16 * 4), ("k_eq_v+kv_share", 2 * 3 * 16 * 4)])
def test_kv_bytes_per_token_by_hand_from_the_config_and_measured(name, by_hand):
    """float32: 2 (K and V) · layers that compute their own · D · 4 bytes; bf16 half. Measured: the distinct
    tensors of the cache a real forward pass builds, per token."""
    cfg = TinyGPTConfig(**SMALL, **DESIGNS.get(name, {}))
    assert config_kv_bytes_per_token(cfg, 4) == by_hand and config_kv_bytes_per_token(cfg, 2) == by_hand // 2
    assert cache_bytes(build_kv_cache(TinyGPT(cfg), IDX)) / IDX.numel() == by_hand


def test_the_config_formula_agrees_with_svformer_and_the_bank():
    for over, numbers in ((dict(value_residual="svformer"), 7 * 16), (dict(x0_mode="bank"), 10 * 16)):
        cfg = TinyGPTConfig(**SMALL, **over)
        assert config_kv_bytes_per_token(cfg) == numbers * 4 == cache_bytes(build_kv_cache(TinyGPT(cfg), IDX)) / 24


# --- invalid combinations -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("over, named", [
    (dict(kv_share=(0, 0, 2, 2, 4, 4), value_residual="resformer"), ("kv_share", "value_residual='resformer'")),
    (dict(kv_share=(0, 0, 2, 2, 4, 4), depth_mixer="depth_attention"), ("kv_share", "depth_mixer='depth_attention'")),
    (dict(kv_share=(0, 0, 2, 2, 4, 4), value_embed=True), ("kv_share", "value_embed=True")),
    (dict(kv_share=(0, 0, 2, 2, 4, 4), x0_mode="qkv"), ("kv_share", "x0_mode='qkv'")),
    (dict(k_eq_v=True, x0_mode="substitute_v"), ("k_eq_v", "x0_mode='substitute_v'")),
    (dict(k_eq_v=True, depth_mixer="mudd"), ("k_eq_v", "depth_mixer='mudd'")),
    (dict(hyper_connections=2, depth_mixer="denseformer"), ("hyper_connections=2", "depth_mixer='denseformer'")),
    (dict(layer_embed=4, depth_mixer="attnres"), ("layer_embed=4", "depth_mixer='attnres'")),
    (dict(layer_embed=4, hyper_connections=2), ("layer_embed=4", "hyper_connections=2")),
    (dict(kv_share=(0, 1, 2, 3, 4, 5)), ("kv_share", "use None")),
])
def test_combinations_that_cannot_work_are_refused_in_one_line_naming_both(over, named):
    with pytest.raises(ValueError) as e:
        TinyGPTConfig(**SMALL, **over).validate()
    assert all(n in str(e.value) for n in named) and "\n" not in str(e.value), str(e.value)


def test_kv_sharing_beside_x0_on_a_donor_layer_works():
    model(kv_share=(0, 0, 2, 2, 4, 4), x0_mode="qkv", x0_layers=(4,))(IDX, IDX).loss.backward()


# --- the recipe ---------------------------------------------------------------------------------------------------

def test_the_controls_match_the_parameter_counts_of_the_designs():
    _, base, _ = scaled_run(pd.CORPUS["preset"], RunOptions())
    vs = pd.variants(base)
    n = {k: TinyGPT(TinyGPTConfig(**{**base.to_dict(), **v})).num_params() for k, v in vs.items()}
    assert n["control_small"] == n["k_eq_v"] == n["kv_share"] == n["baseline"] - 8 * 64 * 64
    assert abs(n["control_large"] - n["mhc"]) < 2 * 64 * 8                          # one MLP hidden unit
    tables = {k: TinyGPT(TinyGPTConfig(**{**base.to_dict(), **vs[k]})) for k in ("value_embed", "layer_embed")}
    assert (sum(b.value_embed.table.weight.numel() for b in tables["value_embed"].blocks if b.value_embed)
            == tables["layer_embed"].per_layer.embed.weight.numel())              # the table-matched pair
    assert n["xsa"] == n["baseline"] and vs["kv_share"]["kv_share"] == (0, 0, 2, 2, 4, 4, 6, 6)
    assert RECIPES[pd.NAME] is pd.RECIPE and pd.RECIPE.text


@pytest.mark.slow
def test_quick_mode_stores_every_declared_verdict_and_the_designs_table(tmp_path):
    # a quarter of the width and batch, 32-token windows: the file's shape and the designs' table (KV bytes per token,
    # parameter counts) do not depend on the window's length
    options = RunOptions(settings={"d_model": 32, "batch_size": 8, "block_size": 32}, progress=False)
    path = run_recipe(pd.RECIPE, quick=True, seeds=[0], out_dir=tmp_path, options=options)
    r = load_results(pd.NAME, quick=True, out_dir=tmp_path)
    assert path.name == "production-designs.quick.json"
    names = list(pd.variants(scaled_run(pd.CORPUS["preset"], options)[1]))
    assert list(r["corpus"]["runs"]) == names == list(r["designs"]) and set(r["corpus"]["step_seconds"]) == set(names)
    assert [v["name"] for v in r["verdicts"]] == [t.name for t in pd.TESTS]
    for v in r["verdicts"]:
        assert {"name", "claim", "family", "kind", "effect_for_power", "form", "verdict", "mean", "values"} <= set(v)
        assert v["verdict"] in ("undecided", "n/a")            # one seed decides nothing
    assert [p["name"] for p in r["preconditions"]] == ["sub_epoch"] and r["preconditions"][0]["holds"]
    kv = {k: d["kv_bytes_per_token"] for k, d in r["designs"].items()}
    assert kv["baseline"] == {"float32": 2 * 8 * 32 * 4, "bfloat16": 2 * 8 * 32 * 2}
    assert kv["kv_share"]["float32"] == kv["baseline"]["float32"] // 2
    assert all(kv[k] == kv["baseline"] for k in names if k != "kv_share")
    params = {k: d["n_params"] for k, d in r["designs"].items()}
    assert params["k_eq_v"] == params["kv_share"] == params["control_small"] < params["baseline"] == params["xsa"]
    assert r["corpus"]["configs"]["kv_share"]["model"]["kv_share"] == [0, 0, 2, 2, 4, 4, 6, 6]
    assert [x["verdict"] for x in pd.verdicts(r)] == [v["verdict"] for v in r["verdicts"]]   # rejudged the same
