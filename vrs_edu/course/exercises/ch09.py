"""Chapter 09 exercise: judge a claim across the coefficient rates (the intersection-union rule every swept test of
chapter 04 is judged by, :func:`vrs_edu.lab.analysis._combine`).

The learner writes ``swept_verdict(verdicts)``: a list of one verdict per arm (``"reproduced"``, ``"contradicted"``,
``"undecided"``, ``"out of regime"``, ``"n/a"``) -> the claim's verdict. The reference is
:func:`vrs_edu.lab.answers.combine_arm_verdicts` (three arms or more: fewer decide nothing). ``seed`` is unused (the
cases are the rule's corners); graders may pass others' cases.
"""
from __future__ import annotations

from ...lab.answers import combine_arm_verdicts
from ..checks import PASSED, PASSED_UNGRADED, CheckFailed, wrap

CASES = [
    ["reproduced", "reproduced", "reproduced"],
    ["contradicted", "contradicted", "contradicted"],
    ["reproduced", "undecided", "reproduced"],
    ["reproduced", "contradicted", "reproduced"],
    ["out of regime", "out of regime", "out of regime"],
    ["out of regime", "reproduced", "out of regime"],
    ["undecided", "out of regime", "undecided"],
    ["reproduced", "reproduced"],
    ["n/a", "undecided", "n/a"],
]


def _majority(v):
    return max(set(v), key=v.count)


def _ignore_regime(v):
    judged = [x for x in v if x not in ("out of regime", "n/a")] or v
    return combine_arm_verdicts(judged, min_arms=1)


MISTAKES = [   # the first that matches is named: the narrowest first
    (lambda v: combine_arm_verdicts(v, min_arms=1), "right rule, but two arms that agree are not a sweep: with "
                                                   "fewer than 3 arms a decided verdict is only undecided"),
    (_majority, "you took the verdict most arms have: a claim holds across the rates only if it holds at every "
                "rate (one arm that disagrees makes it rate-dependent)"),
    (_ignore_regime, "you dropped the out-of-regime arms and judged the rest: an arm that was not judged cannot "
                     "vouch for the claim, so the claim is out of regime unless the judged arms disagree"),
]
STUB_HINT = ("compare the set of verdicts with one element first; then ask whether the arms that were judged "
             "disagree; then whether any arm was out of regime; last, count the arms")


def check_swept_verdict(fn, *, seed: int = 0, raise_on_fail: bool = False, quiet: bool = False,
                        graded: bool = False) -> bool:
    """Exercise 09: ``fn(verdicts: list[str]) -> str``, checked on :data:`CASES` against
    :func:`~vrs_edu.lab.answers.combine_arm_verdicts`, naming a known mistake it matches."""
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
