"""Chapter 03's computed sentences (vrs_edu.chapters.ch03_value_residual.prose): known numbers in, the sentence's words follow their
sign, size and verdict (the learner trial found "larger by 0.000 nats" and "learns it -13 steps sooner")."""
from types import SimpleNamespace

from vrs_edu.chapters.ch03_value_residual import prose as c3


def test_effect_sentence_says_lowers_and_rules_out_the_papers_gain():
    s = c3.effect_sentence("ResFormer", -0.0066, (-0.0165, 0.0034), "undecided", 5, paper=-0.027)
    assert "lowers the final loss by **0.007** nats" in s
    assert "the range the 5 paired seeds allow, [-0.017, +0.003], lies on both sides of 0" in s
    assert "not decided" in s and "95 %" not in s
    assert "-0.027 nats lies below that range" in s and "ruled out" in s


def test_effect_sentence_follows_a_cost_and_a_paper_inside_the_interval():
    s = c3.effect_sentence("SVFormer", 0.02, (0.01, 0.03), "reproduced", 5, paper=0.015)
    assert "raises the final loss by **0.020**" in s and "lies above 0" in s
    assert "inside that range: it is not ruled out" in s
    assert "unchanged" in c3.effect_sentence("x", 0.0001, (-0.01, 0.01), "undecided", 5)


def test_baseline_lesson_does_not_call_a_zero_difference_larger():
    s = c3.baseline_lesson(weak=-0.0067, strong=-0.0066, inflation=-0.0001, strong_alone=-0.0651)
    assert "larger" not in s and "the same to 0.001 nats" in s
    assert "**0.065** nats better than the weak one, 10 times" in s
    s = c3.baseline_lesson(weak=-0.05, strong=-0.01, inflation=-0.04, strong_alone=0.02)
    assert "larger against the weak baseline by 0.040 nats" in s and "nats worse than the weak one." in s


def test_steps_sentence_chooses_sooner_or_later_from_the_sign():
    s = c3.steps_sentence(-12.57, (-64.04, 38.9), "undecided")
    assert "13 steps sooner" in s and "-13" not in s and "[-64, +39]" in s and "both sides of 0" in s
    assert "40 steps later" in c3.steps_sentence(40.2, (10, 70), "contradicted")
    assert "at the same step" in c3.steps_sentence(0.2, (-5, 5), "undecided")


def test_recall_sentence_counts_the_seeds_that_learned():
    assert "Every seed learned lookup" in c3.recall_sentence(-1.258, {"baseline": (5, 5), "resformer": (5, 5)}, 600)
    s = c3.recall_sentence(-0.3, {"baseline": (2, 5), "resformer": (5, 5)}, 600)
    assert s.startswith("Not every seed") and "baseline 2 of 5" in s


def test_entropy_sentence_above_uniform_is_no_concentration():
    s = c3.entropy_sentence(0.0898, "contradicted")
    assert "**0.090** nats above" in s and "no concentration" in s
    assert "below" in c3.entropy_sentence(-0.05, "reproduced") and "concentrated, as" in \
        c3.entropy_sentence(-0.05, "reproduced")


def test_lambda_sentence_calls_an_unsettled_profile_a_snapshot():
    s = c3.lambda_sentence(0.0123, 0, 35)
    assert "grows with depth (+0.012 per layer)" in s and "0 of 35" in s and "snapshot" in s
    assert "falls with depth" in c3.lambda_sentence(-0.01, 30, 35)


def test_depth_sentence_names_the_worse_deeper_baselines():
    s = c3.depth_sentence([4, 8, 16, 24], [-0.009, -0.007, -0.015, -0.022], [4.40, 4.41, 4.45, 4.50],
                          [4.39, 4.40, 4.43, 4.48], [])
    assert "-0.009 → -0.007 → -0.015 → -0.022" in s and "deeper baselines training worse" in s
    assert "At no depth" in s


def test_answer_has_three_numbers_and_follows_them():
    s = c3.answer(-0.0066, (-0.0165, 0.0034), -0.027, 24, -0.022, 0.0898, deeper_baselines_worse=True,
                  verdict="undecided", n=5)
    # one sign convention (loss change, negative = better), the verdict in words, the deep variant named
    assert "changes the loss by **-0.007** nats" in s and "not decided by these seeds" in s
    assert "lowers" not in s and "[-0.017, +0.003]" in s and "**-0.027** nats at 82 M parameters is ruled out" in s
    assert "ResFormer's fixed 0.5/0.5" in s and "learnable-λ variant changes it by **-0.022** nats" in s
    assert "keys receive is spread **0.090** nats more evenly over the keys than under uniform causal" in s
    assert "most of it because the deeper baselines train worse" in s
    s = c3.answer(-0.03, (-0.04, -0.02), -0.027, 24, -0.03, -0.05, verdict="reproduced")
    assert "not ruled out" in s and "**-0.030** nats, about the same change." in s and "train worse" not in s
    assert "piled **0.050** nats more on a few keys" in s and "does not work" not in s and "decided, in the published direction" in s
    assert "Over-smoothing" not in s
    smoothing = SimpleNamespace(mean=-0.0089, ci=(-0.0235, 0.0057), verdict="undecided", would_be=None, arms=None,
                                reason=None, test=SimpleNamespace(margin=0.02))
    s = c3.answer(-0.03, (-0.04, -0.02), -0.027, 24, -0.03, -0.05, verdict="reproduced", smoothing=smoothing)
    assert s.endswith("Over-smoothing, how alike the tokens' states are (mean cosine over the layers), changes by "
                      "-0.009 with it [-0.024, +0.006]: not decided by these seeds.")


def test_svformer_sentence_says_a_range_below_0_is_the_opposite_of_the_cost_and_names_the_verdict():
    s = c3.svformer_sentence(-0.0142, (-0.0258, -0.0031), "undecided", 5)
    assert "**-0.014** nats" in s and "[-0.026, -0.003], lies below 0" in s
    assert "the opposite of the cost the paper reports — but once we allow for the number of tests" in s
    assert "undecided" in s
    s = c3.svformer_sentence(0.02, (0.01, 0.03), "reproduced", 5)
    assert "lies above 0: a higher loss, the cost the paper reports; the paper's cost is reproduced" in s
    assert "holds both a cost and a gain" in c3.svformer_sentence(0.0, (-0.01, 0.01), "undecided", 5)


def test_live_run_sentence_uses_words_not_sd():
    s = c3.live_run_sentence(-0.003, -0.006, 0.004, (-0.011, -0.001), 5)
    assert "their 5 seeds differ by about 0.0040" in s and "points the same way" in s and "sd" not in s
    assert "but by less than the seeds differ" in s
    s = c3.live_run_sentence(-0.03, -0.012, 0.020, (-0.037, 0.013), 5)
    assert "no direction here" in s and "further than" not in s


def test_gain_rows_and_concentrated_depths_read_the_tests_by_name():
    from types import SimpleNamespace as NS
    by = {t: NS(mean=i / 100, ci=(i / 100 - 0.01, i / 100 + 0.01)) for i, t in enumerate(c3.GAIN_TESTS.values())}
    rows = c3.gain_rows(by)
    assert [r["name"] for r in rows] == ["resformer", "learnable", "svformer", "neutreno"]
    assert rows[2]["mean"] == 0.02 and rows[2]["ci"] == (0.01, 0.03) and rows[2]["margin"] is None
    judged = {t: NS(mean=0.0, ci=(-0.01, 0.01), test=NS(margin=0.027)) for t in c3.GAIN_TESTS.values()}
    assert [r["margin"] for r in c3.gain_rows(judged)] == [0.027] * 4
    dby = {"baseline_concentrated_L4": NS(verdict="reproduced"), "baseline_concentrated_L8": NS(verdict="undecided")}
    assert c3.concentrated_depths(dby, [4, 8]) == [4]


def _judged(verdict, would_be=None, margin=None):
    """A stand-in for a judged test: only what the sentences read (verdict, would_be, test.margin)."""
    from types import SimpleNamespace as NS
    return NS(verdict=verdict, would_be=would_be, test=NS(margin=margin))


def test_a_negligible_effect_is_worded_too_small_to_matter_never_decided():
    s = c3.effect_sentence("ResFormer", -0.0016, (-0.0040, -0.0008), _judged("negligible", margin=0.027), 5)
    assert "ResFormer lowers the final loss by **0.002** nats" in s        # the sign in words, the size unsigned
    assert "[-0.004, -0.001], lies below 0" in s                           # the interval, signed, and its side
    assert "the change is too small to matter" in s and "within ±0.027 nats" in s   # negligible, with its margin
    assert "reproduced" not in s and "published direction" not in s
    decided = c3.effect_sentence("ResFormer", -0.0016, (-0.0040, -0.0008), "reproduced", 5)
    assert "too small to matter" not in decided and "published direction" in decided


def test_an_out_of_regime_effect_names_its_would_be_verdict():
    s = c3.effect_sentence("ResFormer", 0.02, (0.01, 0.03), _judged("out of regime", "contradicted"), 5)
    assert "lies above 0, and the change is out of regime" in s and s.endswith("it would be contradicted.")
    s = c3.steps_sentence(-20, (-40, -5), _judged("out of regime", "reproduced"))
    assert "20 steps sooner than the baseline" in s and "-20" not in s     # below 0: sooner, the size unsigned
    assert "[-40, -5] steps lies below 0" in s                             # whole steps, signed bounds
    assert "out of regime" in s and "it would be reproduced" in s
    assert c3.steps_sentence(3, (-1, 6), _judged("negligible", margin=50)).endswith(
        "within ±50 steps, the smallest effect declared before the run).")


def test_svformer_sentence_negligible_and_out_of_regime():
    s = c3.svformer_sentence(-0.004, (-0.006, -0.002), _judged("negligible", margin=0.01), 5)
    assert "changes the loss by **-0.004** nats" in s                      # signed: "changes", not "lowers"
    assert "[-0.006, -0.002], lies below 0: a *lower* loss, the opposite of the cost" in s
    assert "— but the change is too small to matter" in s and "within ±0.01 nats" in s
    assert "neither the paper's cost nor its opposite" in s
    assert "reproduced" not in s and "contradicted" not in s and "undecided" not in s
    s = c3.svformer_sentence(-0.014, (-0.026, -0.003), _judged("out of regime", "contradicted"), 5)
    assert s.endswith("— but the claim of a cost is out of regime — its premise fails; judged anyway it would be "
                      "contradicted.")


def test_entropy_sentence_negligible_gap_is_no_concentration():
    s = c3.entropy_sentence(-0.012, _judged("negligible", margin=0.05))
    assert "**0.012** nats below uniform" in s                              # the sign in words, the size unsigned
    assert "too small to matter" in s and "within ±0.05 nats" in s
    assert "is not concentrated" in s and "concentrated, as" not in s        # a negligible gap: no concentration
    assert "**0.012** nats above uniform" in c3.entropy_sentence(0.012, _judged("negligible", margin=0.05))


def test_depth_sentence_states_the_baseline_premise_from_its_slope():
    s = c3.depth_sentence([4, 8, 16], [-0.004, -0.006, -0.009], [4.40, 4.39, 4.39], [4.396, 4.384, 4.381], [],
                          baseline_trend=-0.0031, trend_limit=0.005)
    assert "From 4 to 16 layers" in s and "-0.004 → -0.006 → -0.009 nats" in s
    assert "-0.0031 nats per doubling of depth" in s and "allows less than 0.005" in s   # 4 decimals; the limit :g
    assert "the premise **holds**" in s and "**fails**" not in s and "cannot count" not in s
    assert "At no depth is the baseline's attention concentrated" in s and "up to 16 layers" in s
    assert "deeper baselines training worse" not in s                  # the baseline's loss does not rise
    s = c3.depth_sentence([4, 8, 16], [-0.004, -0.006, -0.009], [4.40, 4.42, 4.44], [4.396, 4.414, 4.431], [8],
                          baseline_trend=0.0117, trend_limit=0.005)
    assert "+0.0117 nats per doubling of depth" in s
    assert "the premise **fails**, so a gain that grows with depth cannot count as reproduced here" in s
    assert "deeper baselines training worse (their loss 4.400 → 4.440" in s   # it rises more than the VR's falls
    assert "concentrated at 8 layers" in s and "At no depth" not in s
