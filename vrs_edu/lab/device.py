"""Where training and inference run, and in which precision.

``resolve_device("auto")`` picks CUDA when PyTorch sees a GPU and the CPU otherwise. Apple's MPS is used only when
asked for by name, with a warning: its kernels differ from the CPU's, so losses and metrics may not match the
numbers this course reports (all of them were measured on CPU).

Precision follows the device: bf16 autocast on CUDA (weights, gradients and optimizer state stay fp32; matmuls run
in bf16 — the papers train in bf16 too), plain fp32 everywhere else. bf16 needs no loss scaling, unlike fp16.
"""
from __future__ import annotations

import contextlib
import os
import warnings

import torch

DEVICES = ("auto", "cpu", "cuda", "mps")
PRECISIONS = ("auto", "fp32", "bf16")


class DeviceWarning(UserWarning):
    """Numbers computed on this device may differ from the CPU results the course reports."""


def resolve_device(name: str | torch.device | None = "auto") -> torch.device:
    """The :class:`torch.device` for ``name``: ``auto`` | ``cpu`` | ``cuda`` | ``cuda:N`` | ``mps``.

    ``auto`` (and None) = CUDA if available, else CPU; it never picks MPS. A bare ``cuda`` under ``torchrun`` means
    this process's own GPU, ``cuda:$LOCAL_RANK``.

    Raises:
        ValueError: an unknown name, or a device this machine does not have (the message says what it has).
    """
    if isinstance(name, torch.device):
        name = str(name)
    name = "auto" if name is None else str(name).strip().lower()
    kind, _, index = name.partition(":")
    if kind not in DEVICES or (index and (kind != "cuda" or not index.isdigit())):
        raise ValueError(f"device must be one of {DEVICES} (or cuda:N), got {name!r}")
    if kind == "auto":
        kind = "cuda" if torch.cuda.is_available() else "cpu"
    if kind == "cpu":
        return torch.device("cpu")
    if kind == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device {name!r} was asked for, but PyTorch sees no CUDA GPU here (torch "
                             f"{torch.__version__}, built with CUDA {torch.version.cuda}); use --device auto or cpu")
        n = torch.cuda.device_count()
        i = int(index) if index else int(os.environ.get("LOCAL_RANK", 0))
        if i >= n:
            raise ValueError(f"device cuda:{i} was asked for, but this machine has {n} CUDA device(s)")
        return torch.device("cuda", i)
    if not (torch.backends.mps.is_available()):
        raise ValueError("device 'mps' was asked for, but PyTorch sees no Apple MPS device here; use cpu")
    warnings.warn("training on Apple MPS: its kernels differ from the CPU's, so losses and metrics may differ from "
                  "the CPU numbers this course reports", DeviceWarning, stacklevel=2)
    return torch.device("mps")


def autocast_dtype(device: torch.device, precision: str = "auto") -> torch.dtype | None:
    """The autocast dtype for ``device``: bf16 on CUDA (``auto``), None (plain fp32) otherwise or for ``fp32``.

    Raises:
        ValueError: an unknown ``precision``, or ``bf16`` asked for on a device that is not a bf16-capable GPU.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    if precision == "fp32":
        return None
    bf16_ok = device.type == "cuda" and torch.cuda.is_bf16_supported()
    if precision == "bf16" and not bf16_ok:
        raise ValueError(f"precision 'bf16' needs a CUDA GPU with bf16 support; this run is on {device}")
    if device.type == "cuda" and not bf16_ok:
        warnings.warn(f"{torch.cuda.get_device_name(device)} has no bf16 support: training in fp32",
                      DeviceWarning, stacklevel=2)
    return torch.bfloat16 if bf16_ok else None


def autocast(device: torch.device, dtype: torch.dtype | None):
    """A context that runs the forward pass under autocast to ``dtype`` (a no-op context when ``dtype`` is None)."""
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def describe(device: torch.device, dtype: torch.dtype | None = None) -> str:
    """A one-line description for logs, e.g. ``cuda:0 (NVIDIA A100-SXM4-40GB), bf16 autocast``."""
    what = str(device)
    if device.type == "cuda":
        what += f" ({torch.cuda.get_device_name(device)})"
    return what + (", bf16 autocast" if dtype == torch.bfloat16 else ", fp32")
