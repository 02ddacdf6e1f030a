"""Chapter 09 exercise: judge a claim across the coefficient rates (the intersection-union rule every swept test is
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

from vrs_edu.chapters.ch09_the_four_answers.answers import combine_arm_verdicts
from vrs_edu.course.checks import PASSED, PASSED_UNGRADED, CheckFailed, wrap

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
