"""The verdict rules of lab/analysis.py: what cannot be decided says why, preconditions put a claim out of regime,
controls are judged only where their claim is reproduced, set-up checks and controls keep out of the claims' Holm
families, power is stated at the declared effect, and a test over a sweep counts only if it holds at every arm.
Every expected value is computed by hand in the comment beside it."""
import json
import math

import pytest

from vrs_edu.lab.analysis import (DeclaredTest, Precondition, format_measured, format_verdicts, judge,
                                  paired_difference, power_paired_t, t_test, verdict_records)
from vrs_edu.lab.results import PreconditionOutcome, Verdict

# five seeds of a clear effect, one of noise, one exactly on the opposite side
CLEAR = [-0.10, -0.12, -0.09, -0.11, -0.10]     # mean -0.104, sd 0.0114: p ≈ 1e-5
NOISE = [0.1, -0.2, 0.3, 0.0, 0.1]              # mean 0.06, sd 0.182: p ≈ 0.5


def claim(name, family="primary", **kw):
    direction = kw.pop("direction", "negative")
    effect = kw.pop("effect", -0.01 if direction == "negative" else 0.01)    # well inside CLEAR's and NOISE's spread
    return DeclaredTest(name, "a claim", "q", "x", direction, 0.0, family, effect, **kw)


# -- issue 30: zero variance or fewer than 3 seeds is undecided, with the reason ------------------------------------

def test_identical_values_give_no_t_and_no_p_and_say_why():
    r = t_test([0.5, 0.5, 0.5])
    # sd = 0: before this rule t was +inf and p 0, a "decided" result from what may be one run counted thrice
    assert math.isnan(r["t"]) and math.isnan(r["p"])
    assert math.isnan(r["ci"][0]) and math.isnan(r["ci"][1])
    assert r["reason"] == "zero variance: every seed gave +0.500"


def test_fewer_than_three_seeds_decide_nothing():
    r = t_test([1.0, 2.0])                     # mean 1.5, sd 0.707: an interval exists (1 df), a verdict does not
    assert r["ci"][0] == pytest.approx(1.5 - 12.7062 * 0.7071 / math.sqrt(2), abs=1e-3)
    assert math.isnan(r["p"]) and r["reason"] == "2 distinct seeds, fewer than 3"
    # three values from two distinct seeds (seed 1 run twice) count as two seeds
    r = t_test([1.0, 2.0, 3.0], seeds=[1, 1, 2])
    assert math.isnan(r["p"]) and r["reason"] == "2 distinct seeds, fewer than 3 (seeds [1, 1, 2])"
    with pytest.raises(ValueError, match="one entry per value"):
        t_test([1.0, 2.0, 3.0], seeds=[1, 2])


def test_judge_calls_such_a_test_undecided_and_leaves_it_out_of_holm():
    tests = [claim("same", "fam"), claim("two", "fam"), claim("real", "fam")]
    rows = {r.test.name: r for r in judge(tests, {"same": [-1.0] * 5, "two": [-1.0, -2.0], "real": CLEAR})}
    assert rows["same"].verdict == "undecided" and rows["same"].reason.startswith("zero variance")
    assert rows["two"].verdict == "undecided" and "fewer than 3" in rows["two"].reason
    assert rows["real"].verdict == "reproduced"
    assert rows["real"].family_size == 1                   # only the decidable test counts in Holm's m
    assert rows["real"].p_holm == pytest.approx(rows["real"].p)
    assert str(rows["same"]) == "-1.000 [95% CI n/a, n/a]: undecided (zero variance: every seed gave -1.000)"


def test_the_paired_difference_of_one_run_counted_twice_says_it_is_undecidable():
    d = paired_difference([4.2, 4.2], [4.3, 4.3])          # `--seeds 1,1`: the same run twice
    assert math.isnan(d.t) and math.isnan(d.ci[0])
    assert str(d) == ("-0.100 [n/a, n/a], 2/2 seeds below 0 (undecidable: zero variance: every seed gave -0.100; "
                      "2 distinct seeds, fewer than 3)")
    assert "reason" in d.to_dict() and "reason" not in paired_difference([1, 2, 4], [0, 0, 0]).to_dict()


# -- preconditions and the fourth verdict, out of regime -------------------------------------------------------------

EPOCHS = Precondition("sub_epoch", "the runs cannot memorise their training text", "epochs read", "negative", 1.0)


def test_a_failed_precondition_puts_a_claim_out_of_regime_and_out_of_its_family():
    tests = [claim("loss", "fam", requires=("sub_epoch",)), claim("other", "fam")]
    values = {"loss": CLEAR, "other": CLEAR}
    rows = judge(tests, values, preconditions=[EPOCHS], facts={"sub_epoch": 6.12})
    assert rows[0].verdict == "out of regime" and not rows[0].counted
    assert rows[0].reason == "precondition not met: sub_epoch 6.120 (needs < 1): fails"
    assert math.isnan(rows[0].p_holm)
    assert rows[1].family_size == 1 and rows[1].verdict == "reproduced"
    assert rows[0].would_be == "reproduced"          # what the data say if judged: CLEAR is clearly below 0
    assert str(rows[0]).endswith(": out of regime (would be: reproduced) (precondition not met: sub_epoch 6.120 "
                                 "(needs < 1): fails)")
    held = judge(tests, values, preconditions=[EPOCHS], facts={"sub_epoch": 0.596})
    assert [r.verdict for r in held] == ["reproduced", "reproduced"] and held[0].family_size == 2


def test_a_claim_may_require_a_set_up_check_which_is_judged_in_its_own_family():
    check = DeclaredTest("premise", "the premise", "q", "x", "negative", 0.0, "setup", kind="check")
    entropy = claim("entropy", "fam", direction="positive", requires=("premise",))
    # the premise reproduced: the claim is judged
    rows = judge([check, entropy], {"premise": CLEAR, "entropy": [-x for x in CLEAR]})
    assert [r.verdict for r in rows] == ["reproduced", "reproduced"]
    # the premise contradicted (attention is *less* concentrated than uniform): nothing to relieve
    rows = judge([check, entropy], {"premise": [-x for x in CLEAR], "entropy": [-x for x in CLEAR]})
    assert rows[0].verdict == "contradicted" and rows[1].verdict == "out of regime"
    assert rows[1].reason == "precondition not met: check premise is contradicted"
    # a family may not mix a check with claims
    with pytest.raises(ValueError, match="mixes"):
        judge([DeclaredTest("premise", "p", "q", "x", "negative", 0.0, "fam", kind="check"), entropy],
              {"premise": CLEAR, "entropy": CLEAR})
    with pytest.raises(ValueError, match="no such check or precondition"):
        judge([claim("x", requires=("nothing",))], {"x": CLEAR})
    with pytest.raises(ValueError, match="no value for declared preconditions"):
        judge([claim("x", requires=("sub_epoch",))], {"x": CLEAR}, preconditions=[EPOCHS])


def test_a_precondition_holds_strictly_on_its_side_and_never_on_nan():
    assert EPOCHS.holds(0.99) and not EPOCHS.holds(1.0) and not EPOCHS.holds(float("nan"))
    o = EPOCHS.judge({"x1": 0.6, "x4": 1.2})
    assert not o.holds and o.holds_at("x1") and not o.holds_at("x4")
    assert PreconditionOutcome.from_record(json.loads(json.dumps(o.to_record()))) == o


# -- gated controls ----------------------------------------------------------------------------------------------

def control(name, gate, family="controls"):
    return DeclaredTest(name, "the gain needs x0", "q", "x", "negative", 0.0, family, -0.01, kind="control",
                        gate=gate)


def test_a_control_is_judged_only_where_its_claim_is_reproduced():
    tests = [claim("gain", "claims"), control("beats_scale", "gain"), control("beats_random", "gain")]
    rows = judge(tests, {"gain": NOISE, "beats_scale": CLEAR, "beats_random": CLEAR})
    assert rows[0].verdict == "undecided"
    assert [r.verdict for r in rows[1:]] == ["n/a", "n/a"]
    assert rows[1].reason == "gain is undecided: no gain for the control to explain"
    rows = judge(tests, {"gain": CLEAR, "beats_scale": CLEAR, "beats_random": NOISE})
    assert [r.verdict for r in rows] == ["reproduced", "reproduced", "undecided"]
    assert rows[1].family_size == 2 and rows[0].family_size == 1     # the controls' family, apart from the claim's
    with pytest.raises(ValueError, match="needs a gate"):
        DeclaredTest("c", "c", "q", "x", "negative", kind="control")
    with pytest.raises(ValueError, match="not a declared claim"):
        judge([control("c", "missing")], {"c": CLEAR})


# -- effects declared in units: power at that effect, none without one --------------------------------------------

def test_power_is_reported_at_the_declared_effect_and_a_claim_without_one_is_refused():
    tests = [claim("gain", "fam", effect=-0.027, effect_source="paper: ResFormer v1 Table 5"), claim("other", "fam")]
    # mean 0, sd 0.030: the interval (±0.037) reaches past ±0.027, so the test is undecided, not negligible
    rows = judge(tests, {"gain": [0.03, -0.04, 0.025, -0.02, 0.005], "other": NOISE})
    gain, _ = rows
    assert gain.verdict == "undecided" and gain.power_basis == "declared" and gain.power_effect == -0.027
    # family of 2: Holm's strictest level is 0.05 / 2
    assert gain.power == pytest.approx(power_paired_t(-0.027, gain.sd, 5, 0.025))
    assert f"(power {gain.power:.0%} at -0.027)" in str(gain)
    text = format_verdicts(rows)
    assert "at d = 1" not in text and max(len(line) for line in text.splitlines()) <= 100
    # every claim and control declares its smallest effect; a check need not
    with pytest.raises(ValueError, match=r"must declare effect_for_power .* got none for \['bare'\]"):
        judge([claim("bare", effect=None)], {"bare": NOISE})
    (check,) = judge([DeclaredTest("c", "c", "q", "x", "negative", 0.0, "setup", kind="check")], {"c": NOISE})
    assert check.power_basis == "none" and str(check).endswith("undecided (no effect declared)")
    with pytest.raises(ValueError, match="points against"):
        claim("wrong", effect=+0.027)                                  # a gain claim with a positive effect


# -- sweeps: a verdict must hold at every arm, else rate-dependent -------------------------------------------------

def swept(name, family="x0"):
    return DeclaredTest(name, "V reads x0", "q", "x", "positive", 0.0, family, 0.1, "declared: a tenth of a share",
                        sweep="coef_lr")


UP = [-x for x in CLEAR]


def test_a_swept_test_counts_only_when_every_arm_agrees():
    tests = [swept("everywhere"), swept("flips")]
    values = {"everywhere": {"x1": UP, "x0.25": UP, "x4": UP},
              "flips": {"x1": UP, "x0.25": NOISE, "x4": CLEAR}}      # reproduced, undecided, contradicted
    every, flips = judge(tests, values)
    assert every.verdict == "reproduced" and [a for a, _ in every.arms] == ["x1", "x0.25", "x4"]
    assert flips.verdict == "rate-dependent"
    assert [v.verdict for _, v in flips.arms] == ["reproduced", "undecided", "contradicted"]
    assert flips.mean == pytest.approx(0.104)                            # the nominal (first) arm's numbers
    assert all(v.family_size == 2 for _, v in every.arms)                # Holm within the family at each arm
    assert str(flips).startswith("rate-dependent across coef_lr (x1 +0.104 [")
    back = [Verdict.from_record(json.loads(json.dumps(r))) for r in verdict_records([every, flips])]
    assert [b.verdict for b in back] == ["reproduced", "rate-dependent"] and back[1].arms[2][1].verdict == "contradicted"
    with pytest.raises(ValueError, match="arm"):
        judge([swept("a")], {"a": UP})
    # one or two rates are no sweep: a verdict that held there still does not count
    (short,) = judge([swept("short")], {"short": {"x1": UP, "x4": UP}})
    assert short.verdict == "undecided" and short.reason == "reproduced at x1, x4, but the sweep has 2 arms, fewer than 3"


def test_an_arm_out_of_regime_keeps_a_swept_claim_from_counting():
    worse = Precondition("no_worse", "the model read is no worse than the baseline", "Δ loss", "negative", 0.01)
    t = DeclaredTest("share", "c", "q", "x", "positive", 0.0, "x0", 0.1, sweep="coef_lr", requires=("no_worse",))
    (row,) = judge([t], {"share": {"x1": UP, "x0.25": UP, "x4": UP}}, preconditions=[worse],
                   facts={"no_worse": {"x1": -0.01, "x0.25": -0.02, "x4": 0.05}})
    # decided at two arms, out of regime at the third: not shown at every rate, not shown to flip: undecided
    assert row.verdict == "undecided"
    assert [v.verdict for _, v in row.arms] == ["reproduced", "reproduced", "out of regime"]
    assert row.reason.startswith("reproduced at x1, x0.25; out of regime at x4 (")
    assert "at x4: precondition not met: no_worse 0.050 (needs < 0.01): fails" in row.reason
    (every,) = judge([t], {"share": {"x1": UP, "x0.25": UP, "x4": UP}}, preconditions=[worse],
                     facts={"no_worse": {"x1": 0.02, "x0.25": 0.02, "x4": 0.05}})
    assert every.verdict == "out of regime" and every.would_be == "reproduced"


def test_rate_dependent_needs_arms_decided_in_opposite_directions():
    # review 3, H2: one arm decided and two undecided is a question of power, not of rate
    (one,) = judge([swept("one")], {"one": {"x1": NOISE, "x0.25": NOISE, "x4": UP}})
    assert one.verdict == "undecided" and one.reason == "undecided at x1, x0.25; reproduced at x4"
    (flip,) = judge([swept("flip")], {"flip": {"x1": UP, "x0.25": NOISE, "x4": CLEAR}})
    assert flip.verdict == "rate-dependent"


# -- negligible: an interval inside ± the declared smallest effect ----------------------------------------------

TINY = [1.9e-7, 1.0e-7, 3.0e-7, 2.2e-7, 1.4e-7]    # review 3, H2: "reproduced" at 50,000x below its effect


def test_an_interval_inside_the_smallest_effect_is_negligible_never_reproduced():
    (row,) = judge([claim("tiny", direction="positive", effect=0.01)], {"tiny": TINY})
    # mean 1.9e-7, sd 7.6e-8, t ≈ 5.6 with 4 df: p ≈ 0.005 < 0.05 — "reproduced" before the rule
    assert row.p_holm < 0.05 and row.verdict == "negligible" and row.counted
    assert str(row).endswith("negligible (inside ±0.01, the declared smallest effect)")
    # the same data against an effect below them: decided as before
    (big,) = judge([claim("tiny", direction="positive", effect=1e-7)], {"tiny": TINY})
    assert big.verdict == "reproduced"
    # an interval that reaches past the effect on one side stays undecided/decided by its p, not negligible
    (edge,) = judge([claim("edge", effect=-0.05)], {"edge": CLEAR})     # CLEAR's interval reaches -0.118
    assert edge.verdict == "reproduced"


# -- equivalence: tolerance and "no worse" claims, two one-sided tests ---------------------------------------------

def within(name, margin=0.05, **kw):
    return DeclaredTest(name, "a substitution is within tolerance", "Δ loss", "vs 0", "negative", 0.0,
                        kw.pop("family", "tol"), -margin, "declared: tolerance", form="equivalence", **kw)


def test_an_equivalence_test_is_two_one_sided_tests_against_the_margin():
    small = [0.01, -0.005, 0.002, 0.008, -0.001]     # mean 0.0028, sd 0.00622, se 0.00278
    (row,) = judge([within("small")], {"small": small})
    # TOST: t against -0.05 = (0.0028 + 0.05) / 0.00278 = +19.0, against +0.05 = -16.97; 4 df: p = the larger
    # one-sided p, that of the upper bound: P(T_4 < -16.97) ≈ 3.5e-5
    from scipy import stats
    assert row.p == pytest.approx(stats.t.cdf(-16.97, 4), rel=0.02)
    assert row.verdict == "reproduced"
    big = [1.2, 1.1, 1.3, 1.25, 1.15]                 # far above the band: the claim is contradicted
    (far,) = judge([within("far")], {"far": big})
    assert far.verdict == "contradicted"
    (vague,) = judge([within("vague")], {"vague": NOISE})     # interval covers the band and more: undecided
    assert vague.verdict == "undecided" and not math.isnan(vague.power)
    with pytest.raises(ValueError, match="needs its margin"):
        DeclaredTest("m", "c", "q", "x", "negative", 0.0, "f", None, form="equivalence")
    with pytest.raises(ValueError, match="form must be one of"):
        DeclaredTest("m", "c", "q", "x", "negative", 0.0, "f", -0.1, form="tost")
    back = Verdict.from_record(json.loads(json.dumps(row.to_record())))
    assert back.test.form == "equivalence" and back.verdict == "reproduced"


# -- a precondition gates only the direction it protects -----------------------------------------------------------

def test_a_directional_precondition_blocks_only_the_reading_it_guards():
    flat = Precondition("flat", "the baseline does not get worse with depth", "slope", "negative", 0.01,
                        gates="reproduced")
    t = claim("grows", requires=("flat",))
    (up,) = judge([t], {"grows": CLEAR}, preconditions=[flat], facts={"flat": 0.02})
    assert up.verdict == "out of regime" and up.would_be == "reproduced"
    assert up.reason == "precondition not met: flat 0.020 (needs < 0.01): fails (it guards a reproduced reading)"
    (down,) = judge([t], {"grows": UP}, preconditions=[flat], facts={"flat": 0.02})
    assert down.verdict == "contradicted" and down.would_be is None          # the other direction stands
    with pytest.raises(ValueError, match="gates must be one of"):
        Precondition("p", "p", "q", "negative", 0.0, gates="sometimes")
    assert PreconditionOutcome.from_record(json.loads(json.dumps(flat.judge(0.02).to_record()))).precondition == flat


def test_what_we_measured_lists_every_kind_of_verdict_and_keeps_checks_apart():
    check = DeclaredTest("premise", "the premise", "q", "x", "negative", 0.0, "setup", kind="check")
    rows = judge([check, claim("gain", "claims", requires=("sub_epoch",)), control("ctl", "gain")],
                 {"premise": CLEAR, "gain": CLEAR, "ctl": CLEAR}, preconditions=[EPOCHS], facts={"sub_epoch": 6.0})
    text = format_measured(rows)
    assert "out of regime (1): gain" in text and "n/a (1): ctl" in text
    assert "checks on the set-up, in this regime:\n  reproduced (1): premise" in text


def test_the_tables_print_every_out_of_regime_verdict_with_its_would_be_verdict():
    t = claim("loss", requires=("sub_epoch",))
    rows = judge([t], {"loss": CLEAR}, preconditions=[EPOCHS], facts={"sub_epoch": 6.12})
    assert "out of regime (would be: reproduced)" in format_verdicts(rows)
    assert format_measured(rows).splitlines()[0].endswith("a claim (would be: reproduced)")
