"""Chapter 06's KV-cache plot and widget: memory per sequence against the context length for the baseline, SVFormer
and the bank of values (cache + tables), with the break-even context marked. The widget is a thin
``ipywidgets.interactive`` over :func:`kv_summary` (a plain function, tested without a browser)."""
from __future__ import annotations

import ipywidgets as W
import matplotlib.pyplot as plt
import numpy as np

from ..lab.kv_cache import bov_saving, kv_bytes_per_token, n_bank_layers


def kv_summary(n_layers: int = 12, d_model: int = 768, context: int = 2048, vocab_size: int = 32768,
               bytes_per_number: int = 2) -> dict:
    """Bytes for one sequence of ``context`` tokens: ``baseline`` and ``svformer`` caches, the bank model's cache
    plus its tables (``bank_total``), the bank's saving over the baseline (the BoV paper's ΔKV, in bytes; negative
    below break-even) and the break-even context (= |V|)."""
    nb = n_bank_layers(n_layers)
    bank_cache = kv_bytes_per_token(n_layers, d_model, "bank", bytes_per_number) * context
    tables = nb * vocab_size * d_model * bytes_per_number
    return {"baseline": kv_bytes_per_token(n_layers, d_model, "baseline", bytes_per_number) * context,
            "svformer": kv_bytes_per_token(n_layers, d_model, "svformer", bytes_per_number) * context,
            "bank_cache": bank_cache, "bank_tables": tables, "bank_total": bank_cache + tables,
            "bank_saving": bov_saving(nb, d_model, context, vocab_size) * bytes_per_number,
            "break_even_context": vocab_size, "n_bank_layers": nb}


def kv_figure(n_layers: int = 12, d_model: int = 768, context: int = 2048, vocab_size: int = 32768,
              bytes_per_number: int = 2):
    """Memory per sequence (MB) against context length, up to twice the larger of ``context`` and |V|."""
    s = kv_summary(n_layers, d_model, context, vocab_size, bytes_per_number)
    Ts = np.linspace(1, 2 * max(context, vocab_size), 200)
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    for name, per_token, extra in (("baseline", s["baseline"] / context, 0),
                                   ("SVFormer", s["svformer"] / context, 0),
                                   ("bank of values (cache + tables)", s["bank_cache"] / context, s["bank_tables"])):
        ax.plot(Ts, (per_token * Ts + extra) / 1e6, label=name)
    ax.axvline(vocab_size, color="grey", ls="--", lw=1)
    ax.axvline(context, color="black", lw=1)
    ax.set_xlabel("context length T (tokens)")
    ax.set_ylabel("MB per sequence")
    ax.set_title(f"L={n_layers}, d={d_model}, |V|={vocab_size}: break-even at T = |V| (dashed)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig, s


def kv_widget(n_layers: int = 12, d_model: int = 768, context: int = 2048, vocab_size: int = 32768,
              bytes_per_number: int = 2):
    """Sliders for L, d, T, |V| and bytes per number; shows :func:`kv_figure` and prints the three memories."""
    def show(n_layers, d_model, context, vocab_size, bytes_per_number):
        fig, s = kv_figure(n_layers, d_model, context, vocab_size, bytes_per_number)
        plt.show()
        print(f"T = {context}: baseline {s['baseline'] / 1e6:.2f} MB, SVFormer {s['svformer'] / 1e6:.2f} MB, "
              f"bank {s['bank_total'] / 1e6:.2f} MB (saving {s['bank_saving'] / 1e6:+.2f} MB)")

    return W.interactive(
        show,
        n_layers=W.IntSlider(value=n_layers, min=3, max=48, step=3, description="layers L"),
        d_model=W.IntSlider(value=d_model, min=64, max=4096, step=64, description="width d"),
        context=W.IntSlider(value=context, min=256, max=131072, step=256, description="context T"),
        vocab_size=W.IntSlider(value=vocab_size, min=256, max=131072, step=256, description="vocab |V|"),
        bytes_per_number=W.Dropdown(options=[("float32", 4), ("bf16", 2)], value=bytes_per_number,
                                    description="bytes/number"))
