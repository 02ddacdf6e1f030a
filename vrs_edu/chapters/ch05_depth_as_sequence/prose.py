"""Chapter 05's computed sentences: the effect under its first figure, the routers' line, and "The answer" (short
in the chapter, in full in its appendix).

Each function chooses its words from the sign, the size and the verdict of the numbers it states, so that a
sentence cannot say "Yes" where its own numbers say no, or "lowers the loss by -0.02". The inputs are the verdict
rows of :mod:`vrs_edu.chapters.ch05_depth_as_sequence.recipe` and :mod:`vrs_edu.chapters.ch05_depth_as_sequence.v_over_depth` (objects with
``test.name``, ``mean``, ``ci``, ``verdict``, ``reason`` and ``interval()``) or the effect dicts of
:func:`vrs_edu.chapters.ch05_depth_as_sequence.v_over_depth.loss_effects` (``name``, ``mean``, ``ci``, ``verdict``). Losses are final
validation losses in nats, a variant's minus the residual's, paired by seed (< 0: the variant is better).

Verdict words come from the verdict they name (:func:`vrs_edu.lab.verdict_words.verdict_label`): *negligible* is never
counted as a win or a loss, and an out-of-regime verdict is printed with its would-be verdict. The routers' x0
margins are read as V − Q and V − K apart (never V − max(Q, K), whose null lies below 0) and may be descriptions
(:class:`vrs_edu.lab.premises.Description`: ``name``, ``mean``, ``ci``, ``why``, no verdict) rather than verdicts.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.language import in_language, resolve_language
from vrs_edu.lab.premises import LM_TOYS_SHORT
from vrs_edu.lab.verdict_words import verdict_label
from vrs_edu.viz.prose import declared_result, table

SHORTSWA = "shortswa"   # the variant names of ShortSWA over depth start with it (shortswa-k2, -k4, -full)


def loss_change(mean: float, ci, verdict) -> str:
    """``"lowers the loss by 0.023 nats (reproduced)"``: the direction in words from the sign of ``mean``, its size
    unsigned, then the verdict (:func:`~vrs_edu.lab.verdict_words.verdict_label`: a word or a judged test; a negligible one
    reads "negligible: too small to matter", an out-of-regime one names its would-be verdict); "leaves the loss
    unchanged" for a mean of exactly 0. ``ci`` is accepted for the callers' symmetry but not printed: the visible
    sentences leave intervals to "How sure are we?"."""
    verb = ("lowers the loss by" if mean < 0 else "raises the loss by" if mean > 0
            else "leaves the loss unchanged,")
    size = f" {abs(mean):.3f} nats" if mean != 0 else ""
    word = verdict_label(verdict, 'en')
    if word == "negligible":
        word = "negligible: too small to matter"
    return f"{verb}{size} ({word})"


DECIDED = "decided once we allow for the number of tests"


def _names(items) -> str:
    items = list(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else (items[0] if items else "none")


def _names_ko(items) -> str:
    """Korean "a, b and c" (the particle 과/와 after the last-but-one name); "없음" for none."""
    items = list(items)
    if not items:
        return "없음"
    return ", ".join(items[:-2] + [attach(items[-2], "과/와") + " " + items[-1]]) if len(items) > 1 else items[0]


def _loss_change_ko(mean: float, verdict) -> str:
    """:func:`loss_change` in Korean, a sentence's predicate: "손실을 0.023 nats 낮춥니다(재현됨)"."""
    word = verdict_label(verdict, "ko")
    if word in ("negligible", "무시할 만함"):
        word = f"{word}: 의미를 갖기에는 너무 작음"
    if mean == 0:
        return f"손실을 바꾸지 않습니다({word})"
    return f"손실을 {abs(mean):.3f} nats {'낮춥니다' if mean < 0 else '높입니다'}({word})"


DECIDED_KO = "검정 횟수를 감안해도 결정된 결과입니다"


@dataclass(frozen=True)
class _EffectFacts:
    """What :func:`effect_sentence` states, selected once for both languages: ``n`` claims (checks left out),
    whether Depth-Attention is among them, ``won`` (the reproduced effects, largest win first), ``swa`` (ShortSWA
    over depth's effects) and ``swa_won`` (the names of those reproduced), ``lost`` (the contradicted names) and
    ``small`` (the negligible names); the effects are the dicts of
    :func:`~vrs_edu.chapters.ch05_depth_as_sequence.v_over_depth.loss_effects`."""
    n: int
    depth_attention: bool
    won: list[dict]
    swa: list[dict]
    swa_won: list[str]
    lost: list[str]
    small: list[str]


def _effect_facts(effects: list[dict]) -> _EffectFacts:
    """The selections of :func:`effect_sentence` from ``effects`` (claims and checks; a check's verdict starts with
    "check"). Raises ValueError when ``effects`` holds no claim (only checks)."""
    claims = [e for e in effects if not e["verdict"].startswith("check")]
    if not claims:
        raise ValueError("effects: expected at least one claim (a verdict not starting with 'check'), got none")
    swa = [e for e in claims if e["name"].startswith(SHORTSWA)]
    return _EffectFacts(n=len(claims), depth_attention=any(e["name"] == "depth_attention" for e in claims),
                        won=sorted((e for e in claims if e["verdict"] == "reproduced"), key=lambda e: e["mean"]),
                        swa=swa, swa_won=[e["name"] for e in swa if e["verdict"] == "reproduced"],
                        lost=[e["name"] for e in claims if e["verdict"] == "contradicted"],
                        small=[e["name"] for e in claims if e["verdict"] == "negligible"])


def _effect_sentence_ko(f: _EffectFacts) -> str:
    """:func:`effect_sentence` in Korean, one sentence per finding."""
    da = " Depth-Attention을 포함해" if f.depth_attention else ""
    out = [f"깊이에 걸친 읽기 {f.n}가지 가운데{da} {len(f.won)}가지가 잔차 합보다 손실을 낮추며, 이는 "
           f"{DECIDED_KO}."]
    if f.won:
        out.append(f"가장 크게 낮춘 {attach(f.won[0]['name'], '은/는')} "
                   + _loss_change_ko(f.won[0]["mean"], "reproduced") + ".")
    if f.swa:
        changes = "; ".join(f"{e['name']} {e['mean']:+.3f} nats, {verdict_label(e, 'ko')}" for e in f.swa)
        out.append(f"이 장의 질문이 가리키는 읽기인 깊이 방향 ShortSWA는 {attach(_names_ko(f.swa_won), '으로/로')} "
                   f"이깁니다({changes})." if f.swa_won else
                   f"이 장의 질문이 가리키는 읽기인 깊이 방향 ShortSWA는 그 안에 들지 않습니다({changes}).")
    out.append(f"{attach(_names_ko(f.lost), '은/는')} 손실을 높이며, 결정된 결과입니다." if f.lost
               else "손실을 높이는 읽기는 없으며, 결정된 결과입니다.")
    if f.small:
        out.append(f"{attach(_names_ko(f.small), '은/는')} 부호와 상관없이 손실을 실행 전에 선언한 관심 최소 효과보다 "
                   "작게 바꿉니다. 무시할 만함, 의미를 갖기에는 너무 작음.")
    return " ".join(out)


def _effect_sentence_en(f: _EffectFacts) -> str:
    """:func:`effect_sentence` in English."""
    da = " counting Depth-Attention," if f.depth_attention else ""
    out = (f"{len(f.won)} of the {f.n} reads over depth,{da} lower the loss below the residual sum's, "
           f"{DECIDED}")
    out += (f"; the most, {f.won[0]['name']}, " + loss_change(f.won[0]["mean"], f.won[0]["ci"], "reproduced")
            if f.won else "")
    if f.swa:
        changes = "; ".join(f"{e['name']} {e['mean']:+.3f} nats, {verdict_label(e, 'en')}" for e in f.swa)
        out += (f". ShortSWA over depth, the read this chapter's question names, wins with "
                f"{_names(f.swa_won)} ({changes})" if f.swa_won else
                f". ShortSWA over depth, the read this chapter's question names, is not among them ({changes})")
    out += f". {_names(f.lost)} raise{'s' if len(f.lost) == 1 else ''} the loss, decided." if f.lost \
        else ". None raises it, decided."
    if f.small:
        out += (f" {_names(f.small)} change{'s' if len(f.small) == 1 else ''} it by less than the smallest effect "
                "declared before the run, whichever the sign: negligible, too small to matter.")
    return out


def effect_sentence(effects: list[dict], lang: str | None = None) -> str:
    """The sentence under chapter 05's first figure: how many reads lowered the loss (decided), the largest win,
    ShortSWA over depth's own result (the read the chapter's question names) and any decided loss; the selections
    are :func:`_effect_facts`'s, the same for both languages.

    ``lang``: "en" or "ko" (None: the running notebook's edition). Raises ValueError when ``effects`` holds no
    claim (only checks)."""
    f = _effect_facts(effects)
    return _effect_sentence_ko(f) if resolve_language(lang) == "ko" else _effect_sentence_en(f)


def premise_sentence(premise: float, threshold: float, lang: str | None = None) -> str:
    """What the routers' x0 question needs: the baseline's deep-input x0-R² (``premise``) below ``threshold``, the
    one threshold of this premise across the chapters (chapter 04's ``deep_context`` too:
    :data:`vrs_edu.lab.premises.DEEP_X0_R2`). "holds" or "fails" follows the number."""
    holds = premise < threshold
    if resolve_language(lang) == "ko":
        return (f"이 질문에는 실행 전에 04장과 05장을 위해 한 번 선언한 전제가 있습니다: 기준선의 깊은 층 입력이 대부분 "
                f"문맥, 즉 x0-R² {threshold:g} 미만이어야 합니다. 그렇지 않으면 모든 경로가 이미 입력을 통해 x0을 "
                "읽으므로, V, Q, K 입력 사이의 어떤 차이도 어느 경로가 그것을 필요로 하는지 말할 수 없습니다. 여기서 "
                f"입력은 토큰 정체성이 {premise:.3f}, 문맥이 {1 - premise:.1%}입니다: 전제는 "
                f"**{'성립합니다' if holds else '성립하지 않습니다'}**.")
    return (f"The question has a premise, declared once for chapters 04 and 05 before the runs: the baseline's deep "
            f"inputs must be mostly context, an x0-R² below {threshold:g}, or every path already reads x0 through "
            f"its input and no difference between V's, Q's and K's inputs can say which path needs it. Here they "
            f"are {premise:.3f} token identity, {1 - premise:.1%} context: the premise "
            f"**{'holds' if holds else 'fails'}**.")


ROUTER_X0 = "_v_reads_x0_more_than_"   # the routers' x0 margins: {router}_v_reads_x0_more_than_{q|k}


def _row_name(r) -> str:
    test = getattr(r, "test", None)
    return test.name if test is not None else r.name


def router_sentence(rows: list, premise: float | None = None, threshold: float | None = None,
                    lang: str | None = None) -> str:
    """The routers' line: in how many routers V's deep input carries more token identity (x0-R²) than Q's, and
    than K's, each router's V − Q and V − K mean and interval, then either their verdicts (rows that are judged
    tests) or, for descriptions (rows without a verdict), one sentence on why they are not judged, naming the
    baseline's deep-input x0-R² ``premise`` against ``threshold`` when given. ``rows``: one per router and
    contrast, named ``{router}_v_reads_x0_more_than_q`` / ``_k``.

    Raises ValueError on empty ``rows`` or a row of another name."""
    if not rows:
        raise ValueError("rows: expected the routers' V − Q and V − K rows, got none")
    by: dict[str, dict[str, object]] = {}
    for r in rows:
        name = _row_name(r)
        if ROUTER_X0 not in name or name.rsplit("_", 1)[1] not in ("q", "k"):
            raise ValueError(f"rows: expected names '<router>{ROUTER_X0}q' or '...k' (V − Q and V − K apart; "
                             f"V − max(Q, K) is not read), got {name!r}")
        router, other = name.split(ROUTER_X0)
        by.setdefault(router, {})[other] = r
    n = len(by)
    above = {s: sum(1 for d in by.values() if s in d and d[s].mean > 0) for s in "qk"}
    each = "; ".join(f"{router} " + ", ".join(f"V − {s.upper()} {d[s].interval()}" for s in "qk" if s in d)
                     for router, d in by.items())
    judged = [r for r in rows if getattr(r, "verdict", None) is not None]
    if resolve_language(lang) == "ko":
        out = (f"V의 입력은 라우터 {n}개 중 {above['q']}개에서 Q의 입력보다, {n}개 중 {above['k']}개에서 K의 입력보다 "
               f"토큰 정체성을 더 많이 담습니다(깊은 층과 시드에 걸친 평균; x0-R² 차이: {each}).")
        if not judged:
            where = (f"(이 모델에서는 {premise:.3f}, {threshold:g}보다 높음)" if premise is not None
                     and threshold is not None else "")
            return out + (" 이것들은 판정하지 않은 서술입니다: 그 전제, 곧 깊은 입력이 대부분 문맥이라는 것이 이 모델과 "
                          f"모든 언어 모델 장난감에서 성립하지 않으므로{where}, V는 이미 입력을 통해 x0을 읽고 있을 수 "
                          "있고 경로 사이의 어떤 차이도 어느 경로가 그것을 필요로 하는지 말할 수 없습니다.")
        return out + " 검정 횟수를 감안한 판정: " + "; ".join(
            f"{_row_name(r).split(ROUTER_X0)[0]} V − {_row_name(r)[-1].upper()} {verdict_label(r, lang)}"
            for r in judged) + "."
    out = (f"V's input carries more token identity than Q's in {above['q']} of the {n} routers and more than K's "
           f"in {above['k']} of the {n}, on average over the deep layers and seeds (x0-R² differences: {each}).")
    if not judged:
        where = (f" (here {premise:.3f}, above {threshold:g})" if premise is not None and threshold is not None
                 else "")
        return out + (" These are descriptions, not judged: their premise, deep inputs mostly context, fails on "
                      f"this model{where} and on every language-model toy, so V may read x0 through its input "
                      "already and no difference between the paths can say which one needs it.")
    return out + " Verdicts, allowing for the number of tests: " + "; ".join(
        f"{_row_name(r).split(ROUTER_X0)[0]} V − {_row_name(r)[-1].upper()} {verdict_label(r, 'en')}"
        for r in judged) + "."


def answer_opening(loss_rows: list) -> str:
    """"Yes", "Partly" or "Not shown", from the loss verdicts (family ``ch05``): Yes only when a ShortSWA-over-depth
    variant, the read the question names, lowers the loss (reproduced); Partly when only other reads do; Not
    shown when none does."""
    won = [r.test.name.removesuffix("_loss") for r in loss_rows if r.verdict == "reproduced"]
    if any(n.startswith(SHORTSWA) for n in won):
        return "Yes"
    return "Partly" if won else "Not shown"


OPENING_KO = {"Yes": "예", "Partly": "부분적으로", "Not shown": "보이지 않음"}


@dataclass(frozen=True)
class _Answer:
    """What chapter 05's answers (:func:`short_answer`, :func:`answer_paragraph`) state, selected once for both
    languages. ``opening``: :func:`answer_opening`'s word (English; :data:`OPENING_KO` in Korean); ``n``: the
    reads over depth (the mixers' loss rows and Depth-Attention); ``won``: the reproduced ones, largest win first,
    ``best`` the first's name (None without a win); ``swa``: ShortSWA over depth's loss rows, ``swa_lo`` and
    ``swa_hi`` their smallest and largest mean, ``swa_among`` whether one is reproduced; ``streams``: the stream
    tests' verdict words, sorted, once each, of ``n_streams`` tests. :func:`answer_paragraph`'s alone (None or
    empty for the short answer): ``control`` (the best read's scalar-gain control row), ``attnres`` (Depth-Attention
    against Attention Residuals), ``stream_check`` and ``judged`` (the routers' rows that carry a verdict)."""
    opening: str
    regime: str
    n: int
    won: list
    best: str | None
    swa: list
    swa_lo: float
    swa_hi: float
    swa_among: bool
    depth_attention: object
    streams: list[str]
    n_streams: int
    control: object | None = None
    attnres: object | None = None
    stream_check: object | None = None
    judged: tuple = ()


def _answer_facts(loss_rows: list, depth_attention, stream_verdicts: list[str], regime: str, controls=(),
                  attnres=None, stream_check=None, routers=()) -> _Answer:
    """The selections of chapter 05's answers (:class:`_Answer`) from the mixers' loss rows, the Depth-Attention
    row against the baseline, the stream tests' verdict words and, for :func:`answer_paragraph`, the scalar-gain
    controls, Depth-Attention against Attention Residuals, the stream check and the routers' rows.
    Raises ValueError on empty ``loss_rows``."""
    if not loss_rows:
        raise ValueError("loss_rows: expected the mixers' loss verdicts (family ch05), got none")
    reads = list(loss_rows) + [depth_attention]     # the same set as the effect sentence: Depth-Attention too
    won = sorted((r for r in reads if r.verdict == "reproduced"), key=lambda r: r.mean)
    best = won[0].test.name.removesuffix("_loss") if won else None
    swa = [r for r in loss_rows if r.test.name.startswith(SHORTSWA)]
    means = [r.mean for r in swa]
    return _Answer(opening=answer_opening(loss_rows), regime=regime, n=len(reads), won=won, best=best, swa=swa,
                   swa_lo=min(means, default=math.nan), swa_hi=max(means, default=math.nan),
                   swa_among=any(r.verdict == "reproduced" for r in swa), depth_attention=depth_attention,
                   streams=sorted(set(stream_verdicts)), n_streams=len(stream_verdicts),
                   control={r.test.name.removesuffix("_beats_scalar_gain"): r for r in controls}.get(best),
                   attnres=attnres, stream_check=stream_check,
                   judged=tuple(r for r in routers if getattr(r, "verdict", None) is not None))


def _answer_paragraph_en(a: _Answer) -> str:
    """:func:`answer_paragraph` in English."""
    d_res, d_ar, ctrl = a.depth_attention, a.attnres, a.control
    out = f"**{a.opening}**, in this regime — {a.regime}. "
    if a.won:
        best = a.won[0]
        out += (f"{len(a.won)} of the {a.n} reads over depth, counting Depth-Attention, lower the loss below "
                f"the residual sum's, {DECIDED}; the most, {a.best}, " + loss_change(best.mean, best.ci, best))
        if ctrl is not None:
            out += (f", and against the scalar-gain control {ctrl.mean:+.3f} nats ({verdict_label(ctrl, 'en')}): "
                    + ("the win needs the read over older layers, not only a gain."
                       if ctrl.verdict == "reproduced" else "a learned gain alone may explain it."))
        else:
            out += "."
    else:
        out += (f"None of the {a.n} reads over depth, counting Depth-Attention, lowers the loss below the "
                f"residual sum's, {DECIDED}.")
    if a.swa:
        out += (" ShortSWA over depth itself: " + "; ".join(
            f"{r.test.name.removesuffix('_loss')} {r.mean:+.3f} nats ({verdict_label(r, 'en')})" for r in a.swa) + ".")
    out += (" Depth-Attention, whose query reads V over depth at the baseline's KV cache, "
            + loss_change(d_res.mean, d_res.ci, d_res)
            + f"; against Attention Residuals {d_ar.mean:+.3f} nats ({verdict_label(d_ar, 'en')}).")
    router_v = (f"the routers' tests are {_names(sorted({verdict_label(r, 'en') for r in a.judged}))}" if a.judged else
                "the routers' V − Q and V − K margins are descriptions, not judged (their premise fails)")
    out += (" Whether deep V *chooses* the embedding while Q and K read recent layers is not answered here: the "
            f"claim's own instrument puts its stream test{'s' if a.n_streams != 1 else ''} "
            f"{_names(a.streams)}; its loss is "
            f"{a.stream_check.mean:+.3f} nats from the baseline's, {verdict_label(a.stream_check, 'en')} as "
            f"\"no worse\" (an equivalence test); and {router_v}.")
    return out


def _answer_paragraph_ko(a: _Answer) -> str:
    """:func:`answer_paragraph` in Korean."""
    d_res, d_ar, ctrl = a.depth_attention, a.attnres, a.control
    out = f"**{OPENING_KO[a.opening]}**, 이 조건에서는 — {a.regime}. "
    if a.won:
        best = a.won[0]
        out += (f"깊이에 걸친 읽기 {a.n}가지(Depth-Attention 포함) 가운데 {len(a.won)}가지가 잔차 합보다 손실을 "
                f"낮추며, {DECIDED_KO}. 가장 크게 낮춘 {attach(a.best, '은/는')} " + _loss_change_ko(best.mean, best)
                + ".")
        if ctrl is not None:
            out += (f" 스칼라 게인 대조군과 비교하면 {ctrl.mean:+.3f} nats({verdict_label(ctrl, 'ko')})입니다: "
                    + ("이 이득에는 게인만이 아니라 이전 층들에 대한 읽기가 필요합니다."
                       if ctrl.verdict == "reproduced" else "학습된 게인 하나만으로도 설명될 수 있습니다."))
    else:
        out += (f"깊이에 걸친 읽기 {a.n}가지(Depth-Attention 포함) 가운데 잔차 합보다 손실을 낮추는 것은 "
                f"없으며, {DECIDED_KO}.")
    if a.swa:
        out += (" 깊이 방향 ShortSWA 자체: " + "; ".join(
            f"{r.test.name.removesuffix('_loss')} {r.mean:+.3f} nats({verdict_label(r, 'ko')})" for r in a.swa) + ".")
    out += (" 쿼리가 기준선의 KV 캐시로 깊이에 걸친 V를 읽는 Depth-Attention은 " + _loss_change_ko(d_res.mean, d_res)
            + f". Attention Residuals와 비교하면 {d_ar.mean:+.3f} nats({verdict_label(d_ar, 'ko')})입니다.")
    router_v = (f"라우터들의 검정은 {_names_ko(sorted({verdict_label(r, 'ko') for r in a.judged}))}입니다" if a.judged
                else "라우터들의 V − Q와 V − K 차이는 판정하지 않은 서술입니다(전제가 성립하지 않음)")
    out += (" Q와 K가 최근 층을 읽는 동안 깊은 V가 임베딩을 *고르는가*에는 여기서 답하지 않습니다: 주장 자체의 도구가 "
            f"내린 스트림 검정의 판정은 {_names_ko(a.streams)}입니다. 그 손실은 기준선과 "
            f"{a.stream_check.mean:+.3f} nats 차이이며, \"나쁘지 않음\"(동등성 검정)으로는 "
            f"{verdict_label(a.stream_check, 'ko')}입니다. 그리고 {router_v}.")
    return out


def answer_paragraph(loss_rows: list, controls: list, depth_attention: list, stream_check, routers: list,
                     stream_verdicts: list[str], regime: str, lang: str | None = None) -> str:
    """Chapter 05's closing answer to "can the residual stream be a selective read over depth (ShortSWA over
    depth)?": :func:`answer_opening`, the best read and its control, ShortSWA over depth's own result,
    Depth-Attention against the baseline and Attention Residuals (``depth_attention``: those two rows), and why
    the per-stream question stays open (``stream_check``: the instrument's "no worse" check; ``routers``: the
    routers' primary rows; ``stream_verdicts``: the stream claims' verdicts). ``regime``: the words that say
    which models, steps and corpus the verdicts hold for. The selections are :func:`_answer_facts`'s, the same for
    both languages. ``lang``: "en" or "ko" (None: the running notebook's edition). Raises ValueError on empty
    ``loss_rows``."""
    d_res, d_ar = depth_attention
    a = _answer_facts(loss_rows, d_res, stream_verdicts, regime, controls, d_ar, stream_check, routers)
    return _answer_paragraph_ko(a) if resolve_language(lang) == "ko" else _answer_paragraph_en(a)


def _short_answer_en(a: _Answer) -> str:
    """:func:`short_answer` in English."""
    out = f"**{a.opening}**, in this regime — {a.regime}. "
    if a.won:
        out += (f"{len(a.won)} of the {a.n} reads over depth (Depth-Attention among them) lower the loss, "
                f"decided; the most, {a.best}, " + loss_change(a.won[0].mean, a.won[0].ci, a.won[0]) + ".")
    else:
        out += f"None of the {a.n} reads over depth (Depth-Attention among them) lowers the loss, decided."
    if a.swa:
        size = f"{a.swa_lo:+.3f} nats" if len(a.swa) == 1 else f"{a.swa_lo:+.3f} to {a.swa_hi:+.3f} nats"
        out += (f" ShortSWA over depth, the read the question names, {'is' if a.swa_among else 'is not'} among "
                f"them: its {len(a.swa)} window{'s change' if len(a.swa) != 1 else ' changes'} the loss by {size} "
                f"({_names(sorted({verdict_label(r, 'en') for r in a.swa}))}).")
    # The embedding read is described, not judged (its premise fails on these toys; v_over_depth.DESCRIBED), so
    # the sentence must not pin the streams test's verdict on it: that test asks about MLP against attention outputs.
    tested = _names(a.streams) if a.streams else "not run"
    out += (" Whether deep V chooses the embedding while Q and K read recent layers is described, not judged: its "
            "premise, deep inputs that have lost the token, fails on these toys (the embedding read above shows "
            "what V does). The per-stream claim that is tested, V preferring MLP outputs over attention outputs, "
            f"is {tested}.")
    return out


def _short_answer_ko(a: _Answer) -> str:
    """:func:`short_answer` in Korean."""
    out = [f"**{OPENING_KO[a.opening]}**, 이 조건에서는 — {a.regime}."]
    if a.won:
        out.append(f"깊이에 걸친 읽기 {a.n}가지(Depth-Attention 포함) 가운데 {len(a.won)}가지가 손실을 낮추며, "
                   f"결정된 결과입니다. 가장 크게 낮춘 {attach(a.best, '은/는')} "
                   + _loss_change_ko(a.won[0].mean, a.won[0]) + ".")
    else:
        out.append(f"깊이에 걸친 읽기 {a.n}가지(Depth-Attention 포함) 가운데 손실을 낮추는 것은 없으며, "
                   "결정된 결과입니다.")
    if a.swa:
        size = f"{a.swa_lo:+.3f} nats" if len(a.swa) == 1 else f"{a.swa_lo:+.3f}에서 {a.swa_hi:+.3f} nats"
        out.append(f"질문이 가리키는 읽기인 깊이 방향 ShortSWA는 그 안에 {'듭니다' if a.swa_among else '들지 않습니다'}. "
                   f"윈도 {len(a.swa)}개가 손실을 {size}만큼 바꿉니다"
                   f"({_names_ko(sorted({verdict_label(r, 'ko') for r in a.swa}))}).")
    tested = _names_ko(a.streams) if a.streams else "실행되지 않음"
    out.append("Q와 K가 최근 층을 읽는 동안 깊은 V가 임베딩을 고르는가는 서술(description)일 뿐 판정하지 않습니다. "
               "그 전제, 곧 깊은 입력이 토큰 정체성을 잃었다는 것이 이 장난감 모델들에서 성립하지 않기 때문입니다"
               "(V가 실제로 하는 일은 위의 임베딩 읽기가 보여 줍니다). 검정하는 스트림별 주장, 곧 V가 어텐션 출력보다 "
               f"MLP 출력을 선호한다는 주장의 판정은 {tested}입니다.")
    return " ".join(out)


def short_answer(loss_rows: list, depth_attention, stream_verdicts: list[str], regime: str,
                 lang: str | None = None) -> str:
    """Chapter 05's "The answer", in three sentences: :func:`answer_opening` and ``regime``; how many reads over
    depth lower the loss (Depth-Attention, ``depth_attention``, counted with the mixers) and the largest win; the
    range of ShortSWA over depth's changes with their verdicts; that the embedding read is described, not judged,
    and the verdicts of the per-stream test (``stream_verdicts``: the labels of the "streams" family's tests, V
    preferring MLP outputs; empty: not run). Every interval and test is left to "How sure are we?"
    (:func:`answer_paragraph` states them all). The selections are :func:`_answer_facts`'s, the same for both
    languages. ``lang``: "en" or "ko" (None: the running notebook's edition). Raises ValueError on empty
    ``loss_rows``."""
    a = _answer_facts(loss_rows, depth_attention, stream_verdicts, regime)
    return _short_answer_ko(a) if resolve_language(lang) == "ko" else _short_answer_en(a)


def embedding_read_sentence(first: int, last: int, shares: dict[str, float], uniform: float,
                            lang: str | None = None) -> str:
    """How much of its weight each input of the deep blocks ``first``–``last`` puts on the embedding (``shares``:
    {"q", "k", "v"} -> mean weight, 0–1), against a uniform read over the ``2 * first + 1`` sources of block
    ``first`` (``uniform``), with V placed among Q and K: more than both, more than one and less than the other,
    or less than both."""
    e_v = shares["v"]
    above = [s.upper() for s in "qk" if e_v > shares[s]]
    below = [s.upper() for s in "qk" if e_v <= shares[s]]
    if resolve_language(lang) == "ko":
        where = (f"V는 임베딩을 {attach(above[0], '과/와') + ' ' if len(above) > 1 else ''}{above[-1]}보다 많이 "
                 "읽습니다" if not below else
                 f"V는 임베딩을 {attach(below[0], '과/와') + ' ' if len(below) > 1 else ''}{below[-1]}보다 적게 "
                 "읽습니다" if not above else
                 f"V는 임베딩을 {above[0]}보다 많이, {below[0]}보다 적게 읽습니다")
        k_share = f"{shares['k']:.3f}"
        return (f"깊은 블록 {first}–{last}에서 V의 입력은 가중치의 {attach(f'**{e_v:.3f}**', '을/를')} 임베딩에 두고, "
                f"Q의 입력은 {shares['q']:.3f}, K의 입력은 {attach(k_share, '을/를')} 둡니다"
                f"(균등: 블록 {first}에서 {uniform:.3f}). 평균적으로 {where}.")
    where = (f"V reads the embedding more than {' and '.join(above)}" if not below else
             f"V reads the embedding less than {' and '.join(below)}" if not above else
             f"V reads the embedding more than {above[0]} but less than {below[0]}")
    return (f"In the deep blocks {first}–{last}, V's input puts **{e_v:.3f}** of its weight on the embedding, "
            f"Q's {shares['q']:.3f} and K's {shares['k']:.3f} (uniform: {uniform:.3f} at block {first}): on "
            f"average {where}.")


# ------------------------------------------------------------------ the notebook's remaining printed lines, both editions
CORPUS_KO = {"kjv": "King James Bible", "python-docs": "Python 문서"}
#: the three computations of ShortSWA over depth the chapter compares, in the order the notebook passes them
EQUIVALENCE_CHECKS = {"en": ("(1) vs (2), the same function on the transposed tensor",
                             "(1) vs (3), the paper's equation looped for one token",
                             "(1) vs the model's own reads, block by block"),
                      "ko": ("(1) 대 (2), 전치한 텐서에 적용한 같은 함수",
                             "(1) 대 (3), 토큰 하나에 대해 반복문으로 계산한 논문의 식",
                             "(1) 대 모델 자신의 읽기, 블록마다")}
#: why V's embedding weight minus Q's and K's is shown but not judged (vrs_edu.lab.premises.LM_TOYS_SHORT), in Korean
LM_TOYS_SHORT_KO = ("판정하지 않음: 그 전제, 곧 깊은 입력이 대부분 문맥이라는 것(x0-R² < 0.5)이 모든 언어 모델 장난감에서 "
                    "성립하지 않음")


def effects_title(corpus: str, n_seeds: int, steps: int, vod_steps: int, lang: str | None = None) -> str:
    """The first figure's title: ``Δ final validation loss, kjv, 5 paired seeds, 240 / 240 steps``."""
    if resolve_language(lang) == "ko":
        return f"Δ 최종 검증 손실, {corpus}, 짝지은 시드 {n_seeds}개, {steps} / {vod_steps} 스텝"
    return f"Δ final validation loss, {corpus}, {n_seeds} paired seeds, {steps} / {vod_steps} steps"


def live_sentence(n_layers: int, window: int, steps: int, val_loss: float, lang: str | None = None) -> str:
    """The live ShortSWA-over-depth model's final validation loss."""
    if resolve_language(lang) == "ko":
        return f"깊이 방향 ShortSWA를 쓴 {n_layers}층 모델(K = {window}), {steps} 스텝: 검증 손실 {val_loss:.3f} nats."
    return (f"A {n_layers}-layer ShortSWA-over-depth model (K = {window}), {steps} steps: validation loss "
            f"{val_loss:.3f} nats.")


def equivalence_table(largest: list[float], lang: str | None = None) -> str:
    """The three computations of ShortSWA over depth against each other: the largest |Δ| of each comparison
    (:data:`EQUIVALENCE_CHECKS` order) and whether it is below 1e-5."""
    ko = resolve_language(lang) == "ko"
    names = EQUIVALENCE_CHECKS["ko" if ko else "en"]
    head = (["비교", "가장 큰 |Δ|", "부동소수점 정밀도로 일치 (< 1e-5)"] if ko else
            ["comparison", "largest |Δ|", "agree to float precision (< 1e-5)"])
    agree = (lambda d: "예" if d < 1e-5 else "아니요") if ko else (lambda d: bool(d < 1e-5))
    return table(head, [[name, f"{d:.1e}", agree(d)] for name, d in zip(names, largest)])


def stack_check_line(agrees: bool, lang: str | None = None) -> str:
    """The learner's stack against the model's own read: whether they agree to float precision."""
    if resolve_language(lang) == "ko":
        return f"학습된 스택에서 모델의 읽기와 부동소수점 정밀도로 같음 (< 1e-5): {'예' if agrees else '아니요'}"
    return f"on the trained stack, equal to the model's read to float precision (< 1e-5): {agrees}"


def depth_attention_sentence(reads: dict, result, lang: str | None = None) -> str:
    """What the trained Depth-Attention layers keep on their own values and give to layer 0's, its loss change from
    the baseline with its verdict (``result``: the ``depth_attention_loss`` Verdict), and its cache per token."""
    label = verdict_label(result, lang=lang)
    if resolve_language(lang) == "ko":
        own, first = f"**{reads['own']:.2f}**", f"{reads['on_first']:.2f}"
        return (f"학습된 층들은 가중치의 {attach(own, '을/를')} 자기 값에 두고 {attach(first, '을/를')} 층 0의 값에 "
                f"줍니다. 최종 손실은 기준선과 {result.mean:+.3f} nats 차이이며(**{label}**), 캐시는 토큰당 "
                f"{reads['kv']['depth_attention']:.0f}바이트로 기준선의 {reads['kv']['residual']:.0f}바이트와 같은 "
                "크기입니다." if reads['kv']['depth_attention'] == reads['kv']['residual'] else
                f"학습된 층들은 가중치의 {attach(own, '을/를')} 자기 값에 두고 {attach(first, '을/를')} 층 0의 값에 "
                f"줍니다. 최종 손실은 기준선과 {result.mean:+.3f} nats 차이이며(**{label}**), 캐시는 토큰당 "
                f"{reads['kv']['depth_attention']:.0f}바이트입니다(기준선 {reads['kv']['residual']:.0f}바이트).")
    return (f"Trained, its layers keep **{reads['own']:.2f}** of their weight on their own values and "
            f"give {reads['on_first']:.2f} to layer 0's; its final loss is {result.mean:+.3f} nats from "
            f"the baseline's (**{label}**), with a cache of "
            f"{reads['kv']['depth_attention']:.0f} bytes per token, the baseline's "
            f"{reads['kv']['residual']:.0f}.")


def mhc_sentence(designs: dict | None, lang: str | None = None) -> str:
    """Chapter 06's mHC run on this word model, as :func:`vrs_edu.viz.prose.declared_result` words its test."""
    result = declared_result(designs, "mhc_loss", lang=lang)
    if resolve_language(lang) == "ko":
        return f"06장의 실행, 이 단어 모델에서 스트림 4개를 쓰는 mHC: {result}."
    return f"Chapter 06's run, mHC with 4 streams on this word model: {result}."


def memory_sentence(cost: dict, lang: str | None = None) -> str:
    """The memory of the full window over depth against K (measured and the (L+1)/K cost model), and the same window
    on the sequence axis against the depth read (``cost``: a row of :func:`vrs_edu.bench.depth.ratios`)."""
    if resolve_language(lang) == "ko":
        return (f"L = {cost['L']}일 때 전체 윈도는 K = {cost['K']}의 {cost['full_over_K_memory']:.1f}배 메모리를 "
                f"씁니다(비용 모형 (L+1)/K = {cost['model_ratio']:.1f}). 같은 윈도를 시퀀스 축에 쓰면 깊이 방향 "
                f"읽기의 {cost['seq_over_depth_memory']:.2f}배입니다.")
    return (f"At L = {cost['L']}, the full window takes {cost['full_over_K_memory']:.1f} times the memory "
            f"of K = {cost['K']} (cost model (L+1)/K = {cost['model_ratio']:.1f}), and the same window on "
            f"the sequence axis {cost['seq_over_depth_memory']:.2f} of the depth read's.")


def window_readout_sentence(n_sources: int, n_total: int, oldest_weight: float, window: int = 2,
                            lang: str | None = None) -> str:
    """The window widget's opening setting: how many sources the read-out uses and the deep reads' weight on the
    older of their two sources."""
    if resolve_language(lang) == "ko":
        return (f"K = {window}: 읽기 출력은 출처 {n_total}개 중 {n_sources}개를 씁니다. 깊은 층의 읽기는 가중치의 "
                f"{attach(f'{oldest_weight:.3f}', '을/를')} 두 출처 가운데 더 오래된 쪽에 둡니다.")
    return (f"K = {window}: the read-out uses {n_sources} of {n_total} sources; "
            f"deep reads put {oldest_weight:.3f} of their weight on the older of their two "
            f"sources.")


def regime_text(n_layers: int, n_seeds: int, epochs_lo: float, epochs_hi: float, corpus: str, text: str,
                lang: str | None = None) -> str:
    """The regime the short answer holds in: ``an 8-layer word model, 5 paired seeds, 0.20–0.30 of an epoch of the
    King James Version of the Bible`` (``text``: the corpus's English name; Korean: :data:`CORPUS_KO` by ``corpus``)."""
    if resolve_language(lang) == "ko":
        return (f"{n_layers}층 단어 모델, 짝지은 시드 {n_seeds}개, {CORPUS_KO.get(corpus, text)}의 "
                f"{epochs_lo:.2f}–{epochs_hi:.2f} 에폭")
    return (f"an {n_layers}-layer word model, {n_seeds} paired seeds, "
            f"{epochs_lo:.2f}–{epochs_hi:.2f} of an epoch of the {text}")


def appendix_regime_text(n_layers: int, width: int, steps_lo: int, steps_hi: int, epochs_lo: float,
                         epochs_hi: float, corpus: str, text: str, n_seeds: int, lang: str | None = None) -> str:
    """The regime the appendix's answer holds in: ``an 8-layer word model of width 64, 160–240 steps (0.20–0.30 of
    an epoch of the King James Version of the Bible), 5 paired seeds`` (Korean: :data:`CORPUS_KO` by ``corpus``)."""
    if resolve_language(lang) == "ko":
        return (f"폭 {width}인 {n_layers}층 단어 모델, {steps_lo}–{steps_hi} 스텝({CORPUS_KO.get(corpus, text)}의 "
                f"{epochs_lo:.2f}–{epochs_hi:.2f} 에폭), 짝지은 시드 {n_seeds}개")
    return (f"an {n_layers}-layer word model of width {width}, "
            f"{steps_lo}–{steps_hi} steps ({epochs_lo:.2f}–"
            f"{epochs_hi:.2f} of an epoch of the {text}), {n_seeds} paired seeds")


def next_chapters_sentence(lang: str | None = None) -> str:
    """Where the course goes after chapter 05."""
    return in_language("Chapter 06 prices V reuse; chapter 08 asks a real decoder.",
                       "06장은 V 재사용의 비용과 이득을 따지고, 08장은 실제 디코더에 묻습니다.", lang)


def verdicts_table(rows: list, lang: str | None = None) -> str:
    """The declared tests as a Markdown table: name, interval, verdict."""
    head = in_language("declared test|mean [95% CI], nats or weight|verdict",
                       "선언된 검정|평균 [95% 신뢰구간], nats 또는 가중치|판정", lang).split("|")
    return table(head, [[r.test.name, r.interval(), verdict_label(r, lang=lang)] for r in rows])


def descriptions_sentence(descriptions: list, lang: str | None = None) -> str:
    """V's embedding weight minus Q's and K's, shown with their intervals and why they are not judged
    (``descriptions``: :func:`vrs_edu.chapters.ch05_depth_as_sequence.v_over_depth.descriptions`)."""
    parts = "; ".join(f"{d.name[-1].upper()} {d.interval()}" for d in descriptions)
    why = descriptions[0].why
    if resolve_language(lang) == "ko":
        why = LM_TOYS_SHORT_KO if why == LM_TOYS_SHORT else why
        return f"V의 임베딩 가중치에서 Q와 K의 가중치를 뺀 값은 검정이 아니라 서술입니다: {parts} ({why})."
    return f"V's embedding weight minus Q's and K's is a description, not a test: {parts} ({why})."


# ---------------------------------------------------------------------------------------------------------------
# Appendix 05's sentences and tables (notebooks/05a_depth_as_sequence_evidence.py), in each edition.

def _ko(lang: str | None) -> bool:
    return resolve_language(lang) == "ko"


def runs_sentence(n_variants: int, n_seeds: int, steps: int, tokens: int, epochs: float, unigram: float,
                  cpu_min: float, starts: list, lang: str | None = None) -> str:
    """The depth-mixers runs' size: variants, seeds, steps, tokens, epochs read, the unigram loss and CPU time."""
    if _ko(lang):
        return (f"변형 {n_variants}개 × 시드 {n_seeds}개, {steps} 스텝: 실행마다 학습 토큰 {tokens:,}개, 에폭의 "
                f"{epochs:.2f}. [유니그램 손실](#glossary:unigram-loss)(문맥 없음)은 {unigram:.3f} nats입니다. "
                f"학습에만 CPU 시간 {cpu_min:.1f}분이 걸렸습니다. 모든 변형의 스트림 시작: {starts}.")
    return (f"{n_variants} variants × {n_seeds} seeds, {steps} steps: "
            f"{tokens:,} training tokens a run, {epochs:.2f} of an epoch; the "
            f"[unigram loss](#glossary:unigram-loss) (no context) is "
            f"{unigram:.3f} nats. Training alone took {cpu_min:.1f} CPU-minutes; "
            f"stream start of every variant: {starts}.")


def budget_table(tolerance: float, rows: list, lang: str | None = None) -> tuple[str, str]:
    """The parameter budget and each variant's parameters, those it adds and its overhead."""
    if _ko(lang):
        return (f"예산: 파라미터는 잔차 모델보다 최대 {tolerance:.1%}까지만 더 많을 수 있습니다.",
                table(["변형", "파라미터", "추가분", "초과 비율"], rows))
    return (f"Budget: at most {tolerance:.1%} more parameters than the residual model.",
            table(["variant", "parameters", "added", "overhead"], rows))


def loss_rows_table(rows: list, lang: str | None = None) -> str:
    """Each variant's validation loss and its difference from the residual model's (rows as the appendix builds
    them)."""
    if _ko(lang):
        return table(["변형", "검증 손실 (평균 ± 표준편차)", "잔차 대비 Δ [95% 신뢰구간]", "더 나은 시드"], rows)
    return table(["variant", "val loss (mean ± sd)", "Δ vs residual [95% CI]", "seeds better"], rows)


def epochs_line(epochs: float, lang: str | None = None) -> str:
    """How much of the training split one run reads."""
    if _ko(lang):
        return f"실행 하나가 읽는 학습 분할의 에폭: {epochs:.2f}."
    return f"Epochs of the training split one run reads: {epochs:.2f}."


def coefficient_group_table(coef_lr: float, lr: float, rows: list, lang: str | None = None) -> tuple[str, str]:
    """The mixers' coefficient group: its rate against the base rate, and per mixer the parameters at each rate
    with its loss verdict."""
    if _ko(lang):
        return (f"계수 그룹: lr {coef_lr}, 기본 lr {lr}의 {coef_lr / lr:.1f}×.",
                table(["혼합기", "계수 lr로 학습하는 파라미터", "기본 lr로", "Δ 손실 판정"], rows))
    return (f"Coefficient group: lr {coef_lr}, {coef_lr / lr:.1f}× the base lr {lr}.",
            table(["mixer", "parameters at the coefficient lr", "at the base lr", "Δ loss verdict"], rows))


def readout_sentence(n_layers: int, last: float, embedding: float, largest: int, deep_rows: list[int],
                     swa0: float, lang: str | None = None) -> str:
    """ELC-BERT's read-out weights and the full window's deep reads of the embedding."""
    if _ko(lang):
        return (f"ELC-BERT의 출력 읽기(행 {n_layers})는 마지막 블록의 출력에 {last:.3f}, 임베딩에 "
                f"{attach(f'{embedding:.3f}', '을/를')} 두며, 가장 큰 가중치는 출력 {largest}에 둡니다. 전체 창의 깊은 읽기(행 {deep_rows[0]}–"
                f"{deep_rows[-1]})는 보정 어텐션의 {attach(f'{swa0:.3f}', '을/를')} 임베딩에 줍니다.")
    return (f"ELC-BERT's read-out (row {n_layers}) puts {last:.3f} on the last block's "
            f"output and {embedding:.3f} on the embedding, its largest weight on output "
            f"{largest}. The full window's deep reads (rows {deep_rows[0]}–"
            f"{deep_rows[-1]}) give {swa0:.3f} of their correction's attention to the embedding.")


def input_r2_table(n_seeds: int, routers, rows: list, lang: str | None = None) -> tuple[str, str]:
    """x0-R² of each projection's input per layer: the residual model's, then each router's Q / K / V."""
    if _ko(lang):
        return (f"각 투영 입력의 x0-R², 시드 {n_seeds}개의 평균:",
                table(["층", "residual", *(f"{n} Q / K / V" for n in routers)], rows))
    return (f"x0-R² of each projection's input, mean of {n_seeds} seeds:",
            table(["layer", "residual", *(f"{n} Q / K / V" for n in routers)], rows))


def stream_profile_table(rows: list, lang: str | None = None) -> str:
    """Per block of the per-stream model: the embedding's weight in Q, K, V, V's MLP − attention, read recency."""
    if _ko(lang):
        return table(["블록", "임베딩 가중치 Q / K / V", "V: MLP − 어텐션", "읽기 최근성 Q / K / V"], rows)
    return table(["block", "embedding weight Q / K / V", "V: MLP − attention", "read recency Q / K / V"], rows)


def sinkhorn_table(comb, lang: str | None = None) -> tuple[str, str]:
    """A doubly stochastic comb (mHC's Sinkhorn projection): its entries, row sums and column sums."""
    ko = _ko(lang)
    head = (["comb"] + [attach(f"스트림 {k}", "으로/로") if ko else f"to stream {k}" for k in range(len(comb))]
            + ["행 합" if ko else "row sum"])
    rows = [[f"스트림 {j}에서" if ko else f"from stream {j}"] + [f"{x:.3f}" for x in row] + [f"{row.sum():.6f}"]
            for j, row in enumerate(comb)]
    sums = ", ".join(f"{c:.6f}" for c in comb.sum(dim=0))
    return table(head, rows), (f"열 합: {sums}." if ko else f"Column sums: {sums}.")


def mhc_cost_sentence(added: int, base: int, time_ratio: float, lang: str | None = None) -> str:
    """What mHC costs: the parameters it adds and its time per training step against the baseline's."""
    if _ko(lang):
        return (f"mHC는 파라미터를 {added:,}개({added / base:.0%}) 더하고, 학습 스텝마다 기준선의 {time_ratio:.1f}배 "
                "시간이 걸렸습니다.")
    return (f"mHC adds {added:,} parameters ({added / base:.0%}) and took "
            f"{time_ratio:.1f} times the baseline's time per training step.")


AXES_KO = {"depth": "깊이", "sequence": "시퀀스"}


def cost_tables(costs: list, ratio_rows: list, lang: str | None = None) -> tuple[str, str, str]:
    """The depth and sequence windows' time and memory (``costs``: rows of :func:`vrs_edu.bench.depth.cost_table`,
    ``ratio_rows``: of :func:`vrs_edu.bench.depth.ratios`)."""
    ko = _ko(lang)
    rows = [[AXES_KO.get(r["axis"], r["axis"]) if ko else r["axis"], r["L"],
             "전체" if ko and r["K"] == "full" else r["K"], f"{r['seconds'] * 1e3:.2f}", f"{r['peak_bytes'] / 1e6:.2f}"]
            for r in costs]
    time_rows = [[r["L"], r["K"], f"{r['full_over_K_time']:.2f}", f"{r['model_ratio']:.2f}"] for r in ratio_rows]
    memory_rows = [[r["L"], r["K"], f"{r['full_over_K_memory']:.2f}", f"{r['model_ratio']:.2f}",
                    f"{r['seq_over_depth_memory']:.2f}"] for r in ratio_rows]
    if ko:
        return (table(["축", "L", "K", "시간 (ms)", "최대 메모리 (MB)"], rows),
                table(["L", "K", "전체 / K 시간", "(L+1)/K"], time_rows),
                table(["L", "K", "전체 / K 메모리", "(L+1)/K", "같은 K에서 시퀀스 / 깊이 메모리"], memory_rows))
    return (table(["axis", "L", "K", "time (ms)", "peak memory (MB)"], rows),
            table(["L", "K", "full / K time", "(L+1)/K"], time_rows),
            table(["L", "K", "full / K memory", "(L+1)/K", "sequence / depth memory at the same K"], memory_rows))
