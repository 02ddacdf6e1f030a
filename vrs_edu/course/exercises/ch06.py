"""Chapter 06 exercise: estimate the KV cache of a configuration (ResFormer/SVFormer, arXiv 2410.17897; bank of
values, arXiv 2606.02780 sec. 4).

The learner writes ``kv_cache_bytes(n_layers, d_model, seq_len, variant, bytes_per_number)``: the bytes a decoder
keeps for one sequence of ``seq_len`` tokens — keys and values of every layer (``baseline``), with V stored once
(``svformer``: layers 2..L reuse V_1), or with no V in the bank layers (``bank``: the last third of the layers,
``n_layers // 3`` of them, at least 1, look their values up by token id). The chapter then checks the estimate
against the cache the model really builds (:func:`vrs_edu.lab.kv_cache.build_kv_cache`).
"""
from __future__ import annotations

import math

from vrs_edu.course.checks import CheckFailed, Mistake, check_function, wrap
from vrs_edu.i18n.language import in_language, resolve_language
from vrs_edu.lab.kv_cache import kv_bytes_per_token


def _ref_kv_cache_bytes(n_layers, d_model, seq_len, variant, bytes_per_number):
    return kv_bytes_per_token(n_layers, d_model, variant, bytes_per_number) * seq_len


def _wrong(n_layers, d_model, seq_len, variant, bpn, *, keys=True, sv_once=True, sv_none=False, bank_keys=True,
           n_bank=None, bytes_=True, per_seq=True):
    nb = max(1, n_layers // 3) if n_bank is None else n_bank(n_layers)
    k = n_layers if keys else 0
    if variant == "baseline":
        v = n_layers
    elif variant == "svformer":
        v = 0 if sv_none else 1 if sv_once else n_layers
    else:
        v = n_layers - nb
        k = k if bank_keys else k - nb
    return (k + v) * d_model * (bpn if bytes_ else 1) * (seq_len if per_seq else 1)


KV_MISTAKES = [
    Mistake(lambda *a: _wrong(*a, keys=False), "a KV cache stores the keys too: K and V, D numbers each per "
            "layer and token"),
    Mistake(lambda *a: _wrong(*a, sv_once=False), "SVFormer's layers 2..L reuse V_1: its values are stored "
            "once, not per layer (the keys are still per layer)"),
    # "SVFormer layers cache no V": true of layers 2..L, but layer 1 computes V_1 and caches it for all of them.
    Mistake(lambda *a: _wrong(*a, sv_none=True), "SVFormer's layers 2..L cache no V, but layer 1 still computes "
            "V_1 and caches it, since every later layer reuses it: count V once (d_model values per token), not "
            "zero times"),
    Mistake(lambda *a: _wrong(*a, bank_keys=False), "bank layers still compute and cache their keys: only V "
            "comes from the table"),
    Mistake(lambda *a: _wrong(*a, n_bank=lambda L: math.ceil(L / 3)), "the bank layers are the last third, "
            "n_layers // 3 of them (at least 1), as vrs_edu.nn.x0.default_x0_layers places them"),
    Mistake(lambda *a: _wrong(*a, n_bank=lambda L: 1), "every layer of the last third is a bank layer "
            "(n_layers // 3 of them), not just the last one"),
    # Two slips in counting the bank layers: the floor of one layer left out (a 2-layer model then has no bank
    # layer, and its bank cache equals the baseline's), and a true division (8 / 3 = 2.67 layers, a float result).
    Mistake(lambda *a: _wrong(*a, n_bank=lambda L: L // 3), "the max(1, ·) is missing: with fewer than 3 layers "
            "n_layers // 3 is 0, but the bank always has at least one layer, max(1, n_layers // 3)"),
    Mistake(lambda *a: _wrong(*a, n_bank=lambda L: max(1, L / 3)), "n_layers / 3 is a float, a fraction of a layer "
            "(8 / 3 = 2.67): count whole layers with floor division, max(1, n_layers // 3)"),
    Mistake(lambda *a: _wrong(*a, bytes_=False), "that is a count of numbers: multiply by bytes_per_number "
            "(4 for float32, 2 for bf16)"),
    Mistake(lambda *a: _wrong(*a, per_seq=False), "that is the cache of one token: multiply by seq_len"),
]


# KV_MISTAKES' hints in Korean, in the same order (the Korean edition's checker names the same mistakes).
HINTS_KO = [
    "KV 캐시는 키도 저장합니다. 층과 토큰마다 K와 V, 각각 D개의 수입니다",
    "SVFormer의 층 2..L은 V_1을 재사용합니다. 값은 층마다가 아니라 한 번만 저장됩니다(키는 여전히 층마다)",
    "SVFormer의 층 2..L은 V를 캐시하지 않지만, 층 1은 V_1을 계산해 캐시합니다. 뒤의 모든 층이 그것을 재사용하기 "
    "때문입니다. V를 0번이 아니라 한 번(토큰당 d_model개) 세세요",
    "뱅크 층도 키는 계산해 캐시합니다. 표에서 오는 것은 V뿐입니다",
    "뱅크 층은 뒤쪽 3분의 1, 즉 n_layers // 3개(최소 1개)이며, vrs_edu.nn.x0.default_x0_layers가 그렇게 배치합니다",
    "뒤쪽 3분의 1의 모든 층이 뱅크 층입니다(n_layers // 3개). 마지막 층 하나만이 아닙니다",
    "max(1, ·)가 빠졌습니다. 층이 3개보다 적으면 n_layers // 3은 0이지만, 뱅크에는 언제나 최소 한 층이 있습니다: "
    "max(1, n_layers // 3)",
    "n_layers / 3은 float, 즉 층의 일부입니다(8 / 3 = 2.67). 정수 나눗셈으로 온전한 층을 세세요: "
    "max(1, n_layers // 3)",
    "수의 개수입니다. bytes_per_number를 곱하세요(float32는 4, bf16은 2)",
    "토큰 하나의 캐시입니다. seq_len을 곱하세요",
]


def kv_mistakes(lang: str | None = None) -> list[Mistake]:
    """:data:`KV_MISTAKES` with their hints in ``lang`` (default: the running edition)."""
    if resolve_language(lang) == "en":
        return list(KV_MISTAKES)
    if len(HINTS_KO) != len(KV_MISTAKES):
        raise ValueError(f"HINTS_KO: expected one hint per mistake ({len(KV_MISTAKES)}), got {len(HINTS_KO)}")
    return [Mistake(m.fn, hint) for m, hint in zip(KV_MISTAKES, HINTS_KO)]


def _returns_int(fn, cases, raise_on_fail: bool, lang: str | None = None) -> bool:
    """False (after the message) when ``fn`` gets a case's bytes right but as a float, e.g. 147456.0: the docstring
    asks for an int, a whole number of bytes, and ``check_function``'s tolerance alone would let the float pass.
    A case that raises, or whose value is wrong, is left to ``check_function`` and its hints."""
    for i, args in enumerate(cases):
        try:
            got = fn(*args)
        except Exception:
            return True
        if not isinstance(got, float):
            try:
                same = bool(got == _ref_kv_cache_bytes(*args))
            except Exception:                              # a tensor or other odd return: check_function reports it
                return True
            if not same:
                return True
            continue
        if abs(got - _ref_kv_cache_bytes(*args)) > 0.5:
            return True                                   # a wrong float: the mistakes' hints say why
        text = in_language(
            f"✗ KV-cache bytes: case {i}: returned a float ({got!r}), but the function returns an int, a whole "
            f"number of bytes: count whole layers with // (not /), or return int(...) of the product",
            f"✗ KV 캐시 바이트: case {i}: float({got!r})를 돌려주었지만, 함수는 온전한 바이트 수인 int를 돌려줘야 "
            f"합니다. 층은 /가 아니라 //로 세거나, 곱의 int(...)를 돌려주세요", lang)
        if raise_on_fail:
            raise CheckFailed(text)
        print(wrap(text))
        return False
    return True


def check_kv_cache_bytes(fn, *, seed: int = 0, **kw) -> bool:
    """Exercise 06: ``fn(n_layers, d_model, seq_len, variant, bytes_per_number) -> int`` bytes of KV cache for one
    sequence. ``seed`` picks the cases (0: the public checks; graders use others). Messages in ``lang`` among
    ``kw`` (default: the running edition)."""
    lang = kw.pop("lang", None)
    base = [(8, 64, 64, 4), (12, 768, 2048, 2), (4, 32, 100, 4), (24, 1536, 4096, 2), (2, 16, 10, 4)]
    cases = []
    for L, D, T, b in base:
        L, T = L + (seed % 3) * 3, T + 7 * seed                                  # graders shift the sizes
        for variant in ("baseline", "svformer", "bank"):
            cases.append((L, D, T, variant, b))
    kw.setdefault("stub_hint", in_language(
        "per token, every layer caches d_model keys and (unless it reuses or looks up its values) d_model values: "
        "count them per variant, then multiply by seq_len and bytes_per_number",
        "토큰마다 모든 층은 키 d_model개와 (값을 재사용하거나 표에서 찾지 않는 한) 값 d_model개를 캐시합니다. 변형마다 "
        "세고, 그다음 seq_len과 bytes_per_number를 곱하세요", lang))
    kw.setdefault("graded", False)   # chapter 06 has no assignment: no hidden checks run on this exercise
    if not _returns_int(fn, cases, kw.get("raise_on_fail", False), lang):
        return False
    return check_function(in_language("KV-cache bytes", "KV 캐시 바이트", lang), fn, _ref_kv_cache_bytes, cases,
                          kv_mistakes(lang), atol=0.5, lang=lang, **kw)
