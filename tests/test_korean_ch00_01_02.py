"""Chapters 00-02 in Korean: the exercise checkers' frame, names and hints, and the chapters' computed sentences
(vrs_edu/chapters/ch0[0-2]_*/prose.py) with known inputs; the English stays as before."""
from vrs_edu.course.checks import Mistake, check_function, localized, with_hints
from vrs_edu.course.exercises import ch01, ch02


def _todo(*args):
    raise NotImplementedError


def test_a_checker_text_is_a_string_a_pair_or_a_function():
    assert localized("attend", "ko") == "attend"
    assert localized(("attend", "값의 가중합"), "ko") == "값의 가중합"
    assert localized(("attend", "값의 가중합"), "en") == "attend"
    assert localized(lambda lang: {"en": "a", "ko": "가"}[lang], "ko") == "가"
    pair = with_hints([Mistake(abs, "wrong")], ["틀렸습니다"])[0]
    assert pair.fn is abs and pair.hint == ("wrong", "틀렸습니다")


def test_the_frame_speaks_korean(capsys):
    assert check_function(("double", "두 배"), _todo, lambda x: 2 * x, [(1.0,)], stub_hint=("twice", "두 배로"),
                          lang="ko") is False
    assert capsys.readouterr().out == ("✗ 두 배: 아직 구현하지 않았습니다 — 스텁의 본문 자리에 코드를 작성하세요.\n"
                                       "    힌트: 두 배로\n")
    assert check_function(("double", "두 배"), lambda x: 3 * x, lambda x: 2 * x, [(1.0,)], lang="ko") is False
    assert capsys.readouterr().out == "✗ 두 배: 사례 0: 기대한 값은 2.0, 받은 값은 3.0입니다 [입력: x=1.0]\n"
    assert check_function(("double", "두 배"), lambda x: 2 * x, lambda x: 2 * x, [(1.0,)], lang="ko") is True
    assert capsys.readouterr().out == "✓ 두 배: 공개 검사를 통과했습니다 — 숨은 검사는 채점할 때 실행됩니다\n"
    assert check_function(("double", "두 배"), lambda x: 2 * x, lambda x: 2 * x, [(1.0,)], graded=False,
                          lang="en") is True
    assert capsys.readouterr().out == "✓ double: public checks passed\n"


def test_chapter_02_checkers_name_their_mistakes_in_korean(capsys):
    for mistakes, hints in ((ch02.PATTERN_MISTAKES, ch02.PATTERN_HINTS_KO), (ch02.ATTEND_MISTAKES,
                            ch02.ATTEND_HINTS_KO), (ch02.SWAP_MISTAKES, ch02.SWAP_HINTS_KO),
                            (ch02.CONTRIBUTION_MISTAKES, ch02.CONTRIBUTION_HINTS_KO)):
        assert len(mistakes) == len(hints) and all(isinstance(m.hint, str) for m in mistakes)
    assert ch02.check_attend(ch02.ATTEND_MISTAKES[3].fn, lang="ko") is False
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("✗ 값의 가중합: 사례 0: 헤드에 대해 합했습니다. 헤드마다 자기 값을 옮기므로 헤드 축을 남기세요 "
                          "[입력: pattern=모양 (2, 3, 5, 5)의 텐서")
    assert ch02.check_attend(ch02.ATTEND_MISTAKES[3].fn, lang="en") is False
    assert "✗ attend: case 0: you summed over heads" in capsys.readouterr().out
    for check, name in ((ch02.check_attention_pattern, "어텐션 패턴"), (ch02.check_value_swap, "값 교환"),
                        (ch02.check_head_contributions, "헤드 기여")):
        assert check(_todo, lang="ko") is False
        assert capsys.readouterr().out.startswith(f"✗ {name}: 아직 구현하지 않았습니다")


def test_chapter_01_block_effect_hint_has_a_frame(capsys):
    assert ch01.check_block_effect(_todo, lang="ko") is False
    out = " ".join(capsys.readouterr().out.split())
    assert out == ("✗ 블록 효과: 아직 구현하지 않았습니다 — 스텁의 본문 자리에 코드를 작성하세요. 힌트: 다음 두 손실에서 "
                   "각각 원래 손실을 뺍니다: (1) 최종 상태에서 블록의 쓰기를 빼고 모델 자신의 노름과 언임베딩으로 읽은 "
                   "손실, (2) 훅으로 블록의 쓰기를 0으로 만든 순전파의 손실")
