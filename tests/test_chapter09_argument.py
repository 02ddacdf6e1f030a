"""Chapter 09 as an argument: a number's side follows its sign (never a typed label), the strongest number of a side
is a firm one first, and every sentence's words follow its number's sign, size and verdict. Checked on numbers known
by construction, then on the stored results."""
from types import SimpleNamespace

import pytest

from vrs_edu.chapters.ch09_the_four_answers import answers as A, argument as G
from vrs_edu.chapters.ch09_the_four_answers.argument import Evidence


def _e(mean, verdict="reproduced", favours="positive", half=0.01, n=1, margin=0.05, **kw):
    fields = dict(label="l", subject="the swap", pos="costs {amount}", neg="lowers the loss by {amount}",
                  model="the model", corpus="the corpus", regime="the regime", where="there", chapter="02",
                  meaning={"for": "This counts for.", "against": "This counts against."},
                  point={"for": "gist for", "against": "gist against"}, claim="the claim")
    fields.update(kw)
    return Evidence(n, mean=mean, lo=mean - half, hi=mean + half, verdict=verdict, favours=favours, margin=margin,
                    **fields)


def test_a_numbers_side_follows_its_sign_and_what_the_conclusion_needs():
    assert G.side(_e(0.3)) == "for" and G.side(_e(-0.3)) == "against"
    assert G.side(_e(-0.3, favours="negative")) == "for" and G.side(_e(0.3, favours="negative")) == "against"
    assert G.side(_e(0.03, favours="cheap")) == "for" and G.side(_e(1.2, favours="cheap")) == "against"
    # a negligible sign claim: the effect the conclusion needs is too small to matter
    assert G.side(_e(-0.01, "negligible", favours="negative")) == "against"
    # question 1's measure (what the fresh pattern is worth) takes no side, whatever its size
    assert G.side(_e(1.2, favours="measure")) == G.side(_e(0.01, favours="measure")) == "measure"


def test_firm_means_a_decided_verdict_or_an_interval_wholly_on_its_side():
    assert G.firm(_e(0.3)) and G.firm(_e(0.01, "negligible"))
    assert not G.firm(_e(0.3, "undecided"))
    # a declared test left undecided is not firm, even with its unadjusted interval wholly below the tolerance
    assert not G.firm(_e(-0.014, "undecided", favours="cheap"))
    assert G.firm(_e(-0.014, None, favours="cheap"))                      # a description wholly below 0.05
    assert not G.firm(_e(0.04, None, favours="cheap", half=0.02))         # the interval straddles 0.05
    assert G.firm(_e(0.2, None)) and not G.firm(_e(0.005, None))         # a description: its interval and 0


def test_the_strongest_is_firm_first_then_decided_then_largest():
    big_undecided, small_decided = _e(0.9, "undecided", half=1.0), _e(0.1)
    assert G.strongest([big_undecided, small_decided], "for") is small_decided
    assert G.strongest([_e(0.1), _e(0.5)], "for").mean == 0.5
    assert G.strongest([_e(0.1)], "against") is None


def test_amounts_say_small_and_large_in_words():
    assert G.amount(-0.016) == "only 0.016 nats"
    assert G.amount(0.577) == "0.58 nats"
    assert G.amount(5.93) == "as much as 5.93 nats"
    assert G.amount(-0.032, small=0.0) == "0.032 nats"
    # a gain is never belittled with "only"; a small cost is
    assert "lowers the loss by 0.032 nats (95 %" in G.evidence_sentence(_e(-0.032, favours="negative"))
    assert "costs only 0.011 nats" in G.evidence_sentence(_e(0.011, favours="negative"))


@pytest.mark.parametrize("verdict, words", [
    ("reproduced", 'the claim "c" holds beyond noise (reproduced)'),
    ("contradicted", 'the claim "c" fails beyond noise (contradicted)'),
    ("negligible", "too small to matter: its interval lies inside ±0.028 nats (negligible)"),
    ("undecided", "noise could explain it"), ("out of regime", "a premise of its test failed"),
    (None, "a description: no test was declared on it")])
def test_a_verdict_is_said_in_words(verdict, words):
    assert words in G.verdict_clause(verdict, "c", 0.028)


def test_a_sentence_follows_its_numbers_sign_size_and_verdict():
    up = G.evidence_sentence(_e(0.577, half=0.1))
    assert "the swap costs 0.58 nats (95 % interval +0.477 to +0.677 nats)" in up
    assert "holds beyond noise (reproduced)" in up and up.endswith("This counts for.")
    down = G.evidence_sentence(_e(-0.016, "undecided", favours="negative"))
    assert "lowers the loss by 0.016 nats" in down and "(undecided)" in down
    assert "This counts" not in down, "an undecided number is not read as the reason it would give"
    big = G.evidence_sentence(_e(5.93, "contradicted", favours="cheap", half=0.2))
    assert "costs as much as 5.93 nats (95 % interval +5.73 to +6.13 nats)" in big
    assert "fails beyond noise (contradicted)" in big and big.endswith("This counts against.")
    assert big.startswith("In the model (the corpus; the regime), ")


def test_the_one_line_answer_follows_which_sides_are_firm():
    pro, con, weak = _e(0.3), _e(-0.3), _e(-0.3, "undecided")
    assert G.answer_line(2, pro, con) == "Partly: gist for (there); gist against (there)."
    assert G.answer_line(1, pro, con).startswith("Yes, both halves count: ")
    assert G.answer_line(2, pro, weak) == ("Yes: gist for (there); the strongest number against it is not told "
                                           "apart from noise (there).")
    assert G.answer_line(3, pro, weak).startswith("Yes, it can be designed (not every design tried does it): ")
    assert G.answer_line(3, pro, weak).endswith("the strongest number against it is not told "
                                                "apart from noise (there).")
    assert G.answer_line(4, None, con) == "No: nothing measured speaks for it; gist against (there)."
    assert G.answer_line(4, None, None).startswith("Not decided: ")


def test_question_1_says_how_much_first_from_its_measure():
    point = {"needed": "the layers need it", "spare": "the layers hardly need it", "cost": "stand-ins cost"}
    pro, measure = _e(0.58), _e(1.24, "contradicted", favours="measure", point=point, half=0.1)
    assert G.answer_line(1, pro, None, measure) == (
        "A lot, and what they move counts more: the layers need it (stand-ins cost as much as 1.24 nats; there); "
        "gist for (there); nothing measured speaks against it.")
    cheap = _e(0.01, "negligible", favours="measure", point=point)
    assert G.answer_line(1, None, None, cheap).startswith("Little: the layers hardly need it (stand-ins cost 0.010")
    assert G.answer_line(1, pro, None, _e(0.3, "undecided", favours="measure", point=point)).startswith(
        "Not decided, and what they move counts more: what the fresh pattern is worth is not told apart from noise")
    big = G.evidence_sentence(_e(1.24, "contradicted", favours="measure", point=point,
                                 meaning={"needed": "Needed.", "spare": "Spare."}))
    assert big.endswith("Needed.")
    row = {"n": 1, "measure": measure, "for": pro, "against": None}
    assert [x.split(".")[0] for x in G.side_sentences(row)] == ["**How much", "**For", "**Against"]


def test_the_capstone_sentence_reads_the_three_costs():
    both = G.capstone_sentence(5, 6, 0.17, 0.24, 0.39)
    assert both.startswith("At layer 5, the last of 6, replacing the pattern by a uniform one costs 0.17 nats")
    assert "needs its own pattern" in both and "what it moves matters more" in both
    assert both.endswith("both halves count, and QK alone would see the smaller one.")
    qk = G.capstone_sentence(1, 6, 0.3, 0.5, 0.2)
    assert "layer 1 of 6" in qk and "where it looks matters more" in qk and "QK alone sees more than half" in qk
    assert "lowers the loss by only 0.010 nats" in G.capstone_sentence(0, 2, -0.01, 0.001, 0.3)
    assert G.capstone_sentence(0, 2, 0.01, 0.02, 0.01).endswith("neither half costs much at this layer.")


def test_the_mhc_sentence_says_its_loss_and_its_matched_control():
    regime = {"layers": 8, "corpus": "kjv", "epochs": 0.3, "seeds": 5}
    s = G.mhc_sentence(SimpleNamespace(mean=-0.032, verdict="reproduced"),
                       SimpleNamespace(mean=-0.035, verdict="reproduced"), regime)
    assert "lowers the toy's loss by 0.032 nats" in s and "the 8-layer toy on the King James Bible" in s
    assert "it beats a control with as many parameters in its MLPs by 0.035 nats (reproduced)" in s
    worse = G.mhc_sentence(SimpleNamespace(mean=0.02, verdict="undecided"),
                           SimpleNamespace(mean=0.01, verdict="undecided"), None)
    assert "raises the toy's loss" in worse and "does not beat" in worse
    assert G.mhc_sentence(None, None, None) == ""


def test_the_closing_and_the_footing_count_what_the_rows_hold():
    rows = [{"n": 1, "for": _e(0.3), "against": None, "measure": _e(1.2, favours="measure")},
            {"n": 2, "for": _e(-0.03, favours="negative"), "against": _e(1.5, "contradicted", favours="negative")},
            {"n": 3, "for": _e(-0.1, favours="negative"), "against": _e(0.01, "undecided", favours="negative")},
            {"n": 4, "for": None, "against": _e(5.9, "contradicted", favours="cheap")}]
    text = G.closing(rows)
    assert "In question 1 both halves count, as it says" in text
    assert "firm support and no firm number against it in question 3" in text
    assert "only firm numbers against it in question 4" in text and "In question 2 both sides" in text
    foot = G.footing_sentence(rows)
    assert foot.startswith("Of the 7 numbers, 6 are decided by their declared test, 1 is not")
    assert "none is a description" in foot


def test_on_the_stored_results_each_question_has_both_sides_and_q2_says_why_v_mattering_counts_against():
    ev = A.gather_evidence(swaps={"ratios": [1.5], "more": 1, "L": 1, "last": (0.2, 0.05)})
    rows = G.argument_rows(G.build_candidates(ev))
    assert [r["n"] for r in rows] == [1, 2, 3, 4]
    for r in rows:
        for which in ("for", "against"):
            assert r[which] is None or G.side(r[which]) == which
    assert all(r["for"] is not None for r in rows) and [r["against"] is None for r in rows] == [True] + [False] * 3
    assert G.side(rows[0]["measure"]) == "measure" and rows[0]["answer"].startswith("A lot, and what they move")
    against2 = G.evidence_sentence(rows[1]["against"])
    assert "counts against question 2" in against2 and "post hoc" in against2
    assert "the Python documentation" in against2
    assert "mHC" in G.mhc_sentence(ev["designs"]["mhc_loss"], ev["designs"]["mhc_beats_matched"],
                                   ev["regimes"]["production-designs"])
