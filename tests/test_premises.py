"""The declarations of chapters 03-05's recipes under the course's rules (issue 34, review 3 H2-H4), on hand-made
results whose verdicts are computed by hand: one threshold per premise (vrs_edu.lab.premises), the x0 claims
described where their premise fails and judged on the recall task, "no worse" as an equivalence test, a dynamic-range
precondition per arm of the recall sweep, and a precondition that gates only the direction it protects."""
import pytest

from vrs_edu.lab import premises
from vrs_edu.lab.metrics import uniform_causal_entropy
from vrs_edu.chapters.ch04_bank_of_values import recipe as bov
from vrs_edu.chapters.ch05_depth_as_sequence import recipe as dm
from vrs_edu.chapters.ch03_value_residual import recall as rc
from vrs_edu.chapters.ch05_depth_as_sequence import v_over_depth as vod
from vrs_edu.chapters.ch03_value_residual import recipe as vr

SEEDS = range(5)
LAYERS = (6, 7)          # the x0 layers of an 8-layer model: its last third


def _qkv_run(seed, loss, beta=(0.1, 0.1, 3.0), cost=(0.01, 0.01, 0.5)):
    """A qkv run: α = 1 on every path, β_q, β_k, β_v = ``beta`` (β_v + 0.01·seed), flat from step 25 on (a plateau),
    and the removal costs ``cost`` (nats; cost_v + 0.01·seed)."""
    b = dict(zip("qkv", beta))
    b["v"] += 0.01 * seed
    coef = {}
    for l in LAYERS:
        for s in "qkv":
            coef[f"blocks.{l}.x0.alpha_{s}"] = 1.0
            coef[f"blocks.{l}.x0.beta_{s}"] = b[s]
    c = dict(zip("qkv", cost))
    c["v"] += 0.01 * seed
    return {"seed": seed, "final_val_loss": loss, "coefficients": coef, "x0_removal_cost": c,
            "history": {"eval_steps": [25, 50, 100], "steps": list(range(100)),
                        "coefficients": {k: [v] * 3 for k, v in coef.items()}}}


def _baseline(seed, loss, r2=0.3, entropy=None):
    run = {"seed": seed, "final_val_loss": loss,
           "layer_metrics": {f"x0_r2_{s}": [r2] * 8 for s in "qkv"}}
    if entropy is not None:
        run["layer_metrics"].update(entropy=[entropy] * 8, oversmoothing=[0.5] * 9)
    return run


BASE = [4.0, 4.1, 4.05, 3.95, 4.02]


def test_one_threshold_per_premise_declared_once_and_imported_by_every_chapter():
    assert premises.DEEP_X0_R2 == 0.5
    for p in (bov.DEEP_CONTEXT, rc.DEEP_CONTEXT, dm.CONTEXT_SHARE):
        assert p.threshold == premises.DEEP_X0_R2 and p.direction == "negative" and p.gates == "both"
    assert dm.DEEP_X0_CEILING == premises.DEEP_X0_R2          # the 0.9 set after seeing the runs is gone
    assert vod.NO_WORSE == premises.NO_WORSE_MARGIN == 0.01


def test_every_claim_and_control_declares_its_smallest_effect_and_no_worse_is_one_equivalence_rule():
    for mod in (bov, dm, vod, vr, rc):
        for t in mod.TESTS:
            assert t.kind == "check" or t.effect_for_power, (mod.__name__, t.name)
    for t in (next(t for t in bov.TESTS if t.name == "qkv_no_worse"),
              next(t for t in vod.TESTS if t.name == "attnres_qkv_no_worse")):
        assert (t.kind, t.form, t.threshold, t.margin) == ("check", "equivalence", 0.0, premises.NO_WORSE_MARGIN)
    assert "qkv_no_worse" not in {p.name for p in bov.PRECONDITIONS}   # no longer a mean against 0.01


def test_the_x0_claims_are_descriptions_on_the_language_model_toys_and_claims_on_the_recall_task():
    x0 = {"additive_criterion", "v_reads_x0_more_than_q", "v_reads_x0_more_than_k", "v_needs_x0_more_than_q",
          "v_needs_x0_more_than_k", "v_pressure_above_q", "v_pressure_above_k", "beta_v_last_layer_above_10"}
    assert not x0 & {t.name for t in bov.TESTS} and {n for n, _ in bov.DESCRIBED} == x0
    assert not any("v_reads_x0" in t.name for t in dm.TESTS)
    assert {n for n, _ in dm.DESCRIBED} == {f"{r}_v_reads_x0_more_than_{s}" for r in dm.ROUTERS for s in "qk"}
    assert not any("reads_embedding" in t.name for t in vod.TESTS)
    assert "v_prefers_mlp_outputs" in {t.name for t in vod.TESTS}   # not an x0 premise: still a claim
    assert {f"recall_{n}" for n in x0 - {"beta_v_last_layer_above_10"}} <= {t.name for t in rc.TESTS}


def _bov_result(shift=0.0):
    qkv = [_qkv_run(i, b + shift + 0.001 * i) for i, b in enumerate(BASE)]
    runs = {"baseline": [_baseline(i, b, r2=0.85) for i, b in enumerate(BASE)], "qkv": qkv, "qkv_lr0.25": qkv,
            "qkv_lr4": qkv}
    return {"corpus": {"epochs_read": {"baseline": 0.2}, "runs": runs}}


def test_bank_of_values_judges_no_worse_by_two_one_sided_tests_and_describes_the_x0_numbers():
    rows = {v.test.name: v for v in bov.verdicts(_bov_result())}
    assert set(rows) == {"qkv_no_worse", "qkv_loss"}
    # qkv − baseline = 0.001·i: mean +0.002, 95 % interval inside ±0.01 at every arm: equivalent, so reproduced
    assert rows["qkv_no_worse"].verdict == "reproduced" and [a for a, _ in rows["qkv_no_worse"].arms] == \
        ["×1", "×0.25", "×4"]
    # the same +0.002 as a loss claim: inside ±0.028 (the paper's −0.009 bits per byte): negligible
    assert rows["qkv_loss"].verdict == "negligible"
    worse = {v.test.name: v for v in bov.verdicts(_bov_result(shift=0.05))}
    assert worse["qkv_no_worse"].verdict == "contradicted"                      # +0.052, beyond +0.01
    desc = {d.name: d for d in bov.descriptions(_bov_result())}
    assert list(desc) == [n for n, _ in bov.DESCRIBED if "pressure" not in n]       # no pressure measured
    share_v = sum((3 + 0.01 * i) / (4 + 0.01 * i) for i in SEEDS) / 5
    assert desc["additive_criterion"].mean == pytest.approx(share_v)            # the ×1 arm's numbers first
    assert desc["v_reads_x0_more_than_q"].arms[2][1].mean == pytest.approx(share_v - 0.1 / 1.1)
    assert desc["v_needs_x0_more_than_k"].mean == pytest.approx(0.5 + 0.02 - 0.01)
    assert bov.facts(_bov_result())["deep_context"] == pytest.approx(0.85)


def _recall_result(tiny_arm="×0.25", r2=0.39):
    """Three arms of the recall sweep with the same qkv runs, but ``tiny_arm``, whose coefficients never left 0.001
    and whose removal costs are 1e-7 nats."""
    qkv = [_qkv_run(i, 0.01 + 0.001 * i) for i in SEEDS]
    tiny = [_qkv_run(i, 0.01 + 0.001 * i, beta=(0.001, 0.001, 0.001), cost=(1e-7, 1e-7, 1e-7)) for i in SEEDS]
    for r in tiny:                                  # no 0.01·seed spread on the tiny arm: 1e-7 nats a seed
        r["x0_removal_cost"]["v"] = 1e-7 * (1 + r["seed"])
        for l in LAYERS:
            r["coefficients"][f"blocks.{l}.x0.beta_v"] = 0.001
    runs = {"baseline": [_baseline(i, 0.01 + 0.002 * i, r2=r2) for i in SEEDS]}
    for arm, v in rc.RATE_SWEEP.items():
        runs[v] = tiny if arm == tiny_arm else qkv
    return {"no_lookup_reference": {"loss": 1.26},
            "recall": {"runs": runs, "configs": {"baseline": {"train": {"steps": 100}}}}}


def test_each_recall_arm_needs_dynamic_range_in_the_quantity_its_claims_compare():
    f = rc.facts(_recall_result())
    assert f["recall_x0_moved"]["×1"] == pytest.approx(sum((3 + 0.01 * i) / (4 + 0.01 * i) for i in SEEDS) / 5)
    assert f["recall_x0_moved"]["×0.25"] == pytest.approx(0.001 / 1.001)       # below the share effect 0.1
    assert f["recall_x0_needed"]["×4"] == pytest.approx(0.52)                   # cost_v, mean of 0.50..0.54
    assert f["recall_x0_needed"]["×0.25"] == pytest.approx(3e-7)                # below the need effect 0.01
    rows = {v.test.name: v for v in rc.verdicts(_recall_result())}
    share = rows["recall_v_reads_x0_more_than_q"]
    arms = dict(share.arms)
    # share_v − share_q = 0.75.. − 0.091 at ×1 and ×4: reproduced; ×0.25 had no range: out of regime
    assert arms["×1"].verdict == arms["×4"].verdict == "reproduced"
    assert arms["×0.25"].verdict == "out of regime" and "recall_x0_moved" in arms["×0.25"].reason
    assert share.verdict == "undecided" and share.reason.startswith("reproduced at ×1, ×4; out of regime at ×0.25")
    need = dict(rows["recall_v_needs_x0_more_than_k"].arms)
    # a difference of ~1e-7 nats would read negligible; without range it is out of regime, never decided
    assert need["×0.25"].verdict == "out of regime" and need["×0.25"].would_be == "negligible"
    assert need["×1"].verdict == "reproduced"                                   # 0.52 − 0.01 nats
    # the premise holds on the recall task (0.39 < 0.5); at 0.85, as on the toys, every x0 claim is out of regime
    toy = {v.test.name: v for v in rc.verdicts(_recall_result(r2=0.85))}
    assert toy["recall_v_reads_x0_more_than_q"].verdict == "out of regime"


def _vr_result(base_entropy_gap, resformer_shift, T=64):
    ref = uniform_causal_entropy(T)
    base = [_baseline(i, b, entropy=ref + base_entropy_gap + 0.001 * i) for i, b in enumerate(BASE)]
    res = [_baseline(i, b - 0.001 * i, entropy=ref + base_entropy_gap + resformer_shift + 0.002 * i)
           for i, b in enumerate(BASE)]
    return {"corpus": {"epochs_read": {"baseline": 0.5}, "block_size": T,
                       "runs": {"baseline": base, "resformer": res}}}


def test_the_concentration_premise_gates_only_the_readings_it_protects():
    # the baseline's entropy lies 0.09 above uniform-causal attention: nothing to restore
    assert vr.ATTENTION_CONCENTRATED.blocks == ("contradicted", "negligible")
    assert vr.facts(_vr_result(0.09, -0.1))["attention_concentrated"] == pytest.approx(0.092)
    lower = {v.test.name: v for v in vr.verdicts(_vr_result(0.09, -0.1))}
    # resformer − baseline entropy = −0.1 + 0.001·i: significantly lower, would be contradicted: blocked
    assert lower["entropy_higher"].verdict == "out of regime" and lower["entropy_higher"].would_be == "contradicted"
    higher = {v.test.name: v for v in vr.verdicts(_vr_result(0.09, +0.1))}
    assert higher["entropy_higher"].verdict == "reproduced"                    # a rise despite it still counts
    concentrated = {v.test.name: v for v in vr.verdicts(_vr_result(-0.2, -0.1))}
    assert concentrated["entropy_higher"].verdict == "contradicted"            # the premise holds: judged
    assert concentrated["baseline_concentrated"].verdict == "reproduced"       # the check on the same quantity


def test_a_description_prints_its_interval_and_why_it_is_not_judged():
    d = premises.describe("x", "a quantity", [0.1, 0.2, 0.3])
    assert d.mean == pytest.approx(0.2) and d.n == 3 and d.ci[0] < 0.2 < d.ci[1]
    assert str(d).startswith("+0.200 [95% CI ") and "description (not judged: its premise" in str(d)
    swept = premises.describe("x", "q", {"×1": [0.1, 0.2, 0.3], "×4": [1.0, 2.0, 3.0]})
    assert swept.mean == pytest.approx(0.2) and [a for a, _ in swept.arms] == ["×1", "×4"]
    assert premises.description_records([swept])[0]["arms"][1]["mean"] == pytest.approx(2.0)
