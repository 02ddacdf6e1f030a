"""Chapter 03 exercises: attention with a value residual (ResFormer, arXiv 2410.17897), and a paired comparison.

* ``value_residual_attention(pattern, v, v_first, lambda_1, lambda_2)`` returns ``U_n = A_n · (λ1·V_1 + λ2·V_n)``:
  the first layer's values are mixed in *before* the attention-weighted sum, so V_1 is averaged with the current
  layer's own pattern A_n (the assignment's first task; ``v1_share``, its second, is below);
* ``value_residual_stack(x, layers, lambdas)`` (the chapter's Exercise 3.1): the same mixing wired into a stack of
  one-head attention layers, V_1 kept from the first layer's pass;
* ``paired_interval(variant, baseline)`` (the chapter's Exercise 3.2): the mean of the per-seed differences and its
  95 % Student-t interval.
"""
from __future__ import annotations

import math

import torch

from vrs_edu.course.checks import CheckFailed, Mistake, check_function, in_float64, random_inputs, wrap
from vrs_edu.i18n.korean import attach
from vrs_edu.i18n.language import in_language, resolve_language
from vrs_edu.lab.analysis import t_critical
from vrs_edu.nn.attention import attend, attention_pattern, causal_mask
from vrs_edu.nn.value_residual import mix_values


def _ref_value_residual_attention(pattern, v, v_first, lambda_1, lambda_2):
    return attend(pattern, mix_values(v, v_first, lambda_1, lambda_2))


def _random_pattern(seed: int, B: int, H: int, T: int) -> torch.Tensor:
    """A valid causal attention pattern (B, H, T, T): softmax of random scores, masked above the diagonal."""
    (scores,) = random_inputs(seed, (B, H, T, T))
    return torch.softmax(scores.masked_fill(~causal_mask(T), float("-inf")), dim=-1)


def _value_cases(seed: int, edges: bool, offset: int = 0, for_share: bool = False) -> list[tuple]:
    """Random ``(pattern, v, v_first, lambda_1, lambda_2)``, three shapes (B, H, T, Dh); the lambdas distinct, so a
    swap shows. ``for_share``: V_1 on a scale of its own in each case (so the share is not the coefficients') and
    λ1 negative in the second (a learned λ can be: the share must stay in 0..1). In float64 for the edges."""
    shapes = [(1, 1, 1, 1), (1, 2, 1, 3), (2, 1, 2, 1)] if edges else [(2, 2, 5, 4), (1, 4, 7, 8), (3, 1, 4, 2)]
    cases = []
    for i, (B, H, T, Dh) in enumerate(shapes):
        s = 1000 * seed + 10 * i + offset
        v, v_first = random_inputs(s + 1, (B, H, T, Dh), (B, H, T, Dh))
        g = torch.Generator().manual_seed(s + 2)
        lam1, lam2 = (0.2 + torch.rand(2, generator=g)).tolist()
        if for_share:
            v_first, lam1 = v_first * (0.5 + i), (-lam1 if i == 1 else lam1)
        cases.append((_random_pattern(s, B, H, T), v, v_first, lam1, lam2))
    return in_float64(cases) if edges else cases


# Known wrong variants and what to tell a learner whose function matches one.
MISTAKES = [
    Mistake(lambda a, v, v1, l1, l2: attend(a, l2 * v1 + l1 * v),
            "λ1 and λ2 are swapped: λ1 weighs V_1 (the first layer's values), λ2 this layer's own V_n"),
    Mistake(lambda a, v, v1, l1, l2: l1 * v1 + l2 * attend(a, v),
            "V_1 was added after the weighted sum: mix the values first (V_n' = λ1·V_1 + λ2·V_n), then "
            "average V_n' with the pattern, so that V_1 is read at the positions this layer attends to"),
    Mistake(lambda a, v, v1, l1, l2: attend(a, v) + l1 * (v1 - v),
            "that is NeuTRENO (U = A·V_n + λ(V_1 − V_n), a correction added after attention), not ResFormer"),
    Mistake(lambda a, v, v1, l1, l2: attend(a, l1 * v1 + v),
            "λ2 is missing: scale this layer's values V_n by λ2 as well"),
    Mistake(lambda a, v, v1, l1, l2: attend(a.transpose(-1, -2), l1 * v1 + l2 * v),
            "the pattern is transposed: row i of A holds query i's weights over keys, so U = A @ V'"),
    Mistake(lambda a, v, v1, l1, l2: attend(a, 0.5 * v1 + 0.5 * v),
            "you used the fixed 0.5/0.5 of the official code: use the lambda_1 and lambda_2 you are given"),
    Mistake(lambda a, v, v1, l1, l2: l1 * v1 + l2 * v,
            "you returned the mixed values V_n' without the attention: average them with the pattern, U = A @ V_n'"),
    Mistake(lambda a, v, v1, l1, l2: attend(a, l1 * v1),
            "this layer's own values are missing: V_n' = λ1·V_1 + λ2·V_n keeps V_n, weighted by λ2"),
]


#: the exercise's tensor arguments, in order, as the hint names them
_TENSOR_ARGS = ("pattern", "v", "v_first")


def mutated_inputs(fn, case: tuple) -> list[str]:
    """The names of the tensor arguments of ``case`` that ``fn`` changed in place (e.g. ``v.mul_(lambda_2)`` or
    ``v += …``): ``fn`` runs on copies, which are then compared with the originals. In the chapter such a
    function would overwrite the traced model's own V_n. A call that raises changes nothing here (the main check
    reports it)."""
    args = [a.clone() if isinstance(a, torch.Tensor) else a for a in case]
    try:
        fn(*args)
    except Exception:   # the learner's code may raise anything; check_function reports it with its hint
        return []
    return [n for n, a, b in zip(_TENSOR_ARGS, args, case)
            if isinstance(a, torch.Tensor) and not torch.equal(a, b)]

# The Korean hints of the assignment's two lists (MISTAKES, SHARE_MISTAKES), in the lists' order.
HINTS_KO = [
    "λ1과 λ2가 바뀌었습니다. λ1은 V_1(첫 층의 값)에, λ2는 이 층 자신의 V_n에 곱합니다",
    "V_1을 가중합 뒤에 더했습니다. 먼저 값을 섞고(V_n' = λ1·V_1 + λ2·V_n), 그다음 패턴으로 V_n'을 평균하세요. "
    "그래야 V_1이 이 층이 어텐션하는 위치에서 읽힙니다",
    "그것은 ResFormer가 아니라 NeuTRENO입니다(U = A·V_n + λ(V_1 − V_n), 어텐션 뒤에 더하는 보정)",
    "λ2가 빠졌습니다. 이 층의 값 V_n에도 λ2를 곱하세요",
    "패턴이 전치되었습니다. A의 i행은 쿼리 i가 키들에 주는 가중치이므로 U = A @ V'입니다",
    "공식 코드의 고정값 0.5/0.5를 썼습니다. 주어진 lambda_1과 lambda_2를 쓰세요",
    "어텐션 없이 섞은 값 V_n'을 반환했습니다. 패턴으로 평균하세요: U = A @ V_n'",
    "이 층 자신의 값이 빠졌습니다. V_n' = λ1·V_1 + λ2·V_n에는 λ2를 곱한 V_n이 들어 있습니다",
]
SHARE_HINTS_KO = [
    "노름을 쿼리 축을 따라 구했습니다. 각 부분의 길이는 특성 축 Dh(마지막 축)를 따라 구하세요. 쿼리마다 비중 "
    "하나, 모양 (B, H, T)입니다",
    "어텐션 전의 값을 쟀습니다. 쿼리는 V_1을 자기 패턴을 거쳐서만 읽으므로, 패턴이 각각을 평균한 뒤의 출력의 두 "
    "부분을 비교하세요",
    "람다가 빠졌습니다. 출력의 두 부분은 A·(λ1·V_1)과 A·(λ2·V_n)입니다",
    "출력 전체의 길이로 나누었습니다. 두 부분은 서로 일부 상쇄될 수 있으므로, 노름 기반 비중은 두 부분의 길이의 "
    "합으로 나눕니다",
    "비중을 평균해 수 하나로 만들었습니다. 쿼리마다 비중 하나를 반환하세요. 모양은 (B, H, T)입니다",
    "그것은 이 층 자신의 값 V_n의 비중입니다. 물음은 V_1에서 얼마나 오는가입니다",
    "길이의 제곱을 비교했습니다. 노름 기반 비중은 길이 자체를 비교합니다",
    "람다를 절댓값 없이 노름 밖으로 꺼냈습니다. ‖λ·x‖ = |λ|·‖x‖이며, 학습된 λ는 음수일 수 있습니다(그러면 "
    "비중이 0..1을 벗어납니다)",
    "그것은 계수만의 비중 λ1 / (λ1 + λ2)입니다. 출력의 두 부분을 재세요. 그 길이는 값과 패턴에도 달려 있습니다",
]
# The Korean hints of each list of mistakes, in the list's order (the Korean edition's checker names the same ones).
STACK_HINTS_KO = [
    "V_1을 현재 층에서 가져왔습니다(그러면 V_n'은 (λ1 + λ2)·V_n일 뿐입니다). 반복문의 첫 번째 층이 계산한 값을 "
    "보관했다가 그 뒤의 모든 층에 섞으세요",
    "현재 층의 입력에 첫 층의 W_v를 적용해 V_1을 다시 계산했습니다. V_1은 첫 층이 자기 입력에서 계산한 값이며, 한 번 "
    "저장해 다시 씁니다",
    "바로 앞 층의 값을 섞었습니다. 그 뒤의 모든 층은 V_(n-1)이 아니라 첫 층의 V_1을 읽습니다",
    "V_1이 층마다 섞인 값으로 덮어써졌습니다. 첫 층의 V_1을 한 번 저장하고 다시 대입하지 마세요. 섞은 V_n'은 새 "
    "이름에 쓰세요",
    "V_1을 어텐션 합 뒤에 더했습니다. 먼저 값을 섞고(V_n' = λ1·V_1 + λ2·V_n), 그다음 이 층의 패턴이 V_n'을 평균하게 "
    "하세요",
    "첫 층의 출력 A_1·V_1을 더했습니다. V_1은 이 층 자신의 패턴 A_n으로 평균해야, 이 층이 어텐션하는 위치에서 "
    "읽힙니다",
    "λ1과 λ2가 바뀌었습니다. λ1은 V_1(첫 층의 값)에, λ2는 이 층 자신의 V_n에 곱합니다",
    "각 층이 스트림을 대체했습니다. 층은 자기 출력을 읽은 것에 더합니다(h = h + …)",
]
PAIRED_HINTS_KO = [
    "두 평균을 짝짓지 않은 것처럼(각 평균의 퍼짐으로) 비교했습니다. 먼저 시드마다 차이를 구하고, 그 차이들의 평균과 "
    "퍼짐을 구하세요",
    "부호가 뒤집혔습니다. 차이는 변형 − 기준선입니다(음수 = 변형의 손실이 더 낮음)",
    "모집단 표준편차(n으로 나눔)를 썼습니다. 표본 표준편차는 n − 1로 나눕니다",
    "정규분포의 1.96을 썼습니다. 시드가 몇 개뿐이면 구간에는 자유도 n − 1의 스튜던트 t가 필요합니다(시드 다섯 개면 "
    "2.78)",
    "자유도 n의 스튜던트 t를 썼습니다. 차이들의 평균과 표준편차는 자유도 n − 1을 남깁니다",
    "표준편차를 sqrt(n)으로 나누지 않았습니다. 그것은 평균의 퍼짐이 아니라 시드 하나의 차이의 퍼짐입니다",
    "각 목록을 따로 정렬했습니다. 그러면 짝이 깨집니다. 시드 순서대로 차이를 구하세요",
    "그것은 90 % 구간입니다(0.95 분위수). 95 % 양측 구간에는 0.975 분위수가 필요합니다",
]


def _in_language(mistakes: list[Mistake], hints_ko: list[str] | None, lang: str | None) -> list[Mistake]:
    """``mistakes`` with their hints in ``lang`` (default: the running edition): the Korean ones from ``hints_ko``
    (None: the English hints stay)."""
    if resolve_language(lang) == "en" or hints_ko is None:
        return list(mistakes)
    if len(hints_ko) != len(mistakes):
        raise ValueError(f"hints_ko: expected one hint per mistake ({len(mistakes)}), got {len(hints_ko)}")
    return [Mistake(m.fn, hint) for m, hint in zip(mistakes, hints_ko)]



def check_value_residual_attention(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 03: ``fn(pattern (B, H, T, T), v (B, H, T, Dh), v_first (B, H, T, Dh), lambda_1, lambda_2)
    -> (B, H, T, Dh)`` = ``pattern @ (lambda_1 * v_first + lambda_2 * v)``. ``seed`` picks the random cases
    (0: the public checks; graders use others); ``edges``: one position, Dh = 1, in float64."""
    cases = _value_cases(seed, edges)
    # the hint points to the two steps without writing them (the learner trial: a hint that is the answer)
    lang = kw.get("lang")
    kw.setdefault("stub_hint", in_language(
        "two steps: first build the values this layer averages from the two value tensors and the two weights; "
        "then let the pattern average them, as chapter 02's attend did",
        "두 단계입니다. 먼저 두 값 텐서와 두 가중치로 이 층이 평균할 값을 만드세요. 그다음 02장의 attend처럼 패턴이 "
        "그것을 평균하게 하세요", lang))
    for case in cases:
        changed = mutated_inputs(fn, case)
        if changed:
            msg = (f"✗ value residual attention: your function changed its input {' and '.join(changed)} in place "
                   "(an in-place operation such as `v *= lambda_2`, `v.mul_(…)` or `v += …`); in the chapter that "
                   "would overwrite the model's own values. Build a new tensor instead (`lambda_2 * v`)."
                   if resolve_language(lang) == "en" else
                   f"✗ value residual 어텐션: 함수가 입력 {attach(', '.join(changed), '을/를')} 제자리에서 바꾸었습니다(`v *= lambda_2`, "
                   "`v.mul_(…)`, `v += …` 같은 제자리 연산). 장에서는 그러면 모델 자신의 값이 덮어써집니다. 대신 새 "
                   "텐서를 만드세요(`lambda_2 * v`).")
            if kw.get("raise_on_fail"):
                raise CheckFailed(" ".join(msg.split()))
            print(wrap(msg))
            return False
    return check_function(in_language("value residual attention", "value residual 어텐션", lang), fn,
                          _ref_value_residual_attention, cases, _in_language(MISTAKES, HINTS_KO, lang), **kw)


# --- the measurement: how much of layer n's output comes from V_1 (the assignment's second task) ------------------

def _ref_v1_share(pattern, v, v_first, lambda_1, lambda_2):
    """V_1's share of layer n's value-residual output, per query, read by norms (the norm-based view, Kobayashi et
    al., arXiv 2004.10102): ``‖A(λ1·V_1)‖ / (‖A(λ1·V_1)‖ + ‖A(λ2·V_n)‖)`` with the norms over Dh.

    pattern (B, H, T, T), v and v_first (B, H, T, Dh) -> (B, H, T), each in 0..1.

    Raises:
        ValueError: if ``pattern`` is not (B, H, T, T) with the B, H, T of ``v`` (or ``v_first`` differs from ``v``).
    """
    if pattern.dim() != 4 or v.dim() != 4 or pattern.shape[:3] != v.shape[:3] or pattern.size(-1) != v.size(-2):
        raise ValueError(f"v1_share: expected pattern (B, H, T, T) and v (B, H, T, Dh) with the same B, H, T, got "
                         f"pattern {tuple(pattern.shape)} and v {tuple(v.shape)}")
    from_first = _ref_value_residual_attention(pattern, v, v_first, lambda_1, 0.0).norm(dim=-1)
    from_own = _ref_value_residual_attention(pattern, v, v_first, 0.0, lambda_2).norm(dim=-1)
    return from_first / (from_first + from_own)


def _parts(a, v, v1, l1, l2):
    """The two parts of the output, A·(λ1·V_1) and A·(λ2·V_n) (for the mistakes below)."""
    return attend(a, l1 * v1), attend(a, l2 * v)


def _share(first, own):
    return first / (first + own)


# Known wrong variants of v1_share and what to tell a learner whose function matches one.
SHARE_MISTAKES = [
    Mistake(lambda a, v, v1, l1, l2: _share(*(p.norm(dim=-2) for p in _parts(a, v, v1, l1, l2))),
            "your norms run over the queries: take each part's length over the feature axis Dh (the last one), "
            "one share per query, shape (B, H, T)"),
    Mistake(lambda a, v, v1, l1, l2: _share((l1 * v1).norm(dim=-1), (l2 * v).norm(dim=-1)),
            "you measured the values before attention: a query reads V_1 only through its pattern, so compare "
            "the two parts of the output, after the pattern has averaged each"),
    Mistake(lambda a, v, v1, l1, l2: _share(attend(a, v1).norm(dim=-1), attend(a, v).norm(dim=-1)),
            "the lambdas are missing: the two parts of the output are A·(λ1·V_1) and A·(λ2·V_n)"),
    Mistake(lambda a, v, v1, l1, l2: attend(a, l1 * v1).norm(dim=-1) / attend(a, mix_values(v, v1, l1, l2)).norm(
        dim=-1),
            "you divided by the length of the whole output: the two parts can partly cancel, so the norm-based "
            "share divides by the sum of the two parts' lengths"),
    Mistake(lambda a, v, v1, l1, l2: _ref_v1_share(a, v, v1, l1, l2).mean(),
            "you averaged the shares into one number: return one share per query, shape (B, H, T)"),
    Mistake(lambda a, v, v1, l1, l2: 1.0 - _ref_v1_share(a, v, v1, l1, l2),
            "that is the share of this layer's own values V_n: the question is how much comes from V_1"),
    Mistake(lambda a, v, v1, l1, l2: _share(*(p.norm(dim=-1).pow(2) for p in _parts(a, v, v1, l1, l2))),
            "you compared squared lengths: the norm-based share compares the lengths themselves"),
    Mistake(lambda a, v, v1, l1, l2: _share(l1 * attend(a, v1).norm(dim=-1), l2 * attend(a, v).norm(dim=-1)),
            "you took a lambda out of the norm without its absolute value: ‖λ·x‖ = |λ|·‖x‖, and a learned λ can be "
            "negative (then your share leaves 0..1)"),
    Mistake(lambda a, v, v1, l1, l2: torch.full(a.shape[:-1], abs(l1) / (abs(l1) + abs(l2)), dtype=a.dtype),
            "that is the share of the coefficients alone, λ1 / (λ1 + λ2): measure the two parts of the output, "
            "whose lengths depend on the values and the pattern as well"),
]


def check_v1_share(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 03.2: ``fn(pattern (B, H, T, T), v (B, H, T, Dh), v_first (B, H, T, Dh), lambda_1, lambda_2)
    -> (B, H, T)`` = ``‖A(λ1·V_1)‖ / (‖A(λ1·V_1)‖ + ‖A(λ2·V_n)‖)`` per query, norms over Dh. ``seed`` picks the
    random cases (0: the public checks; graders use others); ``edges``: one position, Dh = 1, in float64."""
    cases = _value_cases(seed, edges, offset=5, for_share=True)
    lang = kw.get("lang")
    kw.setdefault("stub_hint", in_language(
        "the output has two parts, one made of V_1 and one of this layer's own values, each with its weight; your "
        "function from the first task makes either alone. Measure each part's length per query and compare",
        "출력은 두 부분으로 되어 있습니다. 하나는 V_1로, 하나는 이 층 자신의 값으로 만들어지며 각각 자기 가중치를 "
        "가집니다. 첫 과제의 함수는 둘 중 하나만 만들 수 있습니다. 쿼리마다 각 부분의 길이를 재어 비교하세요", lang))
    return check_function(in_language("V_1 share", "V_1 비중", lang), fn, _ref_v1_share, cases,
                          _in_language(SHARE_MISTAKES, SHARE_HINTS_KO, lang), **kw)


# --- Exercise 3.1: the value residual wired into a stack of attention layers ---------------------------------------

def value_residual_stack(x, layers, lambdas, *, v1_from=None, mix_after=False, reuse_first_output=False,
                         residual=True, swap=False):
    """A stack of one-head causal attention layers with ResFormer's value residual.

    x (B, T, D): the stream entering the first layer; ``layers``: one dict per layer with ``"W_q"``, ``"W_k"``,
    ``"W_v"``, ``"W_o"``, each (D, D); ``lambdas``: one pair (λ1, λ2) per layer after the first. Layer n computes
    q, k, v = h·W_q, h·W_k, h·W_v from its input h and its causal pattern A_n; the first layer keeps its values as
    V_1, every later one averages V_n' = λ1·V_1 + λ2·V_n with A_n; each adds (A_n V_n')·W_o to the stream.
    Returns the stream after the last layer, (B, T, D).

    The keywords build the known mistakes (the defaults give the reference): ``v1_from`` "current" (V_1 taken from
    the current layer), "restream" (recomputed from the current stream with the first layer's W_v), "previous" (the
    previous layer's values), "overwrite" (each layer's mixed V_n' kept as V_1 for the next); ``mix_after``: V_1 added after the attention sum; ``reuse_first_output``: the first
    layer's output A_1·V_1 reused; ``residual``: False for a stack that replaces the stream; ``swap``: λ swapped.
    """
    h, v_first, u_first = x, None, None
    for n, layer in enumerate(layers):
        q, k, v = h @ layer["W_q"], h @ layer["W_k"], h @ layer["W_v"]
        pattern = attention_pattern(q, k)
        if n == 0:
            v_first, u = v, attend(pattern, v)       # V_1: the first layer's values, kept for every later one
            u_first = u
        else:
            lam1, lam2 = lambdas[n - 1][::-1] if swap else lambdas[n - 1]
            first = {"current": v, "restream": h @ layers[0]["W_v"]}.get(v1_from, v_first)
            if mix_after:
                u = attend(pattern, lam2 * v) + lam1 * first
            elif reuse_first_output:
                u = lam1 * u_first + lam2 * attend(pattern, v)
            else:
                u = attend(pattern, lam1 * first + lam2 * v)   # V_n' = λ1·V_1 + λ2·V_n, then the average
            if v1_from == "previous":
                v_first = v
            elif v1_from == "overwrite":                      # the mixed V_n' stored as the next layer's V_1
                v_first = lam1 * first + lam2 * v
        h = h + u @ layer["W_o"] if residual else u @ layer["W_o"]
    return h


def _ref_value_residual_stack(x, layers, lambdas):
    return value_residual_stack(x, layers, lambdas)


def _stack_cases(seed: int) -> list[tuple]:
    """Random ``(x, layers, lambdas)``: three shapes (B, T, D, L) with three or four layers (so that "the previous
    layer's values" differs from V_1), weights scaled by 1/sqrt(D), λ distinct per layer and per pair."""
    cases = []
    for i, (B, T, D, L) in enumerate([(2, 5, 4, 3), (1, 7, 8, 4), (3, 4, 6, 3)]):
        s = 1000 * seed + 10 * i + 7
        (x,) = random_inputs(s, (B, T, D))
        ws = random_inputs(s + 1, *[(D, D)] * (4 * L))
        layers = [{name: ws[4 * n + j] / D ** 0.5 for j, name in enumerate(("W_q", "W_k", "W_v", "W_o"))}
                  for n in range(L)]
        g = torch.Generator().manual_seed(s + 2)
        lambdas = [tuple((0.2 + torch.rand(2, generator=g)).tolist()) for _ in range(L - 1)]
        cases.append((x, layers, lambdas))
    return cases


STACK_MISTAKES = [
    Mistake(lambda x, ls, lam: value_residual_stack(x, ls, lam, v1_from="current"),
            "V_1 was taken from the current layer (then V_n' is only (λ1 + λ2)·V_n): keep the values the first "
            "layer computed, from the loop's first pass, and mix those into every later layer"),
    Mistake(lambda x, ls, lam: value_residual_stack(x, ls, lam, v1_from="restream"),
            "you recomputed V_1 from the current layer's input with the first layer's W_v: V_1 is what the first "
            "layer computed from its own input, stored once and reused"),
    Mistake(lambda x, ls, lam: value_residual_stack(x, ls, lam, v1_from="previous"),
            "you mixed in the previous layer's values: every later layer reads V_1, the first layer's, not "
            "V_(n-1)"),
    Mistake(lambda x, ls, lam: value_residual_stack(x, ls, lam, v1_from="overwrite"),
            "V_1 was overwritten by each layer's mixed values: store the first layer's V_1 once and never assign "
            "to it again; write the mix V_n' to a new name"),
    Mistake(lambda x, ls, lam: value_residual_stack(x, ls, lam, mix_after=True),
            "V_1 was added after the attention sum: mix the values first (V_n' = λ1·V_1 + λ2·V_n), then let "
            "this layer's pattern average V_n'"),
    Mistake(lambda x, ls, lam: value_residual_stack(x, ls, lam, reuse_first_output=True),
            "you added the first layer's output A_1·V_1: V_1 must be averaged with this layer's own pattern A_n, "
            "so that it is read at the positions this layer attends to"),
    Mistake(lambda x, ls, lam: value_residual_stack(x, ls, lam, swap=True),
            "λ1 and λ2 are swapped: λ1 weighs V_1 (the first layer's values), λ2 this layer's own V_n"),
    Mistake(lambda x, ls, lam: value_residual_stack(x, ls, lam, residual=False),
            "each layer replaced the stream: a layer adds its output to what it read (h = h + …)"),
]


def check_value_residual_stack(fn, *, seed: int = 0, **kw) -> bool:
    """Exercise 03.1: ``fn(x (B, T, D), layers, lambdas) -> (B, T, D)``, the stream after a stack of one-head
    attention layers with the value residual (see :func:`value_residual_stack`). ``seed`` picks the cases."""
    kw.setdefault("atol", 1e-4)
    kw.setdefault("graded", False)   # no classroom assignment holds this exercise: no hidden checks
    lang = kw.get("lang")
    kw.setdefault("stub_hint", in_language(
        "loop over the layers with the stream h; the first pass keeps its values for later, every later pass mixes "
        "them with its own before its pattern averages them",
        "스트림 h를 가지고 층을 차례로 도세요. 첫 번째 층은 자기 값을 나중을 위해 보관하고, 그 뒤의 층은 모두 그 값을 "
        "자기 값과 섞은 다음 자기 패턴으로 평균합니다", lang))
    return check_function(in_language("value residual stack", "value residual 스택", lang), fn, _ref_value_residual_stack,
                          _stack_cases(seed), _in_language(STACK_MISTAKES, STACK_HINTS_KO, lang), **kw)


# --- Exercise 3.2: the paired comparison ---------------------------------------------------------------------------

def paired_interval(variant, baseline, *, sd_ddof=1, q=None, df_shift=0, sign=1, over_root_n=True):
    """The mean of the per-seed differences ``variant[i] − baseline[i]`` and its 95 % Student-t interval
    ``mean ± t(0.975, n − 1) · sd / sqrt(n)``, sd the sample standard deviation (n − 1 in its denominator).

    variant, baseline: (n,) tensors, one value per seed, in the same seed order -> (mean, low, high), floats.
    The keywords build the known mistakes (the defaults give the reference).
    """
    d = sign * (variant - baseline)
    n = d.numel()
    half = (q if q is not None else t_critical(n - 1 + df_shift)) * d.std(correction=sd_ddof).item()
    half = half / math.sqrt(n) if over_root_n else half
    mean = d.mean().item()
    return mean, mean - half, mean + half


def _ref_paired_interval(variant, baseline):
    return paired_interval(variant, baseline)


def _unpaired(variant, baseline):
    """The two-sample (pooled) interval, as if the runs were not paired."""
    n = variant.numel()
    mean = (variant.mean() - baseline.mean()).item()
    half = t_critical(2 * n - 2) * math.sqrt((variant.var() + baseline.var()).item() / n)
    return mean, mean - half, mean + half


def _paired_cases(seed: int) -> list[tuple]:
    """Random final losses of a baseline and a variant over n seeds (n = 5, 4, 8), in float64: each seed's luck is
    shared by its pair (so pairing matters) and the variant's change is small."""
    cases = []
    for i, n in enumerate((5, 4, 8)):
        luck, noise = random_inputs(1000 * seed + 10 * i + 3, (n,), (n,))
        baseline = (4.4 + 0.05 * luck).double()
        cases.append(((baseline - 0.01 + 0.01 * noise.double()), baseline))
    return cases


PAIRED_MISTAKES = [
    Mistake(_unpaired, "you compared the two means as if the runs were unpaired (each mean's own spread): take "
                       "the difference seed by seed first, then the mean and the spread of those differences"),
    Mistake(lambda a, b: paired_interval(a, b, sign=-1),
            "the sign is flipped: the difference is variant − baseline (negative = the variant's loss is lower)"),
    Mistake(lambda a, b: paired_interval(a, b, sd_ddof=0),
            "you used the population standard deviation (divided by n): the sample's divides by n − 1"),
    Mistake(lambda a, b: paired_interval(a, b, q=1.96),
            "you used the normal 1.96: with a handful of seeds the interval needs Student's t with n − 1 degrees "
            "of freedom (2.78 for five seeds)"),
    Mistake(lambda a, b: paired_interval(a, b, df_shift=1),
            "Student's t with n degrees of freedom: the differences' mean and sd leave n − 1"),
    Mistake(lambda a, b: paired_interval(a, b, over_root_n=False),
            "the sd was not divided by sqrt(n): that is the spread of one seed's difference, not of their mean"),
    Mistake(lambda a, b: paired_interval(a.sort().values, b.sort().values),
            "you sorted each list on its own: that breaks the pairs; take the differences in the seeds' order"),
    Mistake(lambda a, b: paired_interval(a, b, q=t_critical(a.numel() - 1, 0.90)),
            "that is a 90 % interval (the 0.95 quantile): a 95 % two-sided interval needs the 0.975 one"),
]


def check_paired_interval(fn, *, seed: int = 0, **kw) -> bool:
    """Exercise 03.2: ``fn(variant (n,), baseline (n,)) -> (mean, low, high)``: the mean of the per-seed differences
    variant − baseline and its 95 % Student-t interval with the sample sd. ``seed`` picks the cases."""
    kw.setdefault("atol", 1e-6)
    kw.setdefault("graded", False)   # no classroom assignment holds this exercise: no hidden checks
    lang = kw.get("lang")
    kw.setdefault("stub_hint", in_language(
        "one difference per seed; then their mean, their sample spread and the interval the chapter's formula gives",
        "시드마다 차이 하나를 구하세요. 그다음 그 평균, 표본 표준편차, 그리고 장의 공식이 주는 구간을 구하세요", lang))
    return check_function(in_language("paired interval", "짝지은 구간", lang), fn, _ref_paired_interval,
                          _paired_cases(seed), _in_language(PAIRED_MISTAKES, PAIRED_HINTS_KO, lang), **kw)
