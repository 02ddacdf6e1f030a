"""Chapter 09 as an argument: for each of the article's four questions, the strongest number that speaks *for* its
conclusion ("QK decides where to look, V is what is moved: attention seen through QK alone is only half") and the
strongest that speaks *against* it, each with the model, corpus and regime it holds in, said in plain sentences.
Question 1 asks *how much*, so it also gets its own measure: what the deep layers' fresh pattern is worth.

A number is an :class:`Evidence`: a loss change in nats with its 95 % interval, the verdict of its declared test
(None for a description) and which way it must point to speak for the conclusion (``favours``). Its side is read from
the number itself (:func:`side`), never typed, so the words of :func:`evidence_sentence` follow its sign, its size and
its verdict. :func:`build_argument` gathers the candidates from chapter 09's evidence
(:func:`~vrs_edu.chapters.ch09_the_four_answers.answers.gather_evidence`) and keeps the strongest of each side
(:func:`strongest`); :func:`answer_line` says the question's answer in one line.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from vrs_edu.lab.results import DECIDED, Verdict

SHORT_QUESTIONS = {1: "a deep layer's need for its fresh QK pattern", 2: "early information kept through V",
                   3: "a selective read over depth", 4: "gains from reusing V"}
CORPUS_WORDS = {"kjv": "the King James Bible", "python-docs": "the Python documentation",
                "pydoc_data.topics": "the Python documentation"}
CORPUS_SHORT = {"kjv": "KJV", "python-docs": "Python docs", "pydoc_data.topics": "Python docs"}
SMALL, LARGE = 0.05, 1.0   # nats: the course's tolerance, and a change as large as a whole nat


@dataclass(frozen=True)
class Evidence:
    """One number of the argument: a loss change (or a difference of two) in ``unit`` with its 95 % interval.

    ``subject`` and the verb phrases ``pos`` / ``neg`` (for a positive / negative mean, with ``{amount}`` where the
    size goes) say what was measured; ``verdict`` is its declared test's verdict (None: a description, no test) and
    ``claim`` that test's claim in words. ``favours``: which number speaks *for* the conclusion, ``"positive"`` (a
    mean above 0), ``"negative"`` (below 0) or ``"cheap"`` (a cost below ``margin``); ``"measure"`` for a number that
    takes no side but answers the question's "how much" (question 1: what the fresh pattern is worth). ``meaning``
    holds, per side, why a number on that side counts for or against (no numbers in it; a measure's keys are
    ``"needed"`` and ``"spare"``: a cost above or below ``margin``); ``point`` the side's gist in a few words, for
    the one-line answer. ``model``, ``corpus``, ``regime``: where the number holds; ``where`` a short form."""

    question: int
    label: str
    subject: str
    pos: str
    neg: str
    mean: float
    lo: float
    hi: float
    verdict: str | None
    favours: str
    model: str
    corpus: str
    regime: str
    where: str
    chapter: str
    meaning: dict = field(default_factory=dict)
    point: dict = field(default_factory=dict)
    claim: str | None = None
    margin: float = SMALL
    unit: str = "nats"


def side(e: Evidence) -> str:
    """``"for"`` or ``"against"`` the conclusion, from the number: its sign against ``favours`` ("cheap": the mean
    below ``margin``); a *negligible* verdict on a sign claim counts against (the effect is too small to matter).
    A measure (``favours == "measure"``) takes no side: ``"measure"``."""
    if e.favours == "measure":
        return "measure"
    if e.favours == "cheap":
        return "for" if e.mean < e.margin else "against"
    if e.verdict == "negligible":
        return "against"
    up = e.mean > 0
    return "for" if up == (e.favours == "positive") else "against"


def firm(e: Evidence) -> bool:
    """Whether the number decides its side: a decided verdict (reproduced, contradicted, negligible), or, for a
    description (no declared test: ``verdict`` None), a 95 % interval wholly on its side of the line (the
    tolerance for a cost read as "cheap", else 0). A declared test that is undecided never counts as firm, even
    where its unadjusted interval clears a line: the verdict, with its Holm correction, is what was declared."""
    if e.verdict in DECIDED:
        return True
    if e.verdict is not None:
        return False
    line = e.margin if e.favours in ("cheap", "measure") else 0.0
    return e.hi < line or e.lo > line


def strongest(candidates: list[Evidence], which: str) -> Evidence | None:
    """The strongest number on side ``which`` ("for", "against" or "measure"): a firm one before the others, then a decided
    verdict before an undecided one, then the largest size; None when no candidate is on that side."""
    on_side = [e for e in candidates if side(e) == which]
    return max(on_side, key=lambda e: (firm(e), e.verdict in DECIDED, abs(e.mean)), default=None)


def amount(x: float, unit: str = "nats", small: float = SMALL, large: float = LARGE) -> str:
    """The size of a change in words: ``only 0.016 nats`` (below ``small``; ``small=0`` never says "only", for a
    gain that the sentence does not belittle), ``0.58 nats``, ``as much as 5.93 nats`` (``large`` or more); two
    decimals from 0.1 on, three below."""
    a = abs(x)
    num = f"{a:.3f}" if a < 0.1 else f"{a:.2f}"
    text = f"{num} {unit}".strip()
    return f"only {text}" if a < small else f"as much as {text}" if a >= large else text


def verdict_clause(verdict: str | None, claim: str | None = None, margin: float | None = None) -> str:
    """What a verdict says, in words a learner can quote: a reproduced or contradicted test names its claim ("the
    claim "…" holds (reproduced)"), a negligible one its margin, an undecided one that noise could explain it."""
    named = f"the claim \"{claim}\"" if claim else "its declared test's claim"
    if verdict is None:
        return "a description: no test was declared on it"
    if verdict == "reproduced":
        return f"{named} holds beyond noise (reproduced)"
    if verdict == "contradicted":
        return f"{named} fails beyond noise (contradicted)"
    if verdict == "negligible":
        inside = f" ±{margin:g} nats" if margin is not None else " its smallest effect of interest"
        return f"too small to matter: its interval lies inside{inside} (negligible)"
    if verdict == "undecided":
        return "but noise could explain it once the number of tests is allowed for (undecided)"
    if verdict == "out of regime":
        return "not judged: a premise of its test failed (out of regime)"
    return verdict


def _num(x: float, digits: int) -> str:
    return f"{x:+.{digits}f}"


def evidence_sentence(e: Evidence) -> str:
    """One quotable sentence: where the number holds, what was measured, its size in words (from its sign and
    size), its interval and its verdict; then, when the number decides its side (:func:`firm`), why it counts for
    or against (its side's ``meaning``): an undecided number is not read as the reason it would give."""
    d = 3 if max(abs(e.lo), abs(e.hi)) < 1 else 2       # one precision for both ends
    verb = (e.pos if e.mean >= 0 else e.neg).format(amount=amount(e.mean, e.unit, small_for(e), LARGE))
    head = (f"In {e.model} ({e.corpus}; {e.regime}), {e.subject} {verb} "
            f"(95 % interval {_num(e.lo, d)} to {_num(e.hi, d)} {e.unit}): "
            f"{verdict_clause(e.verdict, e.claim, e.margin if e.verdict == 'negligible' else None)}.")
    why = e.meaning.get(_reading(e), "") if firm(e) else ""
    return head + (f" {why}" if why else "")


def _reading(e: Evidence) -> str:
    """Which of ``meaning``'s texts a number gives: its side, or for a measure whether the cost is above its margin."""
    if side(e) == "measure":
        return "needed" if e.mean >= e.margin else "spare"
    return side(e)


def small_for(e: Evidence) -> float:
    """The size below which a change is said with "only": a cost, compared with the test's tolerance (a cost read as
    cheap, or a measure) or the course's 0.05; never a gain (a loss lowered), which "only" would belittle."""
    if e.mean < 0:
        return 0.0
    return e.margin if e.favours in ("cheap", "measure") else SMALL


ANSWER_WORDS = {(True, True): "Partly", (True, False): "Yes", (False, True): "No", (False, False): "Not decided"}
ANSWER_WORDS_Q1 = {**ANSWER_WORDS, (True, True): "Yes, both halves count"}
# Question 3 asks whether the stream *can be designed* as a selective read: one firm design answers it, but not
# every design tried does (chapter 05's "Partly" counts them), so the word says so.
ANSWER_WORDS_Q3 = {**ANSWER_WORDS, (True, False): "Yes, it can be designed (not every design tried does it)"}


def measure_words(m: Evidence | None) -> tuple[str, str]:
    """Question 1's "how much" from its measure: ``("A lot", "the deep layers need their fresh pattern (another
    text's patterns in the last third cost 1.24 nats; where)")`` for a firm cost above the margin, ``("Little", …)`` for a firm one below,
    ``("Not decided", …)`` otherwise; ``("", "")`` without a measure."""
    if m is None:
        return "", ""
    if not firm(m):
        return "Not decided", f"what the fresh pattern is worth is not told apart from noise ({m.where})"
    reading = _reading(m)
    cost = f"{m.point['cost']} {amount(m.mean, m.unit, 0.0)}; {m.where}"
    return ("A lot" if reading == "needed" else "Little"), f"{m.point[reading]} ({cost})"


def answer_line(n: int, pro: Evidence | None, con: Evidence | None, measure: Evidence | None = None) -> str:
    """Question ``n``'s answer in one line: a word from which sides are firm (Yes, No, Partly, Not decided), then
    each side's gist with where it holds, or that the side's strongest number is not told apart from noise.
    With a ``measure`` (question 1 asks *how much*), its size comes first ("A lot: …") and the sides follow."""
    words = {1: ANSWER_WORDS_Q1, 3: ANSWER_WORDS_Q3}.get(n, ANSWER_WORDS)[(pro is not None and firm(pro),
                                                            con is not None and firm(con))]

    def part(e: Evidence | None, which: str) -> str:
        if e is None:
            return f"nothing measured speaks {which} it"
        if not firm(e):
            return f"the strongest number {which} it is not told apart from noise ({e.where})"
        return f"{e.point[which]} ({e.where})"

    how_much, measured = measure_words(measure)
    if how_much:
        v_too = ", and what they move counts more" if pro is not None and firm(pro) and side(pro) == "for" else ""
        return f"{how_much}{v_too}: {measured}; {part(pro, 'for')}; {part(con, 'against')}."
    return f"{words}: {part(pro, 'for')}; {part(con, 'against')}."


def argument_rows(candidates: dict[int, list[Evidence]]) -> list[dict]:
    """``[{"n", "for", "against", "measure", "answer"}]`` for questions 1-4: each side's strongest number
    (:func:`strongest`), the question's own measure if it has one (question 1), and the one-line answer."""
    out = []
    for n in (1, 2, 3, 4):
        pro, con, measure = (strongest(candidates.get(n, []), w) for w in ("for", "against", "measure"))
        out.append({"n": n, "for": pro, "against": con, "measure": measure,
                    "answer": answer_line(n, pro, con, measure)})
    return out


def side_sentences(row: dict) -> list[str]:
    """A question's measure, if it has one, as **How much.** …, then its two sides as Markdown paragraphs:
    **For.** … and **Against.** …"""
    out = [f"**How much.** {evidence_sentence(row['measure'])}"] if row.get("measure") else []
    for which in ("for", "against"):
        e = row[which]
        text = evidence_sentence(e) if e else f"Nothing the course measured speaks {which} the conclusion here."
        out.append(f"**{which.capitalize()}.** {text}")
    return out


def mhc_sentence(loss: Verdict | None, matched: Verdict | None, regime: dict | None) -> str:
    """mHC (manifold-constrained hyper-connections: four residual streams mixed by a learned doubly-stochastic
    matrix, shipped in DeepSeek-V4) against the single residual stream and against the baseline with as many
    parameters in its MLPs, words from each test's sign and verdict; ``regime``: the run's
    :func:`~vrs_edu.chapters.ch09_the_four_answers.answers.regime_parts`. "" without the production-designs
    result."""
    if loss is None:
        return ""
    where = (f"the {regime['layers']}-layer toy on {_corpus(regime['corpus'])}, {regime['epochs']:.2f} epochs, "
             f"{regime['seeds']} paired seeds" if regime else "the toy")
    verb = "lowers" if loss.mean < 0 else "raises"
    out = (f"A production design reads depth selectively too: mHC (manifold-constrained hyper-connections, four "
           f"residual streams mixed by a learned doubly-stochastic matrix, shipped in DeepSeek-V4) {verb} the toy's "
           f"loss by {amount(loss.mean, small=small_gain(loss.mean))} against the single residual stream ({where}; "
           f"{verdict_clause(loss.verdict, 'mHC lowers the loss')})")
    if matched is not None:
        beats = "beats" if matched.mean < 0 else "does not beat"
        out += (f", and it {beats} a control with as many parameters in its MLPs by "
                f"{amount(matched.mean, small=small_gain(matched.mean))} "
                f"({matched.verdict})")
    return out + "."


def small_gain(x: float) -> float:
    """:func:`amount`'s ``small`` for a loss change: a gain (below 0) is never said with "only"."""
    return 0.0 if x < 0 else SMALL


# --- the candidates, from chapter 09's evidence -----------------------------------------------------------------

def _from(v: Verdict) -> dict:
    return {"mean": v.mean, "lo": v.ci[0], "hi": v.ci[1], "verdict": v.verdict}


def _corpus(name: str | None) -> str:
    return CORPUS_WORDS.get(name or "", name or "an unnamed corpus")


def _short(name: str | None) -> str:
    return CORPUS_SHORT.get(name or "", name or "?")


def build_candidates(ev: dict) -> dict[int, list[Evidence]]:
    """Every number that can speak for or against each question, from chapter 09's evidence (``ev``: see
    :func:`~vrs_edu.chapters.ch09_the_four_answers.answers.gather_evidence`): the toys' declared tests recomputed
    on the verdict corpus, chapter 02's swaps on the character model, the real decoder's stored verdicts and
    numbers. A number whose result is missing is left out."""
    toy, dec = ev["toys"], ev.get("decoder") or {}
    reg = ev.get("regimes", {})
    model = ev.get("decoder_model") or {}
    d_model = (f"the {model.get('n_layers', '?')}-layer decoder {str(model.get('name', 'SmolLM2')).split(' ')[0]}"
               if model else "the real decoder")
    d_corpus = _corpus(ev.get("decoder_corpus"))
    kjv = _corpus(ev["corpus"])
    dl = f"{d_model.split(' ')[-1].split('-')[0]}, post hoc"   # figure labels
    tl = f"toy on {_short(ev['corpus'])}"
    c: dict[int, list[Evidence]] = {1: [], 2: [], 3: [], 4: []}

    def toy_model(recipe: str) -> str:
        r = reg.get(recipe)
        return f"the {r['layers']}-layer × width {r['width']} word-level toy" if r else "the word-level toy"

    def toy_regime(recipe: str, how: str) -> str:
        r = reg.get(recipe)
        return f"{how}, {r['epochs']:.2f} epochs, {r['seeds']} paired seeds" if r else how

    # Question 1: what a deep layer moves (V) against where it looks (its fresh pattern)
    dv = dec.get("late_value_swap_costs_more_than_pattern_swap")
    q1_meaning = {"for": "Losing what the layers move costs more than losing where they look: V carries at least "
                         "half of what attention does, which QK alone does not see.",
                  "against": "Losing where the layers look costs more than losing what they move: here the pattern "
                             "carries most of what attention does."}
    q1_point = {"for": "what deep layers move (V) costs more to lose than where they look",
                "against": "where deep layers look costs more to lose than what they move"}
    if dv is not None:
        c[1].append(Evidence(1, f"{dl}: value swap − pattern swap", "swapping in another text's values",
                             "costs {amount} more than swapping in its pattern",
                             "costs {amount} less than swapping in its pattern", **_from(dv), favours="positive",
                             model=d_model, corpus=d_corpus, regime="post hoc, its last third swapped together",
                             where=f"{d_model.split(' ')[-1]}, post hoc", chapter="08", meaning=q1_meaning,
                             point=q1_point, claim="the value swap costs more than the pattern swap"))
    sw = ev.get("swaps")
    if sw is not None:
        d, half = sw["last"]
        c[1].append(Evidence(1, f"character toy on {_short(ev.get('char_corpus'))}: value − pattern swap",
                             "at its last layer, swapping in another text's values",
                             "costs {amount} more than swapping in its pattern",
                             "costs {amount} less than swapping in its pattern", d, d - half, d + half, None,
                             "positive", model=ev.get("char_model", "the character-level toy"),
                             corpus=_corpus(ev.get("char_corpus")), regime="one trained model, validation batches",
                             where=f"the character-level toy on {_corpus(ev.get('char_corpus'))}", chapter="02",
                             meaning=q1_meaning, point=q1_point))
    # What the fresh pattern is worth: question 1's "how much", not a side (needing the pattern and V mattering
    # more are both what the conclusion says: QK is half, not nothing).
    stand_in = {"spare": "A stand-in pattern would do: the deep layers hardly need their fresh QK pattern.",
                "needed": "The fresh pattern cannot be dropped: where a deep layer looks matters, so QK is a "
                          "real half, not a spare one."}
    for name, what in (("late_pattern_swap_within_tolerance", "another text's"),
                       ("late_previous_pattern_within_tolerance", "the previous layer's")):
        v = dec.get(name)
        # "cost" names the stand-in, so the number is not read as another chapter's (chapter 08's uniform one)
        stand_point = {"spare": "the deep layers hardly need their fresh pattern",
                       "needed": "the deep layers need their fresh pattern",
                       "cost": f"{what} patterns in the last third cost"}
        if v is not None:
            c[1].append(Evidence(1, f"{dl}: {what} pattern", f"giving its whole last third {what} patterns",
                                 "costs {amount}", "lowers the loss by {amount}", **_from(v), favours="measure",
                                 model=d_model, corpus=d_corpus, regime="post hoc, ten layers swapped together",
                                 where=f"{d_model.split(' ')[-1]}, post hoc", chapter="08", meaning=stand_in,
                                 point=stand_point, claim="a stand-in pattern costs within 0.05 nats"))
    # Question 2: early information (token identity) kept through V
    for name, subject in (("bank_loss", "looking V up by token id in a trained table (the bank of values)"),
                          ("substitute_loss", "feeding the last third's V from the token embedding x0")):
        v = toy.get(name)
        if v is not None:
            c[2].append(Evidence(2, f"{tl}: {name.split('_')[0]} V, trained", subject, "raises the loss by {amount}",
                                 "lowers the loss by {amount}", **_from(v),
                                 favours="negative" if name == "bank_loss" else "cheap",
                                 model=toy_model("bank-of-values"), corpus=kjv,
                                 regime=toy_regime("bank-of-values", "trained that way from the start"),
                                 where=f"the word-level toy on {kjv}, trained with it", chapter="04",
                                 margin=v.test.margin if v.test.margin is not None else SMALL,
                                 meaning={"for": "Trained with a path for it, a model can keep early information, "
                                                 "token identity, in its deep V at no cost.",
                                          "against": "Even trained with the path, keeping token identity in V "
                                                     "costs loss."},
                                 point={"for": "trained with a path for it, a model keeps token identity in V",
                                        "against": "token identity in V costs loss even when trained in"},
                                 claim=v.test.claim.split(" (")[0]))
    tv = dec.get("late_v_table_beats_q_table")
    if tv is not None:
        c[2].append(Evidence(2, f"{dl}: V table − Q table", "a per-token table in place of V",
                             "costs {amount} more than one in place of Q", "costs {amount} less than one in place of Q",
                             **_from(tv), favours="negative", model=d_model, corpus=d_corpus,
                             regime="post hoc, in its last third", where=f"{d_model.split(' ')[-1]}, post hoc",
                             chapter="08",
                             meaning={"for": "A table of token identities, the earliest information there is, "
                                             "stands in for V more easily than for Q: deep V keeps mostly early "
                                             "information.",
                                      "against": "A per-token table is token identity, the earliest information "
                                                 "there is: if deep V kept mostly that, the table would cost little "
                                                 "in V's place. It costs more there than in Q's, so this decoder's "
                                                 "deep V carries what the context added. That V matters most here "
                                                 "is why this counts against question 2: V matters as a carrier of "
                                                 "context, not of early information."},
                             point={"for": "a standard decoder's deep V is mostly token identity",
                                    "against": "a standard decoder's deep V carries context, not token identity"},
                             claim="V tolerates a per-token table better than Q"))
    # Question 3: a selective read over depth against the running sum
    q3_meaning = {"for": "A read that chooses which layers to take beats the plain running sum: the stream can be "
                         "designed as a selective read.",
                  "against": "The selective read does no better than the plain running sum."}
    q3_point = {"for": "a selective read over depth beats the running sum",
                "against": "ShortSWA over depth, the design the question names, shows no gain"}
    for v in toy.values():
        if v.test.family != "ch05" and v.test.name != "depth_attention_loss":
            continue
        name = v.test.name.removesuffix("_loss")
        recipe = "v-over-depth" if name == "depth_attention" else "depth-mixers"
        point = dict(q3_point) if name.startswith("shortswa") else {
            "for": q3_point["for"], "against": f"{name} does no better than the running sum"}
        c[3].append(Evidence(3, f"{tl}: {name} − residual", f"the depth read {name}",
                             "raises the loss by {amount} against the running sum",
                             "lowers the loss by {amount} against the running sum", **_from(v), favours="negative",
                             model=toy_model(recipe), corpus=kjv, regime=toy_regime(recipe, "trained from the start"),
                             where=f"the word-level toy on {kjv}", chapter="05", meaning=q3_meaning, point=point,
                             claim=f"{name} lowers the loss"))
    # Question 4: efficiency from reusing V
    cache = ev.get("cache", {})
    for name, design in (("svformer_cost", "svformer"),):
        v = toy.get(name)
        if v is not None:
            share = f", keeping {cache[design]:.0%} of the KV cache," if design in cache else ""
            c[4].append(Evidence(4, f"{tl}: SVFormer, trained", f"one V for every layer (SVFormer){share}",
                                 "raises the loss by {amount}", "lowers the loss by {amount}", **_from(v),
                                 favours="cheap", model=toy_model("value-residual"), corpus=kjv,
                                 regime=toy_regime("value-residual", "trained that way from the start"),
                                 where=f"the word-level toy on {kjv}, trained with it", chapter="03, 06",
                                 meaning={"for": "Reusing V saves cache at no cost once the model is trained with "
                                                 "the reuse.",
                                          "against": "Reusing V costs loss even when the model is trained with it."},
                                 point={"for": "trained with it, one V for every layer saves cache at no cost",
                                        "against": "reusing V costs loss even when trained in"},
                                 claim="SVFormer costs loss"))
    for name, what, label in (("late_v1_reuse_within_tolerance", "reading the first layer's V (V := V_1)", "V := V_1"),
                              ("late_shared_v_within_tolerance", "sharing one V between two adjacent layers",
                               "one V for two layers")):
        v = dec.get(name)
        if v is not None:
            c[4].append(Evidence(4, f"{dl}: {label}", f"{what} in its last third", "costs {amount}",
                                 "lowers the loss by {amount}", **_from(v), favours="cheap", model=d_model,
                                 corpus=d_corpus, regime="post hoc, imposed after training",
                                 where=f"{d_model.split(' ')[-1]}, post hoc", chapter="08",
                                 meaning={"for": "Even imposed on a model trained without it, the reuse is free.",
                                          "against": "Imposed on a model trained without it, the reuse is far from "
                                                     "free: the savings need a model trained with them."},
                                 point={"for": "even imposed after training, V reuse is free",
                                        "against": "imposed after training, V reuse is far from free"},
                                 claim="the reuse costs within 0.05 nats"))
    return c


def footing_sentence(rows: list[dict]) -> str:
    """What the figure's numbers rest on: how many are decided by their declared test, how many are undecided or
    out of regime, how many are descriptions (no test), and how many come from a real model measured post hoc."""
    es = [r[w] for r in rows for w in ("measure", "for", "against") if r.get(w) is not None]
    decided = sum(e.verdict in DECIDED for e in es)
    described = sum(e.verdict is None for e in es)
    post_hoc = sum("post hoc" in e.regime for e in es)
    return (f"Of the {len(es)} numbers, {decided} are decided by their declared test, "
            f"{len(es) - decided - described} {'is' if len(es) - decided - described == 1 else 'are'} not "
            f"(undecided or out of regime) and "
            + ("none is a description" if described == 0 else "1 is a description" if described == 1 else
               f"{described} are descriptions") + f" with no test; {post_hoc} come from "
            f"the real decoder measured post hoc (one model, one corpus, one run: its evaluation sequences are the "
            f"unit of replication), the others from toys trained here (seeds are the unit).")


def _cost_words(x: float) -> str:
    return f"costs {amount(x)}" if x >= 0 else f"lowers the loss by {amount(x)}"


def capstone_sentence(layer: int, n_layers: int, uniform: float, pattern: float, values: float) -> str:
    """The exercise's answer for one layer of a trained model, from its three loss changes (nats): whether the
    layer needs its own pattern (a uniform one costs more than the course's 0.05-nat tolerance), whether its values
    matter more than its pattern (the value swap costs more than the pattern swap), and what that answers."""
    where = f"layer {layer}, the last of {n_layers}" if layer == n_layers - 1 else f"layer {layer} of {n_layers}"
    needs = uniform > SMALL
    v_more = values > pattern
    out = (f"At {where}, replacing the pattern by a uniform one {_cost_words(uniform)}, by another text's "
           f"{_cost_words(pattern)}, and replacing the values by another text's {_cost_words(values)}. ")
    out += ("The layer needs its own pattern (looking nowhere in particular costs more than 0.05 nats)"
            if needs else "The layer hardly needs its own pattern (looking nowhere in particular costs at most "
            "0.05 nats)")
    out += (", and what it moves matters more than where it looks (the value swap costs more than the pattern "
            "swap). " if v_more else ", and where it looks matters more than what it moves (the pattern swap "
            "costs at least as much as the value swap). ")
    answer = ("both halves count, and QK alone would see the smaller one" if needs and v_more else
              "the pattern carries more here: QK alone sees more than half" if needs else
              "V carries what matters; the pattern could be a stand-in" if v_more else
              "neither half costs much at this layer")
    return out + f"For this model and layer, question 1's answer: {answer}."


def closing(rows: list[dict]) -> str:
    """The chapter's closing paragraph from the four answers: the article's conclusion said back with what each
    side's strongest numbers decided, and which questions depend on the regime (a firm number on each side)."""
    both = [r["n"] for r in rows if r["for"] is not None and r["against"] is not None
            and firm(r["for"]) and firm(r["against"])]
    only_for = [r["n"] for r in rows if r["for"] is not None and firm(r["for"]) and r["n"] not in both]
    only_against = [r["n"] for r in rows if r["against"] is not None and firm(r["against"]) and r["n"] not in both]

    def qs(ns: list[int]) -> str:
        return ("question " if len(ns) == 1 else "questions ") + " and ".join(map(str, ns))

    out = ["Does \"QK decides where to look, V is what is moved; QK alone sees only half\" hold?"]
    first = rows[0]
    m = first.get("measure")
    if 1 in only_for and m is not None and firm(m) and _reading(m) == "needed":
        only_for.remove(1)
        out.append("In question 1 both halves count, as it says: the deep layers need their fresh pattern, and "
                   "losing what they move costs more still.")
    if only_for:
        out.append(f"It has firm support and no firm number against it in {qs(only_for)}.")
    if only_against:
        out.append(f"It has only firm numbers against it in {qs(only_against)}.")
    if both:
        out.append(f"In {qs(both)} both sides hold firm numbers, each in its own model and regime: the answer "
                   "depends on which model, trained how, is asked.")
    return " ".join(out)
