"""Chapter 08's computed outputs that were still English in the Korean edition: the sink and mixing sentences, the
description against the pattern-swap cost, the half-text checks, the three estimators' reading, the toys' comparison,
the verdict tables (with their reasons), the substitutions' names, the widget's "(the default)" and the figures'
labels. Exact Korean for known inputs, the words following the numbers' signs and sizes, and the English unchanged."""
from __future__ import annotations

import math
import re
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from vrs_edu.chapters.ch08_real_decoder import norms  # noqa: E402
from vrs_edu.chapters.ch08_real_decoder.norms_prose import (gap_answer, mixing_numbers, mixing_sentence,  # noqa: E402
                                                            sink_sentence, swap_cost_sentence)
from vrs_edu.chapters.ch08_real_decoder.prose import (condition_name, estimator_table,  # noqa: E402
                                                      substitutions_table, where_name)
from vrs_edu.chapters.ch08_real_decoder.readout import (agreed_sentence, half_calibration_sentence,  # noqa: E402
                                                        toy_comparison, verdict_rows)
from vrs_edu.i18n.evidence import reason  # noqa: E402
from vrs_edu.lab.experiments import load_results  # noqa: E402
from vrs_edu.lab.results import interval  # noqa: E402
from vrs_edu.viz.controls import change_from_default  # noqa: E402

from toy_comparison_inputs import toy_comparison_inputs  # noqa: E402

# Latin words of three letters or more that may stand in a Korean cell: units and names the course keeps
KEPT = {"nats", "norm", "Holm", "SVFormer", "float", "MiB", "W_Q", "W_K", "W_V"}


def _english_words(text: str) -> list[str]:
    """The Latin words left in ``text`` once code (`...`) and the kept names are taken out."""
    text = re.sub(r"`[^`]*`", "", text)
    return [w for w in re.findall(r"[A-Za-z][A-Za-z_]{2,}", text) if w not in KEPT]


# -- the sink -------------------------------------------------------------------------------------------------------

SINK = {"n_layers": 6, "judged": [2, 3, 4, 5],
        "verdicts": {2: "reproduced", 3: "reproduced", 4: "reproduced", 5: "contradicted"},
        "out": {0: "negligible", 1: "reproduced"}, "weight": 0.6, "norm": 0.36,
        "weight_share": [0.1, 0.25, 0.6, 0.6, 0.6, 0.6]}


def test_sink_sentence_korean_counts_and_names_the_other_layers():
    assert sink_sentence(SINK, 0.3, lang="ko") == (
        "첫 토큰은 **6개 층 가운데 4개 층**에서 싱크입니다(가중치 몫 0.3 초과). 그 가운데 **3개 층**에서 노름 몫이 "
        "가중치 몫보다 작습니다(*재현됨*). 그 4개 층에 걸쳐 첫 토큰은 가중치의 **60%**를 받지만 층이 옮기는 것의 "
        "**36%**만 차지합니다. 판정된 나머지 층: 층 5에서 반박됨. 층 0, 1에는 이 규칙에 따른 싱크가 없으므로 "
        "*적용 범위 밖*입니다. 그래도 판정한다면 층 0에서 무시할 만함(가중치 몫 0.10), 층 1에서 재현됨(가중치 몫 "
        "0.25)입니다.")


def test_sink_sentence_korean_follows_the_shares_and_the_count():
    every = {**SINK, "verdicts": dict.fromkeys([2, 3, 4, 5], "reproduced"), "out": {}, "norm": 0.7}
    text = sink_sentence(every, 0.3, lang="ko")
    assert "그 가운데 **4개 층 모두**에서" in text
    assert "가중치의 **60%**를 받고 층이 옮기는 것의 **70%**를 차지합니다." in text
    assert "판정된 나머지 층" not in text and "적용 범위 밖" not in text
    none = sink_sentence({**SINK, "judged": [], "out": {0: "negligible", 1: None}}, 0.3, lang="ko")
    assert none.startswith("선언된 규칙(가중치 몫 0.3 초과)으로는 첫 토큰 싱크가 있는 층이 없으므로, 싱크 검정은 "
                           "하나도 판정하지 않습니다. 층 0, 1에는")
    assert "층 0에서 무시할 만함(가중치 몫 0.10), 층 1에서 판정하지 않음(가중치 몫 0.25)입니다." in none


def test_sink_sentence_english_unchanged():
    assert sink_sentence(SINK, 0.3, lang="en") == (
        "The first token is a sink (weight share above 0.3) in **4 of the 6 layers**; in **3** of them its norm "
        "share lies below its weight share (*reproduced*). Over those 4 layers it takes **60%** of the weight but "
        "only **36%** of what the layer moves; the other judged layers: contradicted at layer 5. Layers 0 and 1 "
        "have no sink by that rule and are *out of regime*; judged anyway, they would be negligible at layer 0 "
        "(weight share 0.10), reproduced at layer 1 (weight share 0.25).")


# -- the mixing ratio -----------------------------------------------------------------------------------------------

def _mixing(depth_mean, attention=0.82, verdict="재현됨"):
    th = {t: {"r": r, "weights": w, "attention": attention, "verdict": verdict}
          for t, r, w in (("early", 0.19, 0.94), ("middle", 0.14, 0.92), ("late", 0.15, 0.93))}
    depth = SimpleNamespace(mean=depth_mean, ci=(depth_mean - 0.001, depth_mean + 0.001), verdict="reproduced",
                            would_be=None)
    return {"thirds": th, "depth": depth}


def test_mixing_sentence_korean():
    assert mixing_sentence(_mixing(0.0403), lang="ko") == (
        "V, O와 잔차까지 세면 토큰은 새 상태의 **19%, 14%, 15%**를 문맥에서 가져옵니다(초기, 중기, 후기 3분의 1). "
        "가중치만으로는(1 − α_ii) **94%, 92%, 93%**입니다. 잔차 없이 어텐션이 옮기는 것의 노름만으로 보면 82%, 82%, "
        "82%입니다. 값의 노름이 첫 단계를 낮추고, 나머지는 잔차가 낮춥니다. 검정 *혼합 비율은 가중치의 읽기보다 "
        "낮다*: 초기 *재현됨*, 중기 *재현됨*, 후기 *재현됨*. 초기 3분의 1은 후기 3분의 1보다 문맥을 비율로 4포인트 "
        "더 많이 섞습니다(+0.040 [+0.039, +0.041], *재현됨*).")


def test_mixing_sentence_korean_follows_the_sign_and_size():
    less = mixing_sentence(_mixing(-0.004, attention=math.nan), lang="ko")
    assert "문맥을 비율로 1포인트 미만만큼 더 적게 섞습니다(-0.004 [-0.005, -0.003], *재현됨*)." in less
    assert "노름만으로 보면" not in less             # a result made before attention alone was read
    more = mixing_sentence(_mixing(-0.12), lang="ko")
    assert "비율로 12포인트 더 적게" in more


def test_mixing_numbers_give_the_verdicts_in_the_asked_language():
    r = load_results("decoder-norms")
    rows = norms.verdicts(r)
    ko, en = mixing_numbers(r, rows, lang="ko"), mixing_numbers(r, rows, lang="en")
    assert {t["verdict"] for t in ko["thirds"].values()} == {"재현됨"}
    assert {t["verdict"] for t in en["thirds"].values()} == {"reproduced"}
    text = mixing_sentence(en, lang="en")
    assert "The test *the mixing ratio lies below the weights' reading*: early *reproduced*" in text
    assert _english_words(mixing_sentence(ko, lang="ko")) == []


# -- the description against the pattern-swap cost ------------------------------------------------------------------

SWAP = {"spearman": {"mixing": 0.14, "weight_mixing": 0.04, "norm_share": -0.53, "weight_share": -0.40,
                     "mixing_gap": -0.05, "sink_gap": -0.35}, "sequences": 4, "layers": 30}


def test_swap_cost_sentence_korean():
    assert swap_cost_sentence(SWAP, lang="ko") == (
        "**검정이 아니라 서술입니다.** 간극 자체에 물으면: 패턴 교환 비용과, 가중치가 혼합을 부풀려 말하는 "
        "정도(1 − α_ii 빼기 혼합 비율)의 상관은 ρ = -0.05, 싱크의 간극(가중치 몫 빼기 노름 몫)과의 상관은 ρ = -0.35"
        "입니다. 일부만 그렇습니다. 싱크의 간극이 큰 층일수록 다른 시퀀스의 패턴에 치르는 비용이 작습니다; 혼합의 "
        "간극은 관련이 없습니다. 30개 층에 걸쳐 패턴 교환 비용(질문 1의 층 스캔, 시퀀스 4개)의 스피어만 ρ는 혼합 "
        "비율과 +0.14, 1 − α_ii와 +0.04이고, 첫 토큰의 노름 몫과 -0.53, 가중치 몫과 -0.40입니다. 비용을 더 가깝게 "
        "따르는 읽기: 두 쌍 모두 노름 기반(더 큰 |ρ| 기준). 한 모델의 30개 층은 독립된 반복이 아니고 각 비용은 "
        "시퀀스 4개에 기대므로, 이것은 패턴을 서술할 뿐 아무것도 판정하지 않습니다.")


def test_swap_cost_sentence_korean_names_each_pair_where_they_differ():
    mixed = swap_cost_sentence({**SWAP, "spearman": {**SWAP["spearman"], "weight_mixing": -0.30}}, lang="ko")
    assert "비용을 더 가깝게 따르는 읽기: 혼합에서는 가중치 기반, 싱크에서는 노름 기반(더 큰 |ρ| 기준)." in mixed
    tie = swap_cost_sentence({**SWAP, "spearman": {**SWAP["spearman"], "weight_mixing": -0.14}}, lang="ko")
    assert "혼합에서는 어느 쪽도 아님, 싱크에서는 노름 기반" in tie
    assert swap_cost_sentence(None, lang="ko") == (
        "**검정이 아니라 서술입니다.** 저장된 실행에는 패턴 교환 비용과의 비교가 없습니다. "
        "`vrs-edu reproduce decoder-norms`가 읽을 `real-decoder` 결과를 찾지 못했습니다.")
    assert swap_cost_sentence(SWAP, lang="en").startswith(
        "**A description, not a test.** Asked of the gaps themselves: the pattern-swap cost and how much the "
        "weights overstate the mixing (1 − α_ii minus the mixing ratio) correlate at ρ = -0.05, and the sink "
        "(weight share minus norm share) at ρ = -0.35: only in part: where the sink's gap is larger a layer pays "
        "less for another sequence's pattern; the mixing's gap shows no link. Across the 30 layers,")


@pytest.mark.parametrize("mixing_gap, sink_gap, said", [
    (-0.4, -0.5, "그렇습니다. 가중치가 더 크게 잘못 말하는 층일수록 다른 시퀀스의 패턴에 치르는 비용이 작습니다. "),
    (0.4, 0.5, "반대입니다. 가중치가 더 크게 잘못 말하는 층일수록 다른 시퀀스의 패턴에 치르는 비용이 큽니다. "),
    (0.35, 0.1, "일부만 그렇습니다. 혼합의 간극이 큰 층일수록 다른 시퀀스의 패턴에 치르는 비용이 큽니다; 싱크의 "
                "간극은 관련이 없습니다. "),
    (0.1, -0.1, "아닙니다. 어느 간극도 |ρ| = 0.3에 이르지 않으므로, 층의 가중치가 얼마나 잘못 말하는지로는 그 층에 새 "
                "패턴이 얼마나 필요한지 알 수 없습니다. ")])
def test_gap_answer_korean_follows_the_signs(mixing_gap, sink_gap, said):
    text = gap_answer({"mixing_gap": mixing_gap, "sink_gap": sink_gap}, lang="ko")
    assert text.endswith(said)
    assert f"ρ = {mixing_gap:+.2f}, 싱크의 간극" in text
    assert gap_answer({"mixing": 0.1}, lang="ko") == ""


# -- the half-text checks and the three estimators ------------------------------------------------------------------

def _chk(mean, ci, verdict, would_be=None):
    return SimpleNamespace(mean=mean, ci=ci, verdict=verdict, would_be=would_be, interval=lambda: interval(mean, ci))


def test_half_calibration_sentence_korean():
    checks = {"half_calibration_v_minus_q": _chk(-0.0004, (-0.027, 0.026), "reproduced"),
              "half_calibration_v_minus_k": _chk(-0.069, (-0.11, -0.028), "contradicted"),
              "half_calibration_v": _chk(0.015, (-0.012, 0.042), "undecided")}
    assert half_calibration_sentence(checks, 0.025, lang="ko") == (
        "캘리브레이션 텍스트를 절반으로 줄이면 대비가 시퀀스마다 이만큼 움직입니다(절반 텍스트 − 전체 텍스트, 마지막 "
        "3분의 1): V − Q -0.000 [-0.027, +0.026] (재현됨); V − K -0.069 [-0.110, -0.028] (반박됨); V 자체의 비용 "
        "+0.015 [-0.012, +0.042] (미정) nats. 기준은 ±0.025 범위입니다(동등성 검정). 점검이 성립하지 않는 곳(V − K, "
        "V 자체의 비용)에서는 그 대비의 일부가 여전히 추정에서 나올 수 있으므로, 그 점검이 필요한 주장은 적용 범위 "
        "밖입니다(가상 판정을 옆에 출력합니다).")
    english = half_calibration_sentence(checks, 0.025, lang="en")
    assert "V − Q -0.000 [-0.027, +0.026] (reproduced); V − K -0.069 [-0.110, -0.028] (contradicted)" in english
    ok = {n: _chk(0.001, (-0.01, 0.012), "reproduced") for n in checks}
    held = half_calibration_sentence(ok, 0.025, lang="ko")
    assert held.endswith(" 모든 점검이 성립합니다. 텍스트를 두 배로 늘려 만든 표도 대비를 그 범위보다 더 움직이지 "
                         "않을 것이므로, 대비는 추정이 아니라 투영에서 나옵니다.")
    assert "적용 범위 밖" not in held


def test_agreed_sentence_korean_names_each_estimator_only_where_they_differ():
    each = lambda *w: dict(zip(("a", "b", "c"), w))  # noqa: E731
    readings = {"late_v_beats_q": {"verdict": "contradicted", "would_be": None,
                                   "each": each("contradicted", "contradicted", "contradicted")},
                "late_v_beats_k": {"verdict": "out of regime", "would_be": "contradicted",
                                   "each": each("out of regime", "out of regime", "contradicted")},
                "late_v_within_tolerance": {"verdict": "undecided", "would_be": None,
                                            "each": each("reproduced", "reproduced", "undecided")}}
    assert agreed_sentence(readings, lang="ko") == (
        "세 추정량이 모두 일치할 때만 셉니다. 'V는 Q보다 문맥 없는 대체물을 잘 견딘다': **반박됨** — 세 추정량이 "
        "모두 일치합니다; 'V는 K보다 문맥 없는 대체물을 잘 견딘다': **적용 범위 밖 (판정한다면: 반박됨)** — "
        "추정량마다 다릅니다(평균 표: 적용 범위 밖, 수축 표: 적용 범위 밖, W·norm(x0): 반박됨); 'V의 문맥 없는 "
        "대체물의 비용은 허용 범위 안에 든다': **미정** — 추정량마다 다릅니다(평균 표: 재현됨, 수축 표: 재현됨, "
        "W·norm(x0): 미정).")
    assert "'V tolerates its context-free substitute better than Q': **contradicted** — all three estimators " \
           "agree;" in agreed_sentence(readings, lang="en")


# -- the toys -------------------------------------------------------------------------------------------------------

def test_toy_comparison_korean_keeps_the_numbers_and_answers():
    result, toys = toy_comparison_inputs()
    ko, en = toy_comparison(result, toys, lang="ko"), toy_comparison(result, toys, lang="en")
    assert [r["agree"] for r in en] == ["yes", "no", "no", "another question", "another question"]
    assert [r["agree"] for r in ko] == ["예", "아니요", "아니요", "다른 질문", "다른 질문"]
    assert [r["chapter"] for r in ko] == [r["chapter"] for r in en]
    assert ko[0] == {"finding": "어텐션이 집중됨 (엔트로피가 균등 인과 어텐션의 것보다 낮음)", "chapter": "03",
                     "toy": "기준선, 균등 대비 +0.090 nats, 반박됨",
                     "decoder": "층 2개 가운데 1개가 균등보다 낮음; 평균 -0.75 nats", "agree": "예"}
    assert ko[1]["toy"] == "x0-R² 0.85 (기준선들의 x0 층)" and ko[1]["decoder"] == "x0-R² 0.30 (마지막 3분의 1의 입력)"
    assert ko[2]["toy"] == "V − Q x0 비중 +0.06, 적용 범위 밖; V − K x0 비중 +0.19, 무시할 만함"
    assert ko[2]["decoder"] == "표의 비용 Q +0.40, K +0.70, V +2.00 nats: 자기 표를 가장 잘 견디는 것은 Q"
    assert ko[3]["toy"] == "그렇게 학습함: 기준선 대비 -0.016 nats, 재현됨"
    assert ko[4]["decoder"] == "학습 후에 부과함: +6.00 nats"
    for r in ko:
        assert _english_words(" ".join(str(v) for k, v in r.items() if k != "chapter")) == []
    missing = toy_comparison(result, {}, lang="ko")
    assert missing[1]["toy"] == "아직 만들지 않음: `vrs-edu reproduce bank-of-values --corpus kjv`"
    assert [r["agree"] for r in missing] == ["해당 없음", "해당 없음", "해당 없음", "다른 질문", "다른 질문"]
    assert toy_comparison(result, {"bank-of-values": {"verdicts": []}}, lang="ko")[3]["toy"] == \
        "저장된 bank-of-values 결과에 없음"


# -- the verdict tables ---------------------------------------------------------------------------------------------

def _row(name, kind, family, form, direction, verdict, reason=None, would_be=None, p=math.nan):
    test = SimpleNamespace(name=name, kind=kind, family=family, form=form, direction=direction, threshold=0.0,
                           margin=0.05)
    return SimpleNamespace(test=test, p_holm=p, verdict=verdict, would_be=would_be, reason=reason, mean=1.98154,
                           ci=(1.87301, 2.09012))


def test_verdict_rows_korean():
    out = _row("late_v_table_within_tolerance", "claim", "q2", "equivalence", "negative", "out of regime",
               "precondition not met: check half_calibration_v is undecided", "contradicted")
    judged = _row("mixing_early_above_late", "claim", "depth", "sign", "positive", "reproduced", p=6.6e-87)
    check = _row("half_calibration_v_minus_k", "check", "check: half V−K", "equivalence", "negative",
                 "contradicted", p=0.037)
    assert verdict_rows([out, judged, check], lang="ko") == [
        ["`late_v_table_within_tolerance`", "주장 / 질문 2", "+1.9815 [+1.8730, +2.0901]", "±0.05 이내", "–",
         "적용 범위 밖 (판정한다면: 반박됨) (전제 조건 불성립: 점검 `half_calibration_v`는 미정)"],
        ["`mixing_early_above_late`", "주장 / 깊이", "+1.9815 [+1.8730, +2.0901]", "> 0", "6.6e-87", "재현됨"],
        ["`half_calibration_v_minus_k`", "점검 / 점검: 절반 텍스트 V−K", "+1.9815 [+1.8730, +2.0901]",
         "±0.05 이내", "0.037", "반박됨"]]
    assert verdict_rows([out], lang="en") == [
        ["late v table within tolerance", "claim / q2", "+1.9815 [+1.8730, +2.0901]", "within ±0.05", "–",
         "out of regime (would be: contradicted) (precondition not met: check half_calibration_v is undecided)"]]


def test_verdict_rows_korean_of_the_stored_results_hold_no_english_word():
    from vrs_edu.chapters.ch08_real_decoder.recipe import verdicts

    for rows in (verdicts(load_results("real-decoder")), norms.verdicts(load_results("decoder-norms"))):
        for cells in verdict_rows(rows, lang="ko"):
            assert _english_words(" ".join(cells)) == [], cells


@pytest.mark.parametrize("text, said", [
    ("precondition not met: check half_calibration_v_minus_k is contradicted",
     "전제 조건 불성립: 점검 `half_calibration_v_minus_k`는 반박됨"),
    ("precondition not met: check probe_l is undecided", "전제 조건 불성립: 점검 `probe_l`은 미정"),
    ("precondition not met: sink_at_0 0.026 (needs > 0.3): fails",
     "전제 조건 불성립: `sink_at_0` 0.026 (필요: > 0.3): 불성립"),
    ("precondition not met: epochs_read 6.120 (needs < 1): fails; check c_0 is negligible",
     "전제 조건 불성립: `epochs_read` 6.120 (필요: < 1): 불성립; 점검 `c_0`은 무시할 만함"),
    ("precondition not met: coverage 0.900 (needs > 0.95): fails (it guards a reproduced reading)",
     "전제 조건 불성립: `coverage` 0.900 (필요: > 0.95): 불성립 (재현됨 판정에 필요한 조건)")])
def test_a_reason_in_korean_names_its_tests_as_code(text, said):
    # the appendices' translator, with the names as code for chapter 08's Markdown table
    assert reason(text, "ko", code=True) == said
    assert reason(text, "en", code=True) == text


# -- names, the widget's change and the figures ---------------------------------------------------------------------

def test_substitutions_and_estimators_named_in_korean():
    ok = [{"condition": "V table", "where": "layer 10", "bytes_saved": 384, "mean": -0.0104, "ci": [-0.039, 0.019]},
          {"condition": "K table (shrunk)", "where": "late", "bytes_saved": 3840, "mean": 0.02, "ci": [0.0, 0.04]}]
    cols, rows = substitutions_table(ok, lang="ko")
    assert rows == [["V 표", "층 10", "384", "-0.010 [-0.039, +0.019]"],
                    ["K 표 (수축)", "후기 3분의 1", "3,840", "+0.020 [+0.000, +0.040]"]]
    assert substitutions_table(ok, lang="en")[1][0][:2] == ["V table", "layer 10"]
    assert condition_name("V := V_1", "ko") == "V := V_1" and condition_name("shared V", "ko") == "공유 V"
    assert condition_name("shared V", "en") == "shared V" and where_name("late", "en") == "late"
    assert where_name("middle", "ko") == "중기 3분의 1"
    _, est = estimator_table([["mean table", "a"], ["shrunk table", "b"], ["W·norm(x0)", "c"]], lang="ko")
    assert [r[0] for r in est] == ["평균 표", "수축 표", "W·norm(x0)"]


def test_checks_sentence_korean_names_the_checks_as_code():
    from vrs_edu.chapters.ch08_real_decoder.prose import checks_sentence

    text = checks_sentence(["half_calibration_v_minus_k", "half_calibration_v"], 4, "float32", 1116, lang="ko")
    assert text.startswith("재현되지 않은 점검: `half_calibration_v_minus_k`, `half_calibration_v`. 따라서 주장 "
                           "4개가 적용 범위 밖입니다")
    assert "18.6분이 걸려, 코어 2개에 대한 레시피의 20분 예산을 넘지 않았습니다." in text
    assert checks_sentence(["c"], 1, "float32", 1116, lang="en").startswith("Checks not reproduced: c; so 1 claims")


def test_change_from_default_korean():
    assert change_from_default(0.746, 0.746, ".3f", " nats", "ko") == "0.746 nats (기본값)"
    assert change_from_default(0.5, 0.75, ".2f", " nats", "ko") == "0.50 nats (기본값 0.75에서 -0.25)"
    assert change_from_default(1.106, 1.106) == "1.106 (the default)"


def test_the_figures_label_their_conditions_and_thirds_in_korean(monkeypatch, recwarn):
    from vrs_edu.chapters.ch08_real_decoder.figures import plot_layer_scan, plot_price_list, plot_thirds
    from vrs_edu.viz.plots import apply_course_style

    result = load_results("real-decoder")
    monkeypatch.setenv("VRS_EDU_LANG", "ko")
    apply_course_style("ko")
    fig = plot_thirds(result)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Q 표", "K 표", "V 표"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["초기\n(층 0-9)", "중기\n(층 10-19)", "후기\n(층 20-29)"]
    scan = plot_layer_scan(result, ("pattern swap", "V table (shrunk)", "V := W_V·norm(x0)"))
    assert [t.get_text() for t in scan.axes[0].get_legend().get_texts()] == ["패턴 교환", "V 표 (수축)",
                                                                             "V := W_V·norm(x0)"]
    price = plot_price_list(result)
    labels = [t.get_text() for t in price.axes[0].get_legend().get_texts()]
    assert "V 표" in labels and "공유 V" in labels
    for f in (fig, scan, price):
        texts = [t.get_text() for a in f.axes for t in (*a.get_legend().get_texts(), *a.get_xticklabels(),
                                                         a.title, a.xaxis.label, a.yaxis.label)]
        assert _english_words(" ".join(texts)) == [], texts
    assert not [w for w in recwarn if "missing from font" in str(w.message)]
    monkeypatch.setenv("VRS_EDU_LANG", "en")
    apply_course_style("en")
    en = plot_thirds(result).axes[0]
    assert [t.get_text() for t in en.get_legend().get_texts()] == ["Q table", "K table", "V table"]
    assert en.get_xticklabels()[2].get_text() == "late\n(layers 20-29)"
    plt.close("all")
