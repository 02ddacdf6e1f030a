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
from vrs_edu.chapters.ch08_real_decoder.readout import VERDICT_COLUMNS, verdict_words
from vrs_edu.i18n.language import resolve_language
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


def _grouped(by_layer: dict[int, str], shares: list[float] | None = None) -> str:
    """``negligible at layers 0 and 1, reproduced at layers 6, 8 and 9``, the verdicts in order of first layer;
    with ``shares`` (per layer), each group's range of them: ``(weight share 0.26–0.29)``."""
    groups: dict[str, list[int]] = {}
    for l, word in by_layer.items():
        groups.setdefault(word, []).append(l)

    def span(ls):
        lo, hi = min(shares[l] for l in ls), max(shares[l] for l in ls)
        return f" (weight share {lo:.2f})" if f"{lo:.2f}" == f"{hi:.2f}" else f" (weight share {lo:.2f}–{hi:.2f})"
    return ", ".join(f"{word} at {_layers(ls)}{span(ls) if shares else ''}" for word, ls in groups.items())


def sink_sentence(s: dict, eps: float = SINK_EPS) -> str:
    """The sink in words (``s``: :func:`sink_numbers`): in how many of the layers with a sink (weight share above
    ``eps``) the norm share lies below the weight share (the test *reproduced*), the mean shares over those layers,
    the judged layers with another verdict, and the layers out of regime with their would-be verdicts."""
    L, judged = s["n_layers"], s["judged"]
    if not judged:
        out = (f"No layer has a first-token sink by the declared rule (its weight share above {eps:g}), so no sink "
               "test is judged")
    else:
        below = [l for l in judged if s["verdicts"][l] == "reproduced"]
        link = "but only" if s["norm"] < s["weight"] else "and"
        count = f"all {len(below)}" if len(below) == len(judged) else f"{len(below)}"
        out = (f"The first token is a sink (weight share above {eps:g}) in **{len(judged)} of the {L} layers**; in "
               f"**{count}** of them its norm share lies below its weight share (*reproduced*). Over those "
               f"{len(judged)} layers it takes **{s['weight']:.0%}** of the weight {link} **{s['norm']:.0%}** of "
               "what the layer moves")
        others = {l: s["verdicts"][l] for l in judged if l not in below}
        if others:
            out += f"; the other judged layers: {_grouped(others)}"
    if s["out"]:
        would = {l: wb or "not judged" for l, wb in s["out"].items()}
        has, is_, they = ("have", "are", "they") if len(s["out"]) > 1 else ("has", "is", "it")
        out += (f". {_layers(list(s['out'])).capitalize()} {has} no sink by that rule and {is_} *out of regime*; "
                f"judged anyway, {they} would be {_grouped(would, s['weight_share'])}")
    return out + "."


def mixing_numbers(result: dict, rows) -> dict:
    """The context-mixing ratio by third, from a ``decoder-norms`` result and its verdicts ``rows``.

    Returns ``{"thirds": {third: {"r", "weights", "attention", "verdict"}}`` (the mixing ratio r, the weight-based
    reading 1 − α_ii and between them the attention sub-layer alone by norms, no residual (NaN in a result made
    before it was read), means over the third's layers of the per-layer means over the sequences; the words of the test
    *r below the weights' reading*), ``"all": {"r", "weights"}`` (means over every layer), ``"depth"``: the verdict of
    *early above late* (a :class:`~vrs_edu.lab.results.Verdict`: mean r(early) − r(late) and its interval)}``."""
    means = layer_means(result)
    by = by_name(rows)
    attention = means.get("attention_mixing")        # absent from a result made before it was read
    thirds = {t: {"r": _mean(means["mixing"][l] for l in ls), "weights": _mean(means["weight_mixing"][l] for l in ls),
                  "attention": _mean(attention[l] for l in ls) if attention else math.nan,
                  "verdict": verdict_words(by[mixing_test(t).name])} for t, ls in result["thirds"].items()}
    return {"thirds": thirds, "all": {"r": _mean(means["mixing"]), "weights": _mean(means["weight_mixing"])},
            "depth": by[DEPTH_TEST.name]}


def mixing_sentence(m: dict) -> str:
    """The mixing ratio in words (``m``: :func:`mixing_numbers`): per third, r against 1 − α_ii (percentages) and
    the verdict of *r below the weights' reading*; then whether the early third mixes more than the late, by how
    many points of the ratio, and that test's verdict."""
    th = m["thirds"]
    names = list(th)
    pct = lambda key: _and(f"{th[t][key]:.0%}" for t in names)  # noqa: E731
    verdicts = ", ".join(f"{t} *{th[t]['verdict']}*" for t in names)
    d = m["depth"]
    points = abs(d.mean) * 100
    size = f"by {points:.0f} points of the ratio" if round(points) >= 1 else "by less than one point of the ratio"
    split = ("" if any(math.isnan(th[t]["attention"]) for t in names) else
             f"; attention alone, by the norms of what it moves but without the residual, says {pct('attention')}: "
             "the values' norms take the first step down, the residual the rest")
    return (f"Counting V, O and the residual, a token takes **{pct('r')}** of its new state from its context "
            f"(the {_and(names)} third); the weights alone (1 − α_ii) say **{pct('weights')}**{split}. The test *the "
            f"mixing ratio lies below the weights' reading*: {verdicts}. The early third mixes "
            f"{'more' if d.mean > 0 else 'less'} than the late, {size} ({d.mean:+.3f} [{d.ci[0]:+.3f}, "
            f"{d.ci[1]:+.3f}], *{verdict_words(d)}*).")


def _closer(rho_norm: float, rho_weight: float) -> str:
    """Which reading has the larger |ρ| as the sentence prints it (two decimals), so the words match the numbers."""
    a, b = round(abs(rho_norm), 2), round(abs(rho_weight), 2)
    return "the norm-based" if a > b else "the weight-based" if b > a else "neither"


def swap_cost_sentence(swap: dict | None) -> str:
    """The stored *description* (``result["swap_cost"]``, not a test) in words: Spearman's ρ across the layers of
    chapter 08's per-layer pattern-swap cost with the norm-based and the weight-based readings (the mixing ratio and
    1 − α_ii; the sink's norm and weight share), which reading follows the cost more closely (the larger |ρ|, at
    two decimals), and why nothing is judged. None (the recipe found no layer scan): a sentence saying so."""
    if swap is None:
        return ("**A description, not a test.** The stored run holds no comparison with the pattern-swap cost: "
                "`vrs-edu reproduce decoder-norms` found no `real-decoder` result to read it from.")
    rho, n = swap["spearman"], swap["sequences"]
    pairs = {"mixing": ("mixing", "weight_mixing"), "sink": ("norm_share", "weight_share")}
    closer = {k: _closer(rho[a], rho[b]) for k, (a, b) in pairs.items()}
    if closer["mixing"] == closer["sink"]:
        which = f"In both pairs {closer['mixing']} reading follows the cost more closely (the larger |ρ|)"
    else:
        which = (f"{closer['mixing'].capitalize()} reading follows the cost more closely for the mixing, "
                 f"{closer['sink']} for the sink (the larger |ρ|)")
    return (f"**A description, not a test.** {gap_answer(rho)}Across the {swap['layers']} layers, Spearman's ρ of "
            f"the pattern-swap cost (Question 1's layer scan, {n} sequences) with the mixing ratio is "
            f"{rho['mixing']:+.2f}, with 1 − α_ii {rho['weight_mixing']:+.2f}; with the first token's norm share "
            f"{rho['norm_share']:+.2f}, with its weight share {rho['weight_share']:+.2f}. {which}. The "
            f"{swap['layers']} layers of one model are not independent replicates and each cost rests on {n} "
            "sequences, so this describes the pattern and judges nothing.")


def gap_answer(rho: dict, moderate: float = 0.3) -> str:
    """The question asked of the gaps themselves (``rho``: the description's Spearman ρ of the pattern-swap cost with
    ``mixing_gap`` and ``sink_gap``, how much the weights overstate the mixing and the sink): *yes* when both are
    at or below −``moderate`` (the layers the weights mis-state most pay least for another sequence's pattern), *the
    opposite* when both are at or above it, *only in part* when one gap reaches |ρ| = ``moderate`` (saying which and
    which way), *no link* when neither does. ``moderate``: 0.3, Cohen's "medium" correlation. Empty for a stored
    description made before the gaps were read."""
    if "mixing_gap" not in rho:
        return ""
    gaps = {"the mixing's": rho["mixing_gap"], "the sink's": rho["sink_gap"]}
    strong = {name: r for name, r in gaps.items() if abs(r) >= moderate}
    if len(strong) == 2 and max(gaps.values()) <= -moderate:
        words = "yes: the layers whose weights mis-state most pay least for another sequence's pattern"
    elif len(strong) == 2 and min(gaps.values()) >= moderate:
        words = "the opposite: the layers whose weights mis-state most pay most for another sequence's pattern"
    elif strong:
        words = "only in part: " + "; ".join(
            f"where {name} gap is larger a layer pays {'less' if r < 0 else 'more'} for another sequence's pattern"
            for name, r in strong.items())
        weak = [name for name in gaps if name not in strong]
        words += f"; {weak[0]} gap shows no link" if weak else ""
    else:
        words = (f"no: neither gap reaches |ρ| = {moderate:g}, so how much a layer's weights mis-state does not tell "
                 "how much it needs its fresh pattern")
    return (f"Asked of the gaps themselves: the pattern-swap cost and how much the weights overstate the mixing "
            f"(1 − α_ii minus the mixing ratio) correlate at ρ = {rho['mixing_gap']:+.2f}, and the sink (weight "
            f"share minus norm share) at ρ = {rho['sink_gap']:+.2f}: {words}. ")


def norms_answer(s: dict, m: dict, lang: str | None = None) -> str:
    """The answer's sentence on the norm-based view (``s``: :func:`sink_numbers`, ``m``: :func:`mixing_numbers`):
    the sink's weight against its norm share, and the mixing ratio against the weights' reading over all layers
    (said to differ when they differ by the recipe's smallest difference of interest, 5 points, or more).
    ``lang``: the sentence's language (``None``: the running edition's)."""
    a = m["all"]
    gap = abs(a["r"] - a["weights"]) >= SESOI_SHARE          # the recipe's smallest difference of interest
    if resolve_language(lang) == "ko":
        if s["judged"]:
            link, only = ("지만", "만") if s["norm"] < s["weight"] else ("고", "를")
            sink = (f"첫 토큰이 싱크인 곳에서 그 토큰은 가중치의 {s['weight']:.0%}를 받{link} 층이 옮기는 것의 "
                    f"{s['norm']:.0%}{only} 차지합니다. ")
        else:
            sink = "첫 토큰 싱크가 있는 층은 없습니다. "
        return (f"**어텐션은 가중치만이 아닙니다.** 이 디코더에서 {sink}V, O와 잔차까지 세면 토큰은 새 상태의 "
                f"{a['r']:.0%}를 문맥에서 가져오는데, 가중치만으로는 {a['weights']:.0%}입니다(층 평균)"
                + (". 가중치(QK)만으로는 어텐션이 옮기는 것을 잘못 말합니다." if gap else
                   ". 여기서는 가중치의 읽기와 노름의 읽기가 일치합니다."))
    sink = (f"where the first token is a sink, it takes {s['weight']:.0%} of the weight "
            f"{'but only' if s['norm'] < s['weight'] else 'and'} {s['norm']:.0%} of what the layer moves; "
            if s["judged"] else "no layer has a first-token sink; ")
    return (f"**Attention is not only a weight.** In this decoder, {sink}counting V, O and the residual, a token "
            f"takes {a['r']:.0%} of its new state from its context where the weights alone say {a['weights']:.0%} "
            "(mean over the layers)" + (": the weights (QK) alone mis-state what attention moves." if gap else
                                        ": here the weights' reading and the norms' agree."))
