"""Chapter 09's computed prose and figure in Korean: exact sentences for known numbers (the answer line of each
question's shape, a side's paragraph, the closing, the capstone, the norm view, mHC, the footing), the production
map's cells, and the figure's Korean labels drawn without a missing glyph. The English stays as it was (its own
tests: test_chapter09_*.py)."""
import math
from types import SimpleNamespace

import matplotlib.pyplot as plt
import pytest
import test_korean_font as font

from vrs_edu.chapters.ch09_the_four_answers import answers as A, argument as G
from vrs_edu.chapters.ch09_the_four_answers.argument import Evidence
from vrs_edu.chapters.ch09_the_four_answers.figures import plot_for_against
from vrs_edu.chapters.ch09_the_four_answers.production_map import COLUMNS_KO, production_map

style = font.style           # the course style of one edition (a fixture), from the Korean font's tests
_draw_strictly = font._draw_strictly   # draws with a missing glyph's warning turned into an error

KO = {"label": "라벨", "subject": "교환하면", "pos": "비용이 {amount} 듭니다", "neg": "손실이 {amount} 낮아집니다",
      "model": "모델", "corpus": "말뭉치", "regime": "영역", "where": "거기",
      "meaning": {"for": "찬성으로 셉니다.", "against": "반대로 셉니다."},
      "point": {"for": "찬성 요지입니다", "against": "반대 요지입니다"}, "claim": "교환의 비용이 크다"}


def _e(mean, verdict="reproduced", favours="positive", half=0.01, n=1, margin=0.05, **kw):
    fields = dict(label="l", subject="the swap", pos="costs {amount}", neg="lowers the loss by {amount}",
                  model="the model", corpus="the corpus", regime="the regime", where="there", chapter="02",
                  meaning={"for": "This counts for.", "against": "This counts against."},
                  point={"for": "gist for", "against": "gist against"}, claim="the claim", ko=dict(KO))
    fields.update(kw)
    return Evidence(n, mean=mean, lo=mean - half, hi=mean + half, verdict=verdict, favours=favours, margin=margin,
                    **fields)


def _measure(mean, verdict="contradicted"):
    ko = {**KO, "point": {"needed": "깊은 층에는 새 패턴이 필요합니다", "spare": "깊은 층에는 새 패턴이 거의 필요 없습니다",
                          "cost": "마지막 3분의 1에 다른 텍스트의 패턴을 준 비용"}, "where": "SmolLM2, 사후적"}
    return _e(mean, verdict, favours="measure", point={"needed": "n", "spare": "s", "cost": "c"}, ko=ko)


def test_evidence_sentence_korean_follows_sign_size_and_verdict():
    assert G.evidence_sentence(_e(0.58), lang="ko") == (
        "모델(말뭉치; 영역)에서 교환하면 비용이 0.58 nats 듭니다(95 % 구간 +0.570 ~ +0.590 nats). "
        "주장 \"교환의 비용이 크다\"는 잡음으로 설명할 수 없을 만큼 분명히 성립합니다(재현됨). 찬성으로 셉니다.")
    assert G.evidence_sentence(_e(1.57, "contradicted"), lang="ko") == (
        "모델(말뭉치; 영역)에서 교환하면 비용이 1.57 nats나 듭니다(95 % 구간 +1.56 ~ +1.58 nats). "
        "주장 \"교환의 비용이 크다\"는 잡음으로 설명할 수 없을 만큼 분명히 틀렸습니다(반박됨). 찬성으로 셉니다.")
    # undecided: no reason is given, and a small cost says 겨우
    assert G.evidence_sentence(_e(0.011, "undecided", half=0.017), lang="ko") == (
        "모델(말뭉치; 영역)에서 교환하면 비용이 겨우 0.011 nats 듭니다(95 % 구간 -0.006 ~ +0.028 nats). "
        "다만 검정의 수를 감안하면 잡음으로 설명될 수 있습니다(미정).")
    assert G.evidence_sentence(_e(-0.032, None, favours="negative"), lang="ko") == (
        "모델(말뭉치; 영역)에서 교환하면 손실이 0.032 nats 낮아집니다(95 % 구간 -0.042 ~ -0.022 nats). "
        "서술입니다. 이 수치에는 선언된 검정이 없습니다. 찬성으로 셉니다.")
    assert "구간이 ±0.02 nats 안에 있습니다(무시할 만함)" in G.evidence_sentence(
        _e(0.001, "negligible", margin=0.02), lang="ko")


def test_side_sentences_korean():
    row = {"n": 2, "for": _e(0.58), "against": None, "measure": None, "answer": "-"}
    assert G.side_sentences(row, lang="ko") == [
        "**찬성 근거.** 모델(말뭉치; 영역)에서 교환하면 비용이 0.58 nats 듭니다(95 % 구간 +0.570 ~ +0.590 nats). "
        "주장 \"교환의 비용이 크다\"는 잡음으로 설명할 수 없을 만큼 분명히 성립합니다(재현됨). 찬성으로 셉니다.",
        "**반대 근거.** 강좌가 측정한 것 중 여기서 결론에 반하는 것은 없습니다."]
    assert G.argue_paragraphs({**row, "answer": "예."}, "", "덧붙임.", lang="ko")[-2:] == ["덧붙임.", "**답.** 예."]
    assert G.side_sentences(row, lang="en")[1] == "**Against.** Nothing the course measured speaks against the " \
                                                  "conclusion here."


def test_answer_line_korean_for_each_shape():
    pro, con = _e(0.3), _e(-0.3)
    loose = _e(0.3, "undecided")
    assert G.answer_line(2, pro, con, lang="ko") == (
        "부분적으로 그렇습니다. 찬성 근거: 찬성 요지입니다(거기). 반대 근거: 반대 요지입니다(거기).")
    assert G.answer_line(2, pro, None, lang="ko") == (
        "예. 찬성 근거: 찬성 요지입니다(거기). 반대 근거: 측정한 것 중 결론에 반하는 수치는 없습니다.")
    assert G.answer_line(4, loose, con, lang="ko") == (
        "아니요. 찬성 근거: 가장 강한 수치가 잡음과 구별되지 않습니다(거기). 반대 근거: 반대 요지입니다(거기).")
    assert G.answer_line(2, loose, None, lang="ko") == (
        "결정되지 않았습니다. 찬성 근거: 가장 강한 수치가 잡음과 구별되지 않습니다(거기). 반대 근거: 측정한 것 중 "
        "결론에 반하는 수치는 없습니다.")
    assert G.answer_line(3, pro, loose, lang="ko").startswith(
        "예, 그렇게 설계할 수 있습니다(시도한 설계가 모두 그렇지는 않습니다). 찬성 근거: ")
    assert G.answer_line(1, pro, con, lang="ko").startswith("예, 두 절반 모두 중요합니다. 찬성 근거: ")
    # question 1 with its measure: how much first, then the sides
    assert G.answer_line(1, pro, None, _measure(1.24), lang="ko") == (
        "많이 의존하며, 옮기는 것은 더 중요합니다. 깊은 층에는 새 패턴이 필요합니다(마지막 3분의 1에 다른 텍스트의 "
        "패턴을 준 비용 1.24 nats; SmolLM2, 사후적). 찬성 근거: 찬성 요지입니다(거기). 반대 근거: 측정한 것 중 결론에 "
        "반하는 수치는 없습니다.")
    # an empty side "for" says nothing speaks *for* the conclusion
    assert G.answer_line(4, None, con, lang="ko").endswith(
        "찬성 근거: 측정한 것 중 결론을 뒷받침하는 수치는 없습니다. 반대 근거: 반대 요지입니다(거기).")
    assert G.answer_line(1, None, None, _measure(0.01, "reproduced"), lang="ko").startswith(
        "거의 의존하지 않습니다. 깊은 층에는 새 패턴이 거의 필요 없습니다(마지막 3분의 1에 다른 텍스트의 패턴을 준 "
        "비용 0.010 nats; SmolLM2, 사후적). ")
    assert G.answer_line(1, None, None, _measure(0.3, "undecided"), lang="ko").startswith(
        "결정되지 않았습니다. 새 패턴의 가치는 잡음과 구별되지 않습니다(SmolLM2, 사후적). ")
    # the English line is unchanged
    assert G.answer_line(2, pro, con, lang="en") == "Partly: gist for (there); gist against (there)."


def test_closing_and_answers_korean():
    rows = [{"n": 1, "for": _e(0.5), "against": None, "measure": _measure(1.2), "answer": "가."},
            {"n": 2, "for": _e(0.5), "against": _e(-0.5), "measure": None, "answer": "나."},
            {"n": 3, "for": _e(0.5), "against": None, "measure": None, "answer": "다."},
            {"n": 4, "for": None, "against": _e(-0.5), "measure": None, "answer": "라."}]
    assert G.closing(rows, lang="ko") == (
        "원문은 *\"QK는 기준이고 V는 내용이다\"*라고 결론지었습니다(QK는 어디를 볼지 정하고 V는 옮겨지는 "
        "내용이며, QK만 보면 절반만 본다). 이 결론은 성립할까요? 질문 1에서는 "
        "결론대로 두 절반 모두 중요합니다. 깊은 층에는 새 패턴이 필요하고, 옮기는 것을 잃는 비용은 그보다도 큽니다. "
        "질문 3에서는 확고한 뒷받침이 있고, 이에 반하는 확고한 수치는 없습니다. 질문 4에서는 이에 반하는 확고한 "
        "수치만 있습니다. 질문 2에서는 양쪽 모두 확고한 수치가 있고, 각각 자기 모델과 학습 조건에서 성립합니다. 답은 어떤 "
        "모델을, 어떻게 학습시켜 묻느냐에 달려 있습니다.")
    rows[2]["against"] = _e(-0.5)
    assert "질문 2와 3에서는 양쪽 모두 확고한 수치가 있고" in G.closing(rows, lang="ko")
    assert G.answer_paragraphs(rows, lang="ko")[:2] == ["**질문 1.** 가.", "**질문 2.** 나."]
    assert G.answer_paragraphs(rows, lang="en")[0] == "**Q1.** 가."


def test_capstone_footing_and_mhc_korean():
    assert G.capstone_sentence(5, 6, 0.17, 0.24, 0.39, lang="ko") == (
        "6개 층 중 마지막 층(0부터 세어 5번 층)에서 패턴을 균등한 패턴으로 바꾸면 비용이 0.17 nats 듭니다. 다른 텍스트의 패턴으로 "
        "바꾸면 비용이 0.24 nats 듭니다. 값을 다른 텍스트의 값으로 바꾸면 비용이 0.39 nats 듭니다. 이 층에는 자기 "
        "패턴이 필요합니다(아무 데도 특별히 보지 않으면 비용이 0.05 nats를 넘습니다). 또한 이 층은 보는 곳보다 옮기는 "
        "것이 더 중요합니다(값 교환의 비용이 패턴 교환보다 큽니다). 이 모델과 이 층에 대한 질문 1의 답: 두 절반 모두 "
        "중요하며, QK만 보면 더 작은 쪽을 보게 됩니다.")
    assert G.capstone_sentence(1, 6, 0.01, -0.02, -0.03, lang="ko").startswith(
        "6개 층 중 1번 층(0부터 셈)에서 패턴을 균등한 패턴으로 바꾸면 비용이 겨우 0.010 nats 듭니다. 다른 텍스트의 패턴으로 바꾸면 "
        "손실이 겨우 0.020 nats 낮아집니다.")
    rows = [{"n": 1, "for": _e(0.5, regime="post hoc, x"), "against": _e(-0.5, "undecided"), "measure": None}]
    assert G.footing_sentence(rows, lang="ko") == (
        "수치 2개 중 1개는 선언된 검정으로 결정되었고, 1개는 결정되지 않았으며(미정 또는 적용 범위 밖), 검정 없는 "
        "서술은 없습니다. 1개는 사후적으로 측정한 실제 디코더에서 나왔고(모델 하나, 말뭉치 하나, 실행 하나: 반복의 "
        "단위는 평가 시퀀스입니다), 나머지는 여기서 학습한 장난감 모델에서 나왔습니다(단위는 시드입니다).")
    loss = SimpleNamespace(mean=-0.032, verdict="reproduced")          # mhc_sentence reads a Verdict's two fields
    matched = SimpleNamespace(mean=-0.035, verdict="reproduced")
    regime = {"layers": 8, "corpus": "kjv", "epochs": 0.3, "seeds": 5}
    assert G.mhc_sentence(loss, matched, regime, lang="ko") == (
        "실제로 쓰이는 설계도 깊이를 선택적으로 읽습니다. mHC(manifold-constrained hyper-connections: 학습된 이중 "
        "확률 행렬로 섞는 잔차 스트림 네 개, DeepSeek-V4에 탑재)는 단일 잔차 스트림에 비해 장난감 모델의 손실을 "
        "0.032 nats 낮춥니다(8층 장난감 모델, King James Bible, 0.30 에폭, 짝지은 시드 5개). 주장 \"mHC가 손실을 "
        "낮춘다\"는 잡음으로 설명할 수 없을 만큼 분명히 성립합니다(재현됨). MLP의 파라미터 수를 맞춘 대조군보다도 손실이 0.035 nats "
        "낮습니다(재현됨).")


def test_norm_view_sentence_korean():
    decoder = {"layers": list(range(20, 30)), "judged": 10, "reproduced": 10, "weight": 0.56, "norm": 0.21,
               "r": 0.15, "weights": 0.93, "attention": 0.80, "mixing": None}
    assert A.norm_view_sentence({"decoder": decoder}, lang="ko") == (
        "가중치(QK)만으로 읽으면 깊은 층은 잘못 서술됩니다. 30층 디코더의 마지막 3분의 1(20–29층)에서 토큰이 새 상태 "
        "중 문맥에서 가져오는 몫은 가중치로 읽으면 93 %, 어텐션이 옮기는 것(V와 O)의 노름으로 읽으면 80 %, 잔차까지 "
        "세면 15 %입니다. 첫 토큰이 싱크인 10개 층에서 첫 토큰은 가중치의 56 %를 받지만 층이 옮기는 것의 21 %만 "
        "차지합니다(노름 기반 관점: Kobayashi et al., arXiv 2004.10102와 2109.07152; 싱크: Gu et al., arXiv "
        "2410.10781).")
    encoder = {**decoder, "layers": [4, 5], "judged": 0, "attention": math.nan}
    assert A.norm_view_sentence({"encoder": encoder}, lang="ko") == (
        "가중치(QK)만으로 읽으면 깊은 층은 잘못 서술됩니다. 인코더의 마지막 3분의 1(4–5층)에서 토큰이 새 상태 중 "
        "문맥에서 가져오는 몫은 가중치로 읽으면 93 %, 잔차까지 세면 15 %입니다(노름 기반 관점: Kobayashi et al., "
        "arXiv 2004.10102와 2109.07152).")


def _designs():
    base = {"kv_bytes_per_token": {"float32": 100}}
    designs = {"baseline": base, "kv_share": {"kv_bytes_per_token": {"float32": 50}}}
    comparison = {"kv_share": {"paired_final": {"mean": -0.005, "ci": [-0.018, 0.009]}}}
    return {"designs": designs, "corpus": {"comparison": comparison}}


def test_production_map_korean_cells():
    judged = {"kv_share_no_worse": {"verdict": "undecided", "p_holm": 0.52}}
    kv = {"verdicts": [{"name": "late_shared_kv_free", "mean": 1.37, "verdict": "contradicted"},
                       {"name": "late_v_from_k_free", "mean": 0.56, "verdict": "contradicted"}]}
    columns, rows = production_map(_designs(), judged, kv, lang="ko")
    assert columns == COLUMNS_KO == ["모델", "설정 필드", "설계", "원문의 질문", "강좌가 측정한 것"]
    by_field = {r[1]: r for r in rows}
    assert by_field["`num_kv_shared_layers`"] == [
        "Gemma 4 (마지막 층들)", "`num_kv_shared_layers`", "앞선 층의 K/V 캐시를 읽는 층 (CLA)", "4: 재사용에 의한 효율",
        "장난감 모델: Δ 손실 -0.005 [-0.018, +0.009] nats (미정, Holm p = 0.520), 캐시는 기준선의 50%; "
        "SmolLM2 사후적, 마지막 3분의 1: +1.37 nats ('더 나쁘지 않다'는 주장이 반박됨)"]
    assert by_field["`attention_k_eq_v`"][4] == ("장난감 모델: 아직 실행하지 않음; SmolLM2 사후적, 마지막 3분의 1: "
                                                 "+0.56 nats ('더 나쁘지 않다'는 주장이 반박됨)")
    assert production_map(None, {}, None, lang="ko")[1][0][4] == "장난감 모델: 아직 실행하지 않음; SmolLM2 사후적: 아직 실행하지 않음"
    assert production_map(None, {}, None, lang="en")[1][0][4] == "toy: not run yet; SmolLM2 post hoc: not run yet"


@pytest.fixture(scope="module")
def stored_rows():
    """The argument's rows from the stored results (no live swaps), in Korean."""
    ev = A.gather_evidence()
    return G.argument_rows(G.build_candidates(ev), lang="ko"), ev


def test_every_stored_evidence_has_its_korean_words(stored_rows):
    _, ev = stored_rows
    fields = {"label", "subject", "pos", "neg", "model", "corpus", "regime", "where", "meaning", "point", "claim"}
    for n, es in G.build_candidates(ev).items():
        for e in es:
            assert fields <= set(e.ko), (n, e.label, fields - set(e.ko))
            text = G.evidence_sentence(e, lang="ko")
            assert "nats" in text and " the " not in text and "post hoc" not in text, text


def test_the_figure_draws_its_korean_labels(style, stored_rows, caplog):
    rows, _ = stored_rows
    style("ko")
    fig = plot_for_against(rows, lang="ko")
    texts = [t.get_text() for t in fig.texts]
    assert texts[-2:] == ["결론에 찬성", "결론에 반대"]
    assert texts[0].startswith("질문 1 · 깊은 층의 새 QK 패턴 의존도 — 마지막 3분의 1에 다른 텍스트의 패턴을 준 비용 +")
    assert texts[1] == "질문 2 · V를 통해 유지되는 초기 정보"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "속이 찬 점: 결정됨", "빈 점: 결정되지 않음 (잡음으로 설명될 수 있음)", "음영: 결론에 찬성하는 쪽"]
    assert fig.axes[-1].get_xlabel() == "손실 변화 (nats)"
    assert fig.axes[2].get_title(loc="left").startswith("KJV 장난감 모델: ")
    with caplog.at_level("WARNING", logger="matplotlib.font_manager"):
        _draw_strictly(fig)
    assert not [r.getMessage() for r in caplog.records if "findfont" in r.getMessage()]   # the bold headings too
    # nothing is cut off: every text lies inside the figure
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    for t in [*fig.texts, *fig.legends[0].get_texts(), *(a._left_title for a in fig.axes)]:
        b = t.get_window_extent(renderer)
        assert box.x0 - 1 <= b.x0 and b.x1 <= box.x1 + 1 and b.y1 <= box.y1 + 1, t.get_text()
    plt.close(fig)


def test_the_figure_names_its_empty_side_and_its_korean_panels(style, stored_rows):
    rows, _ = stored_rows
    style("ko")
    fig = plot_for_against(rows, lang="ko")
    inside = [t.get_text() for ax in fig.axes for t in ax.texts]
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    # question 1 has nothing against it: the empty panel says no number speaks against the conclusion
    assert "반하는 수치 없음" in inside and "측정된 것 없음" not in inside
    assert any(t.endswith("값 뱅크 V, 처음부터 학습") for t in titles), titles
    assert any(t.endswith("토큰별 표: V 자리 − Q 자리") for t in titles), titles
    assert not any("대역" in t for t in titles)
    plt.close(fig)


def test_the_capstone_checker_speaks_korean(capsys):
    from vrs_edu.course.exercises import ch09 as ex

    def stub(*args):
        raise NotImplementedError

    ex.check_pattern_or_values(stub, lang="ko")
    out = capsys.readouterr().out
    assert out.startswith("✗ 패턴 또는 값: 아직 구현하지 않았습니다")
    # the hint breaks where its sentences do, not at 100 characters of a two-column-wide script
    assert "    힌트: 세 손실에서 각각 개입 전 손실을 빼세요.\n" in out
    assert "\n    값(attn.v_mix) → x.roll(1, 0)에서 계산한 값\n" in out
    assert max(len(line) for line in out.splitlines()) < 60
    ex.check_pattern_or_values(stub, lang="en")
    assert capsys.readouterr().out.startswith("✗ pattern or values: not implemented yet")
    assert len(ex.CAPSTONE_HINTS_KO) == len(ex.CAPSTONE_MISTAKES)
    flipped = ex.check_pattern_or_values(lambda *a: tuple(-c for c in ex.pattern_or_values(*a)), lang="ko")
    assert not flipped and "부호가 뒤집혔습니다" in capsys.readouterr().out
