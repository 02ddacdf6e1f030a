"""Chapter 07 exercises: the sentence embedding (masked mean pooling), the held-out R² of a probe, and the
chapter's own intervention, the substitution ablation (one projection's input replaced by x0).

References come from the package: :func:`vrs_edu.nn.bert.sentence_embedding`,
:func:`vrs_edu.chapters.ch07_real_model.probes.r2_score` and :func:`vrs_edu.chapters.ch07_real_model.probes.substitution_cosine`. ``seed`` picks the random
cases (0: the public checks; graders use others).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from vrs_edu.chapters.ch07_real_model.probes import cosine, r2_score, substitution_cosine
from vrs_edu.course.checks import Mistake, check_function, random_inputs
from vrs_edu.i18n.language import in_language, resolve_language
from vrs_edu.nn.bert import BertConfig, MiniBert, sentence_embedding


def _in_language(mistakes: list[Mistake], hints_ko: list[str], lang: str | None) -> list[Mistake]:
    """``mistakes`` with their hints in ``lang`` (default: the running edition): the Korean ones from ``hints_ko``,
    in the same order."""
    if resolve_language(lang) == "en":
        return list(mistakes)
    if len(hints_ko) != len(mistakes):
        raise ValueError(f"hints_ko: expected one hint per mistake ({len(mistakes)}), got {len(hints_ko)}")
    return [Mistake(m.fn, hint) for m, hint in zip(mistakes, hints_ko)]


EMBEDDING_HINTS_KO = [
    "T개 위치 전체를 평균했습니다. 패딩 토큰은 세면 안 됩니다. 마스크를 곱하고 실제 토큰의 수로 나누세요",
    "평균은 맞지만, all-MiniLM-L6-v2는 Normalize 모듈로 끝납니다. 각 임베딩을 L2 노름으로 나누세요"
    "(F.normalize(..., dim=-1))",
    "마스크를 씌운 합을 (패딩을 포함한) T로 나누고 정규화하지 않았습니다. 실제 토큰의 수로 나눈 다음 L2 정규화하세요",
    "평균하기 전에 각 토큰을 정규화했습니다. 원래 상태를 먼저 평균하고, 그 평균을 정규화하세요",
]
R2_HINTS_KO = [
    "차원마다 R²를 하나씩 구해 평균했습니다. 제곱 오차를 먼저 *모든* 행과 차원에 걸쳐 더하세요(분산 가중 R²). 그러면 "
    "더 많이 변하는 차원이 더 크게 셈에 들어갑니다",
    "y 자신의 평균과 비교했습니다. 주어진 baseline(학습 데이터의 평균), 곧 탐침이 테스트 데이터를 보지 않고 할 수 있었던 "
    "상수 추측을 쓰세요",
    "그것은 설명되지 않고 남은 비율입니다. R²는 1에서 그것을 뺀 값입니다",
    "R²는 절댓값 오차가 아니라 제곱 오차를 씁니다",
]
SUBSTITUTION_HINTS_KO = [
    "층에 들어가는 스트림 전체를 바꿨습니다. x0을 읽는 것은 투영 하나의 입력뿐이고, 다른 두 투영과 잔차 연결은 계속 "
    "스트림을 읽습니다",
    "그것은 단어 임베딩만입니다. x0은 임베딩 층의 출력(토큰과 위치, 정규화됨), 곧 훅 지점 x0입니다",
    "마지막 층의 토큰 상태를 하나씩 비교했습니다. 점수는 문장 임베딩(모델의 출력, 문장마다 벡터 하나), 곧 각 실행의 "
    ".embedding을 비교합니다",
]


def _masks(seed: int, B: int, T: int) -> torch.Tensor:
    """(B, T) padding masks: row b has a random length in 1..T, and at least one row is padded."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, T + 1, (B,), generator=g)
    lengths[0] = max(1, T // 2)
    return torch.arange(T)[None, :] < lengths[:, None]


def check_sentence_embedding(fn, *, seed: int = 0, **kw) -> bool:
    """Exercise 07a: ``fn(hidden (B, T, D), mask (B, T) bool) -> (B, D)``: the mean of each sentence's real-token
    states (padding excluded), L2-normalised. Messages in ``lang`` among ``kw`` (default: the running edition)."""
    lang = kw.pop("lang", None)
    shapes = [(3, 6, 8), (2, 9, 16), (4, 5, 4)]
    cases = []
    for i, (B, T, D) in enumerate(shapes):
        (h,) = random_inputs(1000 * seed + i, (B, T, D))
        mask = _masks(1000 * seed + i, B, T)
        h = h + 3.0 * (~mask).unsqueeze(-1)            # padding states differ visibly from real ones
        cases.append((h, mask))

    def with_padding(h, m):
        return F.normalize(h.mean(1), dim=-1)

    def not_normalised(h, m):
        mf = m.unsqueeze(-1).float()
        return (h * mf).sum(1) / mf.sum(1)

    def normalised_tokens(h, m):
        mf = m.unsqueeze(-1).float()
        return (F.normalize(h, dim=-1) * mf).sum(1) / mf.sum(1)

    def divided_by_T(h, m):
        return (h * m.unsqueeze(-1).float()).sum(1) / h.size(1)

    mistakes = [
        Mistake(with_padding, "you averaged over all T positions: padding tokens must not count — multiply by the "
                "mask and divide by the number of real tokens"),
        Mistake(not_normalised, "the mean is right, but all-MiniLM-L6-v2 ends with a Normalize module: divide each "
                "embedding by its L2 norm (F.normalize(..., dim=-1))"),
        Mistake(divided_by_T, "you divided the masked sum by T (padding included) and did not normalise: divide by "
                "the number of real tokens, then L2-normalise"),
        Mistake(normalised_tokens, "you normalised each token before averaging: average the raw states first, then "
                "normalise the mean"),
    ]
    kw.setdefault("stub_hint", in_language(
        "padding must count neither in the sum nor in the count of each sentence; then scale every sentence's mean "
        "to length 1",
        "패딩은 각 문장의 합에도 개수에도 들어가면 안 됩니다. 그다음 각 문장의 평균을 길이 1로 맞추세요", lang))
    kw.setdefault("graded", False)   # chapter 07 has no assignment: no hidden checks run on this exercise
    return check_function(in_language("sentence embedding", "문장 임베딩", lang), fn, sentence_embedding, cases,
                          _in_language(mistakes, EMBEDDING_HINTS_KO, lang), lang=lang, **kw)


def check_held_out_r2(fn, *, seed: int = 0, **kw) -> bool:
    """Exercise 07b: ``fn(y (N, D), y_hat (N, D), baseline (D,)) -> float``: variance-weighted R²,
    ``1 − Σ‖y − ŷ‖² / Σ‖y − baseline‖²`` summed over rows and dimensions. Messages in ``lang`` among ``kw``
    (default: the running edition)."""
    lang = kw.pop("lang", None)
    cases = []
    for i, (N, D) in enumerate([(40, 6), (25, 3), (60, 10)]):
        y, noise, base = random_inputs(1000 * seed + i, (N, D), (N, D), (D,))
        scale = torch.linspace(0.2, 3.0, D)              # dimensions of very different variance
        y = y * scale + 0.5
        cases.append((y, y + 0.4 * noise * scale.flip(0), 0.5 + 0.3 * base))

    def per_dim_average(y, yh, b):
        return float((1 - (y - yh).pow(2).sum(0) / (y - b).pow(2).sum(0)).mean())

    def own_mean(y, yh, b):
        return float(1 - (y - yh).pow(2).sum() / (y - y.mean(0)).pow(2).sum())

    def ratio_only(y, yh, b):
        return float((y - yh).pow(2).sum() / (y - b).pow(2).sum())

    def absolute(y, yh, b):
        return float(1 - (y - yh).abs().sum() / (y - b).abs().sum())

    mistakes = [
        Mistake(per_dim_average, "you averaged one R² per dimension: sum the squared errors over *all* rows and "
                "dimensions first (variance-weighted R²), so dimensions that vary more count more"),
        Mistake(own_mean, "you compared with the mean of y itself: use the given baseline (the training mean), the "
                "constant guess a probe could have made without seeing the test data"),
        Mistake(ratio_only, "that is the fraction left unexplained: R² is 1 minus it"),
        Mistake(absolute, "R² uses squared errors, not absolute ones"),
    ]
    kw.setdefault("stub_hint", in_language(
        "two sums of squares over every entry: of the residuals y - y_hat and of y's distance to the baseline; R² "
        "compares them, as a Python float",
        "모든 항목에 걸친 제곱합 두 개: 잔차 y - y_hat의 제곱합과 기준선에서 y까지 거리의 제곱합. R²는 둘을 "
        "비교하며, Python float로 반환합니다", lang))
    kw.setdefault("graded", False)
    return check_function(in_language("held-out R²", "홀드아웃 R²", lang), fn, r2_score, cases,
                          _in_language(mistakes, R2_HINTS_KO, lang), atol=1e-6, lang=lang, **kw)


# --- exercise 3: the substitution ablation ----------------------------------------------------------------------

def _substitution_cases(seed: int):
    """Small random encoders (3 layers of width 16) and padded batches, one case per path."""
    cases = []
    for i, (layer, path) in enumerate(((1, "v"), (2, "q"), (1, "k"))):
        torch.manual_seed(1000 * seed + i)
        model = MiniBert(BertConfig(vocab_size=20, d_model=16, n_layers=3, n_heads=2, d_mlp=32,
                                    max_positions=16)).eval()
        with torch.no_grad():   # a random encoder barely reacts to a substitution: larger weights make it show
            for name, p in model.named_parameters():
                if "proj" in name or "emb" in name:
                    p.mul_(4.0)
        g = torch.Generator().manual_seed(1000 * seed + 50 + i)
        ids = torch.randint(0, 20, (4, 7), generator=g)
        cases.append((model, ids, _masks(1000 * seed + i, 4, 7), layer, path))
    return cases


def _patched_cosine(model, ids, mask, hooks) -> float:
    with torch.no_grad():
        clean = model(ids, mask, trace=True)
        return float(cosine(model(ids, mask, hooks=hooks(clean.trace)).embedding, clean.embedding).mean())


def _token_cosine(model, ids, mask, layer, path) -> float:
    with torch.no_grad():
        clean = model(ids, mask, trace=True)
        x0 = clean.trace["x0"]
        patched = model(ids, mask, hooks={f"blocks.{layer}.attn.{path}_in": lambda h: x0})
        return float(F.cosine_similarity(patched.hidden, clean.hidden, dim=-1).mean())


SUBSTITUTION_MISTAKES = [
    Mistake(lambda m, i, k, l, p: _patched_cosine(m, i, k, lambda t: {f"blocks.{l}.resid_pre": lambda h: t["x0"]}),
            "you replaced the whole stream entering the layer: only the input of one projection reads x0, while "
            "the other two projections and the residual connection keep reading the stream"),
    Mistake(lambda m, i, k, l, p: _patched_cosine(m, i, k,
                                                  lambda t: {f"blocks.{l}.attn.{p}_in": lambda h: t["embed.token"]}),
            "that is the word embedding alone: x0 is the embedding layer's output (token and position, "
            "normalised), the hook point x0"),
    Mistake(lambda m, i, k, l, p: _token_cosine(m, i, k, l, p),
            "you compared the last layer's token states one by one: the score compares the sentence embeddings "
            "(the model's output, one vector per sentence), the .embedding of each run"),
]


def check_substitution(fn, *, seed: int = 0, **kw) -> bool:
    """Exercise 07c: ``fn(model (MiniBert), ids (B, T), mask (B, T), layer, path) -> float``: the mean cosine of
    the patched to the clean sentence embedding when the ``path`` projection of ``layer`` reads x0. Messages in
    ``lang`` among ``kw`` (default: the running edition)."""
    lang = kw.pop("lang", None)
    kw.setdefault("stub_hint", in_language(
        "a traced clean run gives both x0 and the embedding to compare with; a second run patches one hook point, "
        "the input of the one projection",
        "추적한 깨끗한 실행 한 번이 x0과 비교할 임베딩을 함께 줍니다. 두 번째 실행은 훅 지점 하나, 곧 그 투영 "
        "하나의 입력을 패치합니다", lang))
    kw.setdefault("graded", False)
    return check_function(in_language("substitution ablation", "대체 절제", lang), fn, substitution_cosine,
                          _substitution_cases(seed), _in_language(SUBSTITUTION_MISTAKES, SUBSTITUTION_HINTS_KO, lang),
                          lang=lang, **kw)
