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


EXERCISES = [(ch03.check_value_residual_attention, value_residual_attention, ch03.MISTAKES),
             (ch04.check_x0_projection, x0_projection, ch04.MISTAKES)]
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
