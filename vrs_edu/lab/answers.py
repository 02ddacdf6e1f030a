"""The course's four questions, answered from its own result files (chapter 06).

Each answer is computed from a ``data/results/*.json`` file written by a ``vrs-edu reproduce`` command — never typed
— and cites the chapter that measured it. A missing file gives an answer that names the command that makes it.

1. **QK vs V** — does a deep layer need context in its queries and keys more than in its values? (chapter 04: do the
   values take a larger share of the context-free x0 than the queries and keys, ``bank-of-values``).
2. **Value residual** — does mixing V_1 into later layers lower the loss, keep attention less concentrated, reduce
   over-smoothing? (chapter 03, ``value-residual``).
3. **Bank of values** — through which path do deep layers re-read x0, and can V become a token lookup? (chapter 04,
   ``bank-of-values``).
4. **Depth as a sequence** — does a selective read over depth beat the residual sum, and do the routers' V inputs
   read the embedding while Q and K read recent layers? (chapter 05, ``depth-mixers``).

Questions 1 and 4 share one sub-question, "do deep V inputs read x0 more than Q's and K's?", which chapters 04 and
05 measure with different instruments; :func:`v_reads_x0_side_by_side` sets the two answers side by side.

A fifth entry reads the associative-recall task (chapters 03 and 04, ``recall`` with the rate sweep's other arms in
``recall-rates``): did the models learn to look keys up, and what do the value residual and the x0 coefficients do
on a task that needs it?

The text recipes' answers come from the verdict corpus (:func:`vrs_edu.lab.by_corpus.verdict_corpus`, kjv: runs
that read less than an epoch), recomputed from the runs by the recipe's ``verdicts`` so that today's rules
(preconditions, gates, the rate sweep) apply; a file made before the tests were declared names its command.
"""
from __future__ import annotations

import math
import textwrap
from pathlib import Path

from .experiments import load_results
from .recipes.value_residual import TESTS as VR_TESTS
from .results import Verdict, interval

QUESTIONS = {
    1: ("QK vs V", "Does a deep layer need context in Q and K more than in V?", "04", "bank-of-values"),
    2: ("value residual", "What does mixing V_1 into later layers change?", "03", "value-residual"),
    3: ("bank of values", "Through which path do deep layers re-read x0?", "04", "bank-of-values"),
    4: ("depth as a sequence", "Can the residual stream be a selective read over depth?", "05", "depth-mixers"),
    5: ("recall", "On a key-lookup task, what do the value residual and x0 do?", "03, 04", "recall"),
}


# Chapter 04's declared tests (``bank_of_values.TESTS``) that answer each of its two questions.
BOV_QK_VS_V = ("v_reads_x0_more_than_q", "v_reads_x0_more_than_k", "v_needs_x0_more_than_q", "v_needs_x0_more_than_k",
               "v_pressure_above_q", "v_pressure_above_k")
BOV_PATHS = ("additive_criterion", "beta_v_last_layer_above_10", "qkv_loss", "qkv_beats_scale_control",
             "qkv_beats_random_x0", "scale_control_costs", "substitute_gamma_above_2", "substitute_loss",
             "substitute_beats_scale_control", "bank_gamma_above_2", "bank_loss", "bank_beats_scale_control")


def _verdict_lines(v: dict | Verdict, width: int = 96) -> list[str]:
    """:func:`_verdict_line` (a stored record or a :class:`~vrs_edu.lab.results.Verdict`), with the power or reason
    moved to indented lines when the line would pass ``width``; a swept test: its verdict, then a line per arm."""
    r = v if isinstance(v, Verdict) else Verdict.from_record(v)
    if r.arms is not None:
        n = len(r.arms)
        out = [f"{r.test.name}: {r.verdict} across {r.test.sweep} ({n} rate{'s' if n != 1 else ''})"]
        for arm, a in r.arms:
            ph = "" if math.isnan(a.p_holm) else f", p (Holm) {a.p_holm:.3f}"
            out.append(f"  at {arm}: {interval(a.mean, a.ci)}{ph} → {a.verdict}")
        if r.reason:
            out += textwrap.wrap(f"({r.reason})", width, initial_indent="  ", subsequent_indent="  ")
        return out
    line = _verdict_line(r.to_record())
    cut = line.find(" (", max(line.find(" → "), 0))   # the parenthesis after the verdict: power or reason
    if len(line) <= width or cut < 0:
        return [line]
    return [line[:cut], *textwrap.wrap(line[cut + 1:], width, initial_indent="  ", subsequent_indent="  ")]


def _no_declared_tests(result: dict, recipe: str) -> str:
    """The line for a result file made before its recipe declared tests: nothing to answer from; the command that
    makes a current one."""
    return (f"this result file has no declared tests (made by `{result.get('command', '?')}` before they were "
            f"declared): run `vrs-edu reproduce {recipe}` again")


def _rows(result: dict, recipe: str) -> list:
    """The result's verdicts: recomputed by the recipe's ``verdicts`` from its runs (today's rules), or, for a file
    without runs (a hand-made or trimmed one), its stored records."""
    from .recipes import bank_of_values, value_residual

    fn = {"value-residual": value_residual.verdicts, "bank-of-values": bank_of_values.verdicts}[recipe]
    part = result.get("corpus")
    if isinstance(part, dict) and "runs" in part:
        return fn(result)
    return [Verdict.from_record(r) for r in result.get("verdicts", [])]


def _declared(result: dict, names: tuple[str, ...], recipe: str = "bank-of-values") -> list[str]:
    """The declared tests named ``names``, in that order, one or more lines each (:func:`_verdict_lines`)."""
    rows = {r.test.name: r for r in _rows(result, recipe)}
    return [line for n in names if n in rows for line in _verdict_lines(rows[n])]


def answer_qk_vs_v(bov: dict) -> list[str]:
    """Chapter 04's tests of "V takes more x0 than Q, and than K" (the x0 shares over the rate sweep), with the need
    for x0 beside them (the loss cost of removing each path's x0; the gradient pressure on the trained baseline),
    recomputed from the runs on the verdict corpus (the same tests on the recall task are question 5); a file made
    before the tests were declared names its command."""
    if bov.get("verdicts"):
        out = _declared(bov, BOV_QK_VS_V)
        out.append("(a larger x0 share or need: less need for context; above 0 = Q and K need context more than V)")
        return out
    return [_no_declared_tests(bov, "bank-of-values")]


def _verdict_line(v: dict) -> str:
    """One stored declared-test record (``result["verdicts"]``, see ``analysis.verdict_records``) in words, with the
    same numbers and verdict chapter 03 prints: mean [95 % CI], Holm-adjusted p, verdict (power at the declared
    effect when undecided; the reason when undecidable, out of regime or n/a; a clause per arm for a swept test); at
    most 96 characters for test names up to 21 (chapter 06 indents it by 4)."""
    r = Verdict.from_record(v)
    if r.arms is not None:
        return f"{v['name']}: {r.sentence()}"
    head = f"{v['name']}: {interval(r.mean, r.ci)}"
    if r.reason:
        return f"{head} → {r.verdict} ({r.reason})"
    line = f"{head}, p (Holm) {r.p_holm:.3f} → {r.verdict}"
    if r.verdict == "undecided":
        line += f" ({r._power_text()})"
    return line


def answer_value_residual(vr: dict) -> list[str]:
    """Chapter 03's declared tests (``value_residual.TESTS``), recomputed from the runs on the verdict corpus, as
    chapter 03 prints them; a file made before the tests were declared names its command."""
    if vr.get("verdicts"):
        declared = {t.name for t in VR_TESTS}
        rows = _rows(vr, "value-residual")
        return [line for r in rows if r.test.name in declared for line in _verdict_lines(r)]
    return [_no_declared_tests(vr, "value-residual")]


def answer_bank_of_values(bov: dict) -> list[str]:
    """Chapter 04's other declared tests (the paper's additive criterion, its size yardsticks, the losses and the
    gated controls), recomputed from the runs on the verdict corpus, and how many β_v series had reached a
    plateau; a file made before the tests were declared names its command."""
    if bov.get("verdicts"):
        out = _declared(bov, BOV_PATHS)
        pl = bov.get("corpus", {}).get("beta_v_plateau")
        if pl:
            out.append(f"(β_v plateau reached in {pl['reached']} of {pl['of']} (layer, seed) series at the nominal "
                       "rate)")
        return out
    return [_no_declared_tests(bov, "bank-of-values")]


def _test_row(label: str, mean: float, ci, p_holm: float, verdict: str) -> str:
    """One declared test on a line: label, mean [95 % CI], p after Holm, verdict."""
    lo, hi = ci
    p = "n/a  " if math.isnan(p_holm) else f"{p_holm:.3f}"
    return f"  {label:13s} {mean:+.3f} [{lo:+.3f}, {hi:+.3f}]  p (Holm) {p}  {verdict}"


def answer_depth(dm: dict) -> list[str]:
    """Chapter 05's declared tests (``depth_mixers.TESTS``), recomputed from the runs: the routers' primary test
    (deep V inputs carry more token identity, x0-R², than Q's and K's), each mixer's loss against the residual and
    the scalar-gain controls (DenseFormer's and MUDDFormer's loss against ``scalar_gain``'s, n/a unless the mixer's
    own loss claim is reproduced), with Holm-adjusted p, verdict and power, as chapter 05 prints them. Read on the
    verdict corpus by :func:`course_answers`. No "best mixer": the minimum of many noisy differences is biased
    toward luck (winner's curse), so each mixer is read against its own test.
    Lines stay within 96 characters (chapter 06 indents them by 4)."""
    from .recipes.depth_mixers import verdicts

    rows = verdicts(dm)
    steps = dm.get("schedule", {}).get("steps")
    n = max((r.n for r in rows), default=0)
    out = []
    families = (("primary", "_v_reads_x0_more_than_qk", "per router, deep V input's x0-R² − max(Q's, K's)"),
                ("ch05", "_loss", "per mixer, final val loss − residual's"),
                ("ch05_controls", "_beats_scalar_gain", "scalar-gain control, final val loss − scalar_gain's"))
    for family, suffix, what in families:
        members = [r for r in rows if r.test.family == family]
        if not members:
            continue
        out.append(f"{what}: {len(members)} declared tests (Holm), {n} paired seeds")
        for r in members:
            line = _test_row(r.test.name.removesuffix(suffix), r.mean, r.ci, r.p_holm, r.verdict)
            if r.reason:
                out.append(line)
                out += textwrap.wrap(f"({r.reason})", 96, initial_indent="    ", subsequent_indent="    ")
                continue
            if r.verdict == "undecided":
                line += f" ({r._power_text()})"
            out.append(line)
    loss = [r for r in rows if r.test.family == "ch05"]
    for verdict, words in (("reproduced", "lower loss than the residual"), ("contradicted", "higher loss")):
        names = [r.test.name.removesuffix("_loss") for r in loss if r.verdict == verdict]
        out.append(f"{words}, after Holm: {', '.join(names) or 'none'}")
    if steps is not None:
        out.append(f"({steps} training steps per run: an early-training ranking)")
    return out


def answer_recall(rc: dict, rates: dict | None = None) -> list[str]:
    """The recall recipe's declared tests (``recall.TESTS``), recomputed from the runs with the rate sweep's other
    arms (``rates``, a ``recall-rates`` result; without it the x0 claims cannot count), as chapters 03 and 04 print
    them: first how many seeds of each variant learned lookup, then each set-up's check (its models beat the no-lookup
    reference) and what is read from it, and a last line saying whether any of it is about retrieval. Losses are in
    nats, ``recall_resformer_learns_sooner`` in training steps, the x0 shares are fractions."""
    from .recipes.recall import steps_to_learn, verdicts, with_rates

    ref = rc["no_lookup_reference"]["loss"]
    part = with_rates(rc, rates)["recall"]
    steps = part["configs"]["baseline"]["train"]["steps"]
    learned = {v: sum(steps_to_learn(r, ref, steps) < steps for r in runs) for v, runs in part["runs"].items()}
    n = {v: len(runs) for v, runs in part["runs"].items()}
    out = textwrap.wrap(f"lookup learned within {steps:,} steps by "
                        + ", ".join(f"{learned[v]} of {n[v]} {v} seeds" for v in n), 96, subsequent_indent="  ")
    out.append("(losses in nats; steps to learn in training steps; x0 shares are fractions of a path's input)")
    rows = verdicts(rc, rates)
    out += [line for r in rows for line in _verdict_lines(r)]
    if all(r["final_val_loss"] < 0.0005 for v in ("baseline", "resformer") for r in part["runs"].get(v, [])):
        out += textwrap.wrap("(every baseline and resformer seed ends at loss 0.000: the loss comparisons have no "
                             "spread, at their floor; steps to learn is the comparison that can separate them)", 96,
                             subsequent_indent="  ")
    pre = {r.test.name: r for r in rows if r.test.name in ("recall_lookup_learned", "recall_qkv_lookup_learned")}
    failed = [k for k, r in pre.items() if r.verdict != "reproduced"]   # a swept check: reproduced at every rate
    if failed:
        out += textwrap.wrap(f"check{'s' if len(failed) > 1 else ''} {', '.join(failed)} not reproduced: the "
                             "lines of that set-up are not evidence about retrieval", 96, subsequent_indent="  ")
    return out


def v_reads_x0_side_by_side(bov: dict | None, dm: dict | None) -> list[str]:
    """Question 1 beside question 4: "do deep V inputs read x0 more than Q's and K's?", measured by two instruments.

    Chapter 04 (``bov``, the ``bank-of-values`` result): learned x0 coefficients, share_v − share_q and share_v −
    share_k with share = |β| / (|α| + |β|) (a fraction of a path's input), each a declared test judged at every rate
    of the coefficient-rate sweep (a row per rate). Chapter 05 (``dm``, the ``depth-mixers`` result): the routers'
    primary tests, x0-R² of V's input − max(Q's, K's) (a fraction of variance), recomputed from the runs. The two
    instruments measure different fractions, so the last lines compare only what they can share: the side of 0 of
    each instrument's means (a line each: a count across them would be a vote), the verdicts that count (decided,
    in regime) for and against the claim, and a conclusion. A missing file (None) or a file without the tests gives a
    line naming the command that makes it. Lines stay within 96 characters."""
    from .recipes.depth_mixers import verdicts

    def side(m: float) -> str:
        return "below" if m < 0 else "above" if m > 0 else "at"

    out, decided, sides_04 = [], [], {}
    out.append("chapter 04, x0 coefficients: share_v − share_q and − share_k, at each coefficient rate")
    rows04 = {r.test.name: r for r in (_rows(bov, "bank-of-values") if bov else [])}
    for name, label in (("v_reads_x0_more_than_q", "v − q"), ("v_reads_x0_more_than_k", "v − k")):
        r = rows04.get(name)
        if r is None:
            continue
        for arm, a in (r.arms or ((None, r),)):
            out.append(_test_row(f"{label} {arm or ''}".strip(), a.mean, a.ci, a.p_holm, a.verdict))
        sides = {arm: side(a.mean) for arm, a in (r.arms or ((None, r),))}
        sides_04[label] = sides
        decided.append((f"chapter 04 ({label})", r.verdict))
        if r.reason and r.verdict in ("out of regime", "n/a", "undecided"):
            out += textwrap.wrap(f"({label}: {r.verdict}; {r.reason})", 96, initial_indent="  ",
                                 subsequent_indent="  ")
    if not sides_04:
        out.append("  not measured yet: `vrs-edu reproduce bank-of-values --corpus kjv`")
    rows = [r for r in verdicts(dm) if r.test.family == "primary"] if dm is not None else []
    out.append("chapter 05, routers' inputs: x0-R² of V's − max(Q's, K's), fractions of variance")
    if not rows:
        out.append("  not measured yet: `vrs-edu reproduce depth-mixers`")
    for r in rows:
        name = r.test.name.removesuffix("_v_reads_x0_more_than_qk")
        out.append(_test_row(name, r.mean, r.ci, r.p_holm, r.verdict))
        decided.append((name, r.verdict))
    if not sides_04 and not rows:
        return out
    # One summary line per instrument: counting means across instruments would be a vote, and chapter 04's rates
    # are one instrument read several times.
    all_04 = {s for sides in sides_04.values() for s in sides.values()}
    for label, sides in sides_04.items():
        by_side = {}
        for arm, s_ in sides.items():
            by_side.setdefault(s_, []).append(arm or "its one rate")
        out.append(f"chapter 04, {label}: " + "; ".join(f"{s_} 0 at {', '.join(a)}" for s_, a in by_side.items()))
    if rows:
        router_sides = [side(r.mean) for r in rows]
        n_decided = sum(r.counted for r in rows)
        out.append(f"chapter 05: {router_sides.count('below')} of {len(rows)} router means below 0, "
                   f"{router_sides.count('above')} above; {n_decided} decided after Holm")
    pro = [d for d, v in decided if v == "reproduced"]
    con = [d for d, v in decided if v == "contradicted"]
    out.append(f"counted (decided, in regime) for the claim: {', '.join(pro) or 'none'}; against it: "
               f"{', '.join(con) or 'none'}")
    if not sides_04 or not rows:
        out.append("one instrument only: nothing to set beside it yet")
    elif len(set(router_sides)) > 1:
        out.append("the routers' means fall on both sides of 0: no shared direction to set chapter 04 beside")
    elif len(all_04) > 1:
        out.append(f"chapter 04's side of 0 changes with its rate: no one direction to set beside the routers' "
                   f"({router_sides[0]} 0)")
    elif all_04 == set(router_sides):
        out.append(f"the two instruments point the same way: every mean is {router_sides[0]} 0")
    else:
        out.append("the two instruments point different ways: chapter 04 on one side of 0, the routers on the other")
    return out


ANSWERERS = {1: answer_qk_vs_v, 2: answer_value_residual, 3: answer_bank_of_values, 4: answer_depth,
             5: answer_recall}


def course_answers(out_dir: str | Path | None = None) -> list[dict]:
    """One entry per question: ``{"n", "title", "question", "chapter", "command", "lines", "missing"}``; ``lines``
    are the measured answers (empty when the result file is missing, ``missing`` then holds the error text). The
    text recipes are read on the verdict corpus (:func:`~vrs_edu.lab.by_corpus.verdict_corpus`); the recall answer
    adds ``recall-rates`` when it exists."""
    from .by_corpus import verdict_corpus
    from .experiments import trains_on_text

    answers = []
    cache: dict[str, dict | Exception] = {}
    for n, (title, question, chapter, recipe) in QUESTIONS.items():
        if recipe not in cache:
            try:
                corpus = verdict_corpus() if recipe in ("value-residual", "bank-of-values", "depth-mixers") and \
                    trains_on_text(recipe) else None
                cache[recipe] = load_results(recipe, out_dir=out_dir, corpus=corpus)
            except FileNotFoundError as e:
                cache[recipe] = e
        res = cache[recipe]
        entry = {"n": n, "title": title, "question": question, "chapter": chapter,
                 "command": f"vrs-edu reproduce {recipe}", "lines": [], "missing": None}
        if isinstance(res, Exception):
            entry["missing"] = str(res)
        else:
            entry["command"] = res.get("command", entry["command"])
            entry["wall_time_s"] = res.get("wall_time_s")
            if recipe == "recall":
                try:
                    rates = load_results("recall-rates", out_dir=out_dir)
                except FileNotFoundError:
                    rates = None
                entry["lines"] = answer_recall(res, rates)
            else:
                entry["lines"] = ANSWERERS[n](res)
        answers.append(entry)
    return answers
