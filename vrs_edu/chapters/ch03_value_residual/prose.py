"""Chapter 03's computed sentences: each takes the numbers it states and chooses its words from their sign, size and
verdict, so that a sentence never says "larger by 0.000 nats" or "learns it -13 steps sooner".

Every function returns Markdown (for :func:`vrs_edu.viz.prose.say`). Numbers are signed nats per token (a loss
difference variant − baseline: below 0 = the variant is better) unless a docstring says steps. ``ci`` is a
``(low, high)`` 95 % interval. Sources: ResFormer (Zhou et al., arXiv 2410.17897), its 82 M model's gain of
-0.027 nats is the chapter's ``paper``. A ``verdict`` argument is a judged test (a
:class:`~vrs_edu.lab.results.Verdict`: its words then name its would-be verdict and its declared smallest effect) or a
bare verdict word; its words come from :func:`vrs_edu.lab.verdict_words.plain_verdict`, so a *negligible* test is never
worded as reproduced or contradicted.
"""
from __future__ import annotations

import math

from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.language import resolve_language
from vrs_edu.lab.results import interval
from vrs_edu.lab.verdict_words import plain_verdict, verdict_label, verdict_parts
from vrs_edu.viz.prose import table

#: below this size (nats) a loss difference reads as "no difference" at the 3 decimals the chapter prints
SAME_NATS = 0.0005


def _bracket(ci: tuple[float, float], digits: int = 3) -> str:
    lo, hi = ci
    return interval(0.0, ci, digits).split(" ", 1)[1] if digits else f"[{lo:+.0f}, {hi:+.0f}]"


def _where(ci: tuple[float, float]) -> str:
    """Where an interval lies against 0, the same for both languages: "below", "above" or "both" (it holds 0)."""
    lo, hi = ci
    return "below" if hi < 0 else "above" if lo > 0 else "both"


def _side(ci: tuple[float, float]) -> str:
    return {"below": "below 0", "above": "above 0", "both": "on both sides of 0"}[_where(ci)]


def decided_words(verdict, lang: str | None = None) -> str:
    """What a verdict means in a learner's words (the verdicts themselves: "How sure are we?"). ``verdict``: a
    judged test (:class:`~vrs_edu.lab.results.Verdict`, whose would-be verdict and declared smallest effect the
    words then name) or a bare verdict word (:func:`vrs_edu.lab.verdict_words.plain_verdict`). In Korean an
    undecided verdict is named by its word first: ``미정(이 시드들로는 가릴 수 없음)``."""
    if resolve_language(lang) == "ko" and verdict_parts(verdict)[0] == "undecided":
        return "미정(이 시드들로는 가릴 수 없음)"
    return plain_verdict(verdict, lang=lang)


def _side_ko(ci: tuple[float, float]) -> str:
    return {"below": "0보다 아래에 있습니다", "above": "0보다 위에 있습니다", "both": "0의 양쪽에 걸쳐 있습니다"}[_where(ci)]


def _against_paper(ci: tuple[float, float], paper: float) -> str:
    """Where a published gain ``paper`` lies against an interval of the change, the same for both languages:
    "ruled out" (below it: a gain that large is excluded), "exceeded" (the whole interval is a larger gain) or
    "inside"."""
    lo, hi = ci
    return "ruled out" if lo > paper else "exceeded" if hi < paper else "inside"


def loss_change(mean: float, digits: int = 3) -> str:
    """``lowers the loss by 0.007 nats`` / ``raises it by …`` / ``leaves it unchanged (to 0.001 nats)``."""
    if abs(mean) < SAME_NATS:
        return "leaves the final loss unchanged (to 0.001 nats)"
    return f"{'lowers' if mean < 0 else 'raises'} the final loss by **{abs(mean):.{digits}f}** nats"


def effect_sentence(name: str, mean: float, ci: tuple[float, float], verdict, n: int,
                    paper: float | None = None, lang: str | None = None) -> str:
    """The chapter's first computed sentence: a variant's final-loss change against the strong baseline, its
    interval, whether it is decided, and where a published gain ``paper`` (negative, nats) lies against it."""
    if resolve_language(lang) == "ko":
        return _effect_sentence_ko(name, mean, ci, verdict, n, paper)
    out = (f"Against the strong baseline, {name} {loss_change(mean)} on average over {n} paired seeds; "
           f"the range the {n} paired seeds allow, {_bracket(ci)}, lies {_side(ci)}, and the change is "
           f"{decided_words(verdict, 'en')}.")
    if paper is not None:
        out += {"ruled out": f" A gain as large as the paper's {paper:+.3f} nats lies below that range: "
                             "it is ruled out for this model on this corpus.",
                "exceeded": f" The gain is larger than the paper's {paper:+.3f} nats, over the whole range.",
                "inside": f" The paper's {paper:+.3f} nats lies inside that range: it is not ruled out.",
                }[_against_paper(ci, paper)]
    return out


def _effect_sentence_ko(name: str, mean: float, ci: tuple[float, float], verdict, n: int,
                        paper: float | None) -> str:
    if abs(mean) < SAME_NATS:
        change = "최종 손실을 바꾸지 않습니다(0.001 nats까지)"
    else:
        change = f"최종 손실을 **{abs(mean):.3f}** nats {'낮춥니다' if mean < 0 else '높입니다'}"
    out = (f"강한 기준선에 비해 {name} 변형은 짝지은 시드 {n}개 평균으로 {change}. 짝지은 시드 {n}개가 허용하는 "
           f"범위 {attach(_bracket(ci), '은/는')} {_side_ko(ci)}. 판정: {decided_words(verdict, 'ko')}.")
    if paper is not None:
        out += {"ruled out": f" 논문의 {paper:+.3f} nats만큼 큰 이득은 그 범위 아래에 있으므로, 이 말뭉치의 이 "
                             "모델에서는 배제됩니다.",
                "exceeded": f" 범위 전체에서 이득이 논문의 {paper:+.3f} nats보다 큽니다.",
                "inside": f" 논문의 {paper:+.3f} nats는 그 범위 안에 있으므로 배제되지 않습니다.",
                }[_against_paper(ci, paper)]
    return out


def baseline_lesson(weak: float, strong: float, inflation: float, strong_alone: float,
                    lang: str | None = None) -> str:
    """The lesson on baselines: ResFormer's gain against the weak baseline (``weak``: resformer_raw − baseline_raw)
    and the strong one (``strong``: resformer − baseline), their difference ``inflation`` (weak − strong, per seed
    mean; below 0 = the weak baseline makes the gain look larger), and ``strong_alone`` = baseline − baseline_raw
    (below 0 = the strong baseline is better by itself)."""
    # the same for both languages: how the weak baseline changes the gain, and whether to say how many times
    inflated = "same" if abs(inflation) < 0.001 else "larger" if inflation < 0 else "smaller"
    times = abs(strong_alone) / abs(strong) if strong_alone < 0 and abs(strong) >= SAME_NATS else None
    if resolve_language(lang) == "ko":
        return _baseline_lesson_ko(weak, strong, inflation, strong_alone, inflated, times)
    compare = {"same": "the same to 0.001 nats: here the weak baseline does not inflate the gain",
               "larger": f"larger against the weak baseline by {abs(inflation):.3f} nats",
               "smaller": f"smaller against the weak baseline by {abs(inflation):.3f} nats"}[inflated]
    better = "better" if strong_alone < 0 else "worse"
    out = (f"ResFormer's change of the loss is {weak:+.3f} nats against the weak baseline and {strong:+.3f} "
           f"against the strong one, {compare}. The strong baseline alone is **{abs(strong_alone):.3f}** "
           f"nats {better} than the weak one")
    if times is not None:
        out += f", {times:.0f} times the size of ResFormer's change"
    return out + "."


def _baseline_lesson_ko(weak: float, strong: float, inflation: float, strong_alone: float, inflated: str,
                        times: float | None) -> str:
    if inflated == "same":
        compare = "차이가 0.001 nats 이내입니다. 여기서는 약한 기준선이 이득을 부풀리지 않습니다"
    else:
        compare = (f"약한 기준선에 대해 {abs(inflation):.3f} nats "
                   f"{'더 크게 보입니다' if inflated == 'larger' else '더 작게 보입니다'}")
    better = "낮습니다" if strong_alone < 0 else "높습니다"
    out = (f"ResFormer의 손실 변화는 약한 기준선에 대해 {weak:+.3f} nats, 강한 기준선에 대해 {strong:+.3f} nats로, "
           f"{compare}. 강한 기준선은 그 자체로 약한 기준선보다 손실이 **{abs(strong_alone):.3f}** nats "
           f"{better}.")
    if times is not None:
        out += f" ResFormer 변화 크기의 {times:.0f}배입니다."
    return out


def steps_sentence(mean: float, ci: tuple[float, float], verdict, lang: str | None = None) -> str:
    """The recall comparison in steps (ResFormer − baseline steps to learn lookup; below 0 = sooner)."""
    same = abs(mean) < 0.5                       # the same step, to the whole steps printed
    if _ko(lang):
        when = ("평균적으로 기준선과 같은 스텝에서" if same else
                f"기준선보다 평균 {abs(mean):.0f} 스텝 {'빨리' if mean < 0 else '늦게'}")
        return (f"ResFormer는 {when} 조회를 배웁니다(차이의 구간 {_bracket(ci, 0)} 스텝은 {_side_ko(ci)}: "
                f"{plain_verdict(verdict, '스텝', lang=lang)}).")
    if same:
        when = "at the same step as the baseline"
    else:
        when = f"{abs(mean):.0f} steps {'sooner' if mean < 0 else 'later'} than the baseline"
    return (f"ResFormer learns lookup {when} on average (the difference's interval {_bracket(ci, 0)} steps "
            f"lies {_side(ci)}: {plain_verdict(verdict, 'steps', lang='en')}).")


def recall_sentence(margin: float, learned: dict[str, tuple[int, int]], steps: int, lang: str | None = None) -> str:
    """Whether the recall models learned lookup: ``margin`` = the baseline's final loss − the no-lookup reference's
    (nats, below 0 = it beats a model that never looks a key up); ``learned``: variant -> (seeds that learned,
    seeds) within ``steps``."""
    every = margin < 0 and all(k == n for k, n in learned.values())     # every seed learned, below the reference
    if _ko(lang):
        counts = ", ".join(f"{v} {n}개 중 {k}개" for v, (k, n) in learned.items())
        if every:
            return (f"모든 시드가 {steps} 스텝 안에 조회를 배웠습니다({counts}): 기준선은 조회 없는 기준값보다 "
                    f"**{abs(margin):.3f}** nats 낮게 끝나므로, 아래 내용은 검색에 관한 것입니다.")
        return (f"모든 시드가 {steps} 스텝 안에 조회를 배운 것은 아닙니다({counts}). 기준선은 조회 없는 기준값에서 "
                f"{margin:+.3f} nats 떨어져 끝나므로, 아래의 해석은 조회를 배운 시드에 대해서만 검색에 관한 것입니다.")
    counts = ", ".join(f"{v} {k} of {n}" for v, (k, n) in learned.items())
    if every:
        return (f"Every seed learned lookup within {steps} steps ({counts}): the baseline ends "
                f"**{abs(margin):.3f}** nats below the no-lookup reference, so what follows is about retrieval.")
    return (f"Not every seed learned lookup within {steps} steps ({counts}); the baseline ends {margin:+.3f} "
            "nats from the no-lookup reference, so a reading below is about retrieval only for the seeds "
            "that learned.")


def _entropy_reading(gap: float, verdict) -> tuple[str, bool]:
    """What :func:`entropy_sentence` says, decided once for both languages: the reading, "negligible", "not judged"
    (out of regime or n/a), "spread" (contradicted, or above uniform and not reproduced: the keys' attention more
    even than uniform), "concentrated" (reproduced) or "undecided"; and whether the entropy is said to lie below
    uniform's."""
    word = verdict_parts(verdict)[0]
    if word == "negligible":
        return "negligible", gap < 0
    if word in ("out of regime", "n/a"):
        return "not judged", gap < 0
    if word == "contradicted" or (gap > 0 and word != "reproduced"):
        return "spread", False
    if word == "reproduced":
        return "concentrated", True
    return "undecided", gap < 0


def entropy_sentence(gap: float, verdict, lang: str | None = None) -> str:
    """The entropy claim's premise: the baseline's attention entropy (layers >= 1) − uniform causal attention's
    (nats; below 0 = concentrated attention, which ResFormer says it relieves). ``verdict``: the check's judged test
    or its verdict word. The reading is :func:`_entropy_reading`'s, the same for both languages."""
    reading, low = _entropy_reading(gap, verdict)
    if resolve_language(lang) == "ko":
        return _entropy_sentence_ko(gap, verdict, reading, low)
    where = "below" if low else "above"
    if reading == "negligible":
        return (f"The baseline's attention entropy lies **{abs(gap):.3f}** nats {where} "
                f"uniform causal attention's: {plain_verdict(verdict, lang='en')}, so its attention is not "
                "concentrated: there is no concentration here for the value residual to relieve.")
    if reading == "not judged":
        return (f"The baseline's attention entropy lies **{abs(gap):.3f}** nats {where} "
                f"uniform causal attention's: {plain_verdict(verdict, lang='en')}.")
    then = {"spread": "the attention the keys receive is spread *more evenly* than under uniform causal attention "
                      "(each query looks mostly nearby, so no key draws a crowd), not concentrated on a few keys: "
                      "there is no concentration here for the value residual to relieve",
            "concentrated": "its attention is concentrated, as ResFormer's argument assumes",
            "undecided": "whether it is concentrated is not decided"}[reading]
    return (f"The baseline's attention entropy lies **{abs(gap):.3f}** nats {where} uniform causal "
            f"attention's: {then}.")


def _entropy_sentence_ko(gap: float, verdict, reading: str, low: bool) -> str:
    base = (f"기준선의 어텐션 엔트로피는 균등 인과 어텐션의 엔트로피보다 **{abs(gap):.3f}** nats "
            f"{'낮습니다' if low else '높습니다'}")
    if reading == "negligible":
        return (base + f". 판정: {plain_verdict(verdict, lang='ko')}. 따라서 어텐션은 집중되어 있지 않으며, "
                "value residual이 덜어 줄 집중이 여기에는 없습니다.")
    if reading == "not judged":
        return base + f". 판정: {plain_verdict(verdict, lang='ko')}."
    then = {"spread": "키들이 받는 어텐션이 균등 인과 어텐션보다 *더 고르게* 퍼져 있고(각 쿼리가 주로 가까운 키를 "
                      "보므로, 키마다 받는 어텐션 총량은 오히려 고르게 나뉩니다), 소수의 키에 집중되어 있지 않습니다. "
                      "value residual이 덜어 줄 집중이 여기에는 없습니다",
            "concentrated": "ResFormer의 논증이 가정하는 대로 어텐션이 집중되어 있습니다",
            "undecided": "어텐션이 집중되어 있는지는 결정되지 않았습니다"}[reading]
    return base + f". {then}."


def lambda_sentence(slope: float, reached: int, of: int, lang: str | None = None) -> str:
    """The learned λ1 profile: its mean slope per layer and how many (seed, layer) trajectories had stopped
    moving before the learning-rate decay."""
    if resolve_language(lang) == "ko":
        trend = "커집니다" if slope > 0.001 else "작아집니다" if slope < -0.001 else "거의 일정합니다"
        still = ("이 층별 양상은 λ1이 수렴한 값이 아니라 아직 움직이는 중인 λ1의 스냅숏입니다" if reached * 2 <= of
                 else "이 층별 양상은 λ1이 수렴한 값에 가깝습니다")
        stopped = ("하나도 학습률이 마지막 감소를 시작하기 전에 움직임을 멈추지 않았으므로" if reached == 0 else
                   f"{reached}개만 학습률이 마지막 감소를 시작하기 전에 움직임을 멈췄으므로")
        return f"평균적으로 λ1은 층당 {slope:+.3f}씩 변해 깊이에 따라 {trend}. 그러나 λ1 궤적 {of}개 중 {stopped}, {still}."
    trend = ("grows with depth" if slope > 0.001 else "falls with depth" if slope < -0.001
             else "stays level with depth")
    still = ("so the profile is a snapshot of λ1 still moving, not where it settles" if reached * 2 <= of
             else "so the profile is close to where λ1 settles")
    return (f"On average λ1 {trend} ({slope:+.3f} per layer), but only {reached} of {of} λ1 trajectories "
            f"had stopped moving before the learning rate began its final decay, {still}.")


def depth_sentence(depths: list[int], gains: list[float], baseline_loss: list[float],
                   learnable_loss: list[float], concentrated: list[int], baseline_trend: float | None = None,
                   trend_limit: float | None = None, lang: str | None = None) -> str:
    """The depth sweep in words: the gain (learnable − baseline, nats) at each depth, whether the deeper
    baselines train worse (their final loss rises more than the value residual's falls), the declared premise that
    the tuned baseline does not get worse with depth (``baseline_trend``: its slope in nats per doubling of depth;
    it holds below ``trend_limit``) and at which depths the baseline's attention is concentrated."""
    # the same for both languages: whether the growth is mostly the deeper baselines training worse, and whether
    # the premise holds (None: no premise given)
    rise_b, rise_l = baseline_loss[-1] - baseline_loss[0], learnable_loss[-1] - learnable_loss[0]
    worse = gains[-1] < gains[0] and rise_b > 0 and rise_b > abs(rise_l)
    holds = (baseline_trend < trend_limit if baseline_trend is not None and trend_limit is not None else None)
    if resolve_language(lang) == "ko":
        return _depth_sentence_ko(depths, gains, baseline_loss, learnable_loss, concentrated, baseline_trend,
                                  trend_limit, worse, holds)
    out = (f"From {depths[0]} to {depths[-1]} layers the value residual's change of the loss goes "
           f"{' → '.join(f'{g:+.3f}' for g in gains)} nats")
    if worse:
        out += (f": most of the growth is the deeper baselines training worse (their loss "
                f"{baseline_loss[0]:.3f} → {baseline_loss[-1]:.3f}, the value residual's "
                f"{learnable_loss[0]:.3f} → {learnable_loss[-1]:.3f})")
    if holds is not None:
        out += (f". The tuned baseline's own loss changes by {baseline_trend:+.4f} nats per doubling of depth "
                f"(the premise that it does not get worse with depth allows less than {trend_limit:g}): the premise "
                f"**{'holds' if holds else 'fails'}**"
                + ("" if holds else ", so a gain that grows with depth cannot count as reproduced here"))
    if concentrated:
        out += f". The baseline's attention is concentrated at {', '.join(map(str, concentrated))} layers."
    else:
        out += (". At no depth is the baseline's attention concentrated: the premise of ResFormer's argument "
                f"does not appear at this width, up to {depths[-1]} layers.")
    return out


def _depth_sentence_ko(depths: list[int], gains: list[float], baseline_loss: list[float],
                       learnable_loss: list[float], concentrated: list[int], baseline_trend: float | None,
                       trend_limit: float | None, worse: bool, holds: bool | None) -> str:
    out = (f"{depths[0]}층에서 {depths[-1]}층까지 value residual의 손실 변화는 "
           f"{' → '.join(f'{g:+.3f}' for g in gains)} nats입니다")
    if worse:
        out += (f". 이득이 커진 것의 대부분은 깊은 기준선의 학습이 더 잘 안 된 탓입니다(기준선의 손실 "
                f"{baseline_loss[0]:.3f} → {baseline_loss[-1]:.3f}, value residual의 손실 "
                f"{learnable_loss[0]:.3f} → {learnable_loss[-1]:.3f})")
    if holds is not None:
        out += (f". 조정된 기준선 자신의 손실은 깊이가 두 배가 될 때마다 {baseline_trend:+.4f} nats 변합니다(전제 "
                f"'깊이가 늘어도 나빠지지 않는다'의 허용 한계: {trend_limit:g} nats 미만). 전제가 "
                f"**{'성립합니다' if holds else '성립하지 않습니다'}**"
                + ("" if holds else ". 따라서 깊이에 따라 커지는 이득도 여기서는 재현됨으로 셀 수 없습니다"))
    if concentrated:
        out += f". 기준선의 어텐션은 {', '.join(map(str, concentrated))}층 모델에서 집중되어 있습니다."
    else:
        out += (". 어느 깊이에서도 기준선의 어텐션은 집중되어 있지 않습니다. 이 폭에서는 "
                f"{depths[-1]}층까지 가도 ResFormer 논증의 전제(어텐션 집중)가 나타나지 않습니다.")
    return out


def svformer_sentence(mean: float, ci: tuple[float, float], verdict, n: int, lang: str | None = None) -> str:
    """SVFormer (values from the first layer only) against the paper's expected *cost*: its loss change
    (svformer − baseline, nats; below 0 = lower loss), where the range the ``n`` paired seeds allow lies, and the
    verdict of the declared one-sided test ``svformer_cost`` after the correction for the number of tests."""
    word = verdict_parts(verdict)[0]
    side = _where(ci)
    # "but" where the verdict does not follow the interval's side, the same for both languages
    but = (side == "below" and word != "contradicted") or (side == "above" and word != "reproduced")
    if _ko(lang):
        return _svformer_sentence_ko(mean, ci, verdict, n, word, side, but)
    where = {"below": f"the whole range the {n} paired seeds allow, {_bracket(ci)}, lies below 0: a *lower* loss, "
                      "the opposite of the cost the paper reports",
             "above": f"the whole range the {n} paired seeds allow, {_bracket(ci)}, lies above 0: a higher loss, "
                      "the cost the paper reports",
             "both": f"the range the {n} paired seeds allow, {_bracket(ci)}, holds both a cost and a gain"}[side]
    judged = {"reproduced": "the paper's cost is reproduced here",
              "contradicted": "the paper's cost is contradicted here",
              "negligible": f"the change is {plain_verdict(verdict, lang='en')}, so it is neither the paper's cost "
                            "nor its opposite",
              "out of regime": f"the claim of a cost is {plain_verdict(verdict, lang='en')}",
              "n/a": f"the claim of a cost is {plain_verdict(verdict, lang='en')}",
              }.get(word, "once we allow for the number of tests, the claim of a cost is undecided "
                          "(see How sure are we?)")
    return f"SVFormer changes the loss by **{mean:+.3f}** nats; {where}{' — but ' if but else '; '}{judged}."


def _svformer_sentence_ko(mean: float, ci: tuple[float, float], verdict, n: int, word: str, side: str,
                         but: bool) -> str:
    """:func:`svformer_sentence` in Korean."""
    br = attach(_bracket(ci), "이/가")
    where = {"below": f"짝지은 시드 {n}개가 허용하는 범위 전체 {br} 0보다 아래에 있습니다: 논문이 보고한 비용과 반대로 "
                      "*더 낮은* 손실입니다",
             "above": f"짝지은 시드 {n}개가 허용하는 범위 전체 {br} 0보다 위에 있습니다: 논문이 보고한 비용인 더 높은 "
                      "손실입니다",
             "both": f"짝지은 시드 {n}개가 허용하는 범위 {_bracket(ci)}에는 비용과 이득이 모두 들어 있습니다"}[side]
    pv = plain_verdict(verdict, lang="ko")
    judged = {"reproduced": "여기서 논문의 비용이 재현됩니다",
              "contradicted": "여기서 논문의 비용이 반박됩니다",
              "negligible": f"판정: {pv}. 따라서 논문의 비용도, 그 반대도 아닙니다",
              "out of regime": f"비용 주장의 판정: {pv}",
              "n/a": f"비용 주장의 판정: {pv}",
              }.get(word, "검정의 수를 감안하면 비용 주장은 미정입니다(*얼마나 확실한가?* 참고)")
    return f"SVFormer는 손실을 **{mean:+.3f}** nats 바꿉니다. {where}{' — 하지만 ' if but else '. '}{judged}."


def live_run_sentence(live: float, saved_mean: float, saved_spread: float, saved_ci: tuple[float, float],
                      n: int) -> str:
    """The live run's loss change (nats) read against the saved runs' mean, how much their ``n`` seeds differ
    (``saved_spread``: their standard deviation) and the range those seeds allow (``saved_ci``), in words."""
    lo, hi = saved_ci
    out = (f"the saved runs had {saved_mean:+.4f} at the same point of their schedule (their {n} seeds differ "
           f"by about {saved_spread:.4f}): ")
    if lo <= 0 <= hi:
        near = "within" if abs(live - saved_mean) <= saved_spread else "further than"
        return out + (f"the saved runs have no direction here (the range their seeds allow holds 0); the live run "
                      f"lies {near} that seed-to-seed difference of their mean")
    side = "points the same way as" if (live > 0) == (saved_mean > 0) else "points the other way from"
    size = (", by more than the seeds differ" if abs(live) > saved_spread
            else ", but by less than the seeds differ: one short run cannot tell the direction")
    return out + f"the live run {side} the saved runs{size}"


def answer(gain: float, ci: tuple[float, float], paper: float, deep_layers: int, deep_gain: float,
           entropy_gap: float, deeper_baselines_worse: bool = False, verdict="undecided",
           n: int = 5, smoothing=None, lang: str | None = None) -> str:
    """'The answer' to the chapter's question, with three numbers a learner can repeat, all as a loss change
    (variant − baseline, nats; negative = better): ResFormer's (fixed 0.5/0.5) change at 8 layers with the range
    its ``n`` paired seeds allow and its ``verdict``, against the paper's; the learnable-λ variant's change at
    ``deep_layers`` (the depth sweep trains that variant; ``deeper_baselines_worse``: whether the deeper
    baselines' own loss rose), and the baseline's entropy − uniform causal attention's. ``smoothing``: the declared
    over-smoothing test (ResFormer's change of the mean cosine of the tokens' states, with ``mean``, ``ci`` and its
    verdict), the question's third part; None leaves it out."""
    # the same for both languages: the paper's gain ruled out or not, a larger gain deeper or about the same
    ruled_out, larger = ci[0] > paper, deep_gain < gain - SAME_NATS
    if resolve_language(lang) == "ko":
        return _answer_ko(gain, ci, paper, deep_layers, deep_gain, entropy_gap, deeper_baselines_worse, verdict, n,
                          smoothing, ruled_out, larger)
    at8 = (f"and the paper's **{paper:+.3f}** nats at 82 M parameters is ruled out" if ruled_out else
           f"and the paper's {paper:+.3f} nats at 82 M parameters is not ruled out")
    deep = (f"**{deep_gain:+.3f}** nats, a larger gain" if larger else
            f"**{deep_gain:+.3f}** nats, about the same change")
    # The entropy is of the attention each key *receives* (token importance), not of one query's row: a query's
    # row can be no more even than uniform, but the keys' shares can, when queries look nearby.
    ent = ("more evenly over the keys than under uniform causal attention (each query looks mostly nearby, so no "
           "key draws a crowd)" if entropy_gap > 0 else
           "more on a few keys than under uniform causal attention")
    return (f"Mixing the first layer's values into every later layer (ResFormer's fixed 0.5/0.5) changes the "
            f"loss by **{gain:+.3f}** nats in our 8-layer model (negative = better), {decided_words(verdict, 'en')} "
            f"(the range the {n} paired seeds allow: {_bracket(ci)}) — {at8}. At {deep_layers} layers the "
            f"learnable-λ variant changes it by {deep}"
            + (", most of it because the deeper baselines train worse. " if deeper_baselines_worse else ". ")
            + (f"It does not work the way the papers explain: the attention our baseline's keys receive is "
               f"spread **{abs(entropy_gap):.3f}** nats {ent}, so there is no concentration for it to relieve."
               if entropy_gap > 0 else
               f"The attention our baseline's keys receive is piled **{abs(entropy_gap):.3f}** nats {ent}, the "
               "concentration the papers say the value residual relieves.")
            + (f" Over-smoothing, how alike the tokens' states are (mean cosine over the layers), changes by "
               f"{smoothing.mean:+.3f} with it {_bracket(smoothing.ci)}: {decided_words(smoothing, 'en')}."
               if smoothing is not None else ""))


def _answer_ko(gain: float, ci: tuple[float, float], paper: float, deep_layers: int, deep_gain: float,
               entropy_gap: float, deeper_baselines_worse: bool, verdict, n: int, smoothing, ruled_out: bool,
               larger: bool) -> str:
    at8 = (f"82 M 파라미터에서 논문이 얻은 **{paper:+.3f}** nats는 배제됩니다" if ruled_out else
           f"82 M 파라미터에서 논문이 얻은 {paper:+.3f} nats는 배제되지 않습니다")
    kind = "더 큰 이득" if larger else "거의 같은 변화"
    deep = (f"{deep_layers}층에서는 학습 가능한 λ 변형이 손실을 **{deep_gain:+.3f}** nats 바꾸어 {kind}"
            + ("인데, 그 대부분은 깊은 기준선의 학습이 더 잘 안 된 탓입니다. " if deeper_baselines_worse else "입니다. "))
    if entropy_gap > 0:
        ent = (f"또한 value residual은 논문들이 설명하는 방식으로 작동하지 않습니다. 우리 기준선에서 키들이 받는 "
               f"어텐션은 균등 인과 "
               f"어텐션일 때보다 **{abs(entropy_gap):.3f}** nats 더 고르게 퍼져 있어(각 쿼리가 주로 가까운 곳을 보므로 "
               "어느 키에도 어텐션이 몰리지 않습니다), 덜어 줄 집중이 없습니다.")
    else:
        ent = (f"우리 기준선에서 키들이 받는 어텐션은 균등 인과 어텐션일 때보다 **{abs(entropy_gap):.3f}** nats 더 "
               "소수의 키에 몰려 있으며, 이것이 논문들이 value residual이 덜어 준다고 말하는 집중입니다.")
    return (f"첫 층의 값을 그 뒤의 모든 층에 섞으면(ResFormer의 고정 0.5/0.5) 우리 8층 모델에서 손실이 "
            f"**{gain:+.3f}** nats 바뀝니다(음수 = 더 좋음). 판정: {decided_words(verdict, 'ko')}(짝지은 시드 {n}개가 "
            f"허용하는 범위: {_bracket(ci)}) — {at8}. " + deep + ent
            + (f" 과평활화(over-smoothing), 곧 토큰 상태들이 얼마나 비슷한지(층 평균 코사인)는 이 변형에서 "
               f"{smoothing.mean:+.3f}만큼 바뀝니다 {_bracket(smoothing.ci)}. 판정: {decided_words(smoothing, 'ko')}."
               if smoothing is not None else ""))


#: the variants of the chapter's first figure and the declared test that reads each one's final loss
GAIN_TESTS = {"resformer": "resformer_loss", "learnable": "learnable_loss", "svformer": "svformer_cost",
              "neutreno": "neutreno_loss"}


def gain_rows(by_test: dict) -> list[dict]:
    """The first figure's rows, ``{"name", "mean", "ci", "margin"}`` per variant of :data:`GAIN_TESTS`, read from
    the recipe's judged tests by name (``by_test``: test name -> an object with ``mean``, ``ci`` and, for a judged
    test, ``test.margin``: its declared smallest effect, None when it has none)."""
    return [{"name": v, "mean": by_test[t].mean, "ci": tuple(by_test[t].ci),
             "margin": getattr(getattr(by_test[t], "test", None), "margin", None)} for v, t in GAIN_TESTS.items()]


def concentrated_depths(by_test: dict, depths: list[int]) -> list[int]:
    """The depths of the depth sweep at which the baseline's attention is decidedly concentrated (its test
    ``baseline_concentrated_L{depth}`` reproduced)."""
    return [L for L in depths if by_test[f"baseline_concentrated_L{L}"].verdict == "reproduced"]


# ------------------------------------------------------------------ the notebook's remaining printed lines, both editions
def gains_title(corpus: str, n_seeds: int = 5, lang: str | None = None) -> str:
    """The gains figure's title: ``kjv: 8 layers × 64 wide, 5 paired seeds``."""
    if resolve_language(lang) == "ko":
        return f"{corpus}: 8층 × 폭 64, 짝지은 시드 {n_seeds}개"
    return f"{corpus}: 8 layers × 64 wide, {n_seeds} paired seeds"


def layer_metrics_title(corpus: str, lang: str | None = None) -> str:
    """The per-layer metrics figure's title: ``kjv (word-8x64), after training``."""
    if resolve_language(lang) == "ko":
        return f"{corpus} (word-8x64), 학습 후"
    return f"{corpus} (word-8x64), after training"


def stream_start_table(baseline_raw: float, resformer_raw: float, weak: float, baseline: float, resformer: float,
                       strong: float, lang: str | None = None) -> str:
    """Final losses with the stream starting at the raw embedding (GPT-2) and at RMSNorm(embedding) (nanochat)."""
    ko = resolve_language(lang) == "ko"
    head = (["스트림의 시작", "기준선", "resformer", "resformer − 기준선"] if ko else
            ["the stream starts at", "baseline", "resformer", "resformer − baseline"])
    raw = "정규화하지 않은 임베딩 (GPT-2)" if ko else "the raw embedding (GPT-2)"
    normed = "RMSNorm(임베딩) (nanochat)" if ko else "RMSNorm(embedding) (nanochat)"
    return table(head, [[raw, f"{baseline_raw:.3f}", f"{resformer_raw:.3f}", f"{weak:+.3f}"],
                        [normed, f"{baseline:.3f}", f"{resformer:.3f}", f"{strong:+.3f}"]])


def pairing_sentence(mine: tuple[float, float, float], recipe_mean: float, recipe_ci: tuple[float, float],
                     unpaired_half: float, paired_half: float, lang: str | None = None) -> str:
    """The learner's paired interval next to the recipe's test, and what pairing did to its width."""
    narrows = paired_half < unpaired_half
    if resolve_language(lang) == "ko":
        return (f"직접 계산한 ResFormer − 기준선: {mine[0]:+.4f} [{mine[1]:+.4f}, {mine[2]:+.4f}]; 레시피의 검정: "
                f"{recipe_mean:+.4f} [{recipe_ci[0]:+.4f}, {recipe_ci[1]:+.4f}]. 같은 실행을 짝짓지 않은 평균으로 "
                f"비교하면 짝지은 ±{paired_half:.4f} 대신 ±{unpaired_half:.4f} nats가 됩니다. "
                + ("여기서는 짝짓기가 범위를 좁힙니다." if narrows else
                   "여기서는 짝짓기가 범위를 좁히지 않습니다. 두 실행이 같은 시드로 공유하는 운이 두 모델이 같은 시작에 서로 다르게 "
                   "반응하는 정도에 비해 작기 때문입니다."))
    return (f"Your ResFormer − baseline: {mine[0]:+.4f} [{mine[1]:+.4f}, {mine[2]:+.4f}]; the recipe's "
            f"test: {recipe_mean:+.4f} [{recipe_ci[0]:+.4f}, {recipe_ci[1]:+.4f}]. Compared as unpaired means, the "
            f"same runs would give ±{unpaired_half:.4f} nats instead of the paired ±{paired_half:.4f}: "
            + ("pairing narrows the range here." if narrows else
               "here pairing does not narrow it, because the seeds' shared luck is small next to how "
               "differently the two models respond to the same start."))


def live_table(steps: list[int], baseline: list[float], deltas: list[float], lang: str | None = None) -> str:
    """The live run's validation loss per evaluation step: the baseline's and resformer − baseline."""
    ko = resolve_language(lang) == "ko"
    return table([("스텝" if ko else "step")] + [str(s) for s in steps],
                 [[("기준선" if ko else "baseline")] + [f"{x:.3f}" for x in baseline],
                  [("resformer − 기준선" if ko else "resformer − baseline")] + [f"{d:+.3f}" for d in deltas]])


def lambda_line_table(rows: list[list[str]], lang: str | None = None) -> tuple[str, str]:
    """The heading and the table of the readouts along λ1 + λ2 = 1 (``rows``: λ1, λ2, loss, change from trained,
    mean entropy of blocks 1-7, already formatted)."""
    if resolve_language(lang) == "ko":
        return ("λ1 + λ2 = 1을 따라, $V_1$이 없는 경우부터 $V_1$만 있는 경우까지:",
                table(["λ1", "λ2", "손실 (nats)", "학습된 설정 대비 변화", "평균 엔트로피, 블록 1-7"], rows))
    return ("Along λ1 + λ2 = 1, from no $V_1$ to $V_1$ alone:",
            table(["λ1", "λ2", "loss (nats)", "change from trained", "mean entropy, blocks 1-7"], rows))


def verdicts_table(rows: list, lang: str | None = None) -> str:
    """The declared tests as a Markdown table (``rows``: :class:`~vrs_edu.lab.results.Verdict`): name, family,
    interval, Holm's p (n/a when not judged), verdict."""
    ko = resolve_language(lang) == "ko"
    cells = [[x.test.name, x.test.family, x.interval(),
              ("해당 없음" if ko else "n/a") if math.isnan(x.p_holm) else f"{x.p_holm:.3f}",
              verdict_label(x, lang=lang)] for x in rows]
    head = (["검정", "검정 묶음", "평균 [95 % 신뢰구간]", "p (Holm)", "판정"] if ko else
            ["test", "family", "mean [95 % CI]", "p (Holm)", "verdict"])
    return table(head, cells, align="lllrl")


def preconditions_sentence(outcomes: list, paper: float, n: int, power: float, lang: str | None = None) -> str:
    """Each precondition's value, the side it needs and whether it holds (``outcomes``:
    :class:`~vrs_edu.lab.analysis.PreconditionOutcome`), and the power to detect the paper's effect."""
    def side(o):
        return "<" if o.precondition.direction == "negative" else ">"
    if resolve_language(lang) == "ko":
        return ("실행에서 읽은 전제 조건: " + "; ".join(
            f"`{o.precondition.name}` {o.value:.3f} (필요: {side(o)} {o.precondition.threshold:g}): "
            f"{'성립' if o.holds else '불성립'}" for o in outcomes)
            + f". 시드 {n}개로 논문의 {paper:+.3f} nats를 검출할 검정력: {power:.0%}.")
    return ("Preconditions, read from the runs: " + "; ".join(
        f"`{o.precondition.name}` {o.value:.3f} (needs {side(o)} {o.precondition.threshold:g}): "
        f"{'holds' if o.holds else 'fails'}" for o in outcomes)
        + f". Power to detect the paper's {paper:+.3f} nats with {n} seeds: {power:.0%}.")


# ---------------------------------------------------------------------------------------------------------------
# Appendix 03's sentences and tables (notebooks/03a_value_residual_evidence.py), in each edition.

def _ko(lang: str | None) -> bool:
    return resolve_language(lang) == "ko"


def appendix_corpus_sentence(corpus: str, unigram: float, epochs: float, train_tokens: int, gap: dict,
                             commit: str, dirty: bool, lang: str | None = None) -> str:
    """The corpus, the unigram loss, the epochs read, the baseline's final losses (``gap``: ``train``, ``val``,
    ``n``) and the code's commit."""
    if _ko(lang):
        return (f"말뭉치({corpus}): 유니그램(문맥 없음) 검증 손실 {unigram:.3f} nats. 실행 하나는 학습 토큰 "
                f"{train_tokens:,}개의 {epochs:.2f} 에폭을 읽습니다. 기준선의 최종 손실: 학습 텍스트에서 "
                f"{gap['train']:.3f}, 검증 분할에서 {gap['val']:.3f} nats(시드 {gap['n']}개의 평균). 코드 "
                f"{commit}, 작업 트리 {'변경 있음' if dirty else '깨끗함'}.")
    return (f"Corpus ({corpus}): unigram (context-free) validation loss "
            f"{unigram:.3f} nats; a run reads "
            f"{epochs:.2f} epochs of its "
            f"{train_tokens:,} training tokens. Baseline final loss: on training "
            f"text {gap['train']:.3f}, on the validation split {gap['val']:.3f} nats (mean of "
            f"{gap['n']} seeds); code {commit}, "
            f"tree {'dirty' if dirty else 'clean'}.")


def setup_line(part: str, model: dict, train: dict, n_params: int, variants, seeds: list[int],
               lang: str | None = None) -> str:
    """One part's set-up (``part``: ``"corpus"`` or ``"recall"``; ``model`` and ``train``: the baseline's
    configuration): shape, parameters, steps, evaluation, variants, seeds, the stream's start and QK-norm."""
    if _ko(lang):
        name = {"corpus": "말뭉치", "recall": "회상 과제"}.get(part, part)
        return (f"{name}: {model['n_layers']}층 × 폭 {model['d_model']}, 파라미터 {n_params:,}개; 시퀀스 "
                f"{train['batch_size']}개 배치로 {train['steps']} 스텝, {train['eval_every']} 스텝마다 평가; 변형 "
                f"{', '.join(variants)}; 시드 {seeds}; 기준선의 스트림 시작: {model['stream_start']}; "
                f"QK-norm: {model['qk_norm']}")
    return (f"{part}: {model['n_layers']} layers × {model['d_model']} wide, {n_params:,} parameters; "
            f"{train['steps']} steps of {train['batch_size']} sequences, evaluated every "
            f"{train['eval_every']} steps; variants {', '.join(variants)}; seeds {seeds}; "
            f"the baseline's stream starts at: {model['stream_start']}; QK-norm: {model['qk_norm']}")


def step_seconds_line(seconds: dict[str, float], lang: str | None = None) -> str:
    """Seconds per training step of each variant (timed interleaved)."""
    listed = ", ".join(f"{v} {s:.3f}" for v, s in seconds.items())
    if _ko(lang):
        return f"학습 스텝당 초(번갈아 잰 시간): {listed}."
    return "Seconds per training step (interleaved timing): " + listed + "."


def _ci_label(lang: str | None) -> str:
    return "95% 신뢰구간 " if _ko(lang) else "95% CI "


def per_seed_sentence(r, paper: float, before_step: int, before, lang: str | None = None) -> str:
    """ResFormer's primary test seed by seed: the per-seed differences, their sd, the power to detect the paper's
    gain; then, by verdict, whether a gain as large as the paper's is excluded (undecided, interval above it), not
    excluded (undecided), or what the decided verdict means; then the difference before the decay (``before``:
    a paired comparison with ``interval(label=...)``)."""
    lo = r.ci[0]
    values = ", ".join(f"{d:+.3f}" for d in r.values)
    if _ko(lang):
        if r.verdict == "undecided" and lo > paper:
            middle = (f"구간의 아래 끝 {attach(f'{lo:+.3f}', '은/는')} 논문의 {paper:+.3f}보다 위에 있습니다: 이 말뭉치의 이 모델에서는 논문만큼 큰 "
                      "이득이 (95 %) 배제되며, 검정에는 그런 이득을 찾을 검정력이 있었습니다. ")
        elif r.verdict == "undecided":
            middle = f"구간이 논문의 {paper:+.3f}까지 닿습니다: 그만큼 큰 이득이 배제되지 않습니다. "
        else:
            middle = f"강한 기준선에 대한 변화: {decided_words(r, lang)}. "
        return (f"시드별: {values}; 표준편차 {r.sd:.4f} nats; 시드 {r.n}개로 논문의 "
                f"{attach(f'{paper:+.3f}', '을/를')} 검출할 검정력 {r.power:.0%}. " + middle
                + f"감쇠 전(스텝 {before_step}, 선언된 검정이 아님)의 차이: {before.interval(label=_ci_label(lang))}.")
    return (f"Per seed: {values}; sd {r.sd:.4f} nats; power "
            f"{r.power:.0%} to detect the paper's {paper:+.3f} with {r.n} seeds. "
            + (f"The interval's lower end {lo:+.3f} lies above the paper's {paper:+.3f}: a gain as "
               "large as the paper's is excluded (95 %) for this model on this corpus, and the test "
               "had the power to find one. " if r.verdict == "undecided" and lo > paper else
               f"The interval reaches the paper's {paper:+.3f}: a gain that large is not excluded. "
               if r.verdict == "undecided" else
               f"Against the strong baseline the change is {decided_words(r, lang)}. ")
            + f"Before the decay (step {before_step}, not a declared test) the difference was "
            f"{before.interval(label=_ci_label(lang))}.")


def weak_baseline_sentence(weak_interval: str, weak_ci: tuple[float, float], strong, inflates,
                           lang: str | None = None) -> str:
    """ResFormer's change against the weak and the strong baseline, and the inflation test."""
    below = weak_ci[1] < 0
    if _ko(lang):
        return (f"약한 기준선에 대한 ResFormer의 변화는 {weak_interval} "
                f"({'0보다 아래' if below else '0에 걸침'}), 강한 기준선에 대해서는 {strong.interval()} "
                f"({verdict_label(strong, lang)})입니다. 부풀림 검정은 {inflates.mean:+.4f} nats"
                f"({verdict_label(inflates, lang)}, Holm 보정 후 p {inflates.p_holm:.3f})입니다.")
    return (f"Against the weak baseline ResFormer's change is {weak_interval} "
            f"({'below 0' if below else 'spanning 0'}); against the strong one "
            f"{strong.interval()} ({verdict_label(strong, lang)}). The inflation test reads {inflates.mean:+.4f} nats "
            f"({verdict_label(inflates, lang)}, p after Holm {inflates.p_holm:.3f}).")


def svformer_reading(v, lang: str | None = None) -> str:
    """What SVFormer's declared test ``svformer_cost`` says, by verdict and by where its interval lies."""
    ko = _ko(lang)
    lo, hi = v.ci
    if v.verdict == "reproduced":
        return "SVFormer는 논문이 보고한 대로 여기서 손실 비용을 치릅니다." if ko else \
            "SVFormer costs loss here, as the paper reports."
    if v.verdict == "contradicted":
        return "SVFormer는 여기서 기준선보다 낫습니다: 논문과 반대입니다." if ko else \
            "SVFormer is better than the baseline here: the opposite of the paper."
    if v.verdict != "undecided":
        return f"SVFormer의 손실 변화: {decided_words(v, lang)}." if ko else \
            f"SVFormer's change of the loss is {decided_words(v, lang)}."
    if lo <= 0 <= hi:
        if ko:
            return (f"비용은 보이지 않았고, 비용이 없다는 것도 보이지 않았습니다: 구간이 0을 포함합니다. {hi:+.3f} nats를 "
                    f"넘는 비용은 (95 %) 배제되고, {attach(f'{lo:+.3f}', '을/를')} 넘는 이득도 마찬가지입니다.")
        return (f"No cost seen, and none shown absent: the interval includes 0; a cost above "
                f"{hi:+.3f} nats is excluded (95 %), and so is a gain beyond "
                f"{lo:+.3f}.")
    side = "below" if hi < 0 else "above"
    if ko:
        where = "0보다 아래(비용이 아니라 이득)" if side == "below" else "0보다 위(비용)"
        return (f"보정하지 않은 95 % 구간은 {where}에 있지만, 검정 묶음 안에서 Holm 보정을 하면(p {v.p_holm:.3f}) 검정은 "
                "미정입니다: 이 말뭉치의 이 모델에서 논문의 비용은 재현되지도 반박되지도 않습니다.")
    what = "a gain, not a cost" if side == "below" else "a cost"
    return (f"The unadjusted 95 % interval lies {side} 0 ({what}), but after Holm's "
            f"correction within its family (p {v.p_holm:.3f}) the test is undecided: "
            "the paper's cost is neither reproduced nor contradicted for this model on this "
            "corpus.")


def before_decay_line(step: int, paired, lang: str | None = None) -> str:
    """A paired difference before the learning-rate decay (``paired``: with ``interval(label=...)``): a
    description, not a declared test."""
    interval = paired.interval(label=_ci_label(lang))
    if _ko(lang):
        return f"감쇠 전(스텝 {step}, 선언된 검정이 아님): {interval}."
    return f"Before the decay (step {step}, not a declared test): {interval}."


def entropy_lead(part: str, T: int, ref: float, lang: str | None = None) -> str:
    """The line above a per-layer entropy table: the uniform-causal reference and log T at T."""
    if _ko(lang):
        name = {"corpus": "말뭉치", "recall": "회상 과제"}.get(part, part)
        return f"**{name}** (T = {T}): 균등 인과 엔트로피 {ref:.3f}, log T = {math.log(T):.3f}."
    return f"**{part}** (T = {T}): uniform-causal entropy {ref:.3f}, log T = {math.log(T):.3f}."


def entropy_rows_table(rows: list, lang: str | None = None) -> str:
    """Per layer, the baseline's and ResFormer's entropy, each beside its difference from the uniform-causal one."""
    if _ko(lang):
        return table(["층", "baseline", "− 균등", "resformer", "− 균등"], rows)
    return table(["layer", "baseline", "− uniform", "resformer", "− uniform"], rows)


def entropy_below_line(baseline_below: list[int], resformer_below: list[int], lang: str | None = None) -> str:
    """Which layers of the baseline and of ResFormer are below the uniform-causal entropy (concentrated)."""
    if _ko(lang):
        base = (f"균등 인과 엔트로피보다 낮은 층: {baseline_below}" if baseline_below else
                "균등 인과 엔트로피보다 낮은 층이 없습니다: 완화할 어텐션 집중이 없습니다")
        return f"기준선: {base}. 균등 인과 엔트로피보다 낮은 ResFormer의 층: {resformer_below or '없음'}."
    base = (f"layers below the uniform-causal entropy: {baseline_below}" if baseline_below else
            "no layer is below the uniform-causal entropy: there is no attention concentration to relieve")
    return f"Baseline: {base} ResFormer's layers below the uniform-causal entropy: {resformer_below or 'none'}."


def metrics_table(rows: list, lang: str | None = None) -> str:
    """The sink and oversmoothing metrics per layer of the baseline and ResFormer (rows as the appendix builds
    them)."""
    if _ko(lang):
        return table(["지표", "변형", "층별 (또는 깊이별)"], rows, align="llr")
    return table(["metric", "variant", "per layer (or depth)"], rows, align="llr")


def lambda_profile_table(lambda_1: list[float], lambda_2: list[float], own_off: list[int],
                         lang: str | None = None) -> tuple[str, str]:
    """The learnable variant's λ1 and λ2 per layer (means of seeds), and the layers where every seed turned λ2
    below 0.1."""
    ko = _ko(lang)
    head = ["", *((f"층 {l + 1}" if ko else f"layer {l + 1}") for l in range(len(lambda_1)))]
    mean = "시드 평균" if ko else "mean of seeds"
    rows = [[f"λ1 ({mean})", *(f"{x:.3f}" for x in lambda_1)], [f"λ2 ({mean})", *(f"{x:.3f}" for x in lambda_2)]]
    if ko:
        return table(head, rows), ("모든 시드가 λ2(자기 값)를 0.1 아래로 낮춘 층(SVFormer처럼 V_1만 읽음): "
                                   f"{own_off or '없음'}.")
    return table(head, rows), ("Layers where every seed turned λ2 (own values) below 0.1 — they read V_1 alone, like "
                               f"SVFormer: {own_off or 'none'}.")


def slopes_sentence(slopes: list[float], reached: int, of: int, tol: float, lang: str | None = None) -> str:
    """Each seed's λ1 slope over depth, and how many (seed, layer) λ1 trajectories had plateaued."""
    listed = ", ".join(f"{d:+.4f}" for d in slopes)
    if _ko(lang):
        return (f"시드별 기울기: {listed}. λ1은 (시드, 층) 궤적 {of}개 중 {reached}개에서 감쇠 전에 움직임을 멈췄습니다"
                f"(창 안의 변화 ≤ 전체 변화의 {tol}배).")
    return (f"Per-seed slopes: {listed}; "
            f"λ1 had stopped moving before the decay in {reached} of {of} (seed, layer) "
            f"trajectories (change in the window ≤ {tol} × the whole change).")


def pilot_line(lr: float, seeds: list[int], steps: list[float], lang: str | None = None) -> str:
    """The held-out tuning pilot at one learning rate: steps to learn lookup per seed."""
    listed = ", ".join(f"{a:.0f}" for a in steps)
    if _ko(lang):
        return f"홀드아웃 예비 실행, baseline, lr {lr}: 시드 {seeds}에서 배우기까지 스텝: {listed}"
    return f"held-out pilot, baseline at lr {lr}: steps to learn on seeds {seeds}: " + listed


def tuning_sentence(chosen: float, used: float, task: dict, lang: str | None = None) -> str:
    """The learning rate the declared rule chose, the recall runs' rate and the task's settings."""
    settings = ", ".join(f"{k} {v}" for k, v in task.items())
    if _ko(lang):
        return (f"선언된 규칙이 고른 lr은 {chosen:g}입니다. 회상 실행은 lr {attach(f'{used:g}', '으로/로')} 학습합니다. "
                f"과제: {settings}.")
    return (f"The declared rule chose lr {chosen:g}; the recall runs train at "
            f"{used:g}. Task: " + settings + ".")


def recall_table(rows: list, fraction: float, reference: float, steps: int, lang: str | None = None
                 ) -> tuple[str, str]:
    """The recall task's losses and accuracies (first row: the no-lookup reference; ``rows`` as the appendix
    builds them, the first cell of the first row replaced here) and what "steps to learn" counts."""
    if _ko(lang):
        rows = [["조회 없는 기준값", *rows[0][1:]], *rows[1:]]
        rows = [[r[0].replace(" (mean of seeds)", " (시드 평균)"), *r[1:]] for r in rows]
        return (table(["", "손실 (nats)", "정확도", "쿼리별 정확도", "배우기까지 스텝, 시드별"], rows),
                f"배우기까지 스텝: 손실이 처음으로 기준값의 {fraction}배({fraction * reference:.3f} nats)에 이를 때까지"
                f"(끝내 이르지 못하면 {steps}).")
    rows = [["no-lookup reference", *rows[0][1:]], *rows[1:]]
    return (table(["", "loss (nats)", "accuracy", "accuracy by query", "steps to learn, per seed"], rows),
            f"Steps to learn: until the loss first reaches {fraction} × the "
            f"reference ({fraction * reference:.3f} nats; never = {steps}).")


def lookup_margin_sentence(v, lang: str | None = None) -> str:
    """The baseline's final loss against the no-lookup reference (``recall_lookup_learned``), saying when every
    seed rounds to the same value."""
    flat = v.ci[1] - v.ci[0] < 0.0005
    if _ko(lang):
        return (f"기준선의 최종 손실은 조회 없는 기준값에서 {v.interval()} nats 떨어져 있습니다"
                f"({verdict_label(v, lang)})"
                + (": 모든 시드의 최종 손실이 같은 값으로 반올림되므로 구간에 보이는 폭이 없습니다." if flat else "."))
    return (f"The baseline's final loss lies {v.interval()} nats from the no-lookup reference "
            f"({verdict_label(v, lang)})"
            + (": every seed's final loss rounds to the same value, so the interval has no visible width."
               if flat else "."))


def scale_sentences(n_params: int, tokens: int, paper: dict, paper_gain: float, baseline_sd: float, r,
                    lang: str | None = None) -> tuple[str, str]:
    """Our scale against the paper's (``paper``: ``params``, ``tokens``), and the noise against the effect: the
    baseline's seed-to-seed sd, the paired difference's sd, ours against the paper's gain, and the power."""
    if _ko(lang):
        return (f"우리: 파라미터 {n_params:,}개, 학습 토큰 {tokens:,}개. 논문: 파라미터 {paper['params'] / 1e6:.0f} M, "
                f"토큰 {paper['tokens']:.1e}개 → 파라미터 {paper['params'] / n_params:.0f}배, 토큰 "
                f"{paper['tokens'] / tokens:,.0f}배.",
                f"우리 기준선의 최종 손실의 시드 간 표준편차: {baseline_sd:.4f} nats. 짝지은 ResFormer 차이의 표준편차: "
                f"{r.sd:.4f}. ResFormer − baseline, 최종: 우리 {r.mean:+.4f} nats [95% 신뢰구간 {r.ci[0]:+.4f}, "
                f"{r.ci[1]:+.4f}], 논문(82M) {paper_gain:+.3f}. 시드 {r.n}개로 논문의 이득을 검출할 검정력: "
                f"{r.power:.0%}.")
    return (f"Ours: {n_params:,} parameters, {tokens:,} training tokens; paper: "
            f"{paper['params'] / 1e6:.0f} M parameters, {paper['tokens']:.1e} tokens → "
            f"{paper['params'] / n_params:.0f}× the parameters, "
            f"{paper['tokens'] / tokens:,.0f}× the tokens.",
            f"Our baseline's seed-to-seed sd of the final loss: "
            f"{baseline_sd:.4f} nats; "
            f"sd of the paired ResFormer difference: {r.sd:.4f}. ResFormer − baseline, final: ours "
            f"{r.mean:+.4f} nats [95% CI {r.ci[0]:+.4f}, {r.ci[1]:+.4f}], paper (82M) {paper_gain:+.3f}; power "
            f"to detect the paper's gain with {r.n} seeds: {r.power:.0%}.")


# The quantities the appendix's show() names beside a declared test, in Korean, keyed by the English label the
# notebook's code passes (the code cells are the same in both editions).
QUANTITY_KO = {
    "primary: ResFormer − baseline, final validation loss": "primary: ResFormer − baseline, 최종 검증 손실",
    "baseline − baseline_raw, final loss": "baseline − baseline_raw, 최종 손실",
    "weak-baseline gain − strong-baseline gain": "약한 기준선에 대한 이득 − 강한 기준선에 대한 이득",
    "svformer − baseline, final validation loss": "svformer − baseline, 최종 검증 손실",
    "baseline's mean entropy over layers ≥ 1 − uniform causal": "층 ≥ 1에 걸친 기준선의 평균 엔트로피 − 균등 인과 엔트로피",
    "resformer − baseline, mean entropy over layers ≥ 1": "resformer − baseline, 층 ≥ 1에 걸친 평균 엔트로피",
    "resformer − baseline, mean cosine over layers ≥ 1": "resformer − baseline, 층 ≥ 1에 걸친 평균 코사인",
    "least-squares slope of λ1 per layer": "층 번호에 대한 λ1의 최소제곱 기울기",
}


def quantity_label(english: str, lang: str | None = None) -> str:
    """The label of a declared test's quantity as appendix 03 prints it beside the test's name, in ``lang`` (None:
    the running notebook's edition): the English as it is, or its Korean (:data:`QUANTITY_KO`).

    Raises:
        KeyError: a label with no Korean, in the Korean edition (a new or changed English label must be translated,
            not printed in English in the Korean notebook).
    """
    if resolve_language(lang) != "ko":
        return english
    if english not in QUANTITY_KO:
        raise KeyError(f"quantity label {english!r} has no Korean: add it to QUANTITY_KO")
    return QUANTITY_KO[english]
