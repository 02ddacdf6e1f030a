"""The verdict words a chapter prints beside a trained design (vrs_edu.viz.prose.declared_result): the side
follows the sign of the mean, the band appears only for an equivalence test, an out-of-regime verdict keeps its
would-be verdict, and a test the result lacks is named."""
import pytest

from vrs_edu.viz.prose import declared_result


def _result(values, verdict, form="sign", would_be=None):
    m = sum(values) / len(values)
    rec = {"name": "t", "verdict": verdict, "form": form, "effect_for_power": -0.01, "would_be": would_be,
           "mean": m, "ci": [m - 0.01, m + 0.01], "values": values}
    return {"verdicts": [rec]}


def test_a_lower_loss_reads_below_with_its_interval_and_verdict():
    s = declared_result(_result([-0.03, -0.02, -0.025, -0.02, 0.001], "reproduced"), "t")
    # mean -0.0188; four of five values below 0
    assert s.startswith("final loss 0.019 nats below the baseline's, 95% CI [-0.029, -0.009], 4 of 5 seeds lower")
    assert "declared test `t`: reproduced — decided, in the published direction" in s


def test_an_equivalence_test_names_its_band_and_a_higher_loss_reads_above_the_named_variant():
    s = declared_result(_result([0.004] * 5, "reproduced", form="equivalence"), "t", against="per-layer embeddings'")
    assert "0.004 nats above per-layer embeddings'" in s and "`t` (no worse within ±0.01): reproduced" in s
    assert "0 of 5 seeds lower" in s


def test_an_out_of_regime_or_n_a_verdict_keeps_its_would_be_verdict_and_names_itself_once():
    s = declared_result(_result([0.02] * 5, "out of regime", would_be="contradicted"), "t")
    assert "out of regime — its premise fails; judged anyway it would be contradicted" in s
    s = declared_result(_result([0.02] * 5, "n/a", would_be="contradicted"), "t")
    assert s.count("n/a") == 1 and "judged anyway it would be contradicted" in s


def test_an_interval_clear_of_zero_beside_undecided_names_the_holm_corrected_p():
    r = _result([-0.06, -0.05, -0.07, -0.065, -0.07], "undecided")
    r["verdicts"][0].update(p_holm=0.0886, family_size=6)
    s = declared_result(r, "t")
    assert "`t`; p = 0.089 after Holm's correction over the 6 tests of its family: undecided" in s
    # the interval [-0.073, -0.053] clears 0: the sentence says why that is still undecided
    assert s.endswith("its interval clears 0, but after Holm's correction p = 0.089 is not below 0.05, so the seeds "
                      "do not decide it")
    r["verdicts"][0].update(ci=[-0.02, 0.01])                      # an interval across 0 needs no such sentence
    assert "clears 0" not in declared_result(r, "t")
    r["verdicts"][0].update(family_size=1)
    assert "Holm" not in declared_result(r, "t")


def test_no_result_reads_not_run_yet_and_a_missing_test_is_named():
    assert declared_result(None, "t") == "not run yet"
    with pytest.raises(KeyError, match="test 'mhc_loss' is not among"):
        declared_result(_result([0.0] * 5, "undecided"), "mhc_loss")


def test_an_undecided_equivalence_test_says_which_edge_of_its_interval_left_the_band():
    r = _result([-0.005] * 5, "undecided", form="equivalence")
    r["verdicts"][0].update(ci=[-0.018, 0.009], threshold=0.0)
    s = declared_result(r, "t")
    assert s.endswith("its interval reaches below -0.01 (it may be better by more than the margin)")
    r["verdicts"][0].update(ci=[-0.041, 0.050])
    assert "below -0.01 (it may be better by more than the margin) and above +0.01 (it may cost more" in \
        declared_result(r, "t")
