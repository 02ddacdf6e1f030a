"""Cost of reading over depth: causal ShortSWA over depth with a window K vs the full window, as depth L grows, and
the same window on the sequence axis. Time and peak memory measured side by side; printed as ratios.

The duality paper's cost model (Zhang, arXiv 2603.16039, sec. 2.4): a depth window K costs O(T·K·d) per block,
O(T·K·L·d) over the whole depth; the full window (every earlier layer) O(T·L²·d). So full / window-K should grow like
(L + 1) / K. On the sequence axis the same window costs the same arithmetic, O(T·w·d) per layer, but needs only
the states of one layer at a time (a K-token sliding KV cache at inference), while a depth read keeps a token's
whole layer stack alive: the systems reason the paper gives for putting ShortSWA on the sequence axis.

Peak memory is counted by :class:`PeakMemory`, a ``TorchDispatchMode`` that adds up the bytes of every tensor an
operation allocates while it is alive (views share their storage and count once; inputs do not count). It is
deterministic, unlike the process RSS, and needs no GPU.
"""
from __future__ import annotations

import statistics
import time
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from vrs_edu.nn.shortswa import depth_short_swa, short_swa


class PeakMemory(TorchDispatchMode):
    """Peak bytes of tensors allocated by torch operations inside the ``with`` block (``.peak``; ``.current`` is
    what is still alive at exit). Storage shared by views and in-place results counts once; storage of tensors
    created before the block (inputs, weights) does not count."""

    def __init__(self):
        super().__init__()
        self.live: dict[int, list[int]] = {}     # storage pointer -> [bytes, live tensors using it]
        self.current = self.peak = 0

    def _release(self, key: int) -> None:
        entry = self.live.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] == 0:
            self.current -= entry[0]
            del self.live[key]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = {t.untyped_storage().data_ptr() for t in tree_flatten((args, kwargs))[0]
                  if isinstance(t, torch.Tensor)}
        for t in tree_flatten(out)[0]:
            if not isinstance(t, torch.Tensor):
                continue
            st = t.untyped_storage()
            key = st.data_ptr()
            if key in self.live:
                self.live[key][1] += 1
            elif key in inputs:                  # a view of (or in-place on) a tensor from outside: no allocation
                continue
            else:
                self.live[key] = [st.nbytes(), 1]
                self.current += st.nbytes()
                self.peak = max(self.peak, self.current)
            weakref.finalize(t, self._release, key)
        return out


def peak_bytes(fn) -> int:
    """Peak bytes allocated while ``fn()`` runs (see :class:`PeakMemory`)."""
    with PeakMemory() as m:
        out = fn()
        del out
    return m.peak


def median_seconds(fn, repeats: int = 5) -> float:
    """Median wall time of ``fn()`` over ``repeats`` calls, after one warm-up call."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def cost_table(depths=(8, 16, 32), windows=(2, 4), B: int = 4, T: int = 64, D: int = 64, repeats: int = 5,
               seed: int = 0) -> list[dict]:
    """Measure, for every depth L: depth ShortSWA with each window K and the full window (K = L + 1) on a stack
    (L+1, B, T, D), and the same windows along the sequence axis applied to each of the L + 1 layer states in
    turn (as a model would, one layer at a time). One row per (axis, L, K): ``seconds``, ``peak_bytes`` and the
    paper's cost ``flops_model`` = (L+1)·K·B·T·D (the score and mixing arithmetic, up to a constant)."""
    g = torch.Generator().manual_seed(seed)
    w = [torch.randn(D, D, generator=g) / D ** 0.5 for _ in range(3)]
    rows = []
    for L in depths:
        stack = torch.randn(L + 1, B, T, D, generator=g)
        for K in (*windows, L + 1):
            label = "full" if K == L + 1 else K
            depth_fn = lambda K=K: depth_short_swa(stack, K, *w)
            seq_fn = lambda K=K: [short_swa(stack[l], K, *w) for l in range(L + 1)][-1]   # (B, T, D) per layer
            for axis, fn in (("depth", depth_fn), ("sequence", seq_fn)):
                if axis == "sequence" and label == "full":
                    continue   # the full window is a depth-only notion here (on the sequence it is plain attention)
                rows.append({"axis": axis, "L": L, "K": label, "seconds": median_seconds(fn, repeats),
                             "peak_bytes": peak_bytes(fn), "flops_model": (L + 1) * K * B * T * D})
    return rows


def ratios(rows: list[dict]) -> list[dict]:
    """Per depth L: full-window / window-K time and memory (depth axis), next to the cost model's (L + 1) / K, and
    sequence-axis / depth-axis time and memory at the same K."""
    by = {(r["axis"], r["L"], r["K"]): r for r in rows}
    out = []
    for (axis, L, K), r in by.items():
        if axis != "depth" or K == "full":
            continue
        full, seq = by[("depth", L, "full")], by.get(("sequence", L, K))
        out.append({"L": L, "K": K, "full_over_K_time": full["seconds"] / r["seconds"],
                    "full_over_K_memory": full["peak_bytes"] / r["peak_bytes"], "model_ratio": (L + 1) / K,
                    "seq_over_depth_time": seq["seconds"] / r["seconds"] if seq else float("nan"),
                    "seq_over_depth_memory": seq["peak_bytes"] / r["peak_bytes"] if seq else float("nan")})
    return out


def format_table(rows: list[dict]) -> str:
    lines = [f"{'axis':9s} {'L':>3s} {'K':>5s} {'ms':>9s} {'peak MB':>9s}"]
    for r in rows:
        lines.append(f"{r['axis']:9s} {r['L']:3d} {str(r['K']):>5s} {r['seconds'] * 1e3:9.2f} "
                     f"{r['peak_bytes'] / 1e6:9.2f}")
    return "\n".join(lines)


def format_ratios(rat: list[dict]) -> str:
    lines = [f"{'L':>3s} {'K':>3s}  full/K time  full/K memory  (L+1)/K   seq/depth time  seq/depth memory"]
    for r in rat:
        lines.append(f"{r['L']:3d} {r['K']:3d}  {r['full_over_K_time']:11.2f}  {r['full_over_K_memory']:13.2f}  "
                     f"{r['model_ratio']:7.2f}   {r['seq_over_depth_time']:14.2f}  {r['seq_over_depth_memory']:16.2f}")
    return "\n".join(lines)


def run(args) -> None:
    repeats = 3 if getattr(args, "quick", False) else 7
    B, T, D = 4, 64, 64
    rows = cost_table(B=B, T=T, D=D, repeats=repeats)
    print(f"depth ShortSWA vs full window, B={B} T={T} D={D}, {torch.get_num_threads()} threads, "
          f"median of {repeats}")
    print(format_table(rows))
    print(format_ratios(ratios(rows)))
