"""Chapter 08's computed prose in both editions: the answers' sentences and the post-hoc paragraph, exact Korean
for known inputs (with the particle after a substituted check name), and the English unchanged."""
import pytest

from vrs_edu.chapters.ch08_real_decoder.readout import _fmt, decoder_answers, post_hoc_sentence
from vrs_edu.lab.experiments import load_results

COST = {"Q": 0.40, "K": 0.50, "V": 0.70}


def test_post_hoc_sentence_korean_opposite_reading():
    assert post_hoc_sentence(COST, ["contradicted", "contradicted"], lang="ko") == (
        "**사후적 질문**(표준 방식으로 학습된 이 디코더는 마지막 3분의 1의 V에 토큰 정체성만을 이미 담고 있는가?): "
        "V의 평균 표의 비용은 Q의 것 대비 +0.30 nats, K의 것 대비 +0.20 nats입니다(원문의 해석과 반대입니다). "
        "세 추정량이 일치할 때만 인정되는 주장 'V가 Q보다 낫다'와 'V가 K보다 낫다'의 판정은 둘 다 *contradicted*입니다. "
        "판정이 무엇이든, 이 주장들은 표를 두고 학습한 적이 없는 모델에 관한 것입니다. 표를 그 자리에 두고 W_V를 "
        "학습하는 모델을 다룬 값 뱅크 논문을 반박하지도 확인하지도 않습니다.")


@pytest.mark.parametrize("name, said", [("half_calibration_v", "`half_calibration_v`는"),
                                        ("check_l", "`check_l`은")])
def test_post_hoc_sentence_korean_out_of_regime_names_the_check_with_its_particle(name, said):
    cost = {"Q": 0.40, "K": 0.20, "V": 0.30}
    text = post_hoc_sentence(cost, ["out of regime (would be: reproduced)", "contradicted"], {name: "contradicted"},
                             lang="ko")
    assert "V의 평균 표의 비용은 Q의 것 대비 -0.10 nats, K의 것 대비 +0.10 nats입니다(둘 사이입니다: " in text
    assert "각각 *out of regime (would be: reproduced)*, *contradicted*입니다 (판정하지 않음: 선언된 확인이 " \
           f"성립하지 않았습니다 — {said} contradicted). 판정이 무엇이든" in text


def test_post_hoc_sentence_english_unchanged_and_follows_the_signs():
    text = post_hoc_sentence({"Q": 0.9, "K": 0.8, "V": 0.1}, ["reproduced", "reproduced"], lang="en")
    assert "V's mean table costs -0.80 nats against Q's and -0.70 against K's (as the article's reading " \
           "predicts); the claims 'V beats Q' and 'V beats K', counted only where the three estimators agree, " \
           "are both *reproduced*. Whatever" in text
    ko = post_hoc_sentence({"Q": 0.9, "K": 0.8, "V": 0.1}, ["reproduced", "reproduced"], lang="ko")
    assert "(원문의 해석이 예측하는 대로입니다)" in ko


def test_decoder_answers_korean_sentences():
    result = load_results("real-decoder")
    en, ko = decoder_answers(result, lang="en"), decoder_answers(result, lang="ko")
    assert en["q1"]["numbers"] == ko["q1"]["numbers"]
    n = ko["q2"]["numbers"]
    assert ko["q2"]["sentence"] == (
        f"마지막 3분의 1의 Q, K, V를 토큰별 표로 바꾸면 각각 {_fmt(n['Q table'])}, {_fmt(n['K table'])}, "
        f"{_fmt(n['V table'])} nats의 비용이 듭니다. V := W_V·norm(x0)의 비용은 "
        f"{_fmt(n['V := W_V·norm(x0)'])} nats입니다.")
    assert ko["q1"]["question"] == "깊은 층은 새로 계산한 QK 패턴에 얼마나 의존합니까?"
    assert en["q1"]["sentence"].startswith("Last third of the real decoder: another sequence's patterns cost ")
    q3 = ko["q3"]["numbers"]
    assert ko["q3"]["sentence"].endswith(f"마지막 3분의 1은 직접 로짓 기여의 {q3['late_share_of_dla']:.0%}를 씁니다.")
    assert all(not any("a" <= ch <= "z" for ch in ko[q]["question"]) for q in ko if q != "q4")
