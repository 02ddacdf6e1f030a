"""Chapter 08's section on the norm-based view (``decoder-norms``; Kobayashi et al., arXiv 2004.10102 and 2109.07152;
Gu et al., arXiv 2410.10781): its sentences choose their words from the numbers and verdicts they state (hand-made
results, words expected by hand), stored records read back as live verdicts, and its figure draws readably."""
from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from vrs_edu.chapters.ch08_real_decoder import norms  # noqa: E402
from vrs_edu.chapters.ch08_real_decoder.figures import plot_sink_and_mixing  # noqa: E402
from vrs_edu.chapters.ch08_real_decoder.norms_prose import (gap_answer, mixing_numbers, mixing_sentence,  # noqa: E402
                                                            norms_answer, sink_numbers, sink_sentence,
                                                            swap_cost_sentence)
from vrs_edu.chapters.ch08_real_decoder.readout import verdict_rows  # noqa: E402
from vrs_edu.viz.plots import apply_course_style, small_text  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "data" / "results"
# per sequence, around each layer's mean (scaled by 1 + layer): zero-mean, a different pattern per reading, so that
# every mean is the one given and every paired difference, also between thirds, has a variance
SPREAD = {"weight_share": (-0.01, 0.0, 0.01), "norm_share": (0.005, -0.01, 0.005), "mixing": (-0.01, 0.0, 0.01),
          "weight_mixing": (0.0, 0.005, -0.005), "sink_heads": (0.0, 0.0, 0.0)}


def _result(weight0, norm0, mixing, weight_mixing):
    """A ``decoder-norms`` result of 3 sequences around the given per-layer means (:data:`SPREAD`); 6 layers, thirds
    of 2."""
    per = {"weight_share": weight0, "norm_share": norm0, "mixing": mixing, "weight_mixing": weight_mixing,
           "sink_heads": [0.5] * 6}
    return {"per_layer": {k: [[x + d * (1 + l) for d in SPREAD[k]] for l, x in enumerate(v)] for k, v in per.items()},
            "thirds": {"early": [0, 1], "middle": [2, 3], "late": [4, 5]}}


# layers 0-1 without a sink (weight share 0.1 and 0.25, below 0.3), layers 2-5 with one: at 2-4 a norm share far
# below the weight share, at 5 far above; the mixing ratio 0.5 early, 0.2 middle, 0.1 late, the weights 0.9
HAND = _result([0.1, 0.25, 0.6, 0.6, 0.6, 0.6], [0.1, 0.05, 0.2, 0.2, 0.2, 0.84], [0.5, 0.5, 0.2, 0.2, 0.1, 0.1],
               [0.9] * 6)


def test_the_sink_sentence_counts_the_judged_layers_and_names_the_others_with_their_would_be_verdicts():
    s = sink_numbers(HAND, norms.verdicts(HAND))
    assert s["judged"] == [2, 3, 4, 5] and s["out"] == {0: "negligible", 1: "reproduced"}
    assert s["weight"] == pytest.approx(0.6) and s["norm"] == pytest.approx(0.36)
    text = sink_sentence(s)
    assert "a sink (weight share above 0.3) in **4 of the 6 layers**; in **3** of them its norm share lies below" \
        in text
    assert "it takes **60%** of the weight but only **36%** of what the layer moves" in text
    assert "the other judged layers: contradicted at layer 5" in text
    assert ("Layers 0 and 1 have no sink by that rule and are *out of regime*; judged anyway, they would be "
            "negligible at layer 0 (weight share 0.10), reproduced at layer 1 (weight share 0.25).") in text


def test_every_sink_reproduced_reads_all_and_a_larger_norm_share_reads_and():
    r = _result([0.6] * 6, [0.2] * 6, [0.2] * 6, [0.9] * 6)
    text = sink_sentence(sink_numbers(r, norms.verdicts(r)))
    assert "in **all 6** of them" in text and "but only **20%**" in text and "out of regime" not in text
    s = {"n_layers": 2, "judged": [0, 1], "verdicts": {0: "undecided", 1: "undecided"}, "out": {},
         "weight": 0.4, "norm": 0.5, "weight_share": [0.4, 0.4]}
    text = sink_sentence(s)
    assert "in **0** of them" in text and "**40%** of the weight and **50%**" in text
    assert "the other judged layers: undecided at layers 0 and 1" in text
    none = sink_sentence({**s, "judged": [], "out": {0: "negligible", 1: "negligible"}})
    assert none.startswith("No layer has a first-token sink") and "would be negligible at layers 0 and 1" in none


def test_stored_records_read_back_give_the_same_numbers_as_live_verdicts():
    live = norms.verdicts(HAND)
    stored = [v.to_record() for v in live]
    assert sink_numbers(HAND, stored) == sink_numbers(HAND, live)
    assert mixing_numbers(HAND, stored)["thirds"] == mixing_numbers(HAND, live)["thirds"]


def test_the_mixing_sentence_gives_each_third_against_the_weights_and_the_depth_verdict():
    m = mixing_numbers(HAND, norms.verdicts(HAND))
    assert m["thirds"]["early"]["r"] == pytest.approx(0.5) and m["thirds"]["late"]["weights"] == pytest.approx(0.9)
    text = mixing_sentence(m)
    assert "a token takes **50%, 20% and 10%** of its new state from its context (the early, middle and late third)" \
        in text
    assert "the weights alone (1 − α_ii) say **90%, 90% and 90%**. The test" in text   # no attention-alone reading
    assert "early *reproduced*, middle *reproduced*, late *reproduced*" in text
    assert "The early third mixes more than the late, by 40 points of the ratio (+0.400 [+0." in text
    # the other way round: the late third mixes more
    flip = _result([0.6] * 6, [0.2] * 6, [0.1, 0.1, 0.2, 0.2, 0.5, 0.5], [0.9] * 6)
    text = mixing_sentence(mixing_numbers(flip, norms.verdicts(flip)))
    assert "The early third mixes less than the late, by 40 points" in text and "*contradicted*" in text


def test_the_attention_alone_reading_is_said_between_the_weights_and_the_mixing_ratio():
    per = {**HAND["per_layer"], "attention_mixing": [[x] * 3 for x in (0.8, 0.8, 0.6, 0.6, 0.4, 0.4)]}
    m = mixing_numbers({**HAND, "per_layer": per}, norms.verdicts(HAND))
    assert m["thirds"]["late"]["attention"] == pytest.approx(0.4)
    assert ("say **90%, 90% and 90%**; attention alone, by the norms of what it moves but without the residual, "
            "says 80%, 60% and 40%: the values' norms take the first step down, the residual the rest. The test") \
        in mixing_sentence(m)


def test_the_swap_cost_description_says_which_reading_follows_the_cost_and_judges_nothing():
    swap = {"spearman": {"mixing": 0.14, "weight_mixing": 0.04, "norm_share": -0.53, "weight_share": -0.40},
            "layers": 30, "sequences": 4}
    text = swap_cost_sentence(swap)
    assert text.startswith("**A description, not a test.**")
    assert "with the mixing ratio is +0.14, with 1 − α_ii +0.04; with the first token's norm share -0.53" in text
    assert "In both pairs the norm-based reading follows the cost more closely" in text
    assert "not independent replicates and each cost rests on 4 sequences" in text
    mixed = swap_cost_sentence({**swap, "spearman": {**swap["spearman"], "weight_mixing": -0.30}})
    assert "The weight-based reading follows the cost more closely for the mixing, the norm-based for the sink" in mixed
    assert "no comparison with the pattern-swap cost" in swap_cost_sentence(None)


def test_the_answer_says_the_weights_mis_state_only_when_the_readings_differ():
    rows = norms.verdicts(HAND)
    s, m = sink_numbers(HAND, rows), mixing_numbers(HAND, rows)
    text = norms_answer(s, m)
    assert "where the first token is a sink, it takes 60% of the weight but only 36% of what the layer moves" in text
    assert "a token takes 27% of its new state from its context where the weights alone say 90%" in text
    assert text.endswith("the weights (QK) alone mis-state what attention moves.")
    same = {**m, "all": {"r": 0.88, "weights": 0.9}}
    assert norms_answer({**s, "judged": []}, same).endswith("here the weights' reading and the norms' agree.")
    assert "no layer has a first-token sink" in norms_answer({**s, "judged": []}, same)


def test_the_stored_run_reads_as_the_chapter_prints_it():
    r = json.loads((RESULTS / "decoder-norms.json").read_text())
    rows = norms.verdicts(r)
    s = sink_numbers(r, rows)
    assert len(s["judged"]) == len(r["per_layer"]["weight_share"]) - len(s["out"])
    assert f"in **{len(s['judged'])} of the 30 layers**" in sink_sentence(s)
    assert len(verdict_rows(rows)) == len(r["verdicts"])


def test_the_figure_draws_both_readings_readably():
    with plt.rc_context():
        apply_course_style()
        fig = plot_sink_and_mixing(HAND)
        a, b = fig.axes
        assert len(a.lines) == 3 and len(b.lines) == 4          # weight, norm, threshold; two readings, two thirds
        assert list(a.lines[0].get_ydata()) == pytest.approx([0.1, 0.25, 0.6, 0.6, 0.6, 0.6])
        assert [t.get_text() for t in b.texts] == ["early third", "middle third", "late third"]
        assert small_text(fig) == [] and fig.get_size_inches()[0] <= 10.5
        # a result with the attention-alone reading draws it between the other two
        per = {**HAND["per_layer"], "attention_mixing": [[0.7] * 3 for _ in range(6)]}
        fig = plot_sink_and_mixing({**HAND, "per_layer": per})
        labels = [line.get_label() for line in fig.axes[1].lines if not line.get_label().startswith("_")]
        assert labels == ["1 − α_ii (weights)", "attention alone (norms)", "mixing ratio r (norms + residual)"]
        plt.close("all")


@pytest.mark.parametrize("mixing_gap, sink_gap, words", [
    (-0.5, -0.4, "yes: the layers whose weights mis-state most pay least for another sequence's pattern."),
    (0.5, 0.4, "the opposite: the layers whose weights mis-state most pay most"),
    (-0.05, -0.35, "only in part: where the sink's gap is larger a layer pays less for another sequence's pattern; "
                   "the mixing's gap shows no link."),
    (0.4, -0.4, "only in part: where the mixing's gap is larger a layer pays more for another sequence's pattern; "
                "where the sink's gap is larger a layer pays less for another sequence's pattern."),
    (0.1, -0.29, "no: neither gap reaches |ρ| = 0.3"),
])
def test_the_gap_question_is_answered_from_the_sign_and_size_of_both_correlations(mixing_gap, sink_gap, words):
    text = gap_answer({"mixing_gap": mixing_gap, "sink_gap": sink_gap})
    assert words in text and f"ρ = {mixing_gap:+.2f}" in text and f"ρ = {sink_gap:+.2f}" in text
    assert gap_answer({"mixing": 0.1}) == ""          # a description stored before the gaps were read


def test_the_description_reads_both_gaps_from_the_two_stored_results():
    n, r = (json.loads((RESULTS / f"{k}.json").read_text()) for k in ("decoder-norms", "real-decoder"))
    d = norms.swap_cost_description(n, r)
    assert {k: d["spearman"][k] for k in n["swap_cost"]["spearman"]} == n["swap_cost"]["spearman"]
    assert -1 <= d["spearman"]["mixing_gap"] <= 1 and -1 <= d["spearman"]["sink_gap"] <= 1
