"""Chapter 04's sentences in Korean (vrs_edu.chapters.ch04_bank_of_values.prose, ``lang="ko"``): the same words
from the same numbers as the English, written for Korean grammar, with the particle after a substituted word chosen
by its reading. Known inputs, the exact sentence they must give; the English of the same inputs is checked too."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from vrs_edu.chapters.ch04_bank_of_values import prose as C


def _arm(margin_q, cost_v=0.004, margin_k=0.1, share_v=0.3):
    n = len(margin_q)
    return {"variant": "qkv", "seeds": list(range(n)),
            "shares": {"q": [share_v - m for m in margin_q], "k": [share_v - margin_k] * n, "v": [share_v] * n},
            "margin_q": list(margin_q), "margin_k": [margin_k] * n,
            "cost": {"q": [0.001] * n, "k": [0.0] * n, "v": [cost_v] * n}}


def _v(mean, lo, hi, verdict, effect=None):
    return SimpleNamespace(mean=mean, ci=(lo, hi), verdict=verdict,
                           test=SimpleNamespace(margin=None if effect is None else abs(effect)))


def _tables(values):
    return {"verdicts": [{"name": "value_embed_needs_v", "values": values}],
            "designs": {"baseline": {"n_params": 655_360}, "value_embed": {"n_params": 1_180_160},
                        "layer_embed": {"n_params": 1_229_344}}}


FLIP = {"×0.25": _arm([-0.0004]), "×1": _arm([0.063]), "×4": _arm([0.213])}


def test_the_share_sentence_in_korean_names_the_rates_with_their_particle_and_the_verdict_in_korean():
    s = C.share_sentence(FLIP, lang="ko")
    assert s.startswith("V의 x0 비중은 ×1과 ×4에서는 Q의 비중보다 크지만 ×0.25에서는 그렇지 않습니다"
                        "(share_v − share_q: ×0.25에서 0.000, ×1에서 +0.063, ×4에서 +0.213). ")
    assert s.endswith("즉 어느 경로가 x0을 더 많이 가져가는지는 계수의 학습률에 따라 달라집니다. 이 비중은 판정된 "
                      "검정이 아니라 서술입니다. 그 전제가 이 장난감 모델에서 성립하지 않으므로(아래) 어떤 주장에도 "
                      "답하지 않습니다.")
    assert C.share_sentence(FLIP, lang="en").startswith("V's x0 share exceeds Q's at ×1 and ×4 but not at ×0.25")
    every = C.share_sentence({a: _arm([0.1]) for a in C.ARM_ORDER}, "out of regime", "undecided", lang="ko")
    assert every.startswith("V의 x0 비중은 3가지 학습률 모두에서 Q의 비중보다 큽니다")
    assert every.endswith("주장의 판정은 적용 범위 밖(그래도 판정하면 미정)이므로, 비중은 어떤 주장에도 답하지 "
                          "않습니다.")
    none = C.share_sentence({a: _arm([-0.1]) for a in C.ARM_ORDER}, "rate-dependent", lang="ko")
    assert "3가지 학습률 어디에서도 Q의 비중보다 크지 않습니다" in none
    assert none.endswith("강좌의 규칙에 따른 주장의 판정: 학습률에 따라 다름.")


def test_the_need_sentence_in_korean_follows_the_premise_threshold():
    assert C.need_sentence({"×1": _arm([0.1], cost_v=0.02)}, 0.85, 0.5, lang="ko") == (
        "필요는 작습니다. 학습된 모델에서 한 경로의 x0을 제거하는 비용은 최대 +0.020 nats이고(×1의 V; Q +0.001, "
        "K +0.000, V +0.020), 기준선의 깊은 층에서는 이미 입력 분산의 0.85가 토큰 정체성으로 설명됩니다(x0-R², "
        "0.5 미만이어야 x0을 다시 읽을 필요가 생길 수 있는데, 이보다 높음).")
    clear = C.need_sentence({"×1": _arm([0.1], cost_v=0.08)}, 0.3, 0.5, lang="ko")
    assert clear.startswith("필요는 분명합니다.")
    assert clear.endswith("(x0-R², 0.5보다 낮음: 대부분 문맥이므로 x0을 다시 읽을 필요가 생길 수 있음).")
    assert "already 0.85 token identity" in C.need_sentence({"×1": _arm([0.1])}, 0.85, 0.5, lang="en")


def test_the_context_free_sentence_in_korean_says_negligible_as_too_small_and_picks_은_after_x0():
    by = {"substitute_loss": _v(-0.016, -0.022, -0.009, "negligible", -0.028),
          "bank_loss": _v(-0.032, -0.037, -0.027, "reproduced", -0.028),
          "qkv_loss": _v(-0.002, -0.004, 0.001, "undecided"),
          "scale_control_costs": _v(0.0002, -0.005, 0.006, "undecided")}
    assert C.context_free_sentence(by, lang="ko") == (
        "문맥을 무시하는 값 가운데 학습된 표(값 뱅크)만 x0을 다시 읽는 것보다 낫습니다. 기준선에 비해 "
        "V := γ·W_V x0은 손실을 -0.016 nats 바꾸며, 무시할 만합니다(관심 최소 효과 ±0.028 안: 의미를 갖기에는 "
        "너무 작음). 학습된 표(값 뱅크)는 손실을 0.032 nats 낮춥니다. 반면 Q, K, V에 x0을 더한 모델은 손실을 그대로 "
        "둡니다(-0.002 nats, 시드로는 부호가 정해지지 않음). x0을 읽지 않고 크기만 바꾸는 대조군은 손실을 그대로 "
        "둡니다(+0.000 nats, 시드로는 부호가 정해지지 않음).")
    assert C.context_free_sentence(by, lang="en").startswith("Of the values that ignore the context, only the learned")
    by["bank_loss"] = _v(-0.012, -0.02, -0.005, "negligible", -0.028)
    assert C.context_free_sentence(by, lang="ko").startswith(
        "문맥을 무시하는 값은 여기서 도움이 되지 않습니다. V := γ·W_V x0은 손실을 -0.016 nats 바꾸며")


def test_the_recall_sentence_in_korean_names_the_settled_rates():
    sweep = {"×0.25": _arm([0.065], margin_k=0.36), "×1": _arm([-0.125], margin_k=0.3),
             "×4": _arm([-0.033], margin_k=0.36)}
    assert C.recall_sentence(sweep, {"×0.25": 0.23, "×1": 0.33, "×4": 0.63}, lang="ko") == (
        "답이 키로 찾아오는 토큰인 회상 과제에서 V의 x0 비중은 모든 학습률에서 K의 비중보다 크고, Q의 비중보다 모든 "
        "학습률에서 크지는 않습니다(쿼리 위치에서 Q는 키 토큰 그 자체입니다). ×0.25: v − q +0.065, v − k +0.360"
        "(계수의 23%가 수렴); ×1: v − q -0.125, v − k +0.300(계수의 33%가 수렴); ×4: v − q -0.033, v − k +0.360"
        "(계수의 63%가 수렴). "
        "×4에서만 대부분의 계수가 움직임을 멈췄습니다.")
    assert C.recall_sentence(sweep, {"×0.25": 0.73, "×1": 0.83, "×4": 0.63}, lang="ko").endswith(
        "모든 학습률에서 대부분의 계수가 움직임을 멈췄습니다.")
    assert "Only at ×4" in C.recall_sentence(sweep, {"×0.25": 0.23, "×1": 0.33, "×4": 0.63}, lang="en")


def test_the_answer_in_korean_says_the_rate_decides_only_when_the_margin_changes_side():
    a = C.answer_paragraph(FLIP, 0.851, 0.5, -0.032, lang="ko")
    assert a.startswith("우리의 8층 모델에서 x0을 가장 많이 다시 읽는 경로는 계수의 학습률이 정합니다. V의 x0 비중에서 "
                        "Q의 비중을 뺀 값은 0.000(×0.25)부터 +0.213(×4)까지입니다.")
    assert "손실을 0.032 nats 낮춥니다." in a and a.endswith("확인하지도 반박하지도 않습니다.")
    same = C.answer_paragraph({a_: _arm([0.1]) for a_ in C.ARM_ORDER}, 0.3, 0.5, 0.01, lang="ko")
    assert same.startswith("우리의 8층 모델에서 V의 x0 비중은 모든 학습률에서 Q의 비중보다 큽니다(+0.100~+0.100).")
    assert "대부분 문맥이므로(0.30 x0-R²)" in same and "손실을 0.010 nats 높입니다." in same


def test_the_token_tables_sentence_in_korean_picks_이_or_가_after_the_design():
    assert C.token_tables_sentence(_tables([0.08, 0.1, 0.05, 0.09, 0.1]), lang="ko") == (
        "층별 임베딩이 시드 5개 중 5개에서 더 낮게 끝났습니다. 이 장난감 모델에서는 같은 표가 V보다 스트림을 통해 더 "
        "도움이 되었습니다. 둘 다 기준선의 파라미터 655,360개에 80%–88%를 더합니다.")
    assert C.token_tables_sentence(_tables([-0.1, -0.1, 0.1]), lang="ko").startswith(
        "value embeddings가 시드 3개 중 2개에서 더 낮게 끝났습니다. 이 장난감 모델에서는 같은 표가 스트림보다 V를 "
        "통해 더 도움이 되었습니다.")
    assert C.token_tables_sentence(_tables([-0.1, 0.1]), lang="ko").startswith("두 설계는 각각 시드 2개 중 1개에서")


def _wsweep():
    return {"factors": [0.0625, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0],
            "delta": {"q": [0.17, 0.12, 0.05, 0.02, 0.0, 0.001, 0.01],
                      "k": [0.01, 0.01, 0.0, 0.0, 0.0, 0.002, 0.0], "v": [0.09, 0.08, 0.05, 0.1, 0.0, 0.1, 0.3]}}


def test_the_widget_sentence_in_korean_makes_the_caveat_only_for_another_run():
    steps = {s: {"delta_down": d, "delta_up": d} for s, d in (("q", 0.001), ("k", 0.002), ("v", 0.1))}
    other = C.widget_sentence(steps, {"q": 0.157, "k": 0.0, "v": 0.2}, _wsweep(), "python-docs", 0.5, 0.03125, "kjv",
                              lang="ko")
    assert other.startswith("학습된 설정에서(×1에서 ×1/2 또는 ×2로) 슬라이더 한 칸은 Q나 K를 통해 손실을 최대 "
                            "0.0020 nats 움직이며, 이는 V를 통한 변화(0.1000-0.1000)보다 작습니다.")
    assert "가장 큰 변화는 Q의 ×1/4에서 ×1/8로 가는 한 칸으로, 0.070 nats입니다." in other
    assert other.endswith("(kjv 실행의 0.03125의 16배, 학습률을 우리 배치에 맞추기 전). 다른 모델이므로 이 수치는 "
                          "위의 kjv 실행과 비교할 수 없습니다.")
    same = C.widget_sentence(steps, {"q": 0.0, "k": 0.0, "v": 0.0}, _wsweep(), "kjv", 0.03125, 0.03125, "kjv",
                             lang="ko")
    assert same.endswith("위젯의 체크포인트는 kjv에서 왔으며, β의 학습률은 위 King James Bible(kjv) 실행과 같은 "
                         "0.03125였습니다.")


def test_a_language_the_course_does_not_have_is_refused():
    with pytest.raises(ValueError, match="lang"):
        C.share_sentence(FLIP, lang="fr")


def test_the_rate_sweep_figure_and_the_widget_readout_speak_the_edition(monkeypatch):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from vrs_edu.chapters.ch04_bank_of_values.figures import beta_text, plot_rate_sweep
    monkeypatch.setenv("VRS_EDU_LANG", "ko")
    fig = plot_rate_sweep(FLIP)
    assert [ax.get_title() for ax in fig.axes] == ["학습이 고른 것", "모델에 필요한 것"]
    assert fig.axes[0].get_xlabel() == "계수 학습률 (× 공식값)"
    plt.close(fig)
    now = {"layers": [6, 7], "loss": 4.1, "trained_loss": 4.1, "moved": [0.0, 0.012],
           "shares": {s: [0.3, 0.4] for s in "qkv"}, "trained_shares": {s: [0.3, 0.4] for s in "qkv"},
           "factors": {s: 1.0 for s in "qkv"}}
    text = beta_text(now)
    assert text.splitlines()[1:3] == ["학습된 패턴에서 옮겨 간 어텐션 질량: 층 6 0.0%, 층 7 1.2%",
                                      "층 6, 7의 x0 비중 |β| / (|α| + |β|):"]
    assert text.splitlines()[3].endswith("(기본값)")
    assert text.splitlines()[0] == "손실 4.1000 nats (기본값)"     # the loss's change, too, in Korean
    assert beta_text({**now, "loss": 4.2}).splitlines()[0] == "손실 4.2000 nats (기본값 4.1000에서 +0.1000)"
    monkeypatch.setenv("VRS_EDU_LANG", "en")
    assert beta_text(now).splitlines()[2] == "x0 share |β| / (|α| + |β|) in layers 6, 7:"
    assert beta_text(now).splitlines()[0] == "loss 4.1000 nats (the default)"


def test_the_appendix_sentences_in_korean_follow_the_same_numbers():
    assert C.instruments_sentence(FLIP, 0.7, 0.004, 0.01, lang="ko").endswith(
        "학습된 기준선에서 기울기 압력은 V의 x0을 더 세게 당기지만(V의 기울기 당김은 Q의 e^0.70 ≈ 2.0배), 당김이 곧 "
        "필요는 아닙니다. 대체 절제는 x0 층에서 손실을 최대 0.004 nats 움직이며, 이는 기준선의 시드끼리 서로 다른 "
        "정도(약 0.010 nats)보다 작습니다. 경로의 순위를 매기기에는 범위가 너무 좁습니다.")
    assert C.instruments_sentence(FLIP, -0.7, 0.04, 0.01, lang="ko").endswith("(약 0.010 nats)보다 큽니다.")
    assert C.premises_sentence(0.85, 0.5, 0.86, 0.5, lang="ko") == (
        "이 장의 전제는 성립하지 않습니다(0.850은 0.5 미만이 아님). 깊은 층의 입력이 이미 대부분 토큰 정체성이므로, "
        "위의 x0 비중은 이 말뭉치에서 판정된 주장이 아니라 서술입니다(보여 주지만 어떤 주장에도 답하지 않습니다). "
        "05장의 전제도 성립하지 않습니다(0.860은 0.5 미만이 아님).")
    assert C.premises_sentence(0.3, 0.5, 0.4, 0.5, lang="ko") == (
        "이 장의 전제는 성립합니다(0.300 < 0.5). x0 비중에 관한 주장은 답으로 읽습니다. 05장의 전제는 성립합니다"
        "(0.400 < 0.5).")
    assert C.lm_toys_sentence({4: 0.8, 8: 0.85, 16: 0.9}, 0.85, 0.39, 0.21, 0.5, lang="ko").endswith(
        "x0 주장은 대신 전제가 성립하는 곳에서 판정합니다: 회상 과제(0.39)와 실제 디코더의 마지막 3분의 1(0.21).")
    assert C.lm_toys_sentence({4: 0.45, 8: 0.85}, 0.85, None, None, 0.5, lang="ko") == (
        "언어 모델 장난감들의 깊은 층에서는 깊이 스윕 전체에서 입력 분산의 0.45–0.85가 토큰 정체성으로 설명되며"
        "(x0-R²), 전제의 경계값 0.5보다 낮은 것은 4층뿐입니다(이 장의 실행에서는 0.85). 여기서 잰 어떤 모델도 전제를 충족하지 않습니다.")
    assert (C.holds(0.3, 0.5, lang="ko"), C.holds(0.6, 0.5, lang="ko"), C.holds(0.3, 0.5, lang="en")) == (
        "예", "아니요", "yes")


def test_the_exercise_stub_hints_speak_the_edition(monkeypatch, capsys):
    from vrs_edu.course.exercises.ch04 import check_bank_table, check_x0_projection

    def stub(*args):
        raise NotImplementedError

    monkeypatch.setenv("VRS_EDU_LANG", "ko")
    check_x0_projection(stub)
    check_bank_table(stub)
    out = " ".join(capsys.readouterr().out.split())
    assert "x는 이미 정규화되어 있지만 임베딩은 그렇지 않으며, x0은 x와 같은 척도여야 합니다." in out
    assert "나오지 않은 id에는 전체 평균을 주세요." in out
    monkeypatch.setenv("VRS_EDU_LANG", "en")
    check_x0_projection(stub)
    assert "x is normalised already; the embedding is not" in " ".join(capsys.readouterr().out.split())
