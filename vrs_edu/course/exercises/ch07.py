"""Chapter 07 exercises: the sentence embedding (masked mean pooling) and the held-out R² of a probe.

References come from the package: :func:`vrs_edu.nn.bert.sentence_embedding` and
:func:`vrs_edu.lab.probes.r2_score`. ``seed`` picks the random cases (0: the public checks; graders use others).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ...lab.probes import r2_score
from ...nn.bert import sentence_embedding
from ..checks import Mistake, check_function, random_inputs


def _masks(seed: int, B: int, T: int) -> torch.Tensor:
    """(B, T) padding masks: row b has a random length in 1..T, and at least one row is padded."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, T + 1, (B,), generator=g)
    lengths[0] = max(1, T // 2)
    return torch.arange(T)[None, :] < lengths[:, None]


def check_sentence_embedding(fn, *, seed: int = 0, **kw) -> bool:
    """Exercise 07a: ``fn(hidden (B, T, D), mask (B, T) bool) -> (B, D)``: the mean of each sentence's real-token
    states (padding excluded), L2-normalised."""
    shapes = [(3, 6, 8), (2, 9, 16), (4, 5, 4)]
    cases = []
    for i, (B, T, D) in enumerate(shapes):
        (h,) = random_inputs(1000 * seed + i, (B, T, D))
        mask = _masks(1000 * seed + i, B, T)
        h = h + 3.0 * (~mask).unsqueeze(-1)            # padding states differ visibly from real ones
        cases.append((h, mask))

    def with_padding(h, m):
        return F.normalize(h.mean(1), dim=-1)

    def not_normalised(h, m):
        mf = m.unsqueeze(-1).float()
        return (h * mf).sum(1) / mf.sum(1)

    def normalised_tokens(h, m):
        mf = m.unsqueeze(-1).float()
        return (F.normalize(h, dim=-1) * mf).sum(1) / mf.sum(1)

    def divided_by_T(h, m):
        return (h * m.unsqueeze(-1).float()).sum(1) / h.size(1)

    mistakes = [
        Mistake(with_padding, "you averaged over all T positions: padding tokens must not count — multiply by the "
                "mask and divide by the number of real tokens"),
        Mistake(not_normalised, "the mean is right, but all-MiniLM-L6-v2 ends with a Normalize module: divide each "
                "embedding by its L2 norm (F.normalize(..., dim=-1))"),
        Mistake(divided_by_T, "you divided the masked sum by T (padding included) and did not normalise: divide by "
                "the number of real tokens, then L2-normalise"),
        Mistake(normalised_tokens, "you normalised each token before averaging: average the raw states first, then "
                "normalise the mean"),
    ]
    kw.setdefault("stub_hint", "multiply hidden by mask[..., None], sum over T, divide by the number of real tokens "
                  "per sentence, then F.normalize(..., dim=-1)")
    kw.setdefault("graded", False)   # chapter 07 has no assignment: no hidden checks run on this exercise
    return check_function("sentence embedding", fn, sentence_embedding, cases, mistakes, **kw)


def check_held_out_r2(fn, *, seed: int = 0, **kw) -> bool:
    """Exercise 07b: ``fn(y (N, D), y_hat (N, D), baseline (D,)) -> float``: variance-weighted R²,
    ``1 − Σ‖y − ŷ‖² / Σ‖y − baseline‖²`` summed over rows and dimensions."""
    cases = []
    for i, (N, D) in enumerate([(40, 6), (25, 3), (60, 10)]):
        y, noise, base = random_inputs(1000 * seed + i, (N, D), (N, D), (D,))
        scale = torch.linspace(0.2, 3.0, D)              # dimensions of very different variance
        y = y * scale + 0.5
        cases.append((y, y + 0.4 * noise * scale.flip(0), 0.5 + 0.3 * base))

    def per_dim_average(y, yh, b):
        return float((1 - (y - yh).pow(2).sum(0) / (y - b).pow(2).sum(0)).mean())

    def own_mean(y, yh, b):
        return float(1 - (y - yh).pow(2).sum() / (y - y.mean(0)).pow(2).sum())

    def ratio_only(y, yh, b):
        return float((y - yh).pow(2).sum() / (y - b).pow(2).sum())

    def absolute(y, yh, b):
        return float(1 - (y - yh).abs().sum() / (y - b).abs().sum())

    mistakes = [
        Mistake(per_dim_average, "you averaged one R² per dimension: sum the squared errors over *all* rows and "
                "dimensions first (variance-weighted R²), so dimensions that vary more count more"),
        Mistake(own_mean, "you compared with the mean of y itself: use the given baseline (the training mean), the "
                "constant guess a probe could have made without seeing the test data"),
        Mistake(ratio_only, "that is the fraction left unexplained: R² is 1 minus it"),
        Mistake(absolute, "R² uses squared errors, not absolute ones"),
    ]
    kw.setdefault("stub_hint", "1 - ((y - y_hat) ** 2).sum() / ((y - baseline) ** 2).sum(), returned as a Python "
                  "float")
    kw.setdefault("graded", False)
    return check_function("held-out R²", fn, r2_score, cases, mistakes, atol=1e-6, **kw)
