"""The Korean edition of chapters 00, 01 and 06: computed prose and labels in both languages, on known inputs."""
import matplotlib.pyplot as plt

from vrs_edu.chapters.ch00_orientation.figures import stream_norm_text, training_norms_figure
from vrs_edu.chapters.ch01_two_axes.figures import block_scale_title, plot_effects
from vrs_edu.chapters.ch06_what_v_reuse_buys.figures import kv_text
from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import (answer, cache_sentence, context_sentence, designs_table,
                                                           depth_attention_sentence, quality_sentence,
                                                           designs_sentence, post_hoc_sentence, removal_sentence,
                                                           saving_sentence)


def test_ch00_stream_norm_text_in_both_languages():
    assert stream_norm_text(6, 1.0, lang="en") == "final/embedding norm ratio: 1.45 (the default)"
    assert stream_norm_text(6, 1.0, lang="ko") == "최종/임베딩 노름 비율: 1.45 (기본값)"
    assert stream_norm_text(6, 1.25, lang="en") == "final/embedding norm ratio: 1.65 (+0.20 from the default 1.45)"
    assert stream_norm_text(6, 1.25, lang="ko") == "최종/임베딩 노름 비율: 1.65 (기본값 1.45에서 +0.20)"


def test_ch01_block_scale_title_in_both_languages():
    assert block_scale_title([1.0, 0.5], 1.25, 1.25, "t", 0.5, 0.5, lang="en") == \
        "scales 1.00, 0.50\nloss 1.250 (the default); p(true 't') = 0.50 (+0.00)"
    assert block_scale_title([1.0, 0.5], 1.25, 1.25, "t", 0.5, 0.5, lang="ko") == \
        "배수 1.00, 0.50\n손실 1.250 (기본값); p(실제 't') = 0.50 (+0.00)"
    assert block_scale_title([0.0], 1.5, 1.25, "␣", 0.25, 0.5, lang="en") == \
        "scales 0.00\nloss 1.500 (+0.250 from the default 1.250); p(true '␣') = 0.25 (-0.25)"
    assert block_scale_title([0.0], 1.5, 1.25, "␣", 0.25, 0.5, lang="ko") == \
        "배수 0.00\n손실 1.500 (기본값 1.250에서 +0.250); p(실제 '␣') = 0.25 (-0.25)"


def test_ch00_training_figure_says_everything_in_the_editions_language():
    texts = {}
    for lang in ("en", "ko"):
        ax = training_norms_figure([0.16, 0.2, 0.24], [0.32, 4.0, 8.38], 60, lang=lang).axes[0]
        texts[lang] = [ax.get_title(), ax.get_xlabel(), ax.get_ylabel(),
                       *(t.get_text() for t in ax.get_legend().get_texts())]
    plt.close("all")
    assert texts["en"] == ["residual stream norm along depth", "depth l (0 = embedding)",
                           "mean ‖residual stream‖ (log)", "untrained", "after 60 steps"]
    assert texts["ko"] == ["깊이에 따른 잔차 스트림 노름", "깊이 l (0 = 임베딩)", "평균 ‖잔차 스트림‖ (로그 축)",
                           "학습 전", "60스텝 학습 후"]


def test_ch01_figure_labels_follow_the_language():
    fig = plot_effects({"direct": [0.1, 0.2], "total": [0.3, 0.2]}, lang="ko")
    ax = fig.axes[0]
    assert ax.get_ylabel() == "Δ 손실 (nats)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["블록 0", "블록 1"]
    assert plot_effects({"direct": [0.1], "total": [0.3]}, lang="en").axes[0].get_ylabel() == "Δ loss (nats)"
    plt.close("all")


ROWS = [dict(variant="baseline", T=64, bytes_per_token=4096, table_bytes=0, cache_bytes=1, n_cached_v=8),
        dict(variant="svformer", T=64, bytes_per_token=2304, table_bytes=0, cache_bytes=1, n_cached_v=1),
        dict(variant="bank", T=64, bytes_per_token=3584, table_bytes=1048576, cache_bytes=1, n_cached_v=6)]


def test_ch06_cache_sentence_in_both_languages():
    assert cache_sentence(ROWS, lang="en").startswith(
        "Measured on the cache the model builds, a token costs the baseline **4,096** bytes, SVFormer **2,304** "
        "(56%, 1,792 fewer)")
    assert cache_sentence(ROWS, lang="ko") == (
        "모델이 만드는 캐시에서 측정하면, 토큰 하나에 기준선은 **4,096**바이트, SVFormer는 **2,304**바이트(56%, "
        "1,792바이트 적음), 값 뱅크는 **3,584**바이트(88%, 512바이트 적음)가 들며 이는 모든 문맥 길이에서 "
        "같습니다. 값 뱅크는 여기에 더해 문맥과 무관하게 1,024 KB의 표를 유지합니다.")


def test_ch06_saving_sentence_follows_the_sign_in_korean():
    assert saving_sentence({64: -1024, 4096: 20480}, 2048, "the course's word model", lang="ko") == (
        "강좌의 단어 모델(|V| = 2048)에서 값 뱅크는 T = 64에서 1.0 KB가 더 들고, T = 4096에서 20.0 KB를 "
        "절약합니다. 공식대로 T = |V|에서 부호가 바뀝니다.")
    assert saving_sentence({64: -1024, 128: -2048}, 2048, "a 6-layer character model", lang="ko") == (
        "6층 문자 모델(|V| = 2048)에서 값 뱅크는 T = 64에서 1.0 KB가 더 들고, T = 128에서 2.0 KB가 더 듭니다. "
        "여기의 모든 문맥이 |V|보다 짧고, 부호는 공식이 주는 그대로입니다.")
    assert saving_sentence({64: -1024, 4096: 20480}, 2048, "the course's word model", lang="en") == (
        "On the course's word model (|V| = 2048) the bank costs 1.0 KB at T = 64, saves 20.0 KB at T = 4096: "
        "the sign changes at T = |V|, as the formula says.")


def test_ch06_context_and_depth_attention_sentences_in_korean():
    assert "문맥에 조금만 의존합니다" in context_sentence(0.95, 150, lang="ko")
    assert "문맥에 강하게 의존합니다" in context_sentence(0.5, 150, lang="ko")
    assert depth_attention_sentence(-0.012, 5, 4096, "reproduced", lang="ko") == (
        "Depth-Attention의 최종 검증 손실은 기준선보다 **0.012** nats 낮습니다(짝지은 시드 5개의 평균). 토큰당 "
        "캐시는 4,096바이트로 같으며, 깊이 방향의 V 읽기로 같은 캐시에서 더 낮은 손실을 얻습니다.")
    assert "(손실 검정: 미정)" in depth_attention_sentence(0.003, 5, 4096, "undecided", lang="ko")
    assert "lower loss at the same cache" in depth_attention_sentence(-0.012, 5, 4096, "reproduced", lang="en")


def test_ch06_answer_and_widget_text_in_korean():
    text = answer(ROWS, 2048, 1e-7, 0.5, lang="ko")
    assert text.startswith("메모리에 대해서는 그렇습니다.")
    assert "모든 길이에서 1,792바이트(44%) 줄어듭니다" in text and "표와 거리가 멀었습니다(코사인 0.500)" in text
    assert "하지만 여기서 읽기에 대해서는 아닙니다" in answer(ROWS, 2048, 1e-3, 0.95, lang="ko")
    s = dict(batch=1, baseline=2e6, svformer=1e6, bank_total=3e6, bank_tables=2e6, bank_saving=-1e6,
             break_even_context=32768)
    assert kv_text(s, 2048, lang="ko") == (
        "B = 1 × T = 2048: 기준선 2.00 MB, SVFormer 1.00 MB, 값 뱅크 3.00 MB (표 2.00 MB). 값 뱅크는 기준선보다 "
        "1.00 MB가 더 듭니다. 손익분기는 T = |V|/B = 32768입니다.")


def test_ch06_quality_sentence_in_korean():
    paired = {"svformer": dict(mean=0.012, ci=(0.004, 0.02), n=5, n_negative=0),
              "bank": dict(mean=-0.003, ci=(-0.01, 0.004), n=5, n_negative=3)}
    tests = {"svformer": dict(name="svformer_cost", direction="positive", verdict="reproduced")}
    assert quality_sentence(paired, tests, lang="ko") == (
        "SVFormer의 최종 검증 손실은 기준선보다 0.012 nats 높고(시드 5개 중 0개에서 더 낮음), 구간 +0.012 "
        "[+0.004, +0.020] nats는 0보다 위에 있습니다. 논문이 예상한 쪽(비용)입니다. 비용을 주장하는 사전 선언된 "
        "단측 검정 `svformer_cost`의 판정은 검정 수를 감안한 뒤 **재현됨**입니다. 값 뱅크의 최종 검증 손실은 "
        "기준선보다 0.003 nats 낮고(시드 5개 중 3개에서 더 낮음), 구간 -0.003 [-0.010, +0.004] nats는 0을 "
        "포함합니다. 따라서 여기서 SVFormer의 손실 비용은 판가름 났습니다.")
    assert quality_sentence(paired, {}, lang="ko").endswith("따라서 여기서 SVFormer의 손실 비용은 판가름 났습니다.")
    no_cost = {"bank": paired["bank"]}
    assert quality_sentence(no_cost, {}, lang="ko").endswith("따라서 이 규모에서 손실 비용이 드러난 재사용은 없습니다.")
    assert quality_sentence(no_cost, {}, lang="en").endswith("So at this scale no reuse is shown to cost loss.")


def test_ch06_removal_sentence_and_designs_table_in_korean():
    assert removal_sentence({"verdict": "reproduced"}, lang="ko").startswith("설정 점검은 재현됨입니다.")
    assert removal_sentence({"verdict": "undecided"}, lang="ko").startswith("설정 점검의 판정은 미정입니다.")
    assert removal_sentence({"verdict": "undecided"}, lang="en").startswith("The set-up check is undecided:")
    result = {"corpus": {"comparison": {"kv_share": {"paired_final": {"mean": 0.004, "ci": [-0.001, 0.009]}}}},
              "designs": {"kv_share": {"n_params": 1000, "kv_bytes_per_token": {"float32": 2048}}}}
    judged = {"kv_share_no_worse": {"verdict": "reproduced"}}
    columns, rows = designs_table(result, judged, lang="ko")
    assert columns[0] == "설계" and rows == [["두 층이 공유하는 KV (CLA)", "Gemma 4: num_kv_shared_layers", "1,000",
                                             "2,048", "+0.004 [-0.001, +0.009]", "kv_share_no_worse: 재현됨"]]
    assert designs_table(result, judged, lang="en")[1][0][0] == "KV shared by 2 layers (CLA)"


KV = {"verdicts": [{"name": "late_v_from_k_free", "verdict": "contradicted", "mean": 0.56},
                   {"name": "late_shared_kv_free", "verdict": "reproduced", "mean": 0.01}],
      "k_eq_v": {"r2": {"k": [0.5, 0.49, 0.52, 0.6, 0.34, 0.3]}}, "thirds": {"early": [0, 1], "middle": [2, 3],
                                                                           "late": [4, 5]},
      "sharing": {"loss": [[0.069], [0.2]], "pairs": [[28, 29], [3, 4]]}}


def test_ch06_post_hoc_and_designs_sentences_in_korean():
    text = post_hoc_sentence(KV, lang="ko")
    assert "(층 29가 층 28을 읽을 때)" in text and "**+0.56** nats가 듭니다('±0.05 이내로 나쁘지 않다'는 주장이 반박됨)" in text
    assert text.endswith("K = V는 학습 후에 공짜가 아닙니다. 공유 캐시는 이 모델에 ±0.05 nats 이상의 비용을 들이지 "
                         "않았을 것입니다.")
    assert "(layer 29 reading layer 28)" in post_hoc_sentence(KV, lang="en")
    result = {"designs": {"baseline": {"kv_bytes_per_token": {"float32": 4096}},
                          "kv_share": {"kv_bytes_per_token": {"float32": 2048}},
                          "mhc": {"kv_bytes_per_token": {"float32": 4096}}},
              "settings": {"corpus": {"train": {"steps": 120}}}}
    judged = {"mhc_loss": {"verdict": "reproduced"}, "kv_share_no_worse": {"verdict": "undecided"}}
    assert designs_sentence(result, judged, lang="ko") == (
        "설계 2개 가운데 기준선의 토큰당 4,096바이트보다 작은 캐시를 유지하는 것은 두 층이 공유하는 KV (CLA)"
        "(2,048바이트, 50%)뿐입니다. K = V는 $W_V$를 없애지만 여전히 두 텐서를 모두 캐시합니다. 120스텝 학습한 "
        "장난감 모델의 손실: mHC, 스트림 4개: 손실을 낮춤(재현됨); 두 층이 공유하는 KV (CLA): 미정.")
    assert designs_sentence(result, judged, lang="en").endswith("KV shared by 2 layers (CLA) undecided.")


def test_exercise_checkers_of_ch00_and_ch06_speak_korean(capsys):
    from vrs_edu.course.exercises import ch00, ch06

    assert ch00.check_stream_norms(lambda s: s.pow(2).sum(-1).mean(dim=(1, 2)), lang="ko") is False
    assert "✗ 스트림 노름: 사례 0: 제곱 노름입니다." in capsys.readouterr().out
    assert ch00.check_stream_norms(lambda s: s.pow(2).sum(-1).mean(dim=(1, 2)), lang="en") is False
    assert "that is the squared norm" in capsys.readouterr().out
    assert [m.fn for m in ch06.kv_mistakes("ko")] == [m.fn for m in ch06.KV_MISTAKES]
    per_token = ch06._ref_kv_cache_bytes
    assert ch06.check_kv_cache_bytes(lambda L, D, T, v, b: per_token(L, D, T, v, b) / T, lang="ko") is False
    assert "토큰 하나의 캐시입니다. seq_len을 곱하세요" in capsys.readouterr().out
    assert ch06.check_kv_cache_bytes(lambda L, D, T, v, b: float(per_token(L, D, T, v, b)), lang="ko") is False
    assert "✗ KV 캐시 바이트: case 0: float(" in capsys.readouterr().out


def test_exercise_checkers_of_ch01_speak_korean(capsys):
    from vrs_edu.course.exercises import ch01

    for mistakes, hints in ((ch01.STACK_MISTAKES, ch01.STACK_HINTS_KO), (ch01.DLA_MISTAKES, ch01.DLA_HINTS_KO),
                            (ch01.EFFECT_MISTAKES, ch01.EFFECT_HINTS_KO)):
        assert len(mistakes) == len(hints)
    assert ch01.check_residual_stack(lambda e, o: o.cumsum(0), lang="ko") is False
    out = capsys.readouterr().out
    assert "✗ 잔차 스택: 사례 0:" in out
    assert ch01.check_residual_stack(lambda e, o: o.cumsum(0), lang="en") is False
    assert "✗ residual stack: case 0:" in capsys.readouterr().out
