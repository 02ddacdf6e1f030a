"""Figures a learner can read: every text at 12 pt or more at the figure's own size (13.3 px at the course's 80 dpi),
set once by the course's style (vrs_edu.viz.plots.apply_course_style, called by setup_notebook), and never made
smaller by a plotting function. tests/test_browser_layout.py checks the other half in the book: that no figure is
shown more than 10 % smaller than its own size, at 1280 px and on a 390-px phone.

The issue measured titles at ~11 px, legends at ~10 px and chapter 01's character ticks at ~9 px: the plotting
functions passed fontsize=9 or 10 and seaborn's notebook context sets ticks and legends at 11 pt."""
from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from vrs_edu.viz.plots import COURSE_RC, FIGURE_DPI, MIN_FONT_PT, small_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PAGE_WIDTH_IN = 10.5       # JupyterLab at 1280 px, file browser open: an 848-px output area (10.6 in at 80 dpi)

pytestmark = pytest.mark.usefixtures("course_style")   # tests/conftest.py


def test_the_style_sets_every_text_size_at_the_minimum_or_above():
    sizes = {k: v for k, v in COURSE_RC.items() if k.endswith("size") and k != "figure.figsize"}
    assert sizes and all(v >= MIN_FONT_PT for v in sizes.values()), sizes
    for key in ("font.size", "xtick.labelsize", "ytick.labelsize", "legend.fontsize", "axes.titlesize"):
        assert matplotlib.rcParams[key] >= MIN_FONT_PT, key
    assert matplotlib.rcParams["figure.dpi"] == FIGURE_DPI and MIN_FONT_PT * FIGURE_DPI / 72 >= 12 / 0.9


def test_setup_notebook_applies_the_style():
    from vrs_edu.course.setup import setup_notebook

    matplotlib.rcParams["xtick.labelsize"] = 8
    setup_notebook(seed=0)
    assert matplotlib.rcParams["xtick.labelsize"] == COURSE_RC["xtick.labelsize"]


def test_the_check_finds_a_small_title_and_passes_the_course_style():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="a line")
    ax.legend()
    ax.set_title("readable")
    assert small_text(fig) == []
    ax.set_title("too small", fontsize=9)
    assert small_text(fig) == ["'too small' 9.0 pt"]


SMALL_SIZE = re.compile(r"\b(?:fontsize|labelsize|title_fontsize|size)\s*=\s*(\d+(?:\.\d+)?|\"(?:x+-)?small\")")


def test_no_plotting_function_asks_for_text_below_the_minimum():
    found = []
    for path in sorted((ROOT / "vrs_edu" / "viz").glob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            for m in SMALL_SIZE.finditer(line):
                value = m.group(1)
                if value.startswith('"') or float(value) < MIN_FONT_PT:
                    found.append(f"{path.name}:{n}: {line.strip()}")
    assert not found, "text below the course's minimum size:\n" + "\n".join(found)


# -------------------------------------------------------------- the figures of chapters 00, 01, 02, 07 and 08, drawn

def _figures():
    from vrs_edu.chapters.ch01_two_axes.readout import Attribution
    from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import Effect
    from vrs_edu.chapters.ch07_real_model import figures as real_model
    from vrs_edu.chapters.ch08_real_decoder import figures as real_decoder
    from vrs_edu.chapters.ch01_two_axes import figures as residual
    from vrs_edu.chapters.ch02_qk_routes_v_carries import figures as routing
    from vrs_edu.viz.plots import plot_stream_norms

    rng = np.random.default_rng(0)
    chars = list("Keys and values are iterated over in insertion order.")
    L, H, T = 6, 4, len(chars)
    effects = {"clean": 2.0, "layers": list(range(L)), "uniform": [Effect(0.1 * l, 0.01, 128) for l in range(L)],
               "previous layer": [None] + [Effect(0.05 * l, 0.01, 128) for l in range(1, L)]}
    table = {s: list(rng.uniform(0, 1, L)) for s in "qkv"} | {"resid": list(rng.uniform(0, 1, L + 1))}
    norms = {"per_layer": {k: [list(rng.uniform(0, 1, 8)) for _ in range(L)]      # (L, 8 sequences) per reading
                           for k in ("weight_share", "norm_share", "mixing", "weight_mixing")},
             "thirds": {"early": [0, 1], "middle": [2, 3], "late": [4, 5]}}
    return {
        "plot_stream_norms": lambda: plot_stream_norms({"untrained": [1, 2, 3], "trained": [1, 3, 5]}, title="t"),
        "plot_two_axes": lambda: residual.plot_two_axes(rng.uniform(0, 9, (L + 1, T)), rng.uniform(0, 1, (L + 1, T)),
                                                        chars),
        "plot_depth_profile": lambda: residual.plot_depth_profile(list(range(7)), [1 - l / 9 for l in range(7)],
                                                                  [3 - l / 3 for l in range(7)]),
        "plot_attribution": lambda: residual.plot_attribution(
            Attribution(["embed"] + [f"{p}{l}" for l in range(L) for p in ("attn", "mlp")],
                        list(rng.normal(size=2 * L + 1)), 3.0, 5, 10), "i", "in insert"),
        "plot_effects": lambda: residual.plot_effects({"direct": [0.5] * L, "total": [1.0] * L, "clean": [2.0]}),
        "plot_patterns": lambda: routing.plot_patterns({0: rng.uniform(size=(H, 16, 16)),
                                                        5: rng.uniform(size=(H, 16, 16))}, chars[:16]),
        "plot_head_writes": lambda: routing.plot_head_writes(rng.uniform(size=(L, H))),
        "plot_layer_effects": lambda: routing.plot_layer_effects(effects, ["uniform", "previous layer"], "t"),
        "plot_circuits": lambda: routing.plot_circuits(rng.normal(size=(20, 20)), rng.normal(size=(20, 20)),
                                                       chars[:20], "layer 0, head 1"),
        "plot_probe_table": lambda: real_model.plot_probe_table(table, title="t"),
        "plot_identity_scores": lambda: real_model.plot_identity_scores(
            ["the", "keys", "of", "a", "dict"], {s: list(rng.uniform(-0.2, 1, 5)) for s in "qkv"}, layer=3),
        "plot_sink_and_mixing": lambda: real_decoder.plot_sink_and_mixing(norms),
    }


@pytest.mark.parametrize("name", list(_figures()))
def test_the_chapters_figures_have_no_text_below_the_minimum_and_fit_the_page(name):
    fig = _figures()[name]()
    assert small_text(fig) == [], f"{name}: text below {MIN_FONT_PT} pt"
    assert fig.get_size_inches()[0] <= PAGE_WIDTH_IN, f"{name}: wider than the book's column"
