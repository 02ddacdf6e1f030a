"""``vrs-edu reproduce decoder-norms``: attention is not only a weight, asked of SmolLM2-135M's 30 layers.

An attention layer's output at query i is Σ_h Σ_j α_hij f_h(x_j) (Kobayashi et al., EMNLP 2020, arXiv 2004.10102):
the weight α that QK computed times the vector f_h(x_j) = v W_O^h that V and O make (:mod:`vrs_edu.nn.attribution`).
Two readings of it are measured here per layer, on the evaluation sequences of chapter 08 (windows of 128 tokens of
the corpus, the unit of replication; queries 1..T-1 — query 0 sees only itself):

* **The first-token sink** (Gu et al., arXiv 2410.10781; Xiao et al., arXiv 2309.17453): the *weight share* of
  position 0, mean over heads and queries of α_hi0, beside its *norm share*, ‖Σ_h α_hi0 f_h(x_0)‖ / Σ_j ‖Σ_h α_hij
  f_h(x_j)‖ (the layer's norm-based map, normalised per query). Gu et al.: the sink takes weight and contributes
  little to the value sum.
* **The context-mixing ratio** (Kobayashi et al., EMNLP 2021, arXiv 2109.07152) with the residual counted: r_i =
  ‖c_i‖ / (‖c_i‖ + ‖x_i + own_i‖), beside the weight-based reading 1 − mean_h α_hii, per third of the depth. In
  BERT-base they report 18.8 % against 97.1 % from the weights alone, higher in early layers.

The tests are declared below, before the run; the per-layer pattern-swap cost of chapter 08 (``real-decoder``'s
layer scan) is set beside the two readings as a *description* (30 layers are not 30 independent replicates).
Computation in float32; nothing is trained.
"""
from __future__ import annotations

import time

import torch
from scipy.stats import spearmanr

from vrs_edu.chapters.ch08_real_decoder.model import (GGUF_SHA256, MODEL_NAME, RealDecoder, load_decoder, make_windows,
                                                      thirds)
from vrs_edu.lab.analysis import DeclaredTest, Precondition, judge, layer_means, verdict_records
from vrs_edu.lab.corpora import DEFAULT_NAME, named_corpus
from vrs_edu.lab.experiments import Recipe, load_results
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.progress import progress_bar
from vrs_edu.lab.results import Verdict
from vrs_edu.nn.attribution import (attention_mixing, contributions, layer_norm_map, mixing_ratio, source_share,
                                    transformed_values, weight_mixing)

NAME = "decoder-norms"
# The same windows as real-decoder's (seq_len, n_eval, calib_per_eval, min_eval), of which the first n_sequences
SETTINGS = {"seq_len": 128, "n_eval": 224, "calib_per_eval": 3, "min_eval": 200, "n_sequences": 96,
            "dtype": "float32"}
QUICK = {**SETTINGS, "seq_len": 24, "n_eval": 8, "min_eval": 4, "n_sequences": 4}

# -- declared before the full run -------------------------------------------------------------------------------
SESOI_SHARE = 0.05   # 5 percentage points of a query's attribution: the smallest difference of interest
SESOI_DEPTH = 0.02   # 2 points of the mixing ratio between the early and the late third
SINK_EPS = 0.3       # Gu et al. (arXiv 2410.10781, §3) call the first token a sink in a head where its weight > 0.3
_SHARE_SRC = ("declared: 5 percentage points of a query's attribution (a share's difference below that changes no "
              "reading of a map)")
_DEPTH_SRC = "declared: 2 points of the mixing ratio (a tenth of BERT-base's 18.8 %, arXiv 2109.07152)"


def sink_precondition(layer: int) -> Precondition:
    return Precondition(f"sink_at_{layer}", f"layer {layer} has a first-token sink (the premise of the claim)",
                        "the first token's weight share (mean over heads, queries and sequences)", "positive",
                        SINK_EPS)


def sink_test(layer: int) -> DeclaredTest:
    return DeclaredTest(
        f"sink_norm_below_weight_{layer}", "the sink takes weight and contributes little to the value sum (Gu et "
        "al., arXiv 2410.10781): its norm share lies below its weight share", f"per sequence: norm share − weight "
        f"share of position 0, layer {layer}", "the same sequence's weight share", "negative", 0.0, "sink",
        -SESOI_SHARE, _SHARE_SRC, requires=(f"sink_at_{layer}",))


def mixing_test(third: str) -> DeclaredTest:
    return DeclaredTest(
        f"mixing_below_weights_{third}", "counting V, O and the residual, a token takes far less from its context "
        "than the weights say (Kobayashi et al., arXiv 2109.07152: 18.8 % against 97.1 % in BERT-base)",
        f"per sequence: mixing ratio r − (1 − mean_h α_ii), mean over the {third} third's layers and the queries",
        "the weight-based reading, same sequence", "negative", 0.0, "mixing", -SESOI_SHARE, _SHARE_SRC)


DEPTH_TEST = DeclaredTest(
    "mixing_early_above_late", "the mixing ratio is higher in early layers (Kobayashi et al., arXiv 2109.07152, "
    "for BERT; asked here of a decoder)", "per sequence: r (early third) − r (late third)", "the same sequence's "
    "late third", "positive", 0.0, "depth", SESOI_DEPTH, _DEPTH_SRC)


def declared(n_layers: int) -> tuple[list[DeclaredTest], list[Precondition]]:
    """The declared tests and preconditions for a decoder of ``n_layers`` (30: SmolLM2-135M)."""
    tests = [sink_test(l) for l in range(n_layers)] + [mixing_test(t) for t in thirds(n_layers)] + [DEPTH_TEST]
    return tests, [sink_precondition(l) for l in range(n_layers)]


# -- the measurement ------------------------------------------------------------------------------------------

@torch.no_grad()
def layer_readings(dec: RealDecoder, ids: torch.Tensor) -> dict[str, torch.Tensor]:
    """The readings of every layer for a batch of token windows ``ids`` (B, T): ``weight_share`` and
    ``norm_share`` of position 0, the ``mixing`` ratio, its ``weight_mixing`` counterpart and between them the
    ``attention_mixing`` (by norms, without the residual; a description, no test reads it), each (B, L), means over
    queries 1..T-1; plus ``sink_heads`` (B, L), the share of heads whose mean weight on position 0 exceeds
    :data:`SINK_EPS`."""
    model = dec.model
    B, T = ids.shape
    tr = model(ids, trace=True).trace
    first = torch.zeros(B, T, dtype=torch.bool)
    first[:, 0] = True
    queries = ~first
    out = {k: [] for k in ("weight_share", "norm_share", "mixing", "attention_mixing", "weight_mixing", "sink_heads")}
    for l, block in enumerate(model.blocks):
        pattern = tr[f"blocks.{l}.attn.pattern"]                               # (B, H, T, T)
        f = transformed_values(tr[f"blocks.{l}.attn.v_mix"], block.attn.o_proj.weight, model.cfg.n_heads)
        c = contributions(pattern, f)                                           # (B, T, T, D)
        out["weight_share"].append(source_share(pattern.mean(dim=1), first, queries))
        out["norm_share"].append(source_share(layer_norm_map(c), first, queries))
        out["mixing"].append(mixing_ratio(c, tr[f"blocks.{l}.resid_pre"])[:, 1:].mean(dim=1))
        out["attention_mixing"].append(attention_mixing(c)[:, 1:].mean(dim=1))
        out["weight_mixing"].append(weight_mixing(pattern)[:, 1:].mean(dim=1))
        out["sink_heads"].append((pattern[:, :, 1:, 0].mean(dim=2) > SINK_EPS).float().mean(dim=1))
    return {k: torch.stack(v, dim=1) for k, v in out.items()}


def measure(dec: RealDecoder, windows: torch.Tensor, *, batch_size: int = 4, show: bool = False) -> dict:
    """Per-sequence readings (lists of length n, per layer) on ``windows`` (n, T)."""
    parts = []
    for i in progress_bar(range(0, len(windows), batch_size), show=show, desc=NAME):
        parts.append(layer_readings(dec, windows[i:i + batch_size]))
    return {k: torch.cat([p[k] for p in parts]).T.tolist() for k in parts[0]}     # {reading: (L, n)}


def test_values(result: dict) -> dict[str, list[float]]:
    """Per-sequence values of every declared test, from a stored result."""
    per = result["per_layer"]
    L = len(per["weight_share"])
    n = len(per["weight_share"][0])
    out = {f"sink_norm_below_weight_{l}": [a - b for a, b in zip(per["norm_share"][l], per["weight_share"][l])]
           for l in range(L)}

    def third_mean(reading, layers):
        return [sum(per[reading][l][s] for l in layers) / len(layers) for s in range(n)]
    parts = thirds(L)
    for t, layers in parts.items():
        out[f"mixing_below_weights_{t}"] = [a - b for a, b in zip(third_mean("mixing", layers),
                                                                  third_mean("weight_mixing", layers))]
    out["mixing_early_above_late"] = [a - b for a, b in zip(third_mean("mixing", parts["early"]),
                                                            third_mean("mixing", parts["late"]))]
    return out


def facts(result: dict) -> dict[str, float]:
    """The preconditions' values: each layer's mean weight share of position 0."""
    return {f"sink_at_{l}": sum(v) / len(v) for l, v in enumerate(result["per_layer"]["weight_share"])}


def verdicts(result: dict) -> list[Verdict]:
    """The declared tests judged on a stored result (:func:`vrs_edu.lab.analysis.judge`)."""
    tests, pre = declared(len(result["per_layer"]["weight_share"]))
    return judge(tests, test_values(result), preconditions=pre, facts=facts(result))


def swap_cost_description(result: dict, decoder_result: dict | None) -> dict | None:
    """A description, not a test: across layers, Spearman's ρ of chapter 08's pattern-swap cost (``real-decoder``'s
    layer scan, nats) with the norm-based mixing ratio and with its weight-based reading, with the sink's norm and
    weight shares, and with the two gaps, how much the weights overstate each (``mixing_gap`` = 1 − α_ii − r,
    ``sink_gap`` = weight share − norm share). None without that result."""
    if decoder_result is None:
        return None
    cost = decoder_result["layer_scan"]["conditions"]["pattern swap"]["mean"]
    means = layer_means(result)
    if len(cost) != len(means["mixing"]):
        return None
    means["mixing_gap"] = [w - r for w, r in zip(means["weight_mixing"], means["mixing"])]
    means["sink_gap"] = [w - n for w, n in zip(means["weight_share"], means["norm_share"])]
    rho = {k: float(spearmanr(cost, means[k]).statistic) for k in ("mixing", "weight_mixing", "norm_share",
                                                                   "weight_share", "mixing_gap", "sink_gap")}
    return {"spearman": rho, "layers": len(cost), "sequences": len(decoder_result["layer_scan"]["sequences"]),
            "about": "description across the decoder's layers: not a test (layers are not independent replicates)"}


def decoder_norms(quick: bool, seeds: list[int], *, corpus=None, tokenizer: str | None = None,
                  options: RunOptions = RunOptions()) -> dict:
    if tokenizer is not None:
        raise ValueError(f"--tokenizer does not apply to {NAME}: the text is tokenised by the model's own tokenizer, "
                         f"got --tokenizer {tokenizer}")
    cfg = QUICK if quick else SETTINGS
    t0 = time.perf_counter()
    dec = load_decoder(torch.float32)
    text = corpus or named_corpus(DEFAULT_NAME)
    w = make_windows(dec.encode(text.text), cfg["seq_len"], cfg["n_eval"], cfg["calib_per_eval"], cfg["min_eval"],
                     name=f"corpus {text.name}")
    windows = w.eval[:cfg["n_sequences"], :-1]
    load_s = time.perf_counter() - t0
    per_layer = measure(dec, windows, show=options.progress and not quick)
    payload = {"model": MODEL_NAME, "gguf_sha256": GGUF_SHA256, "settings": cfg, "thirds": thirds(len(dec.model.blocks)),
               "n_sequences": len(windows), "per_layer": per_layer,
               "stage_seconds": {"load": round(load_s, 1), "measure": round(time.perf_counter() - t0 - load_s, 1)}}
    payload["facts"] = facts(payload)
    payload["verdicts"] = verdict_records(verdicts(payload))
    try:
        scan = None if quick or corpus is not None else load_results("real-decoder")
    except FileNotFoundError:
        scan = None
    payload["swap_cost"] = swap_cost_description(payload, scan)
    return payload



# Budget: a traced forward of 4 windows of 128 tokens and the attribution of 30 layers, ~1-2 s on 2 threads; 96
# windows in 24 batches: about a minute. What a recorded run took: its result's stage_seconds.
RECIPE = Recipe(NAME, decoder_norms,
                "SmolLM2-135M (the dequantised Q4_1 GGUF of chapter 08): the first-token sink's weight share against "
                "its norm share per layer, and the context-mixing ratio with the residual against 1 − α_ii per third "
                "(Kobayashi et al. 2020/2021, Gu et al. 2024), on 96 windows of 128 tokens",
                default_seeds=(0,), budget_s=20 * 60, text=True, verdicts=verdicts)
