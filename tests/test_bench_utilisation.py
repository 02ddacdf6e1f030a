"""make bench reads a recorded full run's wall time apart: how busy the cores were, and how much of the workers'
time went into training loops (vrs_edu.bench.recipes.utilisation), from the result file alone.

Known input: a hand-made result, 4 runs on 2 cores (2 workers), wall 100 s. Each run's training loop took 45 s of
wall time, the whole recipe 100 s of CPU: the workers were inside training loops 4 × 45 / (100 × 2) = 90 % of the
time, but the cores were busy only 100 / (100 × 2) = 50 %: the runs were descheduled (other load), not idle.
"""
import pytest

from vrs_edu.bench.recipes import utilisation


def result(wall=100.0, cpu=100.0, jobs=2, train_walls=(45.0, 45.0, 45.0, 45.0)):
    runs = [{"seed": i, "history": {"wall_time_s": w}} for i, w in enumerate(train_walls)]
    return {"wall_time_s": wall, "cpu_time_s": cpu, "environment": {"jobs": jobs},
            "corpus": {"runs": {"baseline": runs[:2], "resformer": runs[2:]}}, "verdicts": []}


def test_a_descheduled_run_is_busy_half_the_time_but_inside_its_runs_most_of_it():
    u = utilisation(result())
    assert u["busy"] == pytest.approx(0.5)
    assert u["in_runs"] == pytest.approx(0.9)
    assert u["idle_machine_s"] == pytest.approx(50.0)     # 100 CPU-s over 2 cores
    assert (u["runs"], u["workers"]) == (4, 2)


def test_a_serial_section_shows_as_workers_outside_their_runs():
    # the same CPU, but each training loop took only 25 s: half of the workers' 100 s went elsewhere
    u = utilisation(result(train_walls=(25.0,) * 4))
    assert u["in_runs"] == pytest.approx(0.5)


def test_three_runs_on_two_cores_count_three_workers():
    # worker_count(3, 2) == 3: three one-thread workers share the two cores
    u = utilisation(result(wall=60.0, cpu=110.0, train_walls=(55.0, 55.0, 55.0)))
    assert u["workers"] == 3 and u["in_runs"] == pytest.approx(165 / 180)


def test_a_result_without_cpu_time_or_runs_has_no_reading():
    r = result()
    del r["cpu_time_s"]
    assert utilisation(r) is None
    assert utilisation({**result(), "corpus": {"runs": {}}}) is None
