"""Chapter 04's sentences (vrs_edu.chapters.ch04_bank_of_values.prose) choose their words from the numbers they state, and the β widget's
figure follows its sliders: known inputs, the sentence or the drawing they must give."""
from __future__ import annotations

import math
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from vrs_edu.chapters.ch04_bank_of_values import prose as C  # noqa: E402


def _arm(margin_q, cost_v=0.004, margin_k=0.1, share_v=0.3):
    n = len(margin_q)
    return {"variant": "qkv", "seeds": list(range(n)),
            "shares": {"q": [share_v - m for m in margin_q], "k": [share_v - margin_k] * n, "v": [share_v] * n},
            "margin_q": list(margin_q), "margin_k": [margin_k] * n,
            "cost": {"q": [0.001] * n, "k": [0.0] * n, "v": [cost_v] * n}}


def test_x0_share_by_hand_and_its_undefined_case():
    assert C.x0_share(1.0, -3.0) == 0.75 and C.x0_share(2.0, 0.0) == 0.0
    with pytest.raises(ValueError, match="both 0"):
        C.x0_share(0.0, 0.0)


def test_run_shares_averages_the_x0_layers():
    c = {"blocks.6.x0.alpha_q": 1.0, "blocks.6.x0.beta_q": 1.0, "blocks.7.x0.alpha_q": 1.0, "blocks.7.x0.beta_q": 3.0}
    for s in "kv":
        c |= {f"blocks.{l}.x0.alpha_{s}": 1.0 for l in (6, 7)} | {f"blocks.{l}.x0.beta_{s}": 0.0 for l in (6, 7)}
    assert C.run_shares({"coefficients": c}) == {"q": (0.5 + 0.75) / 2, "k": 0.0, "v": 0.0}


def test_a_margin_that_prints_as_minus_zero_is_not_above_and_the_claim_words_come_from_the_verdict():
    """Review 3, M2: the headline said "rate-dependent" over a stored "out of regime". The means' signs give the
    first half; the words about the claim come from its verdict (None: a description, no test declared)."""
    sweep = {"×0.25": _arm([-0.0002, 0.0001]), "×1": _arm([0.06, 0.07]), "×4": _arm([0.2, 0.22])}
    s = C.share_sentence(sweep)
    assert "exceeds Q's at ×1 and ×4 but not at ×0.25" in s and "(share_v − share_q: 0.000 at ×0.25" in s and "-0.000" not in s
    assert "rate-dependent" not in s
    assert "which path takes more x0 moves with the coefficients' learning rate" in s     # above at some rates
    # no verdict (None): a description, answering no claim
    assert "a description, not a judged test" in s and "answer no claim" in s and "the claim is" not in s
    s = C.share_sentence(sweep, "out of regime", "undecided")
    assert "rate-dependent" not in s and "description" not in s
    assert "the claim is out of regime (judged anyway it would be undecided)" in s and "answer no claim" in s
    assert C.share_sentence(sweep, "rate-dependent").endswith("; by the course's rule the claim is rate-dependent.")


def test_the_share_sentence_at_every_rate_and_at_none():
    assert "at all 3 learning rates" in C.share_sentence({a: _arm([0.1]) for a in C.ARM_ORDER})
    none = C.share_sentence({a: _arm([-0.1]) for a in C.ARM_ORDER})
    assert "does not exceed Q's at any" in none and "rate-dependent" not in none


def test_the_need_sentence_follows_the_premise_threshold():
    sweep = {"×1": _arm([0.1], cost_v=0.02)}
    assert "already 0.85 token identity" in C.need_sentence(sweep, 0.85, 0.5)
    assert "mostly context" in C.need_sentence(sweep, 0.3, 0.5)
    assert "at most +0.020 nats (V at ×1" in C.need_sentence(sweep, 0.85, 0.5)


def _verdict(mean, lo, hi):
    return SimpleNamespace(mean=mean, ci=(lo, hi))


def test_a_loss_change_whose_sign_the_seeds_do_not_settle_is_not_called_a_gain():
    by = {"substitute_loss": _verdict(-0.016, -0.022, -0.009), "bank_loss": _verdict(-0.032, -0.037, -0.027),
          "qkv_loss": _verdict(-0.002, -0.004, 0.001), "scale_control_costs": _verdict(0.0002, -0.005, 0.006)}
    s = C.context_free_sentence(by)
    assert "lowers the loss by 0.032 nats" in s and "lowers the loss by 0.016 nats" in s
    assert "x0 added to Q, K and V leaves the loss where it was (-0.002 nats" in s
    assert "raises the loss by 0.000" not in s


def test_a_negligible_loss_change_is_said_as_too_small_to_matter_not_as_a_gain():
    """Review 3, H2: substitute_loss −0.016 [−0.022, −0.009] lies inside ±0.028, its declared smallest effect."""
    def v(mean, lo, hi, verdict, effect=None):
        return SimpleNamespace(mean=mean, ci=(lo, hi), verdict=verdict, test=SimpleNamespace(
            margin=None if effect is None else abs(effect)))
    by = {"substitute_loss": v(-0.016, -0.022, -0.009, "negligible", -0.028),
          "bank_loss": v(-0.032, -0.037, -0.027, "reproduced", -0.028),
          "qkv_loss": v(-0.002, -0.004, 0.001, "undecided"), "scale_control_costs": v(0.0002, -0.005, 0.006,
                                                                                       "undecided")}
    s = C.context_free_sentence(by)
    assert ("V := γ·W_V x0 changes the loss by -0.016 nats, negligible (inside ±0.028, its smallest effect of "
            "interest: too small to matter)") in s
    assert "lowers the loss by 0.032 nats" in s and "lowers the loss by 0.016" not in s
    assert s.startswith("Of the values that ignore the context, only the learned table (the bank) does better")
    by["bank_loss"] = v(-0.012, -0.02, -0.005, "negligible", -0.028)
    s = C.context_free_sentence(by)           # no reproduced gain: no "do better"
    assert s.startswith("Values that ignore the context do not help here: V := γ·W_V x0 changes the loss by -0.016")


def test_the_answer_says_the_rate_decides_only_when_the_margin_changes_side():
    flip = {"×0.25": _arm([-0.0001]), "×1": _arm([0.063]), "×4": _arm([0.213])}
    a = C.answer_paragraph(flip, 0.851, 0.5, -0.032)
    assert "from 0.000 (at ×0.25) to +0.213 (at ×4)" in a and "neither confirm nor refute" in a
    assert "lower the loss by 0.032 nats" in a and "0.85 x0-R²" in a
    same = C.answer_paragraph({a_: _arm([0.1]) for a_ in C.ARM_ORDER}, 0.3, 0.5, 0.01)
    assert "exceeds Q's at every rate" in same and "mostly context" in same and "raise the loss" in same


def test_the_recall_sentence_names_the_settled_rates():
    sweep = {"×0.25": _arm([0.065], margin_k=0.36), "×1": _arm([-0.125], margin_k=0.3),
             "×4": _arm([-0.033], margin_k=0.36)}
    s = C.recall_sentence(sweep, {"×0.25": 0.23, "×1": 0.33, "×4": 0.63})
    assert "exceeds K's at every rate, but not Q's at every rate" in s and "Only at ×4" in s


def _wsweep():
    """A β sweep whose largest Q step (0.07 nats) lies between ×1/4 and ×1/8, far from the trained setting."""
    return {"factors": [0.0625, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0],
            "delta": {"q": [0.17, 0.12, 0.05, 0.02, 0.0, 0.001, 0.01], "k": [0.01, 0.01, 0.0, 0.0, 0.0, 0.002, 0.0],
                      "v": [0.09, 0.08, 0.05, 0.1, 0.0, 0.1, 0.3]}}


def test_the_widget_sentence_measures_the_step_from_x1_and_names_the_largest_step_elsewhere():
    steps = {s: {"delta_down": d, "delta_up": d} for s, d in (("q", 0.001), ("k", 0.002), ("v", 0.1))}
    s = C.widget_sentence(steps, {"q": 0.157, "k": 0.0, "v": 0.2}, _wsweep(), "python-docs", 0.5, 0.03125, "kjv")
    assert "From the trained setting (×1 to ×1/2 or ×2) one slider step moves the loss by at most 0.0020 nats " \
           "through Q or K, less than through V (0.1000-0.1000)" in s
    assert "can move it more: the largest anywhere on their sliders is Q from ×1/4 to ×1/8, 0.070 nats" in s
    assert "q +0.157" in s
    assert "on python-docs, with β trained at 0.5, 16× the kjv runs' 0.03125 (before" in s and "do not compare" in s


def test_the_widget_sentence_on_a_checkpoint_like_the_verdict_runs_makes_no_caveat():
    steps = {s: {"delta_down": 0.001, "delta_up": 0.001} for s in "qkv"}
    s = C.widget_sentence(steps, {"q": 0.0, "k": 0.0, "v": 0.0}, _wsweep(), "kjv", 0.03125, 0.03125, "kjv")
    assert s.endswith("with β trained at 0.03125 as in the kjv runs above.") and "do not compare" not in s
    assert "as much as or more than through V" in s


def test_largest_step_reads_neighbouring_factors():
    assert C.largest_step(_wsweep(), "qk")[1:] == ("q", 0.25, 0.125)
    assert C.largest_step(_wsweep(), "qk")[0] == pytest.approx(0.07)
    assert C.largest_step(_wsweep())[1:] == ("v", 4.0, 2.0)          # 0.3 - 0.1 = 0.2, V at the top


def test_beta_rate_scaled_unscaled_and_refused():
    assert C.beta_rate({"coef_opt": "official", "batch_size": 32, "coef_lr_scale": 1.0}, 64) == 0.03125
    assert C.beta_rate({"coef_opt": "official", "batch_size": 32, "coef_lr_scale": 4.0}, 64) == 0.125
    assert C.beta_rate({"coef_opt": "official", "batch_size": 32}, 64) == 0.5    # made before the batch scaling
    with pytest.raises(ValueError, match="coef_opt"):
        C.beta_rate({"coef_opt": "adamw", "batch_size": 32}, 64)


def test_rate_note_in_words():
    assert C.rate_note(0.03125, 0.5, "live run's") == "16× the live run's"
    assert C.rate_note(0.5, 0.03125, "live run's") == "1/16 of the live run's"
    assert C.rate_note(0.5, 0.5, "live run's") == "the same rate as the live run's"
    with pytest.raises(ValueError, match="base_rate"):
        C.rate_note(0.0, 0.5, "x")


def test_the_live_sentence_does_not_compare_runs_at_other_rates():
    live = {"q": 0.257, "k": 0.06, "v": 0.169}
    saved = [{"q": 0.8, "k": 0.9, "v": 0.8}, {"q": 0.9, "k": 0.9, "v": 0.82}]
    s = C.live_sentence(live, 100, 5.106, saved, "python-docs", 0.03125, 0.5)
    assert "q 0.257, k 0.060, v 0.169" in s and "(q 0.850, k 0.900, v 0.810, mean over seeds) are not like runs" in s
    assert "trained β at 0.5, 16× the live run's 0.03125" in s and "cannot be read together" in s
    same = C.live_sentence(live, 100, 5.106, saved, "kjv", 0.03125, 0.03125)
    assert "not like runs" not in same and "β at the same rate): q 0.850" in same


def test_the_premise_table_says_holds_and_the_sentence_what_follows():
    assert C.holds(0.851, 0.5) == "no" and C.holds(0.39, 0.5) == "yes"
    s = C.premises_sentence(0.851, 0.5, 0.935, 0.9)
    assert "premise fails (0.851 is not below 0.5)" in s and "descriptions on this corpus, not judged claims" in s
    assert "chapter 05's fails too (0.935 is not below 0.9)" in s
    ok = C.premises_sentence(0.3, 0.5, 0.8, 0.9)
    assert "holds (0.300 < 0.5)" in ok and "descriptions" not in ok and "chapter 05's holds (0.800 < 0.9)" in ok


def test_the_language_model_toys_sentence_says_why_they_cannot_answer_and_where_it_is_judged():
    """Review 3, H3: deep inputs 0.83-0.88 x0-R² at every depth 4-24, above 0.5; the recall task (0.39) and the real
    decoder (0.25) hold the premise."""
    depth = {4: 0.8767, 8: 0.8529, 16: 0.8360, 24: 0.8334}
    s = C.lm_toys_sentence(depth, 0.851, 0.386, 0.2497, 0.5)
    assert s.startswith("No language-model toy here can answer the x0 claims")     # every depth above 0.5
    assert "0.83–0.88 token identity" in s and "from 4 to 24 layers" in s           # the sweep's range, 2 decimals
    assert "0.85 in this chapter's runs" in s and "above the premise's 0.5" in s
    assert "below the premise's" not in s
    # both hold the premise (below 0.5), so both are named as where the claims are judged, each with its number
    assert "judged where the premise holds instead: on the recall task (0.39) and in the real decoder's last " \
           "third (0.25)" in s
    assert "recall task" not in C.lm_toys_sentence(depth, 0.851, 0.7, 0.2497, 0.5)    # 0.7 fails the premise
    # a depth below the threshold is named, and a model that fails the premise is not offered as the place to judge
    s = C.lm_toys_sentence({4: 0.45, 8: 0.6}, 0.6, 0.7, None, 0.5)
    assert "below the premise's 0.5 only at 4 layers" in s and s.endswith("; no model measured here meets the "
                                                                         "premise.")
    with pytest.raises(ValueError, match="depth_r2 is empty"):
        C.lm_toys_sentence({}, 0.85, 0.39, 0.25, 0.5)


def test_the_instruments_sentence_says_the_pull_as_a_ratio_and_the_spread_in_words():
    sweep = {"×0.25": _arm([-0.0001]), "×1": _arm([0.063]), "×4": _arm([0.213])}
    s = C.instruments_sentence(sweep, 1.54, 0.006, 0.005)
    assert "V's gradient pull is e^1.54 ≈ 4.7× Q's" in s and "ln" not in s and " sd" not in s
    assert "more than the baseline's seeds differ from one another (by about 0.005 nats)" in s
    q = C.instruments_sentence(sweep, -0.69, 0.001, 0.005)
    assert "pulls harder on Q's x0 (Q's gradient pull is e^0.69 ≈ 2.0× V's)" in q and "too little range" in q


# --- the β widget's figure follows its slider (issue 29: at ×2 no dot was drawn) -----------------------------------

def _dots(fig):
    """(x, y) of every large marker (the settings) of the figure's axes."""
    out = []
    for ax in fig.axes:
        for coll in ax.collections:
            if len(coll.get_sizes()) and coll.get_sizes()[0] >= 100:
                out += [tuple(p) for p in coll.get_offsets()]
    return out


def test_the_dot_moves_to_the_sliders_setting_even_a_hair_off_the_sweeps_factor():
    import torch

    from vrs_edu.chapters.ch04_bank_of_values import readout as bank_readout
    from vrs_edu.nn import TinyGPT, TinyGPTConfig
    from vrs_edu.chapters.ch04_bank_of_values.figures import beta_figure

    m = TinyGPT(TinyGPTConfig(vocab_size=20, n_layers=3, d_model=16, n_heads=2, block_size=8, x0_mode="qkv",
                              qk_norm=True, seed=0))
    with torch.no_grad():
        for s, b in zip("qkv", (-4.0, 3.0, 2.5)):
            getattr(m.blocks[2].x0, f"beta_{s}").fill_(b)
    batches = [(torch.randint(20, (2, 8), generator=torch.Generator().manual_seed(i)),) * 2 for i in range(2)]
    sweep = bank_readout.beta_sweep(m, batches, factors=(0.5, 1.0, 2.0))
    fig0, _, _ = beta_figure(m, batches, sweep=sweep)
    fig2, now, _ = beta_figure(m, batches, f_v=1.9999999999999998, sweep=sweep)
    xs0, xs2 = [x for x, _ in _dots(fig0)], [x for x, _ in _dots(fig2)]
    assert len(xs2) == 6 and sum(math.isclose(x, 2.0) for x in xs2) == 2      # V's dot on both panels, at ×2
    assert all(math.isclose(x, 1.0) for x in xs0)
    v_loss = [y for x, y in _dots(fig2) if math.isclose(x, 2.0)][0]
    assert v_loss == pytest.approx(sweep["delta"]["v"][2], abs=1e-9)          # on V's own line
    plt.close("all")


def test_mean_sd_text_signs_the_mean_not_the_spread():
    assert C.mean_sd_text([1.0, 3.0], "+.2f") == "+2.00 ± 1.41"


def _tables(values):
    # value_embed − layer_embed per seed; parameter counts of the production-designs run
    return {"verdicts": [{"name": "value_embed_needs_v", "values": values}],
            "designs": {"baseline": {"n_params": 655_360}, "value_embed": {"n_params": 1_180_160},
                        "layer_embed": {"n_params": 1_229_344}}}


def test_the_token_tables_sentence_names_the_path_that_ended_lower_on_more_seeds():
    s = C.token_tables_sentence(_tables([0.08, 0.1, 0.05, 0.09, 0.1]))
    assert s.startswith("Per-layer embeddings ended lower on 5 of 5 seeds: in this toy the same table helped more "
                        "through the stream than through V.")
    assert s.endswith("Both add 80%–88% to the baseline's 655,360 parameters.")     # 524,800 and 573,984 added
    assert "helped more through V than through the stream" in C.token_tables_sentence(_tables([-0.1, -0.1, 0.1]))
    assert C.token_tables_sentence(_tables([-0.1, 0.1])).startswith("Each ended lower on 1 of 2 seeds")
