"""Computed prose that reads as prose: a sentence or a table built from measured numbers, shown as formatted Markdown
in JupyterLab and in the book, not as a monospace print.

    say(f"The value swap costs {r:.2f}× the pattern swap at {n} of {L} layers.")
    say(table(["layer", "Δ loss"], [[0, "+0.412"], [1, "+0.103"]]))

:func:`say` displays a :class:`Prose` object. Jupyter stores it as a ``display_data`` output with two
representations, ``text/markdown`` (what JupyterLab and the book render) and ``text/plain``, and both hold the same
text: nbval compares every representation it does not skip, so a changed number in the sentence fails the chapter
through either of them (tests/test_prose.py runs nbval on a notebook whose stored sentence differs by one digit).
With ``IPython.display.Markdown`` the plain-text form would be ``<IPython.core.display.Markdown object>``, the same
for every sentence: only ``text/markdown`` would carry the number, and a terminal or ``nbconvert --to script``
reader would see nothing. Here the plain form is the text itself.

Numbers are formatted by the caller (``f"{x:.3f}"``), so that the chapter's code shows how many digits a number is
read to.
"""
from __future__ import annotations

import inspect
import math
import textwrap
from collections.abc import Sequence

from vrs_edu.i18n.evidence import reason as reason_in, verdict_words
from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.language import resolve_language
from vrs_edu.i18n.verdicts import verdict_word
from vrs_edu.lab.results import Verdict
from vrs_edu.lab.verdict_words import plain_verdict, verdict_label

# declared_result's ``against`` as the chapters' code cells pass it (English in both editions: the code cells are
# shared), in Korean; a value not listed here is shown as it is.
AGAINST_KO = {"the baseline's": "기준선", "per-layer embeddings'": "층별 임베딩"}


class Prose:
    """Markdown text, displayed as formatted prose (``_repr_markdown_``) with the same text as its plain form.

    Raises TypeError unless ``text`` is a string.
    """

    def __init__(self, text: str):
        if not isinstance(text, str):
            raise TypeError(f"Prose takes a str of Markdown, got {type(text).__name__}")
        self.text = text

    def _repr_markdown_(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text

    def __eq__(self, other) -> bool:
        return isinstance(other, Prose) and other.text == self.text

    __hash__ = None


def _cell(value) -> str:
    # a pipe inside a cell would end it; line breaks would end the row
    return str(value).replace("|", "\\|").replace("\n", " ")


def percent(share: float) -> str:
    """A share in 0..1 as the course writes a percentage in a sentence: ``0.214`` -> ``21 %`` (whole percent, a
    space before the sign)."""
    return f"{100 * share:.0f} %"


def table(columns: Sequence[str], rows: Sequence[Sequence], align: str | None = None) -> str:
    """A Markdown pipe table: a header of ``columns`` and one line per row (values formatted by the caller).

    ``align`` gives one character per column, ``l`` or ``r`` (default: the first column left, the others right,
    as numbers read best). Raises ValueError naming the row whose length differs from the header's, or a bad
    ``align``.
    """
    n = len(columns)
    if n == 0:
        raise ValueError("table needs at least one column")
    align = align or "l" + "r" * (n - 1)
    if len(align) != n or set(align) - {"l", "r"}:
        raise ValueError(f"align must be {n} characters of 'l' or 'r', got {align!r}")
    for i, row in enumerate(rows):
        if len(row) != n:
            raise ValueError(f"table row {i} has {len(row)} values, the header {n}: {list(row)!r}")
    lines = ["| " + " | ".join(_cell(c) for c in columns) + " |",
             "|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def say(*paragraphs: str | Prose) -> None:
    """Display the paragraphs (Markdown strings: sentences, lists, tables, or :class:`Prose`) as one block of prose.

    Raises TypeError naming the paragraph that is neither.
    """
    texts = []
    for i, p in enumerate(paragraphs):
        if not isinstance(p, (str, Prose)):
            raise TypeError(f"say takes Markdown strings; paragraph {i} is a {type(p).__name__}")
        texts.append(p.text if isinstance(p, Prose) else p)
    from IPython.display import display

    display(Prose("\n\n".join(texts)))


def source(obj, start: str | None = None, stop: str | None = None) -> Prose:
    """The package's own code of ``obj`` (a function, class or method) as a Markdown code block, to show the
    mechanism next to its equation (DESIGN.md, "A chapter's anatomy"). ``start`` / ``stop``: show only the lines from
    the first one containing ``start`` up to the first one after it containing ``stop`` (both included).
    Raises ValueError naming a ``start`` or ``stop`` the source does not contain."""
    lines = textwrap.dedent(inspect.getsource(obj)).splitlines()
    first = 0
    if start is not None:
        first = next((i for i, line in enumerate(lines) if start in line), None)
        if first is None:
            raise ValueError(f"the source of {obj.__qualname__} has no line containing {start!r}")
    last = len(lines) - 1
    if stop is not None:
        last = next((i for i, line in enumerate(lines) if i >= first and stop in line), None)
        if last is None:
            raise ValueError(f"the source of {obj.__qualname__} has no line containing {stop!r} after {start!r}")
    code = textwrap.dedent("\n".join(lines[first:last + 1]))
    where = f"{inspect.getmodule(obj).__name__}.{obj.__qualname__}"
    return Prose(f"`{where}`:\n\n```python\n{code}\n```")


def verdict_table(rows: list[Verdict], lang: str | None = None) -> tuple[list[str], list[list[str]]]:
    """The declared tests as a Markdown table's columns and cells (:func:`vrs_edu.viz.prose.table`): name, family,
    mean [95 % CI], Holm's p (– when not judged), verdict with the reason it was not judged, and the power of an
    undecided test at its declared effect. ``lang``: the edition of the headers and verdict words (None: the
    running notebook's)."""
    ko = resolve_language(lang) == "ko"
    cells = []
    for r in rows:
        p = "–" if math.isnan(r.p_holm) else f"{r.p_holm:.3f}"
        words = verdict_words(r.verdict, r.would_be, "ko" if ko else "en")
        verdict = words + (f" ({reason_in(r.reason, 'ko' if ko else 'en', code=ko)})"
                           if r.reason and r.verdict != "undecided" else "")
        undecided = r.verdict == "undecided" and r.power_effect is not None and not math.isnan(r.power)
        power = ((f"{r.power_effect:+g}에서 {r.power:.0%}" if ko else f"{r.power:.0%} at {r.power_effect:+g}")
                 if undecided else "")
        # the Korean table names a test by its identifier (English words in a Korean table read as prose)
        name = f"`{r.test.name}`" if ko else r.test.name.replace("_", " ")
        cells.append([name, r.test.family, f"{r.mean:+.3f} [{r.ci[0]:+.3f}, {r.ci[1]:+.3f}]",
                      p, verdict, power])
    if ko:
        return ["검정", "검정 묶음", "평균 [95% 신뢰구간]", "p (Holm)", "판정", "검정력"], cells
    return ["test", "family", "mean [95% CI]", "p (Holm)", "verdict", "power"], cells


def declared_result(result: dict | None, test: str, against: str = "the baseline's", lang: str | None = None) -> str:
    """A stored declared test of a paired-seed recipe whose quantity is a final-loss difference (this variant's
    minus another's, per seed; ``against`` names that other, possessive), in the words chapters 02, 04 and 05 print
    beside a design: ``final loss 0.004 nats above the baseline's, 95% CI [-0.010, +0.018], 2 of 5 seeds lower;
    declared test `k_eq_v_no_worse` (no worse within ±0.01): reproduced — decided, in the published direction``.
    The interval is the unadjusted one; where the test shares a Holm family, the corrected p is named, so that an
    interval clear of 0 beside an *undecided* verdict explains itself. Reads the test's record in
    ``result["verdicts"]`` (mean, ci, values, verdict, p_holm, family_size); "not run yet" when ``result`` is None.
    ``lang``: the edition (None: the running notebook's); in Korean ``against`` is read through :data:`AGAINST_KO`.

    Raises:
        KeyError: naming a test the result does not hold.
    """
    ko = resolve_language(lang) == "ko"
    if result is None:
        return "아직 실행하지 않음" if ko else "not run yet"
    records = {v["name"]: v for v in result.get("verdicts", [])}
    if test not in records:
        raise KeyError(f"test {test!r} is not among this result's verdicts {sorted(records)}")
    rec = records[test]
    m, (lo, hi), values = rec["mean"], rec["ci"], rec["values"]
    margin = abs(rec["effect_for_power"]) if rec.get("form") == "equivalence" and rec.get("effect_for_power") else None
    holm = rec.get("p_holm")
    holm = holm if holm is not None and math.isfinite(holm) and rec.get("family_size", 1) > 1 else None
    lang = "ko" if ko else "en"
    plain = plain_verdict(rec, lang=lang)   # n/a and out of regime: it names the verdict and its would-be verdict
    if not plain.startswith(verdict_word(rec["verdict"], lang)):
        plain = f"{verdict_label(rec, lang=lang)} — {plain}"
    words = plain
    edges = []
    if margin and rec["verdict"] == "undecided":   # which edge left the band: a "no worse" test fails on either side
        centre = rec.get("threshold", 0.0)
        if lo < centre - margin:
            edges.append((f"{centre - margin:+g}", "below"))
        if hi > centre + margin:
            edges.append((f"{centre + margin:+g}", "above"))
    if ko:
        clears = rec["verdict"] == "undecided" and holm is not None and holm >= 0.05 and (lo > 0 or hi < 0)
        return _declared_result_ko(m, lo, hi, values, test, margin, holm, rec.get("family_size"), words, edges,
                                   AGAINST_KO.get(against, against), clears)
    side = "below" if m < 0 else "above" if m > 0 else "equal to"
    band = f" (no worse within ±{margin:g})" if margin else ""
    corrected = (f"; p = {holm:.3f} after Holm's correction over the {rec['family_size']} tests of its family"
                 if holm is not None else "")
    why = {"below": "it may be better by more than the margin", "above": "it may cost more than the margin"}
    if edges:
        words += f": its interval reaches {' and '.join(f'{side_} {at} ({why[side_]})' for at, side_ in edges)}"
    elif rec["verdict"] == "undecided" and holm is not None and holm >= 0.05 and (lo > 0 or hi < 0):
        # the primer's case (chapter 02): the interval is the test's own, the verdict's p is Holm-corrected
        words += (f": its interval clears 0, but after Holm's correction p = {holm:.3f} is not below 0.05, so the "
                  "seeds do not decide it")
    return (f"final loss {abs(m):.3f} nats {side} {against}, 95% CI [{lo:+.3f}, {hi:+.3f}], "
            f"{sum(v < 0 for v in values)} of {len(values)} seeds lower; declared test `{test}`{band}{corrected}: "
            f"{words}")


def _declared_result_ko(m, lo, hi, values, test, margin, holm, family_size, words, edges, against,
                        clears=False) -> str:
    """:func:`declared_result` in Korean: the same numbers and verdict words, Korean word order and particles."""
    if m == 0:
        diff = f"{attach(against, '과/와')} 같음"
    else:
        diff = f"{against}보다 {abs(m):.3f} nats {'낮음' if m < 0 else '높음'}"
    band = f"(±{margin:g} 안에서 더 나쁘지 않음)" if margin else ""
    corrected = (f"; 같은 검정 묶음의 검정 {family_size}개에 대한 Holm 보정 후 p = {holm:.3f}" if holm is not None else "")
    why = {"below": "아래(마진보다 더 좋을 수 있음)", "above": "위(마진보다 더 손해일 수 있음)"}
    if edges:
        words += f": 구간이 {' 그리고 '.join(f'{at} {why[side]}' for at, side in edges)}까지 걸침"
    elif clears:   # the English "its interval clears 0, but after Holm's correction p = … is not below 0.05"
        words += (f": 구간은 0을 포함하지 않지만 Holm 보정 후 p = {attach(f'{holm:.3f}', '으로/로')} 0.05 미만이 아님")
    return (f"최종 손실이 {diff}, 95% 신뢰구간 [{lo:+.3f}, {hi:+.3f}], 시드 {len(values)}개 중 "
            f"{sum(v < 0 for v in values)}개에서 더 낮음; 선언된 검정 `{test}`{band}{corrected}: {words}")
