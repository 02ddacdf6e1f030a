"""Chapter 00 exercise: the norm of the residual stream at each depth.
"""
from __future__ import annotations

import torch

from vrs_edu.course.checks import Mistake, check_function, in_float64, random_inputs
from vrs_edu.i18n.language import in_language

# --- chapter 00 ------------------------------------------------------------------------------------------------

def _ref_stream_norms(stack: torch.Tensor) -> torch.Tensor:
    return stack.norm(dim=-1).mean(dim=(1, 2))


def check_stream_norms(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 00: ``fn(stack (L+1, B, T, D)) -> (L+1,)`` mean L2 norm of every token's state at each depth.
    ``seed`` picks the random cases (0: the public checks; graders use others); ``edges``: one depth, one token,
    D = 1, in float64. The hints are in the running edition's language (``lang`` among ``kw``, else the edition)."""
    lang = kw.pop("lang", None)
    shapes = [(1, 1, 1, 1), (2, 1, 1, 5), (4, 2, 1, 3)] if edges else [(3, 2, 4, 8), (7, 1, 5, 16), (2, 3, 3, 4)]
    cases = [random_inputs(1000 * seed + i, shape) for i, shape in enumerate(shapes)]
    cases = [(c[0] * (1 + torch.arange(c[0].size(0)).view(-1, 1, 1, 1)),) for c in cases]  # norms grow with depth
    cases = in_float64(cases) if edges else cases
    mistakes = [
        Mistake(lambda s: s.norm(dim=-1).mean(dim=(0, 1)), in_language(
            "you averaged over depth: keep axis 0 (depth), average over batch and tokens (axes 1 and 2)",
            "깊이에 대해 평균했습니다. 축 0(깊이)은 남기고 배치와 토큰(축 1과 2)에 대해 평균하세요", lang)),
        Mistake(lambda s: s.pow(2).sum(-1).mean(dim=(1, 2)), in_language(
            "that is the squared norm: take the square root (torch.linalg.vector_norm or .norm(dim=-1))",
            "제곱 노름입니다. 제곱근을 취하세요(torch.linalg.vector_norm 또는 .norm(dim=-1))", lang)),
        Mistake(lambda s: s.mean(dim=(1, 2)).norm(dim=-1), in_language(
            "you took the norm of the average state: take each token's norm first, then average the norms",
            "평균 상태의 노름을 구했습니다. 먼저 토큰마다 노름을 구한 뒤 그 노름들을 평균하세요", lang)),
        Mistake(lambda s: s.abs().mean(dim=(1, 2, 3)), in_language(
            "that is the mean absolute entry, not the L2 norm of each token's D-dimensional state",
            "성분의 평균 절댓값입니다. 각 토큰의 D차원 상태의 L2 노름이 아닙니다", lang)),
    ]
    kw.setdefault("stub_hint", in_language(
        "a token's state is the last axis: its norm there leaves one number per depth, sequence and position; then "
        "average what is left over the batch and the positions",
        "토큰의 상태는 마지막 축에 있습니다. 그 축에 대해 노름을 구하면 깊이, 시퀀스, 위치마다 수가 하나씩 남습니다. "
        "그다음 남은 것을 배치와 위치에 대해 평균하세요", lang))
    return check_function(in_language("stream norms", "스트림 노름", lang), fn, _ref_stream_norms, cases, mistakes,
                          lang=lang, **kw)
