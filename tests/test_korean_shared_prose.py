"""The shared verdict words (vrs_edu.lab.verdict_words, words from vrs_edu.i18n.verdicts) in both editions: the
exact English is unchanged, the Korean follows the verdict word for word (negligible is never worded as decided, an
out-of-regime verdict always comes with its would-be verdict), and lang=None is the running notebook's edition."""
import pytest

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
