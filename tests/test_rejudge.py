"""`vrs-edu rejudge`: a stored result judged again with today's declarations keeps what it replaced and why, and
the ledger lists the re-judged version with that reason. The recipe's judge is replaced by a stand-in with a known
answer (a real one needs the recipe's runs), so what is checked is the bookkeeping around it."""
import json

import pytest

from vrs_edu.lab import ledger, rejudge


def _result():
    return {"recipe": "value-residual", "date": "2026-12-01T00:00:00", "command": "vrs-edu reproduce value-residual",
            "wall_time_s": 600, "cpu_time_s": 1200, "seeds": [0, 1, 2],
            "environment": {"cpu_count": 2, "jobs": 2, "threads": 1, "load_average_1m": [1.0, 2.0]},
            "verdicts": [{"name": "resformer_loss", "verdict": "reproduced", "mean": -0.004},
                         {"name": "svformer_cost", "verdict": "undecided", "mean": 0.01}]}


class _Row:
    def __init__(self, name, verdict, mean):
        self.rec = {"name": name, "verdict": verdict, "mean": mean}

    def to_record(self):
        return self.rec


def test_a_rejudged_result_keeps_the_verdicts_it_replaced_and_the_reason(monkeypatch):
    stand_in = lambda r: [_Row("resformer_loss", "negligible", -0.004), _Row("svformer_cost", "undecided", 0.01)]
    old = _result()
    new = rejudge.rejudge(old, "negligible verdict added", {"value-residual": stand_in}, code={"commit": "c" * 40, "dirty": False},
                          date="2026-12-03T07:00:00+00:00")
    assert old["verdicts"][0]["verdict"] == "reproduced" and "rejudged" not in old      # the input is untouched
    assert [v["verdict"] for v in new["verdicts"]] == ["negligible", "undecided"]
    (entry,) = new["rejudged"]
    assert entry["before"] == {"resformer_loss": "reproduced", "svformer_cost": "undecided"}
    assert rejudge.changed_lines(entry) == ["resformer_loss: reproduced → negligible"]
    # the ledger: the re-judged file is a version of its own, and its flip says why
    a, b = ledger.summary(old, "a" * 40), ledger.summary(new, "b" * 40)
    assert not ledger._same_run(a, b)
    (flip,) = ledger.flips([a, b])
    assert flip["reason"] == "re-judged, same runs: negligible verdict added"
    assert flip["changed"] == [{"name": "resformer_loss", "before": "reproduced", "after": "negligible",
                                "mean_before": -0.004, "mean_after": -0.004}]


def test_bad_input_is_one_line_naming_what_was_expected(tmp_path):
    with pytest.raises(ValueError, match="reason must say why"):
        rejudge.rejudge(_result(), " ", {"value-residual": len})
    with pytest.raises(ValueError, match=r"recipe must be one of .* got 'nope'"):
        rejudge.rejudge({**_result(), "recipe": "nope"}, "x", {"value-residual": len})
    with pytest.raises(ValueError, match="no stored verdicts"):
        rejudge.rejudge({**_result(), "verdicts": []}, "x", {"value-residual": len})
    with pytest.raises(FileNotFoundError, match="does not exist"):
        rejudge.rejudge_file(tmp_path / "missing.json", "x", {})
    bad = tmp_path / "r.json"
    bad.write_text(json.dumps({**_result(), "recipe": "nope"}))
    from vrs_edu.cli import main
    assert main(["rejudge", str(bad), "--reason", "x"]) == 2                   # one error line, no traceback
