"""The claim × corpus tables of chapters 03–05: each cell is the recipe's own verdict on that corpus' result file, a
test whose verdicts differ is marked, and the table fits the book's 100 columns. Checked on hand-made results whose
per-seed values are known."""
import json

import pytest

from vrs_edu.lab.analysis import DeclaredTest, judge
from vrs_edu.lab.by_corpus import claims_by_corpus, corpus_dependent, format_claims_by_corpus, load_by_corpus

TESTS = (DeclaredTest("gain", "a variant lowers the loss", "variant − baseline", "same seed", "negative", 0.0, "primary",
                     -0.01, "declared: a test's smallest effect"),
         DeclaredTest("a_rather_long_declared_test_name_here", "x", "y", "z", "positive", 0.0, "ch", 0.05,
                      "declared: a test's smallest effect"))


def verdicts(result):
    """A stand-in for a recipe's ``verdicts``: the per-seed values are stored in the hand-made result."""
    return judge([t for t in TESTS if t.name in result["values"]], result["values"])


CLEAR_GAIN = [-0.10, -0.11, -0.09, -0.10, -0.12]       # mean −0.104, interval well below 0 → reproduced
NOTHING = [0.02, -0.03, 0.01, -0.01, 0.015]            # mean +0.001 → undecided


def _results():
    return {"python-docs": {"values": {"gain": CLEAR_GAIN, "a_rather_long_declared_test_name_here": CLEAR_GAIN}},
            "kjv": {"values": {"gain": NOTHING}}}


def test_cells_are_the_recipes_verdicts_and_a_differing_verdict_is_marked():
    rows = claims_by_corpus(_results(), verdicts)
    assert [r["name"] for r in rows] == ["gain", "a_rather_long_declared_test_name_here"]
    gain = rows[0]
    assert gain["cells"]["python-docs"]["verdict"] == "reproduced" and gain["cells"]["kjv"]["verdict"] == "undecided"
    assert gain["cells"]["python-docs"]["mean"] == pytest.approx(-0.104)
    assert gain["depends"] is True and gain["family"] == "primary"
    assert rows[1]["cells"]["kjv"] is None and rows[1]["depends"] is False   # run on one corpus only: no comparison
    assert corpus_dependent(rows) == ["gain (python-docs reproduced, kjv undecided)"]


def test_table_fits_100_columns_and_says_not_run():
    text = format_claims_by_corpus(claims_by_corpus(_results(), verdicts))
    lines = text.splitlines()
    assert max(map(len, lines)) <= 100
    assert lines[0].split() == ["declared", "test", "python-docs", "kjv"]
    assert lines[1].startswith("gain *") and "-0.104 [" in lines[1] and "reproduced" in lines[1] and \
        lines[1].endswith("undecided")
    # a name too long for its column goes on its own line, the cells on the next
    assert lines[2] == "a_rather_long_declared_test_name_here" and lines[3].rstrip().endswith("not run")


def test_load_reads_the_default_and_corpus_files_and_ignores_the_chapter_setting(tmp_path, monkeypatch):
    (tmp_path / "depth-mixers.json").write_text(json.dumps({"values": {}, "which": "default"}))
    (tmp_path / "depth-mixers.corpus-kjv.json").write_text(json.dumps({"values": {}, "which": "kjv"}))
    monkeypatch.setenv("VRS_EDU_CORPUS", "kjv")
    got = load_by_corpus("depth-mixers", out_dir=tmp_path)
    assert {c: r["which"] for c, r in got.items()} == {"python-docs": "default", "kjv": "kjv"}
    assert list(load_by_corpus("depth-mixers", ("kjv", "shakespeare"), out_dir=tmp_path)) == ["kjv"]
    with pytest.raises(FileNotFoundError, match="vrs-edu reproduce value-residual --corpus kjv"):
        load_by_corpus("value-residual", out_dir=tmp_path)


def test_epochs_per_run_is_tokens_read_over_training_tokens():
    # 240 steps × 32 sequences × 64 tokens = 491,520 tokens read; on 80,363 training tokens that is 6.116 epochs
    part = {"configs": {"baseline": {"train": {"steps": 240, "batch_size": 32}, "model": {"block_size": 64}}},
            "corpus_tokens": {"train": 80_363, "val": 8_929}}
    from vrs_edu.lab.by_corpus import epochs_per_run, format_epochs
    e = epochs_per_run(part, "baseline")
    assert e["tokens_read"] == 491_520 and e["epochs"] == pytest.approx(6.116, abs=1e-3)
    assert format_epochs({"python-docs": part}, "baseline") == \
        "python-docs     80,363 training tokens; a run reads 491,520 = 6.12 epochs"
    # runs that recorded a training loss beside the validation loss print it: means 3.0 and 4.0 → gap +1.000
    part["runs"] = {"baseline": [{"final_train_loss": 2.9, "final_val_loss": 4.1},
                                 {"final_train_loss": 3.1, "final_val_loss": 3.9}]}
    assert format_epochs({"python-docs": part}, "baseline").splitlines()[1] == \
        "python-docs  baseline final loss: train 3.000, validation 4.000 nats (gap +1.000, mean of 2 seeds)"


def test_the_verdict_corpus_comes_first_and_a_teachers_choice_wins(monkeypatch):
    from vrs_edu.lab.by_corpus import verdict_corpora, verdict_corpus
    monkeypatch.delenv("VRS_EDU_CORPUS", raising=False)
    assert verdict_corpus() == "kjv" and verdict_corpora() == ("kjv", "python-docs")
    monkeypatch.setenv("VRS_EDU_CORPUS", "my-notes")
    assert verdict_corpus() == "my-notes" and verdict_corpora() == ("my-notes", "kjv", "python-docs")


def test_a_teachers_corpus_joins_the_comparison_and_three_corpora_stack_vertically(monkeypatch):
    from vrs_edu.lab.by_corpus import compared_corpora
    monkeypatch.delenv("VRS_EDU_CORPUS", raising=False)
    assert compared_corpora() == ("python-docs", "kjv")
    monkeypatch.setenv("VRS_EDU_CORPUS", "kjv")                      # already compared: not twice
    assert compared_corpora() == ("python-docs", "kjv")
    monkeypatch.setenv("VRS_EDU_CORPUS", "my-notes")
    assert compared_corpora() == ("python-docs", "kjv", "my-notes")
    results = {**_results(), "my-notes": {"values": {"gain": CLEAR_GAIN}}}
    lines = format_claims_by_corpus(claims_by_corpus(results, verdicts)).splitlines()
    assert max(map(len, lines)) <= 100
    assert lines[:4] == ["gain *", lines[1], lines[2], lines[3]] and lines[1].startswith("    python-docs  -0.104 [")
    assert lines[2].startswith("    kjv          +0.001 [") and lines[2].endswith("undecided")
    assert lines[3].startswith("    my-notes     -0.104 [") and lines[3].endswith("reproduced")


def test_the_teachers_guide_documents_the_corpus_setting():
    from pathlib import Path
    guide = (Path(__file__).resolve().parents[1] / "vrs_edu/course/sphinx/teachers.md").read_text()
    for needle in ("--corpus my_text.txt", "--corpus kjv", "VRS_EDU_CORPUS=<stem> make lab", "public domain"):
        assert needle in guide, needle


def test_what_differs_reads_the_regime_and_the_coverage_from_the_numbers():
    from vrs_edu.lab.by_corpus import what_differs
    facts = [{"name": "python-docs", "unk_share": 0.052}, {"name": "kjv", "unk_share": 0.058}]
    text = what_differs(facts, {"python-docs": 6.12, "kjv": 0.54})
    assert "python-docs 6.12, kjv 0.54" in text                            # epochs, 2 decimals, in given order
    # one corpus above one epoch and one below: memorised against every batch new, each named on its side
    assert "reads python-docs more than once" in text and "kjv less than once (every batch is new)" in text
    assert "python-docs 5.2%, kjv 5.8%" in text                            # [UNK] shares as percentages
    assert "within 0.6 points of each other: vocabulary coverage does not separate them" in text   # 0.6 ≤ 2
    assert "apart" not in text
    assert "read every corpus about equally often" in what_differs(facts, {"python-docs": 1.5, "kjv": 1.2})
    far = [{"name": "a", "unk_share": 0.02}, {"name": "b", "unk_share": 0.10}]
    assert "8.0 points apart" in what_differs(far, {"a": 3.0, "b": 1.2})
    assert "a run reads a 2.5× as often as b" in what_differs(far, {"a": 3.0, "b": 1.2})


def test_opposite_signs_are_told_apart_from_changed_verdicts():
    from vrs_edu.lab.by_corpus import opposite_signs
    results = {"a": {"values": {"gain": CLEAR_GAIN, "a_rather_long_declared_test_name_here": [0.1, 0.2, 0.1, 0.15, 0.1]}},
               "b": {"values": {"gain": [-0.01, -0.02, 0.0, -0.01, -0.015],
                                "a_rather_long_declared_test_name_here": [-0.1, -0.2, -0.1, -0.15, -0.1]}}}
    rows = claims_by_corpus(results, verdicts)
    # "gain" changes verdict (reproduced → undecided) on the same side; the long test flips its sign
    assert opposite_signs(rows) == ["a_rather_long_declared_test_name_here"]


def test_a_negligible_cell_and_an_out_of_regime_cell_with_its_would_be_verdict():
    from vrs_edu.lab.analysis import Precondition

    epochs = Precondition("sub_epoch", "reads < 1 epoch", "epochs", "negative", 1.0)
    gated = (DeclaredTest("gain", "a variant lowers the loss", "variant − baseline", "same seed", "negative", 0.0,
                          "primary", -0.01, "declared: a test's smallest effect", requires=("sub_epoch",)),)

    def judged(result):
        return judge(gated, result["values"], preconditions=[epochs], facts={"sub_epoch": result["epochs"]})

    tiny = [0.001, -0.001, 0.0005, -0.0005, 0.0]      # mean 0, interval inside ±0.01 → negligible
    rows = claims_by_corpus({"kjv": {"values": {"gain": tiny}, "epochs": 0.6},
                             "python-docs": {"values": {"gain": CLEAR_GAIN}, "epochs": 2.5}}, judged)
    assert corpus_dependent(rows) == ["gain (kjv negligible, python-docs out of regime (would be: reproduced))"]
    lines = format_claims_by_corpus(rows).splitlines()
    assert max(map(len, lines)) <= 100
    assert lines[1].split() == ["kjv", "+0.000", "[-0.001,+0.001]", "negligible"]
    assert lines[2] == "    python-docs  -0.104 [-0.118,-0.090] out of regime (would be: reproduced)"
