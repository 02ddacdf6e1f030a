"""The lines chapters 03, 04 and 05 print that used to be written in the notebooks (English only), now chapter
functions with a Korean path: exact Korean strings for known inputs, and the English unchanged."""
from types import SimpleNamespace as NS

from vrs_edu.chapters.ch03_value_residual import prose as c3
from vrs_edu.chapters.ch04_bank_of_values import prose as c4
from vrs_edu.chapters.ch05_depth_as_sequence import prose as c5
from vrs_edu.lab.premises import LM_TOYS_SHORT


def _outcomes():
    return [NS(precondition=NS(name="sub_epoch", direction="negative", threshold=1.0), value=0.596, holds=True),
            NS(precondition=NS(name="lambdas_plateaued", direction="positive", threshold=0.5), value=0.0,
               holds=False)]


def test_chapter_03_lines_in_korean():
    assert c3.gains_title("kjv", lang="ko") == "kjv: 8층 × 폭 64, 짝지은 시드 5개"
    assert c3.layer_metrics_title("kjv", lang="ko") == "kjv (word-8x64), 학습 후"
    assert c3.stream_start_table(4.486, 4.479, -0.007, 4.421, 4.414, -0.007, lang="ko") == (
        "| 스트림의 시작 | 기준선 | resformer | resformer − 기준선 |\n|:---|---:|---:|---:|\n"
        "| 정규화하지 않은 임베딩 (GPT-2) | 4.486 | 4.479 | -0.007 |\n| RMSNorm(임베딩) (nanochat) | 4.421 | 4.414 | -0.007 |")
    assert c3.pairing_sentence((-0.0066, -0.0165, 0.0034), -0.0066, (-0.0165, 0.0034), 0.0067, 0.0100,
                               lang="ko") == (
        "직접 계산한 ResFormer − 기준선: -0.0066 [-0.0165, +0.0034]; 레시피의 검정: -0.0066 [-0.0165, +0.0034]. 같은 "
        "실행을 짝짓지 않은 평균으로 비교하면 짝지은 ±0.0100 대신 ±0.0067 nats가 됩니다. 여기서는 짝짓기가 범위를 "
        "좁히지 않습니다. 두 실행이 같은 시드로 공유하는 운이 두 모델이 같은 시작에 서로 다르게 반응하는 정도에 비해 작기 "
        "때문입니다.")
    assert c3.live_table([20, 40], [7.155, 5.939], [0.015, -0.005], lang="ko") == (
        "| 스텝 | 20 | 40 |\n|:---|---:|---:|\n| 기준선 | 7.155 | 5.939 |\n| resformer − 기준선 | +0.015 | -0.005 |")
    head, tab = c3.lambda_line_table([["0.00", "1.00", "4.942", "+0.192", "3.887"]], lang="ko")
    assert head == "λ1 + λ2 = 1을 따라, $V_1$이 없는 경우부터 $V_1$만 있는 경우까지:"
    assert tab.startswith("| λ1 | λ2 | 손실 (nats) | 학습된 설정 대비 변화 | 평균 엔트로피, 블록 1-7 |")
    assert c3.preconditions_sentence(_outcomes(), -0.027, 5, 1.0, lang="ko") == (
        "실행에서 읽은 전제 조건: `sub_epoch` 0.596 (필요: < 1): 성립; `lambdas_plateaued` 0.000 (필요: > 0.5): "
        "불성립. 시드 5개로 논문의 -0.027 nats를 검출할 검정력: 100%.")


def test_chapter_03_lines_in_english_are_the_notebooks_old_words():
    assert c3.gains_title("kjv", lang="en") == "kjv: 8 layers × 64 wide, 5 paired seeds"
    assert c3.preconditions_sentence(_outcomes(), -0.027, 5, 1.0, lang="en") == (
        "Preconditions, read from the runs: `sub_epoch` 0.596 (needs < 1): holds; `lambdas_plateaued` 0.000 "
        "(needs > 0.5): fails. Power to detect the paper's -0.027 nats with 5 seeds: 100%.")
    assert c3.pairing_sentence((-0.01, -0.02, 0.0), -0.01, (-0.02, 0.0), 0.02, 0.01, lang="en").endswith(
        "instead of the paired ±0.0100: pairing narrows the range here.")


def test_chapter_04_lines_in_korean():
    assert c4.sweep_title("kjv", [6, 7], 5, lang="ko") == "kjv: x0 층 [6, 7], 시드 5개"
    assert c4.recall_context_sentence(0.386, lang="ko") == (
        "이 과제에서는 깊은 층 입력 분산의 0.39가 토큰 정체성으로 설명됩니다(x0-R²). ")
    assert c4.projection_check_sentence(1.8e-7, lang="ko") == (
        "직접 만든 투영과 층 2에서 모델 자신의 v 투영의 가장 큰 차이: 1.8e-07.")
    assert c4.table_swap_sentence(32768, 1240, 2048, {6: 0.93, 7: 0.96}, 4.111, 4.112, -0.032, lang="ko") == (
        "학습 토큰 32,768개(토큰 id 2,048개 중 1,240개)로 맞춘 토큰별 표는 층 6에서 V의 R² = 0.93, 층 7에서 V의 "
        "R² = 0.96을 설명합니다. 두 층 모두에서 V 자리에 넣으면 검증 손실이 +0.001 nats 바뀝니다(4.111 → 4.112). "
        "처음부터 표를 가지고 학습한 `bank` 모델은 기준선과 -0.032 nats 차이로 끝났습니다.")
    assert c4.coefficients_match_sentence(1e-4, 0, lang="ko") == (
        "이 체크포인트의 계수는 저장된 시드 0 실행의 계수와 1e-04 이내로 같습니다.")
    assert c4.next_chapter_sentence(lang="ko") == "05장은 깊이 축 자체를 층이 어텐션할 수 있는 대상으로 바꿉니다."
    assert c4.preconditions_line({"sub_epoch": True, "deep_context": False}, lang="ko") == (
        "전제 조건: `sub_epoch` 성립; `deep_context` 불성립.")
    assert c4.preconditions_line({"sub_epoch": True, "deep_context": False}, lang="en") == (
        "Preconditions: `sub_epoch` holds; `deep_context` fails.")


def test_chapter_04_verdict_cell_in_korean_names_each_rate():
    one = NS(verdict="out of regime", would_be="reproduced", arms=None)
    assert c4.verdict_cell(one, lang="ko") == "적용 범위 밖 (판정한다면: 재현됨)"
    swept = NS(verdict="undecided", would_be=None,
               arms=(("×1", NS(verdict="reproduced", would_be=None)), ("×4", NS(verdict="undecided", would_be=None))))
    assert c4.verdict_cell(swept, lang="ko") == "학습률에 걸쳐 미정: ×1 재현됨; ×4 미정"


def test_chapter_04_widget_sentence_names_the_rate_as_the_reviewer_asked():
    steps = {s: {"delta_down": 0.001, "delta_up": 0.001} for s in "qk"}
    steps["v"] = {"delta_down": 0.002, "delta_up": 0.006}
    sweep = {"factors": [0.5, 1.0, 2.0], "delta": {s: [0.001, 0.0, 0.002] for s in "qkv"}}
    s = c4.widget_sentence(steps, {"q": 0.003, "k": 0.0, "v": 0.008}, sweep, "kjv", 0.03125, 0.03125, "kjv",
                           lang="ko")
    assert s.endswith("위젯의 체크포인트는 kjv에서 왔으며, β의 학습률은 위 King James Bible(kjv) 실행과 같은 "
                      "0.03125였습니다.")


def test_chapter_05_lines_in_korean():
    assert c5.effects_title("kjv", 5, 240, 240, lang="ko") == "Δ 최종 검증 손실, kjv, 짝지은 시드 5개, 240 / 240 스텝"
    assert c5.live_sentence(6, 2, 120, 5.26, lang="ko") == (
        "깊이 방향 ShortSWA를 쓴 6층 모델(K = 2), 120 스텝: 검증 손실 5.260 nats.")
    assert c5.equivalence_table([0.0, 1.2e-7, 2e-5], lang="ko") == (
        "| 비교 | 가장 큰 \\|Δ\\| | 부동소수점 정밀도로 일치 (< 1e-5) |\n|:---|---:|---:|\n"
        "| (1) 대 (2), 전치한 텐서에 적용한 같은 함수 | 0.0e+00 | 예 |\n"
        "| (1) 대 (3), 토큰 하나에 대해 반복문으로 계산한 논문의 식 | 1.2e-07 | 예 |\n"
        "| (1) 대 모델 자신의 읽기, 블록마다 | 2.0e-05 | 아니요 |")
    assert c5.stack_check_line(True, lang="ko") == "학습된 스택에서 모델의 읽기와 부동소수점 정밀도로 같음 (< 1e-5): 예"
    assert c5.stack_check_line(True, lang="en") == (
        "on the trained stack, equal to the model's read to float precision (< 1e-5): True")
    cost = {"L": 32, "K": 2, "full_over_K_memory": 6.6, "model_ratio": 16.5, "seq_over_depth_memory": 0.19}
    assert c5.memory_sentence(cost, lang="ko") == (
        "L = 32일 때 전체 윈도는 K = 2의 6.6배 메모리를 씁니다(비용 모형 (L+1)/K = 16.5). 같은 윈도를 시퀀스 축에 "
        "쓰면 깊이 방향 읽기의 0.19배입니다.")
    assert c5.window_readout_sentence(2, 9, 0.58, lang="ko") == (
        "K = 2: 읽기 출력은 출처 9개 중 2개를 씁니다. 깊은 층의 읽기는 가중치의 0.580을 두 출처 가운데 더 오래된 "
        "쪽에 둡니다.")
    assert c5.regime_text(8, 5, 0.2, 0.3, "kjv", "King James Version of the Bible", lang="ko") == (
        "8층 단어 모델, 짝지은 시드 5개, King James Bible의 0.20–0.30 에폭")
    assert c5.regime_text(8, 5, 0.2, 0.3, "kjv", "King James Version of the Bible", lang="en") == (
        "an 8-layer word model, 5 paired seeds, 0.20–0.30 of an epoch of the King James Version of the Bible")
    assert c5.next_chapters_sentence(lang="ko") == "06장은 V 재사용의 비용과 이득을 따지고, 08장은 실제 디코더에 묻습니다."


def test_chapter_05_embedding_read_places_v_among_q_and_k_in_korean():
    head = ("깊은 블록 6–7에서 V의 입력은 가중치의 **0.128**을 임베딩에 두고, Q의 입력은 {q}, K의 입력은 {k} "
            "둡니다(균등: 블록 6에서 0.077). 평균적으로 ")
    s = c5.embedding_read_sentence(6, 7, {"q": 0.149, "k": 0.093, "v": 0.128}, 0.077, lang="ko")
    assert s == head.format(q="0.149", k="0.093을") + "V는 임베딩을 K보다 많이, Q보다 적게 읽습니다."
    s = c5.embedding_read_sentence(6, 7, {"q": 0.1, "k": 0.093, "v": 0.128}, 0.077, lang="ko")
    assert s == head.format(q="0.100", k="0.093을") + "V는 임베딩을 Q와 K보다 많이 읽습니다."
    s = c5.embedding_read_sentence(6, 7, {"q": 0.2, "k": 0.192, "v": 0.128}, 0.077, lang="ko")
    assert s == head.format(q="0.200", k="0.192를") + "V는 임베딩을 Q와 K보다 적게 읽습니다."


def test_chapter_05_descriptions_and_depth_attention_in_korean():
    d = [NS(name="v_minus_q", interval=lambda: "-0.020 [-0.275, +0.234]", why=LM_TOYS_SHORT),
         NS(name="v_minus_k", interval=lambda: "+0.036 [-0.236, +0.308]", why=LM_TOYS_SHORT)]
    assert c5.descriptions_sentence(d, lang="ko") == (
        "V의 임베딩 가중치에서 Q와 K의 가중치를 뺀 값은 검정이 아니라 서술입니다: Q -0.020 [-0.275, +0.234]; "
        "K +0.036 [-0.236, +0.308] (판정하지 않음: 그 전제, 곧 깊은 입력이 대부분 문맥이라는 것(x0-R² < 0.5)이 "
        "모든 언어 모델 장난감에서 성립하지 않음).")
    reads = {"own": 0.17, "on_first": 0.63, "kv": {"depth_attention": 4096, "residual": 4096}}
    row = {"verdict": "reproduced", "mean": -0.023, "ci": [-0.03, -0.01]}
    s = c5.depth_attention_sentence(reads, NS(**row, would_be=None, test=NS(name="depth_attention_loss"),
                                              get=row.get), lang="ko")
    assert s.startswith("학습된 층들은 가중치의 **0.17**을 자기 값에 두고 0.63을 층 0의 값에 줍니다. 최종 손실은 "
                        "기준선과 -0.023 nats 차이이며(**")
    assert s.endswith("), 캐시는 토큰당 4096바이트로 기준선의 4096바이트와 같은 크기입니다.")


def test_checkers_of_chapters_03_to_05_speak_korean(capsys):
    from vrs_edu.course.exercises import ch03, ch04, ch05

    def stub(*args):
        raise NotImplementedError

    ch04.check_x0_projection(stub, lang="ko")
    ch04.check_bank_table(stub, lang="ko")
    ch05.check_depth_swa_stack(stub, lang="ko")
    ch03.check_value_residual_stack(stub, lang="ko")
    ch03.check_paired_interval(lambda a, b: ch03.paired_interval(a, b, sign=-1), lang="ko")
    out = capsys.readouterr().out
    for name in ("x0 투영", "뱅크 표", "깊이 방향 ShortSWA, 스택 전체", "value residual 스택"):
        assert f"✗ {name}:" in out
    assert "✗ 짝지은 구간:" in out and "부호가 뒤집혔습니다. 차이는 변형 − 기준선입니다(음수 = 변형의 손실이 더" in out
    ch04.check_x0_projection(stub, lang="en")
    assert "✗ x0 projection:" in capsys.readouterr().out


def test_every_korean_hint_list_matches_its_mistakes():
    from vrs_edu.course.exercises import ch03, ch04, ch05
    for mistakes, hints in ((ch03.STACK_MISTAKES, ch03.STACK_HINTS_KO), (ch03.PAIRED_MISTAKES, ch03.PAIRED_HINTS_KO),
                            (ch04.MISTAKES, ch04.HINTS_KO), (ch04.BANK_MISTAKES, ch04.BANK_HINTS_KO),
                            (ch05.STACK_MISTAKES, ch05.STACK_HINTS_KO)):
        assert len(mistakes) == len(hints)


def test_chapter03_checkers_keep_value_residual_in_english_and_name_the_sample_sd(capsys):
    from vrs_edu.course.exercises import ch03

    def stub(*args):
        raise NotImplementedError

    ch03.check_value_residual_stack(stub, lang="ko")
    ch03.check_paired_interval(stub, lang="ko")
    out = " ".join(capsys.readouterr().out.split())   # the wrapped message as one line
    assert "✗ value residual 스택:" in out and "값 잔차" not in out
    assert "그 평균, 표본 표준편차, 그리고 장의 공식이 주는 구간을 구하세요" in out and "표본 퍼짐" not in out
