"""What chapter 08 reads from the real decoder besides loss changes: per-layer descriptions of the stream and of q, k,
v (Q2, Q3), the KV-cache price list (Q4), the widget's computation, and the course's answers from the stored result.

* :class:`LayerStats` — collected from the clean traces of the evaluation batches: how much of q, k, v a per-token
  table explains on held-out text (table R²); cos(V_l, V_1); the attention entropy against uniform-causal attention;
  the logit lens (the loss if the stream at layer l were read by the final norm and the head, nostalgebraist 2020;
  Belrose et al., arXiv 2303.08112) and direct logit attribution (each layer's attention and MLP write, read by the
  head with the final norm's scale held fixed: what it adds to the correct token's logit, centred over the
  vocabulary); samples of the tensors for ridge probes.
* :func:`probe_r2s` — held-out ridge R² (chapter 07's probes, :mod:`vrs_edu.chapters.ch07_real_model.probes`) of q, k, v and of each
  layer's input from the token's embedding x0 (the toys' "x0-R²", chapter 05), and of each layer's input from the
  last ``K`` layers' writes: how much of what a layer reads is the token itself and how much recent writing.
* :func:`price_list` — for each substitution, the KV-cache bytes per token it saves and the nats it costs.
* :func:`substitution_readout` — the widget: one sentence, one layer or third, Q, K or V replaced by its table.
* :func:`decoder_answers` — the real decoder's numbers for each of the course's four questions, from the stored result;
  :func:`toy_comparison` — where they agree with the toys' stored results, and where not.
Shapes: B batch, T sequence, D width, L layers, V vocabulary.
"""
from __future__ import annotations

import math
from pathlib import Path

import torch
import torch.nn.functional as F
from einops import rearrange
from safetensors.torch import load_file
from torch import Tensor

from vrs_edu.chapters.ch07_real_model.probes import RidgeSolver, probe_r2, split_masks
from vrs_edu.chapters.ch08_real_decoder.interventions import ESTIMATORS, estimator
from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.language import resolve_language
from vrs_edu.i18n.evidence import reason as reason_in
from vrs_edu.i18n.verdicts import KIND_KO, verdict_word
from vrs_edu.i18n.verdicts import label as verdict_label
from vrs_edu.lab.by_corpus import verdict_corpus
from vrs_edu.lab.experiments import CHECKPOINT_DIR, load_results, provenance
from vrs_edu.lab.metrics import attention_entropy, uniform_causal_entropy
from vrs_edu.nn.llama import MiniLlama

PROJ = ("q", "k", "v")
HOOK_OF = {"q": "q_pre", "k": "k_pre", "v": "v"}


def _features(t: Tensor) -> Tensor:
    return rearrange(t, "b h t d -> b t (h d)")


class LayerStats:
    """Accumulates per-layer descriptions over the clean traces of evaluation batches (``on_batch`` of
    :func:`~vrs_edu.chapters.ch08_real_decoder.interventions.paired_losses`).

    Args:
        model: the decoder (its head and final norm read the stream).
        tables: the calibration :class:`~vrs_edu.chapters.ch08_real_decoder.interventions.TokenTables` (for table R²), or None.
        lens: also the logit lens, direct logit attribution and probe samples (costly: the layer-scan subset only).
        lens_every: the logit lens and the probes read every ``lens_every``-th position of each sequence.
    """

    def __init__(self, model: MiniLlama, tables=None, lens: bool = False, lens_every: int = 2):
        self.model, self.tables, self.lens, self.every = model, tables, lens, lens_every
        L = model.cfg.n_layers
        self.L = L
        self.n_seq = 0
        self.sq_err = {p: torch.zeros(L, dtype=torch.float64) for p in PROJ}
        self.sq_tot = {p: torch.zeros(L, dtype=torch.float64) for p in PROJ}
        self.cos_v1 = torch.zeros(L, dtype=torch.float64)
        self.n_tok = 0
        self.entropy = torch.zeros(L, dtype=torch.float64)
        self.lens_loss = torch.zeros(L + 1, dtype=torch.float64)
        self.n_lens = 0
        self.dla = {"embed": torch.zeros(1, dtype=torch.float64), "attn": torch.zeros(L, dtype=torch.float64),
                    "mlp": torch.zeros(L, dtype=torch.float64)}
        self.samples: dict[str, list[Tensor]] = {}
        self.T = None

    @torch.no_grad()
    def __call__(self, x: Tensor, y: Tensor, trace, logits: Tensor) -> None:
        B, T = x.shape
        self.T = T
        self.n_seq += B
        self.n_tok += B * T
        v1 = _features(trace["blocks.0.attn.v"]).float()
        for l in range(self.L):
            self.entropy[l] += attention_entropy(trace[f"blocks.{l}.attn.pattern"]).double().sum()
            vl = _features(trace[f"blocks.{l}.attn.v"]).float()
            self.cos_v1[l] += F.cosine_similarity(vl, v1, dim=-1).double().sum()
            if self.tables is not None:
                for p in PROJ:
                    t = _features(trace[f"blocks.{l}.attn.{HOOK_OF[p]}"]).float()
                    tab = self.tables.means(p)[l]
                    self.sq_err[p][l] += (t - tab[self.tables.slots[x]]).double().pow(2).sum()
                    self.sq_tot[p][l] += (t - tab[0]).double().pow(2).sum()   # row 0: the calibration mean
        if self.lens:
            self._lens(x, y, trace)

    def _lens(self, x: Tensor, y: Tensor, trace) -> None:
        m = self.model
        pos = torch.arange(0, x.size(1), self.every)
        yy = y[:, pos]
        states = [trace[f"blocks.{l}.resid_pre"] for l in range(self.L)] + [trace["resid_final"]]
        for l, h in enumerate(states):
            lg = m.lm_head(m.norm(h[:, pos])).float()
            self.lens_loss[l] += F.cross_entropy(lg.flatten(0, 1), yy.flatten(), reduction="sum").double()
        self.n_lens += yy.numel()
        # direct logit attribution: a write c adds (g ⊙ c / rms(x_final)) · (W_U[y] − mean_v W_U[v]) to the logit
        # margin of the correct token over the average token (the final norm's scale held at its actual value)
        final = trace["resid_final"].float()
        scale = final.pow(2).mean(-1, keepdim=True).add(m.cfg.norm_eps).rsqrt()            # (B, T, 1)
        W = m.lm_head.weight.float()
        u = (W[y] - W.mean(0)) * m.norm.weight.float()                                     # (B, T, D)

        def dla(c: Tensor) -> Tensor:
            return (c.float() * scale * u).sum(-1).double().sum()
        self.dla["embed"] += dla(trace["embed"])
        for l in range(self.L):
            self.dla["attn"][l] += dla(trace[f"blocks.{l}.attn.out"])
            self.dla["mlp"][l] += dla(trace[f"blocks.{l}.mlp.out"])
        keep = {"embed": trace["embed"][:, pos]}
        for l in range(self.L):
            keep[f"resid.{l}"] = trace[f"blocks.{l}.resid_pre"][:, pos]
            for p in PROJ:
                keep[f"{p}.{l}"] = _features(trace[f"blocks.{l}.attn.{HOOK_OF[p]}"])[:, pos]
        keep["resid.final"] = trace["resid_final"][:, pos]
        base = self.n_seq - x.size(0)
        keep["seq"] = (base + torch.arange(x.size(0)))[:, None].expand(-1, len(pos))
        for k, t in keep.items():
            self.samples.setdefault(k, []).append(t.reshape(-1, *t.shape[2:]).float()
                                                  if k != "seq" else t.reshape(-1))

    def summary(self) -> dict:
        """Per-layer lists (JSON-ready): ``entropy`` (nats, mean over sequences) and ``uniform_entropy`` (the
        uniform-causal reference at this T), ``cos_v_v1``, ``table_r2`` {q, k, v} (held-out: tables from the
        calibration split, scored on these sequences; None without tables) and, with ``lens``, ``logit_lens`` (L + 1
        losses in nats: the stream entering each layer, then the final state) and ``dla`` {embed, attn, mlp}
        (mean logit margin per position)."""
        out = {"n_sequences": self.n_seq, "entropy": (self.entropy / self.n_seq).tolist(),
               "uniform_entropy": uniform_causal_entropy(self.T), "cos_v_v1": (self.cos_v1 / self.n_tok).tolist()}
        if self.tables is not None:
            out["table_r2"] = {p: (1 - self.sq_err[p] / self.sq_tot[p]).tolist() for p in PROJ}
        if self.lens:
            out["logit_lens"] = (self.lens_loss / self.n_lens).tolist()
            out["dla"] = {k: (v / self.n_tok).tolist() for k, v in self.dla.items()}
            out["dla"]["embed"] = out["dla"]["embed"][0]
        return out

    def sample_tensors(self) -> dict[str, Tensor]:
        return {k: torch.cat(v) for k, v in self.samples.items()}


def probe_r2s(model: MiniLlama, samples: dict[str, Tensor], recent: int = 3, test_every: int = 5) -> dict:
    """Held-out ridge R² per layer (split by sequence: :func:`~vrs_edu.chapters.ch07_real_model.probes.split_masks`), from the token's
    embedding x0 (= the stream at depth 0): of q, k and v (before RoPE) and of the layer's input ``norm_l(x_l)`` (what
    Q, K and V read); and of that input from the last ``recent`` layers' writes ``x_l − x_{l−recent}`` (fewer for the
    first layers). Returns ``{"x0_r2": {q, k, v, input: [per layer]}, "recent_r2": [per layer], "recent": K,
    "n_tokens": N}``."""
    seq = samples["seq"]
    train, val, test = split_masks(seq, test_every)
    x0 = samples["embed"].float()
    solvers = (RidgeSolver(x0[train]), RidgeSolver(x0[train | val]))
    L = model.cfg.n_layers
    out = {"x0_r2": {s: [] for s in (*PROJ, "input")}, "recent_r2": [], "recent": recent, "n_tokens": len(seq)}
    with torch.no_grad():
        for l in range(L):
            for p in PROJ:
                out["x0_r2"][p].append(probe_r2(x0, samples[f"{p}.{l}"].float(), train, val, test,
                                                solvers=solvers).r2)
            resid = samples[f"resid.{l}"].float()
            inp = model.blocks[l].attn_norm(resid.to(model.tok_emb.weight.dtype)).float()
            out["x0_r2"]["input"].append(probe_r2(x0, inp, train, val, test, solvers=solvers).r2)
            if l == 0:
                out["recent_r2"].append(float("nan"))   # nothing written yet: the input is x0 itself
                continue
            writes = resid - samples[f"resid.{max(0, l - recent)}"].float()
            out["recent_r2"].append(probe_r2(writes, inp, train, val, test).r2)
    return out


# ---------------------------------------------------------------------------------------------------------------
# Q4: the price list


def kv_bytes(cfg, bytes_per_number: int = 2) -> dict:
    """KV-cache bytes per token: per layer ``n_kv_heads · head_dim`` numbers for K and as many for V (float16 by
    default: 2 bytes); ``total`` for all layers; ``table_per_layer``: one per-token table (V × that width), the fixed
    price of replacing one layer's K or V by a table (break-even at a context of V tokens, arXiv 2606.02780, Sec. 4)."""
    width = cfg.n_kv_heads * cfg.head_dim
    per = width * bytes_per_number
    return {"k_per_layer": per, "v_per_layer": per, "total": 2 * per * cfg.n_layers,
            "table_per_layer": cfg.vocab_size * per, "bytes_per_number": bytes_per_number}


# what each substitution removes from the cache, per layer it is applied to
CACHE_SAVED = {"K table": "k", "V table": "v", "K table (shrunk)": "k", "V table (shrunk)": "v", "K := W_K·norm(x0)": "k",
               "V := W_V·norm(x0)": "v", "V := V_1": "v", "shared V": "v/2",
               "previous layer's pattern": "k", "uniform pattern": "k"}


def bytes_saved(condition: str, layers: list[int], cfg, bytes_per_number: int = 2) -> int:
    """KV-cache bytes per token that ``condition`` (a key of :data:`CACHE_SAVED`) saves on ``layers``: a table or a
    context-free V means that layer's K or V is never cached (it is recomputed from the token id); V_1 reuse skips
    every layer but 0; a shared V caches one V per pair; a pattern that needs no fresh QK needs no K cache.
    Raises ValueError for another condition."""
    if condition not in CACHE_SAVED:
        raise ValueError(f"condition must be one of {list(CACHE_SAVED)}, got {condition!r}")
    per = kv_bytes(cfg, bytes_per_number)["k_per_layer"]
    what = CACHE_SAVED[condition]
    n = len([l for l in layers if l > 0]) if condition == "V := V_1" else len(layers)
    if what == "v/2":
        return (len(layers) // 2) * per
    return n * per


def price_list(deltas: dict[str, dict], cfg, tolerance: float, bytes_per_number: int = 2) -> list[dict]:
    """One row per measured substitution that saves cache: ``{"condition", "layers", "where", "bytes_saved",
    "share_saved", "mean", "ci", "within"}``; ``within``: the upper end of the 95 % interval of its loss change lies
    below ``tolerance`` (nats per token). ``deltas`` maps ``"<condition> · <where>"`` to ``{"layers", "mean", "ci"}``
    (the recipe's summaries). Sorted by bytes saved, then nats lost."""
    total = kv_bytes(cfg, bytes_per_number)["total"]
    rows = []
    for key, d in deltas.items():
        cond, _, where = key.rpartition(" · ")
        if cond not in CACHE_SAVED or d.get("mean") is None or math.isnan(d["mean"]):
            continue
        saved = bytes_saved(cond, d["layers"], cfg, bytes_per_number)
        if saved == 0:
            continue
        rows.append({"condition": cond, "where": where, "layers": d["layers"], "bytes_saved": saved,
                     "share_saved": saved / total, "mean": d["mean"], "ci": d["ci"],
                     "within": bool(d["ci"][1] < tolerance)})
    return sorted(rows, key=lambda r: (-r["bytes_saved"], r["mean"]))


# ---------------------------------------------------------------------------------------------------------------
# The widget: one sentence, one substitution


@torch.no_grad()
def substitution_readout(model: MiniLlama, ids: Tensor, rows: dict[str, Tensor], row_of: dict[int, int],
                         layers: list[int], p: str, top: int = 3, decode=None) -> dict:
    """Replace projection ``p`` (q, k or v) at ``layers`` by its per-token table for one sentence ``ids`` (T + 1,)
    and compare with the clean run. ``rows[p]`` (L, N, D_p) holds the table rows of the N tokens in ``row_of``
    (token id -> row). Returns ``{"clean_loss", "loss", "delta"`` (nats, mean over the T predictions), ``"token_delta"``
    (T,) the loss change per prediction, ``"clean_top"``, ``"top"``: per position the ``top`` most likely next tokens
    (ids, or strings with ``decode``)}``.

    Raises:
        ValueError: ``p`` not q, k or v; a layer out of range; a token without a row.
    """
    if p not in PROJ:
        raise ValueError(f"p must be one of {PROJ}, got {p!r}")
    L = model.cfg.n_layers
    if not layers or not all(0 <= l < L for l in layers):
        raise ValueError(f"layers must be a non-empty list of layers in 0..{L - 1}, got {layers}")
    missing = sorted({int(i) for i in ids[:-1] if int(i) not in row_of})
    if missing:
        raise ValueError(f"tokens {missing} have no stored table row")
    x, y = ids[None, :-1], ids[None, 1:]
    idx = torch.tensor([row_of[int(i)] for i in ids[:-1]])
    heads = model.cfg.n_heads if p == "q" else model.cfg.n_kv_heads

    def hook_for(l):
        value = rearrange(rows[p][l][idx].float(), "t (h d) -> 1 h t d", h=heads)
        return lambda old: value.to(old.dtype)

    clean = model(x).logits.float()
    out = model(x, hooks={f"blocks.{l}.attn.{HOOK_OF[p]}": hook_for(l) for l in layers}).logits.float()
    ce = lambda lg: F.cross_entropy(lg[0], y[0], reduction="none")   # noqa: E731
    c, o = ce(clean), ce(out)

    def tops(lg):
        t = lg[0].topk(top, dim=-1).indices.tolist()
        return [[decode([i]) for i in row] for row in t] if decode else t
    return {"clean_loss": float(c.mean()), "loss": float(o.mean()), "delta": float((o - c).mean()),
            "token_delta": (o - c).tolist(), "clean_top": tops(clean), "top": tops(out)}


# ---------------------------------------------------------------------------------------------------------------
# The course's answers, from the stored result


def _cell(result: dict, key: str) -> dict:
    d = result["per_third"][key]
    return {"mean": d["mean"], "ci": list(d["ci"])}


def _third_mean(per_layer: list[float], layers: list[int]) -> float:
    xs = [per_layer[l] for l in layers if per_layer[l] is not None and not math.isnan(per_layer[l])]
    return sum(xs) / len(xs) if xs else float("nan")


def _fmt(c: dict) -> str:
    return f"{c['mean']:+.2f} [{c['ci'][0]:+.2f}, {c['ci'][1]:+.2f}]"


PREV = "previous layer's pattern"


def decoder_answers(result: dict, lang: str | None = None) -> dict[str, dict]:
    """The real decoder's numbers for each of the course's four questions (``q1``..``q4``), read from a stored
    ``real-decoder`` result: ``{"question", "numbers", "verdicts": {test: verdict}, "sentence"}`` each; loss changes
    are in nats per token (mean [95 % interval] over the evaluation sequences), always of the **last third**.
    ``lang``: the language of ``question`` and ``sentence`` (``None``: the running edition's).

    Raises:
        KeyError: ``result`` is not a real-decoder result (no ``per_third``).
    """
    late = result["thirds"]["late"]
    verdicts = {r["name"]: r["verdict"] for r in result.get("verdicts", [])}
    ko = resolve_language(lang) == "ko"

    def vs(*names):
        return {n: verdicts.get(n, "not judged") for n in names}
    q1n = {k: _cell(result, f"{k} · late") for k in ("uniform pattern", "previous layer's pattern", "pattern swap",
                                                      "value swap")}
    q1 = {"question": ("How much does a deep layer depend on its freshly computed QK pattern?" if not ko else
                      "깊은 층은 새로 계산한 QK 패턴에 얼마나 의존합니까?"), "numbers": q1n,
          "verdicts": vs("late_pattern_swap_within_tolerance", "late_previous_pattern_within_tolerance",
                         "late_value_swap_costs_more_than_pattern_swap"),
          "sentence": (f"Last third of the real decoder: another sequence's patterns cost {_fmt(q1n['pattern swap'])} "
                       f"nats, the previous layer's {_fmt(q1n[PREV])}, "
                       f"uniform attention {_fmt(q1n['uniform pattern'])}; another sequence's values "
                       f"{_fmt(q1n['value swap'])}." if not ko else
                       f"실제 디코더의 마지막 3분의 1에서 다른 시퀀스의 패턴은 {_fmt(q1n['pattern swap'])} nats, "
                       f"이전 층의 패턴은 {_fmt(q1n[PREV])} nats, 균등 어텐션은 {_fmt(q1n['uniform pattern'])} nats, "
                       f"다른 시퀀스의 값은 {_fmt(q1n['value swap'])} nats의 비용이 듭니다.")}
    r2 = result["describe"].get("table_r2", {})
    q2n = {f"{p} table": _cell(result, f"{p} table · late") for p in "QKV"}
    q2n["V := W_V·norm(x0)"] = _cell(result, "V := W_V·norm(x0) · late")
    for key in (f"{p} table (shrunk)" for p in "QKV"), (f"{p} := W_{p}·norm(x0)" for p in "QK"):
        for k in key:
            if f"{k} · late" in result["per_third"]:          # a result made before the three estimators has none
                q2n[k] = _cell(result, f"{k} · late")
    q2n["table_r2_late"] = {p: _third_mean(r2[p], late) for p in r2}
    q2n["bridge_recovered_share"] = result.get("bridge", {}).get("recovered_share")
    q2 = {"question": ("How much early information is kept through V?" if not ko else
                      "초기 정보는 V를 통해 얼마나 유지됩니까?"), "numbers": q2n,
          "verdicts": vs("late_v_table_beats_q_table", "late_v_table_beats_k_table", "late_v_table_within_tolerance",
                         "late_v_x0_within_tolerance", "late_v_shrunk_beats_q_shrunk", "late_v_shrunk_beats_k_shrunk",
                         "late_v_shrunk_within_tolerance", "late_v_x0_beats_q_x0", "late_v_x0_beats_k_x0"),
          "sentence": (f"Replacing the last third's Q, K or V by its per-token table costs {_fmt(q2n['Q table'])}, "
                       f"{_fmt(q2n['K table'])} and {_fmt(q2n['V table'])} nats; V := W_V·norm(x0) costs "
                       f"{_fmt(q2n['V := W_V·norm(x0)'])}." if not ko else
                       f"마지막 3분의 1의 Q, K, V를 토큰별 표로 바꾸면 각각 {_fmt(q2n['Q table'])}, "
                       f"{_fmt(q2n['K table'])}, {_fmt(q2n['V table'])} nats의 비용이 듭니다. "
                       f"V := W_V·norm(x0)의 비용은 {_fmt(q2n['V := W_V·norm(x0)'])} nats입니다.")}
    lens, probes = result["describe"].get("logit_lens", []), result.get("probes", {})
    final = lens[-1] if lens else float("nan")
    within = next((l for l, x in enumerate(lens[:-1]) if x - final < 1.0), None) if lens else None
    dla = result["describe"].get("dla", {})
    total = dla.get("embed", 0.0) + sum(dla.get("attn", [])) + sum(dla.get("mlp", []))
    late_dla = sum(dla["attn"][l] + dla["mlp"][l] for l in late) if dla else float("nan")
    q3n = {"logit_lens_final": final, "first_layer_within_1_nat": within,
           "input_x0_r2_late": _third_mean(probes.get("x0_r2", {}).get("input", []), late) if probes else None,
           "input_recent_r2_late": _third_mean(probes.get("recent_r2", []), late) if probes else None,
           "late_share_of_dla": late_dla / total if total else float("nan")}
    q3 = {"question": ("Is the residual stream mere accumulation, or can it be a selective read over depth?"
                       if not ko else
                      "잔차 스트림은 단순한 누적입니까, 아니면 깊이에 걸친 선택적 읽기일 수 있습니까?"),
          "numbers": q3n, "verdicts": {},
          "sentence": ((f"The last third's inputs: x0-R² {q3n['input_x0_r2_late']:.2f}, R² from the last "
                        f"{probes.get('recent', 3)} layers' writes {q3n['input_recent_r2_late']:.2f}; the last third "
                        f"writes {q3n['late_share_of_dla']:.0%} of the direct logit attribution." if not ko else
                        f"마지막 3분의 1의 입력: x0-R² {q3n['input_x0_r2_late']:.2f}, 직전 "
                        f"{probes.get('recent', 3)}개 층이 쓴 것으로부터의 R² {q3n['input_recent_r2_late']:.2f}. "
                        f"마지막 3분의 1은 직접 로짓 기여의 {q3n['late_share_of_dla']:.0%}를 씁니다.")
                       if probes and dla else
                       ("no Q3 read-outs in this result" if not ko else "이 결과에는 Q3 측정값이 없습니다"))}
    rows = [r for r in result.get("price_list", []) if r["layers"] != [0]]   # layer 0's tables are exact
    ok = [r for r in rows if r["within"]]
    thirds_ok = [r for r in ok if r["where"] in result["thirds"]]
    total = result["kv_bytes"]["total"]
    most = max((r["bytes_saved"] for r in ok), default=0)
    q4n = {"within_tolerance": len(ok), "measured": len(rows), "thirds_within": len(thirds_ok),
           "most_bytes_within": most, "kv_bytes_per_token": total,
           "V := V_1": _cell(result, "V := V_1 · late"), "shared V": _cell(result, "shared V · late")}
    q4 = {"question": ("Can efficiency or interpretability come from V reuse rather than QK?" if not ko else
                      "효율이나 해석 가능성은 QK가 아니라 V 재사용에서 나올 수 있습니까?"), "numbers": q4n,
          "verdicts": vs("late_v1_reuse_within_tolerance", "late_shared_v_within_tolerance"),
          "sentence": (f"{len(ok)} of {len(rows)} cache-saving substitutions (layer 0's exact ones left out) stay "
                       f"within {result['tolerance']} nats, {len(thirds_ok)} of them for a whole third; the most "
                       f"any of them saves is {most:,} of {total:,} KV-cache bytes per token ({most / total:.1%}). "
                       f"Last third V := V_1 costs {_fmt(q4n['V := V_1'])}, shared V {_fmt(q4n['shared V'])}."
                       if not ko else
                       f"캐시를 절약하는 대체 {len(rows)}개 중 {len(ok)}개(정확한 0층의 것은 제외)가 "
                       f"{result['tolerance']} nats 이내에 머물고, 그중 {len(thirds_ok)}개는 3분의 1 구간 전체에 "
                       f"대한 것입니다. 그중 가장 많이 절약하는 것은 토큰당 KV 캐시 {total:,}바이트 중 "
                       f"{most:,}바이트({most / total:.1%})입니다. 마지막 3분의 1에서 V := V_1의 비용은 "
                       f"{_fmt(q4n['V := V_1'])} nats, 공유 V의 비용은 {_fmt(q4n['shared V'])} nats입니다.")}
    return {"q1": q1, "q2": q2, "q3": q3, "q4": q4}


TOY_RECIPES = ("value-residual", "bank-of-values")   # the toys' result files the comparison reads (verdict corpus)


def _record(result: dict | None, name: str, key: str = "verdicts") -> dict | None:
    return next((r for r in (result or {}).get(key, []) if r.get("name") == name), None)


def load_toys(corpus: str | None = None) -> dict[str, dict | None]:
    """The stored toy results :func:`toy_comparison` reads, on ``corpus`` (default: the verdict corpus of chapters
    03-04, :func:`~vrs_edu.lab.by_corpus.verdict_corpus`); None for a file not made yet."""
    out = {}
    for name in TOY_RECIPES:
        try:
            out[name] = load_results(name, corpus=corpus or verdict_corpus())
        except FileNotFoundError:
            out[name] = None
    return out


# toy_comparison's findings in their order, with the chapters each comes from
TOY_FINDINGS = {"attention concentrates (entropy below uniform-causal attention's)": "03",
                "deep layers' inputs are mostly token identity (x0-R² > 0.5)": "04, 05",
                "V, more than Q and K, carries the token alone in the deep layers": "04",
                "deep V computed from the token's embedding, W_V·x0": "04",
                "deep layers attend over the first layer's values (SVFormer)": "03, 06"}
# toy_comparison's words in Korean: its findings, its cells' templates and its answers to "agree?"
TOY_FINDINGS_KO = {
    "attention concentrates (entropy below uniform-causal attention's)":
        "어텐션이 집중됨 (엔트로피가 균등 인과 어텐션의 것보다 낮음)",
    "deep layers' inputs are mostly token identity (x0-R² > 0.5)": "깊은 층의 입력은 대부분 토큰 정체성임 (x0-R² > 0.5)",
    "V, more than Q and K, carries the token alone in the deep layers":
        "깊은 층에서 토큰만을 나르는 것은 Q와 K보다 V임",
    "deep V computed from the token's embedding, W_V·x0": "깊은 층의 V를 토큰의 임베딩에서 계산함, W_V·x0",
    "deep layers attend over the first layer's values (SVFormer)": "깊은 층이 첫 층의 값에 어텐션함 (SVFormer)"}
AGREE_KO = {"yes": "예", "no": "아니요", "n/a": "해당 없음", "another question": "다른 질문"}


def _toy_facts(result: dict, toys: dict[str, dict | None]) -> dict:
    """What :func:`toy_comparison` states, read once for both languages: the toys' records (``conc``, ``ctx``,
    ``reads`` (V − Q and V − K; None unless both are stored), ``sub``, ``sv``; None where not stored), the decoder's
    numbers (``gap``: each layer's entropy minus uniform's, layer 0 left out; ``below``: how many lie below;
    ``x0_in``; ``tab``: the last third's table costs by projection, ``most``: the one that costs least; ``x0v``,
    ``v1``) and ``agree``: the five answers, "yes", "no", "n/a" (the toy's record is not stored) or "another
    question"."""
    late, d = result["thirds"]["late"], result["describe"]
    vr, bov = toys.get("value-residual"), toys.get("bank-of-values")
    conc = _record(vr, "baseline_concentrated")                   # chapter 03: the premise of the entropy claim
    gap = [e - d["uniform_entropy"] for e in d["entropy"][1:]]
    below = sum(g < 0 for g in gap)
    ctx = _record(bov, "deep_context", "preconditions")           # chapters 04-05: how much input is the token
    x0_in = _third_mean(result["probes"]["x0_r2"]["input"], late)
    tab = {q: result["per_third"][f"{q} table · late"]["mean"] for q in "QKV"}   # which path carries the token
    most = min(tab, key=tab.get)
    reads = [_record(bov, f"v_reads_x0_more_than_{q}") for q in "qk"]
    reads = reads if all(reads) else None
    agree = ["n/a" if conc is None else ("yes" if (conc["mean"] < 0) == (below > len(gap) / 2) else "no"),
             "n/a" if ctx is None else ("yes" if (ctx["value"] > 0.5) == (x0_in > 0.5) else "no"),
             "n/a" if not reads else ("yes" if all(r["mean"] > 0 for r in reads) == (most == "V") else "no"),
             "another question", "another question"]     # trained with the mechanism vs imposed after training
    return {"conc": conc, "gap": gap, "below": below, "ctx": ctx, "x0_in": x0_in, "tab": tab, "most": most,
            "reads": reads, "sub": _record(bov, "substitute_loss"), "sv": _record(vr, "svformer_cost"),
            "x0v": result["per_third"]["V := W_V·norm(x0) · late"]["mean"],
            "v1": result["per_third"]["V := V_1 · late"]["mean"], "agree": agree}


def _toy_cell(toys: dict, recipe: str, rec: dict | None, fmt: str, lang: str) -> str:
    """A toy's cell: ``fmt`` filled from its stored record (its verdict in ``lang``'s words), or why there is none."""
    ko = lang == "ko"
    if toys.get(recipe) is None:
        return f"{'아직 만들지 않음' if ko else 'not made yet'}: `vrs-edu reproduce {recipe} --corpus kjv`"
    if rec is None:
        return f"저장된 {recipe} 결과에 없음" if ko else f"not in the stored {recipe} result"
    return fmt.format(**{**rec, "verdict": verdict_word(rec.get("verdict"), "ko")}) if ko else fmt.format(**rec)


def _toy_cells_en(f: dict, toys: dict) -> list[tuple[str, str]]:
    """:func:`toy_comparison`'s (toy, decoder) cells in English, one pair per finding."""
    gap, tab, trained = f["gap"], f["tab"], "trained so: {mean:+.3f} nats vs baseline, {verdict}"
    reads = ("; ".join(f"V − {q.upper()} x0 share {r['mean']:+.2f}, {r['verdict']}" for q, r in zip("qk", f["reads"]))
             if f["reads"] else _toy_cell(toys, "bank-of-values", None, "", "en"))
    return [(_toy_cell(toys, "value-residual", f["conc"], "baseline {mean:+.3f} nats vs uniform, {verdict}", "en"),
             f"{f['below']} of {len(gap)} layers below uniform; mean {sum(gap) / len(gap):+.2f} nats"),
            (_toy_cell(toys, "bank-of-values", f["ctx"], "x0-R² {value:.2f} (baselines' x0 layers)", "en"),
             f"x0-R² {f['x0_in']:.2f} (last third's inputs)"),
            (reads, "tables cost " + ", ".join(f"{q} {tab[q]:+.2f}" for q in "QKV")
             + f" nats: {f['most']} tolerates its table best"),
            (_toy_cell(toys, "bank-of-values", f["sub"], trained, "en"),
             f"imposed after training: {f['x0v']:+.2f} nats"),
            (_toy_cell(toys, "value-residual", f["sv"], trained, "en"), f"imposed after training: {f['v1']:+.2f} nats")]


def _toy_cells_ko(f: dict, toys: dict) -> list[tuple[str, str]]:
    """:func:`toy_comparison`'s (toy, decoder) cells in Korean, one pair per finding."""
    gap, tab, trained = f["gap"], f["tab"], "그렇게 학습함: 기준선 대비 {mean:+.3f} nats, {verdict}"
    reads = ("; ".join(f"V − {q.upper()} x0 비중 {r['mean']:+.2f}, {verdict_word(r['verdict'], 'ko')}"
                       for q, r in zip("qk", f["reads"])) if f["reads"] else
             _toy_cell(toys, "bank-of-values", None, "", "ko"))
    return [(_toy_cell(toys, "value-residual", f["conc"], "기준선, 균등 대비 {mean:+.3f} nats, {verdict}", "ko"),
             f"층 {len(gap)}개 가운데 {f['below']}개가 균등보다 낮음; 평균 {sum(gap) / len(gap):+.2f} nats"),
            (_toy_cell(toys, "bank-of-values", f["ctx"], "x0-R² {value:.2f} (기준선들의 x0 층)", "ko"),
             f"x0-R² {f['x0_in']:.2f} (마지막 3분의 1의 입력)"),
            (reads, "표의 비용 " + ", ".join(f"{q} {tab[q]:+.2f}" for q in "QKV")
             + f" nats: 자기 표를 가장 잘 견디는 것은 {f['most']}"),
            (_toy_cell(toys, "bank-of-values", f["sub"], trained, "ko"), f"학습 후에 부과함: {f['x0v']:+.2f} nats"),
            (_toy_cell(toys, "value-residual", f["sv"], trained, "ko"), f"학습 후에 부과함: {f['v1']:+.2f} nats")]


def toy_comparison(result: dict, toys: dict[str, dict | None], lang: str | None = None) -> list[dict]:
    """Where the real decoder agrees with the toy models of chapters 03-05, and where not: one row per finding,
    ``{"finding", "chapter", "toy", "decoder", "agree"}`` (the first four strings; ``agree`` "yes", "no", or
    "another question" where the toy *trained* with a mechanism that the decoder only has imposed after training).

    ``toys`` maps a recipe of :data:`TOY_RECIPES` to its stored result on the verdict corpus (None: not made; its
    rows then say which command makes it). The toys' numbers are their stored declared-test records (mean over
    seeds, verdict) and preconditions; the decoder's are the last third's, over its evaluation sequences.
    ``agree`` compares the directions of the two numbers, whatever the toy's verdict (which the row shows). Chapter
    02's swaps are measured live in chapter 02, on its own model, and are not in a result file. The numbers and
    answers are :func:`_toy_facts`'s, the same for both languages.
    ``lang``: the language of the cells (``None``: the running edition's); in Korean the verdicts are the course's
    Korean words and ``agree`` one of :data:`AGREE_KO`'s.
    """
    f = _toy_facts(result, toys)
    if resolve_language(lang) == "ko":
        return [{"finding": TOY_FINDINGS_KO[finding], "chapter": chapter, "toy": toy, "decoder": dec,
                 "agree": AGREE_KO[agree]}
                for (finding, chapter), (toy, dec), agree in zip(TOY_FINDINGS.items(), _toy_cells_ko(f, toys),
                                                                  f["agree"])]
    return [{"finding": finding, "chapter": chapter, "toy": toy, "decoder": dec, "agree": agree}
            for (finding, chapter), (toy, dec), agree in zip(TOY_FINDINGS.items(), _toy_cells_en(f, toys), f["agree"])]


VERDICT_COLUMNS = ("test", "kind / family", "mean [95 % CI] (nats)", "vs", "p (Holm)", "verdict")


# the families of chapter 08's declared tests (recipe and decoder-norms), in Korean
FAMILY_KO = {"primary": "주요", "q1": "질문 1", "q2": "질문 2", "q3": "질문 3", "q4": "질문 4", "sink": "싱크",
             "mixing": "혼합", "depth": "깊이", "check: identity": "점검: 항등 패치",
             "check: half V−Q": "점검: 절반 텍스트 V−Q", "check: half V−K": "점검: 절반 텍스트 V−K",
             "check: half V": "점검: 절반 텍스트 V"}


def _verdict_row_facts(r) -> dict:
    """What a row of :func:`verdict_rows` states besides the test's names, the same for both languages: ``p``
    (Holm's p, two digits, "–" where there is none), ``mean`` (the interval, four decimals), ``form``
    ("band": an equivalence test against ±margin, "band around": against threshold ± margin, "sign": a side of
    the threshold, ``side`` "<" or ">"), ``would_be`` (beside an out-of-regime verdict) and ``reason`` (printed
    only for an out-of-regime verdict)."""
    t = r.test
    form = ("band" if t.threshold == 0 else "band around") if getattr(t, "form", "sign") == "equivalence" else "sign"
    return {"p": "–" if math.isnan(r.p_holm) else f"{r.p_holm:.2g}",
            "mean": f"{r.mean:+.4f} [{r.ci[0]:+.4f}, {r.ci[1]:+.4f}]", "form": form,
            "side": "<" if t.direction == "negative" else ">", "would_be": getattr(r, "would_be", None),
            "reason": r.reason if r.reason and r.verdict == "out of regime" else None}


def _vs(t, f: dict, band: str, band_around: str) -> str:
    """The threshold cell: ``band`` or ``band_around`` (templates of ``m`` and ``t``) for an equivalence test,
    ``< t`` or ``> t`` for a sign test."""
    if f["form"] == "sign":
        return f"{f['side']} {t.threshold:g}"
    return (band if f["form"] == "band" else band_around).format(m=f"{t.margin:g}", t=f"{t.threshold:g}")


def _verdict_row_ko(r) -> list[str]:
    """One row of :func:`verdict_rows` in Korean: the test by its name in code, kind and family in the course's
    words, the threshold (``±0.05 이내``), the verdict and its reason in Korean."""
    t, f = r.test, _verdict_row_facts(r)
    word = verdict_label(r.verdict, f["would_be"], "ko")
    verdict = word + (f" ({reason_in(f['reason'], 'ko', code=True)})" if f["reason"] else "")
    return [f"`{t.name}`", f"{KIND_KO.get(t.kind, t.kind)} / {FAMILY_KO.get(t.family, t.family)}", f["mean"],
            _vs(t, f, "±{m} 이내", "{t} ± {m} 이내"), f["p"], verdict]


def _verdict_row_en(r) -> list[str]:
    """One row of :func:`verdict_rows` in English: the test's name in words, kind and family, the threshold
    (``within ±0.05``), the verdict with its would-be verdict and, out of regime, its reason."""
    t, f = r.test, _verdict_row_facts(r)
    word = verdict_label(r.verdict, f["would_be"], "en")   # as the Korean row: would-be beside out of regime, n/a
    verdict = word + (f" ({f['reason']})" if f["reason"] else "")
    return [t.name.replace("_", " "), f"{t.kind} / {t.family}", f["mean"],
            _vs(t, f, "within ±{m}", "within {t} ± {m}"), f["p"], verdict]


def verdict_rows(rows, lang: str | None = None) -> list[list[str]]:
    """The declared tests' verdicts (:class:`~vrs_edu.lab.results.Verdict`) as the cells of a Markdown table under
    :data:`VERDICT_COLUMNS`: the interval of the per-sequence mean, the threshold it is compared with, Holm's p
    within the family, and the verdict with its reason when it is out of regime (:func:`_verdict_row_facts`, the
    same for both languages). ``lang``: the edition (``None``: the running notebook's); in Korean a test is named
    by its code name."""
    row = _verdict_row_ko if resolve_language(lang) == "ko" else _verdict_row_en
    return [row(r) for r in rows]


def load_demo(path, decoder, sentences: list[str]) -> tuple[dict, dict]:
    """The widget's stored table rows (``demo-tables.safetensors``, written by the recipe) and its sentences.
    ``path``: absolute, or relative to the repository's root (as the result stores it). Returns ``(demo,
    sentences)``: ``demo = {"rows": {p: (L, N, D_p) float32}, "row_of": {token id: row}, "decode"}``
    and ``{sentence: (ids (T + 1,), tokens)}``.

    Raises:
        FileNotFoundError: the file is missing (the message names the command that makes it).
    """


    path = Path(path)
    if not path.is_absolute():            # stored relative to the repository's root
        path = CHECKPOINT_DIR.parent.parent / path
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: run `vrs-edu reproduce real-decoder`")
    raw = load_file(str(path))
    demo = {"rows": {p: raw[p].float() for p in PROJ}, "row_of": {int(t): i for i, t in enumerate(raw["tokens"])},
            "decode": decoder.decode}
    out = {}
    for s in sentences:
        ids = decoder.encode(s)
        out[s] = (ids, decoder.tokens(ids))
    return demo, out


def run_line(result: dict) -> str:
    """The provenance line of a real-decoder result (:func:`~vrs_edu.lab.experiments.provenance`). The recipe runs in
    one process on all of torch's threads; the runner records its default ``jobs`` anyway, which provenance would
    read as parallel one-thread runs, so the line is made with ``jobs`` = 1."""
    return provenance({**result, "environment": {**result["environment"], "jobs": 1}})


def half_table_costs(per_third: dict) -> dict[str, float]:
    """Last third: the mean cost (nats) of the tables made from each half of the calibration text, averaged over
    the two halves, per projection ``"Q"``, ``"K"``, ``"V"`` (``per_third``: the result's ``per_third``)."""
    return {p: (per_third[f"{p} table, half 0 · late"]["mean"] + per_third[f"{p} table, half 1 · late"]["mean"]) / 2
            for p in "QKV"}


def verdict_words(rec, lang: str | None = None) -> str:
    """A verdict in the course's words, its would-be verdict beside an *out of regime* one: ``contradicted``,
    ``out of regime (would be: contradicted)`` (Korean: ``반박됨``, ``적용 범위 밖 (판정한다면: 반박됨)``). ``rec``: a
    :class:`~vrs_edu.lab.results.Verdict` or a stored record (or an
    :func:`~vrs_edu.chapters.ch08_real_decoder.recipe.agreed` reading); ``lang``: ``None`` is the running edition."""
    get = rec.get if isinstance(rec, dict) else (lambda k, d=None: getattr(rec, k, d))
    return verdict_label(get("verdict"), get("would_be"), resolve_language(lang))


HALF_CHECKS = {"half_calibration_v_minus_q": "V − Q", "half_calibration_v_minus_k": "V − K",
               "half_calibration_v": "V's own cost"}
HALF_CHECKS_KO = {"half_calibration_v_minus_q": "V − Q", "half_calibration_v_minus_k": "V − K",
                  "half_calibration_v": "V 자체의 비용"}


def _half_failed(checks: dict) -> list[str]:
    """The half-text checks (names, in :data:`HALF_CHECKS`'s order) that did not hold: a verdict other than
    *reproduced*."""
    return [name for name in HALF_CHECKS if checks[name].verdict != "reproduced"]


def _half_calibration_ko(checks: dict, margin: float, failed: list[str]) -> str:
    parts = [f"{what} {checks[name].interval()} ({verdict_words(checks[name], 'ko')})"
             for name, what in HALF_CHECKS_KO.items()]
    out = ("캘리브레이션 텍스트를 절반으로 줄이면 대비가 시퀀스마다 이만큼 움직입니다(절반 텍스트 − 전체 텍스트, 마지막 "
           "3분의 1): " + "; ".join(parts) + f" nats. 기준은 ±{margin:g} 범위입니다(동등성 검정).")
    if not failed:
        return out + (" 모든 점검이 성립합니다. 텍스트를 두 배로 늘려 만든 표도 대비를 그 범위보다 더 움직이지 않을 "
                      "것이므로, 대비는 추정이 아니라 투영에서 나옵니다.")
    return out + (" 점검이 성립하지 않는 곳(" + ", ".join(HALF_CHECKS_KO[n] for n in failed) + ")에서는 그 대비의 "
                  "일부가 여전히 추정에서 나올 수 있으므로, 그 점검이 필요한 주장은 적용 범위 밖입니다(가상 판정을 옆에 "
                  "출력합니다).")


def _half_calibration_en(checks: dict, margin: float, failed: list[str]) -> str:
    parts = [f"{what} {checks[name].interval()} ({verdict_words(checks[name], 'en')})"
             for name, what in HALF_CHECKS.items()]
    out = ("Halving the calibration text moves the contrasts, per sequence (half-text − full-text, last third): "
           + "; ".join(parts) + f" nats, against a band of ±{margin:g} (an equivalence test).")
    if not failed:
        return out + (" Every check holds: a table from twice the text would not move the contrasts by more than "
                      "the band, so they are the projections', not the estimate's.")
    return out + (" Where a check does not hold (" + ", ".join(HALF_CHECKS[n] for n in failed) + "), the estimate "
                  "may still be part of what that contrast is made of, and the claims that need the check are out "
                  "of regime (their would-be verdict is printed beside them).")


def half_calibration_sentence(checks: dict, margin: float, lang: str | None = None) -> str:
    """What the half-text checks measured, in words: per contrast (V − Q, V − K, V alone; last third, mean tables)
    how much it moves when the tables come from half the calibration text instead of all of it (mean and 95 %
    interval over the sequences, nats), against the declared band ±``margin``, and each check's verdict with what
    it means for the claims that need it (the checks that did not hold: :func:`_half_failed`, the same for both
    languages). ``checks``: the three checks' verdicts by name (:data:`HALF_CHECKS`); ``lang``: the sentence's
    language (``None``: the running edition's)."""
    words = _half_calibration_ko if resolve_language(lang) == "ko" else _half_calibration_en
    return words(checks, margin, _half_failed(checks))


ESTIMATOR_LABELS = {"mean": "mean table", "shrunk": "shrunk table", "x0": "W·norm(x0)"}
# the same three in Korean (the course's words: 평균 표, 수축 표)
ESTIMATOR_LABELS_KO = {"mean": "평균 표", "shrunk": "수축 표", "x0": "W·norm(x0)"}


def estimator_rows(result: dict) -> list[list[str]]:
    """Last third, the cost (nats, mean [95 % CI]) of Q, K and V replaced by each of the three context-free
    estimators, one row per estimator: ``[estimator, Q, K, V, sequences]`` (the cells of a Markdown table)."""
    pt, out = result["per_third"], []
    for e in ESTIMATORS:
        cells = [pt[f"{estimator(e, p)} · late"] for p in "QKV"]
        out.append([ESTIMATOR_LABELS[e], *(f"{c['mean']:+.2f} [{c['ci'][0]:+.2f}, {c['ci'][1]:+.2f}]" for c in cells),
                    str(cells[2]["n"])])
    return out


AGREED_CLAIMS = {"late_v_beats_q": "V tolerates its context-free substitute better than Q",
                 "late_v_beats_k": "V tolerates its context-free substitute better than K",
                 "late_v_within_tolerance": "V's context-free substitute costs within the tolerance"}


AGREED_CLAIMS_KO = {"late_v_beats_q": "V는 Q보다 문맥 없는 대체물을 잘 견딘다",
                    "late_v_beats_k": "V는 K보다 문맥 없는 대체물을 잘 견딘다",
                    "late_v_within_tolerance": "V의 문맥 없는 대체물의 비용은 허용 범위 안에 든다"}


def _agreement(readings: dict) -> dict[str, tuple[dict, list[str], bool]]:
    """Per claim of :data:`AGREED_CLAIMS` (in its order): its reading, the three estimators' verdicts in
    :data:`ESTIMATOR_LABELS`'s order, and whether they all agree; the same for both languages."""
    out = {}
    for key in AGREED_CLAIMS:
        each = list(readings[key]["each"].values())
        out[key] = (readings[key], each, len(set(each)) == 1)
    return out


def _agreed_ko(readings: dict) -> str:
    out = []
    for key, (r, each, same) in _agreement(readings).items():
        agree = "세 추정량이 모두 일치합니다" if same else "추정량마다 다릅니다(" + ", ".join(
            f"{ESTIMATOR_LABELS_KO[e]}: {verdict_word(w, 'ko')}" for e, w in zip(ESTIMATOR_LABELS_KO, each)) + ")"
        out.append(f"'{AGREED_CLAIMS_KO[key]}': **{verdict_words(r, 'ko')}** — {agree}")
    return "세 추정량이 모두 일치할 때만 셉니다. " + "; ".join(out) + "."


def _agreed_en(readings: dict) -> str:
    out = []
    for key, (r, each, same) in _agreement(readings).items():
        agree = "all three estimators agree" if same else "the estimators differ (" + ", ".join(
            f"{ESTIMATOR_LABELS[e]} {w}" for e, w in zip(ESTIMATOR_LABELS, each)) + ")"
        out.append(f"'{AGREED_CLAIMS[key]}': **{verdict_words(r, 'en')}** — {agree}")
    return "Counted only where all three estimators agree: " + "; ".join(out) + "."


def agreed_sentence(readings: dict, lang: str | None = None) -> str:
    """The three claims judged with the three estimators, each counted only where all three agree
    (``readings``: :func:`~vrs_edu.chapters.ch08_real_decoder.recipe.agreed`): one clause per claim with its
    combined verdict (with the would-be verdict when out of regime) and, when the estimators differ, each one's
    word (:func:`_agreement`, the same for both languages). ``lang``: the sentence's language (``None``: the
    running edition's)."""
    return _agreed_ko(readings) if resolve_language(lang) == "ko" else _agreed_en(readings)


def failed_checks(result: dict, tests: list[str]) -> dict[str, str]:
    """The declared checks that ``tests`` require (their stored ``requires``) and that did not hold, as
    ``{check name: verdict}`` in the order declared: a check holds only when its verdict is "reproduced". Names in
    ``requires`` that are not checks (a precondition such as ``coverage``) are left out."""
    by = {r["name"]: r for r in result.get("verdicts", [])}
    out: dict[str, str] = {}
    for t in tests:
        for need in by.get(t, {}).get("requires", []):
            rec = by.get(need)
            if rec is not None and rec.get("kind") == "check" and rec["verdict"] != "reproduced":
                out[need] = rec["verdict"]
    return out


def _not_judged(checks: dict[str, str] | None, lang: str = "en") -> str:
    if lang == "ko":
        if not checks:
            return " (판정하지 않음: 선언된 전제 조건이 성립하지 않았습니다)"
        each = [f"{attach(f'`{name}`', '은/는')} {verdict_word(verdict, 'ko')}" for name, verdict in checks.items()]
        return " (판정하지 않음: 선언된 점검이 성립하지 않았습니다 — " + ", ".join(each) + ")"
    if not checks:
        return " (not judged: a declared precondition did not hold)"
    each = [f"`{name}` is {verdict}" for name, verdict in checks.items()]
    joined = ", ".join(each[:-1]) + f" and {each[-1]}" if len(each) > 1 else each[0]
    return f" (not judged: the declared check{'s' if len(each) > 1 else ''} did not hold — {joined})"


POST_HOC_READING = {"opposite": "the opposite of the article's reading",
                    "predicted": "as the article's reading predicts",
                    "between": "between the two: V costs more than one of Q and K and less than the other"}
POST_HOC_READING_KO = {"opposite": "원문의 해석과 반대입니다", "predicted": "원문의 해석이 예측하는 대로입니다",
                       "between": "둘 사이입니다: V는 Q와 K 중 하나보다 비싸고 다른 하나보다 쌉니다"}


def _post_hoc_facts(cost: dict[str, float], primary: list[str]) -> dict:
    """What :func:`post_hoc_sentence` states, the same for both languages: ``dq``, ``dk`` (V's table cost minus
    Q's and K's), ``reading`` ("opposite": V costs more than both, "predicted": less than both, "between"),
    ``same`` (the two claims have one verdict) and ``out_of_regime`` (one of them is out of regime, in either
    language's words)."""
    dq, dk = cost["V"] - cost["Q"], cost["V"] - cost["K"]
    reading = "opposite" if dq > 0 and dk > 0 else "predicted" if dq < 0 and dk < 0 else "between"
    return {"dq": dq, "dk": dk, "reading": reading, "same": primary[0] == primary[1],
            "out_of_regime": any(w.startswith(("out of regime", "적용 범위 밖")) for w in primary)}


def post_hoc_sentence(cost: dict[str, float], primary: list[str], checks: dict[str, str] | None = None,
                      lang: str | None = None) -> str:
    """The closing paragraph's post-hoc question: how much more (or less) V's table costs than Q's and K's in the
    last third (``cost``: nats per projection), whether that is the article's reading or its opposite (words from the
    signs), and the two claims' verdicts (``primary``: 'V beats Q', 'V beats K', each the reading of the three
    estimators, :func:`verdict_words` of :func:`~vrs_edu.chapters.ch08_real_decoder.recipe.agreed`). ``checks``: the
    declared checks that did not hold (:func:`failed_checks`), named when a reading is out of regime. The facts are
    :func:`_post_hoc_facts`'s, the same for both languages. ``lang``: the sentence's language (``None``: the
    running edition's)."""
    f = _post_hoc_facts(cost, primary)
    dq, dk = f["dq"], f["dk"]
    if resolve_language(lang) == "ko":
        verdicts = f"둘 다 *{primary[0]}*" if f["same"] else f"각각 *{primary[0]}*, *{primary[1]}*"
        return ("**사후적 질문**(표준 방식으로 학습된 이 디코더는 마지막 3분의 1의 V에 토큰 정체성만을 이미 담고 "
                f"있는가?): V의 평균 표의 비용은 Q의 것 대비 {dq:+.2f} nats, K의 것 대비 {dk:+.2f} nats입니다"
                f"({POST_HOC_READING_KO[f['reading']]}). 세 추정량이 일치할 때만 인정되는 주장 'V가 Q보다 낫다'와 "
                f"'V가 K보다 낫다'의 판정은 {verdicts}입니다" + (_not_judged(checks, "ko") if f["out_of_regime"] else "")
                + ". 판정이 무엇이든, 이 주장들은 표를 두고 학습한 적이 없는 모델에 관한 것입니다. 표를 그 자리에 "
                "두고 W_V를 학습하는 모델을 다룬 값 뱅크 논문을 반박하지도 확인하지도 않습니다.")
    verdicts = f"both *{primary[0]}*" if f["same"] else f"*{primary[0]}* and *{primary[1]}*"
    return ("**The post-hoc question** (does this decoder, trained the standard way, already carry only token "
            f"identity in its last third's V?): V's mean table costs {dq:+.2f} nats against Q's and {dk:+.2f} against "
            f"K's ({POST_HOC_READING[f['reading']]}); the claims 'V beats Q' and 'V beats K', counted only where the "
            f"three estimators agree, are {verdicts}"
            + (_not_judged(checks) if f["out_of_regime"] else "")
            + ". Whatever their verdict, they are about a model that never trained with a table: they neither "
            "refute nor confirm the bank-of-values paper, whose models learn W_V with the table in place.")


def context_free_pattern_sentence(result: dict, lang: str | None = None) -> str:
    """Question 1 from Question 2's contrasts: with Q or K of the whole last third context-free (each of the three
    estimators), every pattern there is computed from token identity and position alone. One sentence: the cost of
    each (nats, mean over the sequences), how many of the six lie within the tolerance (95 % interval inside
    ±tolerance), and what that says about the fresh pattern. Describes; the declared tests are the V-vs-Q and
    V-vs-K contrasts. ``lang``: the sentence's language (``None``: the running edition's)."""
    pt, tol = result["per_third"], result["tolerance"]
    cells = {(p, e): pt[f"{estimator(e, p)} · late"] for p in "QK" for e in ESTIMATORS}
    inside = [k for k, c in cells.items() if -tol < c["ci"][0] and c["ci"][1] < tol]
    costs = "; ".join(f"{p} " + " / ".join(f"{cells[(p, e)]['mean']:+.2f}" for e in ESTIMATORS) for p in "QK")
    if resolve_language(lang) == "ko":
        labels = ESTIMATOR_LABELS_KO
        lead = ("문맥 없는 Q나 K는 질문 1에도 답합니다. 그러면 마지막 3분의 1의 패턴은 토큰 정체성과 위치만으로 "
                f"계산됩니다. 그 비용({' / '.join(labels[e] for e in ESTIMATORS)}): {costs} nats. ")
        if not inside:
            return lead + (f"±{tol:g} nats 이내인 것은 하나도 없으므로, 마지막 3분의 1에는 문맥에서 계산한 패턴"
                           "(새 패턴, 적어도 새 q와 k)이 필요합니다.")
        names = ", ".join(f"{labels[e]}에 의한 {p}" for p, e in inside)
        return lead + (f"6개 중 {len(inside)}개가 ±{tol:g} nats 이내입니다({names}). 그 경우에는 문맥 없는 "
                       "쿼리나 키로 충분하고, 그 경로로는 새 패턴이 필요하지 않습니다.")
    lead = ("A context-free Q or K answers Question 1 too: with it, the last third's patterns are computed from "
            f"token identity and position alone. Their costs ({' / '.join(ESTIMATOR_LABELS.values())}): {costs} "
            "nats; ")
    if not inside:
        return lead + (f"none lies within ±{tol:g} nats, so the last third needs patterns computed from the context "
                       "(a fresh pattern, or at least fresh q and k).")
    names = ", ".join(f"{p} by the {ESTIMATOR_LABELS[e]}" for p, e in inside)
    return lead + (f"{len(inside)} of 6 lie within ±{tol:g} nats ({names}): there a context-free query or key "
                   "is enough, and the fresh pattern is not needed through that path.")
