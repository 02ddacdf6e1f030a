"""The Korean edition's computed prose of chapter 07: each builder in both languages on known inputs.

The English sentences are the chapter's own (its notebook's outputs must not change); the Korean ones are written
for Korean grammar, and their words follow the numbers exactly as the English do.
"""
from types import SimpleNamespace

from vrs_edu.chapters.ch07_real_model import prose
from vrs_edu.chapters.ch07_real_model.norms import _norms_paragraph_ko
from vrs_edu.chapters.ch07_real_model.probes import curve_row, identity_summary, trend


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
    row = SimpleNamespace
    return _norms_paragraph_ko(m, 2, [0, 1], [0, 1], 0.4, 0.1, row(mean=rho, verdict="reproduced", would_be=None),
                               row(verdict="undecided", would_be=None), row(mean=depth, verdict="negligible",
                                                                             would_be=None), 0.2, 0.9)


def test_norms_paragraph_in_korean_follows_the_numbers():
    assert _paragraph(0.21, 0.031) == (
        "[CLS], [SEP]와 구두점은 토큰의 25 %입니다. 이들이 그보다 많은 가중치를 받는 곳(2개 층 가운데 2개)에서 "
        "이들의 몫은 가중치로 **40 %**, 노름으로 **10 %**입니다. 노름 몫이 가중치 몫보다 낮은 층은 2개 가운데 "
        "2개입니다(재현됨). 한 문장의 토큰들에서, 토큰이 받는 가중치와 그 벡터의 길이는 ρ = +0.21로 "
        "상관됩니다(재현됨). V, O, 잔차와 LayerNorm까지 세면 토큰의 새 상태 가운데 문맥에서 오는 몫은 **20 %**입니다. "
        "가중치만으로는 90 %입니다(미정; BERT-base: 18.8 % 대 97.1 %, arXiv 2109.07152); 잔차와 LayerNorm 전에 옮기는 "
        "것의 노름으로 본 어텐션만으로는 60 %입니다. 처음 두 층은 마지막 두 층보다 3.1 포인트 더 많이 섞습니다(무시할 만함).")
    other = _paragraph(-0.30, -0.012)
    assert "ρ = -0.30으로 상관됩니다(재현됨)" in other          # the particle follows the reading: 영 -> 으로
    assert "1.2 포인트 더 적게 섞습니다(무시할 만함)" in other


PROBES = {"q": [0.2, 0.4], "k": [0.1, 0.2], "v": [0.5, 0.3], "resid": [0.9, 0.8, 0.7], "n_train": 400,
          "n_test": 100}


def test_identity_sentence_and_details():
    assert prose.identity_sentence(PROBES, "en") == (
        "Token identity alone explains 0.500 of the values' variance at layer 0 against 0.200 of the queries' and "
        "0.100 of the keys'; v is the best explained of the three at 1 of 2 layers (held-out R², 100 test tokens).")
    assert prose.identity_sentence(PROBES, "ko") == (
        "층 0에서 토큰 정체성만으로 값 분산의 0.500을 설명하며, 쿼리는 0.200, 키는 0.100입니다. 2개 층 가운데 1개 층에서 "
        "v가 셋 중 가장 잘 설명됩니다(홀드아웃 R², 테스트 토큰 100개).")
    assert prose.probe_details(50, 500, PROBES, "ko") == (
        "문장 50개, 토큰 500개([CLS]와 [SEP] 제외): 400개로 탐침을 맞추고 100개로 시험합니다.")
    columns, rows = prose.probe_details_table(PROBES, [0.3, -0.1], "ko")
    assert columns == ["층", "q", "k", "v", "스트림", "v − max(q, k)"]
    assert rows[-1] == ["최종", "", "", "", "0.700", ""]


def test_swap_and_ablation_sentences():
    swap = {"reference": 0.25, "n": 40}
    assert prose.swap_sentence(5, 6, 6, swap, {"n": 30}, "ko") == (
        "값을 교환하면 6개 층 가운데 5개 층에서 패턴을 교환할 때보다 문장 임베딩이 더 많이 바뀌고, 6개 층 가운데 6개 층에서 "
        "균등한 패턴보다 더 많이 바뀝니다(서로 다른 두 문장 사이의 코사인은 0.250입니다. 같은 길이의 쌍으로 묶은 문장 "
        "40개, 고정된 어텐션 경로에는 30개).")
    deep = range(4, 6)
    assert prose.ablation_sentence(deep, {"q": 0.9, "k": 0.8, "v": 0.7}, "en") == (
        "In layers 4–5 the sentence embedding keeps a mean cosine of Q 0.900, K 0.800, V 0.700 to the clean one: "
        "the most tolerant path there is Q, the least V.")
    assert prose.ablation_sentence(deep, {"q": 0.9, "k": 0.8, "v": 0.7}, "ko") == (
        "층 4–5에서 문장 임베딩은 깨끗한 임베딩과의 평균 코사인을 Q 0.900, K 0.800, V 0.700으로 유지합니다. 그곳에서 "
        "가장 잘 견디는 경로는 Q, 가장 못 견디는 경로는 V입니다.")
    assert prose.special_tokens_sentence(0.41, 0.13, "ko") == (
        "이 문장에서 [CLS], 마침표, [SEP]는 각 토큰의 어텐션 가중치 가운데 평균 **0.41**을 받지만, 층이 실제로 옮기는 "
        "것 가운데서는 **0.13**만 차지합니다.")


def test_short_lines_and_headers():
    cfg = SimpleNamespace(n_layers=6, d_model=384, n_heads=12, d_mlp=1536, vocab_size=30522)
    assert prose.model_line("M", cfg, 22_700_000, "apache-2.0", "ko") == (
        "M: 층 6개, d_model 384, 헤드 12개, MLP 1536,\n    어휘 30,522개, 파라미터 22.7 M개; 라이선스 apache-2.0")
    assert prose.parity_lines(8, 120, 7, True, "ko") == (
        "문장 8개, 실제 토큰 120개, 깊이 7개를 비교함\n모든 은닉 상태가 transformers.BertModel과 1e-4 안에서 일치: 예")
    assert prose.your_cosine_line(5, 0.91, 0.9, "ko") == "층 5, V := x0: 내 코사인 0.910, 표의 값 0.900"
    assert prose.norms_run_sentence(200, 31.4, "ko") == "문장 200개; 실행에 31 s가 걸렸습니다."
    assert prose.concentration_columns("ko")[0] == "모델"
    assert prose.toy_name("value-residual", "baseline", "ko") == "장난감 value-residual: baseline"
    assert prose.norms_table({k: [0.5] for k in prose.NORMS_COLUMNS.values()}, "ko")[0][:2] == [
        "층", "특수 토큰의 가중치 몫"]


def test_answer_in_korean():
    nm = {"weight_share": [0.4, 0.2], "norm_share": [0.1, 0.1], "mixing": [0.2, 0.2], "weight_mixing": [0.9, 0.9]}
    text = prose.answer(PROBES, 2, range(1, 2), {"q": 0.9, "k": 0.9, "v": 0.8}, nm, "ko")
    assert text.startswith("강좌의 그림 가운데 절반은 여기서 아무도 학습하지 않은 가중치에서도 성립합니다. V는 토큰 정체성을 "
                           "나릅니다(토큰 정체성은 층 0의 값 가운데 0.50, 쿼리나 키 가운데 0.20을 설명하며, 2개 층 "
                           "가운데 1개 층에서 v가 앞섭니다).")
    assert text.endswith("특수 토큰은 가중치의 30%를 받지만 노름으로는 10%이고, 가중치로는 90%인 문맥의 몫이 실제로는 "
                         "20%입니다.")
