"""Appendix 04's computed sentences, tables and figure labels (vrs_edu/chapters/ch04_bank_of_values/prose.py, the
appendix section, and the figures it draws) in both editions, on known inputs: the English is what the appendix's
code cells printed before, the Korean follows the same numbers, signs and branches."""
import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import test_korean_font as font  # noqa: E402
from vrs_edu.chapters.ch04_bank_of_values import figures as F, prose as C  # noqa: E402

style = font.style


def test_the_corpus_sentence_in_both_languages():
    args = ("kjv", [6, 7], 240, 32, True, 0.596, {"train": 3.765, "val": 4.408},
            {"×1": (0.03125, 0.0003125), "×4": (0.125, 0.00125)})
    assert C.appendix_corpus_sentence(*args, lang="en") == (
        "Corpus kjv: x0 layers [6, 7], 240 steps of 32 sequences, QK-norm True; a run reads 0.60 epochs; the "
        "baseline's final loss on training text 3.765, validation 4.408 nats. Coefficient rates (AdamW lr of β and "
        "γ / of α): ×1 0.03125 / 0.000313; ×4 0.125 / 0.00125.")
    assert C.appendix_corpus_sentence(*args, lang="ko") == (
        "말뭉치 kjv: x0 층 [6, 7], 시퀀스 32개 배치로 240 스텝, QK-norm True. 실행 하나는 0.60 에폭을 읽습니다. 기준선의 "
        "최종 손실은 학습 텍스트에서 3.765, 검증에서 4.408 nats입니다. 계수 학습률(β와 γ의 AdamW lr / α의 lr): "
        "×1 0.03125 / 0.000313; ×4 0.125 / 0.00125.")


def test_the_premises_table_says_whether_each_premise_holds():
    en = C.premises_table(0.851, 0.5, 0.3, 0.5, lang="en")
    assert en.splitlines()[0] == "| chapter | inputs measured | x0-R² | premise | holds? | what it stands for |"
    assert en.splitlines()[2] == ("| 04 | baseline, x0 layers' q/k/v inputs | 0.851 | < 0.5 | no | mostly context: "
                                  "re-reading x0 could be needed |")
    ko = C.premises_table(0.851, 0.5, 0.3, 0.5, lang="ko")
    assert ko.splitlines()[0] == "| 장 | 잰 입력 | x0-R² | 전제 | 성립? | 전제가 뜻하는 것 |"
    assert ko.splitlines()[2] == "| 04 | 기준선, x0 층의 q/k/v 입력 | 0.851 | < 0.5 | 아니요 | 대부분 문맥: x0을 다시 읽을 필요가 있을 수 있음 |"
    assert ko.splitlines()[3] == "| 05 | 잔차 기준선, 마지막 3분의 1의 입력 | 0.300 | < 0.5 | 예 | 대부분 문맥: x0을 다시 읽을 필요가 있을 수 있음 |"


def test_the_ablation_sentence_follows_the_spread():
    worst = {"q": 0.003, "k": 0.004, "v": 0.006}
    assert C.ablation_sentence(worst, 0.005, 0.006, lang="en") == (
        "In the x0 layers the swap costs at most Q +0.003, K +0.004, V +0.006 nats, against a seed-to-seed spread of "
        "the baseline's loss of 0.005 nats: these layers tolerate it least in V.")
    assert C.ablation_sentence(worst, 0.005, 0.006, lang="ko") == (
        "x0 층에서 교환의 비용은 많아야 Q +0.003, K +0.004, V +0.006 nats이고, 기준선 손실의 시드 간 퍼짐은 0.005 "
        "nats입니다. 이 층들에서는 V 경로가 교환을 가장 못 견딥니다.")
    assert C.ablation_sentence(worst, 0.01, 0.006, lang="en").endswith("tolerate the token identity in any path.")
    assert C.ablation_sentence(worst, 0.01, 0.006, lang="ko").endswith("이 층들은 어느 경로에서든 토큰 정체성을 견딥니다.")


def test_the_appendix_tables_have_their_headers_in_each_language():
    abl = {"layers": [6], "q": [(0.003, 0.002)], "k": [(-0.001, 0.001)], "v": [(0.006, 0.002)]}
    assert C.ablation_rows_table(abl, lang="en").splitlines()[::2] == [
        "| layer | q input := x0 | k input := x0 | v input := x0 |", "| 6 | +0.003 ± 0.002 | -0.001 ± 0.001 | +0.006 ± 0.002 |"]
    assert C.ablation_rows_table(abl, lang="ko").splitlines()[0] == "| 층 | q 입력 := x0 | k 입력 := x0 | v 입력 := x0 |"
    row = [["×1", "0.0312", "0.317", "+0.063", "+0.194", "0.50", "-0.0017"]]
    assert C.rates_table(row, lang="en").splitlines()[0] == (
        "| rate | β_v lr | share_v | v − q | v − k | \\|β_v\\| last | qkv − base (nats) |")
    assert C.rates_table(row, lang="ko").splitlines()[0] == (
        "| 학습률 | β_v lr | share_v | v − q | v − k | 마지막 층 \\|β_v\\| | qkv − 기준선 (nats) |")
    lead, tab = C.coefficients_table(5, ("alpha_q", "beta_q"), [[6, "+0.99 ± 0.01", "-0.36 ± 0.21"]], lang="ko")
    assert lead == "×1에서의 최종 계수, 시드 5개의 평균 ± 표준편차:"
    assert tab.splitlines()[0] == "| 층 | alpha_q | beta_q |"
    lead, tab = C.coefficients_table(5, ("alpha_q",), [[6, "+0.99 ± 0.01"]], lang="en")
    assert (lead, tab.splitlines()[0]) == ("Final coefficients at ×1, mean ± sd over 5 seeds:", "| layer | alpha_q |")
    cost, press, r2 = C.need_tables([["×1", "+0.0014", "-0.0000", "+0.0041"]], [6, 7],
                                    [["q", "+3.50e-04", "+5.28e-04"]], [["baseline", "0.851", "0.851", "0.851"]],
                                    lang="ko")
    assert [t.splitlines()[0] for t in (cost, press, r2)] == [
        "| 학습률 | 비용 q | 비용 k | 비용 v |", "| 경로 | ∂L/∂β 층 6 | ∂L/∂β 층 7 |", "| 변형 | x0-R² q 입력 | k 입력 | v 입력 |"]
    cost, press, r2 = C.need_tables([], [6], [], [], lang="en")
    assert [t.splitlines()[0] for t in (cost, press, r2)] == [
        "| rate | cost q | cost k | cost v |", "| path | ∂L/∂β layer 6 |", "| variant | x0-R² q input | k input | v input |"]
    assert C.gamma_table([["bank", "6: +2.767 ± 0.281"]], lang="ko").splitlines()[0] == "| 변형 | 층별 γ (평균 ± 표준편차) |"
    assert C.gamma_table([], lang="en").splitlines()[0] == "| variant | γ per layer (mean ± sd) |"
    seeds = [[0, True, "238, 247", "0.000", "0.742", "0.318", "0.794", "+0.052", "+0.477"],
             [1, False, "1200, 1200", "0.900", "0.5", "0.5", "0.5", "+0.000", "+0.000"]]
    assert C.recall_seeds_table(seeds, lang="ko").splitlines()[2:] == [
        "| 0 | 예 | 238, 247 | 0.000 | 0.742 | 0.318 | 0.794 | +0.052 | +0.477 |",
        "| 1 | 아니요 | 1200, 1200 | 0.900 | 0.5 | 0.5 | 0.5 | +0.000 | +0.000 |"]
    assert C.recall_seeds_table(seeds, lang="en").splitlines()[0] == (
        "| seed | learned lookup | steps to learn (baseline, qkv) | loss | share q | share k | share v | v − q | v − k |")
    assert "| 1 | no |" in C.recall_seeds_table(seeds, lang="en")


def test_the_plateau_lines_and_titles():
    pl = {"reached": 1, "of": 10, "per_run": [[0.262, 0.442], [0.312, 0.092]], "tol": 0.1}
    assert C.plateau_line("corpus", pl, lang="en") == (
        "corpus: β_v plateau reached in 1 of 10 (layer, seed) series; change in the window / total change, per seed: "
        "0.262 0.442; 0.312 0.092 (plateau: ≤ 0.1).")
    assert C.plateau_line("recall", pl, lang="ko") == (
        "회상 과제: (층, 시드) 계열 10개 중 1개에서 β_v가 정체에 이르렀습니다. 창 안의 변화 / 전체 변화, 시드별: "
        "0.262 0.442; 0.312 0.092 (정체: ≤ 0.1).")
    fr = {"×1": 0.133, "×4": 0.5}
    assert C.x0_plateau_line(fr, lang="en") == (
        "x0_plateaued (all three paths' β, at each rate): ×1 0.13, ×4 0.50 of the trajectories plateaued (needs > 0.5).")
    assert C.x0_plateau_line(fr, lang="ko") == (
        "x0_plateaued (세 경로 모두의 β, 학습률별): 정체한 궤적의 비율 ×1 0.13, ×4 0.50 (필요: > 0.5).")
    assert C.trajectories_title("corpus", lang="en") == "corpus, ×1: β during training (shaded: plateau window)"
    assert C.trajectories_title("corpus", lang="ko") == "말뭉치, ×1: 학습 중의 β (음영: 정체 창)"


def test_the_recall_and_widget_and_scale_sentences():
    ref = {"loss": 1.258, "acc": 0.338}
    finals = {"baseline": (0.0, 1.0), "qkv": (0.001, 0.999)}
    assert C.recall_reference_sentence(ref, finals, lang="en") == (
        "No-lookup reference: loss 1.258 nats, accuracy 0.338; baseline (×1, mean of seeds) loss 0.000, accuracy "
        "1.000; qkv (×1, mean of seeds) loss 0.001, accuracy 0.999.")
    assert C.recall_reference_sentence(ref, finals, lang="ko") == (
        "조회 없는 기준값: 손실 1.258 nats, 정확도 0.338; baseline (×1, 시드 평균) 손실 0.000, 정확도 1.000; "
        "qkv (×1, 시드 평균) 손실 0.001, 정확도 0.999.")
    assert C.sooner_sentence(-15.2, (-43.0, 14.0), lang="en") == (
        "qkv − baseline steps to learn, same seed: -15 [-43, +14] (not declared: a lead for a new test, not a "
        "verdict).")
    assert C.sooner_sentence(-15.2, (-43.0, 14.0), lang="ko") == (
        "같은 시드에서 배우기까지 걸린 스텝의 qkv − baseline: -15 [-43, +14] (선언되지 않음: 판정이 아니라 새 검정을 위한 "
        "단서입니다).")
    betas = {"q": [-0.641, -0.19], "k": [0.52, -0.09], "v": [0.2, 0.66]}
    added = {"q": {"delta": 0.0035, "moved": [0.1, 0.196]}, "k": {"delta": -0.00001, "moved": [0.069, 0.069]}}
    assert C.widget_model_sentence(betas, added, lang="en") == (
        "The widget's checkpoint, learned β per x0 layer: q [-0.64, -0.19]; k [0.52, -0.09]; v [0.2, 0.66]. Adding "
        "0.5 to β moves the loss by +0.0035 (q), -0.0000 (k) nats and 14.8% (q), 6.9% (k) of the attention mass.")
    assert C.widget_model_sentence(betas, added, lang="ko") == (
        "위젯의 체크포인트에서 x0 층별로 학습된 β: q [-0.64, -0.19]; k [0.52, -0.09]; v [0.2, 0.66]. β에 0.5를 더하면 "
        "손실은 +0.0035 (q), -0.0000 (k) nats 움직이고, 어텐션 질량은 14.8% (q), 6.9% (k)만큼 옮겨 갑니다.")
    paper = {"layers": 12, "params": 135e6, "tokens": 1.97e9}
    args = (8, 655372, 491520, 240, paper, 10.4, 25.0, 2048)
    assert C.scale_sentence(*args, lang="en") == (
        "Ours: 8 layers, 655,372 parameters, 491,520 tokens, 240 steps; the paper: 12 layers, 206× the parameters, "
        "4,008× the tokens. β's rate over the matrices' rate: ours 10.4×, the official recipe 25× (0.5 / 0.02, both "
        "scaled alike). Our word vocabulary (for the chapter's question 2): 2,048 entries.")
    assert C.scale_sentence(*args, lang="ko") == (
        "우리: 8층, 파라미터 655,372개, 토큰 491,520개, 240 스텝. 논문: 12층, 파라미터 206배, 토큰 4,008배. 행렬의 "
        "학습률 대비 β의 학습률: 우리 10.4×, 공식 레시피 25× (0.5 / 0.02, 둘 다 같은 비율로 조정). 우리의 단어 "
        "어휘(이 장의 질문 2를 위해): 항목 2,048개.")
    assert C.ledger_heading("recall.json", False, lang="ko") == "**recall.json**: 아직 실행 기록에 없음"
    assert C.ledger_heading("recall.json", False, lang="en") == "**recall.json**: not in the ledger yet"
    assert C.ledger_heading("recall.json", True, lang="ko") == "**recall.json**"


def test_the_embeddings_bullets_name_the_designs_in_each_language():
    ko = C.embeddings_bullets(None, lang="ko")
    assert ko.startswith("* **값 임베딩** (V로): ") and "\n* **층별 임베딩** (스트림으로): " in ko
    en = C.embeddings_bullets(None, lang="en")
    assert en.startswith("* **value embeddings** (into V): ") and "\n* **per-layer embeddings** (into the stream): " in en


def test_the_lm_toys_sentence_takes_이_after_a_range_ending_in_1():
    s = C.lm_toys_sentence({4: 0.76, 8: 0.81}, 0.85, 0.39, 0.27, 0.5, lang="ko")
    assert "입력 분산의 0.76–0.81이 토큰 정체성으로" in s


def _runs():
    hist = {"eval_steps": [0, 10, 20], "coefficients": {f"blocks.{l}.x0.beta_{s}": [0.0, 0.1 * l, 0.2 * l]
                                                        for l in (6, 7) for s in "qkv"}}
    return [{"history": hist}, {"history": hist}]


TABLE = {"layers": [6, 7], **{f"{c}_{s}": [[0.1, 0.2], [0.2, 0.3]] for c in ("beta", "alpha") for s in "qkv"}}
ABL = {"layers": [6, 7], **{s: [(0.001, 0.001), (0.002, 0.001)] for s in "qkv"}}
FIGURES = {
    "plot_betas": (lambda lang: F.plot_betas({"corpus": TABLE, "recall": TABLE}, lang=lang),
                   ["말뭉치: beta (초깃값 0)", "회상 과제: alpha (초깃값 1)", "학습된 beta", "층"]),
    "plot_beta_trajectories": (lambda lang: F.plot_beta_trajectories(_runs(), C.trajectories_title("corpus", lang),
                                                                     window=(5, 15), lang=lang),
                               ["층 6", "정체 창", "스텝", "β (시드 평균)", "말뭉치, ×1: 학습 중의 β (음영: 정체 창)"]),
    "plot_ablation": (lambda lang: F.plot_ablation({"kjv": ABL}, deep_layers=[6, 7], lang=lang),
                      ["kjv: 학습된 기준선에 대한 대체 절제", "q 입력 := x0", "층", "Δ 손실 (nats)"]),
}


@pytest.mark.parametrize("name", list(FIGURES))
def test_the_appendix_figures_speak_korean_with_every_glyph(name, style, caplog):
    style("ko")
    draw, labels = FIGURES[name]
    with caplog.at_level(logging.WARNING, logger="matplotlib"):
        fig = draw("ko")
        font._draw_strictly(fig)
    assert not [r.getMessage() for r in caplog.records], name
    texts = " | ".join(t.get_text() for t in fig.findobj(Text))
    assert not [label for label in labels if label not in texts], texts
    for word in ("layer", "step", "plateau", "learned", "input", "loss", "ablation", "corpus", "recall", "init"):
        assert word not in texts, (word, texts)
    plt.close("all")
    style("en")
    texts = " | ".join(t.get_text() for t in draw("en").findobj(Text))
    assert "layer" in texts and "층" not in texts
    plt.close("all")


def _sweep_row():
    from vrs_edu.lab.analysis import DeclaredTest, judge
    t = DeclaredTest("qkv_no_worse", "no worse", "Δ loss", "same seed", "negative", 0.0, "setup", -0.01,
                     "declared: 0.01", kind="check", sweep="coef_lr", form="equivalence")
    vals = {"×1": [-0.002, -0.001, -0.003, -0.002, -0.001], "×4": [0.03, 0.02, 0.04, 0.05, 0.01]}
    return judge([t], {t.name: vals}, seeds=[0, 1, 2, 3, 4])


def test_the_swept_clauses_follow_the_verdicts_in_both_editions():
    rows = _sweep_row()
    en = C.swept_clauses(rows, lang="en")
    assert en == f"The swept tests, clause by clause: **qkv_no_worse**: {rows[0].sentence(lang='en')}."
    assert en == ("The swept tests, clause by clause: **qkv_no_worse**: rate-dependent across coef_lr (×1 -0.002 "
                  "[-0.003, -0.001] reproduced; ×4 +0.030 [+0.010, +0.050] contradicted).")
    ko = C.swept_clauses(rows, lang="ko")
    assert ko == ("스윕한 검정, 조건별로: **qkv_no_worse**: coef_lr의 조건 전체에서 학습률에 따라 다름 (×1 -0.002 "
                  "[-0.003, -0.001] 재현됨; ×4 +0.030 [+0.010, +0.050] 반박됨).")
    assert C.swept_clauses([], lang="ko") == "스윕한 검정, 조건별로: "


def test_the_described_numbers_say_why_they_are_not_judged_in_both_editions():
    from vrs_edu.lab.premises import LM_TOYS_SHORT, describe
    why = LM_TOYS_SHORT + "; the recall task judges it"
    swept = describe("v_needs_x0_more_than_q", "cost v − q", {"×1": [0.001, 0.003, 0.005], "×4": [0.0, 0.001, 0.0]},
                     why)
    one = describe("v_pressure_above_q", "ln ratio", [1.0, 1.2, 0.8], LM_TOYS_SHORT)
    assert C.described_clauses([swept, one], lang="en") == (
        f"The need and pressure numbers (descriptions): **v_needs_x0_more_than_q**: {swept}. "
        f"**v_pressure_above_q**: {one}.")
    assert C.described_clauses([swept, one], lang="ko") == (
        "필요와 압력 수치(판정하지 않는 서술): **v_needs_x0_more_than_q**: 조건별 서술 (×1 +0.003 [-0.002, +0.008]; "
        "×4 +0.000 [-0.001, +0.002]): 판정하지 않음: 그 전제(깊은 입력이 대부분 문맥, x0-R² < 0.5)가 모든 장난감 언어 "
        "모델에서 성립하지 않음; 회상 과제가 판정함. **v_pressure_above_q**: +1.000 [95% 신뢰구간 +0.503, +1.497]: 서술 (판정하지 "
        "않음: 그 전제(깊은 입력이 대부분 문맥, x0-R² < 0.5)가 모든 장난감 언어 모델에서 성립하지 않음).")
    odd = describe("x", "q", [1.0, 2.0, 3.0], "some new reason")
    with pytest.raises(KeyError, match="some new reason"):
        C.described_clauses([odd], lang="ko")
