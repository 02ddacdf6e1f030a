"""Measurements on a trained model: attention concentration, sinks, over-smoothing, coefficients, the
context-free substitution ablation, and what a ShortSWA depth window lets each read use. Every function takes tensors (or a model and batches) and returns numbers.

Sources:
* attention entropy of token importance: ResFormer (arXiv 2410.17897), Fig. 1 / eq. 11, official
  ``analyze/get_entropy.py``;
* over-smoothing as mean pairwise cosine similarity: ResFormer Fig. 15, ``analyze/get_similarity.py``;
* sink mass and value-state drain: Guo et al., arXiv 2410.13835 (active-dormant heads), cited by ResFormer v3.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

import torch
import torch.nn.functional as F
from jaxtyping import Float
from torch import Tensor

from vrs_edu.nn.model import TinyGPT
from vrs_edu.nn.shortswa import depth_window_mask


def _check_pattern(pattern: Tensor) -> None:
    if pattern.dim() != 4 or pattern.size(-1) != pattern.size(-2):
        raise ValueError(f"pattern must be (B, H, T, T), got shape {tuple(pattern.shape)}")


def attention_entropy(pattern: Float[Tensor, "B H T T"]) -> Float[Tensor, "B"]:
    """Entropy (nats) of token importance, per sequence: average the heads, sum each key's column (the attention
    it receives), normalise to a distribution p over keys, return ``-Σ p log p``. Low = concentrated.
    Maximum is log T (uniform importance). Raises ValueError on a non-(B, H, T, T) input."""
    _check_pattern(pattern)
    importance = pattern.mean(1).sum(1)                       # (B, T): attention received by each key
    p = importance / importance.sum(-1, keepdim=True)
    return -(p * p.clamp_min(1e-12).log()).sum(-1)


def uniform_causal_entropy(T: int) -> float:
    """The token-importance entropy (:func:`attention_entropy`) of *uniform causal* attention over T positions: query
    i spreads 1/(i+1) over keys 0..i. This, not log T, is the reference for "concentrated": entropy below it means
    attention piles onto few keys (sinks); above it means attention is *more local* than uniform (log T is reached
    by pure self-attention, the diagonal). T = 64: 3.754 (log 64 = 4.159). Raises ValueError for T < 1."""
    if T < 1:
        raise ValueError(f"T must be >= 1, got {T}")
    importance = torch.tensor([sum(1.0 / (i + 1) for i in range(j, T)) for j in range(T)], dtype=torch.float64)
    p = importance / importance.sum()
    return float(-(p * p.log()).sum())


def entropy_reading(entropy: list[float], T: int, label: str = "entropy", digits: int = 3) -> str:
    """One line per layer: the token-importance entropy next to the uniform-causal reference at T
    (:func:`uniform_causal_entropy`) and log T, then a verdict line: which layers concentrate attention (below the
    reference) — or, when none does, that there is no concentration for a method to relieve."""
    ref, top = uniform_causal_entropy(T), math.log(T)
    lines = [f"{'layer':>5s}  {label:>10s}  uniform causal {ref:.{digits}f}  (log T = {top:.{digits}f})"]
    below = []
    for l, e in enumerate(entropy):
        mark = "concentrated" if e < ref else "at or above uniform"
        below += [l] if e < ref else []
        lines.append(f"{l:5d}  {e:10.{digits}f}  {e - ref:+.{digits}f}  {mark}")
    lines.append(f"layers below the uniform-causal entropy: {below}" if below else
                 "no layer is below the uniform-causal entropy: there is no attention concentration to relieve")
    return "\n".join(lines)


def x0_r2(h: Float[Tensor, "B T D"], x0: Float[Tensor, "B T D"]) -> float:
    """Share of the variance of ``h`` that a least-squares affine map of x0 explains (R², pooled over the D
    features): 1 = the tensor is a linear function of token identity, 0 = none of it is. Scale-free, so it compares
    the inputs of Q, K, V under any router or coefficient on one basis. Raises ValueError on mismatched shapes."""
    if h.shape[:-1] != x0.shape[:-1] or h.dim() != 3:
        raise ValueError(f"h and x0 must be (B, T, D) over the same tokens, got {tuple(h.shape)} and {tuple(x0.shape)}")
    H = h.reshape(-1, h.size(-1)).double()
    X = torch.cat([x0.reshape(-1, x0.size(-1)).double(), torch.ones(H.size(0), 1, dtype=torch.float64)], 1)
    coef = torch.linalg.lstsq(X, H).solution
    resid = H - X @ coef
    total = (H - H.mean(0)).pow(2).sum()
    return float(1 - resid.pow(2).sum() / total) if total > 0 else float("nan")


def sink_mass(pattern: Float[Tensor, "B H T T"]) -> float:
    """Mean attention weight that queries at positions 1..T-1 put on position 0 (the attention sink)."""
    _check_pattern(pattern)
    return float(pattern[:, :, 1:, 0].mean())


def sink_value_norm(v: Float[Tensor, "B H T Dh"]) -> float:
    """Norm of the values at position 0 divided by the mean norm at the other positions (value-state drain:
    a sink that receives much attention but writes little has a ratio well below 1)."""
    if v.dim() != 4:
        raise ValueError(f"v must be (B, H, T, Dh), got shape {tuple(v.shape)}")
    norms = v.norm(dim=-1)                                    # (B, H, T)
    return float(norms[..., 0].mean() / norms[..., 1:].mean())


def oversmoothing(h: Float[Tensor, "B T D"]) -> float:
    """Mean off-diagonal cosine similarity between the token states of a sequence, averaged over the batch.
    1 = every token has the same direction (fully over-smoothed). Raises ValueError unless (B, T, D) with T >= 2."""
    if h.dim() != 3 or h.size(1) < 2:
        raise ValueError(f"h must be (B, T, D) with T >= 2, got shape {tuple(h.shape)}")
    u = F.normalize(h, dim=-1)
    sim = u @ u.transpose(1, 2)                               # (B, T, T)
    T = h.size(1)
    off = sim.sum((1, 2)) - sim.diagonal(dim1=1, dim2=2).sum(-1)
    return float((off / (T * (T - 1))).mean())


def coefficient_readout(model: TinyGPT) -> dict[str, float | list]:
    """Every learnable coefficient's current value (scalars as floats, vectors as lists), by parameter name
    (:meth:`TinyGPT.coefficients`)."""
    return {n: (p.item() if p.ndim == 0 else p.detach().tolist()) for n, p in model.coefficients().items()}


def _batches(batches: Iterable) -> list[tuple[Tensor, Tensor, Tensor | None]]:
    out = []
    for b in batches:
        x, y, *rest = b
        out.append((x, y, rest[0] if rest else None))
    if not out:
        raise ValueError("batches is empty")
    return out


@torch.no_grad()
def mean_loss(model: TinyGPT, batches, hooks_per_batch: list[dict] | None = None) -> float:
    """Mean cross-entropy (nats) over (x, y[, mask]) batches, batch i patched by ``hooks_per_batch[i]`` if given."""
    bl, total, count, per = _batches(batches), 0.0, 0, hooks_per_batch
    if per is not None and (not isinstance(per, (list, tuple)) or len(per) != len(bl)):
        raise ValueError(f"mean_loss: hooks_per_batch must be a list of one hooks dict per batch ({len(bl)}), got "
                         f"{type(per).__name__}" + (f" of length {len(per)}" if hasattr(per, "__len__") else ""))
    for (x, y, mask), patch in zip(bl, [None] * len(bl) if per is None else per):
        logits = model(x, hooks=patch).logits
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none")
        if mask is not None:
            loss = loss[mask.flatten()]
        total += loss.sum().item()
        count += loss.numel()
    return total / count


@torch.no_grad()
def layer_metrics(model: TinyGPT, batches) -> dict[str, list[float]]:
    """Per layer, averaged over the batches: attention entropy, sink mass, sink value-norm ratio, over-smoothing of
    the block's input residual stream (``resid`` has L + 1 entries: the final state last), and the x0-R² of the
    inputs of Q, K and V (``x0_r2_q``, ``x0_r2_k``, ``x0_r2_v``: :func:`x0_r2` against the token's x0 =
    RMSNorm(embedding), whatever the model's own x0 source). For a synthetic task (batches with a mask) also
    ``answer_acc_by_query`` and ``answer_loss_by_query``: accuracy and loss (nats) of the 1st, 2nd, ... scored
    position of each sequence (one entry per query, not per layer)."""
    sums: dict[str, list[float]] = {}
    bl = _batches(batches)
    for x, y, mask in bl:
        tr = model(x, trace=True).trace
        token_x0 = F.rms_norm(tr["embed"], (tr["embed"].size(-1),), eps=1e-6)
        rows = {
            "entropy": [float(attention_entropy(p).mean()) for p in tr.layers("attn.pattern")],
            "sink_mass": [sink_mass(p) for p in tr.layers("attn.pattern")],
            "sink_value_norm": [sink_value_norm(v) for v in tr.layers("attn.v_mix")],
            "oversmoothing": [oversmoothing(h) for h in tr.stack("resid")],
            # NaN where a layer projects no such input (K = V has no V input; a KV-sharing layer neither K nor V)
            **{f"x0_r2_{s}": [x0_r2(tr[n], token_x0) if n in tr.tensors else math.nan
                              for n in (f"blocks.{l}.attn.{s}_in" for l in range(tr.n_layers))] for s in "qkv"},
        }
        if mask is not None:
            rows.update(_per_query(model(x).logits, y, mask))
        for k, vals in rows.items():
            acc = sums.setdefault(k, [0.0] * len(vals))
            for i, v in enumerate(vals):
                acc[i] += v / len(bl)
    return sums


def _per_query(logits: Tensor, y: Tensor, mask: Tensor) -> dict[str, list[float]]:
    """Accuracy and loss of the q-th scored position in every row (rows must have equally many scored positions)."""
    n_q = int(mask[0].sum())
    if not bool((mask.sum(1) == n_q).all()):
        raise ValueError("every sequence must have the same number of scored positions")
    lg = logits[mask].view(mask.size(0), n_q, -1)
    tg = y[mask].view(mask.size(0), n_q)
    loss = F.cross_entropy(lg.flatten(0, 1), tg.flatten(), reduction="none").view_as(tg)
    return {"answer_acc_by_query": (lg.argmax(-1) == tg).double().mean(0).tolist(),
            "answer_loss_by_query": loss.mean(0).tolist()}


@torch.no_grad()
def substitution_ablation(model: TinyGPT, batches, layers: Iterable[int] | None = None) -> dict[str, list[float]]:
    """Context-free substitution ablation: for each layer, replace the input of Q, of K or of V (one at a time)
    by x0 = RMSNorm(token embedding) and report the change in mean loss (nats, ablated − clean).

    A path that only needs token identity tolerates the swap (change near 0); a path that needs context does not.
    Returns ``{"clean": [loss], "layers": [...], "q": [Δ per layer], "k": [...], "v": [...]}``.
    Layers without their own W_V (SVFormer, bank of values, K = V) get NaN for v, KV-sharing layers also for k.
    """
    bl = _batches(batches)
    layers = list(range(model.cfg.n_layers)) if layers is None else list(layers)
    clean = mean_loss(model, bl)
    # one trace per batch: no patch changes x0 (each patched input lies downstream), so the 3·L passes share it
    x0s = [model(x, trace=True).trace["x0"] for x, _, _ in bl]
    out: dict[str, list[float]] = {"clean": [clean], "layers": layers, "q": [], "k": [], "v": []}
    for l in layers:
        for s in ("q", "k", "v"):
            if getattr(model.blocks[l].attn, f"{s}_proj") is None:
                out[s].append(float("nan"))
                continue
            name = f"blocks.{l}.attn.{s}_in"
            loss = mean_loss(model, bl, hooks_per_batch=[{name: lambda t, x0=x0: x0} for x0 in x0s])
            out[s].append(loss - clean)
    return out


# ---------------------------------------------------------------------------------------------------------------
# ShortSWA over depth: what a window K lets each read use (chapter 05's window widget shows these numbers).


def window_readout(n_layers: int, window: int, learned: dict[int, torch.Tensor] | None = None) -> dict:
    """The numbers the widget shows for window K: the readable-sources mask, how many sources each read has, and —
    when a trained ShortSWA model with this K exists in ``learned`` (K -> mean weight matrix) — its weights and the
    mean weight its deep reads (last third of the rows, read-out included) put on the *oldest* source in the window.

    Raises:
        ValueError: ``window`` outside 1..n_layers + 1.
    """
    if not 1 <= window <= n_layers + 1:
        raise ValueError(f"window K must be in 1..L+1 = 1..{n_layers + 1}, got {window}")
    mask = depth_window_mask(n_layers, window)
    out = {"K": window, "mask": mask, "n_sources": mask.sum(1).tolist(), "weights": None, "oldest_weight": None}
    if learned and window in learned:
        m = torch.as_tensor(learned[window], dtype=torch.float32)
        rows = range(n_layers + 1 - (n_layers + 1) // 3, n_layers + 1)
        out["weights"] = m
        out["oldest_weight"] = float(sum(m[l, max(0, l - window + 1)] for l in rows) / len(rows))
    return out


@torch.no_grad()
def stream_norms(model: TinyGPT, idx: torch.Tensor) -> list[float]:
    """Mean L2 norm of the residual stream at every depth l = 0..L (0: the embedding, L: the final state)."""
    stack = model(idx, trace=True).trace.stack("resid")             # (L+1, B, T, D)
    return stack.norm(dim=-1).mean(dim=(1, 2)).tolist()
