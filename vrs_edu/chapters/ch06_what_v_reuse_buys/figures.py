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

from vrs_edu.chapters.ch06_what_v_reuse_buys.prose import NAMES, NAMES_KO, per_token
from vrs_edu.i18n.language import in_language, resolve_language
from vrs_edu.lab.kv_cache import kv_summary
from vrs_edu.viz.controls import label_style
from vrs_edu.viz.prose import say

# Every step of the size sliders doubles the size (or nearly, for d): a step is always visible on the log axis.
CONTEXTS = [2 ** e for e in range(8, 18)]            # 256 .. 131072 tokens
VOCABS = [2 ** e for e in range(8, 19)]              # 256 .. 262144 tokens
WIDTHS = [64, 128, 256, 512, 768, 1024, 1536, 2048, 3072, 4096]
BATCHES = [2 ** e for e in range(0, 9)]              # 1 .. 256 sequences


def kv_text(s: dict, context: int, lang: str | None = None) -> str:
    """The widget's readout: the three memories, and whether the bank saves or costs memory at this setting; in
    ``lang`` (default: the running edition)."""
    diff = s["bank_saving"] / 1e6
    if resolve_language(lang) == "ko":
        verdict = (f"값 뱅크는 {diff:.2f} MB를 절약합니다" if diff > 0 else
                   f"값 뱅크는 기준선보다 {-diff:.2f} MB가 더 듭니다" if diff < 0 else "값 뱅크는 손익이 같습니다")
        return (f"B = {s['batch']} × T = {context}: 기준선 {s['baseline'] / 1e6:.2f} MB, SVFormer "
                f"{s['svformer'] / 1e6:.2f} MB, 값 뱅크 {s['bank_total'] / 1e6:.2f} MB "
                f"(표 {s['bank_tables'] / 1e6:.2f} MB). {verdict}. 손익분기는 T = |V|/B = "
                f"{s['break_even_context']:g}입니다.")
    verdict = (f"The bank saves {diff:.2f} MB" if diff > 0 else
               f"The bank costs {-diff:.2f} MB more than the baseline" if diff < 0 else "The bank breaks even")
    return (f"B = {s['batch']} × T = {context}: baseline {s['baseline'] / 1e6:.2f} MB, SVFormer "
            f"{s['svformer'] / 1e6:.2f} MB, bank {s['bank_total'] / 1e6:.2f} MB (tables {s['bank_tables'] / 1e6:.2f} MB)"
            f". {verdict}; break-even at T = |V|/B = {s['break_even_context']:g}.")


def _axis_range(break_even: float) -> tuple[float, float]:
    """The context axis of :func:`kv_figure`: every T the slider offers and the break-even, with a margin, so that
    moving T moves its line across a fixed axis."""
    return min(CONTEXTS[0], break_even) / 2, max(CONTEXTS[-1], break_even) * 2


def kv_figure(n_layers: int = 12, d_model: int = 768, context: int = 2048, vocab_size: int = 32768,
              bytes_per_number: int = 2, batch: int = 1, default: dict | None = None, lang: str | None = None):
    """Memory for the batch (MB) against context length on log axes: one curve per variant, a dot on each at this
    T, this T (solid) and the break-even T = |V|/B (dashed) in the legend. ``default``: the widget's default
    setting (kv_summary's keyword arguments), drawn as thin grey curves, so that a move of any slider shows as a
    move against them. Labels in ``lang`` (default: the running edition). Returns ``(figure, kv_summary)``."""
    s = kv_summary(n_layers, d_model, context, vocab_size, bytes_per_number, batch)
    be = s["break_even_context"]
    lo, hi = _axis_range(be)
    Ts = np.geomspace(lo, hi, 200)
    fig, ax = plt.subplots(figsize=(8.4, 4.0))
    if default is not None:
        d = kv_summary(**default)
        for per_token, extra in _curves(d, default["context"]):
            ax.plot(Ts, (per_token * d["batch"] * Ts + extra) / 1e6, color="0.75", lw=1, zorder=1)
        ax.plot([], [], color="0.75", lw=1, label=in_language("default setting", "기본 설정", lang))
    colours = ("tab:blue", "tab:orange", "tab:green")
    names = (in_language("baseline", "기준선", lang), "SVFormer",
             in_language("bank (cache + tables)", "값 뱅크 (캐시 + 표)", lang))
    for (per_token, extra), name, c in zip(_curves(s, context), names, colours):
        ax.plot(Ts, (per_token * batch * Ts + extra) / 1e6, color=c, lw=2, label=name)
        ax.plot([context], [(per_token * batch * context + extra) / 1e6], "o", color=c, ms=7)
    ax.axvline(be, color="grey", ls="--", lw=1,
               label=in_language("break-even", "손익분기", lang) + f" T = |V|/B = {be:g}")
    ax.axvline(context, color="black", lw=1.2,
               label=in_language("this setting", "현재 설정", lang) + f": T = {context}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel(in_language("context length T (tokens per sequence)", "문맥 길이 T (시퀀스당 토큰)", lang))
    ax.set_ylabel(in_language(f"MB, batch of B = {batch}", f"MB, 배치 B = {batch}", lang))
    ax.set_title(f"L={n_layers}, d={d_model}, |V|={vocab_size}, {bytes_per_number} "
                 + in_language("bytes/number", "바이트/수", lang))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    return fig, s


def _curves(s: dict, context: int) -> list[tuple[float, float]]:
    """(bytes per token, fixed bytes) of the baseline, SVFormer and the bank, from a kv_summary at ``context``."""
    tokens = s["batch"] * context
    return [(s["baseline"] / tokens, 0), (s["svformer"] / tokens, 0), (s["bank_cache"] / tokens, s["bank_tables"])]


def kv_widget(n_layers: int = 12, d_model: int = 768, context: int = 2048, vocab_size: int = 32768,
              bytes_per_number: int = 2, batch: int = 1):
    """Sliders for L, d, T, |V|, the batch B and bytes per number; shows :func:`kv_figure` (with the starting
    setting in grey) and :func:`kv_text` as prose. T, |V| and B move in powers of two (a step doubles the caches or the tables: 2× on the log
    axes), d through common widths, L in steps of 3 (one more bank layer a step)."""
    default = dict(n_layers=n_layers, d_model=d_model, context=context, vocab_size=vocab_size,
                   bytes_per_number=bytes_per_number, batch=batch)

    def show(n_layers, d_model, context, vocab_size, batch, bytes_per_number):
        fig, s = kv_figure(n_layers, d_model, context, vocab_size, bytes_per_number, batch, default=default)
        plt.show()
        say(kv_text(s, context))

    def choice(options, value, description):
        if value not in options:
            raise ValueError(f"{description} must be one of {options}, got {value}")
        return W.SelectionSlider(options=options, value=value, description=description, continuous_update=False,
                                 style=label_style())

    return W.interactive(
        show,
        n_layers=W.IntSlider(value=n_layers, min=3, max=48, step=3, description=in_language("layers L", "층 수 L"),
                             style=label_style()),
        d_model=choice(WIDTHS, d_model, in_language("width d", "폭 d")),
        context=choice(CONTEXTS, context, in_language("context T", "문맥 T")),
        vocab_size=choice(VOCABS, vocab_size, in_language("vocab |V|", "어휘 |V|")),
        batch=choice(BATCHES, batch, in_language("batch B", "배치 B")),
        bytes_per_number=W.Dropdown(options=[("float32", 4), ("bf16", 2)], value=bytes_per_number,
                                    description=in_language("bytes/number", "바이트/수"), style=label_style()))


def plot_cache_per_token(rows: list[dict], lang: str | None = None):
    """The effect of chapter 06: KV-cache bytes per token of each variant, measured on the cache the model builds
    (:func:`~vrs_edu.lab.kv_cache.measure` rows; the same at every T), one bar each, labelled with its
    bytes and its share of the baseline's; labels in ``lang`` (default: the running edition). Returns the figure."""
    ko = resolve_language(lang) == "ko"
    b = per_token(rows)
    names = list(b)
    fig, ax = plt.subplots(figsize=(8.0, 0.55 * len(names) + 1.4))
    colours = {"baseline": "tab:blue", "svformer": "tab:orange", "bank": "tab:green",
               "depth_attention": "tab:purple"}
    y = np.arange(len(names))[::-1]
    ax.barh(y, [b[n] for n in names], color=[colours.get(n, "grey") for n in names], height=0.6)
    for yi, n in zip(y, names):
        ax.text(b[n] * 1.01, yi, f"{b[n]:,.0f} B ({b[n] / b['baseline']:.0%})", va="center")
    ax.set_yticks(y, [(NAMES_KO if ko else NAMES).get(n, n) for n in names])
    ax.set_xlim(0, b["baseline"] * 1.45)
    ax.set_xlabel("토큰당 KV 캐시 바이트 (float32, 시퀀스 하나)" if ko else
                  "KV-cache bytes per token (float32, one sequence)")
    L, D = rows[0]["n_layers"], rows[0]["d_model"]
    ax.set_title(f"디코더가 토큰마다 유지하는 것: L = {L}, d = {D}" if ko else
                 f"What a decoder keeps per token: L = {L}, d = {D}")
    fig.tight_layout()
    return fig


def plot_break_even(savings: dict[int, int], formula: dict[int, int], vocab_size: int, lang: str | None = None):
    """The bank's saving ΔKV (KB) against the context T: measured (dots, ``{T: bytes}``) and the paper's formula
    (line, ``{T: bytes}``), with the break-even T = |V| dashed, inside the axes; labels in ``lang`` (default: the
    running edition). Returns the figure."""
    Ts = sorted(savings)
    fig, ax = plt.subplots(figsize=(7.2, 3.4))
    ax.plot(Ts, [formula[T] / 1024 for T in Ts], color="tab:green", lw=2,
            label=in_language("formula", "공식", lang) + " (L/3)·d·(T − |V|)")
    ax.plot(Ts, [savings[T] / 1024 for T in Ts], "o", color="black", ms=7, label=in_language("measured", "측정", lang))
    ax.axhline(0, color="grey", lw=0.8)
    ax.axvline(vocab_size, color="grey", ls="--", lw=1,
               label=in_language("break-even", "손익분기", lang) + f" T = |V| = {vocab_size}")
    ax.set_xlim(0, max(Ts) * 1.05)
    ax.set_xlabel(in_language("context length T (tokens, one sequence)", "문맥 길이 T (토큰, 시퀀스 하나)", lang))
    ax.set_ylabel(in_language("bank saving ΔKV (KB)", "값 뱅크의 절약 ΔKV (KB)", lang))
    ax.legend(loc="upper left")
    fig.tight_layout()
    return fig
