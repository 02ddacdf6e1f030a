"""The evidence chapter 09 argues from, gathered in one dict (:func:`gather_evidence`) from the course's result files
and two live measurements, and the sentences and rules it needs beside the argument
(:mod:`~vrs_edu.chapters.ch09_the_four_answers.argument`).

Every number is computed from a ``data/results/*.json`` file written by a ``vrs-edu reproduce`` command (never
typed) or measured live (chapter 02's swaps on the character model, :func:`toy_swap_evidence`). The toys' declared
tests come from the verdict corpus (:func:`vrs_edu.lab.by_corpus.verdict_corpus`, the King James Bible), recomputed
from the runs by each recipe's ``verdicts`` so that today's rules (preconditions, gates, the rate sweep) apply.
:func:`norm_view_sentence` says what attention weights alone mis-state in the real models (chapters 07, 08);
:func:`combine_arm_verdicts` is the rule a swept test's arms are combined by (the chapter 09 assignment's exercise).
"""
from __future__ import annotations

import math
from pathlib import Path

from vrs_edu.chapters.ch03_value_residual import recipe as value_residual
from vrs_edu.chapters.ch04_bank_of_values import recipe as bank_of_values
from vrs_edu.chapters.ch05_depth_as_sequence import recipe as depth_mixers, v_over_depth
from vrs_edu.chapters.ch06_what_v_reuse_buys.recipe import verdicts as design_verdicts
from vrs_edu.chapters.ch07_real_model import norms as encoder_norms
from vrs_edu.chapters.ch08_real_decoder import norms as decoder_norms
from vrs_edu.chapters.ch08_real_decoder.recipe import verdicts as decoder_verdicts
from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.language import resolve_language
from vrs_edu.lab.analysis import arm_rule, layer_means, mean
from vrs_edu.lab.by_corpus import verdict_corpus
from vrs_edu.lab.experiments import load_results_or_none
from vrs_edu.lab.kv_cache import kv_bytes_per_token
from vrs_edu.lab.results import DECIDED, VERDICTS, Verdict
from vrs_edu.viz.prose import percent


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


# The toy recipes whose declared tests the argument reads, each with the function that judges its runs.
TOY_VERDICTS = {"value-residual": value_residual.verdicts, "bank-of-values": bank_of_values.verdicts,
                "depth-mixers": depth_mixers.verdicts, "v-over-depth": v_over_depth.verdicts}


def _toy_verdicts(results: dict) -> dict[str, Verdict]:
    """Every declared test of the toy recipes, recomputed from their runs by each recipe's ``verdicts``."""
    return {r.test.name: r for name, fn in TOY_VERDICTS.items() if results.get(name) for r in fn(results[name])}


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
# the same in Korean: the layers where the tokens count, and the tokens as the sentence's subject
NORM_TOKENS_KO = {"encoder": ("[CLS], [SEP]와 구두점이 위치 수에 비해 더 많은 가중치를 받는", "이 토큰들은"),
                  "decoder": ("첫 토큰이 싱크인", "첫 토큰은")}


def norm_view_sentence(ev: dict, lang: str | None = None) -> str:
    """Question 1's sentence on the norm-based view, for the deepest model measured (the decoder, else the encoder):
    what its last third's weights say against what V, O and the residual move; in ``lang`` (default: the running
    edition)."""
    key = "decoder" if "decoder" in ev else "encoder" if "encoder" in ev else None
    if key is None:
        return ""
    e = ev[key]
    # the same for both languages: the attention-only reading is there (not NaN), and the sink is cited
    attention, sink = not math.isnan(e["attention"]), key == "decoder" and bool(e["judged"])
    if resolve_language(lang) == "ko":
        return _norm_view_sentence_ko(key, e, attention, sink)
    who, verb, where = NORM_TOKENS[key]
    name = {"decoder": "the 30-layer decoder's", "encoder": "the encoder's"}[key]
    ls = e["layers"]
    out = (f"Read by their weights alone (QK), deep layers are mis-stated: in {name} last third (layers "
           f"{ls[0]}–{ls[-1]}) the weights say a token takes {percent(e['weights'])} of its new state from its context")
    if attention:
        out += f"; the norms of what attention moves (V and O), {percent(e['attention'])}"
    out += f"; counting the residual too, {percent(e['r'])}"
    if e["judged"]:
        out += (f". There {who} {verb} {percent(e['weight'])} of the weight but {percent(e['norm'])} of what the layer "
                f"moves, at the {e['judged']} of those layers {where}")
    sink = "; the sink: Gu et al., arXiv 2410.10781" if sink else ""
    return out + f" (the norm-based view: Kobayashi et al., arXiv 2004.10102 and 2109.07152{sink})."


def _norm_view_sentence_ko(key: str, e: dict, attention: bool, sink: bool) -> str:
    name = {"decoder": "30층 디코더의", "encoder": "인코더의"}[key]
    ls = e["layers"]
    reads = [f"가중치로 읽으면 {percent(e['weights'])}"]
    if attention:
        reads.append(f"어텐션이 옮기는 것(V와 O)의 노름으로 읽으면 {percent(e['attention'])}")
    reads.append(f"잔차까지 세면 {percent(e['r'])}")
    out = (f"가중치(QK)만으로 읽으면 깊은 층은 잘못 서술됩니다. {name} 마지막 3분의 1({ls[0]}–{ls[-1]}층)에서 토큰이 "
           f"새 상태 중 문맥에서 가져오는 몫은 {', '.join(reads)}입니다")
    if e["judged"]:
        where, who = NORM_TOKENS_KO[key]
        out += (f". {where} {e['judged']}개 층에서 {who} 가중치의 {attach(percent(e['weight']), '을/를')} 받지만 층이 "
                f"옮기는 것의 {percent(e['norm'])}만 차지합니다")
    sink = "; 싱크: Gu et al., arXiv 2410.10781" if sink else ""
    return out + f"(노름 기반 관점: Kobayashi et al., arXiv 2004.10102와 2109.07152{sink})."


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


def _decoder_rows(dec: dict, judge_fn) -> list[Verdict]:
    """The real decoder's verdicts by today's declarations (``judge_fn``: the recipe's ``verdicts``), or, for a
    result made before them (its tables lack a condition they read), the verdicts it stored."""
    try:
        return judge_fn(dec)
    except KeyError:
        return [Verdict.from_record(r) for r in dec.get("verdicts", [])]


def gather_evidence(out_dir: str | Path | None = None, swaps: dict | None = None, char_cfg=None,
                    char_corpus: str | None = None) -> dict:
    """Everything chapter 09 answers from, in one dict: the toys' declared tests on the verdict corpus
    (:func:`~vrs_edu.lab.by_corpus.verdict_corpus`), recomputed from the runs (``toys``: name -> Verdict), their
    regimes (``regimes``: recipe -> :func:`regime_parts`), the live measurements ``swaps``
    (:func:`toy_swap_evidence`, chapter 02's character model, ``char_cfg`` its config, ``char_corpus`` its corpus),
    the real decoder's stored ``real-decoder`` result (post hoc: verdicts by name, chapter 08's answers, its model
    and corpus), the norm view (chapters 07 and 08), the KV cache each reuse keeps, and the production designs' verdicts
    (``designs``: name -> Verdict, chapter 06). A missing file leaves its entry None or empty."""
    toys = {n: load_results_or_none(n, corpus=verdict_corpus(), out_dir=out_dir) for n in TOY_VERDICTS}
    dec = load_results_or_none("real-decoder", out_dir=out_dir)
    designs = load_results_or_none("production-designs", corpus=verdict_corpus(), out_dir=out_dir)
    shape = (8, 64)   # (layers, width) of the toys, for the KV cache each reuse keeps
    if toys.get("value-residual"):
        m = next(iter(toys["value-residual"]["corpus"]["configs"].values()))["model"]
        shape = (m["n_layers"], m["d_model"])
    base = kv_bytes_per_token(*shape)
    regimes = {}
    for name, r in {**toys, "production-designs": designs}.items():
        try:
            regimes[name] = regime_parts(r)
        except (AttributeError, KeyError, TypeError, StopIteration):   # missing, or a file without its configs
            continue
    return {"toys": _toy_verdicts(toys), "corpus": verdict_corpus(), "swaps": swaps, "regimes": regimes,
            "cache": {v: kv_bytes_per_token(*shape, v) / base for v in ("svformer", "bank", "depth_attention")},
            "char_model": (f"the {char_cfg.n_layers}-layer character-level toy" if char_cfg is not None
                           else "the character-level toy"), "char_corpus": char_corpus,
            "char_layers": char_cfg.n_layers if char_cfg is not None else None,
            "decoder": {r.test.name: r for r in _decoder_rows(dec, decoder_verdicts)} if dec else None,
            "decoder_corpus": (dec.get("text_corpus") or {}).get("name") if dec else None,
            "norms": norm_view_evidence({"encoder": load_results_or_none("encoder-norms", out_dir=out_dir),
                                         "decoder": load_results_or_none("decoder-norms", out_dir=out_dir)}),
            "decoder_model": dec.get("model") if dec else None,
            "designs": {r.test.name: r for r in design_verdicts(designs)} if designs else {}}


