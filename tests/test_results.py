"""The typed results of lab/analysis.py (lab/results.py): what each prints, known by hand; the JSON they are stored as
has the keys the dicts had before; and every stored file in data/results/ still loads and gives the same sentences
and verdicts, so chapters 03-04 print what they printed before the results were typed."""
import json
import math
from pathlib import Path

import pytest

from vrs_edu.lab.analysis import DeclaredTest, compare_to_baseline, judge, paired_difference, verdict_records
from vrs_edu.chapters.ch04_bank_of_values import recipe as bank_of_values
from vrs_edu.chapters.ch03_value_residual import recall
from vrs_edu.chapters.ch05_depth_as_sequence import recipe as depth_mixers
from vrs_edu.chapters.ch03_value_residual import depth_sweep, recipe as value_residual
from vrs_edu.lab.results import VERDICTS, Comparison, PairedDiff, Verdict, interval, to_json

RESULTS = Path(__file__).resolve().parents[1] / "data" / "results"
STORED = sorted(RESULTS.glob("*.json"))
RECIPES = {"value-residual": value_residual, "bank-of-values": bank_of_values, "recall": recall,
           "depth-mixers": depth_mixers, "depth-sweep": depth_sweep}


def sentence_before_issue_15(row: dict) -> str:
    """``analysis.verdict_sentence`` as it was when judge rows were dicts (3 digits), kept as the reference the
    typed :class:`Verdict` must print exactly (nbval compares the chapters' outputs character by character). One
    deliberate change since: a mean or bound of 10 or more in size (a count of steps) prints the interval whole."""
    def signed(x, digits=3):
        return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:+.{digits}f}"
    d = 0 if max((abs(x) for x in (row["mean"], *row["ci"]) if not math.isnan(x)), default=0) >= 10 else 3
    out = (f"{signed(row['mean'], d)} [95% CI {signed(row['ci'][0], d)}, "
           f"{signed(row['ci'][1], d)}], p (Holm) {row['p_holm']:.3f}: {row['verdict']}")
    if row["verdict"] == "undecided":
        at = signed(row["power_effect"]) if row.get("power_basis") in ("published", "declared") else "d = 1"
        out += f" (power {row['power']:.0%} at {at})"
    return out


def test_a_paired_difference_prints_mean_interval_and_seeds_below_zero():
    d = paired_difference([3.0, 5.0, 4.0], [4.0, 5.5, 4.5])    # diffs −1, −0.5, −0.5; sd 0.2887
    # 95 % CI: −2/3 ± 4.3027 · 0.2887 / √3 = −0.6667 ± 0.7171 = (−1.3838, +0.0504)
    assert str(d) == "-0.667 [-1.384, +0.050], 3/3 seeds below 0"
    assert d.interval(4, "95% CI ") == "-0.6667 [95% CI -1.3838, +0.0504]"
    # one seed: no interval, and no test can be decided from it
    assert str(paired_difference([1.0], [0.0])) == ("+1.000 [n/a, n/a], 0/1 seeds below 0 (undecidable: 1 distinct "
                                                    "seed, fewer than 3)")
    assert interval(0.5, (0.1, 0.9), 0) == "+0 [+0, +1]"
    # a count (steps): once the mean or a bound reaches 10 in size all three print whole, whatever digits says
    assert interval(-12.567, (-64.042, 38.907)) == "-13 [-64, +39]"
    assert interval(3.573, (2.883, 9.999)) == "+3.573 [+2.883, +9.999]"
    assert interval(-1.258, (float("nan"), float("nan"))) == "-1.258 [n/a, n/a]"


def test_a_paired_difference_is_stored_with_the_keys_of_the_old_dict_and_reads_back():
    d = paired_difference([3.0, 5.0, 4.0], [4.0, 5.5, 4.5])
    stored = json.loads(json.dumps(d, default=to_json))
    assert list(stored) == ["diffs", "mean", "sd", "n", "ci", "t", "n_negative"]
    assert stored["ci"] == list(d.ci) and stored["n_negative"] == 3
    assert PairedDiff.from_dict(stored) == d
    # the transition: code written for the dict reads the same numbers
    assert d["ci"] == d.ci and d["mean"] == d.mean and "n_negative" in d and "p" not in d


def _verdicts():
    # gain's interval [-0.018, +0.014] reaches past ±0.01, its smallest effect: undecided, not negligible
    tests = [DeclaredTest("gain", "a published gain", "q", "x", "negative", 0.0, "primary", -0.01),
             DeclaredTest("premise", "a premise of the set-up", "q", "x", "positive", 0.0, "fam", kind="check")]
    return judge(tests, {"gain": [0.01, -0.02, 0.0, 0.01, -0.01],       # mean −0.002: undecided
                         "premise": [1.0, 1.1, 0.9, 1.05, 0.95]})        # clearly above 0: reproduced


def test_print_of_a_verdict_is_its_sentence():
    gain, premise = _verdicts()
    # mean −0.002, sd 0.013038 → half-width 2.7764 · 0.013038 / √5 = 0.016189
    assert str(gain).startswith("-0.002 [95% CI -0.018, +0.014], p (Holm) ")
    assert str(gain).endswith(f": undecided (power {gain.power:.0%} at -0.010)")
    assert str(premise) == f"+1.000 [95% CI {premise.ci[0]:+.3f}, {premise.ci[1]:+.3f}], p (Holm) 0.000: reproduced"
    assert str(gain) == sentence_before_issue_15(gain.to_record())


def test_a_verdict_record_has_the_stored_keys_and_reads_back_to_the_same_verdict():
    rows = _verdicts()
    recs = verdict_records(rows)
    assert list(recs[0]) == ["name", "claim", "quantity", "comparison", "direction", "threshold", "family",
                             "effect_for_power", "effect_source", "kind", "requires", "gate", "sweep", "form", "values", "n",
                             "mean", "sd", "ci", "p", "p_holm", "family_size", "verdict", "power", "power_effect",
                             "power_basis"]
    back = [Verdict.from_record(json.loads(json.dumps(r))) for r in recs]
    # t recomputed from mean, sd and n, bit for bit (compared as records: a power of NaN is never == itself)
    assert [b.t for b in back] == [r.t for r in rows]
    assert [json.dumps(b.to_record()) for b in back] == [json.dumps(r.to_record()) for r in rows]
    assert rows[0]["test"] is rows[0].test and rows[0]["verdict"] == "undecided"   # transition: dict reads work


def test_a_record_written_before_power_basis_gets_it_from_its_declared_effect():
    rec = verdict_records(_verdicts())[0]
    old = {k: v for k, v in rec.items() if k != "power_basis"}
    assert Verdict.from_record(old).power_basis == "published"
    assert Verdict.from_record({**old, "effect_for_power": None}).power_basis == "d = 1"


def _run(seed, losses):
    steps = [10 * (i + 1) for i in range(len(losses))]
    return {"seed": seed, "final_val_loss": losses[-1], "final_val_acc": 0.5,
            "history": {"eval_steps": steps, "val_loss": losses, "steps": list(range(steps[-1])), "wall_time_s": 1.0}}


def test_a_comparison_has_paired_fields_only_for_a_variant_and_stores_the_old_keys():
    runs = {"baseline": [_run(0, [5.0, 3.0]), _run(1, [5.2, 3.2])], "v": [_run(0, [4.9, 2.9]), _run(1, [5.1, 3.0])]}
    comp = compare_to_baseline(runs)
    base, v = comp["baseline"], comp["v"]
    assert base.is_baseline and not v.is_baseline and "paired_final" not in base
    # −0.15 ± 12.706 · 0.0707 / √2; two seeds decide nothing
    assert str(v.paired_final) == ("-0.150 [-0.785, +0.485], 2/2 seeds below 0 (undecidable: 2 distinct seeds, "
                                   "fewer than 3)")
    assert list(base.to_dict()) == ["seeds", "final_val_loss", "final_mean", "final_sd", "final_val_acc",
                                    "run_wall_time_s", "s_per_step"]
    stored = json.loads(json.dumps(comp, default=to_json))
    assert "equal_time" not in stored["v"]                         # no step times: no equal-time comparison
    assert list(stored["v"])[-5:] == ["paired_final", "paired_curve", "before_decay_step", "paired_before_decay",
                                      "sample_efficiency"]
    assert Comparison.from_dict(stored["v"]) == v


def _stored_with_verdicts():
    return [p for p in STORED if json.loads(p.read_text()).get("verdicts")]


@pytest.mark.parametrize("path", _stored_with_verdicts(), ids=lambda p: p.name)
def test_every_stored_record_reads_back_and_prints_the_old_sentence(path):
    for rec in json.loads(path.read_text())["verdicts"]:
        v = Verdict.from_record(rec)
        full = {**rec, "power_basis": v.power_basis}               # older files lack power_basis
        if "kind" not in rec:              # a record of the rules before kinds, reasons and arms: its old sentence
            assert str(v) == sentence_before_issue_15(full), rec["name"]
        again = v.to_record()                                      # the stored keys come back unchanged (a record
        assert {k: again[k] for k in full} == json.loads(json.dumps(full)), rec["name"]   # may lack the newer ones)


def _current_rules(result: dict) -> bool:
    """Whether a result's verdicts were stored by the rules of today's judge (records that carry ``kind``): a file
    made before them is re-judged by today's rules, which may differ (preconditions, gates, no power at d = 1)."""
    return all("kind" in r for r in result.get("verdicts") or [{}])


@pytest.mark.parametrize("path", [p for p in STORED if json.loads(p.read_text()).get("recipe") in RECIPES],
                         ids=lambda p: p.name)
def test_every_stored_result_gives_its_stored_verdicts(path):
    result = json.loads(path.read_text())
    rows = RECIPES[result["recipe"]].verdicts(result)
    assert rows and all(r.verdict in VERDICTS for r in rows)
    if _current_rules(result):
        stored = {r["name"]: r for r in result["verdicts"]}
        assert [r.test.name for r in rows] == list(stored)
        for row in rows:   # the same verdict and numbers (a reason's wording may have been refined since)
            rec = stored[row.test.name]
            assert row.verdict == rec["verdict"] and row.mean == pytest.approx(rec["mean"], abs=1e-12), row.test.name
            assert (math.isnan(row.p_holm) and math.isnan(rec["p_holm"])) or row.p_holm == pytest.approx(
                rec["p_holm"], abs=1e-12), row.test.name


def _close(a, b, where):
    """Same keys at every level, the same numbers to 1e-12 (files written by earlier code differ in the last digit
    of a sum)."""
    if isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            _close(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and isinstance(b, float) and not (math.isnan(a) and math.isnan(b)):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15), where
    elif not isinstance(a, float):
        assert a == b, where


@pytest.mark.parametrize("path", [p for p in STORED if any("comparison" in v for v in json.loads(p.read_text())
                                                         .values() if isinstance(v, dict))], ids=lambda p: p.name)
def test_compare_to_baseline_on_the_stored_runs_gives_the_stored_comparison(path):
    result = json.loads(path.read_text())
    for name, part in result.items():
        if isinstance(part, dict) and "comparison" in part:
            again = json.loads(json.dumps(compare_to_baseline(part["runs"], part["step_seconds"]), default=to_json))
            _close(again, part["comparison"], f"{path.name}:{name}")
            for variant, stored in part["comparison"].items():     # and a stored one reads back unchanged
                assert json.dumps(Comparison.from_dict(stored), default=to_json) == json.dumps(stored), variant


@pytest.mark.parametrize("path", STORED, ids=lambda p: p.name)
def test_no_stored_result_carries_the_retired_two_way_summary(path):
    """Review 2, finding 11: a stale ``summary`` (retired thresholds, signed shares) disagreed with the verdicts."""
    assert "summary" not in json.loads(path.read_text())
