"""Chapter 09 as an argument: for each of the article's four questions, the strongest number that speaks *for* its
conclusion ("QK decides where to look, V is what is moved: attention seen through QK alone is only half") and the
strongest that speaks *against* it, each with the model, corpus and regime it holds in, said in plain sentences.
Question 1 asks *how much*, so it also gets its own measure: what the deep layers' fresh pattern is worth.

A number is an :class:`Evidence`: a loss change in nats with its 95 % interval, the verdict of its declared test
(None for a description) and which way it must point to speak for the conclusion (``favours``). Its side is read from
the number itself (:func:`side`), never typed, so the words of :func:`evidence_sentence` follow its sign, its size and
its verdict. :func:`build_argument` gathers the candidates from chapter 09's evidence
(:func:`~vrs_edu.chapters.ch09_the_four_answers.answers.gather_evidence`) and keeps the strongest of each side
(:func:`strongest`); :func:`answer_line` says the question's answer in one line.

Both editions: every sentence builder takes ``lang`` (default: the running notebook's edition). An Evidence keeps one
set of numbers and its words twice: the English fields, and in ``ko`` the Korean counterpart of each text field
(same keys: ``label``, ``subject``, ``pos``, ``neg``, ``model``, ``corpus``, ``regime``, ``where``, ``meaning``,
``point``, ``claim``), read by :func:`words`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.language import resolve_language
from vrs_edu.i18n.verdicts import verdict_word
from vrs_edu.lab.results import DECIDED, Verdict

SHORT_QUESTIONS = {1: "a deep layer's need for its fresh QK pattern", 2: "early information kept through V",
                   3: "a selective read over depth", 4: "gains from reusing V"}
CORPUS_WORDS = {"kjv": "the King James Bible", "python-docs": "the Python documentation",
                "pydoc_data.topics": "the Python documentation"}
CORPUS_SHORT = {"kjv": "KJV", "python-docs": "Python docs", "pydoc_data.topics": "Python docs"}
SHORT_QUESTIONS_KO = {1: "깊은 층의 새 QK 패턴 의존도", 2: "V를 통해 유지되는 초기 정보", 3: "깊이에 걸친 선택적 읽기",
                      4: "V 재사용의 이득"}
CORPUS_WORDS_KO = {"kjv": "King James Bible", "python-docs": "Python 문서", "pydoc_data.topics": "Python 문서"}
CORPUS_SHORT_KO = {"kjv": "KJV", "python-docs": "Python 문서", "pydoc_data.topics": "Python 문서"}
SMALL, LARGE = 0.05, 1.0   # nats: the course's tolerance, and a change as large as a whole nat


@dataclass(frozen=True)
class Evidence:
    """One number of the argument: a loss change (or a difference of two) in ``unit`` with its 95 % interval.

    ``subject`` and the verb phrases ``pos`` / ``neg`` (for a positive / negative mean, with ``{amount}`` where the
    size goes) say what was measured; ``verdict`` is its declared test's verdict (None: a description, no test) and
    ``claim`` that test's claim in words. ``favours``: which number speaks *for* the conclusion, ``"positive"`` (a
    mean above 0), ``"negative"`` (below 0) or ``"cheap"`` (a cost below ``margin``); ``"measure"`` for a number that
    takes no side but answers the question's "how much" (question 1: what the fresh pattern is worth). ``meaning``
    holds, per side, why a number on that side counts for or against (no numbers in it; a measure's keys are
    ``"needed"`` and ``"spare"``: a cost above or below ``margin``); ``point`` the side's gist in a few words, for
    the one-line answer. ``model``, ``corpus``, ``regime``: where the number holds; ``where`` a short form."""

    question: int
    label: str
    subject: str
    pos: str
    neg: str
    mean: float
    lo: float
    hi: float
    verdict: str | None
    favours: str
    model: str
    corpus: str
    regime: str
    where: str
    chapter: str
    meaning: dict = field(default_factory=dict)
    point: dict = field(default_factory=dict)
    claim: str | None = None
    margin: float = SMALL
    unit: str = "nats"
    ko: dict = field(default_factory=dict)


def _is_ko(lang: str | None) -> bool:
    return resolve_language(lang) == "ko"


def words(e: Evidence, name: str, lang: str | None = None):
    """The text field ``name`` of ``e`` in the edition ``lang``: its Korean counterpart ``e.ko[name]`` in the Korean
    edition (the English field where none was given), else the English field."""
    if _is_ko(lang) and name in e.ko:
        return e.ko[name]
    return getattr(e, name)


def side(e: Evidence) -> str:
    """``"for"`` or ``"against"`` the conclusion, from the number: its sign against ``favours`` ("cheap": the mean
    below ``margin``); a *negligible* verdict on a sign claim counts against (the effect is too small to matter).
    A measure (``favours == "measure"``) takes no side: ``"measure"``."""
    if e.favours == "measure":
        return "measure"
    if e.favours == "cheap":
        return "for" if e.mean < e.margin else "against"
    if e.verdict == "negligible":
        return "against"
    up = e.mean > 0
    return "for" if up == (e.favours == "positive") else "against"


def firm(e: Evidence) -> bool:
    """Whether the number decides its side: a decided verdict (reproduced, contradicted, negligible), or, for a
    description (no declared test: ``verdict`` None), a 95 % interval wholly on its side of the line (the
    tolerance for a cost read as "cheap", else 0). A declared test that is undecided never counts as firm, even
    where its unadjusted interval clears a line: the verdict, with its Holm correction, is what was declared."""
    if e.verdict in DECIDED:
        return True
    if e.verdict is not None:
        return False
    line = e.margin if e.favours in ("cheap", "measure") else 0.0
    return e.hi < line or e.lo > line


def strongest(candidates: list[Evidence], which: str) -> Evidence | None:
    """The strongest number on side ``which`` ("for", "against" or "measure"): a firm one before the others, then a decided
    verdict before an undecided one, then the largest size; None when no candidate is on that side."""
    on_side = [e for e in candidates if side(e) == which]
    return max(on_side, key=lambda e: (firm(e), e.verdict in DECIDED, abs(e.mean)), default=None)


def amount(x: float, unit: str = "nats", small: float = SMALL, large: float = LARGE, lang: str | None = None) -> str:
    """The size of a change in words: ``only 0.016 nats`` (below ``small``; ``small=0`` never says "only", for a
    gain that the sentence does not belittle), ``0.58 nats``, ``as much as 5.93 nats`` (``large`` or more); two
    decimals from 0.1 on, three below. Korean: ``겨우 0.016 nats``, ``0.58 nats``, ``5.93 nats나`` (the amount is
    followed by a verb in every Korean template)."""
    a = abs(x)
    num = f"{a:.3f}" if a < 0.1 else f"{a:.2f}"
    text = f"{num} {unit}".strip()
    if _is_ko(lang):
        return f"겨우 {text}" if a < small else f"{text}나" if a >= large else text
    return f"only {text}" if a < small else f"as much as {text}" if a >= large else text


def verdict_clause(verdict: str | None, claim: str | None = None, margin: float | None = None,
                   lang: str | None = None) -> str:
    """What a verdict says, in words a learner can quote: a reproduced or contradicted test names its claim ("the
    claim "…" holds (reproduced)"), a negligible one its margin, an undecided one that noise could explain it.
    Korean: a sentence of its own, without the final period (``주장 "…"는 잡음으로 설명할 수 없을 만큼 분명히
    성립합니다(재현됨)``)."""
    if _is_ko(lang):
        return _verdict_clause_ko(verdict, claim, margin)
    named = f"the claim \"{claim}\"" if claim else "its declared test's claim"
    if verdict is None:
        return "a description: no test was declared on it"
    if verdict == "reproduced":
        return f"{named} holds beyond noise (reproduced)"
    if verdict == "contradicted":
        return f"{named} fails beyond noise (contradicted)"
    if verdict == "negligible":
        inside = f" ±{margin:g} nats" if margin is not None else " its smallest effect of interest"
        return f"too small to matter: its interval lies inside{inside} (negligible)"
    if verdict == "undecided":
        return "but noise could explain it once the number of tests is allowed for (undecided)"
    if verdict == "out of regime":
        return "not judged: a premise of its test failed (out of regime)"
    return verdict


def _verdict_clause_ko(verdict: str | None, claim: str | None, margin: float | None) -> str:
    named = attach(f"주장 \"{claim}\"", "은/는") if claim else "선언된 검정의 주장은"
    word = verdict_word(verdict, "ko") if verdict is not None else ""
    if verdict is None:
        return "서술입니다. 이 수치에는 선언된 검정이 없습니다"
    if verdict == "reproduced":
        return f"{named} 잡음으로 설명할 수 없을 만큼 분명히 성립합니다({word})"
    if verdict == "contradicted":
        return f"{named} 잡음으로 설명할 수 없을 만큼 분명히 틀렸습니다({word})"
    if verdict == "negligible":
        inside = f"±{margin:g} nats" if margin is not None else "관심 최소 효과"
        return f"중요하지 않을 만큼 작습니다. 구간이 {inside} 안에 있습니다({word})"
    if verdict == "undecided":
        return f"다만 검정의 수를 감안하면 잡음으로 설명될 수 있습니다({word})"
    if verdict == "out of regime":
        return f"판정하지 않았습니다. 검정의 전제 조건이 성립하지 않았습니다({word})"
    return word


def _num(x: float, digits: int) -> str:
    return f"{x:+.{digits}f}"


def evidence_sentence(e: Evidence, lang: str | None = None) -> str:
    """One quotable sentence: where the number holds, what was measured, its size in words (from its sign and
    size), its interval and its verdict; then, when the number decides its side (:func:`firm`), why it counts for
    or against (its side's ``meaning``): an undecided number is not read as the reason it would give."""
    d = 3 if max(abs(e.lo), abs(e.hi)) < 1 else 2       # one precision for both ends
    if _is_ko(lang):
        w = lambda name: words(e, name, "ko")  # noqa: E731
        verb = w("pos" if e.mean >= 0 else "neg").format(amount=amount(e.mean, e.unit, small_for(e), LARGE, "ko"))
        head = (f"{w('model')}({w('corpus')}; {w('regime')})에서 {w('subject')} {verb}"
                f"(95 % 구간 {_num(e.lo, d)} ~ {_num(e.hi, d)} {e.unit}). "
                f"{verdict_clause(e.verdict, w('claim'), e.margin if e.verdict == 'negligible' else None, 'ko')}.")
        why = w("meaning").get(_reading(e), "") if firm(e) else ""
        return head + (f" {why}" if why else "")
    verb = (e.pos if e.mean >= 0 else e.neg).format(amount=amount(e.mean, e.unit, small_for(e), LARGE, "en"))
    head = (f"In {e.model} ({e.corpus}; {e.regime}), {e.subject} {verb} "
            f"(95 % interval {_num(e.lo, d)} to {_num(e.hi, d)} {e.unit}): "
            f"{verdict_clause(e.verdict, e.claim, e.margin if e.verdict == 'negligible' else None, 'en')}.")
    why = e.meaning.get(_reading(e), "") if firm(e) else ""
    return head + (f" {why}" if why else "")


def _reading(e: Evidence) -> str:
    """Which of ``meaning``'s texts a number gives: its side, or for a measure whether the cost is above its margin."""
    if side(e) == "measure":
        return "needed" if e.mean >= e.margin else "spare"
    return side(e)


def small_for(e: Evidence) -> float:
    """The size below which a change is said with "only": a cost, compared with the test's tolerance (a cost read as
    cheap, or a measure) or the course's 0.05; never a gain (a loss lowered), which "only" would belittle."""
    if e.mean < 0:
        return 0.0
    return e.margin if e.favours in ("cheap", "measure") else SMALL


ANSWER_WORDS = {(True, True): "Partly", (True, False): "Yes", (False, True): "No", (False, False): "Not decided"}
ANSWER_WORDS_Q1 = {**ANSWER_WORDS, (True, True): "Yes, both halves count"}
# Question 3 asks whether the stream *can be designed* as a selective read: one firm design answers it, but not
# every design tried does (chapter 05's "Partly" counts them), so the word says so.
ANSWER_WORDS_Q3 = {**ANSWER_WORDS, (True, False): "Yes, it can be designed (not every design tried does it)"}
# The same words in Korean, each a sentence of its own in the answer line.
ANSWER_WORDS_KO = {(True, True): "부분적으로 그렇습니다", (True, False): "예", (False, True): "아니요",
                   (False, False): "결정되지 않았습니다"}
ANSWER_WORDS_Q1_KO = {**ANSWER_WORDS_KO, (True, True): "예, 두 절반 모두 중요합니다"}
ANSWER_WORDS_Q3_KO = {**ANSWER_WORDS_KO, (True, False): "예, 그렇게 설계할 수 있습니다(시도한 설계가 모두 그렇지는 않습니다)"}
# Question 1's "how much" in Korean, alone and with "and what they move counts more".
MEASURE_WORDS_KO = {"A lot": ("많이 의존합니다", "많이 의존하며, 옮기는 것은 더 중요합니다"),
                    "Little": ("거의 의존하지 않습니다", "거의 의존하지 않으며, 옮기는 것이 더 중요합니다"),
                    "Not decided": ("결정되지 않았습니다", "결정되지 않았고, 옮기는 것이 더 중요합니다")}
# the labels of the two sides in Korean: the paragraphs' and the answer line's
SIDE_KO = {"for": "찬성 근거", "against": "반대 근거", "measure": "얼마나"}
# an empty side in Korean: nothing of what was measured speaks for (against) the conclusion
NOTHING_KO = {"for": "측정한 것 중 결론을 뒷받침하는 수치는 없습니다.",
              "against": "측정한 것 중 결론에 반하는 수치는 없습니다."}
# the article's conclusion in its own Korean words (chapter 00 quotes them), then what they mean
CONCLUSION_KO = ("원문은 *\"QK는 기준이고 V는 내용이다\"*라고 결론지었습니다(QK는 어디를 볼지 정하고 V는 "
                 "옮겨지는 내용이며, QK만 보면 절반만 본다).")


def measure_words(m: Evidence | None, lang: str | None = None) -> tuple[str, str]:
    """Question 1's "how much" from its measure: ``("A lot", "the deep layers need their fresh pattern (another
    text's patterns in the last third cost 1.24 nats; where)")`` for a firm cost above the margin, ``("Little", …)`` for a firm one below,
    ``("Not decided", …)`` otherwise; ``("", "")`` without a measure. Korean: the same English word (the key of
    :data:`MEASURE_WORDS_KO`), and the gist in Korean (``깊은 층에는 새 패턴이 필요합니다(… 1.24 nats; …)``)."""
    if m is None:
        return "", ""
    # the word, the same for both languages: not decided unless firm, then from the cost against the margin
    reading = _reading(m) if firm(m) else None
    key = "Not decided" if reading is None else "A lot" if reading == "needed" else "Little"
    if _is_ko(lang):
        w = lambda name: words(m, name, "ko")  # noqa: E731
        if reading is None:
            return key, f"새 패턴의 가치는 잡음과 구별되지 않습니다({w('where')})"
        cost = f"{w('point')['cost']} {amount(m.mean, m.unit, 0.0, math.inf, 'ko')}; {w('where')}"  # a noun: no 나
        return key, f"{w('point')[reading]}({cost})"
    if reading is None:
        return key, f"what the fresh pattern is worth is not told apart from noise ({m.where})"
    cost = f"{m.point['cost']} {amount(m.mean, m.unit, 0.0, lang='en')}; {m.where}"
    return key, f"{m.point[reading]} ({cost})"


def answer_line(n: int, pro: Evidence | None, con: Evidence | None, measure: Evidence | None = None,
                lang: str | None = None) -> str:
    """Question ``n``'s answer in one line: a word from which sides are firm (Yes, No, Partly, Not decided), then
    each side's gist with where it holds, or that the side's strongest number is not told apart from noise.
    With a ``measure`` (question 1 asks *how much*), its size comes first ("A lot: …") and the sides follow.
    Korean: short sentences, the sides labelled 찬성 근거 and 반대 근거."""
    firm_sides = (pro is not None and firm(pro), con is not None and firm(con))   # the same for both languages
    v_too = firm_sides[0] and side(pro) == "for"        # with a measure: "and what they move counts more"
    if _is_ko(lang):
        return _answer_line_ko(n, pro, con, measure, firm_sides, v_too)
    words = {1: ANSWER_WORDS_Q1, 3: ANSWER_WORDS_Q3}.get(n, ANSWER_WORDS)[firm_sides]

    def part(e: Evidence | None, which: str) -> str:
        if e is None:
            return f"nothing measured speaks {which} it"
        if not firm(e):
            return f"the strongest number {which} it is not told apart from noise ({e.where})"
        return f"{e.point[which]} ({e.where})"

    how_much, measured = measure_words(measure, "en")
    if how_much:
        more = ", and what they move counts more" if v_too else ""
        return f"{how_much}{more}: {measured}; {part(pro, 'for')}; {part(con, 'against')}."
    return f"{words}: {part(pro, 'for')}; {part(con, 'against')}."


def _answer_line_ko(n: int, pro: Evidence | None, con: Evidence | None, measure: Evidence | None,
                    firm_sides: tuple[bool, bool], v_too: bool) -> str:

    def part(e: Evidence | None, which: str) -> str:
        if e is None:
            return f"{SIDE_KO[which]}: {NOTHING_KO[which]}"
        if not firm(e):
            return f"{SIDE_KO[which]}: 가장 강한 수치가 잡음과 구별되지 않습니다({words(e, 'where', 'ko')})."
        return f"{SIDE_KO[which]}: {words(e, 'point', 'ko')[which]}({words(e, 'where', 'ko')})."

    how_much, measured = measure_words(measure, "ko")
    if how_much:
        alone, more = MEASURE_WORDS_KO[how_much]
        head = f"{more if v_too else alone}. {measured}."
    else:
        head = {1: ANSWER_WORDS_Q1_KO, 3: ANSWER_WORDS_Q3_KO}.get(n, ANSWER_WORDS_KO)[firm_sides] + "."
    return f"{head} {part(pro, 'for')} {part(con, 'against')}"


def argument_rows(candidates: dict[int, list[Evidence]], lang: str | None = None) -> list[dict]:
    """``[{"n", "for", "against", "measure", "answer"}]`` for questions 1-4: each side's strongest number
    (:func:`strongest`), the question's own measure if it has one (question 1), and the one-line answer (in
    ``lang``)."""
    out = []
    for n in (1, 2, 3, 4):
        pro, con, measure = (strongest(candidates.get(n, []), w) for w in ("for", "against", "measure"))
        out.append({"n": n, "for": pro, "against": con, "measure": measure,
                    "answer": answer_line(n, pro, con, measure, lang)})
    return out


def side_sentences(row: dict, lang: str | None = None) -> list[str]:
    """A question's measure, if it has one, as **How much.** …, then its two sides as Markdown paragraphs:
    **For.** … and **Against.** … (Korean: **얼마나.**, **찬성 근거.**, **반대 근거.**)"""
    if _is_ko(lang):
        out = [f"**{SIDE_KO['measure']}.** {evidence_sentence(row['measure'], 'ko')}"] if row.get("measure") else []
        nothing = {"for": "강좌가 측정한 것 중 여기서 결론을 뒷받침하는 것은 없습니다.",
                   "against": "강좌가 측정한 것 중 여기서 결론에 반하는 것은 없습니다."}
        for which in ("for", "against"):
            e = row[which]
            out.append(f"**{SIDE_KO[which]}.** {evidence_sentence(e, 'ko') if e else nothing[which]}")
        return out
    out = [f"**How much.** {evidence_sentence(row['measure'], 'en')}"] if row.get("measure") else []
    for which in ("for", "against"):
        e = row[which]
        text = evidence_sentence(e, "en") if e else f"Nothing the course measured speaks {which} the conclusion here."
        out.append(f"**{which.capitalize()}.** {text}")
    return out


def argue_paragraphs(row: dict, *extra: str, lang: str | None = None) -> list[str]:
    """A question's paragraphs as the chapter prints them: its measure and sides (:func:`side_sentences`), any
    ``extra`` sentences that are not empty, then **Answer.** and its one-line answer (Korean: **답.**)."""
    answer = "**답.**" if _is_ko(lang) else "**Answer.**"
    return [*side_sentences(row, lang), *[x for x in extra if x], f"{answer} {row['answer']}"]


def answer_paragraphs(rows: list[dict], lang: str | None = None) -> list[str]:
    """The chapter's answer: each question's one-line answer (**Q1.** …; Korean **질문 1.** …), then
    :func:`closing`."""
    q = "질문 " if _is_ko(lang) else "Q"
    return [*[f"**{q}{r['n']}.** {r['answer']}" for r in rows], closing(rows, lang)]


def mhc_sentence(loss: Verdict | None, matched: Verdict | None, regime: dict | None, lang: str | None = None) -> str:
    """mHC (manifold-constrained hyper-connections: four residual streams mixed by a learned doubly-stochastic
    matrix, shipped in DeepSeek-V4) against the single residual stream and against the baseline with as many
    parameters in its MLPs, words from each test's sign and verdict; ``regime``: the run's
    :func:`~vrs_edu.chapters.ch09_the_four_answers.answers.regime_parts`. "" without the production-designs
    result."""
    if loss is None:
        return ""
    if _is_ko(lang):
        return _mhc_sentence_ko(loss, matched, regime)
    where = (f"the {regime['layers']}-layer toy on {_corpus(regime['corpus'])}, {regime['epochs']:.2f} epochs, "
             f"{regime['seeds']} paired seeds" if regime else "the toy")
    verb = "lowers" if loss.mean < 0 else "raises"
    out = (f"A production design reads depth selectively too: mHC (manifold-constrained hyper-connections, four "
           f"residual streams mixed by a learned doubly-stochastic matrix, shipped in DeepSeek-V4) {verb} the toy's "
           f"loss by {amount(loss.mean, small=small_gain(loss.mean), lang='en')} against the single residual stream "
           f"({where}; {verdict_clause(loss.verdict, 'mHC lowers the loss', lang='en')})")
    if matched is not None:
        beats = "beats" if matched.mean < 0 else "does not beat"
        out += (f", and it {beats} a control with as many parameters in its MLPs by "
                f"{amount(matched.mean, small=small_gain(matched.mean), lang='en')} "
                f"({matched.verdict})")
    return out + "."


def _mhc_sentence_ko(loss: Verdict, matched: Verdict | None, regime: dict | None) -> str:
    where = (f"{regime['layers']}층 장난감 모델, {_corpus(regime['corpus'], 'ko')}, {regime['epochs']:.2f} 에폭, "
             f"짝지은 시드 {regime['seeds']}개" if regime else "장난감 모델")
    verb = "낮춥니다" if loss.mean < 0 else "높입니다"
    out = (f"실제로 쓰이는 설계도 깊이를 선택적으로 읽습니다. mHC(manifold-constrained hyper-connections: 학습된 이중 "
           f"확률 행렬로 섞는 잔차 스트림 네 개, DeepSeek-V4에 탑재)는 단일 잔차 스트림에 비해 장난감 모델의 손실을 "
           f"{amount(loss.mean, small=small_gain(loss.mean), lang='ko')} {verb}({where}). "
           f"{verdict_clause(loss.verdict, 'mHC가 손실을 낮춘다', lang='ko')}.")
    if matched is not None:
        than = "보다도 손실이 {} 낮습니다" if matched.mean < 0 else "보다 손실이 {} 높습니다"
        out += (f" MLP의 파라미터 수를 맞춘 대조군{than.format(amount(matched.mean, small=small_gain(matched.mean), lang='ko'))}"
                f"({verdict_word(matched.verdict, 'ko')}).")
    return out


def small_gain(x: float) -> float:
    """:func:`amount`'s ``small`` for a loss change: a gain (below 0) is never said with "only"."""
    return 0.0 if x < 0 else SMALL


# --- the candidates, from chapter 09's evidence -----------------------------------------------------------------

def _from(v: Verdict) -> dict:
    return {"mean": v.mean, "lo": v.ci[0], "hi": v.ci[1], "verdict": v.verdict}


def _corpus(name: str | None, lang: str = "en") -> str:
    if lang == "ko":
        return CORPUS_WORDS_KO.get(name or "", name or "이름 없는 말뭉치")
    return CORPUS_WORDS.get(name or "", name or "an unnamed corpus")


def _short(name: str | None, lang: str = "en") -> str:
    return (CORPUS_SHORT_KO if lang == "ko" else CORPUS_SHORT).get(name or "", name or "?")


# Korean claims of the toys' declared tests that the argument names (the English claim is the test's own)
TOY_CLAIMS_KO = {"bank_loss": "값 뱅크가 손실을 낮춘다", "substitute_loss": "x0·W_V로 바꾼 값이 손실을 낮춘다"}


def build_candidates(ev: dict) -> dict[int, list[Evidence]]:
    """Every number that can speak for or against each question, from chapter 09's evidence (``ev``: see
    :func:`~vrs_edu.chapters.ch09_the_four_answers.answers.gather_evidence`): the toys' declared tests recomputed
    on the verdict corpus, chapter 02's swaps on the character model, the real decoder's stored verdicts and
    numbers. A number whose result is missing is left out. Each Evidence carries its words in both editions (``ko``:
    the Korean counterpart of each text field)."""
    toy, dec = ev["toys"], ev.get("decoder") or {}
    reg = ev.get("regimes", {})
    model = ev.get("decoder_model") or {}
    d_name = str(model.get("name", "SmolLM2")).split(" ")[0]
    d_model = f"the {model.get('n_layers', '?')}-layer decoder {d_name}" if model else "the real decoder"
    d_model_ko = f"{model.get('n_layers', '?')}층 디코더 {d_name}" if model else "실제 디코더"
    d_corpus, d_corpus_ko = _corpus(ev.get("decoder_corpus")), _corpus(ev.get("decoder_corpus"), "ko")
    kjv, kjv_ko = _corpus(ev["corpus"]), _corpus(ev["corpus"], "ko")
    d_short = d_model.split(' ')[-1]
    dl = f"{d_short.split('-')[0]}, post hoc"   # figure labels
    d_short_ko = d_short if model else "디코더"
    dl_ko = f"{d_short_ko.split('-')[0]}, 사후적"
    d_where, d_where_ko = f"{d_short}, post hoc", f"{d_short_ko}, 사후적"
    tl, tl_ko = f"toy on {_short(ev['corpus'])}", f"{_short(ev['corpus'], 'ko')} 장난감 모델"
    c: dict[int, list[Evidence]] = {1: [], 2: [], 3: [], 4: []}

    def toy_model(recipe: str, lang: str = "en") -> str:
        r = reg.get(recipe)
        if lang == "ko":
            return f"{r['layers']}층 × 폭 {r['width']} 단어 수준 장난감 모델" if r else "단어 수준 장난감 모델"
        return f"the {r['layers']}-layer × width {r['width']} word-level toy" if r else "the word-level toy"

    def toy_regime(recipe: str, how: str, lang: str = "en") -> str:
        r = reg.get(recipe)
        if lang == "ko":
            return f"{how}, {r['epochs']:.2f} 에폭, 짝지은 시드 {r['seeds']}개" if r else how
        return f"{how}, {r['epochs']:.2f} epochs, {r['seeds']} paired seeds" if r else how

    # Question 1: what a deep layer moves (V) against where it looks (its fresh pattern)
    dv = dec.get("late_value_swap_costs_more_than_pattern_swap")
    q1_meaning = {"for": "Losing what the layers move costs more than losing where they look: V carries at least "
                         "half of what attention does, which QK alone does not see.",
                  "against": "Losing where the layers look costs more than losing what they move: here the pattern "
                             "carries most of what attention does."}
    q1_point = {"for": "what deep layers move (V) costs more to lose than where they look",
                "against": "where deep layers look costs more to lose than what they move"}
    q1_ko = {"meaning": {"for": "층이 옮기는 것을 잃는 비용이 층이 보는 곳을 잃는 비용보다 큽니다. V는 어텐션이 하는 일의 "
                                "절반 이상을 나르며, QK만으로는 그것이 보이지 않습니다.",
                         "against": "층이 보는 곳을 잃는 비용이 층이 옮기는 것을 잃는 비용보다 큽니다. 여기서는 패턴이 "
                                    "어텐션이 하는 일의 대부분을 나릅니다."},
             "point": {"for": "깊은 층이 옮기는 것(V)을 잃는 비용이 보는 곳을 잃는 비용보다 큽니다",
                       "against": "깊은 층이 보는 곳을 잃는 비용이 옮기는 것을 잃는 비용보다 큽니다"},
             "pos": "패턴을 바꿀 때보다 비용이 {amount} 더 듭니다", "neg": "패턴을 바꿀 때보다 비용이 {amount} 덜 듭니다"}
    if dv is not None:
        c[1].append(Evidence(1, f"{dl}: value swap − pattern swap", "swapping in another text's values",
                             "costs {amount} more than swapping in its pattern",
                             "costs {amount} less than swapping in its pattern", **_from(dv), favours="positive",
                             model=d_model, corpus=d_corpus, regime="post hoc, its last third swapped together",
                             where=d_where, chapter="08", meaning=q1_meaning,
                             point=q1_point, claim="the value swap costs more than the pattern swap",
                             ko={**q1_ko, "label": f"{dl_ko}: 값 교환 − 패턴 교환", "subject": "다른 텍스트의 값으로 바꾸면",
                                 "model": d_model_ko, "corpus": d_corpus_ko,
                                 "regime": "사후적, 마지막 3분의 1을 한꺼번에 교환", "where": d_where_ko,
                                 "claim": "값 교환의 비용이 패턴 교환의 비용보다 크다"}))
    sw = ev.get("swaps")
    if sw is not None:
        d, half = sw["last"]
        char_corpus_ko = _corpus(ev.get("char_corpus"), "ko")
        layers = ev.get("char_layers")
        c[1].append(Evidence(1, f"character toy on {_short(ev.get('char_corpus'))}: value − pattern swap",
                             "at its last layer, swapping in another text's values",
                             "costs {amount} more than swapping in its pattern",
                             "costs {amount} less than swapping in its pattern", d, d - half, d + half, None,
                             "positive", model=ev.get("char_model", "the character-level toy"),
                             corpus=_corpus(ev.get("char_corpus")), regime="one trained model, validation batches",
                             where=f"the character-level toy on {_corpus(ev.get('char_corpus'))}", chapter="02",
                             meaning=q1_meaning, point=q1_point,
                             ko={**q1_ko, "label": f"{_short(ev.get('char_corpus'), 'ko')} 문자 장난감 모델: 값 교환 − 패턴 교환",
                                 "subject": "마지막 층에서 다른 텍스트의 값으로 바꾸면",
                                 "model": f"{layers}층 문자 수준 장난감 모델" if layers else "문자 수준 장난감 모델",
                                 "corpus": char_corpus_ko, "regime": "학습된 모델 하나, 검증 배치",
                                 "where": f"{char_corpus_ko}의 문자 수준 장난감 모델"}))
    # What the fresh pattern is worth: question 1's "how much", not a side (needing the pattern and V mattering
    # more are both what the conclusion says: QK is half, not nothing).
    stand_in = {"spare": "A stand-in pattern would do: the deep layers hardly need their fresh QK pattern.",
                "needed": "The fresh pattern cannot be dropped: where a deep layer looks matters, so QK is a "
                          "real half, not a spare one."}
    stand_in_ko = {"spare": "대체 패턴으로도 충분합니다. 깊은 층에는 새로 계산한 QK 패턴이 거의 필요 없습니다.",
                   "needed": "새 패턴은 버릴 수 없습니다. 깊은 층이 어디를 보는지가 중요하므로, QK는 여분이 아니라 "
                             "진짜 절반입니다."}
    for name, what, what_ko in (("late_pattern_swap_within_tolerance", "another text's", "다른 텍스트의"),
                                ("late_previous_pattern_within_tolerance", "the previous layer's", "이전 층의")):
        v = dec.get(name)
        # "cost" names the stand-in, so the number is not read as another chapter's (chapter 08's uniform one)
        stand_point = {"spare": "the deep layers hardly need their fresh pattern",
                       "needed": "the deep layers need their fresh pattern",
                       "cost": f"{what} patterns in the last third cost"}
        if v is not None:
            c[1].append(Evidence(1, f"{dl}: {what} pattern", f"giving its whole last third {what} patterns",
                                 "costs {amount}", "lowers the loss by {amount}", **_from(v), favours="measure",
                                 model=d_model, corpus=d_corpus, regime="post hoc, ten layers swapped together",
                                 where=d_where, chapter="08", meaning=stand_in,
                                 point=stand_point, claim="a stand-in pattern costs within 0.05 nats",
                                 ko={"label": f"{dl_ko}: {what_ko} 패턴",
                                     "subject": f"마지막 3분의 1 전체에 {what_ko} 패턴을 주면",
                                     "pos": "비용이 {amount} 듭니다", "neg": "손실이 {amount} 낮아집니다",
                                     "model": d_model_ko, "corpus": d_corpus_ko,
                                     "regime": "사후적, 10개 층을 한꺼번에 교환", "where": d_where_ko,
                                     "meaning": stand_in_ko,
                                     "point": {"spare": "깊은 층에는 새 패턴이 거의 필요 없습니다",
                                               "needed": "깊은 층에는 새 패턴이 필요합니다",
                                               "cost": f"마지막 3분의 1에 {what_ko} 패턴을 준 비용"},
                                     "claim": "대체 패턴의 비용은 0.05 nats 이내다"}))
    # Question 2: early information (token identity) kept through V
    for name, subject, subject_ko in (
            ("bank_loss", "looking V up by token id in a trained table (the bank of values)",
             "V를 학습된 표에서 토큰 id로 찾아 읽으면(값 뱅크)"),
            ("substitute_loss", "feeding the last third's V from the token embedding x0",
             "마지막 3분의 1의 V를 토큰 임베딩 x0에서 가져오면")):
        v = toy.get(name)
        if v is not None:
            c[2].append(Evidence(2, f"{tl}: {name.split('_')[0]} V, trained", subject, "raises the loss by {amount}",
                                 "lowers the loss by {amount}", **_from(v),
                                 favours="negative" if name == "bank_loss" else "cheap",
                                 model=toy_model("bank-of-values"), corpus=kjv,
                                 regime=toy_regime("bank-of-values", "trained that way from the start"),
                                 where=f"the word-level toy on {kjv}, trained with it", chapter="04",
                                 margin=v.test.margin if v.test.margin is not None else SMALL,
                                 meaning={"for": "Trained with a path for it, a model can keep early information, "
                                                 "token identity, in its deep V at no cost.",
                                          "against": "Even trained with the path, keeping token identity in V "
                                                     "costs loss."},
                                 point={"for": "trained with a path for it, a model keeps token identity in V",
                                        "against": "token identity in V costs loss even when trained in"},
                                 claim=v.test.claim.split(" (")[0],
                                 ko={"label": f"{tl_ko}: {'값 뱅크' if name == 'bank_loss' else '대체'} V, 처음부터 학습",
                                     "subject": subject_ko, "pos": "손실이 {amount} 높아집니다",
                                     "neg": "손실이 {amount} 낮아집니다", "model": toy_model("bank-of-values", "ko"),
                                     "corpus": kjv_ko,
                                     "regime": toy_regime("bank-of-values", "처음부터 그렇게 학습", "ko"),
                                     "where": f"{kjv_ko}의 단어 수준 장난감 모델, 그 방식으로 학습",
                                     "meaning": {"for": "경로를 주고 학습하면, 모델은 초기 정보인 토큰 정체성을 깊은 V에 "
                                                        "비용 없이 담을 수 있습니다.",
                                                 "against": "그 경로를 주고 학습해도, 토큰 정체성을 V에 담으면 손실이 "
                                                            "늘어납니다."},
                                     "point": {"for": "경로를 주고 학습하면 모델은 토큰 정체성을 V에 담습니다",
                                               "against": "처음부터 학습해도 V에 토큰 정체성을 담으면 손실이 늘어납니다"},
                                     "claim": TOY_CLAIMS_KO.get(name, v.test.claim.split(" (")[0])}))
    tv = dec.get("late_v_table_beats_q_table")
    if tv is not None:
        c[2].append(Evidence(2, f"{dl}: V table − Q table", "a per-token table in place of V",
                             "costs {amount} more than one in place of Q", "costs {amount} less than one in place of Q",
                             **_from(tv), favours="negative", model=d_model, corpus=d_corpus,
                             regime="post hoc, in its last third", where=d_where,
                             chapter="08",
                             meaning={"for": "A table of token identities, the earliest information there is, "
                                             "stands in for V more easily than for Q: deep V keeps mostly early "
                                             "information.",
                                      "against": "A per-token table is token identity, the earliest information "
                                                 "there is: if deep V kept mostly that, the table would cost little "
                                                 "in V's place. It costs more there than in Q's, so this decoder's "
                                                 "deep V carries what the context added. That V matters most here "
                                                 "is why this counts against question 2: V matters as a carrier of "
                                                 "context, not of early information."},
                             point={"for": "a standard decoder's deep V is mostly token identity",
                                    "against": "a standard decoder's deep V carries context, not token identity"},
                             claim="V tolerates a per-token table better than Q",
                             ko={"label": f"{dl_ko}: 토큰별 표: V 자리 − Q 자리", "subject": "V 자리에 토큰별 표를 넣으면",
                                 "pos": "Q 자리에 넣을 때보다 비용이 {amount} 더 듭니다",
                                 "neg": "Q 자리에 넣을 때보다 비용이 {amount} 덜 듭니다", "model": d_model_ko,
                                 "corpus": d_corpus_ko, "regime": "사후적, 마지막 3분의 1에서", "where": d_where_ko,
                                 "meaning": {"for": "가장 이른 정보인 토큰 정체성의 표가 Q보다 V를 더 쉽게 대신합니다. "
                                                    "깊은 V는 주로 초기 정보를 담습니다.",
                                             "against": "토큰별 표는 토큰 정체성, 곧 가장 이른 정보입니다. 깊은 V가 주로 "
                                                        "그것을 담는다면 V 자리의 표는 비용이 적을 것입니다. 그런데 Q "
                                                        "자리보다 V 자리에서 비용이 더 크므로, 이 디코더의 깊은 V는 "
                                                        "문맥이 더한 것을 나릅니다. 여기서 V가 가장 중요하다는 사실이 "
                                                        "질문 2에서 이 수치가 결론에 반하는 이유입니다. V는 초기 정보가 "
                                                        "아니라 문맥을 나르는 것으로서 중요합니다."},
                                 "point": {"for": "표준 디코더의 깊은 V는 대부분 토큰 정체성입니다",
                                           "against": "표준 디코더의 깊은 V는 토큰 정체성이 아니라 문맥을 나릅니다"},
                                 "claim": "V는 Q보다 토큰별 표를 잘 견딘다"}))
    # Question 3: a selective read over depth against the running sum
    q3_meaning = {"for": "A read that chooses which layers to take beats the plain running sum: the stream can be "
                         "designed as a selective read.",
                  "against": "The selective read does no better than the plain running sum."}
    q3_meaning_ko = {"for": "어느 층을 가져올지 고르는 읽기가 평범한 누적 합을 이깁니다. 스트림은 선택적 읽기로 설계할 수 "
                            "있습니다.",
                     "against": "선택적 읽기가 평범한 누적 합보다 나을 것이 없습니다."}
    q3_point = {"for": "a selective read over depth beats the running sum",
                "against": "ShortSWA over depth, the design the question names, shows no gain"}
    q3_point_ko = {"for": "깊이에 걸친 선택적 읽기가 누적 합을 이깁니다",
                   "against": "질문이 지목한 설계인 깊이 축 ShortSWA는 이득을 보이지 않습니다"}
    for v in toy.values():
        if v.test.family != "ch05" and v.test.name != "depth_attention_loss":
            continue
        name = v.test.name.removesuffix("_loss")
        recipe = "v-over-depth" if name == "depth_attention" else "depth-mixers"
        shortswa = name.startswith("shortswa")
        point = dict(q3_point) if shortswa else {
            "for": q3_point["for"], "against": f"{name} does no better than the running sum"}
        point_ko = dict(q3_point_ko) if shortswa else {
            "for": q3_point_ko["for"], "against": f"{attach(name, '은/는')} 누적 합보다 나을 것이 없습니다"}
        c[3].append(Evidence(3, f"{tl}: {name} − residual", f"the depth read {name}",
                             "raises the loss by {amount} against the running sum",
                             "lowers the loss by {amount} against the running sum", **_from(v), favours="negative",
                             model=toy_model(recipe), corpus=kjv, regime=toy_regime(recipe, "trained from the start"),
                             where=f"the word-level toy on {kjv}", chapter="05", meaning=q3_meaning, point=point,
                             claim=f"{name} lowers the loss",
                             ko={"label": f"{tl_ko}: {name} − 잔차", "subject": f"깊이 읽기 {attach(name, '은/는')}",
                                 "pos": "누적 합에 비해 손실을 {amount} 높입니다",
                                 "neg": "누적 합에 비해 손실을 {amount} 낮춥니다", "model": toy_model(recipe, "ko"),
                                 "corpus": kjv_ko, "regime": toy_regime(recipe, "처음부터 학습", "ko"),
                                 "where": f"{kjv_ko}의 단어 수준 장난감 모델", "meaning": q3_meaning_ko,
                                 "point": point_ko, "claim": f"{attach(name, '이/가')} 손실을 낮춘다"}))
    # Question 4: efficiency from reusing V
    cache = ev.get("cache", {})
    for name, design in (("svformer_cost", "svformer"),):
        v = toy.get(name)
        if v is not None:
            share = f", keeping {cache[design]:.0%} of the KV cache," if design in cache else ""
            share_ko = f", KV 캐시의 {cache[design]:.0%} 유지" if design in cache else ""
            c[4].append(Evidence(4, f"{tl}: SVFormer, trained", f"one V for every layer (SVFormer){share}",
                                 "raises the loss by {amount}", "lowers the loss by {amount}", **_from(v),
                                 favours="cheap", model=toy_model("value-residual"), corpus=kjv,
                                 regime=toy_regime("value-residual", "trained that way from the start"),
                                 where=f"the word-level toy on {kjv}, trained with it", chapter="03, 06",
                                 meaning={"for": "Reusing V saves cache at no cost once the model is trained with "
                                                 "the reuse.",
                                          "against": "Reusing V costs loss even when the model is trained with it."},
                                 point={"for": "trained with it, one V for every layer saves cache at no cost",
                                        "against": "reusing V costs loss even when trained in"},
                                 claim="SVFormer costs loss",
                                 ko={"label": f"{tl_ko}: SVFormer, 처음부터 학습",
                                     "subject": f"모든 층이 V 하나를 쓰면(SVFormer{share_ko})",
                                     "pos": "손실이 {amount} 높아집니다", "neg": "손실이 {amount} 낮아집니다",
                                     "model": toy_model("value-residual", "ko"), "corpus": kjv_ko,
                                     "regime": toy_regime("value-residual", "처음부터 그렇게 학습", "ko"),
                                     "where": f"{kjv_ko}의 단어 수준 장난감 모델, 그 방식으로 학습",
                                     "meaning": {"for": "재사용을 넣고 학습한 모델에서는 V 재사용이 비용 없이 캐시를 "
                                                        "아낍니다.",
                                                 "against": "재사용을 넣고 학습해도 V 재사용은 손실을 늘립니다."},
                                     "point": {"for": "처음부터 그렇게 학습하면, 모든 층이 V 하나를 쓰는 설계는 비용 없이 "
                                                      "캐시를 아낍니다",
                                               "against": "처음부터 학습해도 V 재사용은 손실을 늘립니다"},
                                     "claim": "SVFormer는 손실을 늘린다"}))
    for name, what, label, what_ko, label_ko in (
            ("late_v1_reuse_within_tolerance", "reading the first layer's V (V := V_1)", "V := V_1",
             "마지막 3분의 1이 첫 층의 V를 읽게 하면(V := V_1)", "V := V_1"),
            ("late_shared_v_within_tolerance", "sharing one V between two adjacent layers", "one V for two layers",
             "마지막 3분의 1의 이웃한 두 층이 V 하나를 공유하게 하면", "두 층에 V 하나")):
        v = dec.get(name)
        if v is not None:
            c[4].append(Evidence(4, f"{dl}: {label}", f"{what} in its last third", "costs {amount}",
                                 "lowers the loss by {amount}", **_from(v), favours="cheap", model=d_model,
                                 corpus=d_corpus, regime="post hoc, imposed after training",
                                 where=d_where, chapter="08",
                                 meaning={"for": "Even imposed on a model trained without it, the reuse is free.",
                                          "against": "Imposed on a model trained without it, the reuse is far from "
                                                     "free: the savings need a model trained with them."},
                                 point={"for": "even imposed after training, V reuse is free",
                                        "against": "imposed after training, V reuse is far from free"},
                                 claim="the reuse costs within 0.05 nats",
                                 ko={"label": f"{dl_ko}: {label_ko}", "subject": what_ko,
                                     "pos": "비용이 {amount} 듭니다", "neg": "손실이 {amount} 낮아집니다",
                                     "model": d_model_ko, "corpus": d_corpus_ko, "regime": "사후적, 학습 후에 적용",
                                     "where": d_where_ko,
                                     "meaning": {"for": "재사용 없이 학습된 모델에 적용해도 재사용은 공짜입니다.",
                                                 "against": "재사용 없이 학습된 모델에 적용하면 재사용은 전혀 공짜가 "
                                                            "아닙니다. 그 절약에는 재사용을 넣고 학습한 모델이 "
                                                            "필요합니다."},
                                     "point": {"for": "학습 후에 적용해도 V 재사용은 공짜입니다",
                                               "against": "학습 후에 적용한 V 재사용은 전혀 공짜가 아닙니다"},
                                     "claim": "재사용의 비용은 0.05 nats 이내다"}))
    return c


def footing_sentence(rows: list[dict], lang: str | None = None) -> str:
    """What the figure's numbers rest on: how many are decided by their declared test, how many are undecided or
    out of regime, how many are descriptions (no test), and how many come from a real model measured post hoc."""
    es = [r[w] for r in rows for w in ("measure", "for", "against") if r.get(w) is not None]
    decided = sum(e.verdict in DECIDED for e in es)
    described = sum(e.verdict is None for e in es)
    post_hoc = sum("post hoc" in e.regime for e in es)
    if _is_ko(lang):
        return (f"수치 {len(es)}개 중 {decided}개는 선언된 검정으로 결정되었고, {len(es) - decided - described}개는 "
                f"결정되지 않았으며(미정 또는 적용 범위 밖), "
                + ("검정 없는 서술은 없습니다" if described == 0 else f"{described}개는 검정 없는 서술입니다")
                + f". {post_hoc}개는 사후적으로 측정한 실제 디코더에서 나왔고(모델 하나, 말뭉치 하나, 실행 하나: "
                f"반복의 단위는 평가 시퀀스입니다), 나머지는 여기서 학습한 장난감 모델에서 나왔습니다(단위는 시드입니다).")
    return (f"Of the {len(es)} numbers, {decided} are decided by their declared test, "
            f"{len(es) - decided - described} {'is' if len(es) - decided - described == 1 else 'are'} not "
            f"(undecided or out of regime) and "
            + ("none is a description" if described == 0 else "1 is a description" if described == 1 else
               f"{described} are descriptions") + f" with no test; {post_hoc} come from "
            f"the real decoder measured post hoc (one model, one corpus, one run: its evaluation sequences are the "
            f"unit of replication), the others from toys trained here (seeds are the unit).")


def _cost_words(x: float, lang: str = "en") -> str:
    if lang == "ko":
        return f"비용이 {amount(x, lang='ko')} 듭니다" if x >= 0 else f"손실이 {amount(x, lang='ko')} 낮아집니다"
    return f"costs {amount(x, lang='en')}" if x >= 0 else f"lowers the loss by {amount(x, lang='en')}"


def capstone_sentence(layer: int, n_layers: int, uniform: float, pattern: float, values: float,
                      lang: str | None = None) -> str:
    """The exercise's answer for one layer of a trained model, from its three loss changes (nats): whether the
    layer needs its own pattern (a uniform one costs more than the course's 0.05-nat tolerance), whether its values
    matter more than its pattern (the value swap costs more than the pattern swap), and what that answers."""
    # the same for both languages: the layer needs its own pattern, its values matter more, and what that answers
    needs, v_more = uniform > SMALL, values > pattern
    answer = "both" if needs and v_more else "pattern" if needs else "values" if v_more else "neither"
    if _is_ko(lang):
        return _capstone_sentence_ko(layer, n_layers, uniform, pattern, values, needs, v_more, answer)
    where = f"layer {layer}, the last of {n_layers}" if layer == n_layers - 1 else f"layer {layer} of {n_layers}"
    out = (f"At {where}, replacing the pattern by a uniform one {_cost_words(uniform)}, by another text's "
           f"{_cost_words(pattern)}, and replacing the values by another text's {_cost_words(values)}. ")
    out += ("The layer needs its own pattern (looking nowhere in particular costs more than 0.05 nats)"
            if needs else "The layer hardly needs its own pattern (looking nowhere in particular costs at most "
            "0.05 nats)")
    out += (", and what it moves matters more than where it looks (the value swap costs more than the pattern "
            "swap). " if v_more else ", and where it looks matters more than what it moves (the pattern swap "
            "costs at least as much as the value swap). ")
    answer = {"both": "both halves count, and QK alone would see the smaller one",
              "pattern": "the pattern carries more here: QK alone sees more than half",
              "values": "V carries what matters; the pattern could be a stand-in",
              "neither": "neither half costs much at this layer"}[answer]
    return out + f"For this model and layer, question 1's answer: {answer}."


def _capstone_sentence_ko(layer: int, n_layers: int, uniform: float, pattern: float, values: float, needs: bool,
                          v_more: bool, answer: str) -> str:
    where = (f"{n_layers}개 층 중 마지막 층(0부터 세어 {layer}번 층)에서" if layer == n_layers - 1 else
             f"{n_layers}개 층 중 {layer}번 층(0부터 셈)에서")
    out = (f"{where} 패턴을 균등한 패턴으로 바꾸면 {_cost_words(uniform, 'ko')}. 다른 텍스트의 패턴으로 바꾸면 "
           f"{_cost_words(pattern, 'ko')}. 값을 다른 텍스트의 값으로 바꾸면 {_cost_words(values, 'ko')}. ")
    out += ("이 층에는 자기 패턴이 필요합니다(아무 데도 특별히 보지 않으면 비용이 0.05 nats를 넘습니다). " if needs else
            "이 층에는 자기 패턴이 거의 필요 없습니다(아무 데도 특별히 보지 않아도 비용이 0.05 nats 이하입니다). ")
    out += ("또한 이 층은 보는 곳보다 옮기는 것이 더 중요합니다(값 교환의 비용이 패턴 교환보다 큽니다). " if v_more else
            "또한 이 층은 옮기는 것보다 보는 곳이 더 중요합니다(패턴 교환의 비용이 값 교환 이상입니다). ")
    answer = {"both": "두 절반 모두 중요하며, QK만 보면 더 작은 쪽을 보게 됩니다",
              "pattern": "여기서는 패턴이 더 많이 나릅니다. QK만으로도 절반 넘게 보입니다",
              "values": "중요한 것은 V가 나릅니다. 패턴은 대체 패턴으로도 충분할 수 있습니다",
              "neither": "이 층에서는 어느 절반도 비용이 크지 않습니다"}[answer]
    return out + f"이 모델과 이 층에 대한 질문 1의 답: {answer}."


def closing(rows: list[dict], lang: str | None = None) -> str:
    """The chapter's closing paragraph from the four answers: the article's conclusion said back with what each
    side's strongest numbers decided, and which questions depend on the regime (a firm number on each side)."""
    ko = _is_ko(lang)
    both = [r["n"] for r in rows if r["for"] is not None and r["against"] is not None
            and firm(r["for"]) and firm(r["against"])]
    only_for = [r["n"] for r in rows if r["for"] is not None and firm(r["for"]) and r["n"] not in both]
    only_against = [r["n"] for r in rows if r["against"] is not None and firm(r["against"]) and r["n"] not in both]

    def qs(ns: list[int]) -> str:
        if ko:
            names = [str(n) for n in ns]
            return "질문 " + (names[0] if len(ns) == 1 else f"{attach(', '.join(names[:-1]), '과/와')} {names[-1]}")
        return ("question " if len(ns) == 1 else "questions ") + " and ".join(map(str, ns))

    if ko:
        out = [f"{CONCLUSION_KO} 이 결론은 성립할까요?"]
    else:
        out = ["Does \"QK decides where to look, V is what is moved; QK alone sees only half\" hold?"]
    first = rows[0]
    m = first.get("measure")
    if 1 in only_for and m is not None and firm(m) and _reading(m) == "needed":
        only_for.remove(1)
        out.append("질문 1에서는 결론대로 두 절반 모두 중요합니다. 깊은 층에는 새 패턴이 필요하고, 옮기는 것을 잃는 "
                   "비용은 그보다도 큽니다." if ko else
                   "In question 1 both halves count, as it says: the deep layers need their fresh pattern, and "
                   "losing what they move costs more still.")
    if ko:
        if only_for:
            out.append(f"{qs(only_for)}에서는 확고한 뒷받침이 있고, 이에 반하는 확고한 수치는 없습니다.")
        if only_against:
            out.append(f"{qs(only_against)}에서는 이에 반하는 확고한 수치만 있습니다.")
        if both:
            out.append(f"{qs(both)}에서는 양쪽 모두 확고한 수치가 있고, 각각 자기 모델과 학습 조건에서 성립합니다. 답은 "
                       "어떤 모델을, 어떻게 학습시켜 묻느냐에 달려 있습니다.")
        return " ".join(out)
    if only_for:
        out.append(f"It has firm support and no firm number against it in {qs(only_for)}.")
    if only_against:
        out.append(f"It has only firm numbers against it in {qs(only_against)}.")
    if both:
        out.append(f"In {qs(both)} both sides hold firm numbers, each in its own model and regime: the answer "
                   "depends on which model, trained how, is asked.")
    return " ".join(out)
