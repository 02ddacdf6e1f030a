"""The verdict words in a learner's words (chapters 03, 05, 06): a sentence that names a verdict takes its words from
here, from the verdict itself, so "negligible" is never worded as reproduced or contradicted, and an out-of-regime
or n/a verdict is always shown with its would-be verdict (:attr:`vrs_edu.lab.results.Verdict.would_be`). In
``lab`` (not ``viz``) because the chapters' sentence modules in ``lab`` build their prose with it. The words of each
edition (English, Korean) are in :mod:`vrs_edu.i18n.verdicts`; ``lang=None`` is the running notebook's edition.
"""
from __future__ import annotations

from vrs_edu.i18n import verdicts
from vrs_edu.i18n.language import resolve_language

PLAIN = verdicts.PLAIN["en"]


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


def verdict_label(row, lang: str | None = None) -> str:
    """The verdict word as the chapters print it beside a number: ``negligible``, ``out of regime (would be:
    contradicted)`` — the would-be verdict always beside an out-of-regime or n/a one (Korean: ``적용 범위 밖
    (판정한다면: 반박됨)``)."""
    verdict, would, _ = verdict_parts(row)
    return verdicts.label(verdict, would, resolve_language(lang))


def plain_verdict(row, unit: str = "nats", lang: str | None = None) -> str:
    """What a verdict means, in plain words: ``decided, in the published direction``; ``too small to matter — its
    whole interval lies within ±0.01 nats, the smallest effect declared before the run`` (negligible);
    ``out of regime — its premise fails; judged anyway it would be contradicted``; for a swept test that is
    undecided because its arms differ, which arm decided what (``undecided: reproduced at x4; undecided at x0.25,
    x1``). ``row`` as :func:`verdict_parts`; ``unit``: the unit of the test's quantity; ``lang``: the edition."""
    verdict, would, margin = verdict_parts(row)
    arms = None if isinstance(row, (str, dict)) else getattr(row, "arms", None)
    reason = None if isinstance(row, str) else (row.get("reason") if isinstance(row, dict)
                                                 else getattr(row, "reason", None))
    return verdicts.plain(verdict, would, margin, unit, reason if arms else None, resolve_language(lang))
