"""Chapter 06's KV-cache plot and widget: memory for a batch of B sequences against the context length for the
baseline, SVFormer and the bank of values (cache + tables), with this setting and the break-even context marked. The
widget is a thin ``ipywidgets.interactive`` over :func:`~vrs_edu.lab.kv_cache.kv_summary` (a plain function, tested
without a browser).

Memory is counted for one batch of B sequences of T tokens each: the caches grow with B·T, while the bank's tables
(|V|·d numbers per bank layer) are held once, shared by every sequence of the batch. The bank therefore saves
memory once B·T > |V|: the break-even context is T = |V| / B (the paper's ΔKV = (L/3)·d·(T − |V|) is the case
B = 1).
"""
from __future__ import annotations

import ipywidgets as W
import matplotlib.pyplot as plt
import numpy as np

from ..lab.kv_cache import kv_summary
from .controls import label_style

# Every step of the size sliders doubles the size (or nearly, for d): a step is always visible on the log axis.
CONTEXTS = [2 ** e for e in range(8, 18)]            # 256 .. 131072 tokens
VOCABS = [2 ** e for e in range(8, 19)]              # 256 .. 262144 tokens
WIDTHS = [64, 128, 256, 512, 768, 1024, 1536, 2048, 3072, 4096]
BATCHES = [2 ** e for e in range(0, 9)]              # 1 .. 256 sequences


def kv_text(s: dict, context: int) -> str:
    """The widget's readout: the three memories, and whether the bank saves or costs memory at this setting."""
    diff = s["bank_saving"] / 1e6
    verdict = (f"the bank saves {diff:.2f} MB" if diff > 0 else
               f"the bank costs {-diff:.2f} MB more than the baseline" if diff < 0 else "the bank breaks even")
    return (f"B = {s['batch']} × T = {context}: baseline {s['baseline'] / 1e6:.2f} MB, SVFormer "
            f"{s['svformer'] / 1e6:.2f} MB, bank {s['bank_total'] / 1e6:.2f} MB (tables {s['bank_tables'] / 1e6:.2f} MB)"
            f"\n    {verdict}; break-even at T = |V|/B = {s['break_even_context']:g}")


def kv_figure(n_layers: int = 12, d_model: int = 768, context: int = 2048, vocab_size: int = 32768,
              bytes_per_number: int = 2, batch: int = 1):
    """Memory for the batch (MB) against context length on a log axis, with this T (solid) and the break-even
    T = |V|/B (dashed) in the legend. Returns ``(figure, kv_summary)``."""
    s = kv_summary(n_layers, d_model, context, vocab_size, bytes_per_number, batch)
    be = s["break_even_context"]
    Ts = np.geomspace(max(1.0, min(context, be) / 4), 4 * max(context, be), 200)
    tokens = batch * context
    fig, ax = plt.subplots(figsize=(7.2, 3.8))
    for name, per_token, extra in (("baseline", s["baseline"] / tokens, 0),
                                   ("SVFormer", s["svformer"] / tokens, 0),
                                   ("bank of values (cache + tables)", s["bank_cache"] / tokens, s["bank_tables"])):
        ax.plot(Ts, (per_token * batch * Ts + extra) / 1e6, label=name)
    ax.axvline(be, color="grey", ls="--", lw=1, label=f"break-even T = |V|/B = {be:g}")
    ax.axvline(context, color="black", lw=1.2, label=f"this setting: T = {context}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("context length T (tokens per sequence)")
    ax.set_ylabel(f"MB for a batch of B = {batch}")
    ax.set_title(f"L={n_layers}, d={d_model}, |V|={vocab_size}, {bytes_per_number} bytes/number")
    ax.legend()
    fig.tight_layout()
    return fig, s


def kv_widget(n_layers: int = 12, d_model: int = 768, context: int = 2048, vocab_size: int = 32768,
              bytes_per_number: int = 2, batch: int = 1):
    """Sliders for L, d, T, |V|, the batch B and bytes per number; shows :func:`kv_figure` and prints
    :func:`kv_text`. T, |V| and B move in powers of two (a step doubles the caches or the tables: 2× on the log
    axes), d through common widths, L in steps of 3 (one more bank layer a step)."""
    def show(n_layers, d_model, context, vocab_size, batch, bytes_per_number):
        fig, s = kv_figure(n_layers, d_model, context, vocab_size, bytes_per_number, batch)
        plt.show()
        print(kv_text(s, context))

    def choice(options, value, description):
        if value not in options:
            raise ValueError(f"{description} must be one of {options}, got {value}")
        return W.SelectionSlider(options=options, value=value, description=description, continuous_update=False,
                                 style=label_style())

    return W.interactive(
        show,
        n_layers=W.IntSlider(value=n_layers, min=3, max=48, step=3, description="layers L", style=label_style()),
        d_model=choice(WIDTHS, d_model, "width d"),
        context=choice(CONTEXTS, context, "context T"),
        vocab_size=choice(VOCABS, vocab_size, "vocab |V|"),
        batch=choice(BATCHES, batch, "batch B"),
        bytes_per_number=W.Dropdown(options=[("float32", 4), ("bf16", 2)], value=bytes_per_number,
                                    description="bytes/number", style=label_style()))
