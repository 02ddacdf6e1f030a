"""vrs_edu.lab.analysis: the statistics chapters 03–04 print, checked against hand computations and tables."""
import math

import pytest

from vrs_edu.lab.analysis import (before_decay_step, band, ci_excludes_zero, compare_to_baseline, depth_slope,
                                  format_comparison, interpolate, loss_at_equal_time, mean_sd, paired_difference,
                                  read_live_run, sample_efficiency_ratio, steps_to_reach, student_t_cdf, t_critical)


def test_mean_sd_uses_the_sample_standard_deviation():
    m, sd = mean_sd([1.0, 2.0, 4.0])
    assert m == pytest.approx(7 / 3)
    # Σ(x − m)² = (4/3)² + (1/3)² + (5/3)² = 42/9; divided by n − 1 = 2 → 7/3
    assert sd == pytest.approx(math.sqrt(7 / 3))
    assert math.isnan(mean_sd([5.0])[1])
    with pytest.raises(ValueError, match="empty"):
        mean_sd([])


@pytest.mark.parametrize("df,expected", [(1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622), (30, 2.0423)])
def test_t_critical_matches_the_student_t_table(df, expected):
    assert t_critical(df) == pytest.approx(expected, abs=2e-4)


def test_student_t_cdf_is_symmetric_and_matches_cauchy_for_one_df():
    # df = 1 is the Cauchy distribution: CDF(t) = 1/2 + atan(t)/π
    for t in (-3.0, -0.5, 0.0, 1.0, 7.0):
        assert student_t_cdf(t, 1) == pytest.approx(0.5 + math.atan(t) / math.pi, abs=1e-7)
    assert student_t_cdf(1.3, 5) + student_t_cdf(-1.3, 5) == pytest.approx(1.0)


def test_paired_difference_by_hand():
    d = paired_difference([3.0, 5.0, 4.0], [4.0, 5.5, 4.5])   # diffs −1, −0.5, −0.5
    assert d["diffs"] == pytest.approx([-1.0, -0.5, -0.5])
    assert d["mean"] == pytest.approx(-2 / 3)
    sd = math.sqrt(((1 / 3) ** 2 + 2 * (1 / 6) ** 2) / 2)       # = 0.288675
    assert d["sd"] == pytest.approx(sd)
    half = 4.302653 * sd / math.sqrt(3)
    assert d["ci"][0] == pytest.approx(-2 / 3 - half, abs=1e-5)
    assert d["ci"][1] == pytest.approx(-2 / 3 + half, abs=1e-5)
    assert d["t"] == pytest.approx((-2 / 3) / (sd / math.sqrt(3)))
    assert d["n_negative"] == 3
    # the CI (−1.383, 0.050) still contains 0: three negative seeds are not yet evidence
    assert not ci_excludes_zero(d)


def test_ci_excludes_zero_both_directions_and_nan():
    tight = paired_difference([1.0, 1.1, 0.9, 1.0], [0.0, 0.0, 0.0, 0.0])
    assert ci_excludes_zero(tight, "positive") and not ci_excludes_zero(tight, "negative")
    single = paired_difference([1.0], [0.0])
    assert math.isnan(single["ci"][0]) and not ci_excludes_zero(single, "positive")
    with pytest.raises(ValueError, match="one value per seed"):
        paired_difference([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="direction"):
        ci_excludes_zero(tight, "up")


def test_interpolate_and_steps_to_reach():
    steps, losses = [10, 20, 30], [5.0, 4.0, 3.5]
    assert interpolate(steps, losses, 15) == pytest.approx(4.5)
    assert interpolate(steps, losses, 5) == 5.0 and interpolate(steps, losses, 99) == 3.5
    # 3.75 lies halfway between the evaluations at 20 (4.0) and 30 (3.5)
    assert steps_to_reach(steps, losses, 3.75) == pytest.approx(25.0)
    assert steps_to_reach(steps, losses, 6.0) == 10
    assert steps_to_reach(steps, losses, 3.0) is None
    with pytest.raises(ValueError, match="increasing"):
        interpolate([10, 10], [1.0, 2.0], 10)


def test_sample_efficiency_ratio_by_hand():
    base = ([100, 200, 300, 400], [5.0, 4.5, 4.2, 4.0])
    var = ([100, 200, 300, 400], [4.8, 4.3, 3.9, 3.8])
    # the baseline ends at 4.0; the variant passes 4.0 between step 200 (4.3) and step 300 (3.9):
    # 200 + 100 · (4.3 − 4.0) / (4.3 − 3.9) = 275 steps → 275 / 400 = 0.6875
    assert sample_efficiency_ratio(*var, *base) == pytest.approx(0.6875)
    worse = ([100, 200, 300, 400], [5.1, 4.7, 4.4, 4.1])
    assert sample_efficiency_ratio(*worse, *base) is None


def test_loss_at_equal_time():
    # 0.2 s/step for 60 s is 300 steps
    assert loss_at_equal_time([100, 200, 300, 400], [5.0, 4.5, 4.2, 4.0], 0.2, 60.0) == pytest.approx(4.2)
    with pytest.raises(ValueError):
        loss_at_equal_time([1, 2], [1.0, 1.0], 0.0, 1.0)


def test_band_and_depth_slope():
    m, s = band([[1.0, 2.0], [3.0, 2.0]])
    assert m == [2.0, 2.0] and s[0] == pytest.approx(math.sqrt(2)) and s[1] == 0.0
    assert depth_slope([0.1, 0.3, 0.5]) == pytest.approx(0.2)
    assert depth_slope([3.0, 2.0], layers=[1, 3]) == pytest.approx(-0.5)
    with pytest.raises(ValueError):
        depth_slope([1.0])


def test_before_decay_step():
    # 240 steps, decay over the last 30 % starts at step 168: the last evaluation before it is 160
    assert before_decay_step(range(20, 241, 20), 240) == 160
    # 12 steps: the decay starts at step 8, before the first evaluation → the first evaluation
    assert before_decay_step([10, 12], 12) == 10


def _run(seed, losses, wall=10.0, acc=0.5):
    steps = [10 * (i + 1) for i in range(len(losses))]
    return {"seed": seed, "final_val_loss": losses[-1], "final_val_acc": acc,
            "history": {"eval_steps": steps, "val_loss": losses, "steps": list(range(steps[-1])),
                        "wall_time_s": wall}}


def test_compare_to_baseline_pairs_by_seed():
    runs = {"baseline": [_run(0, [5.0, 4.0, 3.0]), _run(1, [5.2, 4.1, 3.2])],
            "v": [_run(1, [5.1, 4.0, 3.1]), _run(0, [4.9, 3.9, 2.9])]}   # listed out of seed order on purpose
    comp = compare_to_baseline(runs, {"baseline": 0.1, "v": 0.2})
    v = comp["v"]
    assert v["seeds"] == [0, 1]
    assert v["paired_final"]["diffs"] == pytest.approx([-0.1, -0.1])
    assert v["paired_curve"]["mean"] == pytest.approx([-0.1, -0.1, -0.1])
    # equal wall time: the variant's 30 steps take 6 s, the baseline's 3 s → compare at 3 s: variant at step 15,
    # baseline at step 30
    et = v["equal_time"]
    assert et["seconds"] == pytest.approx(3.0) and et["variant_steps"] == pytest.approx(15.0)
    assert et["paired"]["diffs"][0] == pytest.approx((4.9 + 3.9) / 2 - 3.0)
    # seed 0: baseline ends at 3.0; the variant passes 3.0 between 20 (3.9) and 30 (2.9) at 29 → 29/30
    assert v["sample_efficiency"]["per_seed"][0] == pytest.approx(29 / 30)
    assert "paired_final" not in comp["baseline"]
    with pytest.raises(ValueError, match="seeds"):
        compare_to_baseline({"baseline": [_run(0, [1.0])], "v": [_run(5, [1.0])]})


def test_format_comparison_gives_accuracy_with_its_seed_spread():
    runs = {"baseline": [_run(0, [5.0, 3.0], acc=0.50), _run(1, [5.2, 3.2], acc=0.60)],
            "v": [_run(0, [4.9, 2.9], acc=0.40), _run(1, [5.1, 3.1], acc=0.44)]}
    table = format_comparison(compare_to_baseline(runs), accuracy=True)
    # baseline: mean 0.55, sd = sqrt(((0.05)^2 + (0.05)^2) / 1) = 0.0707; v: mean 0.42, sd 0.0283
    assert "0.550 ± 0.071" in table and "0.420 ± 0.028" in table
    assert "accuracy" not in format_comparison(compare_to_baseline(runs))


def test_read_live_run_needs_the_sign_and_a_size_above_the_seed_spread():
    # saved runs: mean −0.110, sd 0.032 (chapter 03's shape of numbers)
    same = read_live_run(-0.05, -0.110, 0.032)                 # same sign, |−0.05| above the sd 0.032
    assert "points the same way as the saved runs" in same and "by more than the seed-to-seed sd" in same
    assert "cannot tell" not in same
    other = read_live_run(+0.002, -0.110, 0.032)               # opposite sign, |+0.002| below the sd
    assert "points the other way from the saved runs" in other and "but by less than the seed-to-seed sd" in other
    assert "one short run cannot tell the direction" in other
    assert "by less than" in read_live_run(-0.02, -0.110, 0.032) and "the same way" in read_live_run(-0.02, -0.110,
                                                                                                   0.032)


def test_read_live_run_does_not_claim_agreement_with_saved_runs_that_have_no_direction():
    # saved runs: mean −0.012, sd 0.020, 95 % interval [−0.037, +0.013] spans 0: no side for the live run to share
    near = read_live_run(-0.03, -0.012, 0.020, (-0.037, 0.013))     # |−0.03 − (−0.012)| = 0.018 ≤ 0.020
    assert "the saved runs have no direction here" in near and "the live run lies within one" in near
    assert "same way" not in near and "other way" not in near        # no direction to agree or disagree with
    assert "further than one" in read_live_run(+0.05, -0.012, 0.020, (-0.037, 0.013))
    # an interval on one side keeps the sign reading
    assert read_live_run(-0.05, -0.110, 0.032, (-0.15, -0.07)).startswith("the live run points the same way")
