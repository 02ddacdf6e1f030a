"""The Korean edition's notebook lines of chapters 06 and 08 (the sentences and headers their code cells used to
write inline), exact strings for known inputs in both languages, and the exercises' Korean checker messages."""
from types import SimpleNamespace

import pytest
import torch

from vrs_edu.chapters.ch06_what_v_reuse_buys import prose as p06
from vrs_edu.chapters.ch08_real_decoder import prose as p08
from vrs_edu.course.exercises import ch07, ch08


def test_chapter06_bank_lines():
    assert p06.bank_run_sentence((4, 5), 6, 150, 5.4321, "en") == (
        "Bank layers [4, 5] of 6, 150 steps: validation loss 5.432 nats.")
    assert p06.bank_run_sentence((4, 5), 6, 150, 5.4321, "ko") == (
        "6개 층 가운데 뱅크 층 [4, 5], 150스텝 학습: 검증 손실 5.432 nats.")
    assert p06.cosine_table({3: 0.61, 4: 1.0}, (4, 5), "ko") == (
        ["층", "종류", "같은 토큰, 다른 위치: 값의 코사인"], [[3, "일반", "0.610"], [4, "뱅크", "1.000"]])
    assert p06.decomposition_sentence(5, 3e-7, "ko") == (
        "층 5: $\\sum_h \\sum_j a^h_{ij}\\,\\mathrm{OV}_h[x_j]$와 어텐션 출력의 차이는 모든 항목에서 **1e-5** 미만입니다. "
        "float 정밀도 안에서 같습니다.")
    assert p06.decomposition_sentence(5, 0.02, "en").endswith("by up to **2.0e-02**: **not** the same.")
    loud = {"head": 3, "mean_norm": 0.9, "quietest": 0.67, "rows": [("'a'", 1.5, ["'b'", "'c'"])]}
    assert p06.loudest_sentence(5, loud, "ko") == (
        "층 5, 헤드 3: 행 노름의 평균은 0.90이고, 가장 조용한 헤드는 0.67입니다.")
    assert p06.loudest_table(loud, "ko") == (["토큰", "‖OV 행‖", "올리는 토큰"], [["`'a'`", "1.50", "`'b'` `'c'`"]])


def test_chapter06_counts_estimates_and_lines():
    assert p06.counts_sentence(True, False, True, "en") == (
        "Measured bank saving equal to the paper's formula: course model True, character model False; measured "
        "bytes per token equal to the formulas: True.")
    assert p06.counts_sentence(True, False, True, "ko") == (
        "측정한 뱅크 절약량과 논문의 공식: 강좌 모델 같음, 문자 모델 다름. 측정한 토큰당 바이트와 공식: 같음.")
    rows = [{"variant": "bank", "T": 64, "cache_bytes": 100}]
    assert p06.estimate_table(rows, lambda r: 100, "en")[1] == [["bank", 64, 100, 100, True]]
    assert p06.estimate_table(rows, lambda r: 90, "ko") == (
        ["변형", "T", "내 추정 (B)", "측정한 캐시 (B)", "같음"], [["bank", 64, 90, 100, "아니요"]])
    rec = {"claim": "X lowers the loss", "verdict": "reproduced"}
    paired = {"mean": -0.032, "ci": (-0.037, -0.027)}
    assert p06.quality_line("04", "cmd", "bank", paired, "bank_loss", rec, "ko") == (
        "* 04장, `cmd`: bank − 기준선 -0.032 [95% 신뢰구간 -0.037, -0.027] nats; 선언된 검정 `bank_loss`, "
        "\"X lowers the loss\": **재현됨**")
    row = SimpleNamespace(test=SimpleNamespace(name="t", claim="c", effect_for_power=-0.01), verdict="undecided",
                          would_be=None, interval=lambda label="": f"+0.004 [{label}-0.041, +0.050]")
    assert p06.designs_list("cmd", [row], "ko") == (
        "`cmd`:\n* `t`, \"c\": +0.004 [95% 신뢰구간 -0.041, +0.050] nats (관심 최소 효과 0.01), **미정**")
    assert p06.depth_attention_line("cmd", row, "en") == "* chapter 05, `cmd`: `t` +0.004 [-0.041, +0.050] nats, **undecided**"


CFG = SimpleNamespace(n_layers=30, d_model=576, n_heads=9, n_kv_heads=3, d_mlp=1536, vocab_size=49152, head_dim=64,
                      max_positions=8192)


def test_chapter08_short_lines():
    assert p08.model_line("SmolLM2-135M", CFG, 134_500_000, "f.gguf", "ko") == (
        "SmolLM2-135M: 층 30개, d_model 576, 쿼리 헤드 9개가 키/값 헤드 3개를 공유,\n    MLP 1536, 어휘 49,152개, "
        "파라미터 134.5 M개;\n    파일 f.gguf (SHA-256 확인됨)")
    assert p08.parity_line("LlamaForCausalLM", 17, True, "ko") == (
        "LlamaForCausalLM, 토큰 17개: 모든 로짓이 1e-4 안에서 일치: 예")
    assert p08.your_table_line(29, 3.1, 3.25, "ko") == "내 표에서 가져온 층 29의 V: 토큰당 3.100 → 3.250 nats (+0.150)"
    assert p08.your_table_line(29, 3.1, 3.25, "en") == (
        "layer 29's V from your table: 3.100 → 3.250 nats per token (+0.150)")
    assert p08.demo_sentence("A b.", {"clean_loss": 3.0, "loss": 3.5}, "ko") == (
        "*A b.* — 마지막 3분의 1의 V를 표에서 가져오면, 이 문장의 손실은 토큰당 3.00에서 3.50 nats로 바뀝니다.")
    assert p08.x0_value_sentence(0.9, 0.4, "ko") == (
        "마지막 3분의 1 전체에서 V := W_V·norm(x0)의 비용은 0.90 nats, 평균 표는 0.40입니다. 두 문맥 없는 값 가운데 "
        "여기서는 표가 더 낫습니다.")
    assert p08.x0_value_sentence(0.3, 0.4, "ko").endswith("W_V를 거친 임베딩이 더 낫습니다.")
    assert p08.estimator_table([["mean table", "+0.1", "+0.2", "+0.3", "224"]], "ko") == (
        ["추정량", "Q", "K", "V", "시퀀스"], [["평균 표", "+0.1", "+0.2", "+0.3", "224"]])
    assert p08.verdict_columns(("test", "kind / family", "mean [95 % CI] (share)", "vs", "p (Holm)", "verdict"),
                               "ko") == ("검정", "종류 / 묶음", "평균 [95 % 신뢰구간] (몫)", "비교 대상", "p (Holm)", "판정")


def test_chapter08_sentences_follow_the_numbers():
    c = {"uniform pattern": {"mean": 0.5, "ci": (0.4, 0.6)}, "previous layer's pattern": {"mean": 0.02,
         "ci": (0.01, 0.03)}, "pattern swap": {"mean": 0.3, "ci": (0.2, 0.4)}, "value swap": {"mean": 0.9}}
    names = tuple(c)
    assert p08.last_third_patterns_sentence(c, names, 0.05, "ko") == (
        "마지막 3분의 1: 다른 시퀀스의 패턴은 0.30 nats, 이전 층의 패턴은 0.02, 균등 어텐션은 0.50의 비용이 들고, "
        "다른 시퀀스의 값은 0.90입니다. 0.05 nats 허용 범위 안에 드는 패턴 대체: 이전 층의 패턴.")
    assert p08.last_third_patterns_sentence(c, names, 0.05, "en").endswith(
        "Pattern replacements within the 0.05-nat tolerance: previous layer's pattern.")
    assert p08.layer_scan_sentence([3, 7], 30, 0.05, 64, 4, True, "ko") == (
        "30개 층 가운데 2개 층이 홀로 다른 시퀀스의 패턴을 0.05 nats 안에서 견딥니다(층 3, 7). 시퀀스 64개에 걸친 구간의 "
        "위쪽 끝으로 본 것이며, 평균만으로 보면 4개입니다. 마지막 3분의 1 전체에서 값 교환은 패턴 교환보다 비용이 "
        "더 큽니다.")
    assert p08.chapter02_sentence(False, 2, 30, 64, "ko") == (
        "이 모델에서 02장의 질문: 마지막 3분의 1에서 값 교환은 패턴 교환보다 비용이 더 작고, 30개 층 가운데 2개 층이 "
        "홀로 자기 패턴 없이 허용 범위 안에 듭니다(시퀀스 64개).")
    assert p08.checks_sentence([], 0, "float32", 900, "ko") == (
        "재현되지 않은 점검: 없음. 따라서 주장 0개가 적용 범위 밖입니다(각각 가상 판정과 함께 출력하며, 셈에 넣지 "
        "않습니다). 저장된 실행(float32)은 15.0분이 걸려, 코어 2개에 대한 레시피의 20분 예산을 넘지 않았습니다.")
    kv = {"table_per_layer": 49152 * 192 * 2, "v_per_layer": 384, "total": 23040, "bytes_per_number": 2}
    assert p08.table_size_sentence(kv, CFG, "ko") == (
        "한 층의 V 표는 수 192개짜리 행 49,152개를 담으며(float16으로 18.0 MiB), 이는 그 층의 토큰 49,152개의 캐시와 "
        "같습니다. 값 뱅크 논문이 제시하는 손익분기점입니다(4절). 이 모델의 문맥 8,192토큰짜리 시퀀스 하나에서는 표가 "
        "그것이 아끼는 캐시보다 메모리를 더 씁니다. 표는 배치 전체에 걸쳐 이득이 됩니다.")
    assert p08.norms_declarations_sentence(0.3, 0.05, 0.02, 64, 120.4, "ko") == (
        "싱크: 첫 토큰의 가중치 몫이 0.3을 넘는 것(헤드, 쿼리, 시퀀스에 걸친 평균). 관심 최소 효과: 몫의 0.05, 3분의 1 "
        "구간 사이 혼합 비율의 0.02. 시퀀스 64개; 저장된 실행에 120 s가 걸렸습니다.")


def _todo(*args):
    raise NotImplementedError


@pytest.mark.parametrize("check, english, korean", [
    (ch07.check_held_out_r2, "✗ held-out R²:", "✗ 홀드아웃 R²:"),
    (ch07.check_sentence_embedding, "✗ sentence embedding:", "✗ 문장 임베딩:"),
    (ch07.check_substitution, "✗ substitution ablation:", "✗ 대체 절제:"),
    (ch08.check_token_table, "rows with count 0 get values.mean(0)", "개수가 0인 행에는 values.mean(0)을 주세요"),
])
def test_checkers_speak_the_edition(check, english, korean, monkeypatch, capsys):
    for lang, said, not_said in (("en", english, korean), ("ko", korean, english)):
        monkeypatch.setenv("VRS_EDU_LANG", lang)
        assert check(_todo) is False
        out = " ".join(capsys.readouterr().out.split())
        assert said in out and not_said not in out


def test_token_table_mistake_in_korean(monkeypatch, capsys):
    def zero_rows(values, ids, V):
        out = torch.zeros(V, values.size(1)).index_add_(0, ids, values)
        return out / torch.bincount(ids, minlength=V).clamp_min(1)[:, None]
    monkeypatch.setenv("VRS_EDU_LANG", "ko")
    assert ch08.check_token_table(zero_rows) is False
    assert "한 번도 나오지 않는 토큰의 행이 0으로 채워졌습니다" in capsys.readouterr().out
    assert len(ch08.HINTS_KO) == 3 and len(ch07.R2_HINTS_KO) == 4 and len(ch07.SUBSTITUTION_HINTS_KO) == 3
