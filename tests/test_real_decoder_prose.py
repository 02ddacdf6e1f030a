"""Chapter 08's computed sentences choose their words from the numbers they state (known inputs, words expected by
hand): the half-calibration checks explained, the three estimators' combined reading, and the post-hoc question's
direction."""
from types import SimpleNamespace

from vrs_edu.chapters.ch08_real_decoder.readout import (agreed_sentence, half_calibration_sentence, half_table_costs,
                                                        post_hoc_sentence, verdict_words)
from vrs_edu.lab.results import interval


def _pt(full, half0, half1):
    out = {}
    for p in "QKV":
        out[f"{p} table · late"] = {"mean": full[p]}
        out[f"{p} table, half 0 · late"] = {"mean": half0[p]}
        out[f"{p} table, half 1 · late"] = {"mean": half1[p]}
    return out


PT = _pt({"Q": 0.414, "K": 0.694, "V": 1.977}, {"Q": 0.43, "K": 0.77, "V": 1.99}, {"Q": 0.428, "K": 0.786, "V": 1.996})


def test_the_half_table_costs_average_the_two_halves():
    half = half_table_costs(PT)
    assert abs(half["K"] - 0.778) < 1e-9 and abs(half["Q"] - 0.429) < 1e-9


def _chk(mean, ci, verdict, would_be=None):
    return SimpleNamespace(mean=mean, ci=ci, verdict=verdict, would_be=would_be, interval=lambda: interval(mean, ci))


def test_the_half_calibration_sentence_gives_each_contrast_and_its_verdict():
    checks = {"half_calibration_v_minus_q": _chk(0.0004, (-0.026, 0.027), "undecided"),
              "half_calibration_v_minus_k": _chk(-0.069, (-0.11, -0.027), "contradicted"),
              "half_calibration_v": _chk(0.016, (-0.011, 0.042), "undecided")}
    text = half_calibration_sentence(checks, 0.025)
    assert "V − Q +0.000 [-0.026, +0.027] (undecided); V − K -0.069 [-0.110, -0.027] (contradicted)" in text
    assert "against a band of ±0.025 (an equivalence test)" in text
    assert "(V − Q, V − K, V's own cost)" in text and "out of regime" in text


def test_a_holding_half_check_is_said_to_hold():
    ok = {n: _chk(0.001, (-0.01, 0.012), "reproduced") for n in
          ("half_calibration_v_minus_q", "half_calibration_v_minus_k", "half_calibration_v")}
    text = half_calibration_sentence(ok, 0.025)
    assert "Every check holds" in text and "out of regime" not in text


def test_verdict_words_print_the_would_be_verdict_beside_out_of_regime():
    assert verdict_words({"verdict": "out of regime", "would_be": "contradicted"}) == \
        "out of regime (would be: contradicted)"
    assert verdict_words({"verdict": "contradicted", "would_be": None}) == "contradicted"


def test_the_agreed_sentence_names_each_estimator_only_where_they_differ():
    each = lambda *w: dict(zip(("a", "b", "c"), w))  # noqa: E731
    readings = {"late_v_beats_q": {"verdict": "contradicted", "would_be": None,
                                   "each": each("contradicted", "contradicted", "contradicted")},
                "late_v_beats_k": {"verdict": "undecided", "would_be": None,
                                   "each": each("contradicted", "contradicted", "undecided")},
                "late_v_within_tolerance": {"verdict": "out of regime", "would_be": "contradicted",
                                            "each": each("out of regime", "out of regime", "contradicted")}}
    text = agreed_sentence(readings)
    assert "better than Q': **contradicted** — all three estimators agree;" in text
    assert ("better than K': **undecided** — the estimators differ (mean table contradicted, shrunk table "
            "contradicted, W·norm(x0) undecided)") in text
    assert "within the tolerance': **out of regime (would be: contradicted)**" in text


def test_the_post_hoc_sentence_says_opposite_when_v_costs_most_and_predicted_when_least():
    opposite = post_hoc_sentence({"Q": 0.41, "K": 0.69, "V": 1.98}, ["out of regime (would be: contradicted)"] * 2)
    assert "V's mean table costs +1.57 nats against Q's and +1.29 against K's (the opposite of the article's reading)" \
        in opposite
    assert "both *out of regime (would be: contradicted)* (not judged" in opposite
    assert "counted only where the three estimators agree" in opposite
    predicted = post_hoc_sentence({"Q": 1.0, "K": 0.9, "V": 0.2}, ["reproduced", "undecided"])
    assert "as the article's reading predicts" in predicted and "*reproduced* and *undecided*" in predicted
    assert "between the two" in post_hoc_sentence({"Q": 1.0, "K": 0.1, "V": 0.5}, ["undecided"] * 2)


def test_the_post_hoc_sentence_names_the_declared_checks_that_did_not_hold():
    result = {"verdicts": [
        {"name": "identity_patch_is_free", "kind": "check", "verdict": "reproduced"},
        {"name": "half_calibration_v_minus_q", "kind": "check", "verdict": "undecided"},
        {"name": "half_calibration_v", "kind": "check", "verdict": "contradicted"},
        {"name": "late_v_table_beats_q_table", "kind": "claim", "verdict": "out of regime",
         "requires": ["identity_patch_is_free", "half_calibration_v_minus_q", "half_calibration_v", "coverage"]}]}
    from vrs_edu.chapters.ch08_real_decoder.readout import failed_checks

    checks = failed_checks(result, ["late_v_table_beats_q_table"])
    assert checks == {"half_calibration_v_minus_q": "undecided", "half_calibration_v": "contradicted"}
    text = post_hoc_sentence({"Q": 0.41, "K": 0.69, "V": 1.98}, ["out of regime"] * 2, checks)
    assert ("(not judged: the declared checks did not hold — `half_calibration_v_minus_q` is undecided and "
            "`half_calibration_v` is contradicted)") in text
    assert "a declared check did not hold" not in text


def _cf(costs):
    from vrs_edu.chapters.ch08_real_decoder.recipe import ESTIMATORS, estimator

    pt = {}
    for (p, e), (m, lo, hi) in zip(((p, e) for p in "QK" for e in ESTIMATORS), costs):
        pt[f"{estimator(e, p)} · late"] = {"mean": m, "ci": [lo, hi]}
    return {"per_third": pt, "tolerance": 0.05}


def test_the_context_free_pattern_sentence_counts_costs_inside_the_tolerance():
    from vrs_edu.chapters.ch08_real_decoder.readout import context_free_pattern_sentence

    costly = context_free_pattern_sentence(_cf([(0.41, 0.38, 0.44)] * 6))
    assert "Q +0.41 / +0.41 / +0.41; K +0.41 / +0.41 / +0.41 nats" in costly
    assert "none lies within ±0.05 nats" in costly
    one = context_free_pattern_sentence(_cf([(0.01, -0.01, 0.03)] + [(0.41, 0.38, 0.44)] * 5))
    assert "1 of 6 lie within ±0.05 nats (Q by the mean table)" in one
