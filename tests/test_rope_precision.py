"""RoPE in the model's dtype: the rotation angles are computed in float64 and cast to the input's dtype, never
computed in (or rounded to) a lower precision first.

The reference is a hand computation in Python floats (IEEE double): ``θ_i = base^(-2i/Dh)``, angle ``m·θ_i``, and the
rotate-half rotation of Su et al. (arXiv 2104.09864, eq. 34). Before the fix the table was computed in float32 and
only cast, so a float64 input was rotated ~1e-4 off at position 4,000 (the bound here is 1e-12).
"""
import math

import torch

from vrs_edu.nn.layers import RoPE


def hand_rope(x: list[float], m: int, base: float) -> list[float]:
    """Rotate one head vector ``x`` (length Dh) at position ``m``: pairs (x_i, x_{i+Dh/2}) by the angle m·θ_i."""
    half = len(x) // 2
    out = [0.0] * len(x)
    for i in range(half):
        a = m * base ** (-2 * i / len(x))
        out[i] = x[i] * math.cos(a) - x[i + half] * math.sin(a)
        out[i + half] = x[i] * math.sin(a) + x[i + half] * math.cos(a)
    return out


def test_float64_rotation_equals_a_float64_hand_computation_at_long_positions():
    rope = RoPE(8, 4096, base=100_000.0)
    x = torch.randn(1, 1, 4096, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    got = rope(x)
    assert got.dtype == torch.float64
    for m in (1, 257, 1000, 4095):
        want = torch.tensor(hand_rope(x[0, 0, m].tolist(), m, 100_000.0), dtype=torch.float64)
        assert (got[0, 0, m] - want).abs().max() < 1e-12, m


def test_each_dtype_gets_the_float64_tables_cast_once_and_cached():
    rope = RoPE(8, 512)
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        cos, sin = rope.tables(dtype)
        assert cos.dtype == dtype
        assert torch.equal(cos, rope.cos64.to(dtype)) and torch.equal(sin, rope.sin64.to(dtype))
        assert rope.tables(dtype)[0] is cos          # cached, not recomputed per call
    # bfloat16 rotates with the float64 angles rounded once: position 300 stays position 300
    m = 300
    assert abs(rope.tables(torch.bfloat16)[0][m, 0].item() - math.cos(m)) < 4e-3


def test_casting_the_module_does_not_round_its_tables():
    """``module.to(dtype)`` casts buffers; RoPE keeps float64 tables outside them, so a model cast to bfloat16 and
    back to float64 still rotates exactly."""
    rope = RoPE(4, 64).to(torch.bfloat16).to(torch.float64)
    x = torch.randn(1, 1, 64, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    want = torch.tensor(hand_rope(x[0, 0, 63].tolist(), 63, 10_000.0), dtype=torch.float64)
    assert (rope(x)[0, 0, 63] - want).abs().max() < 1e-12


def test_no_model_keeps_a_floating_point_buffer_that_a_cast_could_round():
    """The other tables of the real-weights models: MiniBert's positions are learned parameters (cast exactly, as
    weights), MiniLlama's only table is its RoPE; neither registers a floating-point buffer computed at build time."""
    from vrs_edu.nn.bert import BertConfig, MiniBert
    from vrs_edu.nn.llama import LlamaConfig, MiniLlama

    bert = MiniBert(BertConfig(n_layers=1, vocab_size=10, d_model=8, n_heads=2, d_mlp=16, max_positions=12))
    llama = MiniLlama(LlamaConfig(vocab_size=10, d_model=8, n_layers=1, n_heads=2, n_kv_heads=1, d_mlp=16,
                                  max_positions=12))
    for model in (bert, llama):
        assert [n for n, b in model.named_buffers() if b.is_floating_point()] == []
