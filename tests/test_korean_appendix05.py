"""Appendix 05's computed sentences, tables and figure labels (vrs_edu/chapters/ch05_depth_as_sequence/prose.py, the
appendix section, and the figures it draws) in both editions, on known inputs: the English is what the appendix's
code cells printed before, the Korean follows the same numbers, signs and branches."""
import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import test_korean_font as font  # noqa: E402
from vrs_edu.chapters.ch05_depth_as_sequence import figures as F, prose as P  # noqa: E402

style = font.style


def test_the_runs_and_budget_lines():
    args = (11, 5, 160, 163840, 0.2, 5.489, 25.66, ["rmsnorm"])
    assert P.runs_sentence(*args, lang="en") == (
        "11 variants × 5 seeds, 160 steps: 163,840 training tokens a run, 0.20 of an epoch; the "
        "[unigram loss](#glossary:unigram-loss) (no context) is 5.489 nats. Training alone took 25.7 CPU-minutes; "
        "stream start of every variant: ['rmsnorm'].")
    assert P.runs_sentence(*args, lang="ko") == (
        "변형 11개 × 시드 5개, 160 스텝: 실행마다 학습 토큰 163,840개, 에폭의 0.20. [유니그램 손실](#glossary:unigram-loss)"
        "(문맥 없음)은 5.489 nats입니다. 학습에만 CPU 시간 25.7분이 걸렸습니다. 모든 변형의 스트림 시작: ['rmsnorm'].")
    rows = [["residual", "655,360", "0", "0.00%"]]
    lead, tab = P.budget_table(0.015, rows, lang="en")
    assert lead == "Budget: at most 1.5% more parameters than the residual model."
    assert tab.splitlines()[0] == "| variant | parameters | added | overhead |"
    lead, tab = P.budget_table(0.015, rows, lang="ko")
    assert lead == "예산: 파라미터는 잔차 모델보다 최대 1.5%까지만 더 많을 수 있습니다."
    assert tab.splitlines()[::2] == ["| 변형 | 파라미터 | 추가분 | 초과 비율 |", "| residual | 655,360 | 0 | 0.00% |"]
    assert P.loss_rows_table([], lang="ko").splitlines()[0] == (
        "| 변형 | 검증 손실 (평균 ± 표준편차) | 잔차 대비 Δ [95% 신뢰구간] | 더 나은 시드 |")
    assert P.loss_rows_table([], lang="en").splitlines()[0] == (
        "| variant | val loss (mean ± sd) | Δ vs residual [95% CI] | seeds better |")
    assert P.epochs_line(0.298, lang="en") == "Epochs of the training split one run reads: 0.30."
    assert P.epochs_line(0.298, lang="ko") == "실행 하나가 읽는 학습 분할의 에폭: 0.30."


def test_the_coefficient_group_and_readout_lines():
    lead, tab = P.coefficient_group_table(0.02, 0.003, [["dca", "7,304", "1,408", "재현됨"]], lang="ko")
    assert lead == "계수 그룹: lr 0.02, 기본 lr 0.003의 6.7×."
    assert tab.splitlines()[0] == "| 혼합기 | 계수 lr로 학습하는 파라미터 | 기본 lr로 | Δ 손실 판정 |"
    lead, tab = P.coefficient_group_table(0.02, 0.003, [], lang="en")
    assert lead == "Coefficient group: lr 0.02, 6.7× the base lr 0.003."
    assert tab.splitlines()[0] == "| mixer | parameters at the coefficient lr | at the base lr | Δ loss verdict |"
    assert P.readout_sentence(8, 0.089, 0.348, 0, [6, 7, 8], 0.984, lang="en") == (
        "ELC-BERT's read-out (row 8) puts 0.089 on the last block's output and 0.348 on the embedding, its largest "
        "weight on output 0. The full window's deep reads (rows 6–8) give 0.984 of their correction's attention to "
        "the embedding.")
    assert P.readout_sentence(8, 0.089, 0.348, 0, [6, 7, 8], 0.984, lang="ko") == (
        "ELC-BERT의 출력 읽기(행 8)는 마지막 블록의 출력에 0.089, 임베딩에 0.348을 두며, 가장 큰 가중치는 출력 0에 "
        "둡니다. 전체 창의 깊은 읽기(행 6–8)는 보정 어텐션의 0.984를 임베딩에 줍니다.")
    # the particle follows the number read aloud: 0.342 (이) takes 를, 0.981 (일) takes 을
    s = P.readout_sentence(8, 0.089, 0.342, 0, [6, 8], 0.981, lang="ko")
    assert "임베딩에 0.342를 두며" in s and "보정 어텐션의 0.981을 임베딩에" in s


def test_the_r2_profile_sinkhorn_and_cost_tables():
    lead, tab = P.input_r2_table(5, ["dca"], [[0, "1.000", "1.000 / 1.000 / 1.000"]], lang="ko")
    assert (lead, tab.splitlines()[0]) == ("각 투영 입력의 x0-R², 시드 5개의 평균:", "| 층 | residual | dca Q / K / V |")
    lead, tab = P.input_r2_table(5, ["dca"], [], lang="en")
    assert (lead, tab.splitlines()[0]) == ("x0-R² of each projection's input, mean of 5 seeds:",
                                           "| layer | residual | dca Q / K / V |")
    assert P.stream_profile_table([], lang="ko").splitlines()[0] == (
        "| 블록 | 임베딩 가중치 Q / K / V | V: MLP − 어텐션 | 읽기 최근성 Q / K / V |")
    assert P.stream_profile_table([], lang="en").splitlines()[0] == (
        "| block | embedding weight Q / K / V | V: MLP − attention | read recency Q / K / V |")
    comb = torch.tensor([[0.25, 0.75], [0.75, 0.25]])
    tab, sums = P.sinkhorn_table(comb, lang="en")
    assert tab.splitlines()[::2] == ["| comb | to stream 0 | to stream 1 | row sum |",
                                     "| from stream 0 | 0.250 | 0.750 | 1.000000 |"]
    assert sums == "Column sums: 1.000000, 1.000000."
    tab, sums = P.sinkhorn_table(comb, lang="ko")
    assert tab.splitlines()[::2] == ["| comb | 스트림 0으로 | 스트림 1로 | 행 합 |", "| 스트림 0에서 | 0.250 | 0.750 | 1.000000 |"]
    assert sums == "열 합: 1.000000, 1.000000."
    assert P.mhc_cost_sentence(99765, 655360, 4.12, lang="en") == (
        "mHC adds 99,765 parameters (15%) and took 4.1 times the baseline's time per training step.")
    assert P.mhc_cost_sentence(99765, 655360, 4.12, lang="ko") == (
        "mHC는 파라미터를 99,765개(15%) 더하고, 학습 스텝마다 기준선의 4.1배 시간이 걸렸습니다.")
    costs = [{"axis": "depth", "L": 8, "K": "full", "seconds": 0.00117, "peak_bytes": 1.13e6},
             {"axis": "sequence", "L": 8, "K": 2, "seconds": 0.0015, "peak_bytes": 1.2e5}]
    ratio = [{"L": 8, "K": 2, "full_over_K_time": 2.0, "model_ratio": 4.5, "full_over_K_memory": 2.42,
              "seq_over_depth_memory": 0.25}]
    t, r, m = P.cost_tables(costs, ratio, lang="ko")
    assert t.splitlines()[::2] == ["| 축 | L | K | 시간 (ms) | 최대 메모리 (MB) |", "| 깊이 | 8 | 전체 | 1.17 | 1.13 |"]
    assert t.splitlines()[3] == "| 시퀀스 | 8 | 2 | 1.50 | 0.12 |"
    assert r.splitlines()[0] == "| L | K | 전체 / K 시간 | (L+1)/K |"
    assert m.splitlines()[::2] == ["| L | K | 전체 / K 메모리 | (L+1)/K | 같은 K에서 시퀀스 / 깊이 메모리 |",
                                   "| 8 | 2 | 2.42 | 4.50 | 0.25 |"]
    t, r, m = P.cost_tables(costs, ratio, lang="en")
    assert t.splitlines()[::2] == ["| axis | L | K | time (ms) | peak memory (MB) |", "| depth | 8 | full | 1.17 | 1.13 |"]
    assert (r.splitlines()[0], m.splitlines()[0]) == (
        "| L | K | full / K time | (L+1)/K |", "| L | K | full / K memory | (L+1)/K | sequence / depth memory at the same K |")


def test_the_premise_sentence_follows_the_number_in_both_languages():
    assert P.premise_sentence(0.935, 0.5, lang="en").endswith(
        "Here they are 0.935 token identity, 6.5% context: the premise **fails**.")
    assert P.premise_sentence(0.935, 0.5, lang="ko") == (
        "이 질문에는 실행 전에 04장과 05장을 위해 한 번 선언한 전제가 있습니다: 기준선의 깊은 층 입력이 대부분 문맥, 즉 "
        "x0-R² 0.5 미만이어야 합니다. 그렇지 않으면 모든 경로가 이미 입력을 통해 x0을 읽으므로, V, Q, K 입력 사이의 어떤 "
        "차이도 어느 경로가 그것을 필요로 하는지 말할 수 없습니다. 여기서 입력은 토큰 정체성이 0.935, 문맥이 6.5%입니다: "
        "전제는 **성립하지 않습니다**.")
    assert P.premise_sentence(0.4, 0.5, lang="ko").endswith("문맥이 60.0%입니다: 전제는 **성립합니다**.")
    assert P.premise_sentence(0.4, 0.5, lang="en").endswith("the premise **holds**.")


def test_the_r2_and_router_figures_speak_korean_with_every_glyph(style, caplog):
    style("ko")
    r2 = {n: {s: [1.0, 0.9, 0.8] for s in "qkv"} for n in ("residual", "dca")}
    mats = {s: torch.eye(3) for s in "qkv"}
    with caplog.at_level(logging.WARNING, logger="matplotlib"):
        figs = [F.plot_input_r2(r2, ceiling=0.5, lang="ko"), F.plot_router_streams({"dca": mats}, lang="ko")]
        for fig in figs:
            font._draw_strictly(fig)
    assert not [r.getMessage() for r in caplog.records]
    texts = [" | ".join(t.get_text() for t in fig.findobj(Text)) for fig in figs]
    assert all(label in texts[0] for label in ("Q 입력", "전제의 상한 0.5", "층", "입력의 x0-R²")), texts[0]
    assert "dca: V 입력" in texts[1]
    assert not [w for w in ("input", "layer", "premise") if w in texts[0] + texts[1]]
    plt.close("all")
    style("en")
    assert "premise ceiling 0.5" in " | ".join(t.get_text() for t in F.plot_input_r2(r2, 0.5, lang="en")
                                                .findobj(Text))
    plt.close("all")


def _row(name, mean, verdict, ci=(-0.01, 0.01), family="ch05"):
    from types import SimpleNamespace

    from vrs_edu.lab.results import interval

    r = SimpleNamespace(test=SimpleNamespace(name=name, family=family, margin=0.01), mean=mean, ci=ci,
                        verdict=verdict, would_be=None, reason=None, arms=None, name=name)
    r.interval = lambda digits=3, label="": interval(r.mean, r.ci, digits, label)
    return r


def test_the_regime_in_both_languages():
    args = (8, 64, 160, 240, 0.2, 0.3, "kjv", "King James Version of the Bible", 5)
    assert P.appendix_regime_text(*args, lang="en") == (
        "an 8-layer word model of width 64, 160–240 steps (0.20–0.30 of an epoch of the King James Version of the "
        "Bible), 5 paired seeds")
    assert P.appendix_regime_text(*args, lang="ko") == (
        "폭 64인 8층 단어 모델, 160–240 스텝(King James Bible의 0.20–0.30 에폭), 짝지은 시드 5개")


def test_the_router_sentence_in_korean_follows_the_rows_and_the_premise():
    rows = [_row("dca_v_reads_x0_more_than_q", -0.005, None, (-0.016, 0.006)),
            _row("dca_v_reads_x0_more_than_k", 0.003, None, (-0.012, 0.015))]
    ko = P.router_sentence(rows, 0.935, 0.5, lang="ko")
    assert ko.startswith("V의 입력은 라우터 1개 중 0개에서 Q의 입력보다, 1개 중 1개에서 K의 입력보다 토큰 정체성을 더 많이 "
                         "담습니다(깊은 층과 시드에 걸친 평균; x0-R² 차이: dca V − Q -0.005 [-0.016, +0.006], "
                         "V − K +0.003 [-0.012, +0.015]).")
    assert "성립하지 않으므로(이 모델에서는 0.935, 0.5보다 높음), V는 이미" in ko
    assert P.router_sentence(rows, 0.935, 0.5, lang="en").startswith(
        "V's input carries more token identity than Q's in 0 of the 1 routers and more than K's in 1 of the 1")
    judged = [_row("dca_v_reads_x0_more_than_q", 0.02, "reproduced", (0.01, 0.03))]
    assert P.router_sentence(judged, lang="ko").endswith(" 검정 횟수를 감안한 판정: dca V − Q 재현됨.")
    assert P.router_sentence(judged, lang="en").endswith(" Verdicts, allowing for the number of tests: dca V − Q "
                                                         "reproduced.")


def test_the_answer_paragraph_in_korean_follows_the_verdicts():
    loss = [_row("mudd_loss", -0.098, "reproduced"), _row("shortswa-k2_loss", 0.010, "undecided")]
    controls = [_row("mudd_beats_scalar_gain", -0.073, "undecided")]
    depth = [_row("depth_attention_loss", -0.023, "reproduced"), _row("depth_attention_beats_attnres", 0.008,
                                                                       "undecided")]
    check = _row("attnres_qkv_no_worse", -0.007, "undecided")
    routers = [_row("dca_v_reads_x0_more_than_q", -0.005, None)]
    ko = P.answer_paragraph(loss, controls, depth, check, routers, ["미정"], "레짐", lang="ko")
    assert ko.startswith("**부분적으로**, 이 조건에서는 — 레짐. 깊이에 걸친 읽기 3가지(Depth-Attention 포함) 가운데 "
                         "2가지가 잔차 합보다 손실을 낮추며, 검정 횟수를 감안해도 결정된 결과입니다. 가장 크게 낮춘 mudd는 "
                         "손실을 0.098 nats 낮춥니다(재현됨). 스칼라 게인 대조군과 비교하면 -0.073 nats(미정)입니다: "
                         "학습된 게인 하나만으로도 설명될 수 있습니다.")
    assert " 깊이 방향 ShortSWA 자체: shortswa-k2 +0.010 nats(미정)." in ko
    assert "Depth-Attention은 손실을 0.023 nats 낮춥니다(재현됨). Attention Residuals와 비교하면 +0.008 nats(미정)입니다." in ko
    assert ko.endswith("그리고 라우터들의 V − Q와 V − K 차이는 판정하지 않은 서술입니다(전제가 성립하지 않음).")
    none = [_row("mudd_loss", 0.01, "undecided")]
    ko = P.answer_paragraph(none, [], [_row("d", 0.01, "undecided"), _row("a", 0.0, "undecided")], check,
                            routers, ["미정"], "레짐", lang="ko")
    assert ko.startswith("**보이지 않음**, 이 조건에서는 — 레짐. 깊이에 걸친 읽기 2가지(Depth-Attention 포함) 가운데 "
                         "잔차 합보다 손실을 낮추는 것은 없으며")
    en = P.answer_paragraph(loss, controls, depth, check, routers, ["undecided"], "the regime", lang="en")
    assert en.startswith("**Partly**, in this regime — the regime. 2 of the 3 reads over depth")


def test_the_agreement_lines_in_both_languages():
    from vrs_edu.chapters.ch05_depth_as_sequence.v_over_depth import agreement_lines

    rows = [_row("v_reads_embedding_more_than_q", 0.05, "reproduced", (0.01, 0.09)),
            _row("v_reads_embedding_more_than_k", -0.02, "contradicted", (-0.03, -0.01))]
    ko = agreement_lines(rows, None, None, lang="ko")
    assert ko == ["이 장, v의 임베딩 가중치 − q의 것: +0.050 (0보다 위), 재현됨",
                  "이 장, v의 임베딩 가중치 − k의 것: -0.020 (0보다 아래), 반박됨",
                  "04장: V가 Q와 K보다 x0을 더 많이 읽는다는 저장된 검정이 없음(`vrs-edu reproduce bank-of-values`)",
                  "08장 (SmolLM2-135M): 아직 저장된 결과가 없음. 실제 디코더의 q, k, v 입력의 층별 x0-R²를 주며, 여기서 "
                  "마지막 3분의 1에 걸친 v − q와 v − k로 비교함",
                  "주장을 지지하는 결정: v − q; 반대하는 결정: v − k"]
    en = agreement_lines(rows, None, None, lang="en")
    assert en[0] == "this chapter, v's embedding weight − q's: +0.050 (above 0), reproduced"
    assert en[-1] == "decided for the claim: v − q; against it: v − k"
    assert agreement_lines([], None, None, lang="ko")[-1] == "주장을 지지하는 결정: 없음; 반대하는 결정: 없음"
