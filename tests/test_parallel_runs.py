"""A recipe's runs (variants × seeds) in worker processes give exactly the numbers of a one-thread run in this process.

Known input: two variants × two seeds of the char-6x64 preset at a quarter of its width and batch (QUARTER), 4 steps
each. Expected: identical result dicts (losses, coefficients, per-layer metrics, parameter counts) apart from the
measured wall time, and the first seed's checkpoint written by a worker loads back to the same model. One exception,
measured: the x0-R² read-outs come from a float64 least-squares solve (LAPACK) whose last bit can depend on where
the arrays sit in memory, so two processes agreed to 1 part in 1e16 but not always bit for bit (0.9362013474623672
vs ...673 in one CI run); they are compared to 1e-12 instead. Everything trained in float32 stays bit-identical.
"""
import pytest
import torch

from vrs_edu.lab import experiments
from vrs_edu.lab.experiments import compare_variants
from vrs_edu.lab.parallel import map_runs, usable_jobs, worker_count
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.train import load_checkpoint

VARIANTS = {"baseline": {}, "learnable": {"value_residual": "learnable"}}
# Parallel runs must equal serial ones at any size: a quarter of the preset's width and batch keeps the processes and
# the comparison, at a fraction of the arithmetic.
SMALL = {"d_model": 16, "batch_size": 8}
QUARTER = RunOptions(settings=SMALL)


def without_wall_time(result):
    for runs in result["runs"].values():
        for run in runs:
            run["history"].pop("wall_time_s")
    return result


def pop_x0_r2(result) -> list[float]:
    """Remove the float64 least-squares read-outs (see the module docstring) and return them in a fixed order."""
    out = []
    for runs in result["runs"].values():
        for run in runs:
            metrics = run["layer_metrics"]
            for key in sorted(k for k in metrics if k.startswith("x0_r2")):
                out.extend(metrics.pop(key))
    return out


@pytest.fixture
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.slow
def test_parallel_runs_equal_sequential_runs(one_thread, tmp_path, monkeypatch):
    monkeypatch.setattr(experiments, "CHECKPOINT_DIR", tmp_path)
    kw = dict(quick=True, quick_steps=4, metric_batches=1, checkpoint_as="ck", options=QUARTER)
    seq = without_wall_time(compare_variants("char-6x64", VARIANTS, [0, 1], jobs=1, **kw))
    par = without_wall_time(compare_variants("char-6x64", VARIANTS, [0, 1], jobs=2, **kw))
    assert list(par["runs"]) == list(VARIANTS) and [r["seed"] for r in par["runs"]["learnable"]] == [0, 1]
    r2_par, r2_seq = pop_x0_r2(par), pop_x0_r2(seq)
    assert r2_seq and r2_par == pytest.approx(r2_seq, rel=1e-12, abs=1e-12)
    assert par == seq
    # the two seeds differ (the comparison above is not between two copies of one run)
    assert seq["runs"]["baseline"][0]["history"]["train_loss"] != seq["runs"]["baseline"][1]["history"]["train_loss"]


@pytest.mark.slow
def test_three_runs_on_two_cores_take_three_workers_and_give_the_same_numbers(one_thread, tmp_path, monkeypatch):
    """3 runs do not split evenly over 2 cores, so three one-thread workers share them (worker_count(3, 2) == 3):
    still one thread per run, so still the numbers of the runs one after another."""
    monkeypatch.setattr(experiments, "CHECKPOINT_DIR", tmp_path)
    assert worker_count(3, 2) == 3
    kw = dict(quick=True, quick_steps=3, metric_batches=1, options=QUARTER)
    seq = without_wall_time(compare_variants("char-6x64", {"baseline": {}}, [0, 1, 2], jobs=1, **kw))
    par = without_wall_time(compare_variants("char-6x64", {"baseline": {}}, [0, 1, 2], jobs=2, **kw))
    r2_par, r2_seq = pop_x0_r2(par), pop_x0_r2(seq)
    assert r2_par == pytest.approx(r2_seq, rel=1e-12, abs=1e-12)
    assert par == seq


@pytest.mark.parametrize("n_tasks, jobs, workers, why", [
    (16, 2, 2, "8 rounds of 2: no core waits"),
    (15, 2, 3, "2 workers: 8 rounds, the last with one core idle (8 runs' time); 3 workers: 5 runs each at 2/3 "
               "of a core (7.5)"),
    (35, 2, 2, "2, 3 and 4 workers all cost 36 runs' worth of rounds (18x2, 12x3, 9x4): the fewest processes win"),
    (3, 2, 3, "3 workers at 2/3 of a core each: 1.5 runs' time instead of 2"),
    (2, 2, 2, "one run per core"),
    (1, 2, 1, "one run needs one worker"),
    (40, 2, 2, "the bank-of-values recipe: 8 variants x 5 seeds split evenly"),
    (45, 16, 23, "16 workers: 3 rounds (48); 23 workers: 2 rounds of 23 (46), no count in 16..32 does better"),
])
def test_worker_count_keeps_every_core_busy_to_the_end(n_tasks, jobs, workers, why):
    assert worker_count(n_tasks, jobs) == workers, why


def test_worker_count_refuses_bad_counts():
    with pytest.raises(ValueError, match="jobs must be a positive integer, got 0"):
        worker_count(4, 0)
    with pytest.raises(ValueError, match="n_tasks must be a non-negative integer, got -1"):
        worker_count(-1, 2)


@pytest.mark.slow
def test_a_worker_writes_the_first_seeds_checkpoint(tmp_path, monkeypatch):
    """Full runs save seed 0's model; here the one task is run by a worker of a 2-process pool directly."""
    from vrs_edu.lab.data import make_token_data
    from vrs_edu.lab.experiments import train_and_measure
    from vrs_edu.lab.presets import make_run

    preset, mcfg, tcfg = make_run("char-6x64", steps=3, eval_every=3, eval_batches=1, **SMALL)
    data = make_token_data(tokenizer=preset.tokenizer, block_size=mcfg.block_size)
    from dataclasses import replace
    mcfg = replace(mcfg, vocab_size=data.vocab_size)
    task = dict(mcfg=mcfg, tcfg=tcfg, data=data, seed=0, metric_batches=1, ablation=False, variant="baseline",
                desc="", progress=False)
    runs = map_runs(train_and_measure, [dict(task, checkpoint_dir=tmp_path / "a"),
                                        dict(task, checkpoint_dir=tmp_path / "b")], jobs=2)
    model, _, _ = load_checkpoint(tmp_path / "a")
    assert model.num_params() == runs[0]["n_params"]
    b, _, _ = load_checkpoint(tmp_path / "b")
    for (n, p), (_, q) in zip(model.named_parameters(), b.named_parameters()):
        assert torch.equal(p, q), n


def test_jobs_must_be_positive():
    with pytest.raises(ValueError, match="jobs must be a positive integer, got 0"):
        map_runs(print, [{}], jobs=0)


def test_jobs_come_from_the_run_options_and_fall_back_to_one_off_cpu():
    assert usable_jobs() == 1
    assert usable_jobs(RunOptions(jobs=3)) == 3
    assert usable_jobs(RunOptions(jobs=3), jobs=2) == 2   # an explicit count wins
    assert usable_jobs(RunOptions(jobs=3, device="cuda")) == 1      # one accelerator: runs take turns on it


def test_a_recall_task_travels_to_a_worker():
    """Tasks are pickled for the workers: the associative-recall task must survive it and draw the same batches."""
    import pickle

    from vrs_edu.lab.data import associative_recall

    task = associative_recall(n_pairs=4, n_key_symbols=8, n_value_symbols=16, key_len=2, n_queries=4)
    copy = pickle.loads(pickle.dumps(task))
    for a, b in zip(task.batch(3, torch.Generator().manual_seed(0)), copy.batch(3, torch.Generator().manual_seed(0))):
        assert torch.equal(a, b)
