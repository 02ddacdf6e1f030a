"""Chapter 01 and 02 exercises: the reference solutions pass on every seed, and each known wrong variant gets its
own hint (not another mistake's, not the generic "values differ")."""
import pytest
import torch

from vrs_edu.course.checks import CheckFailed
from vrs_edu.course.exercises import ch00, ch01, ch02
from vrs_edu.chapters.ch01_two_axes.readout import logit_contributions, residual_stack
from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import head_contributions, value_swap_loss
from vrs_edu.nn.attention import attend, attention_pattern

from exercise_spec import edge_specs, exercise_specs

EXERCISES = [
    (ch01.check_residual_stack, residual_stack, ch01.STACK_MISTAKES),
    (ch01.check_logit_contributions, logit_contributions, ch01.DLA_MISTAKES),
    (ch02.check_attention_pattern, attention_pattern, ch02.PATTERN_MISTAKES),
    (ch02.check_attend, attend, ch02.ATTEND_MISTAKES),
    (ch02.check_value_swap, value_swap_loss, ch02.SWAP_MISTAKES),
    (ch02.check_head_contributions, head_contributions, ch02.CONTRIBUTION_MISTAKES),
]
# chapter 01's third exercise returns two floats from a model (no float64 edge to catch): the first two specs only
BLOCK_EFFECT = (ch01.check_block_effect, ch01.block_effect, ch01.EFFECT_MISTAKES)
test_reference_passes, test_each_mistake_gets_its_own_hint = exercise_specs([*EXERCISES, BLOCK_EFFECT])
# chapter 00's one checker (no file of its own) is graded too
test_the_edges_pass_the_reference_and_catch_a_float32_result = edge_specs(
    [(ch00.check_stream_norms, ch00._ref_stream_norms, []), *EXERCISES])


def test_hand_written_wrong_solutions_get_the_hints_a_learner_needs(capsys):
    def pattern_without_scale(q, k):
        T = q.size(-2)
        scores = q @ k.transpose(-2, -1)
        return scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")).softmax(-1)

    assert not ch02.check_attention_pattern(pattern_without_scale)
    assert "divide the scores q·k by sqrt(Dh)" in capsys.readouterr().out

    def stack_forgetting_embedding(embedding, outputs):
        return torch.cat([embedding[None], outputs.cumsum(0)])

    assert not ch01.check_residual_stack(stack_forgetting_embedding)
    assert "lack the embedding" in capsys.readouterr().out

    def stack_with_wrong_shape(embedding, outputs):
        return outputs.cumsum(0)

    with pytest.raises(CheckFailed, match="expected a tensor of shape"):
        ch01.check_residual_stack(stack_with_wrong_shape, raise_on_fail=True)


def test_unimplemented_exercise_says_so(capsys):
    def todo(*args):
        raise NotImplementedError

    assert ch02.check_attend(todo) is False
    assert "not implemented yet" in capsys.readouterr().out


def test_seeds_change_the_cases():
    a, b = ch02._pattern_cases(0), ch02._pattern_cases(1)
    assert not torch.equal(a[0][0], b[0][0])


def test_the_block_effect_reference_agrees_with_zeroing_both_writes_by_hooks_and_the_last_block_is_direct():
    # total by the chapter's resid_pre hooks (direct_and_total_effects) = total by zeroing attn.out and mlp.out;
    # for the last block nothing reads the write after it, so direct = total (to float rounding)
    model, x, y, _ = ch01._effect_cases(0)[0]
    for layer in range(model.cfg.n_layers):
        direct, total = ch01.block_effect(model, x, y, layer)
        assert total == pytest.approx(ch01._total(model, x, y, layer), abs=1e-5)
        assert direct == pytest.approx(ch01._direct(model, x, y, layer), abs=1e-5)
    assert direct == pytest.approx(total, abs=1e-5)
