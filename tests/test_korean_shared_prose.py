"""The shared verdict words (vrs_edu.lab.verdict_words, words from vrs_edu.i18n.verdicts) in both editions: the
exact English is unchanged, the Korean follows the verdict word for word (negligible is never worded as decided, an
out-of-regime verdict always comes with its would-be verdict), and lang=None is the running notebook's edition."""
import pytest

from vrs_edu.chapters.ch03_value_residual.prose import effect_sentence
from vrs_edu.chapters.ch05_depth_as_sequence.prose import loss_change
from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import removal_sentence
from vrs_edu.lab.verdict_words import plain_verdict, verdict_label
from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.language import ENV_VAR

OUT = {"verdict": "out of regime", "would_be": "contradicted"}
NEGLIGIBLE = {"verdict": "negligible", "effect_for_power": -0.01}


@pytest.mark.parametrize("row, en, ko", [
    ("reproduced", "reproduced", "재현됨"),
    ("contradicted", "contradicted", "반박됨"),
    ("undecided", "undecided", "미정"),
    ("negligible", "negligible", "무시할 만함"),
    (OUT, "out of regime (would be: contradicted)", "적용 범위 밖 (판정한다면: 반박됨)"),
    ({"verdict": "n/a", "would_be": "reproduced"}, "n/a (would be: reproduced)", "해당 없음 (판정한다면: 재현됨)"),
])
def test_the_verdict_label_in_both_editions(row, en, ko):
    assert verdict_label(row, lang="en") == en
    assert verdict_label(row, lang="ko") == ko


@pytest.mark.parametrize("row, en, ko", [
    ("reproduced", "decided, in the published direction", "발표된 방향으로 결정됨"),
    ("contradicted", "decided, against the published direction", "발표와 반대 방향으로 결정됨"),
    ("undecided", "not decided by these seeds", "이 시드들로는 결정되지 않음"),
    (NEGLIGIBLE, "too small to matter — its whole interval lies within ±0.01 nats, the smallest effect declared "
                 "before the run", "무시할 만함 — 구간 전체가 실행 전에 선언한 관심 최소 효과 (±0.01 nats) 안에 있음"),
    ("negligible", "too small to matter — its whole interval lies inside the smallest effect declared before the run",
     "무시할 만함 — 구간 전체가 실행 전에 선언한 관심 최소 효과 안에 있음"),
    (OUT, "out of regime — its premise fails; judged anyway it would be contradicted",
     "적용 범위 밖 — 전제 조건이 성립하지 않음; 그래도 판정한다면 반박됨"),
    ({"verdict": "n/a"}, "n/a — the gain it would explain is not reproduced; it is not judged",
     "해당 없음 — 이 효과가 설명할 이득이 재현되지 않음; 판정하지 않음"),
])
def test_the_plain_verdict_in_both_editions(row, en, ko):
    assert plain_verdict(row, lang="en") == en
    assert plain_verdict(row, lang="ko") == ko


def test_a_korean_sentence_takes_the_particle_of_the_verdict_word():
    # 재현됨 and 미정 end in a consonant (ㅁ, ㅇ) but 무시할 만함 too; the pair is chosen by the word's last sound
    assert attach(verdict_label("reproduced", lang="ko"), "으로/로") == "재현됨으로"
    assert attach(verdict_label(OUT, lang="ko"), "이/가").endswith("반박됨)이")
    assert attach("해당 없음", "은/는") == "해당 없음은"


def test_lang_none_is_the_running_edition(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "ko")
    assert verdict_label(OUT) == "적용 범위 밖 (판정한다면: 반박됨)"
    monkeypatch.setenv(ENV_VAR, "en")
    assert verdict_label(OUT) == "out of regime (would be: contradicted)"
    with pytest.raises(ValueError, match="lang: expected one of en, ko"):
        verdict_label(OUT, lang="fr")


# ------------------------------------------------- vrs_edu.viz.prose.declared_result and verdict_table in Korean


def _result(values, verdict, form="sign", would_be=None, ci=None):
    m = sum(values) / len(values)
    rec = {"name": "t", "verdict": verdict, "form": form, "effect_for_power": -0.01, "would_be": would_be,
           "mean": m, "ci": ci or [m - 0.01, m + 0.01], "values": values}
    return {"verdicts": [rec]}


def test_declared_result_in_korean_follows_the_sign_and_the_verdict():
    from vrs_edu.viz.prose import declared_result

    s = declared_result(_result([-0.03, -0.02, -0.025, -0.02, 0.001], "reproduced"), "t", lang="ko")
    assert s == ("최종 손실이 기준선보다 0.019 nats 낮음, 95% 신뢰구간 [-0.029, -0.009], 시드 5개 중 4개에서 더 낮음; "
                 "선언된 검정 `t`: 재현됨 — 발표된 방향으로 결정됨")
    s = declared_result(_result([0.004] * 5, "reproduced", form="equivalence"), "t", against="per-layer embeddings'",
                        lang="ko")
    assert s.startswith("최종 손실이 층별 임베딩보다 0.004 nats 높음") and "`t`(±0.01 안에서 더 나쁘지 않음): 재현됨" in s
    s = declared_result(_result([0.02] * 5, "out of regime", would_be="contradicted"), "t", lang="ko")
    assert s.endswith("`t`: 적용 범위 밖 — 전제 조건이 성립하지 않음; 그래도 판정한다면 반박됨")
    assert declared_result(_result([0.0] * 5, "negligible"), "t", lang="ko").startswith("최종 손실이 기준선과 같음")
    assert declared_result(None, "t", lang="ko") == "아직 실행하지 않음"
    r = _result([-0.005] * 5, "undecided", form="equivalence", ci=[-0.018, 0.009])
    r["verdicts"][0].update(p_holm=0.0886, family_size=6)
    assert declared_result(r, "t", lang="ko").endswith(
        "; 같은 검정 묶음의 검정 6개에 대한 Holm 보정 후 p = 0.089: 미정 — 이 시드들로는 결정되지 않음: "
        "구간이 -0.01 아래(마진보다 더 좋을 수 있음)까지 걸침")
    assert declared_result(r, "t", lang="en").endswith(
        "undecided — not decided by these seeds: its interval reaches below -0.01 (it may be better by more than "
        "the margin)")


# ------------------------------------------------------------------ vrs_edu.course.checks.check_function in Korean


def test_the_checker_s_own_messages_in_both_editions(capsys):
    import torch

    from vrs_edu.course.checks import check_function

    def reference(x):
        return x * 2

    cases = [(torch.ones(2, 3),)]
    assert check_function("double", reference, reference, cases, lang="ko")
    assert capsys.readouterr().out == "✓ double: 공개 검사를 통과했습니다 — 숨은 검사는 채점할 때 실행됩니다\n"
    assert check_function("double", reference, reference, cases, lang="en", graded=False)
    assert capsys.readouterr().out == "✓ double: public checks passed\n"
    assert not check_function("double", lambda x: x[0], reference, cases, lang="ko")
    assert " ".join(capsys.readouterr().out.split()) == (
        "✗ double: 사례 0: 기대한 것은 모양 (2, 3)의 텐서, 받은 것은 모양 (3,)의 텐서입니다 [입력: x=모양 (2, 3)의 텐서]")
    assert not check_function("double", lambda x: x * 3, reference, cases, lang="en")
    assert " ".join(capsys.readouterr().out.split()) == (
        "✗ double: case 0: values differ from the reference (largest difference 1) [inputs: x=tensor of shape (2, 3)]")
    assert not check_function("double", lambda x: None, reference, cases, stub_hint="x * 2", lang="ko")
    assert " ".join(capsys.readouterr().out.split()) == (
        "✗ double: 아직 구현하지 않았습니다 — 스텁의 본문 자리에 코드를 작성하세요. 힌트: x * 2")


def test_an_english_sentence_keeps_english_verdict_words_when_the_edition_is_korean(monkeypatch):
    # English templates name their language: in the Korean edition a sentence asked for in English (lang="en") must
    # not carry 미정 or 적용 범위 밖 (they once took the running edition's words).
    monkeypatch.setenv("VRS_EDU_LANG", "ko")
    assert effect_sentence("ResFormer", -0.007, (-0.017, 0.003), "undecided", 5, lang="en").endswith(
        "and the change is not decided by these seeds.")
    assert loss_change(-0.023, (-0.03, -0.01), "undecided") == "lowers the loss by 0.023 nats (undecided)"
    assert removal_sentence({"verdict": "out of regime", "would_be": "contradicted"}, lang="en").startswith(
        "The set-up check is out of regime (would be: contradicted): this toy")
