"""Chapter 09's production map: which 2026 model made which of the article's questions a design decision (the
config field in Hugging Face's transformers code), and what the course measured about that design — in the toy
(``vrs-edu reproduce production-designs``, chapter 06) and post hoc in SmolLM2 (``vrs-edu reproduce
decoder-kv-designs``, chapter 06).

Sources: Gemma 4's ``configuration_gemma4.py`` (``attention_k_eq_v``, ``num_kv_shared_layers``,
``hidden_size_per_layer_input``), Gemma 3n's ``hidden_size_per_layer_input``, DeepSeek-V4's
``configuration_deepseek_v4.py`` (``hc_mult``, ``hc_sinkhorn_iters``; mHC, arXiv 2512.24880), CLA (arXiv
2405.12981), XSA (arXiv 2603.09078), nanochat's value embeddings (``has_ve``). Every measured cell is built from a
stored result and the verdict of its declared test (the would-be verdict beside an out-of-regime one); a missing
result reads "not run yet".
"""
from __future__ import annotations

import math

from vrs_edu.lab.results import interval
from vrs_edu.lab.verdict_words import verdict_label

COLUMNS = ["model", "config field", "design", "the article's question", "what the course measured"]
NOT_RUN = "not run yet"

# (model, config field, design, question, toy variant, toy test, post-hoc test of decoder-kv-designs or None)
ROWS = (
    ("Gemma 4 (global layers)", "`attention_k_eq_v`", "V is the key projection, no W_V", "1 and 4: the content is "
     "the key", "k_eq_v", "k_eq_v_no_worse", "late_v_from_k_free"),
    ("Gemma 4 (last layers)", "`num_kv_shared_layers`", "a layer reads an earlier layer's K/V cache (CLA)",
     "4: efficiency from reuse", "kv_share", "kv_share_no_worse", "late_shared_kv_free"),
    ("Gemma 3n, small Gemma 4 models", "`hidden_size_per_layer_input`", "a per-layer token embedding into the stream",
     "2: early information kept", "layer_embed", "layer_embed_loss", None),
    ("nanochat, modded-nanogpt", "value embeddings (`has_ve`)", "a gated token table added to V",
     "2: early information kept through V", "value_embed", "value_embed_loss", None),
    ("DeepSeek-V4", "`hc_mult`, `hc_sinkhorn_iters`", "4 residual streams mixed doubly-stochastically (mHC)",
     "3: a selective read over depth", "mhc", "mhc_loss", None),
    ("XSA (paper, 2026)", "— (arXiv 2603.09078)", "each output loses its own value's direction",
     "1: what attention moves", "xsa", "xsa_loss", None),
)


def _toy(result: dict | None, judged: dict, variant: str, test: str) -> str:
    if result is None or variant not in result["designs"]:
        return f"toy: {NOT_RUN}"
    d, base = result["designs"][variant], result["designs"]["baseline"]
    p = result["corpus"]["comparison"][variant]["paired_final"]
    cache = d["kv_bytes_per_token"]["float32"] / base["kv_bytes_per_token"]["float32"]
    rec = judged.get(test)
    verdict = NOT_RUN if rec is None else verdict_label(rec)
    # The interval is uncorrected, the verdict Holm-corrected over the designs: the corrected p says why an
    # interval clear of 0 can sit beside "undecided" (chapter 02's primer).
    holm = None if rec is None else rec.get("p_holm")
    if holm is not None and math.isfinite(holm):
        verdict += f", Holm p = {holm:.3f}"
    return f"toy: Δ loss {interval(p['mean'], p['ci'])} nats ({verdict}), cache {cache:.0%} of the baseline's"


def _post_hoc(kv: dict | None, test: str | None) -> str:
    if test is None:
        return ""
    if kv is None:
        return f"; SmolLM2 post hoc: {NOT_RUN}"
    rec = {v["name"]: v for v in kv["verdicts"]}[test]
    return f"; SmolLM2 post hoc, last third: {rec['mean']:+.2f} nats ({verdict_label(rec)} for 'no worse')"


def production_map(designs: dict | None, judged: dict[str, dict], kv: dict | None) -> tuple[list[str], list[list]]:
    """(columns, rows): one row per design a 2026 model ships. ``designs``: the stored production-designs result (or
    None); ``judged``: its declared tests judged now (test name → record); ``kv``: the stored decoder-kv-designs
    result (or None)."""
    rows = []
    for model, field, design, question, variant, test, post in ROWS:
        rows.append([model, field, design, question,
                     _toy(designs, judged, variant, test) + _post_hoc(kv, post)])
    return COLUMNS, rows
