"""The two specifications every auto-checked exercise must meet, shared by the per-chapter test files:

* the reference solution passes on several seeds (public seed 0 and hidden ones), printing the "public checks
  passed" line;
* each known wrong variant fails *with its own hint* (not another mistake's, not the generic "values differ"),
  read from the printed message joined back into one line (a message is printed wrapped to 100 columns).

Use: ``test_reference_passes, test_each_mistake_gets_its_own_hint = exercise_specs(EXERCISES)`` with
``EXERCISES = [(check_fn, reference_fn, mistakes), ...]``.
"""
import pytest

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
