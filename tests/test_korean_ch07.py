"""The Korean edition's computed prose of chapters 02 and 07: each builder in both languages on known inputs.

The English sentences are the chapters' own (their notebooks' outputs must not change); the Korean ones are written
for Korean grammar, and their words follow the numbers (how many layers lean, which way a curve goes, the sign of ρ)
exactly as the English do. One case per builder where the particle after a substituted number changes
(ρ = +0.21로, ρ = -0.30으로).
"""
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

from vrs_edu.chapters.ch02_qk_routes_v_carries.figures import plot_layer_effects  # noqa: E402
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import (Effect, alignment_rows,  # noqa: E402
                                                               alignment_sentence)
from vrs_edu.chapters.ch07_real_model.norms import _norms_paragraph_ko  # noqa: E402
from vrs_edu.chapters.ch07_real_model.probes import curve_row, identity_summary, trend  # noqa: E402

ALL_LEAN = {"own": [0.21, 0.33], "other": [0.04, 0.07], "removed": [0.22, 0.37]}
SOME_LEAN = {"own": [0.21, 0.05, 0.3], "other": [0.04, 0.07, 0.1], "removed": [0.22, 0.1, 0.4]}


def test_alignment_sentence_in_both_languages():
    assert alignment_sentence(ALL_LEAN, 16, "en").startswith(
        "Every layer's output leans toward the token's own value: cosine 0.21 to 0.33, against 0.04 to 0.07")
    assert alignment_sentence(ALL_LEAN, 16, "ko") == (
        "모든 층에서 출력이 토큰 자신의 값 쪽으로 기웁니다. 코사인은 0.21–0.33이고, 무관한 값과의 코사인은 "
        "0.04–0.07입니다. 각 헤드가 옮기는 것의 제곱 노름 가운데 XSA가 덜어 낼 몫은 22%–37%입니다(제곱 코사인의 "
        "평균이지 평균의 제곱이 아닙니다. 헤드의 16차원에서 무작위 두 방향은 약 6%입니다).")
    assert alignment_sentence(SOME_LEAN, 16, "en").startswith("2 of 3 layers' outputs lean further")
    assert alignment_sentence(SOME_LEAN, 16, "ko").startswith(
        "3개 층 가운데 2개 층에서 출력이 다른 값보다 토큰 자신의 값 쪽으로 더 기웁니다. 코사인은 0.05–0.30이고")


def test_alignment_rows_headers_follow_the_language():
    assert alignment_rows(ALL_LEAN, "en")[0][0] == "layer"
    columns, rows = alignment_rows(ALL_LEAN, "ko")
    assert columns == ["층", "cos(출력, 자신의 값)", "cos(출력, 다른 값)", "cos² 평균: XSA가 제거하는 몫"]
    assert rows == alignment_rows(ALL_LEAN, "en")[1]


def test_layer_effects_figure_reads_the_running_edition(monkeypatch):
    result = {"layers": [0, 1], "value swap": [Effect(0.5, 0.1, 4), Effect(0.2, 0.1, 4)]}
    monkeypatch.setenv("VRS_EDU_LANG", "ko")
    ax = plot_layer_effects(result, ["value swap"]).axes[0]
    assert ax.get_ylabel() == "Δ 손실 (nats)"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["값 교환"]
    monkeypatch.setenv("VRS_EDU_LANG", "en")
    ax = plot_layer_effects(result, ["value swap"]).axes[0]
    assert ax.get_ylabel() == "Δ loss (nats)"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["value swap"]


def test_identity_summary_and_curve_rows_in_both_languages():
    scores = {"q": [0.5, 0.2], "k": [0.4, 0.1], "v": [0.9, 0.0]}
    assert identity_summary(scores, "en") == ("mean per-token R²: q 0.350, k 0.250, v 0.450; v best explained in 1 "
                                              "of 2 tokens")
    assert identity_summary(scores, "ko") == ("토큰별 R² 평균: q 0.350, k 0.250, v 0.450; v가 가장 잘 설명되는 "
                                              "토큰은 2개 가운데 1개")
    stats = {"entropy": [2.0, 1.5], "oversmoothing": [0.2, 0.6, 0.5]}
    assert curve_row("m", stats, "en") == ["m", "2.00 → 1.50 (falls)", "0.20 → 0.60 (depth 1) → 0.50 (rises)"]
    assert curve_row("m", stats, "ko") == ["m", "2.00 → 1.50 (하락)", "0.20 → 0.60 (깊이 1) → 0.50 (상승)"]
    assert [trend([1, 1]), trend([1, 1], "ko")] == ["flat", "평탄"]


def _paragraph(rho: float, depth: float) -> str:
    m = {"position_share": [0.25], "attention_mixing": [0.5, 0.7]}
    return _norms_paragraph_ko(m, 2, [0, 1], [0, 1], 0.4, 0.1, SimpleNamespace(mean=rho, verdict_words="W1"),
                               SimpleNamespace(verdict_words="W2"), SimpleNamespace(mean=depth, verdict_words="W3"),
                               0.2, 0.9)


def test_norms_paragraph_in_korean_follows_the_numbers():
    text = _paragraph(0.21, 0.031)
    assert text == (
        "[CLS], [SEP]와 구두점은 토큰의 25 %입니다. 이들이 그보다 많은 가중치를 받는 곳(2개 층 가운데 2개)에서 "
        "이들의 몫은 가중치로 **40 %**, 노름으로 **10 %**입니다. 노름 몫이 가중치 몫보다 낮은 층은 2개 가운데 "
        "2개입니다(재현됨). 한 문장의 토큰들에서, 토큰이 받는 가중치와 그 벡터의 길이는 ρ = +0.21로 "
        "상관됩니다(W1). V, O, 잔차와 LayerNorm까지 세면 토큰의 새 상태 가운데 문맥에서 오는 몫은 **20 %**입니다. "
        "가중치만으로는 90 %입니다(W2; BERT-base: 18.8 % 대 97.1 %, arXiv 2109.07152); 잔차와 LayerNorm 전에 옮기는 "
        "것의 노름으로 본 어텐션만으로는 60 %입니다. 처음 두 층은 마지막 두 층보다 3.1 포인트 더 많이 섞습니다(W3).")
    other = _paragraph(-0.30, -0.012)
    assert "ρ = -0.30으로 상관됩니다(W1)" in other          # the particle follows the reading: 영 -> 으로
    assert "1.2 포인트 더 적게 섞습니다(W3)" in other
