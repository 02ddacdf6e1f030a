"""Chapter 03's two exercises (issue 39): the value residual wired into a stack of attention layers, and the paired
comparison of final losses. The reference solutions pass on every seed and each known wrong variant gets its own
hint; the stack agrees with the package's mixing, and the interval with the recipe's."""
import torch
from scipy.stats import t

from vrs_edu.course.exercises import ch03
from vrs_edu.lab.analysis import paired_difference
from vrs_edu.nn.attention import attend, attention_pattern
from vrs_edu.nn.value_residual import mix_values

from exercise_spec import exercise_specs

EXERCISES = [
    (ch03.check_value_residual_stack, ch03._ref_value_residual_stack, ch03.STACK_MISTAKES),
    (ch03.check_paired_interval, ch03._ref_paired_interval, ch03.PAIRED_MISTAKES),
]
test_reference_passes, test_each_mistake_gets_its_own_hint = exercise_specs(EXERCISES)


def learner_stack(x, layers, lambdas):
    """The worked solution as the chapter shows it, written independently of the reference's keywords."""
    h, v_first = x, None
    for n, layer in enumerate(layers):
        q, k, v = h @ layer["W_q"], h @ layer["W_k"], h @ layer["W_v"]
        pattern = attention_pattern(q, k)
        if n == 0:
            v_first = v
        else:
            v = mix_values(v, v_first, *lambdas[n - 1])
        h = h + attend(pattern, v) @ layer["W_o"]
    return h


def test_a_solution_written_with_the_package_s_mixing_passes(capsys):
    assert ch03.check_value_residual_stack(learner_stack) is True


def test_lambda_0_1_is_the_plain_stack_and_one_layer_has_no_mixing():
    x, layers, lambdas = ch03._stack_cases(0)[0]
    plain = x
    for layer in layers:
        pattern = attention_pattern(plain @ layer["W_q"], plain @ layer["W_k"])
        plain = plain + attend(pattern, plain @ layer["W_v"]) @ layer["W_o"]
    assert torch.allclose(ch03._ref_value_residual_stack(x, layers, [(0.0, 1.0)] * len(lambdas)), plain, atol=1e-6)
    one = ch03._ref_value_residual_stack(x, layers[:1], [])
    assert torch.allclose(one, ch03.STACK_MISTAKES[0].fn(x, layers[:1], []))


def test_the_interval_is_the_recipe_s_paired_difference():
    for variant, baseline in ch03._paired_cases(2):
        mean, low, high = ch03._ref_paired_interval(variant, baseline)
        pd = paired_difference(variant.tolist(), baseline.tolist())
        assert abs(mean - pd.mean) < 1e-12 and abs(low - pd.ci[0]) < 1e-9 and abs(high - pd.ci[1]) < 1e-9


def test_a_solution_in_plain_python_floats_passes(capsys):
    def as_floats(variant, baseline):
        d = [a - b for a, b in zip(variant.tolist(), baseline.tolist())]
        n = len(d)
        m = sum(d) / n
        sd = (sum((x - m) ** 2 for x in d) / (n - 1)) ** 0.5
        half = t.ppf(0.975, n - 1) * sd / n ** 0.5
        return m, m - half, m + half

    assert ch03.check_paired_interval(as_floats) is True
