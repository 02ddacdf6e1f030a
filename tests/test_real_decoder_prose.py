"""Chapter 08's computed sentences choose their words from the numbers they state (known inputs, words expected by
hand): the half-calibration check explained, and the post-hoc question's direction."""
from types import SimpleNamespace

from vrs_edu.lab.real_decoder_readout import half_calibration_sentence, half_table_costs, post_hoc_sentence
from vrs_edu.lab.results import interval


def _pt(full, half0, half1):
    out = {}
    for p in "QKV":
        out[f"{p} table · late"] = {"mean": full[p]}
        out[f"{p} table, half 0 · late"] = {"mean": half0[p]}
        out[f"{p} table, half 1 · late"] = {"mean": half1[p]}
    return out


PT = _pt({"Q": 0.414, "K": 0.694, "V": 1.977}, {"Q": 0.43, "K": 0.77, "V": 1.99}, {"Q": 0.428, "K": 0.786, "V": 1.996})


def check(mean, ci, verdict):
    return SimpleNamespace(mean=mean, ci=ci, verdict=verdict, interval=lambda: interval(mean, ci))


def test_the_half_table_costs_average_the_two_halves():
    half = half_table_costs(PT)
    assert abs(half["K"] - 0.778) < 1e-9 and abs(half["Q"] - 0.429) < 1e-9


def test_the_half_calibration_sentence_explains_a_mean_of_maxima_above_every_gap():
    text = half_calibration_sentence(PT, check(0.1137, (0.082, 0.1453), "contradicted"), 0.025)
    assert "Q +0.015, K +0.084, V +0.016 nats more than all of it" in text
    assert "+0.114 [+0.082, +0.145] nats, against a bound of 0.025" in text
    assert "larger than any one projection's mean gap (at most +0.084, K)" in text
    assert "**contradicted**" in text and "out of regime" in text


def test_a_holding_check_is_said_to_hold_and_no_maximum_is_explained_when_none_is_larger():
    text = half_calibration_sentence(PT, check(0.084, (0.07, 0.09), "reproduced"), 0.1)
    assert "The check holds" in text and "larger than any" not in text


def test_the_post_hoc_sentence_says_opposite_when_v_costs_most_and_predicted_when_least():
    opposite = post_hoc_sentence({"Q": 0.41, "K": 0.69, "V": 1.98}, ["out of regime", "out of regime"])
    assert "V's table costs +1.57 nats against Q's and +1.29 against K's (the opposite of the seed's reading)" \
        in opposite
    assert "both *out of regime* (not judged" in opposite
    predicted = post_hoc_sentence({"Q": 1.0, "K": 0.9, "V": 0.2}, ["reproduced", "undecided"])
    assert "as the seed's reading predicts" in predicted and "*reproduced* and *undecided*" in predicted
    assert "between the two" in post_hoc_sentence({"Q": 1.0, "K": 0.1, "V": 0.5}, ["undecided"] * 2)


def test_the_post_hoc_sentence_names_the_declared_checks_that_did_not_hold():
    result = {"verdicts": [
        {"name": "identity_patch_is_free", "kind": "check", "verdict": "reproduced"},
        {"name": "bf16_matches_fp32", "kind": "check", "verdict": "undecided"},
        {"name": "table_estimate_not_bottleneck", "kind": "check", "verdict": "contradicted"},
        {"name": "late_v_table_beats_q_table", "kind": "claim", "verdict": "out of regime",
         "requires": ["identity_patch_is_free", "bf16_matches_fp32", "table_estimate_not_bottleneck", "coverage"]}]}
    from vrs_edu.lab.real_decoder_readout import failed_checks

    checks = failed_checks(result, ["late_v_table_beats_q_table"])
    assert checks == {"bf16_matches_fp32": "undecided", "table_estimate_not_bottleneck": "contradicted"}
    text = post_hoc_sentence({"Q": 0.41, "K": 0.69, "V": 1.98}, ["out of regime"] * 2, checks)
    assert ("(not judged: the declared checks did not hold — `bf16_matches_fp32` is undecided and "
            "`table_estimate_not_bottleneck` is contradicted)") in text
    assert "a declared check did not hold" not in text
