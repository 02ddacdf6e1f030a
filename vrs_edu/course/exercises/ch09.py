"""Chapter 09 exercises. The capstone, :func:`pattern_or_values`: ask a trained model how much one layer needs its
own QK pattern and how much its values (checker :func:`check_pattern_or_values`). And one the chapter no longer
holds (assignments may): judge a claim across the coefficient rates (the intersection-union rule every swept test is
judged by, :func:`vrs_edu.lab.analysis.arm_rule`, which :func:`vrs_edu.lab.analysis._combine` applies).

The learner writes ``swept_verdict(verdicts)``: a list of one verdict per arm (``"reproduced"``, ``"contradicted"``,
``"undecided"``, ``"negligible"``, ``"out of regime"``, ``"n/a"``) -> the claim's verdict. The rule (review 3, H2):
the same verdict at every arm is that verdict; arms *decided in opposite directions* (reproduced at one,
contradicted at another) are *rate-dependent*; every arm out of regime or n/a gives *out of regime* (*n/a* when
none is out of regime); any other mixture is *undecided* (an undecided arm is a question of power, not of the
rate); a decided verdict from fewer than three arms is only *undecided*. The reference is
:func:`vrs_edu.chapters.ch09_the_four_answers.answers.combine_arm_verdicts`. ``seed`` is unused (the cases are the rule's corners); graders
may pass others' cases.
"""
from __future__ import annotations

import torch

from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import pattern_swap, uniform_routing, value_swap
from vrs_edu.chapters.ch09_the_four_answers.answers import combine_arm_verdicts
from vrs_edu.course.checks import (PASSED, PASSED_UNGRADED, CheckFailed, Mistake, check_function,
                                   strong_write_model, with_hints, wrap)
from vrs_edu.nn.model import TinyGPT

CASES = [
    ["reproduced", "reproduced", "reproduced"],
    ["contradicted", "contradicted", "contradicted"],
    ["negligible", "negligible", "negligible"],
    ["reproduced", "undecided", "reproduced"],           # decided at two rates only: undecided, not rate-dependent
    ["reproduced", "contradicted", "reproduced"],        # opposite decided directions: rate-dependent
    ["contradicted", "undecided", "reproduced"],         # opposite directions, whatever the third arm says
    ["negligible", "reproduced", "reproduced"],          # too small at one rate: not opposite, undecided
    ["out of regime", "out of regime", "out of regime"],
    ["out of regime", "reproduced", "out of regime"],    # one judged arm cannot vouch for the claim: undecided
    ["out of regime", "reproduced", "contradicted"],     # the judged arms disagree in direction: rate-dependent
    ["undecided", "out of regime", "undecided"],
    ["n/a", "n/a", "out of regime"],                     # nothing judged, one arm out of regime: out of regime
    ["reproduced", "reproduced"],                        # two arms are not a sweep
]


def _majority(v):
    return max(set(v), key=v.count)


def _any_difference(v):
    """The old rule: any two judged arms that differ make the claim rate-dependent (an undecided arm counted as
    disagreeing, so "rate-dependent" measured power)."""
    judged = {x for x in v if x not in ("out of regime", "n/a")}
    if len(set(v)) == 1:
        out = v[0]
    elif len(judged) > 1:
        out = "rate-dependent"
    elif judged:
        out = "undecided"
    else:
        out = "out of regime" if "out of regime" in v else "n/a"
    return "undecided" if out in ("reproduced", "contradicted", "negligible") and len(v) < 3 else out


def _ignore_regime(v):
    judged = [x for x in v if x not in ("out of regime", "n/a")] or v
    return combine_arm_verdicts(judged, min_arms=1)


def _regime_wins(v):
    """Any arm out of regime makes the whole claim out of regime."""
    if "out of regime" in v and len(set(v)) > 1:
        return "out of regime"
    return combine_arm_verdicts(v)


MISTAKES = [   # the first that matches is named: the narrowest first
    (lambda v: combine_arm_verdicts(v, min_arms=1), "right rule, but two arms that agree are not a sweep: with "
                                                   "fewer than 3 arms a decided verdict is only undecided"),
    (_any_difference, "you called every disagreement rate-dependent: only arms decided in opposite directions (one "
                      "reproduced, one contradicted) make a claim rate-dependent; an undecided or negligible arm "
                      "is a question of power or size, so that mixture is undecided"),
    (_ignore_regime, "you dropped the out-of-regime arms and judged the rest: an arm that was not judged cannot "
                     "vouch for the claim, so a claim decided at the other arms only is undecided"),
    (_regime_wins, "you let one out-of-regime arm decide: the claim is out of regime only when no arm was judged; "
                   "judged arms that disagree in direction still make it rate-dependent, and otherwise it is "
                   "undecided"),
    (_majority, "you took the verdict most arms have: a claim holds across the rates only if it holds at every "
                "rate (one arm that is not decided the same way makes it undecided)"),
]
STUB_HINT = ("compare the set of verdicts with one element first; then ask whether some arm is reproduced and "
             "another contradicted; then whether no arm was judged at all (out of regime, n/a); every other "
             "mixture is undecided; last, count the arms")


def check_swept_verdict(fn, *, seed: int = 0, raise_on_fail: bool = False, quiet: bool = False,
                        graded: bool = False) -> bool:
    """Exercise 09: ``fn(verdicts: list[str]) -> str``, checked on :data:`CASES` against
    :func:`~vrs_edu.chapters.ch09_the_four_answers.answers.combine_arm_verdicts`, naming a known mistake it matches."""
    def fail(msg: str) -> bool:
        text = f"✗ swept verdict: {msg}"
        if raise_on_fail:
            raise CheckFailed(" ".join(text.split()))
        print(wrap(text))
        return False

    for i, case in enumerate(CASES):
        expected = combine_arm_verdicts(list(case))
        try:
            got = fn(list(case))
        except NotImplementedError as e:
            return fail("not implemented yet — write your code in place of the stub's body.\nHint: "
                        + (str(e) or STUB_HINT))
        except Exception as e:  # the learner's code may raise anything: report it, don't crash the notebook
            return fail(f"case {i}: raised {type(e).__name__}: {e} [inputs: verdicts={case!r}]")
        if got is None:
            return fail(f"not implemented yet — write your code in place of the stub's body.\nHint: {STUB_HINT}")
        if got == expected:
            continue
        hint = next((h for m, h in MISTAKES if m(list(case)) == got), None)
        return fail(f"case {i}: " + (hint or f"expected {expected!r}, got {got!r}") + f" [inputs: verdicts={case!r}]")
    if not quiet:
        print(wrap(f"✓ swept verdict: {PASSED if graded else PASSED_UNGRADED}"))
    return True


# --- the capstone: does this layer need its own pattern, or its values? ----------------------------------------

@torch.no_grad()
def pattern_or_values(model, x, y, layer: int) -> tuple[float, float, float]:
    """The reference: ``(uniform, pattern, values)``, the loss changes in nats (``model(x, y).loss`` with the change
    minus without) when layer ``layer``'s attention pattern (every head) is replaced by the uniform causal pattern,
    when it is replaced by the pattern the layer computed on another text (the batch rolled by one sequence,
    ``x.roll(1, 0)``), and when the layer keeps its pattern but moves the values it computed on that other text
    (hook point ``attn.v_mix``): chapter 02's interventions (:mod:`~vrs_edu.chapters.ch02_qk_routes_v_carries
    .readout`) for one batch."""
    out = model(x, y, trace=True)
    donor = model(x.roll(1, 0), trace=True).trace
    clean = out.loss.item()
    return tuple(model(x, y, hooks=fn(layer, x, out.trace, donor)).loss.item() - clean
                 for fn in (uniform_routing, pattern_swap, value_swap))


def _capstone_model(seed: int, n_layers: int) -> TinyGPT:
    # strong writes, so that every swap visibly changes the loss
    return strong_write_model(seed, n_layers)


def _capstone_cases(seed: int, edges: bool = False):
    # (n_layers, layer): the last layer, a first one and a middle one; three sequences, so that rolling the batch
    # differs from flipping it
    plan = [(1, 0), (2, 0)] if edges else [(2, 1), (3, 0), (3, 1)]
    cases = []
    for i, (L, layer) in enumerate(plan):
        g = torch.Generator().manual_seed(2000 * seed + i)
        x, y = torch.randint(13, (3, 8), generator=g), torch.randint(13, (3, 8), generator=g)
        cases.append((_capstone_model(2000 * seed + i, L), x, y, layer))
    return cases


def _with(model, x, y, layer: int, point: str, value) -> float:
    """The loss change when ``blocks.{layer}.attn.{point}`` is replaced by ``value`` (broadcast to its shape)."""
    clean = model(x, y).loss.item()
    hooks = {f"blocks.{layer}.attn.{point}": lambda old: value.expand_as(old)}
    return model(x, y, hooks=hooks).loss.item() - clean


@torch.no_grad()
def _variant(model, x, y, layer, uniform=None, donor_x=None, value_point="v_mix", pattern_point="pattern"):
    """A wrong variant of the reference: another uniform pattern, another donor, or other hook points."""
    T = x.size(1)
    uniform = uniform if uniform is not None else torch.ones(T, T).tril() / torch.arange(1, T + 1)[:, None]
    donor = model(x.roll(1, 0) if donor_x is None else donor_x, trace=True).trace
    pre = f"blocks.{layer}.attn."
    return (_with(model, x, y, layer, "pattern", uniform),
            _with(model, x, y, layer, pattern_point, donor[pre + pattern_point]),
            _with(model, x, y, layer, value_point, donor[pre + value_point]))


def _loss(model, x, y) -> float:
    return model(x, y).loss.item()


CAPSTONE_MISTAKES = [
    Mistake(lambda m, x, y, l: _variant(m, x, y, l, uniform=torch.full((x.size(1), x.size(1)), 1 / x.size(1))),
            "your uniform pattern also looks at later positions: position i may read positions 0..i only, so row i "
            "spreads 1/(i+1) over them (a causal model never reads the future)"),
    Mistake(lambda m, x, y, l: _variant(m, x, y, l, uniform=torch.ones(x.size(1), x.size(1)).tril()),
            "the rows of your uniform pattern do not sum to 1: divide row i of the lower triangle by i + 1"),
    Mistake(lambda m, x, y, l: _variant(m, x, y, l, donor_x=x),
            "your other text is the text itself, so both swaps cost nothing: take the patterns and values the "
            "layer computed on x.roll(1, 0), the batch rolled by one sequence"),
    Mistake(lambda m, x, y, l: _variant(m, x, y, l, donor_x=x.flip(0)),
            "your other text is the batch flipped: the checker, like chapter 02, uses x.roll(1, 0), the batch "
            "rolled by one sequence"),
    Mistake(lambda m, x, y, l: _variant(m, x, y, l, pattern_point="q"),
            "you swapped the queries only: the pattern comes from q and k together, so replace the pattern itself "
            "at blocks.{layer}.attn.pattern"),
    Mistake(lambda m, x, y, l: _variant(m, x, y, l, value_point="out"),
            "you swapped the layer's whole output (attn.out), pattern and values at once: swap only the values, "
            "at blocks.{layer}.attn.v_mix, and keep this text's pattern"),
    Mistake(lambda m, x, y, l: tuple(-c for c in pattern_or_values(m, x, y, l)),
            "the signs are flipped: a cost is the loss with the change minus the clean loss (positive when the "
            "layer needed what you took away)"),
    Mistake(lambda m, x, y, l: tuple(c + _loss(m, x, y) for c in pattern_or_values(m, x, y, l)),
            "you returned the three losses, not their changes: subtract the clean loss model(x, y).loss from each"),
    Mistake(lambda m, x, y, l: (lambda u, p, v: (u, v, p))(*pattern_or_values(m, x, y, l)),
            "the pattern swap and the value swap are exchanged: return (uniform, pattern, values) in that order"),
]
# The Korean hints, one per mistake in CAPSTONE_MISTAKES' order.
CAPSTONE_HINTS_KO = [
    "균등 패턴이 뒤쪽 위치도 봅니다. 위치 i는 위치 0..i만 읽을 수 있으므로 i행은 그 위치들에 1/(i+1)씩\n"
    "나눠 줍니다(인과 모델은 미래를 읽지 않습니다)",
    "균등 패턴의 행의 합이 1이 아닙니다. 아래 삼각 행렬의 i행을 i + 1로 나누세요",
    "다른 텍스트가 그 텍스트 자신이라서 두 교환 모두 비용이 없습니다.\n"
    "층이 x.roll(1, 0)(시퀀스 하나만큼 굴린 배치)에서 계산한 패턴과 값을 가져오세요",
    "다른 텍스트로 배치를 뒤집은 것을 썼습니다.\n"
    "채점기는 02장처럼 x.roll(1, 0), 곧 시퀀스 하나만큼 굴린 배치를 씁니다",
    "쿼리만 바꾸었습니다. 패턴은 q와 k가 함께 만드므로,\nblocks.{layer}.attn.pattern에서 패턴 자체를 바꾸세요",
    "층의 출력 전체(attn.out)를 바꾸어 패턴과 값을 한꺼번에 바꾸었습니다.\n"
    "값만 blocks.{layer}.attn.v_mix에서 바꾸고, 이 텍스트의 패턴은 그대로 두세요",
    "부호가 뒤집혔습니다. 비용은 바꾼 뒤의 손실에서 개입 전 손실을 뺀 값입니다\n"
    "(층이 빼앗긴 것을 필요로 했다면 양수)",
    "세 변화가 아니라 세 손실을 반환했습니다. 각각에서 개입 전 손실 model(x, y).loss를 빼세요",
    "패턴 교환과 값 교환이 서로 바뀌었습니다. (uniform, pattern, values) 순서로 반환하세요",
]


def check_pattern_or_values(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 09.1: ``fn(model, x (B, T), y (B, T), layer) -> (uniform, pattern, values)``, the loss changes in
    nats when layer ``layer``'s pattern is uniform, when it is another text's (``x.roll(1, 0)``), and when its
    values are another text's. Checked on small random models with strong writes; edges: one- and two-layer
    models."""
    kw.setdefault("atol", 1e-4)
    kw.setdefault("graded", False)   # no classroom assignment holds this exercise (yet): no hidden checks
    kw.setdefault("stub_hint", (      # (english, korean): the edition check_function runs in picks
        "three losses minus the clean one, each from a forward pass whose hook replaces one thing at layer `layer`: "
        "the pattern by a uniform causal one, the pattern by the one computed on x.roll(1, 0), the values "
        "(attn.v_mix) by those computed on x.roll(1, 0)",
        # explicit line breaks: the page wraps at 100 columns, and a Korean syllable is two columns wide
        "세 손실에서 각각 개입 전 손실을 빼세요.\n"
        "각 손실은 층 `layer`에서 훅으로 하나를 바꾼 순전파에서 얻습니다. 바꾸는 것은 셋입니다.\n"
        "패턴 → 균등한 인과 패턴 / 패턴 → x.roll(1, 0)에서 계산한 패턴 /\n"
        "값(attn.v_mix) → x.roll(1, 0)에서 계산한 값"))
    return check_function(("pattern or values", "패턴 또는 값"), fn, pattern_or_values, _capstone_cases(seed, edges),
                          with_hints(CAPSTONE_MISTAKES, CAPSTONE_HINTS_KO), **kw)
