"""The toy regime's measurements (issue 27): the rates as nanochat scales them, what a result records (code, epochs,
train beside validation loss), the need for x0 (removal cost, gradient pressure), the verdict corpus' unit
conversion. Each expected value by hand or from a second, independent computation."""
import math

import pytest
import torch

from vrs_edu.lab.x0_need import x0_gradient_pressure
from vrs_edu.lab.metrics import mean_loss
from vrs_edu.nn import TinyGPT, TinyGPTConfig

SMALL = dict(vocab_size=32, d_model=32, n_layers=3, n_heads=2, block_size=16, qk_norm=True)


def _batch(seed=0, B=4, T=16):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(32, (B, T), generator=g), torch.randint(32, (B, T), generator=g)


def test_gradient_pressure_is_the_derivative_of_the_loss_in_beta_at_zero():
    """On a baseline's weights the probe computes the baseline's loss exactly (α = 1, β = 0), and its ∂L/∂β_v
    matches a central finite difference (β_v = ±h in the x0 layer, h = 1e-3; float64 so the difference is exact
    enough)."""
    torch.manual_seed(0)
    base = TinyGPT(TinyGPTConfig(**SMALL)).double()
    with torch.no_grad():                  # a "trained" baseline: weights off their init, so the gradients are real
        for p in base.parameters():
            p.add_(0.05 * torch.randn_like(p))
    x, y = _batch()
    p = x0_gradient_pressure(base, [(x, y)])
    assert p["layers"] == [2] and p["loss"] == pytest.approx(mean_loss(base, [(x, y)]), abs=1e-12)
    probe = TinyGPT(TinyGPTConfig(**SMALL, x0_mode="qkv")).double()
    probe.load_state_dict(base.state_dict(), strict=False)
    h, blk = 1e-3, probe.blocks[2].x0
    for s in "qkv":
        losses = []
        for beta in (h, -h):
            with torch.no_grad():
                getattr(blk, f"beta_{s}").fill_(beta)
            losses.append(mean_loss(probe, [(x, y)]))
        with torch.no_grad():
            getattr(blk, f"beta_{s}").fill_(0.0)
        assert p[s][0] == pytest.approx((losses[0] - losses[1]) / (2 * h), rel=1e-4, abs=1e-9), s
    with pytest.raises(ValueError, match="without x0 paths"):
        x0_gradient_pressure(probe, [(x, y)])


def test_the_verdict_corpus_converts_bits_per_byte_at_its_bytes_per_token():
    from vrs_edu.lab.corpora import corpus_token_data, get_corpus
    from vrs_edu.chapters.ch04_bank_of_values import recipe as bov

    c = get_corpus("kjv")
    d = corpus_token_data(c, "word", 2048, 64)
    per_token = len(c.text.encode("utf-8")) / (len(d.train) + len(d.val))
    assert per_token == pytest.approx(bov.KJV_BYTES_PER_TOKEN, abs=5e-4)       # 4,138,926 / 916,934 = 4.5139
    assert bov.NATS_PER_BPB == pytest.approx(4.514 * math.log(2))               # 3.129
    qkv_loss = next(t for t in bov.TESTS if t.name == "qkv_loss")
    assert qkv_loss.effect_for_power == -0.028                                  # −0.009 bpb × 3.129, 3 decimals
    # 240 steps of 32 × 64 tokens on kjv's 825,241 training tokens: 0.596 epochs; the Python docs: 6.116
    assert 240 * 32 * 64 / len(d.train) == pytest.approx(0.596, abs=5e-4)


def test_a_result_records_its_code_and_a_tree_that_is_not_a_checkout_records_none(tmp_path):
    from vrs_edu.lab.experiments import git_state

    state = git_state()
    assert set(state) == {"commit", "dirty"} and len(state["commit"]) == 40 and isinstance(state["dirty"], bool)
    assert git_state(tmp_path) is None


def test_a_corpus_run_reads_its_final_loss_on_the_whole_split_beside_the_training_loss():
    from vrs_edu.lab.data import make_token_data
    from vrs_edu.lab.experiments import TRAIN_EVAL_BATCHES, compare_variants
    from vrs_edu.lab.train import TrainConfig, evaluate

    part = compare_variants("tiny", {"baseline": {}}, [0], final_eval=True, metric_batches=1)
    run = part["runs"]["baseline"][0]
    assert run["curve_final_val_loss"] == run["history"]["val_loss"][-1]
    assert math.isfinite(run["final_train_loss"]) and run["final_val_loss"] != run["curve_final_val_loss"]
    cfg = part["configs"]["baseline"]["train"]
    T = part["configs"]["baseline"]["model"]["block_size"]
    # tiny: 20 steps × batch 8 × block 32 = 5,120 tokens read, over the default corpus' training split
    assert part["epochs_read"]["baseline"] == pytest.approx(20 * 8 * T / part["corpus_tokens"]["train"])
    assert run["final_eval"]["train_tokens"] == TRAIN_EVAL_BATCHES * cfg["batch_size"] * T
    groups = {g["name"]: g for g in run["optimizer"]}
    assert groups["matrices"]["lr"] == cfg["lr"] and groups["matrices"]["betas"] == [0.9, 0.95]


def test_the_ledger_lists_each_stored_run_and_the_verdicts_that_changed_between_two():
    """Two hand-made versions of one result file: a 16-core run with oversmoothing reproduced, then a 2-core run
    with it undecided (the flip review 2 found unreported): one flip, named with the machine change."""
    from vrs_edu.lab import ledger

    def version(commit, cores, verdict, mean):
        result = {"date": "2026-12-01T00:00:00", "command": "vrs-edu reproduce value-residual", "wall_time_s": 600,
                  "cpu_time_s": 1200, "environment": {"cpu_count": cores, "jobs": 2, "threads": 1,
                                                      "load_average_1m": [1.0, 2.0]},
                  "corpus": {"configs": {"baseline": {"train": {"steps": 240, "batch_size": 32, "lr": 3e-3}}}},
                  "verdicts": [{"name": "oversmoothing_lower", "verdict": verdict, "mean": mean},
                               {"name": "resformer_loss", "verdict": "undecided", "mean": -0.001}]}
        return ledger.summary(result, commit)

    entries = [version("a" * 40, 16, "reproduced", -0.011), version("b" * 40, 2, "undecided", -0.010)]
    (flip,) = ledger.flips(entries)
    assert flip["machine"] == [16, 2] and [c["name"] for c in flip["changed"]] == ["oversmoothing_lower"]
    book = {"value-residual.json": {"runs": entries, "flips": [flip]}}
    assert ledger.flip_lines(book, "value-residual.json") == [
        "2026-12-01 → 2026-12-01 (machine 16 → 2 cores): oversmoothing_lower reproduced → undecided "
        "(-0.011 → -0.010)", "    why: new run (machine 16 → 2 cores)"]     # commit bbb… is in no history
    lines = ledger.run_lines(book, "value-residual.json")
    assert lines[0] == "2026-12-01 aaaaaaa: 10.0 min, 20.0 CPU-min on 16 cores, load 1.0-2.0; 240 steps, lr 0.003"
    assert lines[1] == "    1 reproduced, 1 undecided"


def test_make_bench_says_how_far_a_recorded_run_is_over_its_budget():
    from vrs_edu.bench.recipes import _flag

    assert _flag(20 * 60, 20 * 60) == ""                                  # at the budget: within it
    assert _flag(26.5 * 60, 20 * 60) == "  OVER BUDGET by 6.5m"           # recall's run of 2026-12-02


def test_the_ledger_lists_a_rewritten_file_once_and_a_new_run_again(tmp_path):
    import json
    import subprocess

    from vrs_edu.lab import ledger

    def commit(result: dict, message: str) -> None:
        (tmp_path / "data" / "results" / "x.json").write_text(json.dumps(result))
        subprocess.run(["git", "-C", str(tmp_path), "add", "."], check=True)
        subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm",
                        message], check=True)

    (tmp_path / "data" / "results").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    run = {"date": "2026-12-01T10:00", "command": "vrs-edu reproduce x", "wall_time_s": 600, "cpu_time_s": 1200,
           "seeds": [0, 1, 2], "verdicts": [], "summary": {"old": 1}}
    commit(run, "the run")
    commit({k: v for k, v in run.items() if k != "summary"}, "the retired summary removed: the same run")
    commit({**run, "date": "2026-12-02T10:00", "wall_time_s": 700}, "made again")
    entries = ledger.versions("x.json", root=tmp_path)
    assert [e["date"] for e in entries] == ["2026-12-01T10:00", "2026-12-02T10:00"]


def test_a_failed_precondition_line_does_not_state_its_premise_as_a_fact():
    from vrs_edu.lab.analysis import check_preconditions, precondition_lines
    from vrs_edu.chapters.ch03_value_residual import recipe as vr

    line = precondition_lines(check_preconditions([vr.LAMBDAS_PLATEAUED], {"lambdas_plateaued": 0.0}), width=1000)
    assert line.startswith("lambdas_plateaued 0.000 (needs > 0.5): fails (it stands for: ")


def test_make_bench_times_parallel_and_sequential_side_by_side(monkeypatch):
    """The three settings run A B C C B A and each time is the sum of its two passes: a load that rises steadily
    during the benchmark adds the same to each (measured one after another, A would look fastest)."""
    from vrs_edu.bench import recipes as bench

    clock, order = [0.0], []

    def fake_compare(preset, runs, seeds, jobs, metric_batches):
        order.append((jobs, torch.get_num_threads()))
        clock[0] += 10.0 + len(order)          # each pass 1 s slower than the one before: a rising load

    import torch
    monkeypatch.setattr(bench, "compare_variants", fake_compare)
    monkeypatch.setattr(bench.time, "perf_counter", lambda: clock[0])
    r = bench.parallel_vs_sequential(steps=1)
    assert order == [(1, 2), (2, 1), (1, 1), (1, 1), (2, 1), (1, 2)]
    assert r["sequential"] == r["parallel"] == r["sequential_1_thread"] == 27.0     # 11 + 16, 12 + 15, 13 + 14
