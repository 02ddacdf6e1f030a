"""Chapter 09's capstone exercise, pattern_or_values: the reference passes on every seed, each known wrong variant
gets its own hint, the chapter's worked solution (written without the reference) agrees with it, and its pattern
and value swaps are chapter 02's."""
import pytest
import torch

from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import swap_experiment
from vrs_edu.course.exercises import ch09

from exercise_spec import exercise_specs

CAPSTONE = (ch09.check_pattern_or_values, ch09.pattern_or_values, ch09.CAPSTONE_MISTAKES)
test_reference_passes, test_each_mistake_gets_its_own_hint = exercise_specs([CAPSTONE])


@torch.no_grad()
def worked_solution(model, x, y, layer):
    """The notebook's worked solution, as a learner writes it: hooks only, no course helper."""
    point = f"blocks.{layer}.attn."
    clean = model(x, y).loss.item()
    other = model(x.roll(1, 0), trace=True).trace
    T = x.size(1)
    lower = torch.ones(T, T).tril()
    uniform = lower / lower.sum(-1, keepdim=True)

    def cost(name, value):
        return model(x, y, hooks={point + name: lambda old: value.expand_as(old)}).loss.item() - clean

    return (cost("pattern", uniform), cost("pattern", other[point + "pattern"]),
            cost("v_mix", other[point + "v_mix"]))


def test_the_worked_solution_passes_and_the_edges_too(capsys):
    for seed in (0, 5):
        assert ch09.check_pattern_or_values(worked_solution, seed=seed) is True
    assert ch09.check_pattern_or_values(worked_solution, seed=2, edges=True) is True
    assert "public checks passed" in capsys.readouterr().out


def test_the_reference_agrees_with_chapter_02s_swaps_on_one_batch():
    model, x, y, layer = ch09._capstone_cases(0)[0]
    swaps = swap_experiment(model, [(x, y)], layers=[layer])
    _, pattern, values = ch09.pattern_or_values(model, x, y, layer)
    assert pattern == pytest.approx(swaps["pattern swap"][0].mean, abs=1e-5)
    assert values == pytest.approx(swaps["value swap"][0].mean, abs=1e-5)


def test_every_case_moves_the_loss_visibly():
    for model, x, y, layer in ch09._capstone_cases(0):
        assert max(abs(c) for c in ch09.pattern_or_values(model, x, y, layer)) > 1e-3
