"""The assignments' own checkers (chapters 03, 04 and 05: the second task of each, and the first of 03 and 05) name a
learner's mistake in the edition's language: the Korean copy of an assignment prints Korean hints, the English one
the English hints, unchanged. Each known mistake gets its own hint in both languages (not another mistake's)."""
import re

import pytest

from vrs_edu.course.checks import CheckFailed, messages
from vrs_edu.course.exercises import ch03, ch04, ch05

LISTS = [(ch03.check_value_residual_attention, ch03.MISTAKES, ch03.HINTS_KO),
         (ch03.check_v1_share, ch03.SHARE_MISTAKES, ch03.SHARE_HINTS_KO),
         (ch04.check_x0_norm_share, ch04.SHARE_MISTAKES, ch04.SHARE_HINTS_KO),
         (ch05.check_depth_swa_one_token, ch05.SWA_MISTAKES, ch05.SWA_HINTS_KO),
         (ch05.check_depth_read_weights, ch05.WEIGHT_MISTAKES, ch05.WEIGHT_HINTS_KO)]


@pytest.mark.parametrize("check, mistakes, hints_ko", LISTS, ids=[c.__name__ for c, _, _ in LISTS])
def test_each_mistake_gets_its_own_hint_in_both_languages(check, mistakes, hints_ko, capsys):
    assert len(hints_ko) == len(mistakes)
    for m, ko in zip(mistakes, hints_ko):
        for lang, hint in (("en", m.hint), ("ko", ko)):
            assert check(m.fn, lang=lang) is False
            out = capsys.readouterr().out
            assert any(hint in msg for msg in messages(out)), f"{lang}: {hint!r} not in {out}"
        assert not re.search("[가-힣]", m.hint)   # the English stays English


def test_the_korean_sentence_in_full_with_its_case_and_inputs():
    def swapped(pattern, v, v_first, lambda_1, lambda_2):
        return pattern @ (lambda_2 * v_first + lambda_1 * v)

    with pytest.raises(CheckFailed) as ko:
        ch03.check_value_residual_attention(swapped, lang="ko", raise_on_fail=True)
    assert str(ko.value) == (
        "✗ value residual 어텐션: 사례 0: λ1과 λ2가 바뀌었습니다. λ1은 V_1(첫 층의 값)에, λ2는 이 층 자신의 V_n에 "
        "곱합니다 [입력: pattern=모양 (2, 2, 5, 5)의 텐서, v=모양 (2, 2, 5, 4)의 텐서, v_first=모양 (2, 2, 5, 4)의 텐서, "
        "lambda_1=0.8146950602531433, lambda_2=0.5810128450393677]")
    with pytest.raises(CheckFailed) as en:
        ch03.check_value_residual_attention(swapped, lang="en", raise_on_fail=True)
    assert str(en.value).startswith(
        "✗ value residual attention: case 0: λ1 and λ2 are swapped: λ1 weighs V_1 (the first layer's values), λ2 "
        "this layer's own V_n [inputs: pattern=tensor of shape (2, 2, 5, 5)")


def test_the_shared_depth_hints_read_the_same_in_both_lists():
    # NO_SCALE, INPUT_WIDTH_SCALE and KV_SWAPPED are one sentence each in English: so in Korean
    assert ch05.SWA_HINTS_KO[4] == ch05.WEIGHT_HINTS_KO[4] == "점수를 1 / sqrt(d_k)로 스케일하세요. d_k = E(투영된 폭)입니다"
    assert ch05.SWA_HINTS_KO[5] == ch05.WEIGHT_HINTS_KO[5]
    assert ch05.SWA_MISTAKES[4].hint == ch05.WEIGHT_MISTAKES[4].hint == ch05.NO_SCALE
