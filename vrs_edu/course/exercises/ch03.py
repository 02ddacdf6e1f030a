"""Chapter 03 exercise: attention with a value residual (ResFormer, arXiv 2410.17897).

The learner writes ``value_residual_attention(pattern, v, v_first, lambda_1, lambda_2)`` returning
``U_n = A_n · (λ1·V_1 + λ2·V_n)``: the first layer's values are mixed in *before* the attention-weighted sum, so
V_1 is averaged with the current layer's own pattern A_n.
"""
from __future__ import annotations

import torch

from vrs_edu.course.checks import CheckFailed, Mistake, check_function, in_float64, random_inputs, wrap
from vrs_edu.nn.attention import attend, causal_mask
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


def check_value_residual_attention(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 03: ``fn(pattern (B, H, T, T), v (B, H, T, Dh), v_first (B, H, T, Dh), lambda_1, lambda_2)
    -> (B, H, T, Dh)`` = ``pattern @ (lambda_1 * v_first + lambda_2 * v)``. ``seed`` picks the random cases
    (0: the public checks; graders use others); ``edges``: one position, Dh = 1, in float64."""
    cases = _value_cases(seed, edges)
    # the hint points to the two steps without writing them (the learner trial: a hint that is the answer)
    kw.setdefault("stub_hint", "two steps: first build the values this layer averages from the two value "
                  "tensors and the two weights; then let the pattern average them, as chapter 02's attend did")
    for case in cases:
        changed = mutated_inputs(fn, case)
        if changed:
            msg = (f"✗ value residual attention: your function changed its input {' and '.join(changed)} in place "
                   "(an in-place operation such as `v *= lambda_2`, `v.mul_(…)` or `v += …`); in the chapter that "
                   "would overwrite the model's own values. Build a new tensor instead (`lambda_2 * v`).")
            if kw.get("raise_on_fail"):
                raise CheckFailed(" ".join(msg.split()))
            print(wrap(msg))
            return False
    return check_function("value residual attention", fn, _ref_value_residual_attention, cases, MISTAKES, **kw)


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
    kw.setdefault("stub_hint", "the output has two parts, one made of V_1 and one of this layer's own values, each "
                  "with its weight; your function from the first task makes either alone. Measure each part's "
                  "length per query and compare")
    return check_function("V_1 share", fn, _ref_v1_share, cases, SHARE_MISTAKES, **kw)
