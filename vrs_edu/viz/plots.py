"""Plots used across the chapters (matplotlib + seaborn). Each takes numbers and returns the Figure."""
from __future__ import annotations

import matplotlib.pyplot as plt


def plot_stream_norms(norms: dict[str, list[float]] | list[float], ax=None, title: str | None = None):
    """Norm of the residual stream against depth l = 0..L; ``norms`` may map a label to one curve each."""
    curves = norms if isinstance(norms, dict) else {"": norms}
    if ax is None:
        fig, ax = plt.subplots()
    for label, ys in curves.items():
        ax.plot(range(len(ys)), ys, marker="o", label=label or None)
    ax.set_xlabel("depth l (0 = embedding)")
    ax.set_ylabel("mean ‖residual stream‖")
    if title:
        ax.set_title(title)
    if any(curves):
        ax.legend()
    ax.figure.tight_layout()
    return ax.figure
