"""Multi-process data-parallel training with PyTorch's own engine (``torch.distributed`` + DDP).

Launch any ``vrs-edu`` command with ``torchrun``; each process becomes one *rank*::

    torchrun --standalone --nproc-per-node 4 -m vrs_edu.cli reproduce value-residual --device cuda

The command calls :func:`init_from_env`, which joins the process group (``nccl`` on CUDA, ``gloo`` on CPU), and
:func:`vrs_edu.lab.train.train` then wraps the model in ``DistributedDataParallel``.

Why the result equals a single-process run with the same global batch: every rank draws the *whole* global batch
from the same seeded generator (cheap: index arithmetic) and keeps only its own rows (:func:`shard`). Each rank's
loss is its share of the global mean (:func:`shard_loss`); DDP averages the gradients over ranks, which gives exactly
the gradient of the global mean — up to the order of floating-point sums. Because all ranks advance the same
generator, the data order does not depend on the number of processes, and a checkpoint written by rank 0 resumes
on any number of them.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import Tensor
from torch.nn.parallel import DistributedDataParallel as DDP


@dataclass(frozen=True)
class World:
    """This process's place among the training processes (rank 0 of 1 when not distributed)."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        """Rank 0 prints, draws the progress bar and writes files."""
        return self.rank == 0


def launched_by_torchrun() -> bool:
    """True when the environment says this process is one of several (torchrun sets ``WORLD_SIZE``)."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def world() -> World:
    """The current :class:`World`: from the initialised process group, else a single process."""
    if dist.is_available() and dist.is_initialized():
        return World(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", dist.get_rank())))
    return World()


def is_main() -> bool:
    return world().is_main


def backend_for(device: torch.device) -> str:
    """``nccl`` for CUDA GPUs, ``gloo`` for the CPU (the two backends PyTorch ships for these devices)."""
    return "nccl" if device.type == "cuda" else "gloo"


def init_from_env(device: torch.device) -> World:
    """Join the process group that ``torchrun`` described in the environment (no-op for a single process).

    Reads ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``. On CUDA, each rank must use
    its own GPU: pass ``resolve_device("cuda")``, which gives ``cuda:$LOCAL_RANK``.

    Raises:
        ValueError: MPS (PyTorch has no distributed backend for it), or a CUDA device index other than
            ``LOCAL_RANK`` (two ranks on one GPU would deadlock nccl).
    """
    if not launched_by_torchrun():
        return World()
    if dist.is_initialized():
        return world()
    if device.type == "mps":
        raise ValueError("multi-process training is not supported on MPS; use --device cpu or cuda")
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if device.type == "cuda":
        if device.index is not None and device.index != local_rank:
            raise ValueError(f"rank with LOCAL_RANK={local_rank} was given device {device}; each rank needs its own "
                             f"GPU, cuda:{local_rank} (pass --device cuda)")
        torch.cuda.set_device(local_rank)
    kwargs = {"device_id": torch.device("cuda", local_rank)} if device.type == "cuda" else {}
    dist.init_process_group(backend_for(device), **kwargs)
    return world()


def shutdown(wait: bool = True) -> None:
    """Leave the process group (call once, at the end of the command). ``wait=False`` after an error: the other
    ranks may never reach the barrier (torchrun then stops them)."""
    if dist.is_available() and dist.is_initialized():
        if wait:
            dist.barrier()
        dist.destroy_process_group()


def barrier() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def check_batch(global_batch: int, w: World) -> int:
    """Rows per rank for a global batch; raises ValueError when the ranks cannot share it equally."""
    if global_batch % w.size:
        raise ValueError(f"batch_size={global_batch} (the global batch) must be divisible by the number of "
                         f"processes ({w.size}); pick a multiple of {w.size}")
    return global_batch // w.size


def shard(t: Tensor | None, w: World) -> Tensor | None:
    """This rank's contiguous slice of the global batch along axis 0 (B, ...) -> (B / world size, ...)."""
    if t is None or w.size == 1:
        return t
    per = check_batch(t.size(0), w)
    return t[w.rank * per:(w.rank + 1) * per]


def shard_loss(logits: Tensor, targets: Tensor, mask: Tensor | None, global_count: int, w: World) -> Tensor:
    """This rank's share of the global mean cross-entropy, scaled by the world size for DDP's gradient average.

    ``Σ_local loss / N_global · world_size``: DDP divides the summed gradients by ``world_size``, so the gradient
    that every rank ends up with is the gradient of ``Σ_all loss / N_global``, the single-process loss, even when
    the mask leaves the ranks different numbers of scored positions.
    """
    loss = F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten(), reduction="none")
    if mask is not None:
        loss = loss[mask.flatten()]
    return loss.sum() * (w.size / global_count)


def all_reduce_sum(values: list[float], device: torch.device) -> list[float]:
    """Sum a few Python numbers over ranks (returned unchanged for a single process)."""
    if not (dist.is_available() and dist.is_initialized()):
        return values
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t)
    return t.tolist()


def unused_parameters(model: torch.nn.Module, vocab_size: int, device: torch.device) -> list[str]:
    """Names of the parameters that get no gradient (some variant combinations, e.g. SVFormer layers with x0
    injection, build coefficients their forward never reads). DDP must be told, or it waits for them forever.

    Found with one forward/backward on a (1, 2) input; the gradients are cleared afterwards.
    """
    idx = torch.zeros(1, 2, dtype=torch.long, device=device)
    out = model(idx)
    out.logits.float().sum().backward()
    names = [n for n, p in model.named_parameters() if p.requires_grad and p.grad is None]
    model.zero_grad(set_to_none=True)
    return names


def wrap(model: torch.nn.Module, device: torch.device, vocab_size: int) -> torch.nn.Module:
    """``DistributedDataParallel(model)`` on this rank's device; rank 0's weights are broadcast to all ranks."""
    unused = unused_parameters(model, vocab_size, device)
    return DDP(model, device_ids=[device.index] if device.type == "cuda" else None,
               find_unused_parameters=bool(unused))
