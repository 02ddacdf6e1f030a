"""Specifications of multi-process data-parallel training (vrs_edu.lab.distributed + train under torchrun).

The promise: ``torchrun --nproc-per-node 2`` (gloo on CPU) trains the same model as one process with the same global
batch — each rank takes a different slice of the same batch, DDP averages the gradients — so the loss trajectories
agree up to the order of floating-point sums. The torchrun tests run on loopback only (MASTER_ADDR=127.0.0.1, a free
port), offline, with the tiny sizes; the small unit tests pin down the sharding arithmetic in-process.
"""
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from vrs_edu import cli
from vrs_edu.lab import distributed
from vrs_edu.lab.distributed import World
from vrs_edu.lab.train import masked_loss, save_checkpoint
from vrs_edu.nn import TinyGPT, TinyGPTConfig

from ddp_cases import CASES, run_case   # the runs compared; each torchrun rank imports that module alone

ROOT = Path(__file__).resolve().parents[1]
TORCHRUN = Path(sys.executable).with_name("torchrun")   # .venv/bin/torchrun; else the same launcher as a module
LAUNCHER = [str(TORCHRUN)] if TORCHRUN.exists() else [sys.executable, "-m", "torch.distributed.run"]
TOL = 1e-4   # nats; observed differences are ~1e-6 (float32 sums in another order)


# --- the arithmetic of sharding ----------------------------------------------------------------------------------

def test_each_rank_takes_its_own_contiguous_slice_of_the_global_batch():
    x = torch.arange(8)[:, None].expand(8, 3)
    parts = [distributed.shard(x, World(rank=r, size=4)) for r in range(4)]
    assert [p[:, 0].tolist() for p in parts] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert distributed.shard(x, World()) is x and distributed.shard(None, World(1, 2)) is None


def test_a_global_batch_the_ranks_cannot_share_equally_is_an_error():
    assert distributed.check_batch(8, World(0, 2)) == 4
    with pytest.raises(ValueError, match=r"batch_size=6 \(the global batch\) must be divisible by the number of "
                                         r"processes \(4\)"):
        distributed.check_batch(6, World(0, 4))


def test_the_shard_losses_add_up_to_the_single_process_mean_even_with_unequal_masks():
    # Two ranks, a mask that scores 3 positions on rank 0 and 1 on rank 1: averaging the two per-rank *means*
    # would weight rank 1's single position 3x too much; Σ_local / N_global does not.
    g = torch.Generator().manual_seed(0)
    logits, targets = torch.randn(4, 2, 5, generator=g), torch.randint(5, (4, 2), generator=g)
    mask = torch.tensor([[1, 1], [1, 0], [0, 0], [0, 1]], dtype=torch.bool)
    want = masked_loss(logits, targets, mask)
    w2 = [World(r, 2) for r in range(2)]
    shares = [distributed.shard_loss(distributed.shard(logits, w), distributed.shard(targets, w),
                                     distributed.shard(mask, w), int(mask.sum()), w) for w in w2]
    # DDP averages over the 2 ranks: (share_0 + share_1) / 2 must be the global masked mean.
    assert float(sum(shares) / 2) == pytest.approx(float(want), rel=1e-6)
    per_rank_means = [float(masked_loss(distributed.shard(logits, w), distributed.shard(targets, w),
                                        distributed.shard(mask, w))) for w in w2]
    assert sum(per_rank_means) / 2 != pytest.approx(float(want), rel=1e-3)


def test_only_rank_0_writes_checkpoints(tmp_path, monkeypatch):
    model = TinyGPT(TinyGPTConfig(vocab_size=16, d_model=16, n_layers=1, n_heads=2, block_size=8))
    monkeypatch.setattr(distributed, "world", lambda: World(rank=1, size=2))
    assert save_checkpoint(tmp_path / "r1", model) == tmp_path / "r1" and not (tmp_path / "r1").exists()
    monkeypatch.setattr(distributed, "world", lambda: World(rank=0, size=2))
    save_checkpoint(tmp_path / "r0", model)
    assert (tmp_path / "r0" / "model.safetensors").exists()


def test_a_single_process_is_rank_0_of_1_and_needs_no_process_group(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert distributed.init_from_env(torch.device("cpu")) == World(0, 1, 0)
    assert distributed.backend_for(torch.device("cpu")) == "gloo"
    assert distributed.backend_for(torch.device("cuda", 0)) == "nccl"


# --- the same runs, one process and two ----------------------------------------------------------------------------

SCRIPT = """
import json, sys
import torch
sys.path.insert(0, {tests!r})
from ddp_cases import CASES, run_case
from vrs_edu.lab import distributed
w = distributed.init_from_env(torch.device("cpu"))
out = {{name: run_case(name) for name in CASES}}
out["world"] = [w.rank, w.size]
open({out!r}.format(rank=w.rank), "w").write(json.dumps(out))
distributed.shutdown()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MASTER_ADDR": "127.0.0.1", "PYTHONPATH": str(ROOT)}
    if sys.platform.startswith("linux"):
        env["GLOO_SOCKET_IFNAME"] = "lo"      # loopback only: no network needed, none used
    env.pop("WORLD_SIZE", None)
    cmd = [*LAUNCHER, "--nnodes", "1", "--nproc-per-node", "2", "--master-addr", "127.0.0.1",
           "--master-port", str(free_port()), *args]
    # The timeout only guards against a hung process group; it is not a speed requirement.
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def two_process_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ddp")
    script = tmp / "run_cases.py"
    script.write_text(SCRIPT.format(tests=str(Path(__file__).parent), out=str(tmp / "rank{rank}.json")))
    torchrun([str(script)], cwd=tmp)
    return [json.loads((tmp / f"rank{r}.json").read_text()) for r in range(2)]


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_two_processes_follow_the_single_process_loss_trajectory(two_process_runs, case):
    one = run_case(case)
    r0, r1 = (run[case] for run in two_process_runs)
    assert two_process_runs[0]["world"] == [0, 2] and two_process_runs[1]["world"] == [1, 2]
    assert r0["train_loss"] == r1["train_loss"] and r0["val_loss"] == r1["val_loss"]   # all ranks agree
    assert len(r0["train_loss"]) == len(one["train_loss"]) == 6
    assert max(abs(a - b) for a, b in zip(r0["train_loss"], one["train_loss"])) < TOL
    assert max(abs(a - b) for a, b in zip(r0["val_loss"], one["val_loss"])) < TOL
    assert r0["val_acc"] == pytest.approx(one["val_acc"], abs=1e-6)
    # ...and training moved: the comparison is not between two untrained models.
    assert r0["train_loss"][-1] < r0["train_loss"][0]


@pytest.mark.slow
def test_torchrun_command_line_one_bar_one_file_same_losses(tmp_path):
    args = ["train", "--preset", "tiny", "--steps", "6", "--device", "cpu"]
    proc = torchrun(["-m", "vrs_edu.cli", *args, "--out", str(tmp_path / "two")], cwd=tmp_path)
    assert "2 processes (DDP, gloo)" in proc.stdout
    assert proc.stdout.count("checkpoint written to") == 1        # rank 0 alone speaks and writes
    assert cli.main([*args, "--out", str(tmp_path / "one")]) == 0
    two = json.loads((tmp_path / "two" / "config.json").read_text())
    one = json.loads((tmp_path / "one" / "config.json").read_text())
    assert two["processes"] == 2 and one["processes"] == 1
    diff = [abs(a - b) for a, b in zip(two["history"]["train_loss"], one["history"]["train_loss"])]
    assert len(diff) == 6 and max(diff) < TOL
