"""Chapter 04 exercise: x0 injection into one projection (the bank-of-values paper, arXiv 2606.02780, Sec. 3;
RiddleHe/nanochat ``gpt_base_add_init_qkv_learn``).

The learner writes ``x0_projection(x, embedding, weight, alpha, beta)`` returning
``alpha · W(x) + beta · W(x0)`` with ``x0 = RMSNorm(embedding)`` (parameter-free) and ``W(z) = z @ weightᵀ`` (an
``nn.Linear`` weight of shape (D_out, D_in), no bias).

Exercise 4.2, ``bank_table(v, ids, mask, vocab_size)``: the bank's per-token value table built from a layer's values
(per head, padded batches) and the R² of V it explains; its reference reuses chapter 08's ``per_token_means``.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from vrs_edu.chapters.ch08_real_decoder.interventions import per_token_means
from vrs_edu.course.checks import Mistake, check_function, in_float64, random_inputs
from vrs_edu.i18n.language import in_language, resolve_language
from vrs_edu.nn.layers import rms_norm
from vrs_edu.nn.x0 import inject_x0


def _ref_x0_projection(x, embedding, weight, alpha, beta):
    # W has no bias, so alpha·W(x) + beta·W(x0) = W(alpha·x + beta·x0): the package mixes the inputs (inject_x0).
    return inject_x0(x, rms_norm(embedding), alpha, beta) @ weight.T


# Known wrong variants and what to tell a learner whose function matches one.
MISTAKES = [
    Mistake(lambda x, e, w, a, b: (a * x + b * e) @ w.T,
            "x0 is RMSNorm(embedding), not the raw embedding: normalise it first (vrs_edu.nn.layers.rms_norm), "
            "so that x0 and the normalised residual stream x live on the same scale"),
    Mistake(lambda x, e, w, a, b: (b * x + a * rms_norm(e)) @ w.T,
            "alpha and beta are swapped: alpha weighs the residual stream x, beta the token identity x0"),
    Mistake(lambda x, e, w, a, b: a * (x @ w.T) + b * rms_norm(e),
            "x0 must go through the same projection W as x: beta · W(x0), not beta · x0"),
    Mistake(lambda x, e, w, a, b: (a * x + b * rms_norm(e)) @ w,
            "W is an nn.Linear weight of shape (D_out, D_in): apply it as z @ weight.T"),
    Mistake(lambda x, e, w, a, b: rms_norm(a * x + b * e) @ w.T,
            "normalise the embedding alone (x0 = RMSNorm(embedding)), not the mixed input"),
    Mistake(lambda x, e, w, a, b: (x + b * rms_norm(e)) @ w.T,
            "alpha is missing: the residual-stream part is alpha · W(x)"),
    Mistake(lambda x, e, w, a, b: (a * x + rms_norm(e)) @ w.T,
            "beta is missing: the token-identity part is beta · W(x0)"),
    Mistake(lambda x, e, w, a, b: (a * rms_norm(x) + b * rms_norm(e)) @ w.T,
            "x is already the normalised residual stream (the block normalised it): normalise only the embedding"),
    Mistake(lambda x, e, w, a, b: (a * x + b * F.layer_norm(e, e.shape[-1:])) @ w.T,
            "that is LayerNorm, which also subtracts the mean: x0 = RMSNorm(embedding) only divides by the root "
            "mean square (vrs_edu.nn.layers.rms_norm)"),
    Mistake(lambda x, e, w, a, b: (a * x + b * F.normalize(e, dim=-1)) @ w.T,
            "that is L2 normalisation (unit length): RMSNorm gives unit root mean square, i.e. length √D "
            "(vrs_edu.nn.layers.rms_norm)"),
]


# The Korean hints of each list of mistakes, in the list's order (the Korean edition's checker names the same ones).
HINTS_KO = [
    "x0은 원래 임베딩이 아니라 RMSNorm(embedding)입니다. 먼저 정규화하세요(vrs_edu.nn.layers.rms_norm). 그래야 x0과 "
    "정규화된 잔차 스트림 x가 같은 척도에 놓입니다",
    "alpha와 beta가 바뀌었습니다. alpha는 잔차 스트림 x에, beta는 토큰 정체성 x0에 곱합니다",
    "x0도 x와 같은 투영 W를 거쳐야 합니다. beta · x0이 아니라 beta · W(x0)입니다",
    "W는 (D_out, D_in) 모양의 nn.Linear 가중치입니다. z @ weight.T로 적용하세요",
    "섞은 입력이 아니라 임베딩만 정규화하세요(x0 = RMSNorm(embedding))",
    "alpha가 빠졌습니다. 잔차 스트림 부분은 alpha · W(x)입니다",
    "beta가 빠졌습니다. 토큰 정체성 부분은 beta · W(x0)입니다",
    "x는 이미 정규화된 잔차 스트림입니다(블록이 정규화했습니다). 임베딩만 정규화하세요",
    "그것은 평균도 빼는 LayerNorm입니다. x0 = RMSNorm(embedding)은 제곱평균제곱근으로 나누기만 합니다"
    "(vrs_edu.nn.layers.rms_norm)",
    "그것은 L2 정규화(길이 1)입니다. RMSNorm은 제곱평균제곱근을 1로, 곧 길이를 √D로 만듭니다"
    "(vrs_edu.nn.layers.rms_norm)",
]
SHARE_HINTS_KO = [
    "그것은 용어집의 계수 비중 |β| / (|α| + |β|)입니다. 투영의 두 항을 재세요. 그 길이는 x, x0, W에도 달려 "
    "있습니다",
    "투영 전의 입력을 쟀습니다. W는 x0과 x를 서로 다르게 늘일 수 있으므로, W를 거친 뒤의 두 항을 재세요",
    "x0 항에는 원래 임베딩이 아니라, 여러분의 x0_projection에서처럼 x0 = RMSNorm(embedding)을 써야 합니다",
    "투영 전체의 길이로 나누었습니다. 두 항은 서로 일부 상쇄될 수 있으므로, 노름 기반 비중은 두 항의 길이의 "
    "합으로 나눕니다",
    "alpha와 beta가 빠졌습니다. 두 항은 alpha · W(x)와 beta · W(x0)입니다",
    "그것은 잔차 스트림의 비중입니다. 물음은 투영의 얼마만큼이 x0에서 오는가입니다",
    "비중을 평균해 수 하나로 만들었습니다. 토큰마다 비중 하나를 반환하세요. 모양은 (B, T)입니다",
    "노름을 토큰 축을 따라 구했습니다. 각 항의 길이는 특성 축(마지막 축)을 따라 구하세요. 토큰마다 비중 하나, "
    "모양 (B, T)입니다",
    "길이의 제곱을 비교했습니다. 노름 기반 비중은 길이 자체를 비교합니다",
    "계수를 절댓값 없이 노름 밖으로 꺼냈습니다. ‖β·y‖ = |β|·‖y‖이며, 학습된 β는 음수일 수 있습니다(04장의 Q는 "
    "β ≈ −12를 학습합니다. 그러면 비중이 0..1을 벗어납니다)",
]
BANK_HINTS_KO = [
    "표의 모든 행이 모든 위치에 대한 같은 평균입니다. 토큰 id마다, 그 토큰이 나오는 위치들에 대해 평균하세요"
    "(id별 index_add_, 그다음 id마다 개수로 나누기)",
    "개수에 패딩 위치(마스크의 False)가 들어갔습니다. 토큰의 합과 개수 모두 실제 위치에서만 구해야 합니다",
    "패딩 위치까지 평균했습니다. 합하고 세고 R²를 재기 전에 마스크가 False인 위치를 모두 빼세요",
    "한 번도 나오지 않은 토큰의 행이 0입니다. 선언된 대체값은 모든 실제 위치의 평균입니다(0은 문맥 없는 추측이 아니며, "
    "그 토큰의 값을 소리 없이 지웁니다)",
    "표가 위치로 색인되어 있습니다(행 t = 위치 t의 평균). 뱅크는 토큰 id로 색인합니다. 행 i = 토큰이 i인 위치들의 평균",
    "헤드가 뒤섞였습니다. v는 (B, H, T, Dh)이므로, 위치마다 행 하나로 reshape하기 전에 헤드 축을 Dh 옆으로 옮기세요"
    "(transpose(1, 2))",
    "헤드에 걸쳐 평균했습니다. 헤드마다 자기 값을 유지하며, 표는 (vocab_size, H, Dh)입니다",
    "R²가 잔차를 0에 대해 잽니다. 전체 분산은 평균값을 중심으로 한 Σ(v − mean v)²이므로, 평균 하나로 된 표는 0점입니다",
]


def _in_language(mistakes: list[Mistake], hints_ko: list[str] | None, lang: str | None) -> list[Mistake]:
    """``mistakes`` with their hints in ``lang`` (default: the running edition): the Korean ones from ``hints_ko``
    (None: the English hints stay)."""
    if resolve_language(lang) == "en" or hints_ko is None:
        return list(mistakes)
    if len(hints_ko) != len(mistakes):
        raise ValueError(f"hints_ko: expected one hint per mistake ({len(mistakes)}), got {len(hints_ko)}")
    return [Mistake(m.fn, hint) for m, hint in zip(mistakes, hints_ko)]


def _projection_cases(seed: int, shapes, edges: bool, offset: int = 0, negative: int | None = None) -> list[tuple]:
    """Random ``(x, embedding, weight, alpha, beta)`` for each ``(B, T, D, D_out)`` in ``shapes``: the embedding far
    from unit RMS (so a missing norm shows), α and β in [0.3, 1.3), β negated in case number ``negative`` (a learned
    β can be); in float64 for the edges."""
    cases = []
    for i, (B, T, D, D_out) in enumerate(shapes):
        s = 1000 * seed + 10 * i + offset
        x, emb, w = random_inputs(s, (B, T, D), (B, T, D), (D_out, D))
        g = torch.Generator().manual_seed(s + 1)
        alpha, beta = (0.3 + torch.rand(2, generator=g)).tolist()
        cases.append((x, 3.0 * emb + 1.0, w, alpha, -beta if i == negative else beta))
    return in_float64(cases) if edges else cases


def check_x0_projection(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 04: ``fn(x (B, T, D), embedding (B, T, D), weight (D, D), alpha, beta) -> (B, T, D)`` =
    ``alpha * x @ weight.T + beta * rms_norm(embedding) @ weight.T``. ``seed`` picks the random cases
    (0: the public checks; graders use others); ``edges``: one token, D = 1, in float64."""
    lang = kw.get("lang")
    shapes = [(1, 1, 1, 1), (1, 1, 5, 5), (2, 2, 1, 1)] if edges else [(2, 5, 8, 8), (1, 7, 16, 16), (3, 4, 4, 4)]
    cases = _projection_cases(seed, shapes, edges)
    kw.setdefault("stub_hint", in_language(
        "x is normalised already; the embedding is not, and x0 must be on the same scale as x. Both terms go "
        "through the same weight, applied as an nn.Linear applies it",
        "x는 이미 정규화되어 있지만 임베딩은 그렇지 않으며, x0은 x와 같은 척도여야 합니다. 두 항 모두 같은 가중치를 "
        "거치며, 그 가중치는 nn.Linear가 적용하는 방식대로 적용합니다", lang))
    return check_function(in_language("x0 projection", "x0 투영", lang), fn, _ref_x0_projection, cases,
                          _in_language(MISTAKES, HINTS_KO, lang), **kw)


# --- the measurement: how much of a projection's output comes from x0 (the assignment's second task) --------------

def _ref_x0_norm_share(x, embedding, weight, alpha, beta):
    """x0's share of one projection's output, per token, read by norms (the norm-based view, Kobayashi et al.,
    arXiv 2004.10102): ``‖β·W(x0)‖ / (‖α·W(x)‖ + ‖β·W(x0)‖)`` with ``x0 = RMSNorm(embedding)``, norms over D_out.

    x, embedding (B, T, D), weight (D_out, D) -> (B, T), each in 0..1.

    Raises:
        ValueError: if ``weight`` is not (D_out, D) for the D of ``x`` (or ``x`` and ``embedding`` differ in shape).
    """
    if weight.dim() != 2 or weight.size(1) != x.size(-1):
        raise ValueError(f"x0_norm_share: expected weight (D_out, D={x.size(-1)}), got weight {tuple(weight.shape)}")
    from_x0 = _ref_x0_projection(x, embedding, weight, 0.0, beta).norm(dim=-1)
    from_stream = _ref_x0_projection(x, embedding, weight, alpha, 0.0).norm(dim=-1)
    return from_x0 / (from_stream + from_x0)


def _terms(x, e, w, a, b):
    """The two terms of the projection, β·W(x0) and α·W(x) (for the mistakes below)."""
    return b * rms_norm(e) @ w.T, a * x @ w.T


def _share(from_x0, from_stream):
    return from_x0 / (from_stream + from_x0)


# Known wrong variants of x0_norm_share and what to tell a learner whose function matches one.
SHARE_MISTAKES = [
    Mistake(lambda x, e, w, a, b: torch.full(x.shape[:-1], abs(b) / (abs(a) + abs(b)), dtype=x.dtype),
            "that is the glossary's coefficient share |β| / (|α| + |β|): measure the two terms of the projection, "
            "whose lengths depend on x, x0 and W as well"),
    Mistake(lambda x, e, w, a, b: _share((b * rms_norm(e)).norm(dim=-1), (a * x).norm(dim=-1)),
            "you measured the inputs before the projection: W can lengthen x0 and x differently, so measure the "
            "two terms after W"),
    Mistake(lambda x, e, w, a, b: _share((b * e @ w.T).norm(dim=-1), (a * x @ w.T).norm(dim=-1)),
            "the x0 term must use x0 = RMSNorm(embedding), as in your x0_projection, not the raw embedding"),
    Mistake(lambda x, e, w, a, b: _terms(x, e, w, a, b)[0].norm(dim=-1) / _ref_x0_projection(x, e, w, a, b).norm(
        dim=-1),
            "you divided by the length of the whole projection: the two terms can partly cancel, so the "
            "norm-based share divides by the sum of the two terms' lengths"),
    Mistake(lambda x, e, w, a, b: _share((rms_norm(e) @ w.T).norm(dim=-1), (x @ w.T).norm(dim=-1)),
            "alpha and beta are missing: the two terms are alpha · W(x) and beta · W(x0)"),
    Mistake(lambda x, e, w, a, b: 1.0 - _ref_x0_norm_share(x, e, w, a, b),
            "that is the residual stream's share: the question is how much of the projection comes from x0"),
    Mistake(lambda x, e, w, a, b: _ref_x0_norm_share(x, e, w, a, b).mean(),
            "you averaged the shares into one number: return one share per token, shape (B, T)"),
    Mistake(lambda x, e, w, a, b: _share(*(t.norm(dim=-2) for t in _terms(x, e, w, a, b))),
            "your norms run over the tokens: take each term's length over the feature axis (the last one), one "
            "share per token, shape (B, T)"),
    Mistake(lambda x, e, w, a, b: _share(*(t.norm(dim=-1).pow(2) for t in _terms(x, e, w, a, b))),
            "you compared squared lengths: the norm-based share compares the lengths themselves"),
    Mistake(lambda x, e, w, a, b: _share(b * (rms_norm(e) @ w.T).norm(dim=-1), a * (x @ w.T).norm(dim=-1)),
            "you took a coefficient out of the norm without its absolute value: ‖β·y‖ = |β|·‖y‖, and a learned β "
            "can be negative (chapter 04's Q learns β ≈ −12; then your share leaves 0..1)"),
]


def check_x0_norm_share(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 04.2: ``fn(x (B, T, D), embedding (B, T, D), weight (D_out, D), alpha, beta) -> (B, T)`` =
    ``‖β·W(x0)‖ / (‖α·W(x)‖ + ‖β·W(x0)‖)`` per token, ``x0 = rms_norm(embedding)``, norms over D_out. ``seed``
    picks the random cases (0: the public checks; graders use others); ``edges``: one token, D = 1, in float64."""
    shapes = [(1, 1, 1, 1), (1, 1, 5, 3), (2, 2, 1, 2)] if edges else [(2, 5, 8, 8), (1, 7, 16, 12), (3, 4, 4, 6)]
    cases = _projection_cases(seed, shapes, edges, offset=5, negative=1)
    lang = kw.get("lang")
    kw.setdefault("stub_hint", in_language(
        "the projection is a sum of two terms, one from the stream x and one from x0, each with its coefficient; "
        "your x0_projection makes either alone. Measure each term's length per token and compare",
        "투영은 두 항의 합입니다. 하나는 스트림 x에서, 하나는 x0에서 오며 각각 자기 계수를 가집니다. 여러분의 "
        "x0_projection은 둘 중 하나만 만들 수 있습니다. 토큰마다 각 항의 길이를 재어 비교하세요", lang))
    return check_function(in_language("x0 norm share", "x0 노름 비중", lang), fn, _ref_x0_norm_share, cases,
                          _in_language(SHARE_MISTAKES, SHARE_HINTS_KO, lang), **kw)


# --- the bank's per-token value table, and how much of V it explains (exercise 4.2) ---------------------------------
# Chapter 08's check_token_table asks for one table over flat (N, D) values. This one starts where a model hands
# its values over: per head (B, H, T, Dh), in batches whose padded positions must not count, and it measures the
# substitution (the R² of V explained by the table), which the chapter then runs on its checkpoint.

def _real_positions(v, ids, mask):
    """The values at the real (unpadded) positions as rows (N, H·Dh), heads side by side, and their token ids (N,)."""
    B, H, T, Dh = v.shape
    keep = mask.reshape(-1)
    return v.transpose(1, 2).reshape(B * T, H * Dh)[keep], ids.reshape(-1)[keep]


def _table_and_r2(rows, tok, vocab_size, H, table_fn=per_token_means):
    """The per-token table of ``rows`` (N, H·Dh) by ``tok`` (N,), as (vocab_size, H, Dh), and the R² of the rows
    explained by their token's row."""
    table = table_fn(rows, tok, vocab_size)
    return table.reshape(vocab_size, H, -1), _r2(rows, table[tok])


def _r2(rows, fitted):
    return (1 - (rows - fitted).pow(2).sum() / (rows - rows.mean(0)).pow(2).sum()).item()


def _ref_bank_table(v, ids, mask, vocab_size):
    """The bank's context-free value table from a layer's values: row i is the mean of ``v`` over the real positions
    whose token is i, per head; a token that never occurs at a real position gets the mean over all real positions
    (the declared fallback: the best context-free guess without its own data). Also returns the R² of the real
    positions' values explained by their token's row, ``1 − Σ(v − table[id])² / Σ(v − mean v)²``.

    v (B, H, T, Dh), ids (B, T) long, mask (B, T) bool (True: a real token, False: padding), vocab_size ->
    (table (vocab_size, H, Dh), r2 float).
    """
    rows, tok = _real_positions(v, ids, mask)
    return _table_and_r2(rows, tok, vocab_size, v.size(1))


def _table_mistake(v, ids, mask, vocab_size, *, rows_fn=None, table_fn=per_token_means):
    rows, tok = (rows_fn or _real_positions)(v, ids, mask)
    return _table_and_r2(rows, tok, vocab_size, v.size(1), table_fn)


def _one_mean(rows, tok, V):
    return rows.mean(0).repeat(V, 1)


def _zero_rows(rows, tok, V):
    sums = torch.zeros(V, rows.size(1), dtype=rows.dtype).index_add_(0, tok, rows)
    return sums / torch.bincount(tok, minlength=V).clamp_min(1).to(rows.dtype)[:, None]


def _counts_with_padding(v, ids, mask, V):
    rows, tok = _real_positions(v, ids, mask)
    sums = torch.zeros(V, rows.size(1), dtype=rows.dtype).index_add_(0, tok, rows)
    counts = torch.bincount(ids.reshape(-1), minlength=V).to(rows.dtype)[:, None]     # padded positions counted
    table = torch.where(counts > 0, sums / counts.clamp_min(1), rows.mean(0))
    return table.reshape(V, v.size(1), -1), _r2(rows, table[tok])


def _by_position(v, ids, mask, V):
    B, H, T, Dh = v.shape
    rows, _ = _real_positions(v, ids, mask)
    pos = torch.arange(T).repeat(B)[mask.reshape(-1)]                                   # the position, not the token
    table = per_token_means(rows, pos, V)
    return table.reshape(V, H, Dh), _r2(rows, table[pos])


def _heads_not_moved(v, ids, mask):
    B, H, T, Dh = v.shape
    keep = mask.reshape(-1)
    return v.reshape(B * T, H * Dh)[keep], ids.reshape(-1)[keep]                     # (B, H, T, Dh) read as (B, T, ...)


def _heads_averaged(v, ids, mask, V):
    rows, tok = _real_positions(v.mean(1, keepdim=True), ids, mask)
    return _table_and_r2(rows, tok, V, 1)


def _r2_against_zero(v, ids, mask, V):
    rows, tok = _real_positions(v, ids, mask)
    table = per_token_means(rows, tok, V)
    r2 = (1 - (rows - table[tok]).pow(2).sum() / rows.pow(2).sum()).item()
    return table.reshape(V, v.size(1), -1), r2


BANK_MISTAKES = [
    Mistake(lambda v, i, m, V: _table_mistake(v, i, m, V, table_fn=_one_mean),
            "every row of your table is the same mean over all positions: average per token id, over the "
            "positions where that token occurs (index_add_ by id, then divide by each id's count)"),
    Mistake(_counts_with_padding,
            "your counts include the padded positions (the mask's False): a token's sum and its count must both "
            "come from the real positions only"),
    Mistake(lambda v, i, m, V: _table_mistake(v, i, torch.ones_like(m), V),
            "you averaged the padded positions in: drop every position whose mask is False before summing, "
            "counting and measuring R²"),
    Mistake(lambda v, i, m, V: _table_mistake(v, i, m, V, table_fn=_zero_rows),
            "a token that never occurs got a row of zeros: the declared fallback is the mean over all real "
            "positions (zeros are not a context-free guess; they silently delete that token's value)"),
    Mistake(_by_position,
            "your table is indexed by position (row t = the mean at position t): the bank is indexed by token id, "
            "row i = the mean over the positions whose token is i"),
    Mistake(lambda v, i, m, V: _table_mistake(v, i, m, V, rows_fn=_heads_not_moved),
            "the heads are scrambled: v is (B, H, T, Dh), so move the head axis next to Dh (transpose(1, 2)) "
            "before reshaping to one row per position"),
    Mistake(_heads_averaged,
            "you averaged over the heads: each head keeps its own values, the table is (vocab_size, H, Dh)"),
    Mistake(_r2_against_zero,
            "your R² measures the residual against zero: the total variance is around the mean value, "
            "Σ(v − mean v)², so a table of one mean scores 0"),
]


def _bank_cases(seed: int, shapes) -> list[tuple]:
    """Random ``(v, ids, mask, vocab_size)`` for each ``(B, H, T, Dh, V)``: values that depend on the token (so R²
    is well inside 0..1), rows padded at the end to unequal lengths with id 0 and large values at the padding, id 0
    also a real token, and the last two ids never at a real position."""
    cases = []
    for i, (B, H, T, Dh, V) in enumerate(shapes):
        s = 1000 * seed + 10 * i + 7
        g = torch.Generator().manual_seed(s)
        ids = torch.randint(1, V - 2, (B, T), generator=g)
        ids[:, 0] = 0                                                # the padding's id is also a real token
        ids[0, 1:T // 2] = 1                                         # a frequent token: counts differ a lot
        lengths = torch.randint(T // 2, T, (B,), generator=g)
        lengths[0] = T                                               # one row unpadded
        mask = torch.arange(T)[None, :] < lengths[:, None]
        per_token, noise = random_inputs(s + 1, (V, H, Dh), (B, H, T, Dh))
        v = per_token[ids].permute(0, 2, 1, 3) + 0.5 * noise
        v = torch.where(mask[:, None, :, None], v, torch.full_like(v, 7.0))
        cases.append((v, ids.masked_fill(~mask, 0), mask, V))
    return cases


def check_bank_table(fn, *, seed: int = 0, **kw) -> bool:
    """Exercise 04.2: ``fn(v (B, H, T, Dh), ids (B, T), mask (B, T) bool, vocab_size) -> (table, r2)``: the per-token
    table (vocab_size, H, Dh), each row the mean of v over the real positions of its token (an unseen token: the
    mean over all real positions), and the R² of v explained by table[ids] at the real positions. ``seed`` picks
    the random cases (0: the public checks)."""
    lang = kw.get("lang")
    cases = _bank_cases(seed, [(2, 2, 8, 3, 12), (3, 4, 10, 2, 16), (4, 1, 12, 5, 20)])
    kw.setdefault("stub_hint", in_language(
        "keep the real positions only (the mask), one row per position with the heads side by side; per token id: "
        "sum (index_add_), count (bincount), divide; give unseen ids the overall mean; R² compares each value with "
        "its token's row",
        "실제 위치만 남기고(마스크), 위치마다 헤드를 나란히 놓은 행 하나를 만드세요. 토큰 id마다 합(index_add_)과 "
        "개수(bincount)를 구해 나누고, 나오지 않은 id에는 전체 평균을 주세요. R²는 각 값을 그 토큰의 행과 "
        "비교합니다", lang))
    kw.setdefault("graded", False)   # no assignment holds this exercise: no hidden checks
    return check_function(in_language("bank table", "뱅크 표", lang), fn, _ref_bank_table, cases,
                          _in_language(BANK_MISTAKES, BANK_HINTS_KO, lang), **kw)
