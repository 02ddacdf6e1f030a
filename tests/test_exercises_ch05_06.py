"""Chapter 05 and 06 exercises: the reference solutions pass on every seed, and each known wrong variant gets its
own hint (not another mistake's, not the generic "values differ")."""
import math

import pytest
import torch

from vrs_edu.course.checks import CheckFailed
from vrs_edu.course.exercises import ch05, ch06
from vrs_edu.lab.kv_cache import kv_bytes_per_token

from exercise_spec import exercise_specs

EXERCISES = [
    (ch05.check_depth_swa_one_token, ch05._ref_depth_swa_one_token, ch05.SWA_MISTAKES),
    (ch06.check_kv_cache_bytes, ch06._ref_kv_cache_bytes, ch06.KV_MISTAKES),
]
test_reference_passes, test_each_mistake_gets_its_own_hint = exercise_specs(EXERCISES)


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


def test_a_hand_written_kv_estimate_passes_and_a_wrong_one_raises_for_the_grader():
    def kv_cache_bytes(n_layers, d_model, seq_len, variant, bytes_per_number):
        v_layers = {"baseline": n_layers, "svformer": 1, "bank": n_layers - max(1, n_layers // 3)}[variant]
        return (n_layers + v_layers) * d_model * seq_len * bytes_per_number

    assert ch06.check_kv_cache_bytes(kv_cache_bytes, quiet=True) is True
    with pytest.raises(CheckFailed, match="stores the keys too"):     # the grader sees the hint
        ch06.check_kv_cache_bytes(lambda L, D, T, v, b: kv_bytes_per_token(L, D, v, b) * T // 2
                                  if v == "baseline" else kv_bytes_per_token(L, D, v, b) * T,
                                  raise_on_fail=True)


def test_not_implemented_is_reported_not_raised(capsys):
    def todo(*args):
        raise NotImplementedError

    assert ch05.check_depth_swa_one_token(todo) is False
    assert "not implemented yet" in capsys.readouterr().out
