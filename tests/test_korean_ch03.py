"""Chapter 03's computed sentences in the Korean edition (issue 40): known numbers in, the exact Korean sentence out,
its words following the sign, size and verdict as the English does; the English sentences stay as they were."""
from vrs_edu.chapters.ch03_value_residual import prose as c3


def test_effect_sentence_in_korean_and_its_particle_follows_the_interval():
    s = c3.effect_sentence("ResFormer", -0.0066, (-0.0165, 0.0034), "undecided", 5, paper=-0.027, lang="ko")
    assert s == ("강한 기준선에 비해 ResFormer 변형은 짝지은 시드 5개 평균으로 최종 손실을 **0.007** nats 낮춥니다. "
                 "짝지은 시드 5개가 허용하는 범위 [-0.017, +0.003]은 0의 양쪽에 걸쳐 있습니다. "
                 "판정: 이 시드들로는 결정되지 않음. 논문의 -0.027 nats만큼 큰 이득은 그 범위 아래에 있으므로, "
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
        "0.040 nats 더 크게 보입니다. 강한 기준선은 그 자체만으로 약한 기준선보다 **0.020** nats 낫습니다. "
        "ResFormer 변화 크기의 2배입니다.")
    s = c3.baseline_lesson(-0.0067, -0.0066, -0.0001, 0.03, lang="ko")
    assert "이득을 부풀리지 않습니다" in s and "nats 나쁩니다." in s and "배입니다" not in s


def test_entropy_and_lambda_sentences_in_korean():
    assert c3.entropy_sentence(-0.05, "reproduced", lang="ko") == (
        "기준선의 어텐션 엔트로피는 균일 인과 어텐션의 엔트로피보다 **0.050** nats 낮습니다. "
        "ResFormer의 논증이 가정하는 대로 어텐션이 집중되어 있습니다.")
    assert "높습니다" in c3.entropy_sentence(0.0898, "contradicted", lang="ko")
    assert c3.lambda_sentence(0.0123, 0, 35, lang="ko") == (
        "평균적으로 λ1은 층당 +0.012씩 변해 깊이에 따라 커집니다. 그러나 λ1 궤적 35개 중 0개만 학습률이 마지막 감소를 "
        "시작하기 전에 움직임을 멈췄으므로, 이 분포는 λ1이 자리 잡는 곳이 아니라 아직 움직이는 λ1의 스냅숏입니다.")
    assert "작아집니다" in c3.lambda_sentence(-0.01, 30, 35, lang="ko")


def test_depth_sentence_and_answer_in_korean():
    s = c3.depth_sentence([4, 8, 16], [-0.009, -0.007, -0.015], [4.40, 4.41, 4.45], [4.39, 4.40, 4.43], [8],
                          0.03, 0.02, lang="ko")
    assert s == ("4층에서 16층까지 value residual의 손실 변화는 -0.009 → -0.007 → -0.015 nats입니다. 이 증가의 대부분은 "
                 "더 깊은 기준선이 더 나쁘게 학습된 결과입니다(기준선의 손실 4.400 → 4.450, value residual의 손실 "
                 "4.390 → 4.430). 조정된 기준선 자신의 손실은 깊이가 두 배가 될 때마다 +0.0300 nats 변합니다(깊이에 "
                 "따라 나빠지지 않는다는 전제는 0.02 미만을 허용합니다). 전제가 **성립하지 않습니다**. 따라서 깊이에 "
                 "따라 커지는 이득도 여기서는 재현됨으로 셀 수 없습니다. 기준선의 어텐션은 8층 모델에서 집중되어 "
                 "있습니다.")
    a = c3.answer(-0.0066, (-0.0165, 0.0034), -0.027, 16, -0.022, 0.0898, deeper_baselines_worse=True, lang="ko")
    assert a.startswith("첫 층의 값을 그 뒤의 모든 층에 섞으면(ResFormer의 고정 0.5/0.5) 우리 8층 모델에서 손실이 "
                        "**-0.007** nats 바뀝니다(음수 = 더 좋음). 판정: 이 시드들로는 결정되지 않음")
    assert "**-0.027** nats는 배제됩니다" in a and "더 큰 이득인데, 그 대부분은 더 깊은 기준선이" in a
    assert "키들이 받는 어텐션은 균일 인과 어텐션일 때보다 **0.090** nats 더 고르게" in a
    b = c3.answer(-0.03, (-0.04, -0.02), -0.027, 16, -0.03, -0.05, verdict="reproduced", lang="ko")
    assert "배제되지 않습니다" in b and "거의 같은 변화입니다" in b and "더 소수의 키에 몰려" in b
