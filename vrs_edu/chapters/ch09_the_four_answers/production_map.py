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

from vrs_edu.i18n.language import resolve_language
from vrs_edu.lab.results import interval
from vrs_edu.lab.verdict_words import verdict_label

COLUMNS = ["model", "config field", "design", "the article's question", "what the course measured"]
NOT_RUN = "not run yet"
COLUMNS_KO = ["모델", "설정 필드", "설계", "원문의 질문", "강좌가 측정한 것"]
NOT_RUN_KO = "아직 실행하지 않음"

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
# The words of each row in Korean, by its toy variant: (model, config field, design, question).
ROWS_KO = {
    "k_eq_v": ("Gemma 4 (전역 층)", "`attention_k_eq_v`", "V가 곧 키 투영, W_V 없음", "1과 4: 내용이 곧 키"),
    "kv_share": ("Gemma 4 (마지막 층들)", "`num_kv_shared_layers`", "앞선 층의 K/V 캐시를 읽는 층 (CLA)",
                 "4: 재사용에 의한 효율"),
    "layer_embed": ("Gemma 3n, 작은 Gemma 4 모델", "`hidden_size_per_layer_input`", "스트림에 더하는 층별 토큰 임베딩",
                    "2: 초기 정보의 유지"),
    "value_embed": ("nanochat, modded-nanogpt", "값 임베딩 (`has_ve`)", "V에 더하는 게이트 달린 토큰 표",
                    "2: V를 통한 초기 정보의 유지"),
    "mhc": ("DeepSeek-V4", "`hc_mult`, `hc_sinkhorn_iters`", "이중 확률적으로 섞이는 잔차 스트림 4개 (mHC)",
            "3: 깊이에 걸친 선택적 읽기"),
    "xsa": ("XSA (논문, 2026)", "— (arXiv 2603.09078)", "각 출력이 자기 값의 방향을 잃음", "1: 어텐션이 옮기는 것"),
}


def _toy(result: dict | None, judged: dict, variant: str, test: str, lang: str = "en") -> str:
    ko = lang == "ko"
    if result is None or variant not in result["designs"]:
        return f"장난감 모델: {NOT_RUN_KO}" if ko else f"toy: {NOT_RUN}"
    d, base = result["designs"][variant], result["designs"]["baseline"]
    p = result["corpus"]["comparison"][variant]["paired_final"]
    cache = d["kv_bytes_per_token"]["float32"] / base["kv_bytes_per_token"]["float32"]
    rec = judged.get(test)
    verdict = (NOT_RUN_KO if ko else NOT_RUN) if rec is None else verdict_label(rec, lang)
    # The interval is uncorrected, the verdict Holm-corrected over the designs: the corrected p says why an
    # interval clear of 0 can sit beside "undecided" (chapter 02's primer).
    holm = None if rec is None else rec.get("p_holm")
    if holm is not None and math.isfinite(holm):
        verdict += f", Holm p = {holm:.3f}"
    if ko:
        return f"장난감 모델: Δ 손실 {interval(p['mean'], p['ci'])} nats ({verdict}), 캐시는 기준선의 {cache:.0%}"
    return f"toy: Δ loss {interval(p['mean'], p['ci'])} nats ({verdict}), cache {cache:.0%} of the baseline's"


def _post_hoc(kv: dict | None, test: str | None, lang: str = "en") -> str:
    if test is None:
        return ""
    ko = lang == "ko"
    if kv is None:
        return f"; SmolLM2 사후적: {NOT_RUN_KO}" if ko else f"; SmolLM2 post hoc: {NOT_RUN}"
    rec = {v["name"]: v for v in kv["verdicts"]}[test]
    if ko:
        return f"; SmolLM2 사후적, 마지막 3분의 1: {rec['mean']:+.2f} nats ('더 나쁘지 않다'는 주장이 {verdict_label(rec, 'ko')})"
    return f"; SmolLM2 post hoc, last third: {rec['mean']:+.2f} nats ({verdict_label(rec, 'en')} for 'no worse')"


def production_map(designs: dict | None, judged: dict[str, dict], kv: dict | None,
                   lang: str | None = None) -> tuple[list[str], list[list]]:
    """(columns, rows): one row per design a 2026 model ships. ``designs``: the stored production-designs result (or
    None); ``judged``: its declared tests judged now (test name → record); ``kv``: the stored decoder-kv-designs
    result (or None); ``lang``: the edition (default: the running notebook's)."""
    lang = resolve_language(lang)
    rows = []
    for model, field, design, question, variant, test, post in ROWS:
        words = ROWS_KO[variant] if lang == "ko" else (model, field, design, question)
        rows.append([*words, _toy(designs, judged, variant, test, lang) + _post_hoc(kv, post, lang)])
    return (COLUMNS_KO if lang == "ko" else COLUMNS), rows
