"""Chapter 08 exercise: the per-token table, the context-free substitution's one ingredient.

The reference comes from the package: :func:`vrs_edu.chapters.ch08_real_decoder.interventions.per_token_means`. ``seed`` picks
the random cases (0: the public checks; graders use others).
"""
from __future__ import annotations

import torch

from vrs_edu.chapters.ch08_real_decoder.interventions import per_token_means
from vrs_edu.course.checks import Mistake, check_function, random_inputs
from vrs_edu.i18n.language import in_language, resolve_language

# The mistakes' hints in Korean, in the order check_token_table lists them.
HINTS_KO = [
    "평균은 맞지만, 한 번도 나오지 않는 토큰의 행이 0으로 채워졌습니다. 모든 위치에 걸친 평균을 주세요(0은 문맥 없는 "
    "추측이 아니라 큰 변화입니다)",
    "각 토큰의 합을 전체 위치의 수로 나눴습니다. 그 토큰이 나오는 횟수로 나누세요",
    "각 행에 그 토큰의 등장 하나(마지막으로 쓴 것)만 담겼습니다. 모든 등장에 걸쳐 평균하세요",
]


def check_token_table(fn, *, seed: int = 0, **kw) -> bool:
    """Exercise 08: ``fn(values (N, D), ids (N,) long, vocab_size) -> (vocab_size, D)``: row i the mean of the values
    at the positions holding token i; a token that never occurs gets the mean over all positions. Messages in
    ``lang`` among ``kw`` (default: the running edition)."""
    lang = kw.pop("lang", None)
    cases = []
    for i, (N, D, V) in enumerate([(30, 4, 8), (50, 6, 12), (12, 3, 20)]):
        (values,) = random_inputs(1000 * seed + i, (N, D))
        g = torch.Generator().manual_seed(1000 * seed + i)
        ids = torch.randint(0, V - 2, (N,), generator=g)          # the last two tokens never occur
        ids[: N // 3] = 1                                          # token 1 is frequent: counts differ a lot
        cases.append((values + ids[:, None].float(), ids, V))

    def zero_rows(values, ids, V):
        out = torch.zeros(V, values.size(1)).index_add_(0, ids, values)
        return out / torch.bincount(ids, minlength=V).clamp_min(1)[:, None]

    def divided_by_n(values, ids, V):
        out = torch.zeros(V, values.size(1)).index_add_(0, ids, values) / len(ids)
        return torch.where(torch.bincount(ids, minlength=V)[:, None] > 0, out, values.mean(0))

    def last_occurrence(values, ids, V):
        out = values.mean(0).repeat(V, 1)
        out[ids] = values
        return out

    mistakes = [
        Mistake(zero_rows, "the means are right, but a token that never occurs got a row of zeros: give it the mean "
                "over all positions (zeros are not a context-free guess, they are a large change)"),
        Mistake(divided_by_n, "you divided each token's sum by the number of all positions: divide by how often that "
                "token occurs"),
        Mistake(last_occurrence, "each row holds one occurrence of its token (the last one written): average over "
                "all of them"),
    ]
    if resolve_language(lang) == "ko":
        mistakes = [Mistake(m.fn, hint) for m, hint in zip(mistakes, HINTS_KO, strict=True)]
    kw.setdefault("stub_hint", in_language(
        "sum the values per token id (index_add_), count each id (bincount), divide; rows with count 0 get "
        "values.mean(0)",
        "토큰 id마다 값을 더하고(index_add_), id마다 개수를 세고(bincount), 나누세요. 개수가 0인 행에는 "
        "values.mean(0)을 주세요", lang))
    kw.setdefault("graded", False)   # chapter 08 has no assignment: no hidden checks run on this exercise
    return check_function(in_language("token table", "토큰 표", lang), fn, per_token_means, cases, mistakes,
                          lang=lang, **kw)
