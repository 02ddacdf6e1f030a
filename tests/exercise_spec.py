"""The two specifications every auto-checked exercise must meet, shared by the per-chapter test files:

* the reference solution passes on several seeds (public seed 0 and hidden ones), printing the "public checks
  passed" line;
* each known wrong variant fails *with its own hint* (not another mistake's, not the generic "values differ"),
  read from the printed message joined back into one line (a message is printed wrapped to 100 columns);
* where the checker has graded edge cases (``edges=True``: one position, the smallest widths, float64), the
  reference passes them, and the reference computed in float32 (what ``.float()`` in a learner's function gives)
  fails them naming the dtype, while it passes the ordinary float32 cases.

Use: ``test_reference_passes, test_each_mistake_gets_its_own_hint = exercise_specs(EXERCISES)`` with
``EXERCISES = [(check_fn, reference_fn, mistakes), ...]``, and ``test_the_edges_... = edge_specs(EXERCISES)`` where
some checkers are graded.
"""
import inspect

import pytest
import torch

from vrs_edu.course.checks import messages


def exercise_specs(exercises):
    ids = [e[0].__name__ for e in exercises]

    @pytest.mark.parametrize("check, reference, mistakes", exercises, ids=ids)
    @pytest.mark.parametrize("seed", [0, 1, 7])
    def test_reference_passes(check, reference, mistakes, seed, capsys):
        assert check(reference, seed=seed) is True
        assert "public checks passed" in capsys.readouterr().out

    @pytest.mark.parametrize("check, reference, mistakes", exercises, ids=ids)
    @pytest.mark.parametrize("seed", [0, 3])
    def test_each_mistake_gets_its_own_hint(check, reference, mistakes, seed, capsys):
        for m in mistakes:
            assert check(m.fn, seed=seed) is False
            out = capsys.readouterr().out
            assert any(m.hint in msg for msg in messages(out)), f"{m.hint!r} not in {out}"

    return test_reference_passes, test_each_mistake_gets_its_own_hint


def edge_specs(exercises):
    """The third specification, for the checkers with graded edge cases (a keyword ``edges``)."""
    graded = [e for e in exercises if "edges" in inspect.signature(e[0]).parameters]

    @pytest.mark.parametrize("check, reference, mistakes", graded, ids=[e[0].__name__ for e in graded])
    def test_the_edges_pass_the_reference_and_catch_a_float32_result(check, reference, mistakes, capsys):
        assert check(reference, seed=13, edges=True) is True

        def in_float32(*args):
            return reference(*[a.float() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
                               for a in args])

        assert check(in_float32, seed=13) is True
        capsys.readouterr()
        assert check(in_float32, seed=13, edges=True) is False
        assert "torch.float32 where the reference's is torch.float64" in " ".join(messages(capsys.readouterr().out))

    return test_the_edges_pass_the_reference_and_catch_a_float32_result
