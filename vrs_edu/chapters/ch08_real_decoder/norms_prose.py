"""Chapter 08's words for the norm-based view of its decoder (``vrs-edu reproduce decoder-norms``, the recipe
:mod:`vrs_edu.chapters.ch08_real_decoder.norms`): the first-token sink's weight share against its norm share (Gu et
al., arXiv 2410.10781; Kobayashi et al., arXiv 2004.10102) and the context-mixing ratio against 1 − α_ii (Kobayashi
et al., arXiv 2109.07152), each sentence choosing its words from the numbers and verdicts it states.

The numbers are read from a stored ``decoder-norms`` result: ``per_layer[reading]`` holds, per layer, one value per
sequence (L lists of n); the verdicts are the recipe's declared tests judged
(:func:`~vrs_edu.chapters.ch08_real_decoder.norms.verdicts`, :class:`~vrs_edu.lab.results.Verdict`) or its stored
records (``result["verdicts"]``, read back with :meth:`Verdict.from_record <vrs_edu.lab.results.Verdict.from_record>`).
"""
from __future__ import annotations

import math

from vrs_edu.chapters.ch08_real_decoder.norms import DEPTH_TEST, SESOI_SHARE, SINK_EPS, mixing_test, sink_test
from vrs_edu.chapters.ch08_real_decoder.prose import THIRD_KO
from vrs_edu.chapters.ch08_real_decoder.readout import VERDICT_COLUMNS, verdict_words
from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.language import resolve_language
from vrs_edu.i18n.verdicts import verdict_word
from vrs_edu.lab.analysis import layer_means
from vrs_edu.lab.results import Verdict

# chapter 08's verdict table, its third column in the units of these tests (shares, not nats)
NORMS_VERDICT_COLUMNS = (*VERDICT_COLUMNS[:2], "mean [95 % CI] (share)", *VERDICT_COLUMNS[3:])


def _mean(xs) -> float:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else math.nan


def _and(items) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" and {items[-1]}"


def _layers(ls) -> str:
    """``layer 6`` or ``layers 6, 8 and 9``."""
    return f"layer{'s' if len(ls) > 1 else ''} {_and(ls)}"


def _layers_ko(ls) -> str:
    """``층 6`` or ``층 6, 8, 9``."""
    return "층 " + ", ".join(map(str, ls))


def by_name(rows) -> dict[str, Verdict]:
    """The verdicts by test name; ``rows`` are :class:`~vrs_edu.lab.results.Verdict` or stored records (read back
    with :meth:`Verdict.from_record <vrs_edu.lab.results.Verdict.from_record>`)."""
    return {r.test.name: r for r in (r if isinstance(r, Verdict) else Verdict.from_record(r) for r in rows)}


def sink_numbers(result: dict, rows) -> dict:
    """The first-token sink per layer, from a ``decoder-norms`` result and its verdicts ``rows``.

    Returns ``{"n_layers", "judged"`` (the layers with a sink: the declared precondition, weight share > 0.3, held,
    so the test was judged), ``"verdicts"`` ({judged layer: verdict}), ``"out"`` ({layer out of regime: its would-be
    verdict}), ``"weight"``, ``"norm"`` (the first token's weight and norm share, mean over the judged layers of the
    per-layer means over the sequences; NaN without a judged layer), ``"weight_share"`` (L,) the per-layer weight
    share}``."""
    means = layer_means(result)
    L = len(means["weight_share"])
    by = by_name(rows)
    sink = {l: by[sink_test(l).name] for l in range(L)}
    judged = [l for l, v in sink.items() if v.verdict != "out of regime"]
    return {"n_layers": L, "judged": judged, "verdicts": {l: sink[l].verdict for l in judged},
            "out": {l: sink[l].would_be for l in sink if l not in judged},
            "weight": _mean(means["weight_share"][l] for l in judged),
            "norm": _mean(means["norm_share"][l] for l in judged), "weight_share": means["weight_share"]}


def _grouped(by_layer: dict[int, str], shares: list[float] | None = None, lang: str = "en") -> str:
    """``negligible at layers 0 and 1, reproduced at layers 6, 8 and 9``, the verdicts in order of first layer;
    with ``shares`` (per layer), each group's range of them: ``(weight share 0.26–0.29)``. Korean (``lang="ko"``):
    ``층 0, 1에서 무시할 만함, 층 6, 8, 9에서 재현됨`` (``(가중치 몫 0.26–0.29)``), a verdict word in its Korean
    (``not judged``: 판정하지 않음)."""
    groups: dict[str, list[int]] = {}
    for l, word in by_layer.items():
        groups.setdefault(word, []).append(l)
    ko = lang == "ko"

    def span(ls):
        lo, hi = min(shares[l] for l in ls), max(shares[l] for l in ls)
        share, space = ("가중치 몫", "") if ko else ("weight share", " ")
        return f"{space}({share} {lo:.2f})" if f"{lo:.2f}" == f"{hi:.2f}" else f"{space}({share} {lo:.2f}–{hi:.2f})"
    if ko:
        return ", ".join(f"{_layers_ko(ls)}에서 {'판정하지 않음' if word == 'not judged' else verdict_word(word, 'ko')}"
                         f"{span(ls) if shares else ''}" for word, ls in groups.items())
    return ", ".join(f"{word} at {_layers(ls)}{span(ls) if shares else ''}" for word, ls in groups.items())


def _sink_facts(s: dict) -> dict:
    """What :func:`sink_sentence` states beyond the numbers of ``s`` (:func:`sink_numbers`), selected once for both
    languages: ``below`` (the judged layers whose norm share lies below their weight share: *reproduced*), ``all``
    (every judged layer is one), ``others`` ({judged layer: its other verdict}), ``would`` ({layer out of regime:
    its would-be verdict, or "not judged" without one}) and ``lower`` (the mean norm share below the mean weight
    share)."""
    below = [l for l in s["judged"] if s["verdicts"][l] == "reproduced"]
    return {"below": below, "all": len(below) == len(s["judged"]),
            "others": {l: s["verdicts"][l] for l in s["judged"] if l not in below},
            "would": {l: wb or "not judged" for l, wb in s["out"].items()}, "lower": s["norm"] < s["weight"]}


def _sink_sentence_ko(s: dict, f: dict, eps: float) -> str:
    L, judged = s["n_layers"], s["judged"]
    if not judged:
        out = (f"선언된 규칙(가중치 몫 {eps:g} 초과)으로는 첫 토큰 싱크가 있는 층이 없으므로, 싱크 검정은 하나도 "
               "판정하지 않습니다.")
    else:
        count = f"{len(f['below'])}개 층 모두" if f["all"] else f"{len(f['below'])}개 층"
        weight, norm = f"**{s['weight']:.0%}**", f"**{s['norm']:.0%}**"
        weight = attach(weight, "을/를")
        norm = f"{norm}만 차지합니다" if f["lower"] else f"{attach(norm, '을/를')} 차지합니다"
        out = (f"첫 토큰은 **{L}개 층 가운데 {len(judged)}개 층**에서 싱크입니다(가중치 몫 {eps:g} 초과). 그 가운데 "
               f"**{count}**에서 노름 몫이 가중치 몫보다 작습니다(*재현됨*). 그 {len(judged)}개 층에 걸쳐 첫 토큰은 "
               f"가중치의 {weight} 받{'지만' if f['lower'] else '고'} 층이 옮기는 것의 {norm}.")
        if f["others"]:
            out += f" 판정된 나머지 층: {_grouped(f['others'], lang='ko')}."
    if s["out"]:
        out += (f" {_layers_ko(list(s['out']))}에는 이 규칙에 따른 싱크가 없으므로 *적용 범위 밖*입니다. 그래도 "
                f"판정한다면 {_grouped(f['would'], s['weight_share'], 'ko')}입니다.")
    return out


def _sink_sentence_en(s: dict, f: dict, eps: float) -> str:
    L, judged = s["n_layers"], s["judged"]
    if not judged:
        out = (f"No layer has a first-token sink by the declared rule (its weight share above {eps:g}), so no sink "
               "test is judged")
    else:
        link = "but only" if f["lower"] else "and"
        count = f"all {len(f['below'])}" if f["all"] else f"{len(f['below'])}"
        out = (f"The first token is a sink (weight share above {eps:g}) in **{len(judged)} of the {L} layers**; in "
               f"**{count}** of them its norm share lies below its weight share (*reproduced*). Over those "
               f"{len(judged)} layers it takes **{s['weight']:.0%}** of the weight {link} **{s['norm']:.0%}** of "
               "what the layer moves")
        if f["others"]:
            out += f"; the other judged layers: {_grouped(f['others'])}"
    if s["out"]:
        has, is_, they = ("have", "are", "they") if len(s["out"]) > 1 else ("has", "is", "it")
        out += (f". {_layers(list(s['out'])).capitalize()} {has} no sink by that rule and {is_} *out of regime*; "
                f"judged anyway, {they} would be {_grouped(f['would'], s['weight_share'])}")
    return out + "."


def sink_sentence(s: dict, eps: float = SINK_EPS, lang: str | None = None) -> str:
    """The sink in words (``s``: :func:`sink_numbers`): in how many of the layers with a sink (weight share above
    ``eps``) the norm share lies below the weight share (the test *reproduced*), the mean shares over those layers,
    the judged layers with another verdict, and the layers out of regime with their would-be verdicts; the
    selections are :func:`_sink_facts`'s, the same for both languages. ``lang``: the sentence's language
    (``None``: the running edition's)."""
    f = _sink_facts(s)
    return _sink_sentence_ko(s, f, eps) if resolve_language(lang) == "ko" else _sink_sentence_en(s, f, eps)


def mixing_numbers(result: dict, rows, lang: str | None = None) -> dict:
    """The context-mixing ratio by third, from a ``decoder-norms`` result and its verdicts ``rows``.

    Returns ``{"thirds": {third: {"r", "weights", "attention", "verdict"}}`` (the mixing ratio r, the weight-based
    reading 1 − α_ii and between them the attention sub-layer alone by norms, no residual (NaN in a result made
    before it was read), means over the third's layers of the per-layer means over the sequences; the words of the test
    *r below the weights' reading*), ``"all": {"r", "weights"}`` (means over every layer), ``"depth"``: the verdict of
    *early above late* (a :class:`~vrs_edu.lab.results.Verdict`: mean r(early) − r(late) and its interval)}``.
    ``lang``: the language of the verdicts' words (``None``: the running edition's)."""
    means = layer_means(result)
    by = by_name(rows)
    attention = means.get("attention_mixing")        # absent from a result made before it was read
    thirds = {t: {"r": _mean(means["mixing"][l] for l in ls), "weights": _mean(means["weight_mixing"][l] for l in ls),
                  "attention": _mean(attention[l] for l in ls) if attention else math.nan,
                  "verdict": verdict_words(by[mixing_test(t).name], lang)} for t, ls in result["thirds"].items()}
    return {"thirds": thirds, "all": {"r": _mean(means["mixing"]), "weights": _mean(means["weight_mixing"])},
            "depth": by[DEPTH_TEST.name]}


def _mixing_facts(m: dict) -> dict:
    """What :func:`mixing_sentence` states beyond the numbers of ``m`` (:func:`mixing_numbers`), selected once for
    both languages: ``names`` (the thirds in order), ``points`` (|early − late| in points of the ratio), ``whole``
    (at least one point, as printed), ``more`` (the early third mixes more than the late) and ``attention``
    (the attention sub-layer's reading is there for every third: no NaN)."""
    th, d = m["thirds"], m["depth"]
    points = abs(d.mean) * 100
    return {"names": list(th), "points": points, "whole": round(points) >= 1, "more": d.mean > 0,
            "attention": not any(math.isnan(v["attention"]) for v in th.values())}


def _mixing_sentence_ko(m: dict, f: dict) -> str:
    th, names = m["thirds"], f["names"]
    pct = lambda key: ", ".join(f"{th[t][key]:.0%}" for t in names)  # noqa: E731
    verdicts = ", ".join(f"{THIRD_KO.get(t, t)} *{th[t]['verdict']}*" for t in names)
    d = m["depth"]
    size = f"비율로 {f['points']:.0f}포인트" if f["whole"] else "비율로 1포인트 미만만큼"
    split = (f" 잔차 없이 어텐션이 옮기는 것의 노름만으로 보면 {pct('attention')}입니다. 값의 노름이 첫 단계를 "
             "낮추고, 나머지는 잔차가 낮춥니다." if f["attention"] else "")
    early, late = THIRD_KO.get(names[0], names[0]), THIRD_KO.get(names[-1], names[-1])
    r = attach(f"**{pct('r')}**", "을/를")
    return (f"V, O와 잔차까지 세면 토큰은 새 상태의 {r} 문맥에서 가져옵니다"
            f"({', '.join(THIRD_KO.get(t, t) for t in names)} 3분의 1). 가중치만으로는(1 − α_ii) "
            f"**{pct('weights')}**입니다.{split} 검정 *혼합 비율은 가중치의 읽기보다 낮다*: {verdicts}. "
            f"{early} 3분의 1은 {late} 3분의 1보다 문맥을 {size} 더 {'많이' if f['more'] else '적게'} 섞습니다"
            f"({d.mean:+.3f} [{d.ci[0]:+.3f}, {d.ci[1]:+.3f}], *{verdict_words(d, 'ko')}*).")


def _mixing_sentence_en(m: dict, f: dict) -> str:
    th, names = m["thirds"], f["names"]
    pct = lambda key: _and(f"{th[t][key]:.0%}" for t in names)  # noqa: E731
    verdicts = ", ".join(f"{t} *{th[t]['verdict']}*" for t in names)
    d = m["depth"]
    size = (f"by {f['points']:.0f} points of the ratio" if f["whole"] else
            "by less than one point of the ratio")
    split = (f"; attention alone, by the norms of what it moves but without the residual, says {pct('attention')}: "
             "the values' norms take the first step down, the residual the rest" if f["attention"] else "")
    return (f"Counting V, O and the residual, a token takes **{pct('r')}** of its new state from its context "
            f"(the {_and(names)} third); the weights alone (1 − α_ii) say **{pct('weights')}**{split}. The test *the "
            f"mixing ratio lies below the weights' reading*: {verdicts}. The early third mixes "
            f"{'more' if f['more'] else 'less'} than the late, {size} ({d.mean:+.3f} [{d.ci[0]:+.3f}, "
            f"{d.ci[1]:+.3f}], *{verdict_words(d, 'en')}*).")


def mixing_sentence(m: dict, lang: str | None = None) -> str:
    """The mixing ratio in words (``m``: :func:`mixing_numbers`, made in the same ``lang``): per third, r against
    1 − α_ii (percentages) and the verdict of *r below the weights' reading*; then whether the early third mixes more
    than the late, by how many points of the ratio, and that test's verdict; the selections are
    :func:`_mixing_facts`'s, the same for both languages. ``lang``: the sentence's language (``None``: the running
    edition's)."""
    f = _mixing_facts(m)
    return _mixing_sentence_ko(m, f) if resolve_language(lang) == "ko" else _mixing_sentence_en(m, f)


def _closer(rho_norm: float, rho_weight: float) -> str:
    """Which reading has the larger |ρ| as the sentence prints it (two decimals), so the words match the numbers."""
    a, b = round(abs(rho_norm), 2), round(abs(rho_weight), 2)
    return "the norm-based" if a > b else "the weight-based" if b > a else "neither"


def _closers(rho: dict) -> dict[str, str]:
    """For each pair the description compares, ``"mixing"`` (the mixing ratio against 1 − α_ii) and ``"sink"`` (the
    first token's norm share against its weight share), the reading that follows the cost more closely
    (:func:`_closer`, in English; :data:`CLOSER_KO` words it in Korean). ``rho``: the description's Spearman ρ."""
    pairs = {"mixing": ("mixing", "weight_mixing"), "sink": ("norm_share", "weight_share")}
    return {k: _closer(rho[a], rho[b]) for k, (a, b) in pairs.items()}


CLOSER_KO = {"the norm-based": "노름 기반", "the weight-based": "가중치 기반", "neither": "어느 쪽도 아님"}


def _swap_cost_sentence_ko(swap: dict | None) -> str:
    if swap is None:
        return ("**검정이 아니라 서술입니다.** 저장된 실행에는 패턴 교환 비용과의 비교가 없습니다. "
                "`vrs-edu reproduce decoder-norms`가 읽을 `real-decoder` 결과를 찾지 못했습니다.")
    rho, n, L = swap["spearman"], swap["sequences"], swap["layers"]
    closer = {k: CLOSER_KO[c] for k, c in _closers(rho).items()}
    which = (f"두 쌍 모두 {closer['mixing']}" if closer["mixing"] == closer["sink"] else
             f"혼합에서는 {closer['mixing']}, 싱크에서는 {closer['sink']}")
    return (f"**검정이 아니라 서술입니다.** {gap_answer(rho, lang='ko')}{L}개 층에 걸쳐 패턴 교환 비용(질문 1의 층 "
            f"스캔, 시퀀스 {n}개)의 스피어만 ρ는 혼합 비율과 {rho['mixing']:+.2f}, 1 − α_ii와 "
            f"{rho['weight_mixing']:+.2f}이고, 첫 토큰의 노름 몫과 {rho['norm_share']:+.2f}, 가중치 몫과 "
            f"{rho['weight_share']:+.2f}입니다. 비용을 더 가깝게 따르는 읽기: {which}(더 큰 |ρ| 기준). 한 모델의 "
            f"{L}개 층은 독립된 반복이 아니고 각 비용은 시퀀스 {n}개에 기대므로, 이것은 패턴을 서술할 뿐 아무것도 "
            "판정하지 않습니다.")


def swap_cost_sentence(swap: dict | None, lang: str | None = None) -> str:
    """The stored *description* (``result["swap_cost"]``, not a test) in words: Spearman's ρ across the layers of
    chapter 08's per-layer pattern-swap cost with the norm-based and the weight-based readings (the mixing ratio and
    1 − α_ii; the sink's norm and weight share), which reading follows the cost more closely (the larger |ρ|, at
    two decimals: :func:`_closers`, the same for both languages), and why nothing is judged. None (the recipe found
    no layer scan): a sentence saying so. ``lang``: the sentence's language (``None``: the running edition's)."""
    if resolve_language(lang) == "ko":
        return _swap_cost_sentence_ko(swap)
    if swap is None:
        return ("**A description, not a test.** The stored run holds no comparison with the pattern-swap cost: "
                "`vrs-edu reproduce decoder-norms` found no `real-decoder` result to read it from.")
    rho, n = swap["spearman"], swap["sequences"]
    closer = _closers(rho)
    if closer["mixing"] == closer["sink"]:
        which = f"In both pairs {closer['mixing']} reading follows the cost more closely (the larger |ρ|)"
    else:
        which = (f"{closer['mixing'].capitalize()} reading follows the cost more closely for the mixing, "
                 f"{closer['sink']} for the sink (the larger |ρ|)")
    return (f"**A description, not a test.** {gap_answer(rho, lang='en')}Across the {swap['layers']} layers, "
            f"Spearman's ρ of the pattern-swap cost (Question 1's layer scan, {n} sequences) with the mixing ratio is "
            f"{rho['mixing']:+.2f}, with 1 − α_ii {rho['weight_mixing']:+.2f}; with the first token's norm share "
            f"{rho['norm_share']:+.2f}, with its weight share {rho['weight_share']:+.2f}. {which}. The "
            f"{swap['layers']} layers of one model are not independent replicates and each cost rests on {n} "
            "sequences, so this describes the pattern and judges nothing.")


GAP_KO = {"the mixing's": "혼합의", "the sink's": "싱크의"}


def _gap_facts(rho: dict, moderate: float) -> dict:
    """What :func:`gap_answer` states, selected once for both languages: ``gaps`` ({"the mixing's", "the sink's":
    ρ}), ``strong`` (those with |ρ| ≥ ``moderate``), ``weak`` (the others' names) and ``kind``: "yes" (both at or
    below −``moderate``), "opposite" (both at or above it), "part" (one or two strong of mixed signs) or "no"."""
    gaps = {"the mixing's": rho["mixing_gap"], "the sink's": rho["sink_gap"]}
    strong = {name: r for name, r in gaps.items() if abs(r) >= moderate}
    if len(strong) == 2 and max(gaps.values()) <= -moderate:
        kind = "yes"
    elif len(strong) == 2 and min(gaps.values()) >= moderate:
        kind = "opposite"
    else:
        kind = "part" if strong else "no"
    return {"gaps": gaps, "strong": strong, "weak": [name for name in gaps if name not in strong], "kind": kind}


def _gap_words_ko(f: dict, moderate: float) -> str:
    if f["kind"] == "yes":
        return "그렇습니다. 가중치가 더 크게 잘못 말하는 층일수록 다른 시퀀스의 패턴에 치르는 비용이 작습니다"
    if f["kind"] == "opposite":
        return "반대입니다. 가중치가 더 크게 잘못 말하는 층일수록 다른 시퀀스의 패턴에 치르는 비용이 큽니다"
    if f["kind"] == "part":
        words = "일부만 그렇습니다. " + "; ".join(
            f"{GAP_KO[name]} 간극이 큰 층일수록 다른 시퀀스의 패턴에 치르는 비용이 {'작습니다' if r < 0 else '큽니다'}"
            for name, r in f["strong"].items())
        return words + (f"; {GAP_KO[f['weak'][0]]} 간극은 관련이 없습니다" if f["weak"] else "")
    return (f"아닙니다. 어느 간극도 |ρ| = {moderate:g}에 이르지 않으므로, 층의 가중치가 얼마나 잘못 말하는지로는 그 "
            "층에 새 패턴이 얼마나 필요한지 알 수 없습니다")


def _gap_words_en(f: dict, moderate: float) -> str:
    if f["kind"] == "yes":
        return "yes: the layers whose weights mis-state most pay least for another sequence's pattern"
    if f["kind"] == "opposite":
        return "the opposite: the layers whose weights mis-state most pay most for another sequence's pattern"
    if f["kind"] == "part":
        words = "only in part: " + "; ".join(
            f"where {name} gap is larger a layer pays {'less' if r < 0 else 'more'} for another sequence's pattern"
            for name, r in f["strong"].items())
        return words + (f"; {f['weak'][0]} gap shows no link" if f["weak"] else "")
    return (f"no: neither gap reaches |ρ| = {moderate:g}, so how much a layer's weights mis-state does not tell "
            "how much it needs its fresh pattern")


def gap_answer(rho: dict, moderate: float = 0.3, lang: str | None = None) -> str:
    """The question asked of the gaps themselves (``rho``: the description's Spearman ρ of the pattern-swap cost with
    ``mixing_gap`` and ``sink_gap``, how much the weights overstate the mixing and the sink): *yes* when both are
    at or below −``moderate`` (the layers the weights mis-state most pay least for another sequence's pattern), *the
    opposite* when both are at or above it, *only in part* when one gap reaches |ρ| = ``moderate`` (saying which and
    which way), *no link* when neither does (:func:`_gap_facts`, the same for both languages). ``moderate``: 0.3,
    Cohen's "medium" correlation. Empty for a stored description made before the gaps were read. ``lang``: the
    sentence's language (``None``: the running edition's)."""
    if "mixing_gap" not in rho:
        return ""
    f = _gap_facts(rho, moderate)
    if resolve_language(lang) == "ko":
        return (f"간극 자체에 물으면: 패턴 교환 비용과, 가중치가 혼합을 부풀려 말하는 정도(1 − α_ii 빼기 혼합 비율)의 "
                f"상관은 ρ = {rho['mixing_gap']:+.2f}, 싱크의 간극(가중치 몫 빼기 노름 몫)과의 상관은 ρ = "
                f"{rho['sink_gap']:+.2f}입니다. {_gap_words_ko(f, moderate)}. ")
    return (f"Asked of the gaps themselves: the pattern-swap cost and how much the weights overstate the mixing "
            f"(1 − α_ii minus the mixing ratio) correlate at ρ = {rho['mixing_gap']:+.2f}, and the sink (weight "
            f"share minus norm share) at ρ = {rho['sink_gap']:+.2f}: {_gap_words_en(f, moderate)}. ")


def norms_answer(s: dict, m: dict, lang: str | None = None) -> str:
    """The answer's sentence on the norm-based view (``s``: :func:`sink_numbers`, ``m``: :func:`mixing_numbers`):
    the sink's weight against its norm share, and the mixing ratio against the weights' reading over all layers
    (said to differ when they differ by the recipe's smallest difference of interest, 5 points, or more).
    ``lang``: the sentence's language (``None``: the running edition's)."""
    a = m["all"]
    gap = abs(a["r"] - a["weights"]) >= SESOI_SHARE          # the recipe's smallest difference of interest
    lower = s["norm"] < s["weight"]
    if resolve_language(lang) == "ko":
        if s["judged"]:
            link, only = ("지만", "만") if lower else ("고", "를")
            sink = (f"첫 토큰이 싱크인 곳에서 그 토큰은 가중치의 {s['weight']:.0%}를 받{link} 층이 옮기는 것의 "
                    f"{s['norm']:.0%}{only} 차지합니다. ")
        else:
            sink = "첫 토큰 싱크가 있는 층은 없습니다. "
        return (f"**어텐션은 가중치만이 아닙니다.** 이 디코더에서 {sink}V, O와 잔차까지 세면 토큰은 새 상태의 "
                f"{a['r']:.0%}를 문맥에서 가져오는데, 가중치만으로는 {a['weights']:.0%}입니다(층 평균)"
                + (". 가중치(QK)만으로는 어텐션이 옮기는 것을 잘못 말합니다." if gap else
                   ". 여기서는 가중치의 읽기와 노름의 읽기가 일치합니다."))
    sink = (f"where the first token is a sink, it takes {s['weight']:.0%} of the weight "
            f"{'but only' if lower else 'and'} {s['norm']:.0%} of what the layer moves; "
            if s["judged"] else "no layer has a first-token sink; ")
    return (f"**Attention is not only a weight.** In this decoder, {sink}counting V, O and the residual, a token "
            f"takes {a['r']:.0%} of its new state from its context where the weights alone say {a['weights']:.0%} "
            "(mean over the layers)" + (": the weights (QK) alone mis-state what attention moves." if gap else
                                        ": here the weights' reading and the norms' agree."))
