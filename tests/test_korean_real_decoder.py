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
    assert "각각 *out of regime (would be: reproduced)*, *contradicted*입니다 (판정하지 않음: 선언된 점검이 " \
           f"성립하지 않았습니다 — {said} 반박됨). 판정이 무엇이든" in text


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


def test_norms_answer_korean_follows_the_shares():
    from vrs_edu.chapters.ch08_real_decoder.norms_prose import norms_answer
    m = {"all": {"r": 0.30, "weights": 0.60}}
    assert norms_answer({"judged": [1, 2], "weight": 0.80, "norm": 0.10}, m, lang="ko") == (
        "**어텐션은 가중치만이 아닙니다.** 이 디코더에서 첫 토큰이 싱크인 곳에서 그 토큰은 가중치의 80%를 받지만 "
        "층이 옮기는 것의 10%만 차지합니다. V, O와 잔차까지 세면 토큰은 새 상태의 30%를 문맥에서 가져오는데, "
        "가중치만으로는 60%입니다(층 평균). 가중치(QK)만으로는 어텐션이 옮기는 것을 잘못 말합니다.")
    same = norms_answer({"judged": [], "weight": 0.0, "norm": 0.0}, {"all": {"r": 0.50, "weights": 0.52}}, lang="ko")
    assert same == ("**어텐션은 가중치만이 아닙니다.** 이 디코더에서 첫 토큰 싱크가 있는 층은 없습니다. V, O와 잔차까지 "
                    "세면 토큰은 새 상태의 50%를 문맥에서 가져오는데, 가중치만으로는 52%입니다(층 평균). "
                    "여기서는 가중치의 읽기와 노름의 읽기가 일치합니다.")
    assert "takes 80% of the weight but only 10% of what the layer moves" in norms_answer(
        {"judged": [1], "weight": 0.80, "norm": 0.10}, m, lang="en")


def _third(mean, lo, hi):
    return {"mean": mean, "ci": [lo, hi], "n": 10}


def test_context_free_pattern_sentence_korean():
    from vrs_edu.chapters.ch08_real_decoder.interventions import ESTIMATORS, estimator
    from vrs_edu.chapters.ch08_real_decoder.readout import context_free_pattern_sentence
    pt = {f"{estimator(e, p)} · late": _third(0.5, 0.4, 0.6) for p in "QK" for e in ESTIMATORS}
    result = {"per_third": pt, "tolerance": 0.02}
    assert context_free_pattern_sentence(result, lang="ko") == (
        "문맥 없는 Q나 K는 질문 1에도 답합니다. 그러면 마지막 3분의 1의 패턴은 토큰 정체성과 위치만으로 계산됩니다. "
        "그 비용(평균 표 / 수축 표 / W·norm(x0)): Q +0.50 / +0.50 / +0.50; K +0.50 / +0.50 / +0.50 nats. "
        "±0.02 nats 이내인 것은 하나도 없으므로, 마지막 3분의 1에는 문맥에서 계산한 패턴(새 패턴, 적어도 새 q와 k)이 "
        "필요합니다.")
    pt["K table · late"] = _third(0.001, -0.01, 0.01)
    ko = context_free_pattern_sentence(result, lang="ko")
    assert ko.endswith("6개 중 1개가 ±0.02 nats 이내입니다(평균 표에 의한 K). 그 경우에는 문맥 없는 쿼리나 키로 "
                       "충분하고, 그 경로로는 새 패턴이 필요하지 않습니다.")
    assert context_free_pattern_sentence(result, lang="en").endswith(
        "1 of 6 lie within ±0.02 nats (K by the mean table): there a context-free query or key is enough, and the "
        "fresh pattern is not needed through that path.")


def test_substitution_text_korean(monkeypatch):
    from vrs_edu.chapters.ch08_real_decoder.figures import substitution_text
    out = {"clean_loss": 3.0, "loss": 3.5, "delta": 0.5, "token_delta": [0.1, -0.6],
           "clean_top": [["a"], ["b"]], "top": [["c"], ["d"]]}
    monkeypatch.setenv("VRS_EDU_LANG", "ko")
    ko = substitution_text(out, ["x", "y", "z"], shown=1).splitlines()
    assert ko[0].startswith("문장의 손실: 토큰당 3.000 → 3.500 nats (Δ ")
    assert ko[1] == "손실이 가장 많이 바뀐 다음 토큰 예측 (2개 중):"
    monkeypatch.setenv("VRS_EDU_LANG", "en")
    en = substitution_text(out, ["x", "y", "z"], shown=1).splitlines()
    assert en[1] == "next-token predictions where the loss moved most (of 2):"
    assert en[2].startswith("  after 'y'            next 'z'          predicted 'b'")


def test_verdict_words_both_editions():
    from vrs_edu.chapters.ch08_real_decoder.readout import verdict_words
    rec = {"verdict": "out of regime", "would_be": "contradicted"}
    assert verdict_words(rec, lang="en") == "out of regime (would be: contradicted)"
    assert verdict_words(rec, lang="ko") == "적용 범위 밖 (판정한다면: 반박됨)"
    assert verdict_words({"verdict": "reproduced"}, lang="ko") == "재현됨"
    ko = post_hoc_sentence(COST, [verdict_words(rec, "ko"), "반박됨"], {"check_l": "반박됨"}, lang="ko")
    assert "(판정하지 않음: 선언된 점검이 성립하지 않았습니다 — `check_l`은 반박됨)" in ko
