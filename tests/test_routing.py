"""Specifications of chapter 01's and 02's measuring functions (vrs_edu.chapters.ch01_two_axes.readout, vrs_edu.chapters.ch02_qk_routes_v_carries.readout):
each against a hand computation on a small model."""
import math

import pytest
import torch
import torch.nn.functional as F

from vrs_edu.chapters.ch01_two_axes import readout as rs
from vrs_edu.chapters.ch02_qk_routes_v_carries import readout as rt
from vrs_edu.nn import TinyGPT, TinyGPTConfig
from vrs_edu.nn.layers import rms_norm


def make_model(n_layers=3, seed=0, scale=20.0, **kw):
    """A small model whose block outputs are made large (``scale`` × the tiny GPT-2 init) so that blocks visibly
    interact; exactness tests do not depend on it. Its stream starts at the raw embedding, like the char-6x64
    checkpoint these decompositions read in chapters 01-02."""
    kw.setdefault("stream_start", "embedding")
    model = TinyGPT(TinyGPTConfig(vocab_size=13, d_model=16, n_layers=n_layers, n_heads=2, block_size=8,
                                  seed=seed, **kw))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.startswith("blocks."):
                p.mul_(scale)
    return model.eval()


def batch(B=4, T=8, V=13, seed=0):
    g = torch.Generator().manual_seed(seed)
    seq = torch.randint(V, (B, T + 1), generator=g)
    return seq[:, :-1], seq[:, 1:]


# --- chapter 01: the stream is a running sum --------------------------------------------------------------------

def test_residual_stack_is_the_running_sum_by_hand():
    emb = torch.tensor([[[1.0]]])                           # (B=1, T=1, D=1)
    outs = torch.tensor([2.0, 3.0, -1.0]).view(3, 1, 1, 1)  # three blocks wrote 2, 3, -1
    assert rs.residual_stack(emb, outs).flatten().tolist() == [1.0, 3.0, 6.0, 5.0]
    with pytest.raises(ValueError, match="outputs must be"):
        rs.residual_stack(emb, torch.zeros(3, 2, 1, 1))


def test_final_state_is_embedding_plus_every_block_output():
    model, (x, _) = make_model(), batch()
    tr = model(x, trace=True).trace
    stack = rs.residual_stack(tr["embed"], rs.block_outputs(tr))
    torch.testing.assert_close(stack, tr.stack("resid"), atol=1e-5, rtol=1e-5)
    labels, comps = rs.stream_components(tr)
    assert labels[:3] == ["embed", "attn 0", "mlp 0"] and len(labels) == 2 * 3 + 1
    torch.testing.assert_close(comps.sum(0), tr["resid_final"], atol=1e-5, rtol=1e-5)


def test_logit_contributions_by_hand():
    comps = torch.tensor([[3.0, 0.0], [1.0, 0.0]])          # final state (4, 0): rms = sqrt(16 / 2) = 2 sqrt 2
    got = rs.logit_contributions(comps, torch.tensor([1.0, 5.0]), eps=0.0)
    torch.testing.assert_close(got, torch.tensor([3.0, 1.0]) / (2 * math.sqrt(2)))
    with pytest.raises(ValueError, match="components must be"):
        rs.logit_contributions(comps, torch.ones(3))


@pytest.mark.parametrize("split", [True, False])
def test_direct_logit_attribution_sums_to_the_models_logit(split):
    model, (x, _) = make_model(), batch()
    att = rs.direct_logit_attribution(model, x, position=5, token=7, batch=2, split=split)
    assert att.logit == pytest.approx(float(model(x).logits[2, 5, 7].detach()), abs=1e-5)
    assert sum(att.values) == pytest.approx(att.logit, abs=1e-4)
    assert len(att.values) == (7 if split else 4)
    with pytest.raises(ValueError, match="position must be in 0..7"):
        rs.direct_logit_attribution(model, x, position=8, token=0)


def test_decompositions_refuse_other_depth_mixers():
    model = TinyGPT(TinyGPTConfig(vocab_size=13, d_model=16, n_layers=2, n_heads=2, block_size=8,
                                  depth_mixer="denseformer"))
    with pytest.raises(ValueError, match="depth_mixer='residual'"):
        rs.direct_logit_attribution(model, batch()[0], 0, 0)


@pytest.mark.parametrize("design, message", [({"hyper_connections": 2}, "needs one residual stream"),
                                             ({"layer_embed": 4}, "written only by attention and MLPs")])
def test_decompositions_refuse_streams_that_are_not_the_sum_of_attention_and_mlp_outputs(design, message):
    # with n streams, or a per-layer embedding written after each MLP, resid[l+1] − resid[l] ≠ attn.out + mlp.out
    model = TinyGPT(TinyGPTConfig(vocab_size=13, d_model=16, n_layers=2, n_heads=2, block_size=8, **design))
    with pytest.raises(ValueError, match=message):
        rs.direct_logit_attribution(model, batch()[0], 0, 0)
    with pytest.raises(ValueError, match=message):
        rs.logit_lens(model, [batch()])


def test_logit_lens_last_depth_is_the_model_and_depth_zero_reads_the_embedding():
    model, (x, y) = make_model(), batch()
    lens = rs.logit_lens(model, [(x, y)])
    assert len(lens["loss"]) == 4
    assert lens["loss"][-1] == pytest.approx(model(x, y).loss.item(), abs=1e-5)
    assert lens["agree"][-1] == 1.0
    by_hand = F.cross_entropy(model.lm_head(rms_norm(model.wte(x))).flatten(0, 1), y.flatten())
    assert lens["loss"][0] == pytest.approx(by_hand.item(), abs=1e-5)
    acc0 = (model.lm_head(rms_norm(model.wte(x))).argmax(-1) == y).float().mean().item()
    assert lens["acc"][0] == pytest.approx(acc0)


def test_cosine_to_x0_is_one_at_the_embedding():
    model, (x, y) = make_model(), batch()
    cos = rs.cosine_to_x0(model, [(x, y)])
    assert cos[0] == pytest.approx(1.0, abs=1e-5) and len(cos) == 4 and all(-1 <= c <= 1 + 1e-6 for c in cos)


def test_scale_block_hooks_ones_change_nothing_zeros_leave_the_embedding():
    model, (x, _) = make_model(), batch()
    clean = model(x).logits
    torch.testing.assert_close(model(x, hooks=rs.scale_block_hooks([1, 1, 1])).logits, clean)
    only_embedding = model.lm_head(rms_norm(model.wte(x)))
    torch.testing.assert_close(model(x, hooks=rs.scale_block_hooks([0, 0, 0])).logits, only_embedding,
                               atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="finite"):
        rs.scale_block_hooks([1, float("nan")])


def test_scale_block_hooks_doubles_one_block_write_by_hand():
    model, (x, _) = make_model(n_layers=1), batch()
    tr = model(x, trace=True).trace
    y0 = rs.block_outputs(tr)[0]
    expected = model.lm_head(rms_norm(tr["embed"] + 2 * y0))
    torch.testing.assert_close(model(x, hooks=rs.scale_block_hooks([2.0])).logits, expected, atol=1e-5, rtol=1e-5)


def test_scaled_blocks_prediction_at_unit_scales_is_the_model():
    model, (x, y) = make_model(), batch()
    r = rs.scaled_blocks_prediction(model, x, y, [1, 1, 1], position=3, k=4)
    probs = model(x).logits[0, 3].detach().softmax(-1)
    assert r["loss"] == pytest.approx(model(x, y).loss.item(), abs=1e-6)
    assert r["top_ids"] == probs.topk(4).indices.tolist()
    assert r["target_prob"] == pytest.approx(float(probs[y[0, 3]]))
    with pytest.raises(ValueError, match="one number per block"):
        rs.scaled_blocks_prediction(model, x, y, [1, 1], position=3)


def test_last_blocks_direct_effect_equals_its_total_effect():
    # Nothing reads the last block's write except the read-out, so removing it from the final sum (direct) and
    # zeroing it in the forward pass (total) are the same intervention; earlier blocks are read by later ones.
    model, (x, y) = make_model(), batch()
    eff = rs.direct_and_total_effects(model, [(x, y)])
    assert eff["clean"][0] == pytest.approx(model(x, y).loss.item(), abs=1e-6)
    assert eff["direct"][-1] == pytest.approx(eff["total"][-1], abs=1e-5)
    assert abs(eff["direct"][0] - eff["total"][0]) > 1e-4


# --- chapter 02: QK routes, V carries ----------------------------------------------------------------------------

def test_uniform_causal_pattern_by_hand():
    torch.testing.assert_close(rt.uniform_causal_pattern(3), torch.tensor(
        [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]]))


def test_uniform_pattern_moves_the_running_mean_of_the_values():
    model, (x, _) = make_model(), batch()
    hooks = rt.uniform_routing(1, x, None, None)
    tr = model(x, trace=True, hooks=hooks).trace
    v = tr["blocks.1.attn.v_mix"]                                        # (B, H, T, Dh)
    running_mean = v.cumsum(-2) / torch.arange(1, v.size(-2) + 1).view(-1, 1)
    torch.testing.assert_close(tr["blocks.1.attn.z"], running_mean, atol=1e-6, rtol=1e-5)


def test_swaps_with_the_input_itself_as_donor_change_nothing():
    model, b = make_model(), batch()
    res = rt.layer_interventions(model, [b], rt.SWAPS, donor=lambda x: x)
    for name in rt.SWAPS:
        assert all(abs(e.mean) < 1e-6 and e.n == 4 for e in res[name])


def test_swaps_with_another_input_change_the_loss_and_apply_to_the_right_tensor():
    model, (x, y) = make_model(), batch()
    res = rt.swap_experiment(model, [(x, y)])
    assert res["clean"] == pytest.approx(model(x, y).loss.item(), abs=1e-5)
    assert any(abs(e.mean) > 1e-4 for e in res["value swap"])
    donor = model(x.roll(1, 0), trace=True).trace
    tr = model(x, trace=True, hooks=rt.pattern_swap(2, x, None, donor)).trace
    torch.testing.assert_close(tr["blocks.2.attn.pattern"], donor["blocks.2.attn.pattern"])
    clean = model(x, trace=True).trace
    torch.testing.assert_close(tr["blocks.2.attn.v_mix"], clean["blocks.2.attn.v_mix"])  # values kept
    with pytest.raises(ValueError, match="at least 2 sequences"):
        rt.swap_experiment(model, [(x[:1], y[:1])])


def test_frozen_routing_previous_layer_does_not_apply_at_layer_zero_and_mean_of_identical_is_identity():
    model = make_model()
    x, y = batch(B=1)
    same = (x.repeat(3, 1), y.repeat(3, 1))          # three identical sequences: their mean pattern is their pattern
    res = rt.frozen_routing(model, [same])
    assert res["previous layer"][0] is None and res["previous layer"][1] is not None
    assert all(abs(e.mean) < 1e-6 for e in res["batch mean"])
    assert "—" in rt.effect_table(res)
    with pytest.raises(ValueError, match="unknown frozen-routing modes"):
        rt.frozen_routing(model, [same], modes=("random",))


def test_effect_standard_error_by_hand():
    e = rt._effect([torch.tensor([1.0, 3.0]), torch.tensor([5.0])])
    assert (e.mean, e.n) == (3.0, 3) and e.se == pytest.approx(2.0 / math.sqrt(3))


def test_offset_mass_by_hand():
    p = rt.uniform_causal_pattern(3).expand(2, 1, 3, 3)       # rows (1), (1/2, 1/2), (1/3, 1/3, 1/3)
    assert rt.offset_mass(p, 1).item() == pytest.approx((1 / 2 + 1 / 3) / 2)
    assert rt.offset_mass(p, 0).item() == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
    with pytest.raises(ValueError, match="offset must be in 0..2"):
        rt.offset_mass(p, 3)


def test_head_entropy_by_hand():
    p = rt.uniform_causal_pattern(2).expand(3, 2, 2, 2)       # rows (1, 0) and (1/2, 1/2): entropies 0 and ln 2
    torch.testing.assert_close(rt.head_entropy(p), torch.full((2,), math.log(2) / 2))


def test_head_writes_sum_to_the_attention_output():
    model, (x, _) = make_model(), batch()
    tr = model(x, trace=True).trace
    torch.testing.assert_close(rt.head_writes(model, tr, 1).sum(1), tr["blocks.1.attn.out"], atol=1e-5, rtol=1e-5)


def test_qk_circuit_diagonal_matches_layer0_scores_at_distance_zero():
    # RoPE rotates q and k at the same position by the same angle, so q_t · k_t is the token-only score.
    model, (x, _) = make_model(), batch()
    tr = model(x, trace=True).trace
    q, k = tr["blocks.0.attn.q"], tr["blocks.0.attn.k"]                 # (B, H, T, Dh)
    for h in range(2):
        qk = rt.qk_circuit(model, 0, h)
        scores = (q[:, h] * k[:, h]).sum(-1) / math.sqrt(q.size(-1))      # (B, T)
        torch.testing.assert_close(scores, qk[x, x], atol=1e-5, rtol=1e-4)
    with pytest.raises(ValueError, match="head must be in 0..1"):
        rt.qk_circuit(model, 0, 2)


def test_ov_circuit_is_what_a_layer0_head_writes_when_it_attends_to_one_token():
    model, (x, _) = make_model(), batch()
    T = x.size(1)
    to_first = torch.zeros(T, T)
    to_first[:, 0] = 1.0                                                # every query attends to position 0
    tr = model(x, trace=True, hooks={"blocks.0.attn.pattern": lambda p: to_first.expand_as(p)}).trace
    writes = rt.head_writes(model, tr, 0)                               # (B, H, T, D)
    for h in range(2):
        torch.testing.assert_close(writes[:, h, -1] @ model.lm_head.weight.T, rt.ov_circuit(model, 0, h)[x[:, 0]],
                                   atol=1e-5, rtol=1e-4)


def test_copying_score():
    assert rt.copying_score(torch.eye(5)) == 1.0
    assert rt.copying_score(torch.eye(4).roll(1, 1)) == 0.0
    with pytest.raises(ValueError, match="square"):
        rt.copying_score(torch.ones(2, 3))


def test_attention_temperature_is_restored_and_flattens_the_pattern():
    model, (x, y) = make_model(), batch()
    hot = rt.blend_and_temperature(model, x, y, layer=2, temperature=1e4)
    torch.testing.assert_close(hot["pattern"], rt.uniform_causal_pattern(8), atol=1e-3, rtol=0)
    assert model.blocks[2].attn.temperature == 1.0
    with pytest.raises(RuntimeError):
        with rt.attention_temperature(model, 2, 3.0):
            raise RuntimeError("boom")
    assert model.blocks[2].attn.temperature == 1.0
    with pytest.raises(ValueError, match="temperature must be > 0"):
        rt.blend_and_temperature(model, x, y, layer=2, temperature=0.0)


def test_value_blend_weight_one_moves_v1_and_weight_zero_changes_nothing():
    model, (x, y) = make_model(), batch()
    tr = model(x, trace=True, hooks=rt.value_blend_hooks(2, 1.0)).trace
    torch.testing.assert_close(tr["blocks.2.attn.v_mix"], tr["blocks.0.attn.v"])
    half = model(x, trace=True, hooks=rt.value_blend_hooks(2, 0.5)).trace
    torch.testing.assert_close(half["blocks.2.attn.v_mix"], 0.5 * (half["blocks.2.attn.v"] + half["blocks.0.attn.v"]))
    assert rt.blend_and_temperature(model, x, y, 2)["loss"] == pytest.approx(model(x, y).loss.item(), abs=1e-6)
    assert rt.value_blend_hooks(0, 0.7) == {}
    with pytest.raises(ValueError, match=r"weight must be in \[0, 1\]"):
        rt.value_blend_hooks(2, 1.5)


# --- the chapters' checkpoint -------------------------------------------------------------------------------------

def test_saved_checkpoint_reproduces_the_loss_its_result_file_reports():
    from vrs_edu.lab.data import make_token_data
    from vrs_edu.lab.char_model import load_char_model
    from vrs_edu.lab.train import TrainConfig, evaluate

    model, tok, run = load_char_model()
    assert run["command"] == "vrs-edu reproduce char-6x64" and model.num_params() == run["n_params"]
    data = make_token_data(tokenizer=tok, block_size=model.cfg.block_size)
    assert data.vocab_size == run["vocab_size"]
    cfg = TrainConfig(**run["configs"]["train"])
    loss, acc = evaluate(model, data, cfg, max_batches=None)
    assert loss == pytest.approx(run["final_val_loss"], abs=1e-4)
    assert loss < run["unigram_val_loss"] - 1.0          # it learned far more than character frequencies


def test_missing_checkpoint_names_the_command_that_makes_it(tmp_path, monkeypatch):
    from vrs_edu.lab import experiments
    from vrs_edu.lab import char_model

    monkeypatch.setattr(experiments, "CHECKPOINT_DIR", tmp_path)
    with pytest.raises(FileNotFoundError, match="vrs-edu reproduce char-6x64 --quick"):
        char_model.load_char_model(quick=True)


@torch.no_grad()
def test_own_value_alignment_of_a_uniform_head_over_orthogonal_values_is_one_over_root_i():
    # one head, q = 0 (a uniform causal pattern), each token's value a distinct axis of length 4: z_i is the mean of
    # i + 1 orthogonal vectors, so cos(z_i, v_i) = (1/(i+1)) / (sqrt(i+1)/(i+1)) = 1/sqrt(i+1), and cos² = 1/(i+1)
    model = TinyGPT(TinyGPTConfig(vocab_size=16, d_model=16, n_layers=1, n_heads=1, block_size=8))
    model.wte.weight.copy_(4 * torch.eye(16))
    model.blocks[0].attn.q_proj.weight.zero_()
    model.blocks[0].attn.v_proj.weight.copy_(torch.eye(16))
    x = torch.stack([torch.arange(8), torch.arange(8, 16)])            # distinct tokens in each sequence
    got = rt.own_value_alignment(model, [(x, x)])
    i = torch.arange(1, 8, dtype=torch.float64)
    assert got["own"][0] == pytest.approx((1 / (i + 1).sqrt()).mean().item(), abs=1e-6)
    assert got["removed"][0] == pytest.approx((1 / (i + 1)).mean().item(), abs=1e-6)
    assert got["other"][0] == pytest.approx(0.0, abs=1e-6)             # the other sequence's tokens: other axes
    with pytest.raises(ValueError, match="batches is empty"):
        rt.own_value_alignment(model, [])


def test_the_alignment_sentence_says_every_layer_only_when_every_layer_leans_to_its_own_value():
    align = {"own": [0.21, 0.33], "other": [0.05, 0.04], "removed": [0.22, 0.37]}
    s = rt.alignment_sentence(align, head_dim=16)
    assert s.startswith("Every layer's output leans toward the token's own value: cosine 0.21 to 0.33, against "
                        "0.04 to 0.05")
    assert "take 22% to 37% of the squared norm" in s and "give about 6%" in s      # 1/16 = 6.25 %
    one = rt.alignment_sentence({"own": [0.21, 0.03], "other": [0.05, 0.04], "removed": [0.2, 0.1]}, 16)
    assert one.startswith("1 of 2 layers' outputs lean further")
    cols, rows = rt.alignment_rows(align)
    assert rows[1] == [1, "0.330", "0.040", "37%"] and len(cols) == 4
