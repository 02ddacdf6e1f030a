"""The verdict words of the course in both editions (issue 40): the word beside a number, and what it means in plain
words. :mod:`vrs_edu.lab.verdict_words` reads a verdict out of a result and takes its words from here, in the
running edition's language (:func:`vrs_edu.i18n.language.resolve_language`).

The Korean words are the course's terminology: 재현됨 (reproduced), 반박됨 (contradicted), 미정 (undecided),
무시할 만함 (negligible), 적용 범위 밖 (out of regime). A verdict word keeps its meaning exactly: "negligible" is never
worded as reproduced or contradicted, and an out-of-regime or n/a verdict always comes with its would-be verdict.
"""
from __future__ import annotations

# What a decided (or undecided) verdict means, in plain words.
PLAIN = {"en": {"reproduced": "decided, in the published direction",
                "contradicted": "decided, against the published direction",
                "undecided": "not decided by these seeds",
                "rate-dependent": "decided in opposite directions at different learning rates"},
         "ko": {"reproduced": "발표된 방향으로 결정됨",
                "contradicted": "발표와 반대 방향으로 결정됨",
                "undecided": "이 시드들로는 결정되지 않음",
                "rate-dependent": "학습률에 따라 반대 방향으로 결정됨"}}
# The verdict word itself in Korean (the English word is the verdict's own name).
WORD_KO = {"reproduced": "재현됨", "contradicted": "반박됨", "undecided": "미정", "negligible": "무시할 만함",
           "out of regime": "적용 범위 밖", "n/a": "해당 없음", "rate-dependent": "학습률에 따라 다름"}
UNJUDGED = ("out of regime", "n/a")


def verdict_word(verdict: str, lang: str = "en") -> str:
    """The verdict's word in ``lang``: ``negligible`` / ``무시할 만함``; an unknown word is shown as it is."""
    return WORD_KO.get(verdict, verdict) if lang == "ko" else verdict


def label(verdict: str, would: str | None, lang: str = "en") -> str:
    """The verdict word as a chapter prints it beside a number, the would-be verdict beside an out-of-regime or n/a
    one: ``out of regime (would be: contradicted)`` / ``적용 범위 밖 (판정한다면: 반박됨)``."""
    if not (would and verdict in UNJUDGED):
        return verdict_word(verdict, lang)
    if lang == "ko":
        return f"{verdict_word(verdict, lang)} (판정한다면: {verdict_word(would, lang)})"
    return f"{verdict} (would be: {would})"


def plain(verdict: str, would: str | None, margin: float | None, unit: str, reason: str | None,
          lang: str = "en") -> str:
    """What a verdict means in plain words (:func:`vrs_edu.lab.verdict_words.plain_verdict`), in ``lang``.
    ``margin``: the declared smallest effect (None: unknown); ``reason``: why a swept test's arms differ (None: they
    agree); ``unit`` is kept as it is in both editions (nats)."""
    ko = lang == "ko"
    if verdict == "negligible":
        if ko:
            band = f"(±{margin:g} {unit}) " if margin else ""
            return f"무시할 만함 — 구간 전체가 실행 전에 선언한 관심 최소 효과 {band}안에 있음"
        band = f"within ±{margin:g} {unit}, " if margin else "inside "
        return f"too small to matter — its whole interval lies {band}the smallest effect declared before the run"
    if verdict in UNJUDGED:
        if ko:
            why = "전제 조건이 성립하지 않음" if verdict == "out of regime" else "이 효과가 설명할 이득이 재현되지 않음"
            then = f"그래도 판정한다면 {verdict_word(would, lang)}" if would else "판정하지 않음"
            return f"{verdict_word(verdict, lang)} — {why}; {then}"
        why = "its premise fails" if verdict == "out of regime" else "the gain it would explain is not reproduced"
        return f"{verdict} — {why}; " + (f"judged anyway it would be {would}" if would else "it is not judged")
    if verdict == "undecided" and reason:
        return f"학습률에 따라 갈림 ({reason})" if ko else f"undecided across the learning rates ({reason})"
    return PLAIN["ko" if ko else "en"].get(verdict, verdict_word(verdict, lang))


# A declared test's kind in Korean (the English word is the kind's own name).
KIND_KO = {"claim": "주장", "check": "점검", "control": "대조군"}
