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

from vrs_edu.chapters.ch03_value_residual import recall, recipe as value_residual
from vrs_edu.chapters.ch03_value_residual.recipe import TESTS as VR_TESTS
from vrs_edu.chapters.ch04_bank_of_values import recipe as bank_of_values
from vrs_edu.chapters.ch04_bank_of_values.recipe import descriptions as bank_of_values_descriptions
from vrs_edu.chapters.ch05_depth_as_sequence import recipe as depth_mixers, v_over_depth
from vrs_edu.chapters.ch05_depth_as_sequence.recipe import descriptions as depth_mixers_descriptions
from vrs_edu.chapters.ch05_depth_as_sequence.v_over_depth import descriptions as v_over_depth_descriptions
from vrs_edu.chapters.ch06_what_v_reuse_buys.recipe import verdicts as design_verdicts
from vrs_edu.chapters.ch07_real_model import norms as encoder_norms
from vrs_edu.chapters.ch08_real_decoder import norms as decoder_norms
from vrs_edu.chapters.ch08_real_decoder import recipe as real_decoder
from vrs_edu.chapters.ch08_real_decoder.readout import decoder_answers
from vrs_edu.chapters.ch08_real_decoder.recipe import verdicts as decoder_verdicts
from vrs_edu.lab.analysis import arm_rule, layer_means, mean
from vrs_edu.lab.by_corpus import verdict_corpus
from vrs_edu.lab.experiments import load_results, load_results_or_none, trains_on_text
from vrs_edu.lab.kv_cache import bov_saving, kv_bytes_per_token, n_bank_layers
from vrs_edu.lab.results import DECIDED, VERDICTS, Verdict, interval
from vrs_edu.viz.prose import percent

# The recipes that describe numbers they do not judge (where the premise of the claim fails), by recipe name.
DESCRIPTIONS = {"bank-of-values": bank_of_values_descriptions, "depth-mixers": depth_mixers_descriptions,
                "v-over-depth": v_over_depth_descriptions}

RECIPE_LINES = {
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
        out = [f"{r.test.name}: {r.verdict_words} across {r.test.sweep} ({n} rate{'s' if n != 1 else ''})"]
        for arm, a in r.arms:
            ph = "" if math.isnan(a.p_holm) else f", p (Holm) {a.p_holm:.3f}"
            out.append(f"  at {arm}: {interval(a.mean, a.ci)}{ph} → {a.verdict_words}")
        if r.reason:
            out += textwrap.wrap(f"({r.reason})", width, initial_indent="  ", subsequent_indent="  ")
        return out
    line = _verdict_line(r.to_record())
    arrow = line.find(" → ")
    # the parenthesis after the verdict and its would-be verdict: power, margin or reason
    cut = line.find(" (", arrow + 3 + len(r.verdict_words) if arrow >= 0 else 0)
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
    fn = {"value-residual": value_residual.verdicts, "bank-of-values": bank_of_values.verdicts}[recipe]
    part = result.get("corpus")
    if isinstance(part, dict) and "runs" in part:
        return fn(result)
    return [Verdict.from_record(r) for r in result.get("verdicts", [])]


def _declared(result: dict, names: tuple[str, ...], recipe: str = "bank-of-values") -> list[str]:
    """The declared tests named ``names``, in that order, one or more lines each (:func:`_verdict_lines`)."""
    rows = {r.test.name: r for r in _rows(result, recipe)}
    return [line for n in names if n in rows for line in _verdict_lines(rows[n])]


def _descriptions(result: dict, recipe: str) -> dict:
    """``{name: Description}``: the numbers a recipe shows but does not judge (its ``descriptions``, where the
    premise of the claim they would test fails), recomputed from the runs; {} for a recipe or a file without them."""
    fn = DESCRIPTIONS.get(recipe)
    if fn is None:
        return {}
    try:
        return {d.name: d for d in fn(result)}
    except (KeyError, TypeError, ValueError):      # a file made before the descriptions' runs existed
        return {}


def _description_lines(d, label: str | None = None) -> list[str]:
    """A described number as the declared lines print one: ``name: mean [95% CI] → described, not judged``, a line
    per arm for a swept one, and why it is not judged."""
    name = label or d.name
    if d.arms:
        out = [f"{name}: described, not judged, across the rates"]
        out += [f"  at {a}: {x.interval()}" for a, x in d.arms]
    else:
        out = [f"{name}: {d.interval()} → described, not judged"]
    return out + textwrap.wrap(f"({d.why})", 96, initial_indent="  ", subsequent_indent="  ")


def answer_qk_vs_v(bov: dict) -> list[str]:
    """Chapter 04's tests of "V takes more x0 than Q, and than K" (the x0 shares over the rate sweep), with the need
    for x0 beside them (the loss cost of removing each path's x0; the gradient pressure on the trained baseline),
    recomputed from the runs on the verdict corpus (the same tests on the recall task are question 5); a file made
    before the tests were declared names its command."""
    if bov.get("verdicts"):
        out = _declared(bov, BOV_QK_VS_V)
        described = _descriptions(bov, "bank-of-values") if isinstance(bov.get("corpus"), dict) else {}
        out += [line for n in BOV_QK_VS_V if n in described for line in _description_lines(described[n])]
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
        return f"{head} → {r.verdict_words} ({r.reason})"
    line = f"{head}, p (Holm) {r.p_holm:.3f} → {r.verdict}"
    if r.verdict == "negligible" and r.test.margin is not None:
        line += f" (inside ±{r.test.margin:g}, the declared smallest effect: too small to matter)"
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


def _paths_names() -> tuple[str, ...]:
    """Chapter 04's tests other than the QK-vs-V ones: :data:`BOV_PATHS` (which a stored file may hold), then every
    other test the recipe's ``TESTS`` declares today (so a new or re-declared test is never silently dropped)."""
    return BOV_PATHS + tuple(t.name for t in bank_of_values.TESTS
                             if t.name not in BOV_QK_VS_V and t.name not in BOV_PATHS)


def answer_bank_of_values(bov: dict) -> list[str]:
    """Chapter 04's other declared tests (the paper's additive criterion, its size yardsticks, the losses and the
    gated controls), recomputed from the runs on the verdict corpus, and how many β_v series had reached a
    plateau; a file made before the tests were declared names its command."""
    if bov.get("verdicts"):
        names = _paths_names()
        out = _declared(bov, names)
        described = _descriptions(bov, "bank-of-values") if isinstance(bov.get("corpus"), dict) else {}
        out += [line for n in described if n not in BOV_QK_VS_V for line in _description_lines(described[n])]
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
    verdict corpus by :func:`declared_lines`. No "best mixer": the minimum of many noisy differences is biased
    toward luck (winner's curse), so each mixer is read against its own test.
    Lines stay within 96 characters (chapter 06 indents them by 4)."""
    rows = depth_mixers.verdicts(dm)
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
            line = _test_row(r.test.name.removesuffix(suffix), r.mean, r.ci, r.p_holm, r.verdict_words)
            if r.reason:
                out.append(line)
                out += textwrap.wrap(f"({r.reason})", 96, initial_indent="    ", subsequent_indent="    ")
                continue
            if r.verdict == "undecided":
                line += f" ({r._power_text()})"
            out.append(line)
    described = [d for name, d in _descriptions(dm, "depth-mixers").items() if "_v_reads_x0_more_than_" in name]
    if described:
        out.append("per router, deep V input's x0-R² − Q's and − K's: described, not judged")
        out += textwrap.wrap(f"({described[0].why})", 96, initial_indent="  ", subsequent_indent="  ")
        for d in described:
            lo, hi = d.ci
            out.append(f"  {d.name.replace('_v_reads_x0_more_than_', ' v − '):15s} {d.mean:+.3f} [{lo:+.3f}, "
                       f"{hi:+.3f}]")
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
    ref = rc["no_lookup_reference"]["loss"]
    part = recall.with_rates(rc, rates)["recall"]
    steps = part["configs"]["baseline"]["train"]["steps"]
    learned = {v: sum(recall.steps_to_learn(r, ref, steps) < steps for r in runs) for v, runs in part["runs"].items()}
    n = {v: len(runs) for v, runs in part["runs"].items()}
    out = textwrap.wrap(f"lookup learned within {steps:,} steps by "
                        + ", ".join(f"{learned[v]} of {n[v]} {v} seeds" for v in n), 96, subsequent_indent="  ")
    out.append("(losses in nats; steps to learn in training steps; x0 shares are fractions of a path's input)")
    rows = recall.verdicts(rc, rates)
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
    def side(m: float) -> str:
        return "below" if m < 0 else "above" if m > 0 else "at"

    out, decided, sides_04 = [], [], {}
    out.append("chapter 04, x0 coefficients: share_v − share_q and − share_k, at each coefficient rate")
    rows04 = {r.test.name: r for r in (_rows(bov, "bank-of-values") if bov else [])}
    # On the language-model toys these numbers are descriptions (their premise fails): shown, never counted.
    desc04 = _descriptions(bov, "bank-of-values") if bov and isinstance(bov.get("corpus"), dict) else {}
    why = []
    for name, label in (("v_reads_x0_more_than_q", "v − q"), ("v_reads_x0_more_than_k", "v − k")):
        r = rows04.get(name) or desc04.get(name)
        if r is None:
            continue
        for arm, a in (r.arms or ((None, r),)):
            out.append(_test_row(f"{label} {arm or ''}".strip(), a.mean, a.ci, getattr(a, "p_holm", math.nan),
                                 getattr(a, "verdict_words", "described, not judged")))
        sides = {arm: side(a.mean) for arm, a in (r.arms or ((None, r),))}
        sides_04[label] = sides
        if not isinstance(r, Verdict):
            why.append(r.why)
            continue
        decided.append((f"chapter 04 ({label})", r.verdict))
        if r.reason and r.verdict in ("out of regime", "n/a", "undecided"):
            out += textwrap.wrap(f"({label}: {r.verdict}; {r.reason})", 96, initial_indent="  ",
                                 subsequent_indent="  ")
    if not sides_04:
        out.append("  not measured yet: `vrs-edu reproduce bank-of-values --corpus kjv`")
    if why:
        out += textwrap.wrap(f"({why[0]})", 96, initial_indent="  ", subsequent_indent="  ")
    rows = [r for r in depth_mixers.verdicts(dm) if r.test.family == "primary"] if dm is not None else []
    desc05 = [d for n, d in (_descriptions(dm, "depth-mixers") if dm is not None else {}).items()
              if "_v_reads_x0_more_than_" in n]
    out.append("chapter 05, routers' inputs: x0-R² of V's − " + ("max(Q's, K's)" if rows else "Q's and − K's")
               + ", fractions of variance")
    if not rows and not desc05:
        out.append("  not measured yet: `vrs-edu reproduce depth-mixers`")
    for r in rows:
        name = r.test.name.removesuffix("_v_reads_x0_more_than_qk")
        out.append(_test_row(name, r.mean, r.ci, r.p_holm, r.verdict_words))
        decided.append((name, r.verdict))
    for d in desc05:
        out.append(_test_row(d.name.replace("_v_reads_x0_more_than_", " v − ").ljust(15), d.mean, d.ci, math.nan,
                             "described, not judged"))
    if desc05 and not rows:
        out += textwrap.wrap(f"({desc05[0].why})", 96, initial_indent="  ", subsequent_indent="  ")
        rows = desc05
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
        n_decided = sum(getattr(r, "counted", False) for r in rows)
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


def declared_lines(out_dir: str | Path | None = None) -> list[dict]:
    """Each toy recipe's declared tests as lines (the "How sure are we?" section of chapter 09), one entry per
    recipe: ``{"n", "title", "question", "chapter", "command", "lines", "missing"}``; ``lines``
    are the measured answers (empty when the result file is missing, ``missing`` then holds the error text). The
    text recipes are read on the verdict corpus (:func:`~vrs_edu.lab.by_corpus.verdict_corpus`); the recall answer
    adds ``recall-rates`` when it exists."""
    answers = []
    cache: dict[str, dict | Exception] = {}
    for n, (title, question, chapter, recipe) in RECIPE_LINES.items():
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


# ---------------------------------------------------------------------------------------------------------------
# Chapter 09: the article's four questions, in its words and order, each with the toys' and the real models'
# evidence side by side (:func:`course_answers`).

ARTICLE_QUESTIONS = {
    1: "How much does a deep layer's attention depend on its freshly computed QK pattern?",
    2: "How much early or previous-layer information is kept through the V path?",
    3: "Is the residual stream mere accumulation, or can it be designed as a selective read over depth?",
    4: "Can efficiency or interpretability gains come from V reuse rather than from QK?",
}
SEED_CONCLUSION = "looking at attention through QK alone sees only half"
TOY_RECIPES = ("value-residual", "bank-of-values", "depth-mixers", "v-over-depth")
COLUMNS = ["instrument", "toy models", "real encoder (07)", "real decoder (08)", "in words", "ch."]
NOT_MEASURED = "—"


PLAIN = {"reproduced": "reproduced", "contradicted": "contradicted", "undecided": "undecided",
         "negligible": "negligible (its interval lies inside ± its smallest effect of interest: too small to matter)",
         "out of regime": "out of regime (its premise fails)",
         "n/a": "n/a (its claim was not reproduced: no gain for the control to explain)",
         "rate-dependent": "rate-dependent (decided in opposite directions at different rates)"}


def arm_words(v: Verdict) -> str:
    """Which arm of a swept test got which verdict, decided words first: ``reproduced at ×4 only; undecided at
    ×0.25, ×1`` ("only" when a decided word holds at some arms and not all); "" for a test without arms."""
    if not v.arms:
        return ""
    by: dict[str, list[str]] = {}
    for a, x in v.arms:
        by.setdefault(x.verdict, []).append(str(a))
    order = sorted(by, key=lambda w: (w not in DECIDED, list(by).index(w)))
    return "; ".join(f"{w} at {', '.join(by[w])}" + (" only" if w in DECIDED and len(by) > 1 else "")
                     for w in order)


def verdict_phrase(verdict: str | Verdict | None, reason: str | None = None, would_be: str | None = None) -> str:
    """A declared test's verdict in the course's plain words (:data:`PLAIN`, the glossary's verdicts): reproduced /
    contradicted / undecided; *negligible* said as too small to matter (with its margin when ``verdict`` is a
    :class:`~vrs_edu.lab.results.Verdict`); *out of regime* and *n/a* with their would-be verdict, "out of regime
    (its premise fails; judged anyway it would be contradicted)"; a swept test's mixed arms named ("undecided
    (reproduced at ×4 only; undecided at ×0.25, ×1)"); ``None``: "not made yet". ``would_be`` is read from a
    Verdict, or given with a verdict word."""
    if verdict is None:
        return "not made yet"
    v = verdict if isinstance(verdict, Verdict) else None
    word = v.verdict if v is not None else verdict
    would_be = v.would_be if v is not None else would_be
    if word == "negligible" and v is not None and v.test.margin is not None:
        return (f"negligible (its interval lies inside ±{v.test.margin:g}, its smallest effect of interest: too "
                "small to matter)")
    if word in ("out of regime", "n/a") and would_be:
        return f"{PLAIN[word][:-1]}; judged anyway it would be {would_be})"
    if v is not None and v.arms and word in ("undecided", "rate-dependent") and len({x.verdict for _, x in v.arms}) > 1:
        return f"{word} ({arm_words(v)})"
    return PLAIN.get(word, word)


def claim_verdict(v: Verdict | None, claim: str = "a stand-in pattern costs within 0.05 nats") -> str:
    """A verdict with the claim it judges named: ``contradicted (the claim "a stand-in pattern costs within 0.05
    nats")``; "not made yet" for None."""
    if v is None:
        return "not made yet"
    return f"{verdict_phrase(v)} (the claim \"{claim}\")"


def interval_words(v: Verdict, expected: str = "negative") -> str:
    """What a loss change's 95 % interval says, from where it lies: "a lower loss" (entirely below 0), "a higher
    loss" (above 0) or "a loss change whose interval includes 0"; when it excludes 0 but the test is *undecided*
    (it does not survive the correction for the family's number of tests), that is said too, and when it points
    against the declared direction (``expected``: "negative" = the claim is a lower loss, "positive" = a cost), so
    is that. Never "cannot tell from 0" for an interval that excludes 0."""
    lo, hi = v.ci
    num = f" ({v.interval(3)} nats)"
    if lo <= 0 <= hi:
        return f"a loss change whose interval includes 0{num}, {verdict_phrase(v)}"
    words = ("a lower loss" if hi < 0 else "a higher loss") + num
    against = (hi < 0) == (expected == "positive")
    out = words + (", the opposite of the cost the paper expects" if against and expected == "positive" else
                   ", the opposite of the gain the paper expects" if against else "")
    if v.verdict == "undecided":
        return out + ", undecided once we allow for the number of tests (see How sure are we?)"
    return out + f", {verdict_phrase(v)}"


def stated(v: Verdict | None, unit: str = "nats") -> str:
    """``-0.032 [-0.037, -0.027] nats, reproduced``: a declared test's mean, 95 % interval and verdict (the
    nominal arm's numbers for a swept test); "not made yet" for None."""
    if v is None:
        return "not made yet"
    return f"{v.interval()}{' ' + unit if unit else ''}, {verdict_phrase(v)}"


def combine_arm_verdicts(verdicts: list[str], min_arms: int = 3) -> str:
    """The verdict of a claim judged at every arm of a sweep (the coefficient rates ×0.25, ×1, ×4), by the
    intersection-union rule of :func:`vrs_edu.lab.analysis.arm_rule` (which :func:`~vrs_edu.lab.analysis._combine`
    applies): the same verdict at every arm is that verdict; arms decided in opposite directions (reproduced at one,
    contradicted at another) are *rate-dependent*; all arms out of regime or n/a give *out of regime* (or *n/a*);
    any other mixture is *undecided*. A decided verdict from fewer than ``min_arms`` arms is only *undecided*.

    Raises:
        ValueError: ``verdicts`` is empty or holds a word that is not a verdict.
    """
    if not verdicts:
        raise ValueError("verdicts must hold one verdict per arm, got an empty list")
    bad = [v for v in verdicts if v not in VERDICTS]
    if bad:
        raise ValueError(f"verdicts must be among {VERDICTS}, got {bad}")
    out = arm_rule(list(verdicts))
    if out in DECIDED and len(verdicts) < min_arms:
        return "undecided"
    return out


def toy_swap_evidence(swaps: dict) -> dict:
    """Chapter 02's swaps on the toy character model (``vrs_edu.chapters.ch02_qk_routes_v_carries.readout.swap_experiment``: per layer, loss changes in
    nats) reduced to what question 1 needs: ``{"ratios", "more", "L", "last": (value − pattern, its 95 % half
    width)}``; ``more``: layers where the value swap costs more than the pattern swap."""
    p, v = swaps["pattern swap"], swaps["value swap"]
    ratios = [b.mean / a.mean for a, b in zip(p, v)]
    half = 1.96 * math.hypot(p[-1].se, v[-1].se)
    return {"ratios": ratios, "more": sum(r > 1 for r in ratios), "L": len(ratios),
            "last": (v[-1].mean - p[-1].mean, half)}


def encoder_evidence(pattern_swap: dict, value_swap: dict, ablation: dict, probes: dict) -> dict:
    """Chapter 07's measurements on the real encoder (all-MiniLM-L6-v2; ``vrs_edu.chapters.ch07_real_model.probes``): cosines of the patched
    to the clean sentence embedding (1 = unchanged) and held-out R² of q, k, v from token identity, reduced to
    ``{"L", "value_worse" (layers where the value swap moves the embedding more than the pattern swap),
    "deep" (the last third's layers), "deep_cos": {path: mean cosine there with that path's input := x0},
    "r2_0": {path: R² at layer 0}, "v_best" (layers where v is the best explained)}``."""
    L = len(pattern_swap["cos"])
    deep = list(range(L - L // 3, L))
    return {"L": L, "deep": deep,
            "value_worse": sum(v < p for p, v in zip(pattern_swap["cos"], value_swap["cos"])),
            "deep_cos": {s: sum(ablation[s][l] for l in deep) / len(deep) for s in "qkv"},
            "r2_0": {s: probes[s][0] for s in "qkv"},
            "v_best": sum(probes["v"][l] > max(probes["q"][l], probes["k"][l]) for l in range(L))}


def _toy_verdicts(results: dict) -> dict[str, Verdict]:
    """Every declared test of the toy recipes, recomputed from their runs by each recipe's ``verdicts``."""
    fns = {"value-residual": value_residual.verdicts, "bank-of-values": bank_of_values.verdicts,
           "depth-mixers": depth_mixers.verdicts, "v-over-depth": v_over_depth.verdicts}
    return {r.test.name: r for name, fn in fns.items() if results.get(name) for r in fn(results[name])}


def _bar(label: str, mean: float, lo: float, hi: float, model: str) -> dict:
    """One bar of chapter 09's effect figure: a loss change in nats with its 95 % interval."""
    return {"label": label, "mean": mean, "lo": lo, "hi": hi, "model": model}


def _cost(v: Verdict | None) -> str:
    return "not made yet" if v is None else f"{v.interval(2)} nats"


def pattern_tolerance(result: dict, condition: str = "pattern swap") -> dict | None:
    """From a stored ``real-decoder`` result's layer scan (one layer at a time): the layers whose ``condition``
    (another sequence's pattern) costs less than the tolerance, by the upper end of its 95 % interval, as chapter 08
    counts them: ``{"layers", "late", "n_layers", "n_late", "tolerance"}`` (``late``: those in the last third).
    None when the result has no layer scan."""
    scan = result.get("layer_scan", {}).get("conditions", {}).get(condition)
    if scan is None or "ci" not in scan or "tolerance" not in result or "late" not in result.get("thirds", {}):
        return None
    tol, late = result["tolerance"], result["thirds"]["late"]
    layers = [l for l, (_, hi) in enumerate(scan["ci"]) if hi < tol]
    return {"layers": layers, "late": [l for l in layers if l in late], "n_layers": len(scan["ci"]),
            "n_late": len(late), "tolerance": tol}


def _layers(ls: list[int]) -> str:
    return ("layer " if len(ls) == 1 else "layers ") + ", ".join(map(str, ls))


def q1_sentence(pattern_cost: Verdict | None, models_more: list[tuple[str, bool]],
                scan: dict | None = None) -> str:
    """Question 1 in words: what another sequence's pattern costs the real decoder's last third swapped *jointly*
    (``pattern_cost``: the equivalence test "within the 0.05-nat tolerance"; its words from its verdict), how many
    single layers tolerate the same swap on their own (``scan``: :func:`pattern_tolerance`), and in which models the
    value swap costs more than the pattern swap (``models_more``: (model, value swap costs more?))."""
    more = [m for m, ok in models_more if ok]
    not_more = [m for m, ok in models_more if not ok]
    out = []
    if pattern_cost is not None:
        tol = f"{scan['tolerance']:g}" if scan else "0.05"
        said = {"contradicted": f"beyond the {tol}-nat tolerance",
                "reproduced": f"within the {tol}-nat tolerance"}.get(pattern_cost.verdict)
        head = (f"Swapped together, the real decoder's last third with another sequence's patterns costs "
                f"{_cost(pattern_cost)}, ")
        if said:
            head += f"{said} (the claim \"within {tol} nats\" {pattern_cost.verdict})"
        else:
            head += f"{verdict_phrase(pattern_cost)} against the {tol}-nat tolerance"
        if scan:
            n = len(scan["late"])
            head += (f"; one layer at a time, {n} of its {scan['n_late']} layers tolerate the swap within {tol} "
                     f"nats ({_layers(scan['late'])}; {len(scan['layers'])} of all {scan['n_layers']})" if n else
                     f"; one layer at a time, none of its {scan['n_late']} layers tolerates it within {tol} nats")
            head += (": the fresh pattern matters for the third as a whole, not for every late layer alone."
                     if n and pattern_cost.verdict == "contradicted" else ".")
        else:
            head += "."
        out.append(head)
    if more:
        out.append(f"Its values matter more than its pattern in {', '.join(more)}"
                   + (f", but not in {', '.join(not_more)}." if not_more else "."))
    elif models_more:
        out.append(f"Its values do not matter more than its pattern in any model measured ({', '.join(not_more)}).")
    return " ".join(out) or "Not measured yet."


# the norm recipes' tests that question 1 reads, per model: the over-read tokens' share test (one per layer) and the
# mixing test (the encoder declares one over all its layers, the decoder one per third)
NORM_TESTS = {"encoder": (encoder_norms, "special_norm_below_weight_{}", "mixing_below_weights"),
              "decoder": (decoder_norms, "sink_norm_below_weight_{}", "mixing_below_weights_late")}


def norm_view_evidence(results: dict[str, dict | None]) -> dict:
    """What a deep layer's attention weights alone mis-state, per real model, from the stored ``encoder-norms`` and
    ``decoder-norms`` results (``results``: {"encoder": …, "decoder": …}, either None when not made). The
    norm-based view: Kobayashi et al., arXiv 2004.10102 (‖α f(x)‖, not α) and 2109.07152 (the context-mixing ratio,
    counting the residual); the decoder's sink: Gu et al., arXiv 2410.10781.

    For each model present, over its last third's layers (the decoder's stored ``thirds``; the encoder's last
    L // 3): ``{"layers", "judged"`` (layers whose over-read tokens, [CLS], [SEP] and punctuation or the first-token
    sink, met the declared premise), ``"reproduced"`` (of those, where their norm share lies below their weight
    share), ``"weight"``, ``"norm"`` (their weight and norm share, mean over the judged layers; NaN without one),
    ``"r"``, ``"weights"`` (the mixing ratio against 1 − α_ii, mean over the layers), ``"attention"`` (between them,
    the attention sub-layer alone by norms, no residual: a description; NaN in a result made before it was read),
    ``"mixing"`` (the mixing test's
    :class:`Verdict`; the encoder's is declared over all its layers)}``. The verdicts are recomputed from the stored
    per-sequence values by each recipe's ``verdicts``."""
    out = {}
    for key, (module, share_test, mixing_test) in NORM_TESTS.items():
        res = results.get(key)
        if not res:
            continue
        rows = {v.test.name: v for v in module.verdicts(res)}
        m = layer_means(res)
        L = len(m["weight_share"])
        late = res["thirds"]["late"] if "thirds" in res else list(range(L - L // 3, L))
        judged = [l for l in late if rows[share_test.format(l)].verdict != "out of regime"]
        out[key] = {"layers": late, "judged": len(judged),
                    "reproduced": sum(rows[share_test.format(l)].verdict == "reproduced" for l in judged),
                    "weight": mean([m["weight_share"][l] for l in judged]) if judged else math.nan,
                    "norm": mean([m["norm_share"][l] for l in judged]) if judged else math.nan,
                    "r": mean([m["mixing"][l] for l in late]), "weights": mean([m["weight_mixing"][l] for l in late]),
                    "attention": (mean([m["attention_mixing"][l] for l in late]) if "attention_mixing" in m
                                  else math.nan),
                    "mixing": rows[mixing_test]}
    return out


# per model: the tokens the weights over-read, as a sentence's subject with its verb, and where they count
NORM_TOKENS = {"encoder": ("[CLS], [SEP] and punctuation", "take", "where they draw more weight than their share "
                           "of the positions"),
               "decoder": ("the first token", "takes", "where it is a sink")}



def _span(xs: list[float], fmt) -> str:
    """``68–78`` (smallest to largest as ``fmt`` prints them), or one number when they print the same."""
    lo, hi = fmt(min(xs)), fmt(max(xs))
    return lo if lo == hi else f"{lo}–{hi}"


def norm_view_cell(e: dict | None, model: str) -> str:
    """One model's cell of question 1's norm-view row (``e``: its entry of :func:`norm_view_evidence`)."""
    if not e:
        return NOT_MEASURED
    ls = e["layers"]
    who, verb, where = NORM_TOKENS[model]
    at = f"layers {ls[0]}–{ls[-1]}" if len(ls) > 1 else f"layer {ls[0]}"
    tokens = (f"{who} {verb} {percent(e['weight'])} of the weight, {percent(e['norm'])} of the norm (below at "
              f"{e['reproduced']} of the {e['judged']} layers {where})" if e["judged"] else
              f"no layer {where}: the share test is out of regime")
    attention = "" if math.isnan(e["attention"]) else f", attention's norms alone {percent(e['attention'])}"
    return (f"{at}: {tokens}; a token takes {percent(e['r'])} of its new state from its context, the weights say "
            f"{percent(e['weights'])}{attention} ({e['mixing'].verdict})")


def norm_view_words(ev: dict) -> str:
    """The row's words, per model measured: by how many percentage points the weights overstate (or understate) what
    a deep layer takes from its context, and by what factor the weight share of the tokens they favour exceeds
    their norm share."""
    if not ev:
        return "not made yet"
    points = [100 * (e["weights"] - e["r"]) for e in ev.values()]
    more = ("overstate" if min(points) > 0 else "understate" if max(points) < 0 else
            "overstate in one model and understate in another")
    pts = _span(points, lambda x: f"{abs(x):.0f}")
    out = f"the weights {more} what a deep layer takes from its context (by {pts} points"
    norms = [100 * (e["weights"] - e["attention"]) for e in ev.values() if not math.isnan(e["attention"])]
    out += (f": {_span(norms, lambda x: f'{x:.0f}')} of them the values' norms, the rest the residual)"
            if norms and len(norms) == len(points) else ")")
    factors = [e["weight"] / e["norm"] for e in ev.values() if e["judged"] and e["norm"] > 0]
    if factors:
        out += f"; the tokens they favour draw {_span(factors, lambda x: f'{x:.1f}')}× more weight than norm"
    return out


def norm_view_sentence(ev: dict) -> str:
    """Question 1's sentence on the norm-based view, for the deepest model measured (the decoder, else the encoder):
    what its last third's weights say against what V, O and the residual move."""
    key = "decoder" if "decoder" in ev else "encoder" if "encoder" in ev else None
    if key is None:
        return ""
    e = ev[key]
    who, verb, where = NORM_TOKENS[key]
    name = {"decoder": "the 30-layer decoder's", "encoder": "the encoder's"}[key]
    ls = e["layers"]
    out = (f"Read by their weights alone (QK), deep layers are mis-stated: in {name} last third (layers "
           f"{ls[0]}–{ls[-1]}) the weights say a token takes {percent(e['weights'])} of its new state from its context")
    if not math.isnan(e["attention"]):
        out += f"; the norms of what attention moves (V and O), {percent(e['attention'])}"
    out += f"; counting the residual too, {percent(e['r'])}"
    if e["judged"]:
        out += (f". There {who} {verb} {percent(e['weight'])} of the weight but {percent(e['norm'])} of what the layer "
                f"moves, at the {e['judged']} of those layers {where}")
    sink = "; the sink: Gu et al., arXiv 2410.10781" if key == "decoder" and e["judged"] else ""
    return out + f" (the norm-based view: Kobayashi et al., arXiv 2004.10102 and 2109.07152{sink})."


def answer_1(ev: dict) -> dict:
    """Question 1: chapter 02's swaps (toy character model), chapter 07's (encoder), chapter 08's (decoder)."""
    t, enc, dec = ev.get("swaps"), ev.get("encoder"), ev.get("decoder") or {}
    dv, dp, dq = (dec.get(n) for n in ("late_value_swap_costs_more_than_pattern_swap",
                                       "late_pattern_swap_within_tolerance", "late_previous_pattern_within_tolerance"))
    models = []
    if t:
        models.append(("the toy character model (Python docs)", t["more"] > t["L"] / 2))
    if enc:
        models.append(("the encoder (Python docs)", enc["value_worse"] > enc["L"] / 2))
    if dv:
        models.append(("the 30-layer decoder (Python docs)", dv.verdict == "reproduced"))
    rows = [["value swap vs pattern swap, per layer",
             f"value swap {min(t['ratios']):.2f}–{max(t['ratios']):.2f}× the pattern swap; more at {t['more']} "
             f"of {t['L']} layers (loss)" if t else NOT_MEASURED,
             f"value swap moves the embedding more at {enc['value_worse']} of {enc['L']} layers (cosine)"
             if enc else NOT_MEASURED,
             f"last third, value − pattern swap: {stated(dv)}" if dv else NOT_MEASURED,
             f"V matters more than the pattern in {sum(ok for _, ok in models)} of {len(models)} models",
             "02, 07, 08"]]
    scan = ev.get("decoder_scan")
    if dp and dq:
        needed = dp.verdict == "contradicted" and dq.verdict == "contradicted"
        tolerated = (f"; one layer at a time {len(scan['late'])} of {scan['n_late']} late layers tolerate "
                     "another sequence's" if scan else "")
        rows.append(["a stand-in for the fresh pattern, last third swapped together (within 0.05 nats?)",
                     NOT_MEASURED, NOT_MEASURED,
                     f"another sequence's: {_cost(dp)}, {claim_verdict(dp)}; the previous layer's: "
                     f"{_cost(dq)}, {claim_verdict(dq)}",
                     ("the third as a whole needs its fresh pattern" if needed else
                      "a stand-in pattern does at this tolerance" if dp.verdict == dq.verdict == "reproduced" else
                      f"not decided: {verdict_phrase(dp)}, {verdict_phrase(dq)}") + tolerated,
                     "08"])
    norms = ev.get("norms") or {}
    if norms:
        rows.append(["what the weights alone mis-state in the last third (norm-based view, ‖α f(x)‖)",
                     NOT_MEASURED, norm_view_cell(norms.get("encoder"), "encoder"),
                     norm_view_cell(norms.get("decoder"), "decoder"), norm_view_words(norms), "07, 08"])
    holds = bool(models) and all(ok for _, ok in models)
    bars = [_bar("toy: value − pattern swap, last layer", t["last"][0], t["last"][0] - t["last"][1],
                 t["last"][0] + t["last"][1], "toy")] if t else []
    bars += [_bar("decoder: value − pattern swap", dv.mean, *dv.ci, "decoder")] if dv else []
    return {"n": 1, "rows": rows, "holds": holds, "bars": bars, "where": [m for m, ok in models if ok],
            "sentence": " ".join(x for x in (q1_sentence(dp, models, ev.get("decoder_scan")),
                                             norm_view_sentence(norms)) if x)}


def holds_word(where: list[tuple[str, bool | None]]) -> str:
    """Whether the article's conclusion holds over the regimes measured: ``where`` is (regime, holds?) with None for
    a regime where nothing was decided. "holds" (every decided regime), "does not hold" (none), "holds in part",
    or "is not decided" (nothing decided)."""
    decided = [ok for _, ok in where if ok is not None]
    if not decided:
        return "is not decided"
    return "holds" if all(decided) else "does not hold" if not any(decided) else "holds in part"


def q2_table_sentence(tables: dict[str, float], r2: dict[str, float] | None, v1_cost: float | None) -> str:
    """The real decoder's per-token tables in words: the loss cost of a table in place of each path (``tables``:
    path -> nats) measures how *sensitive* the output is to what that path carries beyond token identity, not how
    contextual the path is; ``r2`` (path -> table R², lower case keys) says how token-explained each path is."""
    most = max(tables, key=tables.get)
    others = [p for p in "QKV" if p != most]
    s = (f"Post hoc, in the real decoder's last third a per-token table costs the most loss in place of {most} "
         f"({tables[most]:+.2f} nats against {others[0]} {tables[others[0]]:+.2f}, {others[1]} "
         f"{tables[others[1]]:+.2f}): the output depends most on what {most} carries beyond token identity")
    if r2:
        r = {p: r2[p.lower()] for p in "QKV"}
        less = all(r[most] < r[p] for p in others)
        s += (f", and {most} is also the least token-explained (table R² " if less else
              f", although {most} is not less token-explained than {' and '.join(others)} (table R² ")
        s += ", ".join(f"{p.lower()} {r[p]:.2f}" for p in "QKV") + ")"
    s += f"; reusing the first layer's V costs {v1_cost:.2f}." if v1_cost is not None else "."
    return s


def q2_sentence(tables: dict[str, float] | None, v1_cost: float | None, enc: dict | None,
                substitute: Verdict | None, r2: dict[str, float] | None = None) -> str:
    """Question 2 in words, from the decoder's last-third table costs (``tables``: path -> nats), its V := V_1
    cost, the encoder's evidence (:func:`encoder_evidence`) and the toys' trained V := x0 (``substitute``: loss
    change against the baseline, negative = lower)."""
    out = []
    if tables:
        out.append(q2_table_sentence(tables, r2, v1_cost))
    if enc:
        r2, cos = enc["r2_0"], enc["deep_cos"]
        least = min(cos, key=cos.get)
        out.append(f"In the encoder the values start as token identity (layer 0: R² {r2['v']:.2f} for v, "
                   f"{r2['q']:.2f} for q), but its deep V is the {'least' if least == 'v' else 'not the least'} "
                   f"tolerant path when fed x0 (cosine {cos['v']:.3f}; a description: no test was declared "
                   "on it).")
    if substitute is not None:
        lower = substitute.mean < 0
        out.append(f"A toy trained with its last third's V := x0 changes the loss by {substitute.interval(3)} "
                   f"nats, {verdict_phrase(substitute)}: trained that way, deep V can be token identity at "
                   f"{'no cost' if lower or substitute.verdict != 'contradicted' else 'a cost'}.")
    return " ".join(out) or "Not measured yet."


def agreed_words(dec: dict[str, Verdict], reading: str) -> str | None:
    """A real-decoder claim judged with its three estimators (``reading``, a key of
    :data:`vrs_edu.chapters.ch08_real_decoder.recipe.CLAIM_ESTIMATES`) in words: "all three estimators: contradicted", or
    "the estimators disagree: undecided", with the would-be verdict where out of regime; None for a result (or a
    recipe) without the three estimators."""
    names = getattr(real_decoder, "CLAIM_ESTIMATES", {}).get(reading, ())
    if not names or not all(n in dec for n in names) or not hasattr(real_decoder, "agreed"):
        return None
    a = real_decoder.agreed(list(dec.values()), {reading: names})[reading]
    words = {dec[n].verdict for n in names}
    head = "all three estimators" if len(words) == 1 else "the estimators disagree"
    return f"{head}: {verdict_phrase(a['verdict'], would_be=a['would_be'])}"


def decoder_v_beats(dec: dict[str, Verdict]) -> dict | None:
    """The real decoder's judged answer to "in the last third, V tolerates a context-free substitute better than Q
    and than K" (``dec``: its verdicts by name): per contrast the reading of :func:`vrs_edu.chapters.ch08_real_decoder.recipe
    .agreed` (a claim counts only where its three estimators agree; the mean table's verdict alone for a result
    made before the estimators), and ``holds``: True when both contrasts are reproduced, False when either is
    contradicted or negligible (V no better than Q or K), None otherwise (undecided, out of regime). ``words``:
    the two readings in the course's words. None when neither contrast was judged."""
    rows = list(dec.values())
    fn = getattr(real_decoder, "agreed", None)
    read = {}
    for q in "qk":
        names = getattr(real_decoder, "CLAIM_ESTIMATES", {}).get(f"late_v_beats_{q}", ())
        if fn and names and all(n in dec for n in names):
            a = fn(rows, {f"late_v_beats_{q}": names})[f"late_v_beats_{q}"]
            read[q] = (a["verdict"], a["would_be"])
        elif f"late_v_table_beats_{q}_table" in dec:
            v = dec[f"late_v_table_beats_{q}_table"]
            read[q] = (v.verdict, v.would_be)
    if not read:
        return None
    words = [w for w, _ in read.values()]
    holds = (True if all(w == "reproduced" for w in words) else
             False if any(w in ("contradicted", "negligible") for w in words) else None)
    return {"holds": holds, "read": read,
            "words": "; ".join(f"V beats {q.upper()}: {verdict_phrase(w, would_be=wb)}"
                               for q, (w, wb) in read.items())}


def answer_2(ev: dict) -> dict:
    """Question 2: chapter 03's value residual and chapter 04's x0 paths (toys), chapter 07's probes and
    substitution (encoder), chapter 08's per-token tables and V := V_1 (decoder)."""
    toy, enc, dec, da = ev["toys"], ev.get("encoder"), ev.get("decoder") or {}, ev.get("decoder_answers")
    share, v_q, sub, res = (toy.get(n) for n in ("additive_criterion", "v_reads_x0_more_than_q",
                                                 "substitute_loss", "resformer_loss"))
    tables = {p: da["q2"]["numbers"][f"{p} table"]["mean"] for p in "QKV"} if da else None
    v1 = da["q4"]["numbers"]["V := V_1"]["mean"] if da else None
    r2 = da["q2"]["numbers"]["table_r2_late"] if da else None
    rows = []
    described = ev.get("toy_descriptions") or {}
    if share is None and v_q is None and "v_reads_x0_more_than_q" in described:   # the toys' premise fails
        share, v_q = described.get("additive_criterion"), described["v_reads_x0_more_than_q"]
    arms = ", ".join(f"{a} {x.mean:.2f}" for a, x in share.arms) if share and share.arms else ""
    judged = isinstance(v_q, Verdict)
    rows.append(["learned x0 share of V's input (trained with the path)",
                 (f"{arms}; V − Q share {stated(v_q, '')}" if judged else
                  f"{arms}; V − Q share {v_q.interval()}, described") if share and v_q else "not made yet",
                 NOT_MEASURED, "— (trained without the path)",
                 verdict_phrase(v_q) if judged or v_q is None else
                 "a description, not a judged test: its premise (deep inputs mostly context) fails on the "
                 "language-model toys", "04"])
    rows.append(["token identity explains q, k, v (R²)", NOT_MEASURED,
                 "layer 0: " + ", ".join(f"{s} {enc['r2_0'][s]:.2f}" for s in "qkv") if enc else NOT_MEASURED,
                 "last third (table R²): " + ", ".join(f"{s} {r2[s]:.2f}" for s in "qkv") if r2 else NOT_MEASURED,
                 "a description, not a test", "07, 08"])
    tv = dec.get("late_v_table_beats_q_table")
    rows.append(["deep V := token identity (x0 or a per-token table)",
                 f"trained with V := x0: {stated(sub)}" if sub else "not made yet",
                 "last third, cosine with x0 in: " + ", ".join(f"{s.upper()} {enc['deep_cos'][s]:.3f}"
                                                               for s in "qkv") if enc else NOT_MEASURED,
                 "last third, table: " + ", ".join(f"{p} {tables[p]:+.2f}" for p in "QKV") + " nats"
                 if tables else NOT_MEASURED,
                 f"toy: {verdict_phrase(sub)}; decoder 'V beats Q': "
                 f"{verdict_phrase(tv)}", "04, 07, 08"])
    dv1 = dec.get("late_v1_reuse_within_tolerance")
    rows.append(["previous-layer values: V_1 reused later", f"ResFormer's loss change: {stated(res)}"
                 if res else "not made yet", NOT_MEASURED,
                 f"last third V := V_1: {stated(dv1)}" if dv1 else NOT_MEASURED,
                 f"toy {verdict_phrase(res) if res else 'not made'}; decoder "
                 + (tolerance_words(dv1) if dv1 else "not made yet"), "03, 08"])
    reading = decoder_v_beats(dec)
    # V := x0 lowering the loss (reproduced) or changing it too little to matter (negligible): deep V can be token
    # identity at no cost, the yes; a higher loss (contradicted): the no.
    where = [(f"the toys trained with the path ({ev['corpus']})",
              None if sub is None or not sub.counted else sub.verdict in ("reproduced", "negligible")),
             (f"the real decoder, post hoc ({reading['words']})" if reading else "the real decoder, post hoc",
              reading["holds"] if reading else None)]
    if enc:   # a cosine with no declared test: shown, never counted for or against
        where.append(("the encoder, post hoc (a description, not a judged test)", None))
    bars = [_bar("toy: V := x0, trained", sub.mean, *sub.ci, "toy")] if sub else []
    bars += [_bar("decoder: V table − Q table", tv.mean, *tv.ci, "decoder")] if tv else []
    return {"n": 2, "rows": rows, "bars": bars, "holds": holds_word(where), "where": where,
            "sentence": q2_sentence(tables, v1, enc, sub, r2)}


CONTROLLED_MIXERS = {"denseformer": "DenseFormer", "mudd": "MUDD"}   # the mixers the scalar-gain control controls


def extra_parameters(counts: dict | None) -> dict[str, int] | None:
    """From a ``depth-mixers`` result's ``parameter_counts`` (per variant ``{"n_params", "extra", ...}``): the extra
    parameters over the residual of the scalar-gain control and of the mixers it controls, ``{"scalar_gain": 7,
    "denseformer": 44, "mudd": 3866}``; None without them."""
    if not counts or "scalar_gain" not in counts:
        return None
    return {n: int(counts[n]["extra"]) for n in ("scalar_gain", *CONTROLLED_MIXERS) if n in counts}


def extra_parameters_words(counts: dict[str, int]) -> str:
    """``7 extra parameters, against DenseFormer's 44 and MUDD's 3,866``, or "as many as" where they are equal."""
    g = counts["scalar_gain"]
    mixers = [(CONTROLLED_MIXERS[n], counts[n]) for n in CONTROLLED_MIXERS if n in counts]
    if all(c == g for _, c in mixers):
        return f"{g:,} extra parameters, as many as " + " and ".join(m for m, _ in mixers)
    return f"{g:,} extra parameters, against " + " and ".join(f"{m}'s {c:,}" for m, c in mixers)


def q3_sentence(lower: list[str], n_reads: int, controls: list[Verdict], depth_attention: Verdict | None,
                decoder: dict | None, shortswa: list[tuple[str, Verdict]] | None = None,
                best_read: tuple[str, float] | None = None, counts: dict[str, int] | None = None) -> str:
    """Question 3 in words: which depth reads lower the loss against the residual sum (beyond noise: reproduced
    after the Holm correction over the chapter's tests), how
    their scalar-gain controls came out, Depth-Attention's value read, and what the real decoder's last layers read
    (``decoder``: chapter 08's q3 numbers)."""
    out = []
    if n_reads:
        beaten = [c for c in controls if c.verdict == "reproduced"]
        best = f", best {best_read[0]} {best_read[1]:+.3f} nats" if best_read else ""
        out.append(f"Partly: {len(lower)} of {n_reads} depth reads lower the toy's "
                   f"loss against the residual sum beyond noise ({', '.join(lower) or 'none'}{best})"
                   + (f", {len(beaten)} of {len(controls)} of them beyond a learned scalar gain that does not "
                      "select" + (f" ({extra_parameters_words(counts)}: not parameter-matched, a control for a "
                                  "per-layer scale)." if counts else ".") if controls else "."))
        if shortswa:
            out.append("ShortSWA over depth, the design the question names, is not among them: undecided at each "
                       "window (" + ", ".join(f"{n} {v.mean:+.3f}" for n, v in shortswa) + " nats).")
        if not lower:
            out[-1] = f"No depth read of {n_reads} lowers the toy's loss against the residual sum beyond noise."
    if depth_attention is not None:
        out.append(f"Reading earlier layers' values selectively (Depth-Attention) changes the loss by "
                   f"{depth_attention.interval(3)} nats ({verdict_phrase(depth_attention)}).")
    if decoder:
        out.append(f"The real decoder is a plain residual stream, yet what its last third reads is recent: R² "
                   f"{decoder['input_recent_r2_late']:.2f} from the last layers' writes against "
                   f"{decoder['input_x0_r2_late']:.2f} from the token embedding.")
    return " ".join(out) or "Not measured yet."


def answer_3(ev: dict) -> dict:
    """Question 3: chapter 01's running sum, chapter 05's depth reads (toys), chapter 08's read-outs (decoder)."""
    toy, da = ev["toys"], ev.get("decoder_answers")
    loss = [r for r in toy.values() if r.test.family == "ch05"]
    da_ = toy.get("depth_attention_loss")
    reads = loss + ([da_] if da_ else [])
    lower = [r.test.name.removesuffix("_loss") for r in reads if r.verdict == "reproduced" and r.mean < 0]
    controls = [r for r in toy.values() if r.test.family == "ch05_controls"]
    q3 = da["q3"]["numbers"] if da else None
    counts = extra_parameters(ev.get("parameter_counts"))
    rows = [["depth reads vs the residual sum (final loss)",
             f"{len(lower)} of {len(reads)} lower it beyond noise" if reads else "not made yet", NOT_MEASURED,
             "— (a plain residual; not redesigned)",
             "partly: some reads help at this scale" if lower else "no read helps at this scale", "05"],
            [f"a learned scalar gain, no selection ({extra_parameters_words(counts)})" if counts else
             "a learned scalar gain, no selection",
             "; ".join(f"{c.test.name.removesuffix('_beats_scalar_gain')} {stated(c)}" for c in controls)
             or "not made yet", NOT_MEASURED, NOT_MEASURED,
             ("the mixers beat a scalar gain; it has fewer extra parameters, so this rules out a gain from any "
              "per-layer scale, not from the parameters" if controls and all(c.verdict == "reproduced"
                                                                               for c in controls)
              else "; ".join(f"{c.test.name.removesuffix('_beats_scalar_gain')} {verdict_phrase(c)}"
                             for c in controls) or "not made yet"), "05"],
            ["a selective read of values over depth (Depth-Attention)", stated(da_) if da_ else "not made yet",
             NOT_MEASURED, NOT_MEASURED, verdict_phrase(da_), "05"],
            ["what the last third reads (R² of its input)", NOT_MEASURED, NOT_MEASURED,
             f"from the last layers' writes {q3['input_recent_r2_late']:.2f}, from x0 "
             f"{q3['input_x0_r2_late']:.2f}" if q3 else NOT_MEASURED, "a description, not a test", "08"]]
    where = [(f"the toys ({ev['corpus']})", bool(lower) if reads else None)]
    partly = bool(lower) and len(lower) < len(reads)        # some reads help, others (ShortSWA) do not
    bars = [_bar(f"toy: {r.test.name.removesuffix('_loss')} − residual sum", r.mean, *r.ci, "toy") for r in reads
            if r.test.name in ("depth_attention_loss", "denseformer_loss")]
    return {"n": 3, "rows": rows, "bars": bars, "holds": "holds in part" if partly else holds_word(where),
            "where": where,
            "sentence": q3_sentence(lower, len(reads), controls, da_, q3,
                                    [(r.test.name.removesuffix("_loss"), r) for r in loss
                                     if r.test.name.startswith("shortswa") and r.verdict != "reproduced"],
                                    min(((r.test.name.removesuffix("_loss"), r.mean) for r in reads
                                         if r.verdict == "reproduced" and r.mean < 0), key=lambda x: x[1],
                                        default=None), counts)}


CH06_CONTEXTS = (64, 1024)   # the contexts chapter 06 runs the course model at (its block sizes)


def bank_tables(n_layers: int, d_model: int, vocab_size: int, contexts=CH06_CONTEXTS, batch: int = 1) -> dict:
    """The bank's extra memory over the baseline, cache plus tables, in bytes (float32) at each context T for a
    batch of ``batch`` sequences: ``{"extra": {T: bytes}, "vocab_size"}``; positive = the bank costs more. From
    :func:`vrs_edu.lab.kv_cache.bov_saving` (chapter 06's formula, checked there against a measured cache)."""
    nb = n_bank_layers(n_layers)
    return {"extra": {T: -bov_saving(nb, d_model, batch * T, vocab_size) * 4 for T in contexts},
            "vocab_size": vocab_size}


def bank_tables_words(tables: dict) -> str:
    """``+992 KB at T = 64, +512 KB at T = 1024``: the bank's extra bytes (:func:`bank_tables`) in KB."""
    return ", ".join(f"{e / 1024:+,.0f} KB at T = {T}" for T, e in tables["extra"].items())


def heads_words(model: dict) -> str:
    """``SmolLM2 already shares each V across 3 query heads (9 query / 3 KV heads)``, from a real-decoder result's
    ``model`` (``n_heads``, ``n_kv_heads``, ``name``); "" when its heads are not grouped."""
    h, kv = model.get("n_heads"), model.get("n_kv_heads")
    if not h or not kv or kv >= h:
        return ""
    name = str(model.get("name", "the decoder")).split("-")[0]
    return f"{name} already shares each V across {h // kv} query heads ({h} query / {kv} KV heads)"


def tolerance_words(v: Verdict, tol: float = 0.05) -> str:
    """A tolerance claim's verdict said from its words: "beyond the 0.05-nat tolerance (contradicted)", "within the
    0.05-nat tolerance (reproduced)", else its verdict in plain words (undecided, out of regime with its would-be
    verdict)."""
    said = {"contradicted": "beyond", "reproduced": "within"}.get(v.verdict)
    return f"{said} the {tol:g}-nat tolerance ({v.verdict})" if said else verdict_phrase(v)


def q4_sentence(cache: dict[str, float], svformer: Verdict | None, bank: Verdict | None,
                decoder: dict | None, tables: dict | None = None, shared: Verdict | None = None,
                heads: str = "") -> str:
    """Question 4 in words: the toys' cache shares (variant -> fraction of the baseline's KV cache) with the loss
    change of the models trained with that reuse, the real decoder's post-hoc substitutions (chapter 08's q4
    numbers), its adjacent layers sharing one V (``shared``: the tolerance claim, words from its verdict) and the
    V sharing across heads it already has (``heads``: :func:`heads_words`)."""
    out = []
    for name, v in (("SVFormer", svformer), ("the bank of values", bank)):
        key = "svformer" if name == "SVFormer" else "bank"
        if v is None:
            continue
        cost = interval_words(v, "positive" if key == "svformer" else "negative")
        if key == "bank" and tables:
            out.append(f"Trained with it, the bank of values keeps {cache[key]:.0%} of the baseline's KV cache "
                       f"but adds its V tables, so it costs more memory than the baseline at every context the "
                       f"course model runs ({bank_tables_words(tables)}); it pays only once B·T exceeds |V| = "
                       f"{tables['vocab_size']:,}. Its loss: {cost}.")
            continue
        out.append(f"Trained with it, {name} keeps {cache[key]:.0%} of the baseline's KV cache at {cost}.")
    if decoder:
        ok, n, most, total = (decoder[k] for k in ("within_tolerance", "measured", "most_bytes_within",
                                                   "kv_bytes_per_token"))
        out.append(f"Imposed after training on the real decoder, V reuse does not come free: {ok} of {n} "
                   f"cache-saving substitutions stay within 0.05 nats, saving at most {most / total:.1%} of its "
                   f"cache; the last third reading V_1 costs {decoder['V := V_1']['mean']:.2f} nats.")
    if shared is not None:
        out.append(f"Two adjacent layers of its last third sharing one V cost {_cost(shared)}, "
                   f"{tolerance_words(shared)}" + (f"; across heads, {heads}." if heads else "."))
    elif heads:
        out.append(f"Across heads, {heads}.")
    return " ".join(out) or "Not measured yet."


def answer_4(ev: dict) -> dict:
    """Question 4: chapter 06's cache counts with chapters 03-05's losses (toys), chapter 08's price list."""
    toy, dec, da = ev["toys"], ev.get("decoder") or {}, ev.get("decoder_answers")

    L, D = ev.get("toy_shape", (8, 64))
    tables = bank_tables(L, D, ev.get("toy_vocab", 2048))
    base = kv_bytes_per_token(L, D)
    cache = {v: kv_bytes_per_token(L, D, v) / base for v in ("svformer", "bank", "depth_attention")}
    sv, bank, dat = (toy.get(n) for n in ("svformer_cost", "bank_loss", "depth_attention_loss"))
    q4 = da["q4"]["numbers"] if da else None
    dv1, dsh, dvt = (dec.get(n) for n in ("late_v1_reuse_within_tolerance", "late_shared_v_within_tolerance",
                                          "late_v_table_within_tolerance"))
    rows = [["one V for every layer (SVFormer; decoder: V := V_1)",
             f"cache {cache['svformer']:.0%}; loss {stated(sv)}" if sv else "not made yet", NOT_MEASURED,
             f"last third: {stated(dv1)}" if dv1 else NOT_MEASURED,
             f"toy {verdict_phrase(sv) if sv else 'not made'}; decoder "
             + (tolerance_words(dv1) if dv1 else "not made yet"), "03, 06, 08"],
            ["V looked up by token id (bank of values; decoder: per-token table)",
             f"cache {cache['bank']:.0%} plus the tables ({bank_tables_words(tables)} over the baseline); "
             f"loss {stated(bank)}" if bank else "not made yet",
             NOT_MEASURED, f"last third, V table: {stated(dvt)}" if dvt else NOT_MEASURED,
             "toy " + (verdict_phrase(bank) if bank else "not made") + "; decoder "
             + (agreed_words(dec, "late_v_within_tolerance") or verdict_phrase(dvt)),
             "04, 06, 08"],
            ["one V shared by two adjacent layers (decoder: pairs of the last third's layers)", NOT_MEASURED,
             NOT_MEASURED,
             f"last third: {stated(dsh)}" if dsh else NOT_MEASURED,
             verdict_phrase(dsh) + (f"; {heads_words(ev['decoder_model'])}" if ev.get("decoder_model") else ""),
             "08"],
            ["cheap substitutions on the real decoder", NOT_MEASURED, NOT_MEASURED,
             f"{q4['within_tolerance']} of {q4['measured']} within 0.05 nats; at most "
             f"{q4['most_bytes_within']:,} of {q4['kv_bytes_per_token']:,} bytes per token" if q4 else NOT_MEASURED,
             ("no whole third's substitution is free" if q4["thirds_within"] == 0 else
              f"{q4['thirds_within']} whole-third substitutions are free") if q4 else "not made yet", "08"],
            ["values mixed over depth (Depth-Attention)", f"cache {cache['depth_attention']:.0%}; loss "
             f"{stated(dat)}" if dat else "not made yet", NOT_MEASURED, NOT_MEASURED,
             verdict_phrase(dat), "05, 06"]]
    decided = [v for v in (sv, bank) if v is not None and v.counted]   # undecided losses decide nothing
    trained = any(v.verdict == "reproduced" for v in decided) if decided else None
    # The decoder's answer from its judged V-reuse claims (V := V_1, adjacent layers sharing V; tolerance tests):
    # yes if one is within the tolerance, no if both are beyond it, else not decided; the price list (a
    # description) only for a result without them.
    reuse = [v for v in (dv1, dsh) if v is not None]
    if reuse:
        post_hoc = (True if any(v.verdict == "reproduced" for v in reuse) else
                    False if all(v.verdict == "contradicted" for v in reuse) else None)
    else:
        post_hoc = None if q4 is None else q4["thirds_within"] > 0
    where = [(f"the toys trained with V reuse ({ev['corpus']})", trained), ("the real decoder, post hoc", post_hoc)]
    bars = [_bar(f"toy: {n}", v.mean, *v.ci, "toy") for n, v in (("SVFormer", sv), ("bank", bank)) if v]
    bars += [_bar("decoder: V := V_1", dv1.mean, *dv1.ci, "decoder")] if dv1 else []
    return {"n": 4, "rows": rows, "bars": bars, "holds": holds_word(where), "where": where, "cache": cache,
            "sentence": q4_sentence(cache, sv, bank, q4, tables, dsh,
                                    heads_words(ev["decoder_model"]) if ev.get("decoder_model") else "")}


def toy_regime(out_dir: str | Path | None = None, recipe: str = "value-residual") -> str:
    """The toys' regime in words, from the stored ``value-residual`` result on the verdict corpus: model shape,
    corpus, how much of it a run reads, paired seeds; "not made yet" without it."""
    r = load_results_or_none(recipe, corpus=verdict_corpus(), out_dir=out_dir)
    if not r:
        return "not made yet"
    return regime_words(r)


def regime_parts(r: dict) -> dict:
    """One result's regime: ``{"layers", "width", "corpus", "epochs", "seeds"}``; reads both layouts of a stored
    result (configs and epochs_read at the top, or under ``corpus``)."""
    body = r["corpus"] if isinstance(r.get("corpus"), dict) and "configs" in r["corpus"] else r
    m = next(iter(body["configs"].values()))["model"]
    ep = r.get("epochs_read")
    if isinstance(ep, dict):
        ep = ep.get("corpus", ep)
        ep = max(ep.values(), default=float("nan")) if isinstance(ep, dict) else ep
    return {"layers": m["n_layers"], "width": m["d_model"], "corpus": r["text_corpus"]["name"],
            "epochs": float(ep), "seeds": len(r["seeds"])}


def regime_words(r: dict) -> str:
    """One result's regime: ``8 layers × width 64 on kjv (0.60 epochs), 5 paired seeds`` (:func:`regime_parts`)."""
    p = regime_parts(r)
    return (f"{p['layers']} layers × width {p['width']} on {p['corpus']} ({p['epochs']:.2f} epochs), "
            f"{p['seeds']} paired seeds")


def _decoder_rows(dec: dict, judge_fn) -> list[Verdict]:
    """The real decoder's verdicts by today's declarations (``judge_fn``: the recipe's ``verdicts``), or, for a
    result made before them (its tables lack a condition they read), the verdicts it stored."""
    try:
        return judge_fn(dec)
    except KeyError:
        return [Verdict.from_record(r) for r in dec.get("verdicts", [])]


def gather_evidence(out_dir: str | Path | None = None, swaps: dict | None = None, encoder: dict | None = None,
                    char_cfg=None, char_corpus: str | None = None) -> dict:
    """Everything chapter 09 answers from, in one dict: the toys' declared tests on the verdict corpus
    (:func:`~vrs_edu.lab.by_corpus.verdict_corpus`), recomputed from the runs (``toys``: name -> Verdict), their
    regimes (``regimes``: recipe -> :func:`regime_parts` and ``"words"``), the live measurements ``swaps``
    (:func:`toy_swap_evidence`, chapter 02's character model, ``char_cfg`` its config, ``char_corpus`` its corpus)
    and ``encoder`` (:func:`encoder_evidence`, chapter 07), the real decoder's stored ``real-decoder`` result (post hoc: verdicts by
    name, chapter 08's answers, its model and corpus), the norm view, and the production designs' verdicts
    (``designs``: name -> Verdict, chapter 06). A missing file leaves its entry None or empty."""
    toys = {n: load_results_or_none(n, corpus=verdict_corpus(), out_dir=out_dir) for n in TOY_RECIPES}
    dec = load_results_or_none("real-decoder", out_dir=out_dir)
    designs = load_results_or_none("production-designs", corpus=verdict_corpus(), out_dir=out_dir)
    shape, vocab = (8, 64), 2048
    if toys.get("value-residual"):
        m = next(iter(toys["value-residual"]["corpus"]["configs"].values()))["model"]
        shape, vocab = (m["n_layers"], m["d_model"]), m["vocab_size"]
    base = kv_bytes_per_token(*shape)
    regimes = {}
    for name, r in {**toys, "production-designs": designs}.items():
        try:
            regimes[name] = {**regime_parts(r), "words": regime_words(r)}
        except (AttributeError, KeyError, TypeError, StopIteration):   # missing, or a file without its configs
            continue
    return {"toys": _toy_verdicts(toys), "corpus": verdict_corpus(), "swaps": swaps, "encoder": encoder,
            "toy_shape": shape, "toy_vocab": vocab, "regimes": regimes,
            "cache": {v: kv_bytes_per_token(*shape, v) / base for v in ("svformer", "bank", "depth_attention")},
            "char_model": (f"the {char_cfg.n_layers}-layer character-level toy" if char_cfg is not None
                           else "the character-level toy"), "char_corpus": char_corpus,
            "decoder": {r.test.name: r for r in _decoder_rows(dec, decoder_verdicts)} if dec else None,
            "decoder_answers": decoder_answers(dec) if dec else None,
            "decoder_scan": pattern_tolerance(dec) if dec else None,
            "decoder_corpus": (dec.get("text_corpus") or {}).get("name") if dec else None,
            "norms": norm_view_evidence({"encoder": load_results_or_none("encoder-norms", out_dir=out_dir),
                                         "decoder": load_results_or_none("decoder-norms", out_dir=out_dir)}),
            "toy_descriptions": {n: d for name, r in toys.items() if r and name == "bank-of-values"
                                 for n, d in _descriptions(r, name).items()},
            "decoder_model": dec.get("model") if dec else None,
            "parameter_counts": (toys.get("depth-mixers") or {}).get("parameter_counts"),
            "designs": {r.test.name: r for r in design_verdicts(designs)} if designs else {}}


def course_answers(out_dir: str | Path | None = None, swaps: dict | None = None,
                   encoder: dict | None = None, ev: dict | None = None) -> list[dict]:
    """The article's four questions in its order (:data:`ARTICLE_QUESTIONS`), each ``{"n", "question", "rows",
    "holds", "where", "sentence"}``: ``rows`` one per instrument, the cells of :data:`COLUMNS` (toys, encoder,
    decoder, the verdict in words, chapters), ``where`` the regimes judged ((regime, holds?), None = undecided).

    Read from ``ev`` (:func:`gather_evidence`), or gathered here from ``out_dir`` with ``swaps`` and ``encoder``.
    A missing file leaves its cells "not made yet"."""
    ev = ev if ev is not None else gather_evidence(out_dir, swaps, encoder)
    out = [f(ev) for f in (answer_1, answer_2, answer_3, answer_4)]
    for a in out:
        a["question"] = ARTICLE_QUESTIONS[a["n"]]
    return out
