"""Korean particles after substituted words, checked against how each word is read aloud (hand-checked readings)."""
import pytest

from vrs_edu.i18n.korean import attach, last_sound, particle
from vrs_edu.i18n.language import check_language, current_language


@pytest.mark.parametrize("word, pair, expected", [
    ("손실", "이/가", "손실이"),          # 실: final ㄹ
    ("모델", "으로/로", "모델로"),        # final ㄹ takes 로
    ("값", "으로/로", "값으로"),
    ("V", "은/는", "V는"),                # 브이
    ("QK", "은/는", "QK는"),              # 큐케이
    ("x0", "은/는", "x0은"),              # 엑스영
    ("L", "으로/로", "L로"),              # 엘: final ㄹ
    ("M", "을/를", "M을"),                # 엠
    ("3", "을/를", "3을"),                # 삼
    ("2", "을/를", "2를"),                # 이
    ("1", "으로/로", "1로"),              # 일
    ("10", "이/가", "10이"),              # 십
    ("100", "은/는", "100은"),            # 백
    ("2000", "과/와", "2000과"),          # 천
    ("0.032", "이/가", "0.032가"),        # 영 점 영삼이
    ("0.030", "이/가", "0.030이"),        # 영 점 영삼영
    ("5%", "이/가", "5%가"),              # 퍼센트
    ("10 %", "을/를", "10 %를"),          # 퍼센트, after a space
    ("(88%)", "은/는", "(88%)는"),
    ("`K`", "은/는", "`K`는"),            # markup is skipped
    ("SmolLM2", "은/는", "SmolLM2는"),
])
def test_particle_follows_the_reading_of_the_word(word, pair, expected):
    assert attach(word, pair) == expected


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="pair: expected one of"):
        particle("V", "을/은")
    with pytest.raises(ValueError, match="word: expected"):
        last_sound("…")
    with pytest.raises(ValueError, match="lang: expected one of en, ko, got 'kr'"):
        check_language("kr")


def test_the_edition_comes_from_the_environment_then_the_notebook_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("VRS_EDU_LANG", raising=False)
    assert current_language(tmp_path) == "en"
    (tmp_path / ".vrs-edu-language").write_text("ko\n")
    assert current_language(tmp_path) == "ko"
    monkeypatch.setenv("VRS_EDU_LANG", "en")
    assert current_language(tmp_path) == "en"
