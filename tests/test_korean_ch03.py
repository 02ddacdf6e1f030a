"""Chapter 03's computed sentences in the Korean edition (issue 40): known numbers in, the exact Korean sentence out,
its words following the sign, size and verdict as the English does; the English sentences stay as they were."""
import pytest

from vrs_edu.chapters.ch03_value_residual import prose as c3


def test_effect_sentence_in_korean_and_its_particle_follows_the_interval():
    s = c3.effect_sentence("ResFormer", -0.0066, (-0.0165, 0.0034), "undecided", 5, paper=-0.027, lang="ko")
    assert s == ("강한 기준선에 비해 ResFormer 변형은 짝지은 시드 5개 평균으로 최종 손실을 **0.007** nats 낮춥니다. "
                 "짝지은 시드 5개가 허용하는 범위 [-0.017, +0.003]은 0의 양쪽에 걸쳐 있습니다. "
                 "판정: 미정(이 시드들로는 가릴 수 없음). 논문의 -0.027 nats만큼 큰 이득은 그 범위 아래에 있으므로, "
                 "이 말뭉치의 이 모델에서는 배제됩니다.")
    # 3 (삼) takes 은, 4 (사) takes 는; a cost raises the loss
    s = c3.effect_sentence("SVFormer", 0.02, (0.012, 0.034), "reproduced", 5, lang="ko")
    assert s == ("강한 기준선에 비해 SVFormer 변형은 짝지은 시드 5개 평균으로 최종 손실을 **0.020** nats 높입니다. "
                 "짝지은 시드 5개가 허용하는 범위 [+0.012, +0.034]는 0보다 위에 있습니다. "
                 "판정: 발표된 방향으로 결정됨.")
    assert "바꾸지 않습니다" in c3.effect_sentence("x", 0.0001, (-0.01, 0.01), "undecided", 5, lang="ko")
    assert "lowers the final loss" in c3.effect_sentence("ResFormer", -0.0066, (-0.0165, 0.0034), "undecided", 5,
                                                         lang="en")


def test_baseline_lesson_in_korean():
    assert c3.baseline_lesson(-0.05, -0.01, -0.04, -0.02, lang="ko") == (
        "ResFormer의 손실 변화는 약한 기준선에 대해 -0.050 nats, 강한 기준선에 대해 -0.010 nats로, 약한 기준선에 대해 "
        "0.040 nats 더 크게 보입니다. 강한 기준선은 그 자체로 약한 기준선보다 손실이 **0.020** nats 낮습니다. "
        "ResFormer 변화 크기의 2배입니다.")
    s = c3.baseline_lesson(-0.0067, -0.0066, -0.0001, 0.03, lang="ko")
    assert "이득을 부풀리지 않습니다" in s and "nats 높습니다." in s and "차이가 0.001 nats 이내입니다" in s and "배입니다" not in s


def test_entropy_and_lambda_sentences_in_korean():
    assert c3.entropy_sentence(-0.05, "reproduced", lang="ko") == (
        "기준선의 어텐션 엔트로피는 균등 인과 어텐션의 엔트로피보다 **0.050** nats 낮습니다. "
        "ResFormer의 논증이 가정하는 대로 어텐션이 집중되어 있습니다.")
    assert "높습니다" in c3.entropy_sentence(0.0898, "contradicted", lang="ko")
    assert c3.lambda_sentence(0.0123, 0, 35, lang="ko") == (
        "평균적으로 λ1은 층당 +0.012씩 변해 깊이에 따라 커집니다. 그러나 λ1 궤적 35개 중 하나도 학습률이 마지막 "
        "감소를 시작하기 전에 움직임을 멈추지 않았으므로, 이 층별 양상은 λ1이 수렴한 값이 아니라 아직 움직이는 중인 "
        "λ1의 스냅숏입니다.")
    # more than none: "only n of them stopped"; most of them: close to where λ1 converges
    assert "35개 중 3개만 학습률이 마지막 감소를 시작하기 전에 움직임을 멈췄으므로, 이 층별 양상은 λ1이 수렴한 값이 " \
        "아니라" in c3.lambda_sentence(0.0123, 3, 35, lang="ko")
    assert c3.lambda_sentence(0.0123, 30, 35, lang="ko").endswith("이 층별 양상은 λ1이 수렴한 값에 가깝습니다.")
    assert "작아집니다" in c3.lambda_sentence(-0.01, 30, 35, lang="ko")


def test_depth_sentence_and_answer_in_korean():
    s = c3.depth_sentence([4, 8, 16], [-0.009, -0.007, -0.015], [4.40, 4.41, 4.45], [4.39, 4.40, 4.43], [8],
                          0.03, 0.02, lang="ko")
    assert s == ("4층에서 16층까지 value residual의 손실 변화는 -0.009 → -0.007 → -0.015 nats입니다. 이득이 커진 것의 "
                 "대부분은 깊은 기준선의 학습이 더 잘 안 된 탓입니다(기준선의 손실 4.400 → 4.450, value residual의 "
                 "손실 4.390 → 4.430). 조정된 기준선 자신의 손실은 깊이가 두 배가 될 때마다 +0.0300 nats 변합니다"
                 "(전제 '깊이가 늘어도 나빠지지 않는다'의 허용 한계: 0.02 nats 미만). 전제가 **성립하지 않습니다**. 따라서 깊이에 "
                 "따라 커지는 이득도 여기서는 재현됨으로 셀 수 없습니다. 기준선의 어텐션은 8층 모델에서 집중되어 "
                 "있습니다.")
    a = c3.answer(-0.0066, (-0.0165, 0.0034), -0.027, 16, -0.022, 0.0898, deeper_baselines_worse=True, lang="ko")
    assert a.startswith("첫 층의 값을 그 뒤의 모든 층에 섞으면(ResFormer의 고정 0.5/0.5) 우리 8층 모델에서 손실이 "
                        "**-0.007** nats 바뀝니다(음수 = 더 좋음). 판정: 미정(이 시드들로는 가릴 수 없음)")
    assert "**-0.027** nats는 배제됩니다" in a and "더 큰 이득인데, 그 대부분은 깊은 기준선의 학습이 더 잘 안 된 탓" in a
    assert "또한 value residual은 논문들이 설명하는 방식으로 작동하지 않습니다. 우리 기준선에서 키들이 받는 어텐션은 " \
        "균등 인과 어텐션일 때보다 **0.090** nats 더 고르게" in a
    b = c3.answer(-0.03, (-0.04, -0.02), -0.027, 16, -0.03, -0.05, verdict="reproduced", lang="ko")
    assert "배제되지 않습니다" in b and "거의 같은 변화입니다" in b and "더 소수의 키에 몰려" in b


def test_depth_sentence_without_concentration_in_korean():
    s = c3.depth_sentence([4, 8, 16], [-0.011, -0.015, -0.038], [4.353, 4.38, 4.419], [4.342, 4.36, 4.381], [],
                          lang="ko")
    assert s.endswith(". 어느 깊이에서도 기준선의 어텐션은 집중되어 있지 않습니다. 이 폭에서는 16층까지 가도 "
                      "ResFormer 논증의 전제(어텐션 집중)가 나타나지 않습니다.")


def test_contradicted_entropy_says_why_the_keys_share_evenly_in_both_editions():
    ko = c3.entropy_sentence(0.0898, "contradicted", lang="ko")
    assert "*더 고르게* 퍼져 있고(각 쿼리가 주로 가까운 키를 보므로, 키마다 받는 어텐션 총량은 오히려 고르게 " \
        "나뉩니다), 소수의 키에 집중되어 있지 않습니다." in ko and "국소적" not in ko
    en = c3.entropy_sentence(0.0898, "contradicted", lang="en")
    assert "(each query looks mostly nearby, so no key draws a crowd)" in en and "more local" not in en


def test_stream_start_and_lambda_line_tables_in_korean():
    tab = c3.stream_start_table(4.486, 4.479, -0.007, 4.421, 4.414, -0.007, lang="ko")
    assert "| 정규화하지 않은 임베딩 (GPT-2) |" in tab and "| RMSNorm(임베딩) (nanochat) |" in tab
    assert "RMSNorm(embedding) (nanochat)" in c3.stream_start_table(4.4, 4.4, 0, 4.4, 4.4, 0, lang="en")
    head, tab = c3.lambda_line_table([["0.00", "1.00", "4.942", "+0.192", "3.887"]], lang="ko")
    assert "평균 엔트로피, 블록 1-7" in tab
    assert "mean entropy, blocks 1-7" in c3.lambda_line_table([["0.00", "1.00", "4.942", "+0.192", "3.887"]],
                                                                lang="en")[1]


def test_pairing_sentence_names_the_shared_luck_in_korean():
    s = c3.pairing_sentence((-0.0066, -0.0165, 0.0034), -0.0066, (-0.0165, 0.0034), 0.0067, 0.0100, lang="ko")
    assert s.endswith("여기서는 짝짓기가 범위를 좁히지 않습니다. 두 실행이 같은 시드로 공유하는 운이 두 모델이 같은 "
                      "시작에 서로 다르게 반응하는 정도에 비해 작기 때문입니다.")


@pytest.mark.filterwarnings("ignore:Glyph")      # the labels are checked as text, not drawn in a Korean font
def test_chapter03_figures_in_korean_name_the_baseline_the_sink_and_the_blocks():
    import matplotlib.pyplot as plt

    from vrs_edu.chapters.ch03_value_residual import figures as f
    metrics = {"entropy": [3.8, 3.9], "sink_mass": [0.05, 0.04], "sink_value_norm": [1.0, 0.9],
               "oversmoothing": [0.1, 0.2, 0.3]}
    part = {"runs": {"baseline": [{"layer_metrics": metrics}] * 2, "resformer": [{"layer_metrics": metrics}] * 2}}
    fig = f.plot_layer_metrics(part, ("baseline", "resformer"), entropy_reference=4.0, lang="ko")
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["균등 인과", "기준선", "resformer"]
    assert [ax.get_title() for ax in fig.axes[1:3]] == ["위치 0이 받는 어텐션",
                                                        "‖v₀‖ / 평균 ‖v‖ (< 1: 싱크가 내용을 거의 싣지 않음)"]
    assert fig.axes[0].get_xlabel() == "블록"
    en = f.plot_layer_metrics(part, ("baseline", "resformer"), lang="en")
    assert [t.get_text() for t in en.legends[0].get_texts()] == ["baseline", "resformer"]
    coeffs = {f"blocks.{l}.value_residual.lambda_{i}": 0.5 for l in (1, 2) for i in (1, 2)}
    run = {"coefficients": coeffs, "history": {"eval_steps": [0, 10], "coefficients": {
        f"blocks.{l}.value_residual.lambda_1": [0.5, 0.6] for l in (1, 2)}}}
    fig = f.plot_lambdas({"runs": {"learnable": [run, run]}}, lang="ko")
    assert [t.get_text() for t in fig.axes[1].get_legend().get_texts()] == ["블록 1", "블록 2"]
    assert fig.axes[0].get_xlabel() == "블록 (blocks.0이 V_1을 계산)"
    plt.close("all")


def test_the_lambda_widget_readout_states_the_change_from_the_default_in_the_edition():
    from vrs_edu.chapters.ch03_value_residual.figures import lambda_text

    now = {"loss": 4.877, "entropy": [1.5, 2.25]}
    assert lambda_text(now, 4.865, "en") == "loss 4.877 nats (+0.012 from the default 4.865); entropy per layer: 1.50 2.25"
    assert lambda_text(now, 4.865, "ko") == "손실 4.877 nats (기본값 4.865에서 +0.012); 층별 엔트로피: 1.50 2.25"
    assert lambda_text({**now, "loss": 4.865}, 4.865, "ko") == "손실 4.865 nats (기본값); 층별 엔트로피: 1.50 2.25"
