"""Chapter 02 exercises: the causal attention pattern from q and k, the value-weighted sum, the value swap, and the
norm-based contributions of one head (Kobayashi et al., arXiv 2004.10102).

``check_<name>(fn, *, seed=0, edges=False, **kw)``: seed 0 gives the public cases; graders call with other seeds
and ``edges=True`` (one position, the smallest widths, float64). Extra keyword arguments go to
:func:`vrs_edu.course.checks.check_function` (``raise_on_fail``, ``quiet``).
"""
from __future__ import annotations

import math

import torch

from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import head_contributions, value_swap_loss
from vrs_edu.course.checks import Mistake, check_function, in_float64, random_inputs, with_hints
from vrs_edu.nn.attention import attend, attention_pattern
from vrs_edu.nn.model import TinyGPT, TinyGPTConfig

SHAPES = [(2, 3, 5, 4), (1, 2, 7, 16), (3, 1, 4, 8)]   # (B, H, T, Dh): T != Dh so transposes show up as shapes
# The graded edges: one position (its only key is itself: weight exactly 1), the first masked entry (T = 2), Dh = 1
EDGE_SHAPES = [(1, 1, 1, 1), (1, 2, 1, 8), (2, 1, 2, 3)]


def _scores(q, k, scale):
    return q @ k.transpose(-2, -1) * scale


def _tril(T):
    return torch.ones(T, T, dtype=torch.bool).tril()


def _masked_softmax(scores, allowed, dim=-1):
    return scores.masked_fill(~allowed, float("-inf")).softmax(dim=dim)


# --- exercise 1: the causal pattern ---------------------------------------------------------------------------

def _pattern_cases(seed: int, edges: bool = False):
    cases = []
    for i, shape in enumerate(EDGE_SHAPES if edges else SHAPES):
        q, k = random_inputs(1000 * seed + i, shape, shape)
        cases.append((2 * q, 2 * k))   # scores large enough that the 1/sqrt(Dh) scale matters
    return in_float64(cases) if edges else cases


def _dh(q):
    return q.size(-1)


PATTERN_MISTAKES = [
    Mistake(lambda q, k: _masked_softmax(_scores(q, k, 1 / math.sqrt(_dh(q))), _tril(q.size(-2)).T),
            "the mask points the wrong way: query i may look at keys j <= i (lower triangle, torch.tril), "
            "not at the future"),
    Mistake(lambda q, k: _masked_softmax(_scores(q, k, 1 / math.sqrt(_dh(q))), _tril(q.size(-2)).tril(-1)),
            "you masked the diagonal too (triu(0) instead of triu(1)): query i may look at itself, so mask only "
            "the keys j > i; with the diagonal masked, query 0 has no key left and its row is NaN"),
    Mistake(lambda q, k: _masked_softmax(_scores(q, k, 1.0), _tril(q.size(-2))),
            "the scale is missing: divide the scores q·k by sqrt(Dh) (Dh = q.size(-1)) before the softmax"),
    Mistake(lambda q, k: _masked_softmax(_scores(q, k, 1 / _dh(q)), _tril(q.size(-2))),
            "you divided by Dh: the scale is 1/sqrt(Dh)"),
    Mistake(lambda q, k: _masked_softmax(_scores(q, k, 1 / math.sqrt(_dh(q))), _tril(q.size(-2)), dim=-2),
            "softmax over the wrong axis: each *row* (one query, over its keys) must sum to 1 — softmax(dim=-1)"),
    Mistake(lambda q, k: _scores(q, k, 1 / math.sqrt(_dh(q))).softmax(-1),
            "no causal mask: set the scores of future keys (j > i) to -inf before the softmax"),
    Mistake(lambda q, k: _scores(q, k, 1 / math.sqrt(_dh(q))).softmax(-1) * _tril(q.size(-2)),
            "you masked after the softmax: the rows no longer sum to 1 — mask the scores with -inf first"),
    Mistake(lambda q, k: _scores(q, k, 1 / math.sqrt(_dh(q))).masked_fill(~_tril(q.size(-2)), 0.0).softmax(-1),
            "you filled the future with 0, not -inf: exp(0) = 1 still gives future keys weight"),
]


# The Korean hints of each list of mistakes, in the list's order (the Korean edition's checker names the same ones).
PATTERN_HINTS_KO = [
    "마스크 방향이 반대입니다. 쿼리 i는 키 j <= i(아래 삼각형, torch.tril)를 볼 수 있고, 미래는 볼 수 없습니다",
    "대각선까지 마스킹했습니다(triu(1) 대신 triu(0)). 쿼리 i는 자기 자신을 볼 수 있으므로 키 j > i만 마스킹하세요. "
    "대각선을 마스킹하면 쿼리 0에는 남는 키가 없어 그 행이 NaN이 됩니다",
    "스케일이 빠졌습니다. softmax 전에 점수 q·k를 sqrt(Dh)(Dh = q.size(-1))로 나누세요",
    "Dh로 나누었습니다. 스케일은 1/sqrt(Dh)입니다",
    "softmax의 축이 틀렸습니다. 각 *행*(쿼리 하나가 자기 키들에 주는 가중치)의 합이 1이어야 합니다. softmax(dim=-1)",
    "인과 마스크가 없습니다. softmax 전에 미래 키(j > i)의 점수를 -inf로 두세요",
    "softmax 뒤에 마스킹했습니다. 그러면 행의 합이 더는 1이 아닙니다. 먼저 점수를 -inf로 마스킹하세요",
    "미래를 -inf가 아니라 0으로 채웠습니다. exp(0) = 1이므로 미래 키가 여전히 가중치를 받습니다",
]
ATTEND_HINTS_KO = [
    "전치한 패턴을 썼습니다. i행은 쿼리 i가 키 j들에 주는 가중치이므로 z_i = Σ_j p[i, j] v_j (pattern @ v)입니다",
    "앞쪽 값들의 단순 평균입니다. 각 값에 패턴의 가중치를 곱하세요",
    "각 위치의 자기 값만 스케일했습니다. z_i는 *모든* 위치 j를 가중치 p[i, j]로 섞습니다",
    "헤드에 대해 합했습니다. 헤드마다 자기 값을 옮기므로 헤드 축을 남기세요",
]
SWAP_HINTS_KO = [
    "그것은 패턴 교환입니다. 값 교환은 이 시퀀스의 패턴을 그대로 두고, 층이 다른 시퀀스에서 계산한 *값*을 가져옵니다",
    "각 시퀀스에 자기 값을 돌려주었습니다. 그래서 손실이 원래 손실과 같습니다. 값을 줄 시퀀스는 배치의 다른 "
    "시퀀스입니다(배치를 하나 굴린 것)",
    "값을 위치 축을 따라 밀었습니다. 교환은 다른 *시퀀스*, 즉 배치 축에서, 그리고 그 시퀀스의 별도 순전파에서 값을 "
    "가져옵니다",
]
CONTRIBUTION_HINTS_KO = [
    "값 v_j 자체에 가중치를 곱했습니다. 변환된 값은 f(x_j) = v_j W_O^hᵀ, 즉 헤드가 스트림에 쓰는 것(수 D개)이므로 "
    "먼저 v에 헤드 h의 W_O 열을 곱하세요",
    "W_O의 행을 가져왔습니다. nn.Linear는 가중치를 (out, in) = (D, H·Dh)로 저장하므로, 헤드 h는 행이 아니라 열 "
    "h·Dh부터 (h+1)·Dh까지를 통해 씁니다",
    "W_O의 열을 H개마다 하나씩 가져왔습니다. 헤드들의 출력은 이어 붙여지므로 헤드 h의 열은 이웃한 Dh개의 한 덩어리, "
    "h·Dh부터 (h+1)·Dh까지입니다",
    "다른 헤드(헤드 0)의 W_O 열을 썼습니다. 헤드 h는 열 h·Dh부터 (h+1)·Dh까지를 통해 씁니다",
    "패턴을 전치해서 썼습니다. 패턴의 항목 (i, j)는 쿼리 i가 소스 j에 주는 가중치이며, 소스 j의 벡터에 곱합니다",
    "항목 (i, j)에는 쿼리의 f(x_i)가 아니라 소스의 벡터 f(x_j)가 들어가야 합니다. f의 새 축은 쿼리 자리에 둡니다",
    "소스에 대해 합했습니다. 그것은 헤드의 쓰기 (B, T, D)입니다. 쿼리와 소스의 쌍마다 벡터 하나, 즉 (B, T, T, D)를 "
    "남기세요",
    "노름 α_ij ‖f(x_j)‖ (B, T, T)를 돌려주었습니다. 벡터 α_ij f(x_j) (B, T, T, D)를 돌려주세요. 노름은 "
    ".norm(dim=-1) 한 번이면 됩니다",
    "가중치를 곱하기 전에 f(x_j)의 길이를 1로 맞췄습니다. 그 길이 ‖f(x_j)‖가 바로 가중치가 놓치는 인자이니 그대로 두세요",
    "패턴을 헤드에 대해 평균했습니다. 헤드 h 자신의 패턴을 가중치로 쓰세요",
    "가중치가 빠졌습니다. 모든 쿼리가 각 소스의 벡터 f(x_j)를 통째로 받았습니다. 헤드 h의 패턴에서 그 쿼리가 그 소스에 "
    "주는 가중치 α_ij를 곱하세요",
]


def check_attention_pattern(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 02.1: ``fn(q (B, H, T, Dh), k (B, H, T, Dh)) -> (B, H, T, T)``, the causal pattern
    ``softmax(q kᵀ / sqrt(Dh))`` with future keys masked; rows sum to 1."""
    kw.setdefault("stub_hint", (
        "scale the dot products of queries with keys by 1/sqrt(Dh); a key after the query must get weight exactly 0, "
        "so set its score before the softmax to a value whose exp is 0; the weights of one query sum to 1",
        "쿼리와 키의 내적에 1/sqrt(Dh)를 곱하세요. 쿼리보다 뒤에 있는 키는 가중치가 정확히 0이어야 하므로, softmax "
        "전에 그 점수를 exp가 0이 되는 값으로 두세요. 한 쿼리의 가중치 합은 1입니다"))
    return check_function(("attention pattern", "어텐션 패턴"), fn, attention_pattern, _pattern_cases(seed, edges),
                          with_hints(PATTERN_MISTAKES, PATTERN_HINTS_KO), **kw)


# --- exercise 2: the value-weighted sum -----------------------------------------------------------------------

def _attend_cases(seed: int, edges: bool = False):
    cases = []
    for i, (B, H, T, Dh) in enumerate(EDGE_SHAPES if edges else SHAPES):
        g = torch.Generator().manual_seed(1000 * seed + 100 + i)
        scores = torch.randn(B, H, T, T, generator=g) * 2
        pattern = _masked_softmax(scores, _tril(T))
        (v,) = random_inputs(1000 * seed + i, (B, H, T, Dh))
        cases.append((pattern, v))
    return in_float64(cases) if edges else cases


ATTEND_MISTAKES = [
    Mistake(lambda p, v: p.transpose(-2, -1) @ v,
            "you used the transposed pattern: row i holds query i's weights over keys j, so z_i = Σ_j p[i, j] v_j "
            "(pattern @ v)"),
    Mistake(lambda p, v: v.cumsum(-2) / torch.arange(1, v.size(-2) + 1).view(-1, 1),
            "that is the plain average of the earlier values: weight each value by the pattern"),
    Mistake(lambda p, v: p.sum(-1, keepdim=True) * v,
            "you scaled each position's own value: z_i mixes *all* positions j with weights p[i, j]"),
    Mistake(lambda p, v: (p @ v).sum(1, keepdim=True).expand_as(v),
            "you summed over heads: every head moves its own values, keep the head axis"),
]


def check_attend(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 02.2: ``fn(pattern (B, H, T, T), v (B, H, T, Dh)) -> (B, H, T, Dh)`` with
    ``z[..., i, :] = Σ_j pattern[..., i, j] · v[..., j, :]``."""
    kw.setdefault("stub_hint", (
        "row i of the pattern holds query i's weights over the keys j: one matrix product, pattern @ v",
        "패턴의 i행은 쿼리 i가 키 j들에 주는 가중치입니다. 행렬 곱 한 번, pattern @ v"))
    return check_function(("attend", "값의 가중합"), fn, attend, _attend_cases(seed, edges),
                          with_hints(ATTEND_MISTAKES, ATTEND_HINTS_KO), **kw)


# --- exercise 3: the value swap -------------------------------------------------------------------------------

def _swap_cases(seed: int):
    cases = []
    for i, layer in enumerate((0, 1, 2)):
        model = TinyGPT(TinyGPTConfig(vocab_size=13, n_layers=3, d_model=16, n_heads=2, block_size=8,
                                      seed=1000 * seed + i)).eval()
        with torch.no_grad():   # an untrained model barely reacts to a swap: larger weights make each mistake show
            for p in model.parameters():
                p.mul_(4.0)
        g = torch.Generator().manual_seed(1000 * seed + 50 + i)
        ids = torch.randint(0, 13, (3, 9), generator=g)
        cases.append((model, ids[:, :-1], ids[:, 1:], layer))
    return cases


def _patched_loss(model, x, y, name, replacement):
    with torch.no_grad():
        return float(model(x, y, hooks={name: replacement}).loss)


def _trace(model, x, name):
    with torch.no_grad():
        return model(x, trace=True).trace[name]


SWAP_MISTAKES = [
    Mistake(lambda m, x, y, l: _patched_loss(m, x, y, f"blocks.{l}.attn.pattern",
                                             lambda p: _trace(m, x.roll(1, 0), f"blocks.{l}.attn.pattern")),
            "that is the pattern swap: the value swap keeps this sequence's pattern and takes the *values* the layer "
            "computed on the other sequence"),
    Mistake(lambda m, x, y, l: _patched_loss(m, x, y, f"blocks.{l}.attn.v_mix",
                                             lambda v: _trace(m, x, f"blocks.{l}.attn.v_mix")),
            "you gave every sequence its own values back: the loss is the clean loss. The donor is another sequence "
            "of the batch (the batch rolled by one)"),
    Mistake(lambda m, x, y, l: _patched_loss(m, x, y, f"blocks.{l}.attn.v_mix", lambda v: v.roll(1, 2)),
            "you shifted the values along the positions: the swap takes them from another *sequence*, which is the "
            "batch axis, and from a separate forward pass of that sequence"),
]


def check_value_swap(fn, *, seed: int = 0, **kw) -> bool:
    """Exercise 02.3: ``fn(model, x (B, T), y (B, T), layer) -> float``, the mean loss when layer ``layer`` attends
    with this batch's own pattern over the values it computed on the batch rolled by one sequence."""
    kw.setdefault("graded", False)   # no classroom assignment holds this exercise (yet): no hidden checks
    kw.setdefault("stub_hint", (
        "two forward passes: one traces the other sequences (which input is that?) to read the values the layer "
        "moves; the other runs this batch with a patch that hands the layer those values instead of its own",
        "순전파 두 번: 한 번은 다른 시퀀스들을 추적해(그 입력은 무엇일까요?) 층이 옮기는 값을 읽고, 다른 한 번은 "
        "층에 자신의 값 대신 그 값을 건네는 패치를 걸고 이 배치를 실행합니다"))
    return check_function(("value swap", "값 교환"), fn, value_swap_loss, _swap_cases(seed),
                          with_hints(SWAP_MISTAKES, SWAP_HINTS_KO), **kw)


# --- exercise 4: the norm-based contributions of one head ------------------------------------------------------

def _contribution_cases(seed: int, edges: bool = False):
    """(pattern (B, H, T, T), v (B, H, T, Dh), w_o (D, H·Dh), head) with D = H·Dh, as in the course's models, and the
    last head, so that a learner who reads head 0's columns (or every H-th column) shows up wherever H > 1."""
    cases = []
    for i, (B, H, T, Dh) in enumerate(EDGE_SHAPES if edges else SHAPES):
        g = torch.Generator().manual_seed(1000 * seed + 200 + i)
        pattern = _masked_softmax(torch.randn(B, H, T, T, generator=g) * 2, _tril(T))
        v, w_o = random_inputs(1000 * seed + 300 + i, (B, H, T, Dh), (H * Dh, H * Dh))
        cases.append((pattern, v, w_o, H - 1))
    return in_float64(cases) if edges else cases


def _head_columns(w_o, head, Dh):
    return w_o[:, head * Dh:(head + 1) * Dh]                  # (D, Dh): the block head h writes through


def _f(v, w_o, head, columns=None):
    """f(x_j) = v_j W_O^hᵀ (B, T, D) of head ``head``, through ``columns`` of W_O (default: the right ones)."""
    Dh = v.size(-1)
    return v[:, head] @ (_head_columns(w_o, head, Dh) if columns is None else columns).T


def _weighted(pattern, f, head):
    return pattern[:, head, :, :, None] * f[:, None, :, :]


CONTRIBUTION_MISTAKES = [
    Mistake(lambda p, v, w, h: p[:, h, :, :, None] * v[:, h, None, :, :],
            "you weighted the values v_j themselves: the transformed value is f(x_j) = v_j W_O^hᵀ, what the head "
            "writes into the stream (D numbers), so multiply v by head h's columns of W_O first"),
    Mistake(lambda p, v, w, h: _weighted(p, v[:, h] @ w[h * v.size(-1):(h + 1) * v.size(-1)], h),
            "you took rows of W_O: nn.Linear stores its weight as (out, in) = (D, H·Dh), so head h writes through "
            "its columns h·Dh to (h+1)·Dh, not its rows"),
    Mistake(lambda p, v, w, h: _weighted(p, _f(v, w, h, w[:, h::v.size(1)]), h),
            "you took every H-th column of W_O: the heads' outputs are concatenated, so head h's columns are one "
            "block of Dh neighbours, h·Dh to (h+1)·Dh"),
    Mistake(lambda p, v, w, h: _weighted(p, _f(v, w, h, _head_columns(w, 0, v.size(-1))), h),
            "you used another head's columns of W_O (head 0's): head h writes through the columns h·Dh to (h+1)·Dh"),
    Mistake(lambda p, v, w, h: _weighted(p.transpose(-2, -1), _f(v, w, h), h),
            "you used the pattern transposed: entry (i, j) of the pattern is query i's weight on source j, and it "
            "scales source j's vector"),
    Mistake(lambda p, v, w, h: p[:, h, :, :, None] * _f(v, w, h)[:, :, None, :],
            "entry (i, j) must carry the source's vector f(x_j), not the query's f(x_i): the new axis of f goes "
            "where the queries are"),
    Mistake(lambda p, v, w, h: p[:, h] @ _f(v, w, h),
            "you summed over the sources: that is the head's write (B, T, D). Keep one vector per pair of query and "
            "source, (B, T, T, D)"),
    Mistake(lambda p, v, w, h: p[:, h] * _f(v, w, h).norm(dim=-1)[:, None, :],
            "you returned the norms α_ij ‖f(x_j)‖ (B, T, T): return the vectors α_ij f(x_j) (B, T, T, D); their "
            "norms are one .norm(dim=-1) away"),
    Mistake(lambda p, v, w, h: _weighted(p, torch.nn.functional.normalize(_f(v, w, h), dim=-1), h),
            "you scaled f(x_j) to length 1 before weighting it: its length ‖f(x_j)‖ is the factor the weights "
            "miss, keep it"),
    Mistake(lambda p, v, w, h: p.mean(dim=1)[..., None] * _f(v, w, h)[:, None, :, :],
            "you averaged the pattern over the heads: weight with head h's own pattern"),
    Mistake(lambda p, v, w, h: _f(v, w, h)[:, None, :, :].expand(-1, p.size(-2), -1, -1),
            "the weights are missing: every query got each source's whole vector f(x_j); scale it by that query's "
            "weight on the source, α_ij from head h's pattern"),
]


def check_head_contributions(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 02.4: ``fn(pattern (B, H, T, T), v (B, H, T, Dh), w_o (D, H·Dh), head) -> (B, T, T, D)``, the
    vectors α_ij f(x_j) of head ``head`` with f(x_j) = v_j W_O^hᵀ (Kobayashi et al., arXiv 2004.10102)."""
    kw.setdefault("graded", False)   # no classroom assignment holds this exercise (yet): no hidden checks
    kw.setdefault("stub_hint", (
        "two factors make entry (i, j): what source j writes at weight 1 (which columns of W_O does head h write "
        "through?) and the weight query i gives it",
        "항목 (i, j)는 두 인자의 곱입니다: 소스 j가 가중치 1에서 쓰는 것(헤드 h는 W_O의 어느 열을 통해 쓸까요?)과 "
        "쿼리 i가 그 소스에 주는 가중치"))
    return check_function(("head contributions", "헤드 기여"), fn, head_contributions,
                          _contribution_cases(seed, edges), with_hints(CONTRIBUTION_MISTAKES, CONTRIBUTION_HINTS_KO),
                          **kw)
