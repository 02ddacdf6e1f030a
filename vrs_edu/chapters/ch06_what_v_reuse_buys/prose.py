"""Chapter 06's computed prose and its head-reading steps: the sentences and tables the chapter shows, built from
the rows of :func:`vrs_edu.lab.kv_cache.measure`, from the stored results of chapters 03-05, and from a trained
bank-of-values model (He et al., arXiv 2606.02780, sec. 4; SVFormer: Zhou et al., arXiv 2410.17897).

Every sentence chooses its words from the sign and size of the number it states ("saves" / "costs", "lower" /
"higher"), so that it cannot say "saves -0.5 KB"; tests/test_chapter06.py gives each a known input. A sentence that
names a verdict takes its words from that verdict (:func:`vrs_edu.lab.verdict_words.plain_verdict`): a *negligible* test is
never worded as a cost or a gain, and an out-of-regime one is shown with its would-be verdict.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

import re

from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.language import resolve_language
from vrs_edu.lab.results import interval
from vrs_edu.lab.verdict_words import plain_verdict, verdict_label, verdict_parts

NAMES = {"baseline": "baseline", "svformer": "SVFormer", "bank": "bank of values",
         "depth_attention": "Depth-Attention"}
NAMES_KO = {"baseline": "기준선", "svformer": "SVFormer", "bank": "값 뱅크", "depth_attention": "Depth-Attention"}


def per_token(rows: list[dict]) -> dict[str, float]:
    """Bytes per token of each variant in ``rows`` (from :func:`~vrs_edu.lab.kv_cache.measure`).

    Raises ValueError when a variant's bytes per token differ between context lengths (the cache would not be
    linear in T, and one number per variant would misreport it)."""
    out: dict[str, set] = {}
    for r in rows:
        out.setdefault(r["variant"], set()).add(r["bytes_per_token"])
    uneven = {v: sorted(s) for v, s in out.items() if len(s) > 1}
    if uneven:
        raise ValueError(f"bytes per token must not depend on T, got {uneven}")
    return {v: s.pop() for v, s in out.items()}


def cache_table(rows: list[dict], formula, lang: str | None = None) -> tuple[list[str], list[list]]:
    """(columns, rows) of the measured cache next to the formula: ``formula(row) -> bytes per token``; headers and
    variant names in ``lang`` (default: the running edition)."""
    ko = resolve_language(lang) == "ko"
    columns = (["변형", "T", "캐시 KB", "측정한 바이트/토큰", "공식", "V 텐서 수", "표 KB"] if ko else
               ["variant", "T", "cache KB", "bytes/token measured", "formula", "V tensors", "tables KB"])
    names = NAMES_KO if ko else NAMES
    body = [[names.get(r["variant"], r["variant"]), r["T"], f"{r['cache_bytes'] / 1024:.1f}",
             f"{r['bytes_per_token']:.0f}", formula(r), r["n_cached_v"], f"{r['table_bytes'] / 1024:.1f}"]
            for r in rows]
    return columns, body


def cache_sentence(rows: list[dict], lang: str | None = None) -> str:
    """The effect in one sentence: each V reuse's bytes per token against the baseline's, and the bank's tables, in
    ``lang`` (default: the running edition)."""
    b = per_token(rows)
    base = b["baseline"]
    tables = max(r["table_bytes"] for r in rows if r["variant"] == "bank") / 1024
    if resolve_language(lang) == "ko":
        parts = [f"{NAMES_KO[v]}는 **{b[v]:,.0f}**바이트"
                 f"({b[v] / base:.0%}, {_fewer(base - b[v], 'ko')})" for v in ("svformer", "bank") if v in b]
        return (f"모델이 만드는 캐시에서 측정하면, 토큰 하나에 기준선은 **{base:,.0f}**바이트, "
                + ", ".join(parts) + f"가 들며 이는 모든 문맥 길이에서 같습니다. 값 뱅크는 여기에 더해 문맥과 "
                f"무관하게 {tables:,.0f} KB의 표를 유지합니다.")
    parts = [f"{NAMES[v]} **{b[v]:,.0f}** ({b[v] / base:.0%}, {_fewer(base - b[v])})"
             for v in ("svformer", "bank") if v in b]
    return (f"Measured on the cache the model builds, a token costs the baseline **{base:,.0f}** bytes, "
            + " and ".join(parts) + f", at every context length; the bank also holds {tables:,.0f} KB of "
            "tables, whatever the context.")


def _fewer(saved: float, lang: str = "en") -> str:
    if lang == "ko":
        return f"{saved:,.0f}바이트 적음" if saved > 0 else f"{-saved:,.0f}바이트 많음" if saved < 0 else "같음"
    if saved > 0:
        return f"{saved:,.0f} fewer"
    return f"{-saved:,.0f} more" if saved < 0 else "the same"


def _saving_end(savings: dict[int, int], vocab_size: int) -> str:
    """How the saving's sign follows the paper's formula (save above T = |V|, cost below), the same for both
    languages: "not as the formula" (a sign against it), "changes at |V|" (contexts on both sides of |V|),
    "shorter" or "longer" (every context on one side, its sign the formula's)."""
    if not all((s > 0) == (T > vocab_size) and (s < 0) == (T < vocab_size) for T, s in savings.items()):
        return "not as the formula"
    if min(savings) < vocab_size < max(savings):
        return "changes at |V|"
    return "shorter" if max(savings) <= vocab_size else "longer"


SAVING_END = {"not as the formula": ": **not** the sign change at T = |V| the formula predicts.",
              "changes at |V|": ": the sign changes at T = |V|, as the formula says.",
              "shorter": ": every context here is shorter than |V|, and the sign is the one the formula gives.",
              "longer": ": every context here is longer than |V|, and the sign is the one the formula gives."}
SAVING_END_KO = {"not as the formula": "공식이 예측하는 T = |V|에서의 부호 변화는 **나타나지 않습니다**.",
                 "changes at |V|": "공식대로 T = |V|에서 부호가 바뀝니다.",
                 "shorter": "여기의 모든 문맥이 |V|보다 짧고, 부호는 공식이 주는 그대로입니다.",
                 "longer": "여기의 모든 문맥이 |V|보다 길고, 부호는 공식이 주는 그대로입니다."}


def saving_sentence(savings: dict[int, int], vocab_size: int, what: str, lang: str | None = None) -> str:
    """The bank's measured saving at each context T (bytes, ``{T: baseline − (bank cache + tables)}``) said in
    words: where it costs, breaks even and saves, and whether that changes at T = |V| as the paper's formula says
    (:func:`_saving_end`, the same for both languages). ``what`` names the model ("the character model"; in Korean
    the chapter's two English names are translated by :func:`model_name_ko`). In ``lang`` (default: the running
    edition)."""
    end = _saving_end(savings, vocab_size)
    if resolve_language(lang) == "ko":
        return _saving_sentence_ko(savings, vocab_size, model_name_ko(what), SAVING_END_KO[end])
    def say_one(T, s):
        kb = abs(s) / 1024
        return (f"saves {kb:,.1f} KB at T = {T}" if s > 0 else f"costs {kb:,.1f} KB at T = {T}" if s < 0
                else f"breaks even at T = {T}")
    return (f"On {what} (|V| = {vocab_size}) the bank " + ", ".join(say_one(T, s) for T, s in savings.items())
            + SAVING_END[end])


def model_name_ko(what: str) -> str:
    """The chapter's English model names in Korean: "the course's word model" -> "강좌의 단어 모델", "a 6-layer
    character model" -> "6층 문자 모델"; any other name is returned unchanged."""
    if what == "the course's word model":
        return "강좌의 단어 모델"
    m = re.fullmatch(r"an? (\d+)-layer character model", what)
    return f"{m.group(1)}층 문자 모델" if m else what


def _saving_sentence_ko(savings: dict[int, int], vocab_size: int, what: str, end: str) -> str:
    def say_one(T, s, last):
        kb = abs(s) / 1024
        if s > 0:
            return f"T = {T}에서 {kb:,.1f} KB를 " + ("절약합니다" if last else "절약하고")
        if s < 0:
            return f"T = {T}에서 {kb:,.1f} KB가 더 " + ("듭니다" if last else "들고")
        return f"T = {T}에서 손익이 " + ("같습니다" if last else "같고")
    items = list(savings.items())
    said = ", ".join(say_one(T, s, i == len(items) - 1) for i, (T, s) in enumerate(items))
    return f"{what}(|V| = {vocab_size})에서 값 뱅크는 {said}. {end}"


def loss_phrase(paired: dict) -> str:
    """A paired loss difference (``mean``, ``n_negative``, ``n``) as words: ``0.014 nats lower than the
    baseline's (5 of 5 seeds lower)``."""
    m = paired["mean"]
    side = "lower than" if m < 0 else "higher than" if m > 0 else "the same as"
    return (f"{abs(m):.3f} nats {side} the baseline's ({paired['n_negative']} of {paired['n']} seeds lower)"
            if m else f"the same as the baseline's ({paired['n_negative']} of {paired['n']} seeds lower)")


def stored_test(result: dict | None, test: str) -> dict | None:
    """A stored declared test of a recipe's result (``name, claim, verdict, mean, ci``), or None."""
    return {v["name"]: v for v in (result or {}).get("verdicts", [])}.get(test)


def live_test(result: dict | None, verdicts, test: str) -> dict | None:
    """A declared test of a recipe's result judged now with the recipe's current declarations (``verdicts``: the
    recipe's ``verdicts(result)``), as the record :func:`stored_test` returns (``name, claim, direction, verdict``
    and, where it has them, ``would_be`` and ``effect_for_power``); None when the result or the test is absent."""
    if result is None:
        return None
    row = {r.test.name: r for r in verdicts(result)}.get(test)
    return None if row is None else row.to_record()


def depth_attention_sentence(mean: float, n: int, bytes_per_token: float, row, lang: str | None = None) -> str:
    """Depth-Attention's loss against the baseline (``mean``: final val loss, depth_attention − residual, nats,
    over ``n`` paired seeds) at the baseline's cache (``bytes_per_token``), and what its read of V buys, in the words
    of its declared test's verdict (``row``: the judged ``depth_attention_loss``, or its verdict word); in ``lang``
    (default: the running edition)."""
    verdict = verdict_parts(row)[0]
    # what the read buys, the same for both languages: a lower loss, no counted change, or no decided change
    kind = ("lower" if verdict == "reproduced" and mean < 0 else
            "not counted" if verdict in ("negligible", "out of regime", "n/a") else "undecided")
    if resolve_language(lang) == "ko":
        side = "낮습니다" if mean < 0 else "높습니다"
        if kind == "lower":
            buys = "같은 캐시에서 더 낮은 손실을 얻습니다."
        elif kind == "not counted":
            buys = f"여기서 셈에 넣을 손실 변화를 얻지 못합니다. 손실 검정의 판정: {plain_verdict(row, lang='ko')}."
        else:
            buys = f"여기서 판가름 난 손실 변화를 얻지 못합니다(손실 검정: {verdict_label(row, lang='ko')})."
        return (f"Depth-Attention의 최종 검증 손실은 기준선보다 **{abs(mean):.3f}** nats {side}(짝지은 시드 {n}개의 "
                f"평균). 토큰당 캐시는 {bytes_per_token:,.0f}바이트로 같으며, 깊이 방향의 V 읽기로 {buys}")
    side = "lower" if mean < 0 else "higher"
    if kind == "lower":
        buys = "a lower loss at the same cache."
    elif kind == "not counted":
        buys = f"no counted change in loss here: its loss test is {plain_verdict(row, lang='en')}."
    else:
        buys = f"no decided change in loss here (its loss test is {verdict_label(row, 'en')})."
    return (f"Depth-Attention's final validation loss is **{abs(mean):.3f}** nats {side} than the baseline's "
            f"(mean of {n} paired seeds), with the same {bytes_per_token:,.0f} cache bytes per token: its read of V "
            f"buys {buys}")


# ------------------------------------------------------------------------------------ reading a bank layer


def same_token_value_cosine(v: Tensor, idx: Tensor) -> float:
    """Mean cosine similarity between the values of equal tokens at different positions.

    ``v`` (B, H, T, Dh) a layer's values, ``idx`` (B, T) the token ids. 1.0 for a bank layer (its value is a table
    row); below 1 where the context changes a token's value. Raises ValueError when no token occurs twice."""
    rows = F.normalize(v.transpose(1, 2).flatten(2).flatten(0, 1), dim=-1)        # (B·T, H·Dh)
    ids = idx.flatten()
    sims = []
    for tok in ids.unique():
        same = rows[ids == tok]
        if len(same) > 1:
            c = same @ same.T
            sims.append((c.sum() - c.diagonal().sum()) / (len(same) * (len(same) - 1)))
    if not sims:
        raise ValueError("same_token_value_cosine needs a token that occurs at least twice in idx")
    return float(torch.stack(sims).mean())


@torch.no_grad()
def ov_tables(block, n_heads: int) -> Tensor:
    """A bank layer's OV table per head, (H, |V|, D): row ``x`` of head h is ``W_O^h γ E_v^h[x]``, what the head
    writes into the stream when it attends to token x. Raises ValueError for a layer that is not a bank layer."""
    if block.x0 is None or block.x0.mode != "bank":
        raise ValueError("ov_tables needs a bank-of-values layer (x0_mode='bank')")
    E = block.x0.gamma * block.x0.E_v                                              # (|V|, D)
    W_O = block.attn.o_proj.weight                                                 # (D, D)
    dh = E.shape[1] // n_heads
    heads = [slice(h * dh, (h + 1) * dh) for h in range(n_heads)]
    return torch.stack([E[:, f] @ W_O[:, f].T for f in heads])


def output_from_table(pattern: Tensor, ov: Tensor, idx: Tensor) -> Tensor:
    """The attention output rebuilt from the table: ``Σ_h Σ_j a^h_ij · OV_h[x_j]``, (B, T, D).
    ``pattern`` (B, H, T, T), ``ov`` (H, |V|, D), ``idx`` (B, T)."""
    return torch.einsum("bhij,bhjd->bid", pattern, ov[:, idx].transpose(0, 1))


def short(token: str) -> str:
    """A token as Python writes it, cut to 14 characters (some tokens of the corpus are long runs of symbols)."""
    r = repr(token)
    return r if len(r) <= 14 else r[:13] + "…"


@torch.no_grad()
def loudest_rows(ov: Tensor, unembed: Tensor, freq: Tensor, decode, n_common: int = 400, n_rows: int = 6,
                 n_promoted: int = 4) -> dict:
    """Among the ``n_common`` most frequent tokens (``freq``: counts, (|V|,)), the head that writes the most (largest
    mean row norm of its OV table) and its ``n_rows`` loudest rows, each with the ``n_promoted`` tokens the row
    raises most when read through the unembedding ``unembed`` (|V|, D). ``decode(id) -> str``. Returns
    ``{"head", "mean_norm", "quietest", "rows": [(token, norm, [promoted])]}``."""
    common = freq.argsort(descending=True)[:n_common]
    norms = ov[:, common].norm(dim=-1)                                             # (H, n_common)
    head = int(norms.mean(1).argmax())
    top = common[norms[head].argsort(descending=True)[:n_rows]]
    promoted = (ov[head, top] @ unembed.T).topk(n_promoted, dim=-1).indices
    rows = [(short(decode(t)), float(ov[head, t].norm()), [short(decode(i)) for i in p])
            for t, p in zip(top.tolist(), promoted.tolist())]
    return {"head": head, "mean_norm": float(norms[head].mean()), "quietest": float(norms.mean(1).min()),
            "rows": rows}


def context_sentence(cosine: float, steps: int, lang: str | None = None) -> str:
    """What the ordinary layer's same-token cosine says, its words chosen from the number; in ``lang`` (default: the
    running edition)."""
    if resolve_language(lang) == "ko":
        how = "조금만" if cosine > 0.9 else "강하게"
        return (f"뱅크 바로 아래의 일반 층에서 한 토큰의 서로 다른 위치의 값들은 평균 코사인이 **{cosine:.3f}**입니다. "
                f"{steps}스텝 학습 후 그 값들은 문맥에 {how} 의존합니다. 뱅크 층의 값은 구조상 하나의 벡터입니다"
                "(코사인 1).")
    how = "only a little" if cosine > 0.9 else "strongly"
    return (f"In the ordinary layer below the bank, one token's values at different positions have a mean cosine "
            f"of **{cosine:.3f}**: after {steps} steps they depend on the context {how}; a bank layer's are one "
            "vector by construction (cosine 1).")


def answer(rows: list[dict], break_even: int, largest_error: float, cosine: float, lang: str | None = None) -> str:
    """The chapter's closing paragraph: bytes per token saved by SVFormer and by the bank, the break-even context,
    and how exactly a bank layer's output is read off its table; in ``lang`` (default: the running edition)."""
    b = per_token(rows)
    base, sv, bank = b["baseline"], b["svformer"], b["bank"]
    exact = largest_error < 1e-5
    if resolve_language(lang) == "ko":
        return _answer_ko(base, sv, bank, break_even, exact, largest_error, cosine)
    memory = ("Yes, for memory, and the gain comes from V alone" if sv < base
              else "Not for memory here")
    reading = "And yes, for reading" if exact else "But not for reading here"
    return (f"{memory}: sharing $V_1$ (SVFormer) cuts the KV cache from "
            f"**{base:,.0f}** to **{sv:,.0f}** bytes per token on the course model, {_fewer(base - sv)} "
            f"({1 - sv / base:.0%}), at every length; the bank of values cuts it to {bank:,.0f} but keeps its tables, "
            f"so it saves memory only once a batch holds more tokens than the vocabulary: the break-even context "
            f"is **{break_even:,}** tokens for one sequence of this model. {reading}: a bank layer's "
            f"output {'is' if exact else 'is not'} the pattern times rows of a per-token table (largest difference "
            f"{'below **1e-5**' if exact else f'**{largest_error:.1e}**'}), rows that can be read without running the model, while QK still decides "
            f"where each head looks; an ordinary layer's values were {'nearly' if cosine > 0.9 else 'far from'} a "
            f"table here (cosine {cosine:.3f}).")


def _answer_ko(base: float, sv: float, bank: float, break_even: int, exact: bool, largest_error: float,
               cosine: float) -> str:
    memory = "메모리에 대해서는 그렇습니다. 이득은 V에서만 나옵니다" if sv < base else "여기서 메모리에 대해서는 아닙니다"
    reading = "그리고 읽기에 대해서도 그렇습니다" if exact else "하지만 여기서 읽기에 대해서는 아닙니다"
    error = "**1e-5** 미만" if exact else f"**{largest_error:.1e}**"
    table = "토큰별 표의 행에 패턴을 곱한 것과 같습니다" if exact else "토큰별 표의 행에 패턴을 곱한 것과 같지 않습니다"
    near = "거의 표에 가까웠습니다" if cosine > 0.9 else "표와 거리가 멀었습니다"
    saved = base - sv
    change = (f"{saved:,.0f}바이트({1 - sv / base:.0%}) 줄어듭니다" if saved > 0 else
              f"{-saved:,.0f}바이트({sv / base - 1:.0%}) 늘어납니다" if saved < 0 else "변하지 않습니다")
    return (f"{memory}. $V_1$을 공유하면(SVFormer) 강좌 모델의 KV 캐시는 토큰당 **{base:,.0f}**바이트에서 "
            f"**{sv:,.0f}**바이트가 되어, 모든 길이에서 {change}. 값 "
            f"뱅크는 캐시를 {bank:,.0f}바이트로 줄이지만 표를 유지하므로, 배치가 어휘보다 많은 토큰을 담을 때에만 "
            f"메모리를 절약합니다. 이 모델의 시퀀스 하나에 대한 손익분기 문맥 길이는 **{break_even:,}** 토큰입니다. "
            f"{reading}. 뱅크 층의 출력은 {table}(최대 차이 {error}). 그 행들은 모델을 실행하지 않고도 읽을 수 있고, "
            f"각 헤드가 어디를 볼지는 여전히 QK가 정합니다. 일반 층의 값은 여기서 {near}(코사인 {cosine:.3f}).")


def _side(ci) -> str:
    """Where an interval lies: "below" 0, "above" 0, or "spans" 0."""
    return "below" if ci[1] < 0 else "above" if ci[0] > 0 else "spans"


SIDE = {"below": "lies below 0", "above": "lies above 0", "spans": "spans 0"}
SIDE_KO = {"below": "0보다 아래에 있습니다", "above": "0보다 위에 있습니다", "spans": "0을 포함합니다"}


def _quality_facts(paired: dict[str, dict], tests: dict[str, dict]) -> tuple[list[dict], list[str]]:
    """What :func:`quality_sentence` states, decided once for both languages: per variant (in ``paired``'s order)
    ``{"v", "p", "side"`` (:func:`_side`), ``"rec"`` (its declared test, or None), ``"claims_cost"``, ``"against"``
    ("opposite": the interval lies on the side against the test's claim, "expected": on its side, None: spans 0 or
    no test), ``"word"`` (the verdict's kind: "negligible", "not counted" for out of regime or n/a, else
    "decided")``}``; and the variants that cost loss (a reproduced test claiming a cost, or without a test an
    interval above 0)."""
    rows, costs = [], []
    for v, p in paired.items():
        lo, hi = p["ci"]
        rec = tests.get(v)
        row = {"v": v, "p": p, "side": _side(p["ci"]), "rec": rec, "claims_cost": False, "against": None,
               "word": None}
        if rec is None:
            if lo > 0:
                costs.append(v)
        else:
            claims_cost = rec["direction"] == "positive"
            word = verdict_parts(rec)[0]
            row.update(claims_cost=claims_cost,
                       against=("opposite" if (hi < 0 and claims_cost) or (lo > 0 and not claims_cost) else
                                "expected" if lo > 0 or hi < 0 else None),
                       word=("negligible" if word == "negligible" else
                             "not counted" if word in ("out of regime", "n/a") else "decided"))
            if claims_cost and rec["verdict"] == "reproduced":
                costs.append(v)
        rows.append(row)
    return rows, costs


def quality_sentence(paired: dict[str, dict], tests: dict[str, dict] | None = None, lang: str | None = None) -> str:
    """The quality each V reuse costs, in words: ``paired`` maps a variant (``svformer``, ``bank``) to its paired
    final-loss difference against the baseline (``mean``, ``ci``, ``n_negative``, ``n``); ``tests`` maps a variant
    to its declared test as stored by its recipe (:func:`stored_test`: ``name``, ``direction`` "positive" for a
    claimed cost, "negative" for a claimed lower loss, ``verdict`` after the correction for the number of tests).

    Each variant's words come from its interval (below, above or spanning 0, and whether that is the side its claim
    expects) and from its verdict; the closing clause says a reuse costs loss only where a test claiming a cost is
    reproduced (or, with no test, where an interval lies above 0), never from an interval alone. The decisions are
    :func:`_quality_facts`'s, the same for both languages. In ``lang`` (default: the running edition)."""
    rows, costs = _quality_facts(paired, tests or {})
    if resolve_language(lang) == "ko":
        return _quality_sentence_ko(rows, costs)
    if not paired:
        return "No quality result is made yet."
    names = {"svformer": "SVFormer's", "bank": "The bank's"}
    parts = []
    for f in rows:
        v, p, rec = f["v"], f["p"], f["rec"]
        lo, hi = p["ci"]
        text = (f"{names.get(v, v)} final validation loss is {loss_phrase(p)}: its interval, "
                f"{p['mean']:+.3f} [{lo:+.3f}, {hi:+.3f}] nats, {SIDE[f['side']]}")
        if rec is None:
            parts.append(text + ".")
            continue
        wanted = "cost" if f["claims_cost"] else "gain"
        if f["against"] == "opposite":
            text += f", the opposite of the paper's expected {wanted}"
        elif f["against"] == "expected":
            text += f", the paper's expected side (a {wanted})"
        head = (f"; its declared one-sided test `{rec['name']}`, which claims "
                f"{'a cost' if f['claims_cost'] else 'a lower loss'}, is ")
        if f["word"] == "negligible":
            text += head + f"**negligible**: {plain_verdict(rec, lang='en')}."
        elif f["word"] == "not counted":
            text += head + f"**{verdict_label(rec, 'en')}**: {plain_verdict(rec, lang='en')}, and it is not counted."
        else:
            text += head + f"**{verdict_parts(rec)[0]}** once we allow for the number of tests."
        parts.append(text)
    end = (f" So {' and '.join(NAMES[v] for v in costs)} cost{'s' if len(costs) == 1 else ''} loss here, decided."
           if costs else " So at this scale no reuse is shown to cost loss.")
    return " ".join(parts) + end


def _quality_sentence_ko(rows: list[dict], costs: list[str]) -> str:
    """:func:`quality_sentence` in Korean: the same decisions (:func:`_quality_facts`), Korean word order and
    verdict words."""
    if not rows:
        return "아직 만든 품질 결과가 없습니다."
    parts = []
    for f in rows:
        v, p, rec = f["v"], f["p"], f["rec"]
        lo, hi = p["ci"]
        m = p["mean"]
        side = "낮고" if m < 0 else "높고" if m > 0 else "같고"
        amount = f"{abs(m):.3f} nats " if m else ""
        text = (f"{NAMES_KO.get(v, v)}의 최종 검증 손실은 기준선보다 {amount}{side}(시드 {p['n']}개 중 "
                f"{p['n_negative']}개에서 더 낮음), 구간 {m:+.3f} [{lo:+.3f}, {hi:+.3f}] nats는 {SIDE_KO[f['side']]}")
        if rec is None:
            parts.append(text + ".")
            continue
        wanted = "비용" if f["claims_cost"] else "이득"
        if f["against"] == "opposite":
            text += f". 이는 논문이 예상한 {wanted}과 반대쪽입니다"
        elif f["against"] == "expected":
            text += f". 논문이 예상한 쪽({wanted})입니다"
        claim = "비용을" if f["claims_cost"] else "더 낮은 손실을"
        head = f". {claim} 주장하는 사전 선언된 단측 검정 `{rec['name']}`의 판정은 "
        if f["word"] == "negligible":
            text += f". {claim} 주장하는 사전 선언된 단측 검정 `{rec['name']}`의 판정: {plain_verdict(rec, lang='ko')}."
        elif f["word"] == "not counted":
            text += (head + f"**{verdict_label(rec, lang='ko')}**이며({plain_verdict(rec, lang='ko')}), "
                     "셈에 넣지 않습니다.")
        else:
            text += head + f"검정 수를 감안한 뒤 **{verdict_label(rec, lang='ko')}**입니다."
        parts.append(text)
    end = (f" 따라서 여기서 {'와 '.join(NAMES_KO[v] for v in costs)}의 손실 비용은 판가름 났습니다." if costs
           else " 따라서 이 규모에서 손실 비용이 드러난 재사용은 없습니다.")
    return " ".join(parts) + end


# ------------------------------------------------------------------------------------ 2026's designs

# Each production design (vrs-edu reproduce production-designs), who ships it with which config field, and the
# declared test that judges it against the strong baseline.
DESIGNS = {
    "baseline": ("baseline", "—", None),
    "k_eq_v": ("K = V", "Gemma 4: attention_k_eq_v", "k_eq_v_no_worse"),
    "kv_share": ("KV shared by 2 layers (CLA)", "Gemma 4: num_kv_shared_layers", "kv_share_no_worse"),
    "value_embed": ("value embeddings", "nanochat, modded-nanogpt", "value_embed_loss"),
    "layer_embed": ("per-layer embeddings", "Gemma 3n: hidden_size_per_layer_input", "layer_embed_loss"),
    "mhc": ("mHC, 4 streams", "DeepSeek-V4: hc_mult", "mhc_loss"),
    "xsa": ("exclusive self-attention", "XSA (arXiv 2603.09078)", "xsa_loss"),
    "control_small": ("control: smaller MLP", "as many parameters as K = V", "removal_visible"),
    "control_large": ("control: larger MLP", "as many parameters as mHC", None),
}


DESIGN_LABELS_KO = {"baseline": "기준선", "kv_share": "두 층이 공유하는 KV (CLA)", "value_embed": "값 임베딩",
                    "layer_embed": "층별 임베딩", "mhc": "mHC, 스트림 4개", "xsa": "배타적 셀프 어텐션",
                    "control_small": "대조군: 더 작은 MLP", "control_large": "대조군: 더 큰 MLP"}
FIELDS_KO = {"as many parameters as K = V": "K = V와 같은 파라미터 수", "as many parameters as mHC": "mHC와 같은 파라미터 수"}


def designs_table(result: dict, judged: dict[str, dict], lang: str | None = None) -> tuple[list[str], list[list]]:
    """(columns, rows) of the designs' price list: parameters, KV-cache bytes per token (float32, one sequence),
    the paired final-loss difference against the baseline (nats, mean and 95 % interval over the seeds) and the
    verdict of the design's declared test (``judged``: test name → record, :func:`live_test`; the would-be verdict
    beside an out-of-regime one). Headers, names and verdict words in ``lang`` (default: the running edition)."""
    ko = resolve_language(lang) == "ko"
    columns = (["설계", "채택한 모델 (설정 필드)", "파라미터", "KV 바이트 / 토큰", "손실 − 기준선, nats",
                "선언된 검정: 판정"] if ko else
               ["design", "who ships it (config field)", "parameters", "KV bytes / token", "loss − baseline's, nats",
                "declared test: verdict"])
    comparison = result["corpus"]["comparison"]
    rows = []
    for name, (label, field, test) in DESIGNS.items():
        if name not in result["designs"]:
            continue
        d = result["designs"][name]
        p = comparison.get(name, {}).get("paired_final")
        diff = "—" if p is None else f"{p['mean']:+.3f} [{p['ci'][0]:+.3f}, {p['ci'][1]:+.3f}]"
        rec = judged.get(test) if test else None
        verdict = "—" if rec is None else f"{test}: {verdict_label(rec, lang='ko' if ko else 'en')}"
        if ko:
            label, field = DESIGN_LABELS_KO.get(name, label), FIELDS_KO.get(field, field)
        rows.append([label, field, f"{d['n_params']:,}", f"{d['kv_bytes_per_token']['float32']:,}", diff, verdict])
    return columns, rows


def _designs_facts(result: dict, judged: dict[str, dict]) -> dict:
    """What :func:`designs_sentence` states, selected once for both languages: ``base`` (the baseline's KV bytes
    per token), ``smaller`` ([(design, bytes)] of the designs with a smaller cache), ``n_designs`` (the designs,
    baseline and controls left out), the designs whose test is reproduced as an equivalence (``equal``: no loss
    beyond ±0.01 nats) or as a lower loss (``gains``), ``other`` ([(a record, [designs])] grouped by verdict, in
    order of first appearance) and ``steps`` (the run's own training length: a quick run trains quick_steps)."""
    bytes_ = {n: d["kv_bytes_per_token"]["float32"] for n, d in result["designs"].items()}
    base = bytes_["baseline"]
    gains, equal, other = [], [], {}        # other: verdict -> (its first record, the designs judged so)
    for name, (_, _, test) in DESIGNS.items():
        rec = judged.get(test) if test else None
        if rec is None or name.startswith("control"):
            continue
        word = verdict_parts(rec)[0]
        if word == "reproduced" and rec.get("form") == "equivalence":
            equal.append(name)
        elif word == "reproduced":
            gains.append(name)
        else:
            other.setdefault(verdict_label(rec, lang='en'), (rec, []))[1].append(name)
    settings = result["settings"]
    return {"base": base, "smaller": [(n, b) for n, b in bytes_.items() if n in DESIGNS and b < base],
            "n_designs": sum(1 for n in result["designs"]
                             if n in DESIGNS and n != "baseline" and not n.startswith("control")),
            "equal": equal, "gains": gains, "other": list(other.values()),
            "steps": settings["quick_steps"] if result.get("quick") else settings["corpus"]["train"]["steps"]}


def designs_sentence(result: dict, judged: dict[str, dict], lang: str | None = None) -> str:
    """The price list in two sentences: which designs change the cache (by how much, from the stored bytes per
    token) and which change the loss, each in the words of its declared test's verdict (:func:`_designs_facts`,
    the same for both languages); in ``lang`` (default: the running edition)."""
    f = _designs_facts(result, judged)
    if resolve_language(lang) == "ko":
        return _designs_sentence_ko(f)
    base, smaller = f["base"], [f"{DESIGNS[n][0]} ({b:,} bytes, {b / f['base']:.0%})" for n, b in f["smaller"]]
    cache = (f"Of the {f['n_designs']} designs only {' and '.join(smaller)} keep{'s' if len(smaller) == 1 else ''} "
             f"a smaller cache than the baseline's {base:,} bytes per token; K = V removes $W_V$ but still caches "
             "both tensors" if smaller else
             f"None of the designs keeps a smaller cache than the baseline's {base:,} bytes per token")
    equal, gains = [DESIGNS[n][0] for n in f["equal"]], [DESIGNS[n][0] for n in f["gains"]]
    said = []
    if equal:
        said.append(f"{_join(equal)} cost{'s' if len(equal) == 1 else ''} no loss beyond ±0.01 nats")
    if gains:
        said.append(f"{_join(gains)} lower{'s' if len(gains) == 1 else ''} it (reproduced)")
    said += [f"{_join([DESIGNS[n][0] for n in names])} {verdict_label(rec, 'en')}" for rec, names in f["other"]]
    return cache + f". On the loss, at {f['steps']} steps of the toy: " + "; ".join(said) + "."


def _designs_sentence_ko(f: dict) -> str:
    """:func:`designs_sentence` in Korean: the same groups (:func:`_designs_facts`), Korean names and verdict
    words."""
    def name_ko(n: str) -> str:
        return DESIGN_LABELS_KO.get(n, DESIGNS[n][0])

    base = f["base"]
    smaller = [f"{name_ko(n)}({b:,}바이트, {b / base:.0%})" for n, b in f["smaller"]]
    cache = (f"설계 {f['n_designs']}개 가운데 기준선의 토큰당 {base:,}바이트보다 작은 캐시를 유지하는 것은 "
             f"{', '.join(smaller)}뿐입니다. K = V는 $W_V$를 없애지만 여전히 두 텐서를 모두 캐시합니다"
             if smaller else f"기준선의 토큰당 {base:,}바이트보다 작은 캐시를 유지하는 설계는 없습니다")
    said = []
    if f["equal"]:
        said.append(f"{', '.join(map(name_ko, f['equal']))}: ±0.01 nats를 넘는 손실 비용 없음")
    if f["gains"]:
        said.append(f"{', '.join(map(name_ko, f['gains']))}: 손실을 낮춤(재현됨)")
    said += [f"{', '.join(map(name_ko, names))}: {verdict_label(rec, lang='ko')}" for rec, names in f["other"]]
    return cache + f". {f['steps']}스텝 학습한 장난감 모델의 손실: " + "; ".join(said) + "."


def removal_sentence(check: dict, lang: str | None = None) -> str:
    """What the set-up check ``removal_visible`` (the baseline with 5 % fewer parameters, in its MLPs, costs loss)
    says about the two "no worse" tests, from its verdict: only where it is reproduced can a "no worse" reading of
    K = V or CLA say more than that the toy does not see 5 % of its parameters. In ``lang`` (default: the running
    edition)."""
    if resolve_language(lang) == "ko":
        if check["verdict"] == "reproduced":
            return ("설정 점검은 재현됨입니다. 이 장난감 모델은 파라미터 5 %를 잃은 손실을 실제로 보므로, K = V나 "
                    "CLA에 대한 '나쁘지 않다'는 그 제거를 보지 못한다는 것 이상을 말해 줍니다.")
        return (f"설정 점검의 판정은 {verdict_label(check, lang='ko')}입니다. 이 장난감 모델은 파라미터 5 %를 잃은 "
                "손실을 믿을 만하게 보지 못하므로, K = V나 CLA에 대해 판가름 난 '나쁘지 않다'조차 여기서는 별 의미가 "
                "없습니다.")
    if check["verdict"] == "reproduced":
        return ("The set-up check is reproduced: this toy does see the loss of 5 % of its parameters, so a 'no "
                "worse' for K = V or CLA says more than that it cannot see their removal.")
    return (f"The set-up check is {verdict_label(check, 'en')}: this toy does not reliably see the loss of 5 % of its "
            f"parameters, so even a decided 'no worse' for K = V or CLA would say little here.")


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def post_hoc_sentence(kv: dict, lang: str | None = None) -> str:
    """What SmolLM2 says post hoc (``vrs-edu reproduce decoder-kv-designs``): how much of each third's V its K
    predicts (median R² over the third's layers), what the last third loses with V := K·A + b at once, and what a
    layer loses reading its neighbour's cache (the cheapest pair and CLA's factor-2 layout over the last third),
    each loss in the words of its declared test. In ``lang`` (default: the running edition)."""
    ko = resolve_language(lang) == "ko"
    tests = {v["name"]: v for v in kv["verdicts"]}
    r2 = kv["k_eq_v"]["r2"]["k"]
    med = {name: sorted(r2[l] for l in layers)[len(layers) // 2] for name, layers in kv["thirds"].items()}
    late = tests["late_v_from_k_free"]
    share = tests["late_shared_kv_free"]
    pair_loss = [sum(per_seq) / len(per_seq) for per_seq in kv["sharing"]["loss"]]   # nats, mean over sequences
    cheapest = min(range(len(pair_loss)), key=pair_loss.__getitem__)
    a, b = kv["sharing"]["pairs"][cheapest]
    if ko:
        return (f"K와 V를 따로 두고 학습한 SmolLM2에 물으면, 층의 K는 자기 V를 첫 3분의 1에서 중앙값 R² {med['early']:.2f}, "
                f"가운데에서 {med['middle']:.2f}, 마지막에서 {med['late']:.2f}로 예측합니다. 마지막 3분의 1 전체에서 "
                f"V를 한꺼번에 그 예측으로 바꾸면 **{late['mean']:+.2f}** nats가 듭니다('±0.05 이내로 나쁘지 않다'는 "
                f"주장이 {verdict_label(late, lang='ko')}). 이웃의 캐시를 읽으면 최소 {pair_loss[cheapest]:+.3f} nats가 "
                f"들고(층 {attach(str(b), '이/가')} 층 {attach(str(a), '을/를')} 읽을 때), 마지막 3분의 1에 CLA의 인자 2 배치를 적용하면 "
                f"**{share['mean']:+.2f}**입니다({verdict_label(share, lang='ko')}). {_post_hoc_moral(late, share, 'ko')}")
    return (f"Asked of SmolLM2, trained with separate K and V: a layer's K predicts its V with a median R² of "
            f"{med['early']:.2f} in the first third, {med['middle']:.2f} in the middle and {med['late']:.2f} in the "
            f"last; V replaced by that prediction in all of the last third at once costs **{late['mean']:+.2f}** "
            f"nats ({verdict_label(late, 'en')} for 'no worse within ±0.05'). Reading the neighbour's cache costs at "
            f"least {pair_loss[cheapest]:+.3f} nats (layer {b} reading layer {a}), and CLA's factor-2 "
            f"layout over the last third **{share['mean']:+.2f}** ({verdict_label(share, 'en')}). "
            f"{_post_hoc_moral(late, share)}")


def _post_hoc_moral(late: dict, share: dict, lang: str = "en") -> str:
    """What the two 'no worse' tests say together, from their verdicts (a contradicted one: the design costs this
    model more than ±0.05 nats after training). Which design is dear (contradicted) and which free (reproduced) is
    read once; each language names them."""
    names = ("K = V", "공유 캐시") if lang == "ko" else ("K = V", "a shared cache")
    dear = [name for name, rec in zip(names, (late, share)) if rec["verdict"] == "contradicted"]
    free = [name for name, rec in zip(names, (late, share)) if rec["verdict"] == "reproduced"]
    if lang == "ko":
        if len(dear) == 2:
            return ("둘 다 그것 없이 학습한 모델에는 공짜가 아닙니다. 그것을 두고 학습한 모델이 치르는 값은 위의 장난감 "
                    "실행이 묻는 질문입니다.")
        said = []
        if dear:
            said.append(f"{dear[0]}는 학습 후에 공짜가 아닙니다")
        if free:
            said.append(f"{'와 '.join(free)}는 이 모델에 ±0.05 nats 이상의 비용을 들이지 않았을 것입니다")
        return (". ".join(said) or "이 시퀀스들로는 어느 검정도 판가름 나지 않습니다") + "."
    if len(dear) == 2:
        return ("Neither comes free to a model trained without it; what a model trained with it pays is the toy "
                "runs' question above.")
    said = []
    if dear:
        said.append(f"{dear[0]} does not come free after training")
    if free:
        said.append(f"{_join(free)} would have cost this model no more than ±0.05 nats")
    return ("; ".join(said) or "Neither test is decided by these sequences") + "."


# ------------------------------------------------------------------------------------ the notebook's other lines
# What chapter 06's code cells print beside the sentences above: each in ``lang`` (default: the running edition).


def bank_run_sentence(bank_layers, n_layers: int, steps: int, val_loss: float, lang: str | None = None) -> str:
    """The trained bank model in one line: its bank layers, its steps and its final validation loss (nats)."""
    if resolve_language(lang) == "ko":
        return (f"{n_layers}개 층 가운데 뱅크 층 {list(bank_layers)}, {steps}스텝 학습: 검증 손실 "
                f"{val_loss:.3f} nats.")
    return f"Bank layers {list(bank_layers)} of {n_layers}, {steps} steps: validation loss {val_loss:.3f} nats."


def cosine_table(cosines: dict[int, float], bank_layers, lang: str | None = None) -> tuple[list[str], list[list]]:
    """(columns, rows): each layer's kind (bank or ordinary) and its same-token value cosine."""
    ko = resolve_language(lang) == "ko"
    columns = (["층", "종류", "같은 토큰, 다른 위치: 값의 코사인"] if ko else
               ["layer", "kind", "same token, different positions: value cosine"])
    kinds = ("뱅크", "일반") if ko else ("bank", "ordinary")
    return columns, [[l, kinds[0] if l in bank_layers else kinds[1], f"{c:.3f}"] for l, c in cosines.items()]


def decomposition_sentence(layer: int, largest: float, lang: str | None = None) -> str:
    """Whether the layer's attention output equals its rebuild from the OV table (``largest``: the largest absolute
    difference at any entry; below 1e-5 counts as the same, to float precision)."""
    formula = "$\\sum_h \\sum_j a^h_{ij}\\,\\mathrm{OV}_h[x_j]$"
    if resolve_language(lang) == "ko":
        if largest < 1e-5:
            return (f"층 {layer}: {formula}와 어텐션 출력의 차이는 모든 항목에서 **1e-5** 미만입니다. float 정밀도 "
                    "안에서 같습니다.")
        return f"층 {layer}: {formula}와 어텐션 출력의 차이는 최대 **{largest:.1e}**입니다. 같지 **않습니다**."
    return (f"Layer {layer}: {formula} differs from "
            + ("the attention output by less than **1e-5** at every entry: the same, to float precision."
               if largest < 1e-5 else f"the attention output by up to **{largest:.1e}**: **not** the same."))


def loudest_sentence(layer: int, loud: dict, lang: str | None = None) -> str:
    """The loudest head of the layer (:func:`loudest_rows`) against the quietest, by mean row norm."""
    if resolve_language(lang) == "ko":
        return (f"층 {layer}, 헤드 {loud['head']}: 행 노름의 평균은 {loud['mean_norm']:.2f}이고, 가장 조용한 헤드는 "
                f"{loud['quietest']:.2f}입니다.")
    return (f"Layer {layer}, head {loud['head']}: mean row norm {loud['mean_norm']:.2f}, against "
            f"{loud['quietest']:.2f} for the quietest head.")


def loudest_table(loud: dict, lang: str | None = None) -> tuple[list[str], list[list]]:
    """(columns, rows) of the loudest head's loudest rows: token, row norm, the tokens it promotes."""
    columns = (["토큰", "‖OV 행‖", "올리는 토큰"] if resolve_language(lang) == "ko" else
               ["token", "‖OV row‖", "promotes"])
    return columns, [[f"`{t}`", f"{n:.2f}", " ".join(f"`{p}`" for p in ps)] for t, n, ps in loud["rows"]]


def estimate_table(rows: list[dict], estimate, lang: str | None = None) -> tuple[list[str], list[list]]:
    """(columns, rows): the learner's ``estimate(row)`` of each measured cache beside the measured bytes."""
    ko = resolve_language(lang) == "ko"
    columns = (["변형", "T", "내 추정 (B)", "측정한 캐시 (B)", "같음"] if ko else
               ["variant", "T", "your estimate (B)", "measured cache (B)", "equal"])
    body = []
    for r in rows:
        equal = estimate(r) == r["cache_bytes"]
        body.append([r["variant"], r["T"], estimate(r), r["cache_bytes"],
                     ("예" if equal else "아니요") if ko else equal])
    return columns, body


def counts_sentence(course_equal: bool, char_equal: bool, formulas_equal: bool, lang: str | None = None) -> str:
    """Whether the measured bank saving equals the paper's formula on both models, and the measured bytes per
    token the formulas."""
    if resolve_language(lang) == "ko":
        def yes(x):
            return "같음" if x else "다름"
        return (f"측정한 뱅크 절약량과 논문의 공식: 강좌 모델 {yes(course_equal)}, 문자 모델 {yes(char_equal)}. "
                f"측정한 토큰당 바이트와 공식: {yes(formulas_equal)}.")
    return (f"Measured bank saving equal to the paper's formula: course model {course_equal}, character "
            f"model {char_equal}; measured bytes per token equal to the formulas: {formulas_equal}.")


def quality_line(chapter: str, command: str, variant: str, paired: dict, test: str, rec: dict,
                 lang: str | None = None) -> str:
    """One line of "How sure are we?": a variant's paired loss difference against the baseline (``paired``: mean
    and 95 % interval, nats) and its declared test's claim (quoted as declared) and verdict."""
    if resolve_language(lang) == "ko":
        return (f"* {chapter}장, `{command}`: {variant} − 기준선 "
                f"{interval(paired['mean'], paired['ci'], label='95% 신뢰구간 ')} nats; 선언된 검정 "
                f"`{test}`, \"{rec['claim']}\": **{verdict_label(rec, lang='ko')}**")
    return (f"* chapter {chapter}, `{command}`: {variant} − baseline "
            f"{interval(paired['mean'], paired['ci'], label='95% CI ')} nats; declared test "
            f"`{test}`, \"{rec['claim']}\": **{verdict_label(rec, lang='en')}**")


def depth_attention_line(command: str, row, lang: str | None = None) -> str:
    """One line of "How sure are we?" for a judged test of chapter 05's Depth-Attention family."""
    if resolve_language(lang) == "ko":
        return f"* 05장, `{command}`: `{row.test.name}` {row.interval()} nats, **{verdict_label(row, lang='ko')}**"
    return f"* chapter 05, `{command}`: `{row.test.name}` {row.interval()} nats, **{verdict_label(row, lang='en')}**"


def designs_list(command: str, rows, lang: str | None = None) -> str:
    """The production designs' declared tests, one line each: claim (quoted as declared), interval, smallest
    effect and verdict."""
    if resolve_language(lang) == "ko":
        return f"`{command}`:\n" + "\n".join(
            f"* `{r.test.name}`, \"{r.test.claim}\": {r.interval(label='95% 신뢰구간 ')} nats "
            f"(관심 최소 효과 {abs(r.test.effect_for_power):.2f}), **{verdict_label(r, lang='ko')}**" for r in rows)
    return f"`{command}`:\n" + "\n".join(
        f"* `{r.test.name}`, \"{r.test.claim}\": {r.interval(label='95% CI ')} nats "
        f"(smallest effect {abs(r.test.effect_for_power):.2f}), **{verdict_label(r, lang='en')}**" for r in rows)
