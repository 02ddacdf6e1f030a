"""Appendix 03's computed sentences and tables (vrs_edu/chapters/ch03_value_residual/prose.py, the appendix section,
and svformer_sentence, recall_sentence, steps_sentence) in both editions, on known inputs: the English is what the
appendix's code cells printed before, the Korean follows the same numbers, signs and verdict branches."""
from types import SimpleNamespace

from vrs_edu.chapters.ch03_value_residual import prose as C
from vrs_edu.lab.results import interval


class Paired(SimpleNamespace):
    def interval(self, digits: int = 3, label: str = "") -> str:
        return interval(self.mean, self.ci, digits, label)


def _v(mean, ci, verdict="undecided", **kw):
    test = SimpleNamespace(name="t", margin=kw.pop("margin", 0.027))
    return Paired(mean=mean, ci=ci, verdict=verdict, would_be=None, test=test, reason=None, arms=None, **kw)


BEFORE = Paired(mean=-0.014, ci=(-0.024, -0.003))


def test_the_corpus_and_step_lines():
    args = ("kjv", 5.489, 0.596, 825241, {"train": 3.794, "val": 4.421, "n": 5}, "8782857", False)
    assert C.appendix_corpus_sentence(*args, lang="en") == (
        "Corpus (kjv): unigram (context-free) validation loss 5.489 nats; a run reads 0.60 epochs of its 825,241 "
        "training tokens. Baseline final loss: on training text 3.794, on the validation split 4.421 nats (mean of "
        "5 seeds); code 8782857, tree clean.")
    assert C.appendix_corpus_sentence(*args, lang="ko") == (
        "말뭉치(kjv): 유니그램(문맥 없음) 검증 손실 5.489 nats. 실행 하나는 학습 토큰 825,241개의 0.60 에폭을 "
        "읽습니다. 기준선의 최종 손실: 학습 텍스트에서 3.794, 검증 분할에서 4.421 nats(시드 5개의 평균). 코드 "
        "8782857, 작업 트리 깨끗함.")
    assert C.appendix_corpus_sentence(*args[:-1], True, lang="ko").endswith("작업 트리 변경 있음.")
    assert C.step_seconds_line({"baseline": 0.0991, "resformer": 0.1}, lang="en") == (
        "Seconds per training step (interleaved timing): baseline 0.099, resformer 0.100.")
    assert C.step_seconds_line({"baseline": 0.0991}, lang="ko") == "학습 스텝당 초(번갈아 잰 시간): baseline 0.099."


def test_the_per_seed_sentence_follows_the_verdict_and_the_paper():
    r = _v(-0.007, (-0.017, 0.003), "negligible", values=[-0.004, -0.016], sd=0.008, power=1.0, n=5)
    en = C.per_seed_sentence(r, -0.027, 160, BEFORE, lang="en")
    assert en.startswith("Per seed: -0.004, -0.016; sd 0.0080 nats; power 100% to detect the paper's -0.027 with "
                         "5 seeds. Against the strong baseline the change is too small to matter")
    assert en.endswith("Before the decay (step 160, not a declared test) the difference was "
                       "-0.014 [95% CI -0.024, -0.003].")
    ko = C.per_seed_sentence(r, -0.027, 160, BEFORE, lang="ko")
    assert ko.startswith("시드별: -0.004, -0.016; 표준편차 0.0080 nats; 시드 5개로 논문의 -0.027을 검출할 검정력 100%. "
                         "강한 기준선에 대한 변화: 무시할 만함")
    assert ko.endswith("감쇠 전(스텝 160, 선언된 검정이 아님)의 차이: -0.014 [95% 신뢰구간 -0.024, -0.003].")
    u = _v(-0.007, (-0.012, 0.003), "undecided", values=[0.0], sd=0.008, power=0.9, n=5)
    assert "구간의 아래 끝 -0.012는 논문의 -0.027보다 위에 있습니다: 이 말뭉치의 이 모델에서는 논문만큼 큰 이득이 (95 %) " \
           "배제되며" in C.per_seed_sentence(u, -0.027, 160, BEFORE, lang="ko")
    assert "The interval's lower end -0.012 lies above the paper's -0.027" in C.per_seed_sentence(u, -0.027, 160,
                                                                                                BEFORE, lang="en")
    reach = _v(-0.02, (-0.04, 0.003), "undecided", values=[0.0], sd=0.008, power=0.9, n=5)
    assert "구간이 논문의 -0.027까지 닿습니다: 그만큼 큰 이득이 배제되지 않습니다." in C.per_seed_sentence(
        reach, -0.027, 160, BEFORE, lang="ko")
    assert "The interval reaches the paper's -0.027: a gain that large is not excluded." in C.per_seed_sentence(
        reach, -0.027, 160, BEFORE, lang="en")


def test_the_weak_baseline_sentence():
    strong = _v(-0.007, (-0.017, 0.003), "negligible")
    inflates = _v(-0.0001, (-0.01, 0.01), "undecided", p_holm=0.984)
    assert C.weak_baseline_sentence("-0.007 [-0.017, +0.004]", (-0.017, 0.004), strong, inflates, lang="en") == (
        "Against the weak baseline ResFormer's change is -0.007 [-0.017, +0.004] (spanning 0); against the strong "
        "one -0.007 [-0.017, +0.003] (negligible). The inflation test reads -0.0001 nats (undecided, p after Holm "
        "0.984).")
    assert C.weak_baseline_sentence("-0.020 [-0.030, -0.010]", (-0.03, -0.01), strong, inflates, lang="ko") == (
        "약한 기준선에 대한 ResFormer의 변화는 -0.020 [-0.030, -0.010] (0보다 아래), 강한 기준선에 대해서는 "
        "-0.007 [-0.017, +0.003] (무시할 만함)입니다. 부풀림 검정은 -0.0001 nats(미정, Holm 보정 후 p 0.984)입니다.")


def test_the_svformer_sentence_and_reading_in_korean_follow_the_interval_and_verdict():
    v = _v(-0.014, (-0.026, -0.003), "undecided", p_holm=0.129)
    assert C.svformer_sentence(v.mean, v.ci, v, 5, lang="ko") == (
        "SVFormer는 손실을 **-0.014** nats 바꿉니다. 짝지은 시드 5개가 허용하는 범위 전체 [-0.026, -0.003]이 0보다 "
        "아래에 있습니다: 논문이 보고한 비용과 반대로 *더 낮은* 손실입니다 — 하지만 검정의 수를 감안하면 비용 주장은 "
        "미정입니다(*얼마나 확실한가?* 참고).")
    assert C.svformer_sentence(v.mean, v.ci, v, 5, lang="en").startswith(
        "SVFormer changes the loss by **-0.014** nats; the whole range the 5 paired seeds allow, [-0.026, -0.003], "
        "lies below 0")
    up = _v(0.02, (0.01, 0.03), "reproduced")
    assert C.svformer_sentence(up.mean, up.ci, up, 5, lang="ko").endswith(
        "0보다 위에 있습니다: 논문이 보고한 비용인 더 높은 손실입니다. 여기서 논문의 비용이 재현됩니다.")
    assert C.svformer_reading(v, lang="ko") == (
        "보정하지 않은 95 % 구간은 0보다 아래(비용이 아니라 이득)에 있지만, 검정 묶음 안에서 Holm 보정을 하면(p 0.129) 검정은 "
        "미정입니다: 이 말뭉치의 이 모델에서 논문의 비용은 재현되지도 반박되지도 않습니다.")
    assert C.svformer_reading(v, lang="en").startswith("The unadjusted 95 % interval lies below 0 (a gain, not a cost)")
    both = _v(0.001, (-0.01, 0.012), "undecided")
    assert C.svformer_reading(both, lang="ko") == (
        "비용은 보이지 않았고, 비용이 없다는 것도 보이지 않았습니다: 구간이 0을 포함합니다. +0.012 nats를 넘는 비용은 "
        "(95 %) 배제되고, -0.010을 넘는 이득도 마찬가지입니다.")
    assert C.svformer_reading(_v(0.02, (0.01, 0.03), "reproduced"), lang="ko") == (
        "SVFormer는 논문이 보고한 대로 여기서 손실 비용을 치릅니다.")
    assert C.svformer_reading(_v(-0.02, (-0.03, -0.01), "contradicted"), lang="en") == (
        "SVFormer is better than the baseline here: the opposite of the paper.")
    assert C.before_decay_line(160, BEFORE, lang="ko") == (
        "감쇠 전(스텝 160, 선언된 검정이 아님): -0.014 [95% 신뢰구간 -0.024, -0.003].")
    assert C.before_decay_line(160, BEFORE, lang="en") == (
        "Before the decay (step 160, not a declared test): -0.014 [95% CI -0.024, -0.003].")


def test_the_entropy_lambda_and_slope_lines():
    assert C.entropy_lead("recall", 24, 2.798, lang="ko") == "**회상 과제** (T = 24): 균등 인과 엔트로피 2.798, log T = 3.178."
    assert C.entropy_lead("corpus", 64, 3.754, lang="en") == (
        "**corpus** (T = 64): uniform-causal entropy 3.754, log T = 4.159.")
    assert C.entropy_rows_table([], lang="ko").splitlines()[0] == "| 층 | baseline | − 균등 | resformer | − 균등 |"
    assert C.entropy_below_line([], [], lang="en") == (
        "Baseline: no layer is below the uniform-causal entropy: there is no attention concentration to relieve "
        "ResFormer's layers below the uniform-causal entropy: none.")
    assert C.entropy_below_line([0, 1], [1], lang="ko") == (
        "기준선: 균등 인과 엔트로피보다 낮은 층: [0, 1]. 균등 인과 엔트로피보다 낮은 ResFormer의 층: [1].")
    assert C.entropy_below_line([], [], lang="ko") == (
        "기준선: 균등 인과 엔트로피보다 낮은 층이 없습니다: 완화할 어텐션 집중이 없습니다. 균등 인과 엔트로피보다 낮은 "
        "ResFormer의 층: 없음.")
    assert C.metrics_table([], lang="ko").splitlines()[0] == "| 지표 | 변형 | 층별 (또는 깊이별) |"
    tab, line = C.lambda_profile_table([0.7321], [0.05], [1], lang="ko")
    assert tab.splitlines()[0] == "|  | 층 1 |" and tab.splitlines()[2] == "| λ1 (시드 평균) | 0.732 |"
    assert line == "모든 시드가 λ2(자기 값)를 0.1 아래로 낮춘 층(SVFormer처럼 V_1만 읽음): [1]."
    tab, line = C.lambda_profile_table([0.7321], [0.5], [], lang="en")
    assert tab.splitlines()[3] == "| λ2 (mean of seeds) | 0.500 |"
    assert line.endswith("like SVFormer: none.")
    assert C.slopes_sentence([0.0004, -0.0137], 0, 35, 0.1, lang="en") == (
        "Per-seed slopes: +0.0004, -0.0137; λ1 had stopped moving before the decay in 0 of 35 (seed, layer) "
        "trajectories (change in the window ≤ 0.1 × the whole change).")
    assert C.slopes_sentence([0.0004, -0.0137], 0, 35, 0.1, lang="ko") == (
        "시드별 기울기: +0.0004, -0.0137. λ1은 (시드, 층) 궤적 35개 중 0개에서 감쇠 전에 움직임을 멈췄습니다"
        "(창 안의 변화 ≤ 전체 변화의 0.1배).")


def test_the_recall_lines():
    learned = {"baseline": (5, 5), "resformer": (4, 5)}
    assert C.recall_sentence(-1.258, learned, 1200, lang="ko") == (
        "모든 시드가 1200 스텝 안에 조회를 배운 것은 아닙니다(baseline 5개 중 5개, resformer 5개 중 4개). 기준선은 조회 "
        "없는 기준값에서 -1.258 nats 떨어져 끝나므로, 아래의 해석은 조회를 배운 시드에 대해서만 검색에 관한 것입니다.")
    assert C.recall_sentence(-1.258, {"baseline": (5, 5)}, 1200, lang="ko") == (
        "모든 시드가 1200 스텝 안에 조회를 배웠습니다(baseline 5개 중 5개): 기준선은 조회 없는 기준값보다 **1.258** nats "
        "낮게 끝나므로, 아래 내용은 검색에 관한 것입니다.")
    assert C.recall_sentence(-1.258, {"baseline": (5, 5)}, 1200, lang="en").startswith(
        "Every seed learned lookup within 1200 steps (baseline 5 of 5)")
    v = _v(-13.0, (-64.0, 39.0), "undecided", margin=None)
    assert C.steps_sentence(-13.0, (-64.0, 39.0), v, lang="ko").startswith(
        "ResFormer는 기준선보다 평균 13 스텝 빨리 조회를 배웁니다(차이의 구간 [-64, +39] 스텝은 0의 양쪽에 걸쳐 "
        "있습니다: ")
    assert C.steps_sentence(0.2, (-64.0, 39.0), v, lang="ko").startswith("ResFormer는 평균적으로 기준선과 같은 스텝에서")
    assert C.steps_sentence(20.0, (5.0, 39.0), v, lang="ko").startswith("ResFormer는 기준선보다 평균 20 스텝 늦게")
    assert C.steps_sentence(-13.0, (-64.0, 39.0), v, lang="en").startswith(
        "ResFormer learns lookup 13 steps sooner than the baseline on average (the difference's interval [-64, +39] "
        "steps lies on both sides of 0")
    assert C.pilot_line(0.003, [100, 101], [472.0, 1200.0], lang="en") == (
        "held-out pilot, baseline at lr 0.003: steps to learn on seeds [100, 101]: 472, 1200")
    assert C.pilot_line(0.003, [100, 101], [472.0, 1200.0], lang="ko") == (
        "홀드아웃 예비 실행, baseline, lr 0.003: 시드 [100, 101]에서 배우기까지 스텝: 472, 1200")
    task = {"n_pairs": 4, "key_len": 1}
    assert C.tuning_sentence(0.001, 0.001, task, lang="en") == (
        "The declared rule chose lr 0.001; the recall runs train at 0.001. Task: n_pairs 4, key_len 1.")
    assert C.tuning_sentence(0.001, 0.003, task, lang="ko") == (
        "선언된 규칙이 고른 lr은 0.001입니다. 회상 실행은 lr 0.003으로 학습합니다. 과제: n_pairs 4, key_len 1.")
    rows = [["no-lookup reference", "1.258", "0.338", "0.34", ""], ["baseline (mean of seeds)", "0.000", "1.000",
                                                                    "1.00", "238"]]
    tab, note = C.recall_table(rows, 0.5, 1.258, 1200, lang="ko")
    assert tab.splitlines()[::2] == ["|  | 손실 (nats) | 정확도 | 쿼리별 정확도 | 배우기까지 스텝, 시드별 |",
                                     "| 조회 없는 기준값 | 1.258 | 0.338 | 0.34 |  |"]
    assert tab.splitlines()[3] == "| baseline (시드 평균) | 0.000 | 1.000 | 1.00 | 238 |"
    assert note == "배우기까지 스텝: 손실이 처음으로 기준값의 0.5배(0.629 nats)에 이를 때까지(끝내 이르지 못하면 1200)."
    tab, note = C.recall_table(rows, 0.5, 1.258, 1200, lang="en")
    assert tab.splitlines()[2] == "| no-lookup reference | 1.258 | 0.338 | 0.34 |  |"
    assert note == "Steps to learn: until the loss first reaches 0.5 × the reference (0.629 nats; never = 1200)."
    flat = _v(-1.258, (-1.258, -1.258), "reproduced")
    assert C.lookup_margin_sentence(flat, lang="ko") == (
        "기준선의 최종 손실은 조회 없는 기준값에서 -1.258 [-1.258, -1.258] nats 떨어져 있습니다(재현됨): 모든 시드의 최종 "
        "손실이 같은 값으로 반올림되므로 구간에 보이는 폭이 없습니다.")
    wide = _v(-1.2, (-1.3, -1.1), "reproduced")
    assert C.lookup_margin_sentence(wide, lang="en") == (
        "The baseline's final loss lies -1.200 [-1.300, -1.100] nats from the no-lookup reference (reproduced).")


def test_the_scale_sentences():
    r = _v(-0.0066, (-0.0165, 0.0034), sd=0.008, power=1.0, n=5)
    paper = {"params": 82e6, "tokens": 10_000 * 2 ** 21}
    ours, noise = C.scale_sentences(655360, 491520, paper, -0.027, 0.0036, r, lang="en")
    assert ours == ("Ours: 655,360 parameters, 491,520 training tokens; paper: 82 M parameters, 2.1e+10 tokens → "
                    "125× the parameters, 42,667× the tokens.")
    assert noise.endswith("paper (82M) -0.027; power to detect the paper's gain with 5 seeds: 100%.")
    ours, noise = C.scale_sentences(655360, 491520, paper, -0.027, 0.0036, r, lang="ko")
    assert ours == ("우리: 파라미터 655,360개, 학습 토큰 491,520개. 논문: 파라미터 82 M, 토큰 2.1e+10개 → 파라미터 125배, "
                    "토큰 42,667배.")
    assert noise == ("우리 기준선의 최종 손실의 시드 간 표준편차: 0.0036 nats. 짝지은 ResFormer 차이의 표준편차: 0.0080. "
                     "ResFormer − baseline, 최종: 우리 -0.0066 nats [95% 신뢰구간 -0.0165, +0.0034], 논문(82M) -0.027. "
                     "시드 5개로 논문의 이득을 검출할 검정력: 100%.")


def test_the_setup_line_in_both_languages():
    model = {"n_layers": 8, "d_model": 64, "stream_start": "rmsnorm", "qk_norm": True}
    train = {"steps": 240, "batch_size": 32, "eval_every": 20}
    assert C.setup_line("corpus", model, train, 655360, ["baseline", "resformer"], [0, 1], lang="en") == (
        "corpus: 8 layers × 64 wide, 655,360 parameters; 240 steps of 32 sequences, evaluated every 20 steps; "
        "variants baseline, resformer; seeds [0, 1]; the baseline's stream starts at: rmsnorm; QK-norm: True")
    assert C.setup_line("recall", model, train, 655360, ["baseline"], [0], lang="ko") == (
        "회상 과제: 8층 × 폭 64, 파라미터 655,360개; 시퀀스 32개 배치로 240 스텝, 20 스텝마다 평가; 변형 baseline; "
        "시드 [0]; 기준선의 스트림 시작: rmsnorm; QK-norm: True")


def test_the_appendix_curves_speak_korean_with_every_glyph(course_style, caplog):
    import logging

    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    import test_korean_font as font
    from vrs_edu.chapters.ch03_value_residual import figures as F
    from vrs_edu.viz.plots import apply_course_style

    apply_course_style("ko")
    runs = [{"history": {"eval_steps": [10, 20], "val_loss": [5.0, 4.5]}} for _ in range(2)]
    comp = {"resformer": {"paired_curve": {"steps": [10, 20], "mean": [0.1, -0.01], "ci_low": [0.0, -0.02],
                                           "ci_high": [0.2, 0.0]}}}
    result = {"corpus": {"corpus": "kjv", "runs": {"baseline": runs, "resformer": runs}, "comparison": comp},
              "recall": {"runs": {"baseline": runs}, "no_lookup_reference": {"loss": 4.8}, "comparison": comp}}
    with caplog.at_level(logging.WARNING, logger="matplotlib"):
        figs = [F.plot_loss_curves(result, lang="ko"), F.plot_paired_curves(result, lang="ko")]
        for fig in figs:
            font._draw_strictly(fig)
    assert not [r.getMessage() for r in caplog.records]
    texts = " | ".join(t.get_text() for fig in figs for t in fig.findobj(Text))
    for label in ("King James Bible, 단어 토큰", "연관 회상 (답만)", "스텝", "검증 손실 (nats)", "조회 없는 기준값",
                  "기준선 대비 Δ 검증 손실 (nats)"):
        assert label in texts, (label, texts)
    assert not [w for w in ("step", "loss", "reference", "recall", "tokens") if w in texts]
    plt.close("all")
    apply_course_style("en")
    texts = " | ".join(t.get_text() for t in F.plot_loss_curves(result, lang="en").findobj(Text))
    assert "King James Bible, word tokens" in texts and "no-lookup reference" in texts
    plt.close("all")


def test_every_quantity_label_the_appendix_shows_has_korean():
    """The labels the notebook's code passes to show() (the same code in both editions) are translated; an unknown
    one raises in Korean instead of printing English."""
    import re
    from pathlib import Path
    source = (Path(__file__).resolve().parents[1] / "notebooks" / "03a_value_residual_evidence.py").read_text()
    labels = re.findall(r'^show\("\w+", "([^"]+)"\)', source, re.M)
    assert len(labels) == 8
    assert [C.quantity_label(x, lang="en") for x in labels] == labels
    assert C.quantity_label("primary: ResFormer − baseline, final validation loss", lang="ko") == \
        "primary: ResFormer − baseline, 최종 검증 손실"
    assert all(C.quantity_label(x, lang="ko") != x for x in labels)
    import pytest
    with pytest.raises(KeyError, match="has no Korean"):
        C.quantity_label("a new label", lang="ko")
