"""Chapter 03 and 04 exercises: the reference solutions pass on every seed, each known wrong variant gets its own
hint, and a learner's typical hand-written mistakes are named."""
import pytest
import torch

from vrs_edu.course.exercises import ch03, ch04
from vrs_edu.nn.attention import attend
from vrs_edu.nn.layers import rms_norm
from vrs_edu.nn.value_residual import mix_values
from vrs_edu.nn.x0 import inject_x0

from exercise_spec import edge_specs, exercise_specs


def value_residual_attention(pattern, v, v_first, lambda_1, lambda_2):
    return attend(pattern, mix_values(v, v_first, lambda_1, lambda_2))


def x0_projection(x, embedding, weight, alpha, beta):
    return inject_x0(x, rms_norm(embedding), alpha, beta) @ weight.T


def v1_share(pattern, v, v_first, lambda_1, lambda_2):
    first = value_residual_attention(pattern, v, v_first, lambda_1, 0.0).norm(dim=-1)
    own = value_residual_attention(pattern, v, v_first, 0.0, lambda_2).norm(dim=-1)
    return first / (first + own)


def x0_norm_share(x, embedding, weight, alpha, beta):
    from_x0 = x0_projection(x, embedding, weight, 0.0, beta).norm(dim=-1)
    return from_x0 / (x0_projection(x, embedding, weight, alpha, 0.0).norm(dim=-1) + from_x0)


EXERCISES = [(ch03.check_value_residual_attention, value_residual_attention, ch03.MISTAKES),
             (ch03.check_v1_share, v1_share, ch03.SHARE_MISTAKES),
             (ch04.check_x0_projection, x0_projection, ch04.MISTAKES),
             (ch04.check_x0_norm_share, x0_norm_share, ch04.SHARE_MISTAKES)]
test_reference_passes, test_each_mistake_gets_its_own_hint = exercise_specs(EXERCISES)
test_the_edges_pass_the_reference_and_catch_a_float32_result = edge_specs(EXERCISES)


def test_value_residual_by_hand():
    # one head, two positions: A = [[1, 0], [0.25, 0.75]], V_n = [[2], [4]], V_1 = [[10], [20]], λ = (0.5, 0.5)
    a = torch.tensor([[[[1.0, 0.0], [0.25, 0.75]]]])
    v, v1 = torch.tensor([[[[2.0], [4.0]]]]), torch.tensor([[[[10.0], [20.0]]]])
    # V' = [[6], [12]]; U = [[6], [0.25·6 + 0.75·12]] = [[6], [10.5]]
    assert value_residual_attention(a, v, v1, 0.5, 0.5).flatten().tolist() == [6.0, 10.5]


def test_hand_written_mistakes_get_the_hints_a_learner_needs(capsys):
    def after_the_sum(pattern, v, v_first, lambda_1, lambda_2):
        return lambda_1 * v_first + lambda_2 * (pattern @ v)

    assert not ch03.check_value_residual_attention(after_the_sum)
    assert "V_1 was added after the weighted sum" in capsys.readouterr().out

    def swapped(pattern, v, v_first, lambda_1, lambda_2):
        return pattern @ (lambda_2 * v_first + lambda_1 * v)

    assert not ch03.check_value_residual_attention(swapped)
    assert "swapped" in capsys.readouterr().out

    def raw_embedding(x, embedding, weight, alpha, beta):
        return alpha * x @ weight.T + beta * embedding @ weight.T

    assert not ch04.check_x0_projection(raw_embedding)
    assert "RMSNorm(embedding)" in capsys.readouterr().out

    def todo(*args):
        raise NotImplementedError

    assert not ch04.check_x0_projection(todo)
    assert "not implemented yet" in capsys.readouterr().out


def test_a_solution_that_changes_v_in_place_is_rejected_with_a_hint(capsys):
    # right values, but `v.mul_` overwrites the caller's V_n (in the chapter: the traced model's own values)
    def in_place(pattern, v, v_first, lambda_1, lambda_2):
        return pattern @ v.mul_(lambda_2).add_(lambda_1 * v_first)

    a = torch.tensor([[[[1.0, 0.0], [0.25, 0.75]]]])
    v, v1 = torch.tensor([[[[2.0], [4.0]]]]), torch.tensor([[[[10.0], [20.0]]]])
    assert ch03.mutated_inputs(in_place, (a, v, v1, 0.5, 0.5)) == ["v"]
    assert v.flatten().tolist() == [2.0, 4.0]          # the checker ran it on copies
    assert ch03.mutated_inputs(value_residual_attention, (a, v, v1, 0.5, 0.5)) == []
    assert not ch03.check_value_residual_attention(in_place)
    assert "changed its input v in place" in capsys.readouterr().out
    assert ch03.check_value_residual_attention(value_residual_attention)


def test_the_v1_share_by_hand_and_its_limits():
    # one head, two positions: A = [[1, 0], [0.5, 0.5]], V_n = [[3, 0], [0, 4]], V_1 = [[0, 4], [3, 0]], λ = (1, 1)
    a = torch.tensor([[[[1.0, 0.0], [0.5, 0.5]]]])
    v, v1 = torch.tensor([[[[3.0, 0.0], [0.0, 4.0]]]]), torch.tensor([[[[0.0, 4.0], [3.0, 0.0]]]])
    # query 0: ‖[0, 4]‖ = 4 against ‖[3, 0]‖ = 3 -> 4/7; query 1: ‖[1.5, 2]‖ = 2.5 against ‖[1.5, 2]‖ = 2.5 -> 1/2
    assert torch.allclose(v1_share(a, v, v1, 1.0, 1.0).flatten(), torch.tensor([4 / 7, 0.5]))
    assert torch.allclose(ch03._ref_v1_share(a, v, v1, 1.0, 1.0), v1_share(a, v, v1, 1.0, 1.0))
    assert ch03._ref_v1_share(a, v, v1, 0.0, 2.0).eq(0).all() and ch03._ref_v1_share(a, v, v1, 2.0, 0.0).eq(1).all()
    assert torch.allclose(ch03._ref_v1_share(a, v, v, 0.2, 0.6), torch.full((1, 1, 2), 0.25))


def test_the_x0_norm_share_equals_the_coefficient_share_when_x_is_x0():
    g = torch.Generator().manual_seed(0)
    emb, w = torch.randn(2, 3, 6, generator=g) * 3, torch.randn(5, 6, generator=g)
    share = ch04._ref_x0_norm_share(rms_norm(emb), emb, w, 0.5, -1.5)     # |β| / (|α| + |β|) = 0.75
    assert share.shape == (2, 3) and torch.allclose(share, torch.full((2, 3), 0.75))


@pytest.mark.parametrize("call, message", [
    (lambda: ch03._ref_v1_share(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 4, 2), torch.ones(1, 1, 4, 2), 0.5, 0.5),
     "v1_share: expected pattern (B, H, T, T) and v (B, H, T, Dh) with the same B, H, T, got pattern (1, 1, 3, 3) "
     "and v (1, 1, 4, 2)"),
    (lambda: ch04._ref_x0_norm_share(torch.ones(1, 2, 4), torch.ones(1, 2, 4), torch.ones(3, 5), 1.0, 1.0),
     "x0_norm_share: expected weight (D_out, D=4), got weight (3, 5)"),
])
def test_the_share_references_name_a_bad_argument(call, message):
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value) == message
