"""Chapters 02 and 07's exercise checkers give their stub hints in the running notebook's language (the Korean
notebooks run in notebooks/ko/, or with VRS_EDU_LANG=ko); the English hints are unchanged."""
import pytest

from vrs_edu.course.exercises import ch02, ch07


def _todo(*args):
    raise NotImplementedError


@pytest.mark.parametrize("check, english, korean", [
    (ch02.check_attend, "one matrix product, pattern @ v", "패턴의 i행은 쿼리 i가 키 j들에 주는 가중치입니다."),
    (ch02.check_attention_pattern, "scale the dot products of queries with keys by 1/sqrt(Dh)",
     "쿼리와 키의 내적에 1/sqrt(Dh)를 곱하세요."),
    (ch07.check_held_out_r2, "two sums of squares over every entry", "모든 항목에 걸친 제곱합 두 개"),
    (ch07.check_sentence_embedding, "padding must count neither in the sum",
     "패딩은 각 문장의 합에도 개수에도 들어가면 안 됩니다."),
])
def test_stub_hints_follow_the_language(check, english, korean, monkeypatch, capsys):
    monkeypatch.setenv("VRS_EDU_LANG", "en")
    assert check(_todo) is False
    out = " ".join(capsys.readouterr().out.split())   # the checker wraps long lines
    assert english in out and korean not in out
    monkeypatch.setenv("VRS_EDU_LANG", "ko")
    assert check(_todo) is False
    out = " ".join(capsys.readouterr().out.split())   # the checker wraps long lines
    assert korean in out and english not in out
