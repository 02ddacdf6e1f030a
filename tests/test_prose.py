"""Computed prose (vrs_edu.viz.prose): a sentence or table built from numbers is displayed as Markdown, with the same
text as its plain form, and nbval still fails a chapter when one of its numbers changes.

The nbval case is run for real: a small notebook whose stored outputs were made by hand, executed by nbval with the
Makefile's flags. nbval compares every output representation it does not skip (text/plain, text/markdown,
text/html...; it skips images and widget views): a one-digit change in a stored sentence fails the cell through
text/markdown alone, also with IPython's own Markdown object, whose text/plain is the same for every sentence."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from vrs_edu.viz.prose import Prose, say, table
from test_nbval_options import _nbval_flags

ROOT = Path(__file__).resolve().parents[1]


def test_prose_has_the_same_text_as_markdown_and_as_plain_text():
    p = Prose("The value swap costs **1.42×** the pattern swap.")
    assert p._repr_markdown_() == repr(p) == str(p) == "The value swap costs **1.42×** the pattern swap."
    with pytest.raises(TypeError, match="Prose takes a str of Markdown, got float"):
        Prose(1.42)


def test_say_displays_one_markdown_output_holding_the_paragraphs(capsys):
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    data, _ = shell.display_formatter.format(Prose("a\n\nb"))
    assert data == {"text/markdown": "a\n\nb", "text/plain": "a\n\nb"}
    with pytest.raises(TypeError, match="paragraph 1 is a int"):
        say("fine", 3)


def test_table_is_a_markdown_pipe_table_with_numbers_right_aligned():
    assert table(["layer", "Δ loss"], [[0, "+0.412"], [1, "+0.103"]]) == (
        "| layer | Δ loss |\n|:---|---:|\n| 0 | +0.412 |\n| 1 | +0.103 |")
    assert table(["a|b"], [["x\ny"]]) == "| a\\|b |\n|:---|\n| x y |"
    with pytest.raises(ValueError, match=r"table row 1 has 1 values, the header 2: \['x'\]"):
        table(["a", "b"], [["1", "2"], ["x"]])
    with pytest.raises(ValueError, match="align must be 2 characters"):
        table(["a", "b"], [], align="lc")


def _display(n: int, source: str, markdown: str, plain: str | None = None):
    out = nbformat.v4.new_output("display_data", data={"text/markdown": markdown,
                                                      "text/plain": markdown if plain is None else plain})
    return nbformat.v4.new_code_cell(source, execution_count=n, outputs=[out])


@pytest.mark.slow
def test_nbval_fails_a_cell_whose_markdown_sentence_changed_by_one_digit(tmp_path):
    said = "from vrs_edu.viz.prose import say, table\nsay(f'loss {1.2345:.3f} nats')"
    ipython_md = "from IPython.display import Markdown, display\ndisplay(Markdown(f'loss {1.2345:.3f} nats'))"
    rows = "say(table(['layer', 'Δ loss'], [[0, f'{0.4123:+.3f}']]))"
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = [
        _display(1, said, "loss 1.234 nats"),                                   # as computed: passes
        _display(2, said, "loss 1.244 nats"),                                   # one digit changed: fails
        _display(3, said, "loss 1.244 nats", plain="loss 1.234 nats"),          # only the markdown changed: fails
        _display(4, ipython_md, "loss 1.234 nats", plain="<IPython.core.display.Markdown object>"),   # passes
        _display(5, ipython_md, "loss 1.244 nats", plain="<IPython.core.display.Markdown object>"),   # fails
        _display(6, rows, "| layer | Δ loss |\n|:---|---:|\n| 0 | +0.412 |"),                       # passes
        _display(7, rows, "| layer | Δ loss |\n|:---|---:|\n| 0 | +0.413 |"),                       # fails
    ]
    nbformat.write(nb, tmp_path / "prose.ipynb")
    (tmp_path / "tests").mkdir()
    shutil.copy(ROOT / "tests" / "nbval_sanitize.cfg", tmp_path / "tests")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-p", "no:xdist",
                        *_nbval_flags(), "prose.ipynb"], cwd=tmp_path, capture_output=True, text=True,
                       env={**os.environ, "OMP_NUM_THREADS": "1"})
    out = r.stdout + r.stderr
    results = dict((cell, status) for status, cell in
                   re.findall(r"^(PASSED|FAILED) prose\.ipynb::(Cell \d)", out, flags=re.M))
    assert results == {"Cell 0": "PASSED", "Cell 1": "FAILED", "Cell 2": "FAILED", "Cell 3": "PASSED",
                       "Cell 4": "FAILED", "Cell 5": "PASSED", "Cell 6": "FAILED"}, out[-3000:]
    assert "mismatch 'text/markdown'" in out and "loss 1.234 nats" in out, out[-3000:]


def test_source_shows_the_packages_own_lines_as_a_code_block():
    from vrs_edu.nn.attention import attend
    from vrs_edu.viz.prose import source

    shown = source(attend, start="return").text
    assert shown == "`vrs_edu.nn.attention.attend`:\n\n```python\nreturn pattern @ v\n```"
    assert source(attend).text.count("\n") > 3 and "def attend(" in source(attend).text
    with pytest.raises(ValueError, match="has no line containing 'no such line'"):
        source(attend, start="no such line")


# The verdict words in plain words (vrs_edu.lab.verdict_words.plain_verdict / verdict_label): a stand-in for a judged test
# carries only what the words read (verdict, would_be, test.margin, arms, reason).
def _judged(verdict, would_be=None, margin=None, arms=None, reason=None):
    from types import SimpleNamespace
    return SimpleNamespace(verdict=verdict, would_be=would_be, test=SimpleNamespace(margin=margin), arms=arms,
                           reason=reason)


def test_plain_verdict_says_negligible_is_too_small_to_matter_and_never_decided_either_way():
    from vrs_edu.lab.verdict_words import plain_verdict

    s = plain_verdict(_judged("negligible", margin=0.01))
    assert s.startswith("too small to matter") and "within ±0.01 nats" in s     # the margin as declared, :g
    assert "reproduced" not in s and "contradicted" not in s and "published direction" not in s
    bare = plain_verdict("negligible")                                # a bare word: no margin to name
    assert bare.startswith("too small to matter") and "±" not in bare and "smallest effect declared" in bare
    stored = plain_verdict({"verdict": "negligible", "effect_for_power": -0.021}, "nats")
    assert "within ±0.021 nats" in stored and "-0.021" not in stored     # a stored record's effect, unsigned
    assert "within ±50 steps" in plain_verdict(_judged("negligible", margin=50), "steps")   # the unit given


def test_plain_verdict_shows_an_out_of_regime_or_na_verdict_with_its_would_be_verdict():
    from vrs_edu.lab.verdict_words import plain_verdict, verdict_label

    oor = _judged("out of regime", would_be="contradicted")
    said = plain_verdict(oor)
    assert said.startswith("out of regime — its premise fails") and said.endswith("it would be contradicted")
    assert plain_verdict(_judged("out of regime", would_be="reproduced")).endswith("it would be reproduced")
    assert verdict_label(oor) == "out of regime (would be: contradicted)"
    na = {"verdict": "n/a", "would_be": "undecided"}
    said = plain_verdict(na)
    assert said.startswith("n/a — the gain it would explain is not reproduced")
    assert said.endswith("would be undecided")
    assert "premise" not in said                                       # n/a's reason, not out of regime's
    assert verdict_label(na) == "n/a (would be: undecided)"
    assert verdict_label("reproduced") == "reproduced" and verdict_label(_judged("negligible")) == "negligible"


def test_plain_verdict_of_a_sweep_undecided_because_its_arms_differ_names_the_arms():
    from vrs_edu.lab.verdict_words import plain_verdict

    swept = _judged("undecided", arms=(("x0.25", None), ("x1", None), ("x4", None)),
                    reason="reproduced at x4; undecided at x0.25, x1")
    said = plain_verdict(swept)
    assert said.startswith("undecided across the learning rates")
    assert "(reproduced at x4; undecided at x0.25, x1)" in said       # which arm decided what: the row's reason
    assert plain_verdict(_judged("undecided", reason="reproduced at x4")) == "not decided by these seeds"  # no arms
    assert plain_verdict(_judged("rate-dependent")) == "decided in opposite directions at different learning rates"
    assert plain_verdict(_judged("undecided")) == "not decided by these seeds"


def test_verdict_label_reads_a_verdict_the_judge_made():
    from vrs_edu.lab.analysis import judge
    from vrs_edu.lab.results import DeclaredTest, Precondition
    from vrs_edu.lab.verdict_words import plain_verdict, verdict_label

    t = DeclaredTest("gain", "a gain", "Δ loss", "same seed", "negative", 0.0, "primary", -0.01, "declared: test",
                     requires=("sub_epoch",))
    small = judge([t], {"gain": [-0.001, -0.002, -0.0015, -0.0012]}, preconditions=[
        Precondition("sub_epoch", "reads < 1 epoch", "epochs", "negative", 1.0)], facts={"sub_epoch": 0.5})[0]
    assert small.verdict == "negligible" and plain_verdict(small).startswith("too small to matter — its whole "
                                                                              "interval lies within ±0.01 nats")
    big = judge([t], {"gain": [-0.05, -0.06, -0.055, -0.052]}, preconditions=[
        Precondition("sub_epoch", "reads < 1 epoch", "epochs", "negative", 1.0)], facts={"sub_epoch": 2.0})[0]
    assert verdict_label(big) == "out of regime (would be: reproduced)"
