"""Chapter 05 exercises: causal ShortSWA over depth (Zhang, "Residual Stream Duality", arXiv 2603.16039, sec. 2.2).

The chapter's exercise, ``depth_swa_stack(X, window, w_q, w_k, w_v)`` (:func:`check_depth_swa_stack`): ``X``
(L+1, B, T, D) is a depth stack; every token (b, t) at every layer l reads the K_l = min(K, l+1) states
``X[max(0, l-K+1):l+1, b, t]`` of the same token, ``z = softmax(q Kmatᵀ / sqrt(d_k)) Vmat`` with ``q = W_Q X[l, b,
t]``; the result is (L+1, B, T, E).

The assignment's, ``depth_swa_one_token(h, window, w_q, w_k, w_v)`` (:func:`check_depth_swa_one_token`): ``h``
(L+1, D) is one token's depth trajectory h^(0), ..., h^(L); for every layer l it returns ``z^(l)`` over the window
``W_l = [h^(max(0, l-K+1)); ...; h^(l)]`` (the layer itself and up to K − 1 layers below it), and its second task,
``depth_read_weights`` (:func:`check_depth_read_weights`), returns the weights of those reads. Weights are
``nn.Linear`` weights of shape (E, D).
"""
from __future__ import annotations

import math

import torch

from vrs_edu.course.checks import Mistake, check_function, in_float64, random_inputs
from vrs_edu.i18n.language import in_language, resolve_language
from vrs_edu.nn.shortswa import depth_short_swa, short_swa


def _ref_depth_swa_one_token(h, window, w_q, w_k, w_v):
    # one token's depth stack is a sequence of length L+1: ShortSWA along it (N = 1 sequence)
    return short_swa(h[None], window, w_q, w_k, w_v)[0]


def _pattern(h, w_q, w_k, sources, scale=True, scale_by_input_width=False):
    """Weights of every layer l over the layers ``sources(l, S)`` (a list of indices), 0 elsewhere (for the
    mistakes of both exercises)."""
    S = h.size(0)
    out = h.new_zeros(S, S)
    for l in range(S):
        src = sources(l, S)
        q, k = w_q @ h[l], h[src] @ w_k.T
        d = h.size(1) if scale_by_input_width else q.numel()
        out[l, src] = torch.softmax(k @ q / (math.sqrt(d) if scale else 1.0), 0)
    return out


def _window(K):
    """The causal window over depth: layer l reads layers max(0, l-K+1)..l."""
    return lambda l, S: list(range(max(0, l - K + 1), l + 1))


def _windowed(h, w_q, w_k, w_v, sources, **kw):
    """Attention of every layer l over the layers ``sources(l, S)``: its :func:`_pattern` applied to the values."""
    return _pattern(h, w_q, w_k, sources, **kw) @ (h @ w_v.T)


# Hints that the three exercises on a depth window share, word for word.
NO_SCALE = "scale the scores by 1 / sqrt(d_k), d_k = E (the projected width)"
INPUT_WIDTH_SCALE = "you scaled by sqrt(D), the width of h: d_k is the width of the projected keys, E = w_k.size(0)"
KV_SWAPPED = "keys and values are swapped: the scores come from W_K, the mixed vectors from W_V"


SWA_MISTAKES = [
    Mistake(lambda h, K, q, k, v: _windowed(h, q, k, v, lambda l, S: list(range(l, min(S, l + K)))),
            "your window looks at layers above l: a causal read over depth uses h^(max(0, l-K+1)), ..., h^(l)"),
    Mistake(lambda h, K, q, k, v: _windowed(h, q, k, v, lambda l, S: list(range(max(0, l - K), l)) or [0]),
            "the window must include layer l itself: W_l = [h^(max(0, l-K+1)); ...; h^(l)]"),
    Mistake(lambda h, K, q, k, v: _windowed(h, q, k, v, lambda l, S: list(range(max(0, l - K), l + 1))),
            "your window holds K + 1 layers: it should hold K (the layer itself and K − 1 below it)"),
    Mistake(lambda h, K, q, k, v: _windowed(h, q, k, v, lambda l, S: list(range(0, l + 1))),
            "you read every earlier layer (the full window): keep only the last K layers"),
    Mistake(lambda h, K, q, k, v: _windowed(h, q, k, v, _window(K), scale=False),
            NO_SCALE),
    Mistake(lambda h, K, q, k, v: _windowed(h, q, k, v, _window(K), scale_by_input_width=True),
            INPUT_WIDTH_SCALE),
    Mistake(lambda h, K, q, k, v: _windowed(h, q, v, k, _window(K)),
            KV_SWAPPED),
]

# The Korean hints of each list of mistakes, in the list's order (the Korean edition's checker names the same ones).
STACK_HINTS_KO = [
    "윈도가 l보다 위의 층을 읽습니다. 읽기는 깊이에 대해 인과 방향이어서, 층 l은 X[max(0, l-K+1)], ..., X[l]만 읽습니다",
    "아래쪽에서 윈도가 K칸을 가지며, 0 상태로 채운 칸이 여전히 softmax 가중치를 받습니다. 층 l은 K_l = min(K, l+1)개 "
    "층을 읽으므로, 층 0은 자기 자신만 읽습니다",
    "윈도가 K + 1개 층을 담습니다. K개(층 l 자신과 그 아래 K − 1개)를 담아야 합니다",
    "윈도에서 층 l 자신이 빠졌습니다. 윈도는 X[max(0, l-K+1)], ..., X[l]입니다",
    "앞의 모든 층을 읽었습니다(전체 윈도). 마지막 K개 층만 남기세요",
    "softmax가 특성 축을 따라 계산됩니다. 먼저 E개 특성에 걸쳐 q·k를 더해 윈도의 층마다 점수 하나를 만들고, 그다음 "
    "윈도에 걸쳐 softmax를 취하세요",
    "softmax가 토큰 T를 따라 계산됩니다. 각 토큰의 가중치는 자기 층 윈도에 대한 softmax입니다",
    "층이 아니라 토큰을 섞었습니다. 이것은 시퀀스 축을 따른 ShortSWA(한 층의 위치 t-K+1..t)입니다. 깊이 방향에서는 "
    "토큰 (b, t)가 층 l-K+1..l에서의 자기 상태를 읽습니다",
    "점수를 1 / sqrt(d_k)로 스케일하세요. d_k = E(투영된 폭)입니다",
    "sqrt(D), 곧 상태의 폭으로 스케일했습니다. d_k는 투영된 키의 폭 E입니다",
    "키와 값이 바뀌었습니다. 점수는 W_K에서, 섞는 벡터는 W_V에서 나옵니다",
]


# The hints the three lists share, in Korean (NO_SCALE, INPUT_WIDTH_SCALE's first form, KV_SWAPPED).
NO_SCALE_KO = "점수를 1 / sqrt(d_k)로 스케일하세요. d_k = E(투영된 폭)입니다"
INPUT_WIDTH_SCALE_KO = "sqrt(D), 곧 h의 폭으로 스케일했습니다. d_k는 투영된 키의 폭 E = w_k.size(0)입니다"
KV_SWAPPED_KO = "키와 값이 바뀌었습니다. 점수는 W_K에서, 섞는 벡터는 W_V에서 나옵니다"
K_PLUS_ONE_KO = "윈도가 K + 1개 층을 담습니다. K개(층 l 자신과 그 아래 K − 1개)를 담아야 합니다"
SWA_HINTS_KO = [
    "윈도가 l보다 위의 층을 봅니다. 깊이에 대한 인과 읽기는 h^(max(0, l-K+1)), ..., h^(l)을 씁니다",
    "윈도에는 층 l 자신이 들어가야 합니다: W_l = [h^(max(0, l-K+1)); ...; h^(l)]",
    K_PLUS_ONE_KO,
    "앞의 모든 층을 읽었습니다(전체 윈도). 마지막 K개 층만 남기세요",
    NO_SCALE_KO,
    INPUT_WIDTH_SCALE_KO,
    KV_SWAPPED_KO,
]
WEIGHT_HINTS_KO = [
    "윈도가 l보다 위의 층을 봅니다. 깊이에 대한 인과 읽기는 층 max(0, l-K+1), ..., l에만 가중치를 줍니다",
    "윈도에는 층 l 자신이 들어가야 합니다. 읽는 층은 max(0, l-K+1), ..., l입니다",
    K_PLUS_ONE_KO,
    "앞의 모든 층에 가중치를 주었습니다(전체 윈도). 마지막 K개 층만 남기세요",
    NO_SCALE_KO,
    INPUT_WIDTH_SCALE_KO,
    "패턴이 전치되었습니다. l행은 층 l의 읽기(쿼리)의 가중치이고, j열은 그 읽기가 읽는 층입니다",
    "쿼리와 키가 바뀌었습니다. 층 l의 쿼리는 w_q에서, 그 층이 읽는 층들의 키는 w_k에서 나옵니다",
    "윈도 밖의 층이 여전히 가중치를 받습니다. softmax를 거치면 점수 0은 '가중치 없음'이 아닙니다. 그 층들을 "
    "softmax에서 빼세요(또는 점수를 -inf로 주세요)",
]


def _in_language(mistakes: list[Mistake], hints_ko: list[str] | None, lang: str | None) -> list[Mistake]:
    """``mistakes`` with their hints in ``lang`` (default: the running edition): the Korean ones from ``hints_ko``
    (None: the English hints stay)."""
    if resolve_language(lang) == "en" or hints_ko is None:
        return list(mistakes)
    if len(hints_ko) != len(mistakes):
        raise ValueError(f"hints_ko: expected one hint per mistake ({len(mistakes)}), got {len(hints_ko)}")
    return [Mistake(m.fn, hint) for m, hint in zip(mistakes, hints_ko)]



def check_depth_swa_one_token(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 05: ``fn(h (L+1, D), window K, w_q (E, D), w_k (E, D), w_v (E, D)) -> (L+1, E)``, causal ShortSWA
    over one token's depth trajectory. ``seed`` picks the random cases (0: the public checks; graders use others);
    ``edges``: one layer, a window longer than the stack, E = 1, in float64."""
    sizes = ([(1, 3, 2, 1), (2, 2, 1, 3), (3, 1, 1, 2)] if edges else
             [(7, 8, 8, 3), (5, 6, 4, 2), (9, 8, 8, 4), (4, 4, 4, 1)])          # (L+1, D, E, K)
    cases = []
    for i, (S, D, E, K) in enumerate(sizes):
        h, wq, wk, wv = random_inputs(1000 * seed + i, (S, D), (E, D), (E, D), (E, D))
        cases.append((2.0 * h, K, wq, wk, wv))                                   # sharp enough that mistakes show
    cases = in_float64(cases) if edges else cases
    # The stub's hint points (which rows, which scale), without the code: the chapter's hints say the rest.
    lang = kw.get("lang")
    kw.setdefault("stub_hint", in_language(
        "one layer at a time: which rows of h may layer l read (itself and how many below)? The query comes from "
        "row l alone; the chapter's equation says how the scores are scaled",
        "한 번에 층 하나씩: 층 l은 h의 어느 행을 읽을 수 있을까요(자기 자신과 그 아래 몇 개)? 쿼리는 행 l에서만 "
        "옵니다. 점수를 어떻게 스케일하는지는 장의 식이 말해 줍니다", lang))
    return check_function(in_language("ShortSWA over depth, one token", "깊이 방향 ShortSWA, 토큰 하나", lang), fn,
                          _ref_depth_swa_one_token, cases, _in_language(SWA_MISTAKES, SWA_HINTS_KO, lang), **kw)


# --- the measurement: which layers each layer reads (the assignment's second task) ------------------------------

def _ref_depth_read_weights(h, window, w_q, w_k):
    """The depth pattern of one token: ``weights[l, j]``, the softmax weight layer l's read gives layer j, over the
    causal window ``max(0, l-K+1) <= j <= l`` (0 outside it; each row sums to 1). The weights of
    :func:`_ref_depth_swa_one_token`'s reads (Zhang, arXiv 2603.16039, sec. 2.2): K >= L + 1 is the full window,
    attention over every earlier layer.

    h (L+1, D), window K >= 1, w_q / w_k (E, D) -> (L+1, L+1).

    Raises:
        ValueError: if ``window`` < 1, ``h`` is not (L+1, D), or the weights are not (E, D) for that D.
    """
    if window < 1:
        raise ValueError(f"depth_read_weights: expected window >= 1, got {window}")
    if h.dim() != 2 or w_q.dim() != 2 or w_q.shape != w_k.shape or w_q.size(1) != h.size(1):
        raise ValueError(f"depth_read_weights: expected h (L+1, D) and w_q, w_k (E, D) for that D, got h "
                         f"{tuple(h.shape)}, w_q {tuple(w_q.shape)} and w_k {tuple(w_k.shape)}")
    q, k = h @ w_q.T, h @ w_k.T
    scores = q @ k.T / math.sqrt(q.size(-1))
    return scores.masked_fill(~_window_mask(h.size(0), window), float("-inf")).softmax(dim=-1)


def _window_mask(S: int, window: int) -> torch.Tensor:
    """(S, S) booleans, True where layer l may read layer j: max(0, l-K+1) <= j <= l."""
    l, j = torch.arange(S)[:, None], torch.arange(S)[None, :]
    return (j <= l) & (j > l - window)


def _zeros_outside(h, K, w_q, w_k):
    """Scores outside the window set to 0 (not -inf) before the softmax: those layers keep some weight."""
    S = h.size(0)
    scores = (h @ w_q.T) @ (h @ w_k.T).T / math.sqrt(w_q.size(0))
    return torch.where(_window_mask(S, K), scores, 0.0).softmax(-1)


WEIGHT_MISTAKES = [
    Mistake(lambda h, K, q, k: _pattern(h, q, k, lambda l, S: list(range(l, min(S, l + K)))),
            "your window looks at layers above l: a causal read over depth gives weight only to layers "
            "max(0, l-K+1), ..., l"),
    Mistake(lambda h, K, q, k: _pattern(h, q, k, lambda l, S: list(range(max(0, l - K), l)) or [0]),
            "the window must include layer l itself: it reads layers max(0, l-K+1), ..., l"),
    Mistake(lambda h, K, q, k: _pattern(h, q, k, lambda l, S: list(range(max(0, l - K), l + 1))),
            "your window holds K + 1 layers: it should hold K (the layer itself and K − 1 below it)"),
    Mistake(lambda h, K, q, k: _pattern(h, q, k, lambda l, S: list(range(0, l + 1))),
            "you gave weight to every earlier layer (the full window): keep only the last K layers"),
    Mistake(lambda h, K, q, k: _pattern(h, q, k, _window(K), scale=False),
            NO_SCALE),
    Mistake(lambda h, K, q, k: _pattern(h, q, k, _window(K), scale_by_input_width=True),
            INPUT_WIDTH_SCALE),
    Mistake(lambda h, K, q, k: _ref_depth_read_weights(h, K, q, k).T,
            "the pattern is transposed: row l holds the weights of layer l's read (the query), column j the layer "
            "it reads"),
    Mistake(lambda h, K, q, k: _pattern(h, k, q, _window(K)),
            "queries and keys are swapped: the query of layer l comes from w_q, the keys of the layers it reads "
            "from w_k"),
    Mistake(_zeros_outside,
            "the layers outside the window still get weight: a score of 0 is not 'no weight' after a softmax; "
            "leave them out of the softmax (or give them a score of -inf)"),
]


def check_depth_read_weights(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 05.2: ``fn(h (L+1, D), window K, w_q (E, D), w_k (E, D)) -> (L+1, L+1)``, the depth pattern of one
    token: row l holds the softmax weights of layer l's causal ShortSWA read over layers max(0, l-K+1)..l, 0
    elsewhere. ``seed`` picks the random cases (0: the public checks; graders use others); ``edges``: one layer, a
    window longer than the stack, E = 1, in float64."""
    sizes = ([(1, 3, 2, 1), (2, 2, 1, 3), (3, 1, 1, 2)] if edges else
             [(7, 8, 8, 3), (5, 6, 4, 2), (9, 8, 8, 4), (4, 4, 4, 1)])          # (L+1, D, E, K)
    cases = []
    for i, (S, D, E, K) in enumerate(sizes):
        h, wq, wk = random_inputs(1000 * seed + i + 500, (S, D), (E, D), (E, D))
        cases.append((h, K, 0.5 * wq, 0.5 * wk))       # scores of spread about 2: neither one-hot nor flat
    cases = in_float64(cases) if edges else cases
    lang = kw.get("lang")
    kw.setdefault("stub_hint", in_language(
        "one row per layer: which layers may layer l read, and how are its scores scaled and turned into weights? "
        "The layers it may not read keep a weight of zero",
        "층마다 행 하나: 층 l은 어느 층을 읽을 수 있고, 그 점수는 어떻게 스케일되어 가중치가 될까요? 읽을 수 없는 "
        "층의 가중치는 0으로 남습니다", lang))
    return check_function(in_language("depth read weights", "깊이 읽기 가중치", lang), fn, _ref_depth_read_weights,
                          cases, _in_language(WEIGHT_MISTAKES, WEIGHT_HINTS_KO, lang), **kw)


# --- the chapter's exercise: the read for a whole depth stack, every token at once --------------------------------

def _ref_depth_swa_stack(X, window, w_q, w_k, w_v):
    """Causal ShortSWA over depth for a whole depth stack: ``X`` (L+1, B, T, D), window K >= 1, weights (E, D) ->
    (L+1, B, T, E). Layer l of token (b, t) reads the K_l = min(K, l+1) states ``X[max(0, l-K+1):l+1, b, t]`` of
    the same token: its query from ``X[l, b, t]``, a softmax over the window of the scores scaled by 1/sqrt(E).
    This is :func:`vrs_edu.nn.shortswa.depth_short_swa` (Zhang, arXiv 2603.16039, sec. 2.2)."""
    return depth_short_swa(X, window, w_q, w_k, w_v)


def _stack_read(X, w_q, w_k, w_v, sources, scale=True, scale_by_input_width=False, zeros_below=0):
    """Attention of every layer l over the layers ``sources(l, S)`` of the same token, for the whole stack
    (the mistakes' common form). ``zeros_below``: that many all-zero states before layer 0, read as if they were
    layers (a window padded at the bottom without a mask)."""
    if zeros_below:
        X = torch.cat([X.new_zeros(zeros_below, *X.shape[1:]), X])
    S, out = X.size(0), []
    d = X.size(-1) if scale_by_input_width else w_q.size(0)
    for l in range(zeros_below, S):
        W = X[sources(l, S)]                                          # (n, B, T, D)
        scores = torch.einsum("bte,nbte->btn", X[l] @ w_q.T, W @ w_k.T) / (math.sqrt(d) if scale else 1.0)
        out.append(torch.einsum("btn,nbte->bte", scores.softmax(-1), W @ w_v.T))
    return torch.stack(out)


def _feature_softmax(X, K, w_q, w_k, w_v):
    """The product q ⊙ k turned into weights by a softmax over the feature axis, never summed into a score."""
    out = []
    for l in range(X.size(0)):
        W = X[max(0, l - K + 1): l + 1]
        a = ((X[l] @ w_q.T)[None] * (W @ w_k.T) / math.sqrt(w_q.size(0))).softmax(-1)   # (n, B, T, E)
        out.append((a * (W @ w_v.T)).sum(0))
    return torch.stack(out)


def _over_tokens(X, K, w_q, w_k, w_v):
    """ShortSWA along the token axis inside each layer: the sequence read, not the depth read."""
    L1, B = X.shape[:2]
    z = short_swa(X.flatten(0, 1), K, w_q, w_k, w_v)                  # (L+1)·B sequences of length T
    return z.unflatten(0, (L1, B))


def _token_axis_softmax(X, K, w_q, w_k, w_v):
    """Scores laid out (n, B, T) and the softmax taken over the last axis: over the tokens, not the window."""
    out = []
    for l in range(X.size(0)):
        W = X[max(0, l - K + 1): l + 1]
        scores = torch.einsum("bte,nbte->nbt", X[l] @ w_q.T, W @ w_k.T) / math.sqrt(w_q.size(0))
        out.append(torch.einsum("nbt,nbte->bte", scores.softmax(-1), W @ w_v.T))
    return torch.stack(out)


STACK_MISTAKES = [
    Mistake(lambda X, K, q, k, v: _stack_read(X, q, k, v, lambda l, S: list(range(l, min(S, l + K)))),
            "your window reads layers above l: the read is causal over depth, layer l reads only "
            "X[max(0, l-K+1)], ..., X[l]"),
    Mistake(lambda X, K, q, k, v: _stack_read(X, q, k, v, _window(K), zeros_below=K - 1),
            "near the bottom your window holds K slots, padded with zero states that still take softmax weight: "
            "layer l reads K_l = min(K, l+1) layers, so layer 0 reads only itself"),
    Mistake(lambda X, K, q, k, v: _stack_read(X, q, k, v, lambda l, S: list(range(max(0, l - K), l + 1))),
            "your window holds K + 1 layers: it should hold K (layer l itself and K − 1 below it)"),
    Mistake(lambda X, K, q, k, v: _stack_read(X, q, k, v, lambda l, S: list(range(max(0, l - K), l)) or [0]),
            "your window leaves out layer l itself: it is X[max(0, l-K+1)], ..., X[l]"),
    Mistake(lambda X, K, q, k, v: _stack_read(X, q, k, v, lambda l, S: list(range(0, l + 1))),
            "you read every earlier layer (the full window): keep only the last K layers"),
    Mistake(_feature_softmax,
            "your softmax runs over the feature axis: sum q·k over the E features first, one score per layer "
            "of the window, then take the softmax over the window"),
    Mistake(_token_axis_softmax,
            "your softmax runs over the tokens T: each token's weights are a softmax over its own window of "
            "layers"),
    Mistake(_over_tokens,
            "you mixed tokens, not layers: this is ShortSWA along the sequence axis (positions t-K+1..t of one "
            "layer); over depth, token (b, t) reads its own states at layers l-K+1..l"),
    Mistake(lambda X, K, q, k, v: _stack_read(X, q, k, v, _window(K), scale=False),
            NO_SCALE),
    Mistake(lambda X, K, q, k, v: _stack_read(X, q, k, v, _window(K), scale_by_input_width=True),
            "you scaled by sqrt(D), the width of the states: d_k is the width of the projected keys, E"),
    Mistake(lambda X, K, q, k, v: _stack_read(X, q, v, k, _window(K)),
            KV_SWAPPED),
]


def check_depth_swa_stack(fn, *, seed: int = 0, **kw) -> bool:
    """Chapter 05's exercise: ``fn(X (L+1, B, T, D), window K, w_q (E, D), w_k (E, D), w_v (E, D)) -> (L+1, B, T,
    E)``, causal ShortSWA over depth for every token of a depth stack at once. ``seed`` picks the random cases (0:
    the public checks). Not graded: no assignment holds it (the assignment's one-token version is
    :func:`check_depth_swa_one_token`)."""
    lang = kw.get("lang")
    sizes = [(6, 2, 3, 8, 8, 3), (5, 1, 4, 6, 4, 2), (9, 2, 2, 8, 8, 4), (4, 1, 3, 4, 4, 1)]   # (L+1, B, T, D, E, K)
    cases = []
    for i, (S, B, T, D, E, K) in enumerate(sizes):
        X, wq, wk, wv = random_inputs(1000 * seed + i + 700, (S, B, T, D), (E, D), (E, D), (E, D))
        cases.append((2.0 * X, K, wq, wk, wv))                         # sharp enough that mistakes show
    kw.setdefault("stub_hint", in_language(
        "one layer l at a time, every token at once: the query comes from X[l]; the keys and values from the layers "
        "of l's window, which ends at l and holds at most K layers; one score per layer of the window, scaled as in "
        "the chapter's equation",
        "한 번에 층 l 하나씩, 모든 토큰은 한꺼번에 처리하세요. 쿼리는 X[l]에서, 키와 값은 l에서 끝나고 최대 K개 층을 "
        "담는 l의 윈도 안의 층들에서 옵니다. 윈도의 층마다 점수 하나이며, 장의 식대로 스케일합니다", lang))
    kw.setdefault("graded", False)
    return check_function(in_language("ShortSWA over depth, whole stack", "깊이 방향 ShortSWA, 스택 전체", lang), fn,
                          _ref_depth_swa_stack, cases, _in_language(STACK_MISTAKES, STACK_HINTS_KO, lang), **kw)
