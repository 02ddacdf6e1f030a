"""Specification of the experiment-design options (issue 16): named baselines (stream start, QK-norm), the controls
(scale-only V, random and previous-token x0), the recall task that needs recall and its no-lookup reference, the
official coefficient optimizer, the pre-declared tests with three-way verdicts, Holm and power."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from vrs_edu.lab.analysis import DeclaredTest, format_verdicts, holm, judge, plateau, power_paired_t, t_test
from vrs_edu.lab.data import associative_recall, no_lookup_reference
from vrs_edu.lab.metrics import layer_metrics, uniform_causal_entropy, x0_r2
from vrs_edu.lab.train import TrainConfig, make_optimizer
from vrs_edu.nn.layers import rms_norm
from vrs_edu.nn.model import TinyGPT, TinyGPTConfig

SMALL = dict(vocab_size=32, d_model=32, n_layers=3, n_heads=2, block_size=16)


def _idx(T=12, B=2, V=32, seed=0):
    return torch.randint(V, (B, T), generator=torch.Generator().manual_seed(seed))


# --- baselines as named settings -------------------------------------------------------------------------------

def test_default_stream_starts_at_rmsnorm_of_the_embedding():
    m = TinyGPT(TinyGPTConfig(**SMALL))
    tr = m(_idx(), trace=True).trace
    torch.testing.assert_close(tr["blocks.0.resid_pre"], rms_norm(m.wte(_idx())))
    torch.testing.assert_close(tr["embed"], tr["blocks.0.resid_pre"])    # "embed" = the stream's first term
    # RMS 1 up to RMSNorm's eps (1e-6 against a mean square of ~4e-4 for the N(0, 0.02) embedding: ~0.2 %)
    assert tr["blocks.0.resid_pre"].pow(2).mean(-1).sqrt().sub(1).abs().max() < 0.01


def test_raw_embedding_start_is_kept_as_a_setting():
    m = TinyGPT(TinyGPTConfig(**SMALL, stream_start="embedding"))
    tr = m(_idx(), trace=True).trace
    torch.testing.assert_close(tr["blocks.0.resid_pre"], m.wte(_idx()))
    torch.testing.assert_close(tr["embed"], tr["blocks.0.resid_pre"])


def test_unknown_stream_start_is_refused_by_name():
    with pytest.raises(ValueError, match="stream_start"):
        TinyGPTConfig(**SMALL, stream_start="layernorm").validate()


def test_a_config_without_stream_start_means_the_old_raw_embedding_start():
    d = TinyGPTConfig(**SMALL).to_dict()
    del d["stream_start"]
    assert TinyGPTConfig.from_dict(d).stream_start == "embedding"
    assert TinyGPTConfig.from_dict(TinyGPTConfig(**SMALL).to_dict()).stream_start == "rmsnorm"


def test_stored_char_checkpoint_loads_with_the_setting_it_was_trained_with():
    path = Path(__file__).resolve().parents[1] / "data" / "checkpoints" / "char-6x64" / "config.json"
    if not path.exists():
        pytest.skip("no stored char-6x64 checkpoint (made by `vrs-edu reproduce char-6x64`)")
    from vrs_edu.lab.train import load_checkpoint

    model_cfg = json.loads(path.read_text())["model"]
    model, _, _ = load_checkpoint(path.parent)
    # trained before the setting existed, i.e. with the raw-embedding start; it must load as such
    assert model.cfg.stream_start == model_cfg.get("stream_start", "embedding")


def test_init_pairing_survives_the_new_settings():
    base = dict(TinyGPT(TinyGPTConfig(**SMALL, seed=3)).named_parameters())
    for over in ({"stream_start": "embedding"}, {"qk_norm": True}, {"x0_mode": "scale_v"},
                 {"x0_mode": "qkv", "x0_source": "random"}):
        other = dict(TinyGPT(TinyGPTConfig(**SMALL, seed=3, **over)).named_parameters())
        for name, p in base.items():
            torch.testing.assert_close(other[name], p, rtol=0, atol=0, msg=f"{over}: {name}")


def test_qk_norm_makes_the_pattern_blind_to_the_scale_of_q_and_k_inputs():
    idx = _idx()
    change = {}
    for qk_norm in (True, False):
        m = TinyGPT(TinyGPTConfig(**SMALL, qk_norm=qk_norm))
        clean = m(idx, trace=True).trace["blocks.1.attn.pattern"]
        scaled = m(idx, trace=True, hooks={"blocks.1.attn.q_in": lambda t: 5 * t}).trace["blocks.1.attn.pattern"]
        change[qk_norm] = float((clean - scaled).abs().max())
    # with QK-norm only RMSNorm's eps (1e-6 against q's mean square ~1e-2) lets the scale through
    assert change[True] < 1e-3 < 1e-2 < change[False]
    q = TinyGPT(TinyGPTConfig(**SMALL, qk_norm=True))(idx, trace=True).trace["blocks.0.attn.q"]
    torch.testing.assert_close(q.pow(2).mean(-1).sqrt(), torch.full(q.shape[:-1], 1.2), atol=1e-4, rtol=0)


# --- controls ----------------------------------------------------------------------------------------------------

def test_scale_only_v_starts_as_the_baseline_and_scales_v_without_reading_x0():
    idx = _idx()
    base = TinyGPT(TinyGPTConfig(**SMALL))
    ctrl = TinyGPT(TinyGPTConfig(**SMALL, x0_mode="scale_v"))
    torch.testing.assert_close(ctrl(idx).logits, base(idx).logits)
    layer = ctrl.cfg.resolved_x0_layers()[-1]
    with torch.no_grad():
        ctrl.blocks[layer].x0.gamma.fill_(2.0)
    tb, tc = base(idx, trace=True).trace, ctrl(idx, trace=True).trace
    torch.testing.assert_close(tc[f"blocks.{layer}.attn.v_in"], 2 * rms_norm(tc[f"blocks.{layer}.resid_pre"]))
    assert not torch.allclose(tc[f"blocks.{layer}.attn.v"], tb[f"blocks.{layer}.attn.v"])


def test_random_x0_is_a_fixed_per_token_vector_with_the_norm_of_x0():
    idx = _idx()
    a = TinyGPT(TinyGPTConfig(**SMALL, x0_mode="qkv", x0_source="random", seed=1))
    b = TinyGPT(TinyGPTConfig(**SMALL, x0_mode="substitute_v", x0_source="random", seed=1))
    xa, xb = a(idx, trace=True).trace["x0"], b(idx, trace=True).trace["x0"]
    torch.testing.assert_close(xa, xb)                          # same seed, same table, whatever the variant
    torch.testing.assert_close(xa, a.x0_random[idx])
    torch.testing.assert_close(xa.pow(2).mean(-1).sqrt(), torch.ones(idx.shape), atol=1e-5, rtol=0)
    token_x0 = rms_norm(a(idx, trace=True).trace["embed"])
    assert (torch.nn.functional.cosine_similarity(xa, token_x0, dim=-1).abs() < 0.9).all()
    assert "x0_random" not in a.state_dict()                   # rebuilt from the seed, not stored


def test_previous_token_x0_is_shifted_by_one_position():
    idx = _idx()
    m = TinyGPT(TinyGPTConfig(**SMALL, x0_mode="qkv", x0_source="previous"))
    tr = m(idx, trace=True).trace
    token_x0 = rms_norm(m.wte(idx))
    torch.testing.assert_close(tr["x0"][:, 1:], token_x0[:, :-1])
    assert tr["x0"][:, 0].abs().max() == 0


@pytest.mark.parametrize("mode", ["none", "bank", "scale_v"])
def test_an_x0_source_needs_a_mode_that_reads_x0(mode):
    with pytest.raises(ValueError, match="x0_source"):
        TinyGPTConfig(**SMALL, x0_mode=mode, x0_source="random").validate()


# --- the recall task ---------------------------------------------------------------------------------------------

def test_elimination_reference_matches_the_hand_computed_values():
    # 4 distinct queries over 4 pairs, values (almost) never repeat (4 of 1,000: a repeat in 0.6 % of sequences): the
    # no-lookup strategy guesses among the 4, 3, 2, 1 values not yet answered: accuracy 1/4, 1/3, 1/2, 1 and loss
    # ln 4, ln 3, ln 2, 0.
    r = no_lookup_reference(4, 8, 1_000, 2, 4, n_sequences=4000)
    for got, want in zip(r["acc_by_query"], (1 / 4, 1 / 3, 1 / 2, 1.0)):
        assert got == pytest.approx(want, abs=0.03)
    for got, want in zip(r["loss_by_query"], (math.log(4), math.log(3), math.log(2), 0.0)):
        assert got == pytest.approx(want, abs=0.01)


def test_elimination_reference_reproduces_the_review_numbers_of_the_old_task():
    # The old recipe's task (4 pairs, 4 queries, 16 values): the review measured loss 0.731, accuracy 0.567.
    r = no_lookup_reference(4, 8, 16, 2, 4, n_sequences=4000)
    assert r["loss"] == pytest.approx(0.731, abs=0.02)
    assert r["acc"] == pytest.approx(0.567, abs=0.02)
    assert r["acc_by_query"][-1] == 1.0


def test_queries_with_replacement_make_elimination_useless():
    r = no_lookup_reference(4, 8, 1_000, 2, 2, with_replacement=True, n_sequences=4000)
    for loss in r["loss_by_query"]:
        assert loss == pytest.approx(math.log(4), abs=0.01)


def test_recall_queries_with_replacement_repeat_keys_and_distinct_ones_are_bounded():
    task = associative_recall(n_pairs=3, n_queries=6, with_replacement=True)
    x, y, mask = task.batch(64, torch.Generator().manual_seed(0))
    assert mask.sum(1).eq(6).all()
    with pytest.raises(ValueError, match="n_queries"):
        associative_recall(n_pairs=3, n_queries=4)


def test_layer_metrics_report_accuracy_per_query_index():
    task = associative_recall(n_pairs=4, n_queries=2, with_replacement=True)
    m = TinyGPT(TinyGPTConfig(vocab_size=task.vocab_size, d_model=32, n_layers=3, n_heads=2,
                              block_size=task.block_size))
    batches = [task.batch(8, torch.Generator().manual_seed(0))]
    lm = layer_metrics(m, batches)
    assert len(lm["answer_acc_by_query"]) == 2 and len(lm["answer_loss_by_query"]) == 2
    assert all(0 <= a <= 1 for a in lm["answer_acc_by_query"])
    assert len(lm["x0_r2_v"]) == 3


# --- metrics with reference values -------------------------------------------------------------------------------

def test_uniform_causal_entropy_is_the_review_reference_not_log_t():
    assert uniform_causal_entropy(64) == pytest.approx(3.754, abs=1e-3)
    assert uniform_causal_entropy(23) == pytest.approx(2.757, abs=1e-3)
    assert uniform_causal_entropy(64) < math.log(64)


def test_x0_r2_is_one_for_an_affine_map_of_x0_and_near_zero_for_noise():
    g = torch.Generator().manual_seed(0)
    x0 = torch.randn(4, 50, 8, generator=g)
    assert x0_r2(x0 @ torch.randn(8, 8, generator=g) + 3.0, x0) == pytest.approx(1.0, abs=1e-9)
    assert x0_r2(torch.randn(4, 50, 8, generator=g), x0) < 0.1


# --- official coefficient optimizer ------------------------------------------------------------------------------

def test_official_optimizer_puts_each_x0_parameter_in_its_official_group_at_the_batch_scaled_rate():
    """nanochat's rule: rates × √(B / 2¹⁹). SMALL has block_size 16; TrainConfig's batch 32 → B = 512 tokens, scale
    √(512 / 524288) = 1/32: β at 0.5/32 = 0.015625, α at 0.005/32 = 1.5625e-4, the bank table at 0.15/32; at the
    course's 2,048 tokens the scale is 1/16 (β 0.03125). Betas as gpt_base.py has them: β (0.96, 0.95), α (0.8, 0.95)."""
    from vrs_edu.lab.train import batch_lr_scale, official_x0_groups

    assert batch_lr_scale(2048) == 1 / 16 and batch_lr_scale(2 ** 19) == 1.0
    assert official_x0_groups(2048)["x0_beta_gamma"]["lr"] == 0.03125
    assert official_x0_groups(2048, 4.0)["x0_alpha"]["lr"] == pytest.approx(0.005 / 16 * 4)
    assert official_x0_groups(2048, 4.0)["bank_table"]["lr"] == pytest.approx(0.15 / 16)     # the sweep: coefficients
    m = TinyGPT(TinyGPTConfig(**SMALL, x0_mode="qkv"))
    B = TrainConfig().batch_size * m.cfg.block_size
    assert B == 512
    opt = make_optimizer(m, TrainConfig(coef_opt="official"))
    names = {id(p): n for n, p in m.named_parameters()}
    by_name = {names[id(p)]: g for g in opt.param_groups for p in g["params"]}
    l = m.cfg.resolved_x0_layers()[0]
    assert by_name[f"blocks.{l}.x0.beta_v"]["lr"] == 0.5 / 32 and by_name[f"blocks.{l}.x0.beta_v"]["betas"] == (0.96, 0.95)
    assert by_name[f"blocks.{l}.x0.alpha_q"]["lr"] == pytest.approx(0.005 / 32)
    assert by_name[f"blocks.{l}.x0.alpha_q"]["betas"] == (0.8, 0.95)
    assert by_name[f"blocks.{l}.x0.alpha_q"]["weight_decay"] == 0.05
    # a caller that knows the real sequence length passes it (train() does: batch × the data's block size)
    assert make_optimizer(m, TrainConfig(coef_opt="official"), 2048).param_groups[-1]["lr"] > 0
    bank = TinyGPT(TinyGPTConfig(**SMALL, x0_mode="bank"))
    names = {id(p): n for n, p in bank.named_parameters()}
    by_name = {names[id(p)]: g for g in make_optimizer(bank, TrainConfig(coef_opt="official")).param_groups
               for p in g["params"]}
    assert by_name[f"blocks.{l}.x0.E_v"]["lr"] == pytest.approx(0.15 / 32)
    assert by_name[f"blocks.{l}.x0.E_v"]["betas"] == (0.8, 0.995)
    course = {names[id(p)]: g for g in make_optimizer(bank, TrainConfig()).param_groups for p in g["params"]}
    assert course[f"blocks.{l}.x0.gamma"]["lr"] == TrainConfig().coef_lr
    with pytest.raises(ValueError, match="coef_opt"):
        TrainConfig(coef_opt="fast").validate()
    with pytest.raises(ValueError, match="coef_lr_scale"):
        TrainConfig(coef_lr_scale=0.0).validate()


# --- declared tests, verdicts, power, Holm ----------------------------------------------------------------------

def test_power_matches_the_review_figures():
    assert power_paired_t(2.0, 1.0, 3) == pytest.approx(0.47, abs=0.01)   # review: 47 % at d = 2, n = 3
    assert power_paired_t(1.0, 1.0, 3) == pytest.approx(0.18, abs=0.01)   # review: 18 % at d = 1


def test_holm_adjusts_step_down():
    # p = (0.01, 0.04, 0.03): sorted 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → running max 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_three_way_verdicts():
    tests = [DeclaredTest("gain", "c", "q", "x", "negative", 0.0, "primary", -0.027),
             DeclaredTest("up", "c", "q", "x", "positive", 0.0, "fam", 0.1),
             DeclaredTest("noisy", "c", "q", "x", "positive", 0.0, "fam", 0.1),
             DeclaredTest("above2", "c", "q", "x", "positive", 2.0, "fam", 0.1)]
    rows = {r["test"].name: r for r in judge(tests, {
        "gain": [-0.10, -0.12, -0.09, -0.11, -0.10],
        "up": [-1.0, -1.1, -0.9, -1.05, -0.95],          # clearly on the opposite side
        "noisy": [0.1, -0.2, 0.3, 0.0, 0.1],
        "above2": [1.0, 1.1, 0.9, 1.2, 1.05]})}        # positive, but clearly below the threshold 2
    assert rows["gain"]["verdict"] == "reproduced"
    assert rows["up"]["verdict"] == "contradicted"
    assert rows["noisy"]["verdict"] == "undecided" and 0 < rows["noisy"]["power"] < 1
    assert rows["above2"]["verdict"] == "contradicted"
    assert rows["up"]["family_size"] == 3 and rows["gain"]["family_size"] == 1


def test_t_test_interval_matches_student_t():
    r = t_test([1.0, 2.0, 3.0])
    assert r["ci"][0] == pytest.approx(2 - 4.303 * 1 / math.sqrt(3), abs=1e-3)


def test_plateau_detects_a_flat_end_and_a_rising_one():
    steps = [0, 20, 40, 60, 80, 100]
    assert plateau(steps, [0, 1.0, 1.5, 1.6, 1.62, 1.63], (75, 100))["reached"]
    assert not plateau(steps, [0, 0.2, 0.4, 0.6, 0.8, 1.0], (75, 100))["reached"]
    with pytest.raises(ValueError, match="window"):
        plateau(steps, [0] * 6, (50, 120))


def test_plateau_window_is_the_last_quarter_of_the_constant_lr_phase_and_the_figure_shades_it():
    """1,200 steps with decay over the last 30 %: the decay starts at step 840, a quarter of the run is 300 steps,
    so the window is (540, 840), the recall recipe's. 240 steps (the corpus runs): (108, 168). 12 steps logged at
    4, 8, 12 with decay from the first step (decay_frac 1) have no constant phase: the last logged interval (8, 12)."""
    import matplotlib.pyplot as plt

    from vrs_edu.lab.x0_need import beta_plateau_window
    from vrs_edu.chapters.ch04_bank_of_values.figures import plot_beta_trajectories

    def run(n, every):
        steps = list(range(every, n + 1, every))
        coefs = {f"blocks.7.x0.beta_{s}": [0.1 * i for i in range(len(steps))] for s in "qkv"}
        return {"seed": 0, "history": {"eval_steps": steps, "steps": list(range(n)), "coefficients": coefs}}

    assert beta_plateau_window(run(1200, 50)) == (540, 840)
    assert beta_plateau_window(run(240, 20)) == (108, 168)
    assert beta_plateau_window(run(12, 4), decay_frac=1.0) == (8, 12)
    fig = plot_beta_trajectories([run(1200, 50)], window=(540, 840))
    for ax in fig.axes:                                 # one shaded span per panel, from 540 to 840
        (span,) = ax.patches
        assert (span.get_x(), span.get_x() + span.get_width()) == (540, 840)
    plt.close(fig)


def test_entropy_reading_says_when_there_is_no_concentration_to_relieve():
    from vrs_edu.lab.metrics import entropy_reading
    ref = uniform_causal_entropy(64)
    flat = entropy_reading([ref + 0.1, ref + 0.05], 64)
    assert "3.754" in flat and "no attention concentration to relieve" in flat
    dip = entropy_reading([ref + 0.1, ref - 0.5], 64)
    assert "layers below the uniform-causal entropy: [1]" in dip


def test_char_preset_keeps_the_start_its_checkpoint_was_trained_with_and_the_recipes_get_the_strong_one():
    from vrs_edu.lab.presets import make_run
    assert make_run("char-6x64")[1].stream_start == "embedding"    # chapters 01-02: checkpoint and live runs agree
    assert make_run("word-8x64")[1].stream_start == "rmsnorm"      # chapters 03-05's recipes


def test_power_of_an_undecided_test_is_stated_at_its_declared_effect_and_fits_the_page():
    # two undecided tests: one with a declared effect (power at that effect), one without (no power: "d = 1", an
    # effect of one seed sd, was a property of the noise and is gone; only a set-up check may declare none)
    tests = [DeclaredTest("gain", "c", "q", "x", "negative", 0.0, "primary", -0.027),
             DeclaredTest("a_test_name_of_thirty_chars_xx", "c", "q", "x", "negative", 0.0, "fam", -0.05),
             DeclaredTest("up", "c", "q", "x", "positive", 0.0, "setup", kind="check")]
    # gain: mean 0, interval ±0.037, wider than ±0.027: undecided (an interval inside ±0.027 would be negligible)
    values = {"gain": [0.03, -0.04, 0.025, -0.02, 0.005], "a_test_name_of_thirty_chars_xx": [0.1, -0.2, 0.3, 0.0, 0.1],
              "up": [1.0, 1.1, 0.9, 1.05, 0.95]}
    rows = {r["test"].name: r for r in judge(tests, values)}
    noisy = rows["a_test_name_of_thirty_chars_xx"]
    assert noisy["verdict"] == "undecided" and noisy["power_basis"] == "declared"
    assert noisy["power"] == pytest.approx(power_paired_t(-0.05, noisy["sd"], 5, 0.05))   # alone in its family
    assert rows["gain"]["power_basis"] == "declared" and rows["gain"]["power_effect"] == -0.027
    assert rows["up"]["power_basis"] == "none"
    text = format_verdicts(list(rows.values()))
    assert max(len(line) for line in text.splitlines()) <= 100        # the book's page
    assert "at -0.050" in text and "at -0.027" in text and "d = 1" not in text
    assert "fam (claims): 1 test, no correction needed" in text


def test_verdict_sentence_and_what_we_measured_by_hand():
    from vrs_edu.lab.analysis import format_measured, verdict_sentence

    tests = [DeclaredTest("gain", "a published gain", "q", "x", "negative", 0.0, "primary", -0.027),
             DeclaredTest("premise", "a premise of the set-up", "q", "x", "positive", 0.0, "fam", kind="check")]
    rows = judge(tests, {"gain": [0.03, -0.05, 0.0, 0.03, -0.02],      # mean -0.002, interval ±0.042: undecided
                         "premise": [1.0, 1.1, 0.9, 1.05, 0.95]})        # clearly above 0: reproduced
    gain = rows[0]
    lo, hi = gain["ci"]
    assert verdict_sentence(gain) == (f"-0.002 [95% CI {lo:+.3f}, {hi:+.3f}], p (Holm) {gain['p_holm']:.3f}: "
                                      f"undecided (power {gain['power']:.0%} at -0.027)")
    assert verdict_sentence(rows[1]).endswith(": reproduced")             # no power for a decided test
    text = format_measured(rows, setup_checks=("premise",))
    assert text.splitlines()[0] == "UNDECIDED    gain — a published gain"
    assert "published claims, in this regime:\n  reproduced (0): none\n  contradicted (0): none\n" \
           "  undecided (1): gain" in text
    assert "checks on the set-up, in this regime:\n  reproduced (1): premise" in text
    assert max(len(line) for line in text.splitlines()) <= 100
