"""Chapter 05's computed sentences: the effect under its first figure, the routers' line, and "The answer".

Each function chooses its words from the sign, the size and the verdict of the numbers it states, so that a
sentence cannot say "Yes" where its own numbers say no, or "lowers the loss by -0.02". The inputs are the verdict
rows of :mod:`vrs_edu.lab.recipes.depth_mixers` and :mod:`vrs_edu.lab.recipes.v_over_depth` (objects with
``test.name``, ``mean``, ``ci``, ``verdict``, ``reason`` and ``interval()``) or the effect dicts of
:func:`vrs_edu.lab.recipes.v_over_depth.loss_effects` (``name``, ``mean``, ``ci``, ``verdict``). Losses are final
validation losses in nats, a variant's minus the residual's, paired by seed (< 0: the variant is better).
"""
from __future__ import annotations

SHORTSWA = "shortswa"   # the variant names of ShortSWA over depth start with it (shortswa-k2, -k4, -full)


def loss_change(mean: float, ci, verdict: str) -> str:
    """``"lowers the loss by 0.023 nats (reproduced)"``: the direction in words from the sign of ``mean``, its size
    unsigned, then the verdict; "leaves the loss unchanged" for a mean of exactly 0. ``ci`` is accepted for the
    callers' symmetry but not printed: the visible sentences leave intervals to "How sure are we?"."""
    verb = ("lowers the loss by" if mean < 0 else "raises the loss by" if mean > 0
            else "leaves the loss unchanged,")
    size = f" {abs(mean):.3f} nats" if mean != 0 else ""
    return f"{verb}{size} ({verdict})"


DECIDED = "decided once we allow for the number of tests"


def _names(items) -> str:
    items = list(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else (items[0] if items else "none")


def effect_sentence(effects: list[dict]) -> str:
    """The sentence under chapter 05's first figure: how many reads lowered the loss (decided), the largest win,
    ShortSWA over depth's own result (the read the chapter's question names) and any decided loss.

    Raises ValueError when ``effects`` holds no claim (only checks)."""
    claims = [e for e in effects if not e["verdict"].startswith("check")]
    if not claims:
        raise ValueError("effects: expected at least one claim (a verdict not starting with 'check'), got none")
    won = sorted((e for e in claims if e["verdict"] == "reproduced"), key=lambda e: e["mean"])
    lost = [e["name"] for e in claims if e["verdict"] == "contradicted"]
    swa = [e for e in claims if e["name"].startswith(SHORTSWA)]
    da = " counting Depth-Attention," if any(e["name"] == "depth_attention" for e in claims) else ""
    out = (f"{len(won)} of the {len(claims)} reads over depth,{da} lower the loss below the residual sum's, "
           f"{DECIDED}")
    out += (f"; the most, {won[0]['name']}, " + loss_change(won[0]["mean"], won[0]["ci"], "reproduced")
            if won else "")
    if swa:
        swa_won = [e["name"] for e in swa if e["verdict"] == "reproduced"]
        changes = "; ".join(f"{e['name']} {e['mean']:+.3f} nats, {e['verdict']}" for e in swa)
        out += (f". ShortSWA over depth, the read this chapter's question names, wins with "
                f"{_names(swa_won)} ({changes})" if swa_won else
                f". ShortSWA over depth, the read this chapter's question names, is not among them ({changes})")
    out += f". {_names(lost)} raise{'s' if len(lost) == 1 else ''} the loss, decided." if lost \
        else ". None raises it, decided."
    return out


def premise_sentence(premise: float, ceiling: float, margin: float, chapter04_threshold: float) -> str:
    """What the routers' premise asks and how it differs from chapter 04's: the baseline's deep-input x0-R²
    (``premise``) must stay below the declared ``ceiling``, so that part of the inputs is context and V has room to
    read x0 more by the tests' ``margin``; chapter 04's ``deep_context`` asks for inputs that are mostly context
    (x0-R² below ``chapter04_threshold``). "holds" or "fails" follows the number."""
    holds = premise < ceiling
    return (f"The tests need a premise, fixed before the run: the baseline's deep inputs must carry some context "
            f"beyond token identity, an x0-R² below {ceiling:g} (at least {1 - ceiling:.0%} of their variance "
            f"something else), or V has no room to read x0 more by the tests' margin of {margin:g}. Here they are "
            f"{premise:.3f} token identity, {1 - premise:.1%} context: the premise "
            f"**{'holds' if holds else 'fails'}**. Chapter 04's premise (`deep_context`) asks more, of its own "
            f"models: inputs that are *mostly* context, an x0-R² below {chapter04_threshold:g}, because it asks "
            f"whether deep layers need to re-read x0 at all; this one asks only for room to measure a difference. "
            f"(The recipe names it `context_share`, but the number it reads is the x0-R² itself.)")


def router_sentence(primary: list) -> str:
    """The routers' line: in how many routers V's deep input carries more token identity (x0-R²) than the larger
    of Q's and K's, each router's mean and interval, and the verdicts (or that none was judged). Raises
    ValueError on an empty ``primary``."""
    if not primary:
        raise ValueError("primary: expected the routers' verdict rows, got none")

    def name(r):
        return r.test.name.removesuffix("_v_reads_x0_more_than_qk")
    above = [name(r) for r in primary if r.mean > 0]
    each = "; ".join(f"{name(r)} {r.interval()}" for r in primary)
    out = (f"V's input carries more token identity than the larger of Q's and K's in {len(above)} of the "
           f"{len(primary)} routers, on average over the deep layers and seeds (x0-R² of V − max(Q, K): {each}).")
    if all(r.verdict == "out of regime" for r in primary):
        return out + " None is judged, since the premise fails: the intervals are measurements, not evidence."
    return out + " Verdicts, allowing for the number of tests: " + "; ".join(f"{name(r)} {r.verdict}" for r in primary) + "."


def answer_opening(loss_rows: list) -> str:
    """"Yes", "Partly" or "Not shown", from the loss verdicts (family ``ch05``): Yes only when a ShortSWA-over-depth
    variant, the read the question names, lowers the loss (reproduced); Partly when only other reads do; Not
    shown when none does."""
    won = [r.test.name.removesuffix("_loss") for r in loss_rows if r.verdict == "reproduced"]
    if any(n.startswith(SHORTSWA) for n in won):
        return "Yes"
    return "Partly" if won else "Not shown"


def answer_paragraph(loss_rows: list, controls: list, depth_attention: list, stream_check, routers: list,
                     stream_verdicts: list[str], regime: str) -> str:
    """Chapter 05's closing answer to "can the residual stream be a selective read over depth (ShortSWA over
    depth)?": :func:`answer_opening`, the best read and its control, ShortSWA over depth's own result,
    Depth-Attention against the baseline and Attention Residuals (``depth_attention``: those two rows), and why
    the per-stream question stays open (``stream_check``: the instrument's "no worse" check; ``routers``: the
    routers' primary rows; ``stream_verdicts``: the stream claims' verdicts). ``regime``: the words that say
    which models, steps and corpus the verdicts hold for. Raises ValueError on empty ``loss_rows``."""
    if not loss_rows:
        raise ValueError("loss_rows: expected the mixers' loss verdicts (family ch05), got none")
    d_res, d_ar = depth_attention
    reads = list(loss_rows) + [d_res]       # the same set as the effect sentence: every read, Depth-Attention too
    won = sorted((r for r in reads if r.verdict == "reproduced"), key=lambda r: r.mean)
    swa = [r for r in loss_rows if r.test.name.startswith(SHORTSWA)]
    opening = answer_opening(loss_rows)
    out = f"**{opening}**, in this regime — {regime}. "
    if won:
        best = won[0]
        name = best.test.name.removesuffix("_loss")
        out += (f"{len(won)} of the {len(reads)} reads over depth, counting Depth-Attention, lower the loss below "
                f"the residual sum's, {DECIDED}; the most, {name}, " + loss_change(best.mean, best.ci, best.verdict))
        ctrl = {r.test.name.removesuffix("_beats_scalar_gain"): r for r in controls}.get(name)
        if ctrl is not None:
            out += (f", and against the scalar-gain control {ctrl.mean:+.3f} nats ({ctrl.verdict}): "
                    + ("the win needs the read over older layers, not only a gain."
                       if ctrl.verdict == "reproduced" else "a learned gain alone may explain it."))
        else:
            out += "."
    else:
        out += (f"None of the {len(reads)} reads over depth, counting Depth-Attention, lowers the loss below the "
                f"residual sum's, {DECIDED}.")
    if swa:
        out += (" ShortSWA over depth itself: " + "; ".join(
            f"{r.test.name.removesuffix('_loss')} {r.mean:+.3f} nats ({r.verdict})" for r in swa) + ".")
    out += (f" Depth-Attention, whose query reads V over depth at the baseline's KV cache, "
            + loss_change(d_res.mean, d_res.ci, d_res.verdict)
            + f"; against Attention Residuals {d_ar.mean:+.3f} nats ({d_ar.verdict}).")
    router_v = _names(sorted({r.verdict for r in routers}))
    out += (" Whether deep V *chooses* the embedding while Q and K read recent layers is not answered here: the "
            f"claim's own instrument puts its stream tests {_names(sorted(set(stream_verdicts)))} (its loss is "
            f"{stream_check.mean:+.3f} nats from the baseline's, {stream_check.verdict} against \"no worse\"), "
            f"and the routers' tests are {router_v}.")
    return out
