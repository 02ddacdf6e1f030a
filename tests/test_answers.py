"""Chapter 09's evidence helpers: the rule a swept test's arms are combined by (the judge's own, on every combination
of three arms and on known cases) and a stored result's regime (both layouts of a result file, known by construction).
The argument built from the evidence is specified in tests/test_chapter09_argument.py."""
import itertools
from dataclasses import replace

import pytest

from vrs_edu.chapters.ch09_the_four_answers import answers as A
from vrs_edu.lab.analysis import DeclaredTest, _combine
from vrs_edu.lab.results import VERDICTS, Verdict


def _full(rec: dict) -> dict:
    """A stored verdict record with the declaration's fields a hand-made one leaves out (they print nothing)."""
    return {"claim": "c", "quantity": "q", "comparison": "x", "direction": "negative", "threshold": 0.0,
            "family": "primary", "values": [], "sd": 0.01, "p": rec["p_holm"], "family_size": 1,
            "power_effect": rec["effect_for_power"], **rec}


def _v(name, mean, lo, hi, verdict, family="primary"):
    """A Verdict with the numbers known by construction."""
    rec = _full({"name": name, "mean": mean, "ci": [lo, hi], "p_holm": 0.01, "n": 5, "verdict": verdict,
                 "power": 0.5, "effect_for_power": None, "family": family})
    return Verdict.from_record(rec)


def test_the_arm_rule_is_the_judges_own_on_every_combination_of_three_arms():
    test = DeclaredTest(name="t", claim="c", quantity="q", comparison="x", direction="positive", threshold=0.0,
                        family="f", sweep="coef_lr")
    base = _v("t", 0.1, 0.0, 0.2, "reproduced")
    for combo in itertools.product([v for v in VERDICTS if v != "rate-dependent"], repeat=3):
        arms = [(f"a{i}", replace(base, verdict=v)) for i, v in enumerate(combo)]
        assert A.combine_arm_verdicts(list(combo)) == _combine(test, arms).verdict, combo


def test_the_arm_rule_on_known_cases_and_bad_input():
    assert A.combine_arm_verdicts(["reproduced"] * 3) == "reproduced"
    # review 3, H2: an undecided arm is a question of power; only opposite decided directions depend on the rate
    assert A.combine_arm_verdicts(["reproduced", "undecided", "reproduced"]) == "undecided"
    assert A.combine_arm_verdicts(["reproduced", "undecided", "contradicted"]) == "rate-dependent"
    assert A.combine_arm_verdicts(["negligible", "reproduced", "reproduced"]) == "undecided"
    assert A.combine_arm_verdicts(["out of regime", "reproduced", "reproduced"]) == "undecided"
    assert A.combine_arm_verdicts(["out of regime", "n/a", "out of regime"]) == "out of regime"
    assert A.combine_arm_verdicts(["reproduced", "reproduced"]) == "undecided"     # two arms decide nothing
    with pytest.raises(ValueError, match="verdicts must be among"):
        A.combine_arm_verdicts(["yes", "reproduced", "reproduced"])
    with pytest.raises(ValueError, match="empty"):
        A.combine_arm_verdicts([])


def test_regime_is_read_per_result_from_its_own_epochs():
    """The regime comes from each result file: a nested layout (value-residual) and a flat one (depth-mixers) give
    their own epochs, not one regime for every question."""
    model = {"n_layers": 8, "d_model": 64}
    nested = {"corpus": {"configs": {"baseline": {"model": model}}}, "epochs_read": {"corpus": {"baseline": 0.5956}},
              "text_corpus": {"name": "kjv"}, "seeds": [0, 1, 2, 3, 4]}
    flat = {"corpus": "kjv", "configs": {"residual": {"model": model}}, "epochs_read": 0.1985,
            "text_corpus": {"name": "kjv"}, "seeds": [0, 1, 2, 3, 4]}
    assert A.regime_parts(nested) == {"layers": 8, "width": 64, "corpus": "kjv", "epochs": 0.5956, "seeds": 5}
    assert A.regime_parts(flat) == {"layers": 8, "width": 64, "corpus": "kjv", "epochs": 0.1985, "seeds": 5}
