"""Chapter 00's figures: the effect (:func:`training_norms_figure`, the stream's norm before and after training) and
the widget, a thin ipywidgets layer over plain functions (the functions are tested without a browser).

:func:`stream_norm_widget` returns an ``ipywidgets.interactive``; the chapter shows the default setting's figure
(:func:`stream_norm_figure`) beside it for the static book. Steps were chosen from the measured sensitivity: one
``init scale`` step of 0.25 moves the final/embedding ratio by about 0.2 (1.45 → 1.65 at 6 layers); one ``layers``
step adds a point to the curve but moves the ratio by about 0.01 — the 1/sqrt(2L) init at work, which the chapter
asks about.
"""
from __future__ import annotations

import ipywidgets as W
import matplotlib.pyplot as plt

from vrs_edu.chapters.ch00_orientation.readout import DEFAULT, stream_norm_readout
from vrs_edu.i18n.language import in_language
from vrs_edu.viz.controls import change_from_default, label_style
from vrs_edu.viz.plots import depth_axis_label, plot_stream_norms, stream_norm_axis_label


def stream_norm_figure(n_layers: int = 6, init_scale: float = 1.0, lang: str | None = None):
    """The figure the chapter-00 widget draws: residual-stream norm across depth of an untrained model at this
    setting (marked, in colour) over the default setting (grey, dashed, hollow markers, drawn underneath so it shows
    where the two coincide); labels in ``lang`` (default: the running edition). Returns ``(figure, norms)``."""
    r = stream_norm_readout(n_layers, init_scale)
    layers = in_language("layers", "층", lang)
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    # The default is drawn underneath, wider, dashed and with large hollow markers, so it stays visible when the
    # setting is the default and the two curves coincide.
    ax.plot(range(len(r["default_norms"])), r["default_norms"], marker="o", markersize=11, markerfacecolor="none",
            markeredgewidth=1.5, color="0.55", lw=3.5, ls="--", zorder=1,
            label=f"{in_language('default', '기본값', lang)}: {DEFAULT['n_layers']} {layers}, "
                  f"× {DEFAULT['init_scale']:.2f}")
    ax.plot(range(len(r["norms"])), r["norms"], marker="o", markersize=5, color="C0", lw=1.5, zorder=2,
            label=f"{in_language('this setting', '현재 설정', lang)}: {n_layers} {layers}, × {init_scale:.2f}")
    ax.set_xlabel(depth_axis_label(lang))
    ax.set_ylabel(stream_norm_axis_label(lang))
    ax.set_title(in_language("untrained model: final / embedding", "학습 전 모델: 최종 / 임베딩", lang)
                 + f" = {r['ratio']:.2f}")
    ax.legend()
    fig.tight_layout()
    return fig, r["norms"]


def training_norms_figure(before: list[float], after: list[float], steps: int, lang: str | None = None):
    """The chapter's effect: the stream's mean norm at every depth l = 0..L, untrained (``before``) and after
    ``steps`` of training (``after``), on a log axis; labels in ``lang`` (default: the running edition)."""
    return plot_stream_norms({in_language("untrained", "학습 전", lang): before,
                              in_language(f"after {steps} steps", f"{steps}스텝 학습 후", lang): after},
                             title=in_language("residual stream norm along depth", "깊이에 따른 잔차 스트림 노름", lang),
                             log=True, lang=lang)


def stream_norm_text(n_layers: int = 6, init_scale: float = 1.0, lang: str | None = None) -> str:
    """The line the widget prints: the ratio and its change from the default, in ``lang`` (default: the running
    edition)."""
    r = stream_norm_readout(n_layers, init_scale)
    change = change_from_default(r["ratio"], r["default_ratio"], ".2f", lang=lang)
    return in_language("final/embedding norm ratio: ", "최종/임베딩 노름 비율: ", lang) + change


def stream_norm_widget():
    """Sliders for the number of layers (1–24, step 1) and the output-projection scale (0–4, step 0.25)."""
    def show(n_layers=6, init_scale=1.0):
        stream_norm_figure(n_layers, init_scale)
        plt.show()
        print(stream_norm_text(n_layers, init_scale))

    layers = W.IntSlider(value=6, min=1, max=24, step=1, description=in_language("layers", "층 수"),
                         style=label_style())
    scale = W.FloatSlider(value=1.0, min=0.0, max=4.0, step=0.25,
                          description=in_language("init scale", "초기 스케일"), readout_format=".2f",
                          style=label_style())
    return W.interactive(show, n_layers=layers, init_scale=scale)
