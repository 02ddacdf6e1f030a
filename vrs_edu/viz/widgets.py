"""Widgets: thin ipywidgets layers over plain functions (the functions are tested without a browser).

Each ``*_widget()`` returns an ``ipywidgets.interactive``; the notebook displays it in a cell marked
``# NBVAL_IGNORE_OUTPUT`` and shows the function's default-state figure beside it for the static book.
"""
from __future__ import annotations

import ipywidgets as W
import matplotlib.pyplot as plt

from ..lab.explore import untrained_stream_norms
from .plots import plot_stream_norms


def stream_norm_figure(n_layers: int = 6, init_scale: float = 1.0):
    """The figure the chapter-00 widget draws: residual-stream norm across depth of an untrained model."""
    norms = untrained_stream_norms(n_layers=n_layers, init_scale=init_scale)
    fig = plot_stream_norms(norms, title=f"{n_layers} layers, output projections × {init_scale:.2f}")
    return fig, norms


def stream_norm_widget():
    def show(n_layers=6, init_scale=1.0):
        fig, norms = stream_norm_figure(n_layers, init_scale)
        plt.show()
        print(f"final/embedding norm ratio: {norms[-1] / norms[0]:.2f}")

    return W.interactive(show, n_layers=W.IntSlider(value=6, min=1, max=24, step=1, description="layers"),
                         init_scale=W.FloatSlider(value=1.0, min=0.0, max=4.0, step=0.25, description="init scale",
                                                  readout_format=".2f"))
