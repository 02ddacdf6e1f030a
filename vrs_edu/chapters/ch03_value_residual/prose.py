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

from vrs_edu.lab.results import interval
from vrs_edu.lab.verdict_words import plain_verdict, verdict_parts

#: below this size (nats) a loss difference reads as "no difference" at the 3 decimals the chapter prints
SAME_NATS = 0.0005


def _bracket(ci: tuple[float, float], digits: int = 3) -> str:
    lo, hi = ci
    return interval(0.0, ci, digits).split(" ", 1)[1] if digits else f"[{lo:+.0f}, {hi:+.0f}]"


def _side(ci: tuple[float, float]) -> str:
    lo, hi = ci
    return "below 0" if hi < 0 else "above 0" if lo > 0 else "on both sides of 0"


def decided_words(verdict) -> str:
    """What a verdict means in a learner's words (the verdicts themselves: "How sure are we?"). ``verdict``: a
    judged test (:class:`~vrs_edu.lab.results.Verdict`, whose would-be verdict and declared smallest effect the
    words then name) or a bare verdict word (:func:`vrs_edu.lab.verdict_words.plain_verdict`)."""
    return plain_verdict(verdict)


def loss_change(mean: float, digits: int = 3) -> str:
    """``lowers the loss by 0.007 nats`` / ``raises it by …`` / ``leaves it unchanged (to 0.001 nats)``."""
    if abs(mean) < SAME_NATS:
        return "leaves the final loss unchanged (to 0.001 nats)"
    return f"{'lowers' if mean < 0 else 'raises'} the final loss by **{abs(mean):.{digits}f}** nats"


def effect_sentence(name: str, mean: float, ci: tuple[float, float], verdict, n: int,
                    paper: float | None = None) -> str:
    """The chapter's first computed sentence: a variant's final-loss change against the strong baseline, its
    interval, whether it is decided, and where a published gain ``paper`` (negative, nats) lies against it."""
    out = (f"Against the strong baseline, {name} {loss_change(mean)} on average over {n} paired seeds; "
           f"the range the {n} paired seeds allow, {_bracket(ci)}, lies {_side(ci)}, and the change is "
           f"{decided_words(verdict)}.")
    if paper is not None:
        lo, hi = ci
        if lo > paper:
            out += (f" A gain as large as the paper's {paper:+.3f} nats lies below that range: "
                    "it is ruled out for this model on this corpus.")
        elif hi < paper:
            out += f" The gain is larger than the paper's {paper:+.3f} nats, over the whole range."
        else:
            out += f" The paper's {paper:+.3f} nats lies inside that range: it is not ruled out."
    return out


def baseline_lesson(weak: float, strong: float, inflation: float, strong_alone: float) -> str:
    """The lesson on baselines: ResFormer's gain against the weak baseline (``weak``: resformer_raw − baseline_raw)
    and the strong one (``strong``: resformer − baseline), their difference ``inflation`` (weak − strong, per seed
    mean; below 0 = the weak baseline makes the gain look larger), and ``strong_alone`` = baseline − baseline_raw
    (below 0 = the strong baseline is better by itself)."""
    if abs(inflation) < 0.001:
        compare = "the same to 0.001 nats: here the weak baseline does not inflate the gain"
    elif inflation < 0:
        compare = f"larger against the weak baseline by {abs(inflation):.3f} nats"
    else:
        compare = f"smaller against the weak baseline by {abs(inflation):.3f} nats"
    better = "better" if strong_alone < 0 else "worse"
    out = (f"ResFormer's change of the loss is {weak:+.3f} nats against the weak baseline and {strong:+.3f} "
           f"against the strong one, {compare}. The strong baseline alone is **{abs(strong_alone):.3f}** "
           f"nats {better} than the weak one")
    if strong_alone < 0 and abs(strong) >= SAME_NATS:
        out += f", {abs(strong_alone) / abs(strong):.0f} times the size of ResFormer's change"
    return out + "."


def steps_sentence(mean: float, ci: tuple[float, float], verdict) -> str:
    """The recall comparison in steps (ResFormer − baseline steps to learn lookup; below 0 = sooner)."""
    if abs(mean) < 0.5:
        when = "at the same step as the baseline"
    else:
        when = f"{abs(mean):.0f} steps {'sooner' if mean < 0 else 'later'} than the baseline"
    return (f"ResFormer learns lookup {when} on average (the difference's interval {_bracket(ci, 0)} steps "
            f"lies {_side(ci)}: {plain_verdict(verdict, 'steps')}).")


def recall_sentence(margin: float, learned: dict[str, tuple[int, int]], steps: int) -> str:
    """Whether the recall models learned lookup: ``margin`` = the baseline's final loss − the no-lookup reference's
    (nats, below 0 = it beats a model that never looks a key up); ``learned``: variant -> (seeds that learned,
    seeds) within ``steps``."""
    counts = ", ".join(f"{v} {k} of {n}" for v, (k, n) in learned.items())
    if margin < 0 and all(k == n for k, n in learned.values()):
        return (f"Every seed learned lookup within {steps} steps ({counts}): the baseline ends "
                f"**{abs(margin):.3f}** nats below the no-lookup reference, so what follows is about retrieval.")
    return (f"Not every seed learned lookup within {steps} steps ({counts}); the baseline ends {margin:+.3f} "
            "nats from the no-lookup reference, so a reading below is about retrieval only for the seeds "
            "that learned.")


def entropy_sentence(gap: float, verdict) -> str:
    """The entropy claim's premise: the baseline's attention entropy (layers >= 1) − uniform causal attention's
    (nats; below 0 = concentrated attention, which ResFormer says it relieves). ``verdict``: the check's judged test
    or its verdict word."""
    word = verdict_parts(verdict)[0]
    if word == "negligible":
        return (f"The baseline's attention entropy lies **{abs(gap):.3f}** nats {'below' if gap < 0 else 'above'} "
                f"uniform causal attention's: {plain_verdict(verdict)}, so its attention is not concentrated: there is "
                "no concentration here for the value residual to relieve.")
    if word in ("out of regime", "n/a"):
        return (f"The baseline's attention entropy lies **{abs(gap):.3f}** nats {'below' if gap < 0 else 'above'} "
                f"uniform causal attention's: {plain_verdict(verdict)}.")
    verdict = word
    if verdict == "contradicted" or (gap > 0 and verdict != "reproduced"):
        where = "above"
        then = ("the attention the keys receive is spread *more evenly* than under uniform causal attention "
                "(attention is more local), not concentrated on a few keys: there is no concentration here for "
                "the value residual to relieve")
    elif verdict == "reproduced":
        where = "below"
        then = "its attention is concentrated, as ResFormer's argument assumes"
    else:
        where = "below" if gap < 0 else "above"
        then = "whether it is concentrated is not decided"
    return (f"The baseline's attention entropy lies **{abs(gap):.3f}** nats {where} uniform causal "
            f"attention's: {then}.")


def lambda_sentence(slope: float, reached: int, of: int) -> str:
    """The learned λ1 profile: its mean slope per layer and how many (seed, layer) trajectories had stopped
    moving before the learning-rate decay."""
    trend = ("grows with depth" if slope > 0.001 else "falls with depth" if slope < -0.001
             else "stays level with depth")
    still = ("so the profile is a snapshot of λ1 still moving, not where it settles" if reached * 2 <= of
             else "so the profile is close to where λ1 settles")
    return (f"On average λ1 {trend} ({slope:+.3f} per layer), but only {reached} of {of} λ1 trajectories "
            f"had stopped moving before the learning rate began its final decay, {still}.")


def depth_sentence(depths: list[int], gains: list[float], baseline_loss: list[float],
                   learnable_loss: list[float], concentrated: list[int], baseline_trend: float | None = None,
                   trend_limit: float | None = None) -> str:
    """The depth sweep in words: the gain (learnable − baseline, nats) at each depth, whether the deeper
    baselines train worse (their final loss rises more than the value residual's falls), the declared premise that
    the tuned baseline does not get worse with depth (``baseline_trend``: its slope in nats per doubling of depth;
    it holds below ``trend_limit``) and at which depths the baseline's attention is concentrated."""
    out = (f"From {depths[0]} to {depths[-1]} layers the value residual's change of the loss goes "
           f"{' → '.join(f'{g:+.3f}' for g in gains)} nats")
    rise_b, rise_l = baseline_loss[-1] - baseline_loss[0], learnable_loss[-1] - learnable_loss[0]
    if gains[-1] < gains[0] and rise_b > 0 and rise_b > abs(rise_l):
        out += (f": most of the growth is the deeper baselines training worse (their loss "
                f"{baseline_loss[0]:.3f} → {baseline_loss[-1]:.3f}, the value residual's "
                f"{learnable_loss[0]:.3f} → {learnable_loss[-1]:.3f})")
    if baseline_trend is not None and trend_limit is not None:
        holds = baseline_trend < trend_limit
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


def svformer_sentence(mean: float, ci: tuple[float, float], verdict, n: int) -> str:
    """SVFormer (values from the first layer only) against the paper's expected *cost*: its loss change
    (svformer − baseline, nats; below 0 = lower loss), where the range the ``n`` paired seeds allow lies, and the
    verdict of the declared one-sided test ``svformer_cost`` after the correction for the number of tests."""
    lo, hi = ci
    word = verdict_parts(verdict)[0]
    where = (f"the whole range the {n} paired seeds allow, {_bracket(ci)}, lies below 0: a *lower* loss, the "
             "opposite of the cost the paper reports" if hi < 0 else
             f"the whole range the {n} paired seeds allow, {_bracket(ci)}, lies above 0: a higher loss, the cost "
             "the paper reports" if lo > 0 else
             f"the range the {n} paired seeds allow, {_bracket(ci)}, holds both a cost and a gain")
    judged = {"reproduced": "the paper's cost is reproduced here",
              "contradicted": "the paper's cost is contradicted here",
              "negligible": f"the change is {plain_verdict(verdict)}, so it is neither the paper's cost nor its "
                            "opposite",
              "out of regime": f"the claim of a cost is {plain_verdict(verdict)}",
              "n/a": f"the claim of a cost is {plain_verdict(verdict)}",
              }.get(word, "once we allow for the number of tests, the claim of a cost is undecided "
                          "(see How sure are we?)")
    but = " — but " if (hi < 0 and word != "contradicted") or (lo > 0 and word != "reproduced") else "; "
    return f"SVFormer changes the loss by **{mean:+.3f}** nats; {where}{but}{judged}."


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
           n: int = 5, smoothing=None) -> str:
    """'The answer' to the chapter's question, with three numbers a learner can repeat, all as a loss change
    (variant − baseline, nats; negative = better): ResFormer's (fixed 0.5/0.5) change at 8 layers with the range
    its ``n`` paired seeds allow and its ``verdict``, against the paper's; the learnable-λ variant's change at
    ``deep_layers`` (the depth sweep trains that variant; ``deeper_baselines_worse``: whether the deeper
    baselines' own loss rose), and the baseline's entropy − uniform causal attention's. ``smoothing``: the declared
    over-smoothing test (ResFormer's change of the mean cosine of the tokens' states, with ``mean``, ``ci`` and its
    verdict), the question's third part; None leaves it out."""
    lo, hi = ci
    at8 = (f"and the paper's **{paper:+.3f}** nats at 82 M parameters is ruled out" if lo > paper else
           f"and the paper's {paper:+.3f} nats at 82 M parameters is not ruled out")
    deep = (f"**{deep_gain:+.3f}** nats, a larger gain" if deep_gain < gain - SAME_NATS else
            f"**{deep_gain:+.3f}** nats, about the same change")
    # The entropy is of the attention each key *receives* (token importance), not of one query's row: a query's
    # row can be no more even than uniform, but the keys' shares can, when queries look nearby.
    ent = ("more evenly over the keys than under uniform causal attention (each query looks mostly nearby, so no "
           "key draws a crowd)" if entropy_gap > 0 else
           "more on a few keys than under uniform causal attention")
    return (f"Mixing the first layer's values into every later layer (ResFormer's fixed 0.5/0.5) changes the "
            f"loss by **{gain:+.3f}** nats in our 8-layer model (negative = better), {decided_words(verdict)} "
            f"(the range the {n} paired seeds allow: {_bracket(ci)}) — {at8}. At {deep_layers} layers the "
            f"learnable-λ variant changes it by {deep}"
            + (", most of it because the deeper baselines train worse. " if deeper_baselines_worse else ". ")
            + (f"It does not work the way the papers explain: the attention our baseline's keys receive is "
               f"spread **{abs(entropy_gap):.3f}** nats {ent}, so there is no concentration for it to relieve."
               if entropy_gap > 0 else
               f"The attention our baseline's keys receive is piled **{abs(entropy_gap):.3f}** nats {ent}, the "
               "concentration the papers say the value residual relieves.")
            + (f" Over-smoothing, how alike the tokens' states are (mean cosine over the layers), changes by "
               f"{smoothing.mean:+.3f} with it {_bracket(smoothing.ci)}: {decided_words(smoothing)}."
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
