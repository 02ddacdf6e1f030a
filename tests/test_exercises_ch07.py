"""Chapter 07's substitution exercise: the reference passes on every seed, each known wrong variant gets its own
hint, and the reference computes one cell of the package's substitution ablation (a whole forward pass with the
hook equals the faster resumed pass the chapter's table uses)."""
import pytest
import torch

from vrs_edu.course.exercises import ch07
from vrs_edu.chapters.ch07_real_model.probes import substitution_cosine

from exercise_spec import exercise_specs

EXERCISES = [(ch07.check_substitution, substitution_cosine, ch07.SUBSTITUTION_MISTAKES)]
test_reference_passes, test_each_mistake_gets_its_own_hint = exercise_specs(EXERCISES)


def test_layer_0_changes_nothing_and_a_deeper_layer_does():
    model, ids, mask, _, _ = ch07._substitution_cases(0)[0]
    # at layer 0 every projection already reads x0: exactly the clean run
    assert substitution_cosine(model, ids, mask, 0, "v") == pytest.approx(1.0, abs=1e-6)
    assert substitution_cosine(model, ids, mask, 2, "v") < 0.99


def test_the_reference_is_one_cell_of_the_resumed_ablation():
    model, ids, mask, _, _ = ch07._substitution_cases(0)[0]
    with torch.no_grad():
        clean = model(ids, mask, trace=True)
        x0 = clean.trace["x0"]
        resumed = model.resume(clean.trace["blocks.2.resid_pre"], mask, 2, hooks={"blocks.2.attn.k_in": lambda t: x0})
    expected = float(torch.nn.functional.cosine_similarity(resumed.embedding, clean.embedding, dim=-1).mean())
    assert substitution_cosine(model, ids, mask, 2, "k") == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("layer, path, message", [(0, "o", "path must be one of"), (3, "v", "layer must be in 0..2")])
def test_bad_arguments_are_named(layer, path, message):
    model, ids, mask, _, _ = ch07._substitution_cases(0)[0]
    with pytest.raises(ValueError, match=message):
        substitution_cosine(model, ids, mask, layer, path)
