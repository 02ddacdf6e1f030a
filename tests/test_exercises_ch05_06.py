"""Chapter 05 and 06 exercises: the reference solutions pass on every seed, and each known wrong variant gets its
own hint (not another mistake's, not the generic "values differ")."""
import math

import pytest
import torch

from vrs_edu.course.checks import CheckFailed, messages
from vrs_edu.course.exercises import ch05, ch06
from vrs_edu.lab.kv_cache import kv_bytes_per_token

from exercise_spec import edge_specs, exercise_specs

EXERCISES = [
    (ch05.check_depth_swa_one_token, ch05._ref_depth_swa_one_token, ch05.SWA_MISTAKES),
    (ch05.check_depth_read_weights, ch05._ref_depth_read_weights, ch05.WEIGHT_MISTAKES),
    (ch06.check_kv_cache_bytes, ch06._ref_kv_cache_bytes, ch06.KV_MISTAKES),
]
test_reference_passes, test_each_mistake_gets_its_own_hint = exercise_specs(EXERCISES)
test_the_edges_pass_the_reference_and_catch_a_float32_result = edge_specs(EXERCISES)


def test_a_hand_written_loop_over_layers_passes(capsys):
    """What a learner would write: the paper's equation, one layer at a time."""
    def depth_swa_one_token(h, window, w_q, w_k, w_v):
        out = []
        for l in range(h.size(0)):
            W = h[max(0, l - window + 1): l + 1]
            q = w_q @ h[l]
            scores = (W @ w_k.T) @ q / math.sqrt(w_q.size(0))
            out.append(torch.softmax(scores, dim=0) @ (W @ w_v.T))
        return torch.stack(out)

    assert ch05.check_depth_swa_one_token(depth_swa_one_token) is True


def test_the_depth_pattern_is_the_weights_of_the_reads_and_a_hand_written_one_passes(capsys):
    g = torch.Generator().manual_seed(0)
    h, wq, wk, wv = torch.randn(6, 8, generator=g), *torch.randn(3, 4, 8, generator=g).unbind(0)
    for K in (1, 3, 6, 9):
        w = ch05._ref_depth_read_weights(h, K, wq, wk)
        assert torch.allclose(w.sum(-1), torch.ones(6)) and w.triu(1).eq(0).all() and w.tril(-K).eq(0).all()
        assert torch.allclose(w @ (h @ wv.T), ch05._ref_depth_swa_one_token(h, K, wq, wk, wv), atol=1e-5)

    def depth_read_weights(h, window, w_q, w_k):     # what a learner would write: one row at a time
        out = torch.zeros(h.size(0), h.size(0), dtype=h.dtype)
        for l in range(h.size(0)):
            lo = max(0, l - window + 1)
            scores = (h[lo:l + 1] @ w_k.T) @ (w_q @ h[l]) / math.sqrt(w_q.size(0))
            out[l, lo:l + 1] = torch.softmax(scores, dim=0)
        return out

    assert ch05.check_depth_read_weights(depth_read_weights) is True
    assert ch05.check_depth_read_weights(depth_read_weights, seed=13, edges=True) is True


@pytest.mark.parametrize("args, message", [
    ((torch.ones(4, 3), 0, torch.ones(2, 3), torch.ones(2, 3)), "depth_read_weights: expected window >= 1, got 0"),
    ((torch.ones(4, 3), 2, torch.ones(2, 5), torch.ones(2, 5)),
     "depth_read_weights: expected h (L+1, D) and w_q, w_k (E, D) for that D, got h (4, 3), w_q (2, 5) and "
     "w_k (2, 5)"),
])
def test_the_depth_pattern_reference_names_a_bad_argument(args, message):
    with pytest.raises(ValueError) as e:
        ch05._ref_depth_read_weights(*args)
    assert str(e.value) == message


def test_a_hand_written_kv_estimate_passes_and_a_wrong_one_raises_for_the_grader():
    def kv_cache_bytes(n_layers, d_model, seq_len, variant, bytes_per_number):
        v_layers = {"baseline": n_layers, "svformer": 1, "bank": n_layers - max(1, n_layers // 3)}[variant]
        return (n_layers + v_layers) * d_model * seq_len * bytes_per_number

    assert ch06.check_kv_cache_bytes(kv_cache_bytes, quiet=True) is True
    with pytest.raises(CheckFailed, match="stores the keys too"):     # the grader sees the hint
        ch06.check_kv_cache_bytes(lambda L, D, T, v, b: kv_bytes_per_token(L, D, v, b) * T // 2
                                  if v == "baseline" else kv_bytes_per_token(L, D, v, b) * T,
                                  raise_on_fail=True)


def _learner_kv(n_bank):
    """A learner's kv_cache_bytes, right except for how it counts the bank layers: ``n_bank(n_layers)``."""
    def kv_cache_bytes(n_layers, d_model, seq_len, variant, bytes_per_number):
        v_layers = {"baseline": n_layers, "svformer": 1, "bank": n_layers - n_bank(n_layers)}[variant]
        return (n_layers + v_layers) * d_model * seq_len * bytes_per_number
    return kv_cache_bytes


def test_a_bank_count_without_its_floor_of_one_layer_gets_its_hint(capsys):
    """n_layers // 3 without max(1, ·): right for 8, 12, 4 and 24 layers, wrong for the 2-layer case (0 bank
    layers), where a bare "case 14: expected 1920, got 2560" would not say why."""
    assert ch06.check_kv_cache_bytes(_learner_kv(lambda L: max(1, L // 3))) is True      # the right count passes
    capsys.readouterr()
    for seed in (0, 3):
        assert ch06.check_kv_cache_bytes(_learner_kv(lambda L: L // 3), seed=seed) is False
        (msg,) = messages(capsys.readouterr().out)
        assert "the max(1, ·) is missing" in msg and "expected" not in msg


@pytest.mark.parametrize("n_bank", [lambda L: L / 3, lambda L: max(1, L / 3)], ids=["L/3", "max(1, L/3)"])
def test_a_fractional_bank_count_gets_its_hint(n_bank, capsys):
    """n_layers / 3 (with or without the max): 8 layers give 2.67 bank layers and a float byte count,
    (8 + 8 - 8/3) · 64 · 64 · 4 = 218453.33 in case 2, instead of 229376."""
    assert _learner_kv(n_bank)(8, 64, 64, "bank", 4) == pytest.approx(218453.33, abs=0.01)
    assert ch06._ref_kv_cache_bytes(8, 64, 64, "bank", 4) == 229376
    for seed in (0, 3):
        assert ch06.check_kv_cache_bytes(_learner_kv(n_bank), seed=seed) is False
        (msg,) = messages(capsys.readouterr().out)
        assert msg.startswith("✗ KV-cache bytes: case 2: n_layers / 3 is a float") and "expected" not in msg


def test_not_implemented_is_reported_not_raised(capsys):
    def todo(*args):
        raise NotImplementedError

    assert ch05.check_depth_swa_one_token(todo) is False
    assert "not implemented yet" in capsys.readouterr().out


def test_an_svformer_that_caches_no_v_at_all_gets_its_named_hint(capsys):
    """"SVFormer layers cache no V": (8 + 0) · 64 · 64 · 4 = 131072 in case 1 instead of (8 + 1) · 64 · 64 · 4 =
    147456 — the hint says layer 1 still caches V_1, not just the two numbers."""
    def kv_cache_bytes(n_layers, d_model, seq_len, variant, bytes_per_number):
        v_layers = {"baseline": n_layers, "svformer": 0, "bank": n_layers - max(1, n_layers // 3)}[variant]
        return (n_layers + v_layers) * d_model * seq_len * bytes_per_number

    assert kv_cache_bytes(8, 64, 64, "svformer", 4) == 131072 and ch06._ref_kv_cache_bytes(8, 64, 64, "svformer", 4) == 147456
    for seed in (0, 3):
        assert ch06.check_kv_cache_bytes(kv_cache_bytes, seed=seed) is False
        (msg,) = messages(capsys.readouterr().out)
        assert msg.startswith("✗ KV-cache bytes: case 1: SVFormer's layers 2..L cache no V, but layer 1")
        assert "expected" not in msg


def test_a_right_count_returned_as_a_float_is_rejected_with_a_clear_message(capsys):
    """The docstring says int: 147456.0 is the right number of bytes but not an int, and the tolerance of the
    comparison would otherwise let it pass."""
    def kv_cache_bytes(n_layers, d_model, seq_len, variant, bytes_per_number):
        return float(ch06._ref_kv_cache_bytes(n_layers, d_model, seq_len, variant, bytes_per_number))

    assert ch06.check_kv_cache_bytes(kv_cache_bytes) is False
    (msg,) = messages(capsys.readouterr().out)
    assert msg.startswith("✗ KV-cache bytes: case 0: returned a float (262144.0), but the function returns an int")
    with pytest.raises(CheckFailed, match="returned a float"):
        ch06.check_kv_cache_bytes(kv_cache_bytes, raise_on_fail=True)
