"""The verdict words in a learner's words (chapters 03, 05, 06): a sentence that names a verdict takes its words from
here, from the verdict itself, so "negligible" is never worded as reproduced or contradicted, and an out-of-regime
or n/a verdict is always shown with its would-be verdict (:attr:`vrs_edu.lab.results.Verdict.would_be`). In
``lab`` (not ``viz``) because the chapters' sentence modules in ``lab`` build their prose with it.
"""
from __future__ import annotations

PLAIN = {"reproduced": "decided, in the published direction",
         "contradicted": "decided, against the published direction",
         "undecided": "not decided by these seeds",
         "rate-dependent": "decided in opposite directions at different learning rates"}


def verdict_parts(row) -> tuple[str, str | None, float | None]:
    """``(verdict, would_be, margin)`` of a judged test: ``row`` is a :class:`~vrs_edu.lab.results.Verdict`, a stored
    verdict record (a dict with ``verdict`` and, where it has them, ``would_be`` and ``effect_for_power``) or a bare
    verdict word. ``margin`` is ``|effect_for_power|``, the declared smallest effect (None when unknown)."""
    if isinstance(row, str):
        return row, None, None
    if isinstance(row, dict):
        e = row.get("effect_for_power")
        return row["verdict"], row.get("would_be"), None if e is None else abs(e)
    test = getattr(row, "test", None)
    return row.verdict, getattr(row, "would_be", None), getattr(test, "margin", None)


def verdict_label(row) -> str:
    """The verdict word as the chapters print it beside a number: ``negligible``, ``out of regime (would be:
    contradicted)`` — the would-be verdict always beside an out-of-regime or n/a one."""
    verdict, would, _ = verdict_parts(row)
    return verdict + (f" (would be: {would})" if would and verdict in ("out of regime", "n/a") else "")


def plain_verdict(row, unit: str = "nats") -> str:
    """What a verdict means, in plain words: ``decided, in the published direction``; ``too small to matter — its
    whole interval lies within ±0.01 nats, the smallest effect declared before the run`` (negligible);
    ``out of regime — its premise fails; judged anyway it would be contradicted``; for a swept test that is
    undecided because its arms differ, which arm decided what (``undecided: reproduced at x4; undecided at x0.25,
    x1``). ``row`` as :func:`verdict_parts`; ``unit``: the unit of the test's quantity."""
    verdict, would, margin = verdict_parts(row)
    if verdict == "negligible":
        band = f"within ±{margin:g} {unit}, " if margin else "inside "
        return f"too small to matter — its whole interval lies {band}the smallest effect declared before the run"
    if verdict in ("out of regime", "n/a"):
        why = "its premise fails" if verdict == "out of regime" else "the gain it would explain is not reproduced"
        return f"{verdict} — {why}; " + (f"judged anyway it would be {would}" if would else "it is not judged")
    arms = None if isinstance(row, (str, dict)) else getattr(row, "arms", None)
    reason = None if isinstance(row, str) else (row.get("reason") if isinstance(row, dict) else row.reason)
    if verdict == "undecided" and arms and reason:
        return f"undecided across the learning rates ({reason})"
    return PLAIN.get(verdict, verdict)
