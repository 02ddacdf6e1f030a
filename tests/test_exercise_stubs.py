"""Every chapter exercise ships as a stub: the checker must meet the stub with "not implemented yet" and a hint
(not a traceback, not a failed notebook), and must only promise hidden checks where an assignment grades them."""
import re

import pytest
import torch

from vrs_edu.course.checks import CheckFailed
from vrs_edu.course.exercises import ch00, ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09
from vrs_edu.chapters.ch07_real_model.probes import substitution_cosine
from vrs_edu.chapters.ch09_the_four_answers.answers import combine_arm_verdicts
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import head_contributions, value_swap_loss

# (checker, chapter has a graded assignment)
CHECKERS = [
    (ch00.check_stream_norms, True),
    (ch01.check_residual_stack, True),
    (ch01.check_logit_contributions, True),
    (ch01.check_block_effect, False),
    (ch02.check_attention_pattern, True),
    (ch02.check_attend, True),
    (ch02.check_value_swap, False),
    (ch02.check_head_contributions, False),
    (ch03.check_value_residual_attention, True),
    (ch03.check_v1_share, True),
    (ch03.check_value_residual_stack, False),
    (ch03.check_paired_interval, False),
    (ch04.check_x0_projection, True),
    (ch04.check_x0_norm_share, True),
    (ch04.check_bank_table, False),
    (ch05.check_depth_swa_one_token, True),
    (ch05.check_depth_read_weights, True),
    (ch05.check_depth_swa_stack, False),
    (ch06.check_kv_cache_bytes, False),
    (ch07.check_sentence_embedding, False),
    (ch07.check_held_out_r2, False),
    (ch07.check_substitution, False),
    (ch08.check_token_table, False),
    (ch09.check_swept_verdict, False),
    (ch09.check_pattern_or_values, False),
]
IDS = [c.__name__ for c, _ in CHECKERS]
# The exercises that live in an assignment only, not in a chapter's notebook: an assignment's second task, or a task
# whose chapter exercise grew into a larger one (03's value residual -> the stack; 05's one-token read -> the stack;
# 09's swept verdict -> the capstone, pattern_or_values)
ASSIGNMENT_ONLY = {ch03.check_value_residual_attention, ch03.check_v1_share, ch04.check_x0_norm_share,
                   ch05.check_depth_swa_one_token, ch05.check_depth_read_weights, ch09.check_swept_verdict}


def raises_stub(*args):
    """The chapters' stub body."""
    raise NotImplementedError


def ellipsis_stub(*args):
    """A learner who wrote `...` as the body: the function returns None."""
    ...


@pytest.mark.parametrize("check, graded", CHECKERS, ids=IDS)
@pytest.mark.parametrize("stub", [raises_stub, ellipsis_stub], ids=["raise", "ellipsis"])
def test_stub_is_reported_with_a_hint_not_raised(check, graded, stub, capsys):
    assert check(stub) is False
    out = capsys.readouterr().out
    assert "not implemented yet" in out and "Hint: " in out, out
    assert "largest difference" not in out and "expected a" not in out


@pytest.mark.parametrize("check, graded", CHECKERS, ids=IDS)
def test_the_stubs_own_message_is_the_hint_when_it_has_one(check, graded, capsys):
    def stub(*args):
        raise NotImplementedError("use torch.cumsum")

    assert check(stub) is False
    assert "Hint: use torch.cumsum" in capsys.readouterr().out


def test_the_grader_still_fails_a_stub():
    with pytest.raises(CheckFailed, match="not implemented yet"):
        ch01.check_residual_stack(raises_stub, raise_on_fail=True)


@pytest.mark.parametrize("check, graded", CHECKERS, ids=IDS)
def test_hidden_checks_are_promised_only_where_an_assignment_grades_them(check, graded, capsys):
    # each checker's reference solution passes; only the closing line differs
    reference = {
        "check_stream_norms": ch00._ref_stream_norms,
        "check_residual_stack": ch01.residual_stack,
        "check_logit_contributions": ch01.logit_contributions,
        "check_block_effect": ch01.block_effect,
        "check_attention_pattern": ch02.attention_pattern,
        "check_attend": ch02.attend,
        "check_value_swap": value_swap_loss,
        "check_head_contributions": head_contributions,
        "check_value_residual_attention": ch03._ref_value_residual_attention,
        "check_v1_share": ch03._ref_v1_share,
        "check_value_residual_stack": ch03._ref_value_residual_stack,
        "check_paired_interval": ch03._ref_paired_interval,
        "check_x0_projection": ch04._ref_x0_projection,
        "check_x0_norm_share": ch04._ref_x0_norm_share,
        "check_bank_table": ch04._ref_bank_table,
        "check_depth_swa_one_token": ch05._ref_depth_swa_one_token,
        "check_depth_read_weights": ch05._ref_depth_read_weights,
        "check_depth_swa_stack": ch05._ref_depth_swa_stack,
        "check_kv_cache_bytes": ch06._ref_kv_cache_bytes,
        "check_sentence_embedding": ch07.sentence_embedding,
        "check_held_out_r2": ch07.r2_score,
        "check_substitution": substitution_cosine,
        "check_token_table": ch08.per_token_means,
        "check_swept_verdict": combine_arm_verdicts,
        "check_pattern_or_values": ch09.pattern_or_values,
    }[check.__name__]
    assert check(reference) is True
    out = capsys.readouterr().out
    assert "public checks passed" in out
    assert ("hidden checks run when graded" in out) is graded, out


def test_masking_the_diagonal_gets_its_own_hint_not_nan(capsys):
    # a learner's chapter-02 pattern with triu(0): the diagonal is masked too, so query 0 has no key left (NaN row)
    def pattern_masking_the_diagonal(q, k):
        T = q.size(-2)
        scores = q @ k.transpose(-2, -1) / q.size(-1) ** 0.5
        return scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(0), float("-inf")).softmax(-1)

    assert ch02.check_attention_pattern(pattern_masking_the_diagonal) is False
    out = capsys.readouterr().out
    assert "you masked the diagonal too" in out and "largest difference" not in out, out


def test_nan_without_a_known_mistake_is_named(capsys):
    def pattern_with_a_nan(q, k):
        p = ch02.attention_pattern(q, k).clone()
        p[..., -1, 0] = float("nan")
        return p

    assert ch02.check_attention_pattern(pattern_with_a_nan) is False
    out = capsys.readouterr().out
    assert "values are NaN where the reference has none" in out, out


def test_a_failed_case_names_its_inputs_so_the_learner_can_rerun_it(capsys):
    """Case 1 of three (a = 2, b = 3; the reference's parameter names) is the first wrong one: the message names
    it by number and by inputs, tensors by their shape."""
    from vrs_edu.course.checks import check_function

    def reference(a, b, x):
        return a * b + x.sum().item()

    def student(a, b, x):
        return a + b + x.sum().item()       # right only when a + b == a · b, as in case 0 (2, 2)

    x = torch.zeros(2, 5)
    assert check_function("mul", student, reference, [(2, 2, x), (2, 3, x), (4, 4, x)]) is False
    out = " ".join(capsys.readouterr().out.split())
    assert "✗ mul: case 1: expected 6.0, got 5.0 [inputs: a=2, b=3, x=tensor of shape (2, 5)]" in out, out


# --- every message fits the page: at most 100 columns --------------------------------------------------------------

REFERENCES = {
    "check_stream_norms": ch00._ref_stream_norms, "check_residual_stack": ch01.residual_stack,
    "check_logit_contributions": ch01.logit_contributions, "check_block_effect": ch01.block_effect,
    "check_attention_pattern": ch02.attention_pattern,
    "check_attend": ch02.attend, "check_value_swap": value_swap_loss, "check_head_contributions": head_contributions,
    "check_value_residual_attention": ch03._ref_value_residual_attention, "check_v1_share": ch03._ref_v1_share,
    "check_value_residual_stack": ch03._ref_value_residual_stack, "check_paired_interval": ch03._ref_paired_interval,
    "check_x0_projection": ch04._ref_x0_projection, "check_x0_norm_share": ch04._ref_x0_norm_share,
    "check_bank_table": ch04._ref_bank_table,
    "check_depth_swa_one_token": ch05._ref_depth_swa_one_token,
    "check_depth_read_weights": ch05._ref_depth_read_weights, "check_depth_swa_stack": ch05._ref_depth_swa_stack,
    "check_kv_cache_bytes": ch06._ref_kv_cache_bytes, "check_sentence_embedding": ch07.sentence_embedding,
    "check_held_out_r2": ch07.r2_score, "check_substitution": substitution_cosine,
    "check_token_table": ch08.per_token_means, "check_swept_verdict": combine_arm_verdicts,
    "check_pattern_or_values": ch09.pattern_or_values,
}
# The checkers that compare tensors through check_function (chapter 09's compares verdict words: its own test below)
TENSOR_CHECKERS = [(c, g) for c, g in CHECKERS if c is not ch09.check_swept_verdict]


def _every_mistake(check, monkeypatch) -> list:
    """The known mistakes a checker passes to check_function (some chapters keep them inside the checker)."""
    import sys

    from vrs_edu.course import checks

    seen = []
    module = sys.modules[check.__module__]

    def recording(name, student, reference, inputs, mistakes=(), **kw):
        seen.extend(mistakes)
        return checks.check_function(name, student, reference, inputs, mistakes, **kw)

    monkeypatch.setattr(module, "check_function", recording)
    check(REFERENCES[check.__name__], quiet=True)
    monkeypatch.undo()
    return seen


@pytest.mark.parametrize("check, graded", TENSOR_CHECKERS, ids=[c.__name__ for c, _ in TENSOR_CHECKERS])
def test_no_message_a_learner_sees_is_wider_than_100_columns(check, graded, capsys, monkeypatch):
    from vrs_edu.course.checks import WIDTH, localized, messages

    reference = REFERENCES[check.__name__]
    mistakes = _every_mistake(check, monkeypatch)
    assert mistakes, f"{check.__name__} has no known mistakes"

    def long_error(*args):
        raise ValueError("a learner's own error message, " * 8)

    def wrong_shape(*args):
        out = reference(*args)
        return out[..., :1] if hasattr(out, "shape") and out.dim() else out + 1.0

    def nan_everywhere(*args):
        out = reference(*args)
        return out * float("nan")

    def off_by_a_little(*args):
        return reference(*args) + 0.5

    def stub_with_a_long_hint(*args):
        raise NotImplementedError("a hint that the stub's author wrote in one very long line, " * 5)

    students = [m.fn for m in mistakes] + [raises_stub, ellipsis_stub, stub_with_a_long_hint, reference, long_error,
                                           wrong_shape, nan_everywhere, off_by_a_little]
    printed = []
    for student in students:
        check(student)
        out = capsys.readouterr().out
        assert messages(out), f"{student.__name__}: no ✗/✓ message printed: {out!r}"
        printed += out.splitlines()
    too_wide = [line for line in printed if len(line) > WIDTH]
    assert WIDTH == 100 and not too_wide, f"{len(too_wide)} line(s) wider than 100 columns:\n" + "\n".join(too_wide)
    for m in mistakes:                     # each hint still reads whole once its lines are joined
        check(m.fn)
        hint = localized(m.hint, "en")     # a hint may be the pair (English, Korean)
        assert any(" ".join(hint.split()) in msg for msg in messages(capsys.readouterr().out)), hint


def test_the_swept_verdict_checkers_messages_fit_the_page_and_name_each_mistake(capsys):
    from vrs_edu.course.checks import WIDTH, messages

    def long_error(verdicts):
        raise ValueError("a learner's own error message, " * 8)

    students = [fn for fn, _ in ch09.MISTAKES] + [raises_stub, ellipsis_stub, long_error, combine_arm_verdicts]
    printed = []
    for student in students:
        ch09.check_swept_verdict(student)
        out = capsys.readouterr().out
        assert messages(out), f"{getattr(student, '__name__', student)}: no ✗/✓ message printed: {out!r}"
        printed += out.splitlines()
    assert not [line for line in printed if len(line) > WIDTH]
    for fn, hint in ch09.MISTAKES:          # each known mistake gets its own hint, not a generic mismatch
        ch09.check_swept_verdict(fn)
        assert " ".join(hint.split()[:6]) in " ".join(capsys.readouterr().out.split())


def test_a_wrapped_message_joins_back_into_its_one_line():
    from vrs_edu.course.checks import INDENT, messages, wrap

    text = "✗ attend: case 0: " + "you used the transposed pattern, " * 6 + "(pattern @ v)"
    lines = wrap(text).splitlines()
    assert len(lines) > 1 and all(len(line) <= 100 for line in lines)
    assert all(line.startswith(INDENT) for line in lines[1:])
    assert messages(wrap(text) + "\nsome other output\n" + wrap("✓ attend: public checks passed")) == \
        [" ".join(text.split()), "✓ attend: public checks passed"]


def test_a_korean_message_is_wrapped_by_display_columns_a_hangul_syllable_taking_two():
    from wcwidth import wcswidth

    from vrs_edu.course.checks import WIDTH, messages, wrap

    text = "✗ 값 잔차: 사례 0: " + "V_1을 현재 스트림에서 다시 계산했습니다, " * 6 + "(패턴 @ v)"
    lines = wrap(text).splitlines()
    widths = [wcswidth(line) for line in lines]
    # each line but the last is full: the next word would pass the page's edge (counting characters, as textwrap
    # does, puts 100 syllables, 200 columns, on a line; or breaks at half the page if the limit were halved)
    assert max(widths) <= WIDTH and all(w > WIDTH - 20 for w in widths[:-1]), widths
    assert len(lines) == 3 and messages(wrap(text)) == [" ".join(text.split())]
    # a control character (a learner's exception text with a terminal colour code) takes no column: the message is
    # still wrapped (wcwidth alone gives -1 for the whole line, which never passes the page's edge)
    coloured = "✗ attend: raised \x1b[31mValueError\x1b[0m: " + "a long explanation of what went wrong, " * 8
    assert max(wcswidth(line.replace("\x1b[31m", "").replace("\x1b[0m", "")) for line in wrap(coloured).splitlines()) \
        <= WIDTH


# --- the chapters: every exercise is a stub followed by its collapsed worked solution -------------------------

def _chapter_exercises():
    import re
    from pathlib import Path

    import jupytext

    found = []
    for path in sorted((Path(__file__).parent.parent / "notebooks").glob("0*.py")):
        cells = jupytext.read(path).cells
        for i, c in enumerate(cells):
            if c.cell_type == "markdown" and re.search(r"(?m)^#{2,3} Exercise(?!s to think)", c.source):
                c.metadata["chapter"] = path.stem[:2]
                found.append(pytest.param(c, cells[i + 1:], id=f"{path.stem[:2]}-{len(found)}"))
    return found


EXERCISE_CELLS = _chapter_exercises()


def test_every_chapter_has_its_exercises():
    # one exercise per checker, 18 in chapters 00-09: counted over the chapters whose source exists (a chapter is
    # written after its checker, e.g. chapter 08's by its own issue); an assignment's second task has no chapter cell
    from pathlib import Path

    written = {p.stem[:2] for p in (Path(__file__).parent.parent / "notebooks").glob("0*.py")}
    expected = [c for c, _ in CHECKERS if c.__module__.rsplit(".ch", 1)[-1] in written and c not in ASSIGNMENT_ONLY]
    assert len(EXERCISE_CELLS) == len(expected)


@pytest.mark.parametrize("heading, following", EXERCISE_CELLS)
def test_exercise_is_a_stub_then_a_collapsed_solution(heading, following):
    import re

    # ARENA's three facts, in text (an emoji rating shows as empty boxes without a colour-emoji font)
    text = re.search(r"\*\*Difficulty [1-5]/5 · importance [1-5]/5 · about \d+ minutes?\.\*\*", heading.source)
    assert text, heading.source
    assert re.search(r"<details><summary>Hint( \d)?</summary>", heading.source), \
        "a hint, folded, that points without giving the code"
    code = [c for c in following if c.cell_type == "code"]
    stub, solution = code[0], code[1]
    func = re.search(r"^def (\w+)\(", stub.source, re.M).group(1)
    assert "raise NotImplementedError" in stub.source and '"""' in stub.source   # signature, docstring, stub body
    # the check meets the stub; a line after it keeps the cell from echoing the checker's True/False (IPython's ';'
    # does not: nbval runs cells without history, where IPython cannot see the ';')
    assert re.search(rf"^check_\w+\({func}\)\n\S", stub.source, re.M)
    assert solution.metadata.get("jupyter", {}).get("source_hidden") is True     # collapsed in JupyterLab
    assert "hide-input" in solution.metadata.get("tags", [])                    # a dropdown in the book
    assert re.search(rf"^def {func}\(", solution.source, re.M) and "NotImplementedError" not in solution.source
    assert re.search(rf"^check_\w+\({func}\)\n\S", solution.source, re.M)      # nbval compares its passing line


def test_the_book_shows_a_collapsed_solution_as_a_closed_dropdown_with_its_output_visible(tmp_path):
    import nbformat

    from test_book import TINY_CHAPTERS, _tiny_book
    from vrs_edu.course.book_build import build

    book = _tiny_book(tmp_path)
    path = tmp_path / "notebooks" / TINY_CHAPTERS[0][0]
    nb = nbformat.read(path, as_version=4)
    solution = nbformat.v4.new_code_cell("def secret_solution(x):\n    return x\n", execution_count=9, outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="✓ public checks passed\n")])
    solution.metadata.update({"jupyter": {"source_hidden": True}, "tags": ["hide-input"]})
    nb.cells.append(solution)
    nbformat.write(nb, path)
    assert build(book, draft=False) == 0
    page = (tmp_path / "_build" / "book" / f"{path.stem}.html").read_text()
    details = page[page.rindex("<details", 0, page.index("secret_solution")):]
    assert details.startswith("<details") and " open" not in details[:details.index(">")]   # closed by default
    assert "secret_solution" in details[:details.index("</details>")]                       # the code is inside
    assert "✓ public checks passed" in details[details.index("</details>"):]               # the output is shown


@pytest.mark.parametrize("name", ["00_orientation", "02_qk_routes_v_carries", "07_real_model"])
def test_jupytext_keeps_the_collapsed_solution_through_a_round_trip(name, tmp_path):
    # .py -> .ipynb -> .py (what `jupytext --sync` does in either direction) keeps the cell metadata in the source
    import jupytext

    from pathlib import Path

    py = Path(__file__).parent.parent / "notebooks" / f"{name}.py"
    text = py.read_text()
    assert '# %% jupyter={"source_hidden": true} tags=["hide-input"]' in text
    jupytext.write(jupytext.read(py), tmp_path / "nb.ipynb")
    back = jupytext.read(tmp_path / "nb.ipynb")
    hidden = [c for c in back.cells if c.metadata.get("jupyter", {}).get("source_hidden")]
    assert hidden and all("hide-input" in c.metadata["tags"] for c in hidden)
    # the header names the jupytext that wrote the file; a fresh set-up may install a newer one
    def unversioned(t):
        return re.sub(r"(?m)^#\s+jupytext_version: .*$", "", t)

    assert unversioned(jupytext.writes(back, fmt="py:percent")) == unversioned(text)
