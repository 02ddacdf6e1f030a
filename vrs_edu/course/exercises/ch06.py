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


def _returns_int(fn, cases, raise_on_fail: bool) -> bool:
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
        text = (f"✗ KV-cache bytes: case {i}: returned a float ({got!r}), but the function returns an int, a whole "
                f"number of bytes: count whole layers with // (not /), or return int(...) of the product")
        if raise_on_fail:
            raise CheckFailed(text)
        print(wrap(text))
        return False
    return True


def check_kv_cache_bytes(fn, *, seed: int = 0, **kw) -> bool:
    """Exercise 06: ``fn(n_layers, d_model, seq_len, variant, bytes_per_number) -> int`` bytes of KV cache for one
    sequence. ``seed`` picks the cases (0: the public checks; graders use others)."""
    base = [(8, 64, 64, 4), (12, 768, 2048, 2), (4, 32, 100, 4), (24, 1536, 4096, 2), (2, 16, 10, 4)]
    cases = []
    for L, D, T, b in base:
        L, T = L + (seed % 3) * 3, T + 7 * seed                                  # graders shift the sizes
        for variant in ("baseline", "svformer", "bank"):
            cases.append((L, D, T, variant, b))
    kw.setdefault("stub_hint", "per token, every layer caches d_model keys and (unless it reuses or looks up its "
                  "values) d_model values: count them per variant, then multiply by seq_len and bytes_per_number")
    kw.setdefault("graded", False)   # chapter 06 has no assignment: no hidden checks run on this exercise
    if not _returns_int(fn, cases, kw.get("raise_on_fail", False)):
        return False
    return check_function("KV-cache bytes", fn, _ref_kv_cache_bytes, cases, KV_MISTAKES, atol=0.5, **kw)
