"""What the widgets show when a control moves one step (issue 19): the readout states the change from the default,
the current setting is marked on the plot, labels are never cut, and bad input is refused by name.

The sizes of the steps come from the measured sensitivity given in each widget's docstring; these tests check the
promises that do not depend on a trained model (a step of the size sliders doubles a memory, the printed change
equals the difference of the two settings' numbers), on tiny models where one is needed.
"""
from __future__ import annotations

import math

import ipywidgets as W
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from vrs_edu.chapters.ch00_orientation.readout import untrained_stream_norms  # noqa: E402
from vrs_edu.lab.kv_cache import kv_summary  # noqa: E402
from vrs_edu.nn import TinyGPT, TinyGPTConfig  # noqa: E402
from vrs_edu.chapters.ch05_depth_as_sequence import figures as vdepth  # noqa: E402
from vrs_edu.chapters.ch06_what_v_reuse_buys import figures as vkv  # noqa: E402
from vrs_edu.chapters.ch01_two_axes import figures as vres  # noqa: E402
from vrs_edu.chapters.ch02_qk_routes_v_carries import figures as vrout  # noqa: E402
from vrs_edu.chapters.ch00_orientation import figures as v00  # noqa: E402
from vrs_edu.viz.controls import change_from_default, label_style  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _controls(w: W.interactive):
    return [c for c in w.children if isinstance(c, W.ValueWidget)]


# --- the shared readout --------------------------------------------------------------------------------------------

def test_change_from_default_states_the_signed_change_and_the_default():
    assert change_from_default(1.115, 1.106) == "1.115 (+0.009 from the default 1.106)"
    assert change_from_default(0.5, 0.75, ".2f", " nats") == "0.50 nats (-0.25 from the default 0.75)"
    assert change_from_default(1.106, 1.106) == "1.106 (the default)"


# --- chapter 00 ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -0.25])
def test_chapter_00_refuses_a_scale_that_is_not_a_finite_non_negative_number(bad):
    with pytest.raises(ValueError, match="init_scale"):
        v00.stream_norm_text(6, bad)
    with pytest.raises(ValueError, match="init_scale"):
        untrained_stream_norms(6, bad)


def test_chapter_00_readout_gives_the_change_of_one_step_from_the_default():
    w = v00.stream_norm_widget()
    scale = next(c for c in _controls(w) if c.description == "init scale")
    new = scale.value + scale.step
    r0 = untrained_stream_norms(6, 1.0)
    r1 = untrained_stream_norms(6, new)
    expected = (r1[-1] / r1[0]) - (r0[-1] / r0[0])
    text = v00.stream_norm_text(6, new)
    assert f"{expected:+.2f} from the default {r0[-1] / r0[0]:.2f}" in text
    assert abs(expected) >= 0.05, "one step of init scale should move the ratio visibly (measured: about 0.2)"
    assert v00.stream_norm_text(6, 1.0).endswith("(the default)")


def test_chapter_00_figure_draws_this_setting_next_to_the_default():
    fig, norms = v00.stream_norm_figure(8, 1.25)
    labels = [l.get_label() for l in fig.axes[0].get_lines()]
    assert labels == ["default: 6 layers, × 1.00", "this setting: 8 layers, × 1.25"]
    assert list(fig.axes[0].get_lines()[1].get_ydata()) == pytest.approx(norms)


def test_chapter_00_default_curve_stays_visible_under_the_default_setting():
    fig, _ = v00.stream_norm_figure(6, 1.0)                 # the setting is the default: the curves coincide
    default, this = fig.axes[0].get_lines()
    assert list(default.get_ydata()) == pytest.approx(list(this.get_ydata()))
    assert default.get_zorder() < this.get_zorder()        # drawn underneath ...
    assert default.get_markersize() > this.get_markersize()  # ... and larger, so its edge shows around it
    assert default.get_linewidth() > this.get_linewidth() and default.get_linestyle() != this.get_linestyle()
    assert default.get_markerfacecolor() == "none"


# --- chapters 01 and 02, on a tiny model ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    model = TinyGPT(TinyGPTConfig(vocab_size=16, d_model=16, n_layers=3, n_heads=2, block_size=8, seed=0))
    x = torch.randint(16, (2, 8), generator=torch.Generator().manual_seed(1))
    y = torch.roll(x, -1, dims=1)
    return model, x, y


def test_chapter_01_marks_the_trained_probabilities_and_states_the_loss_change(tiny):
    model, x, y = tiny
    fig, r = vres.block_scale_figure(model, x, y, [1.0, 0.75, 1.0], position=4, decode=str, k=5)
    d = vres.scaled_blocks_prediction(model, x, y, [1.0, 1.0, 1.0], 4, 0, 16)
    ax = fig.axes[0]
    ticks = ax.collections[0].get_offsets()[:, 1]                  # the black ticks: the default's probabilities
    default_prob = dict(zip(d["top_ids"], d["top_probs"]))
    assert list(ticks) == pytest.approx([default_prob[i] for i in r["top_ids"]])
    assert f"{r['loss'] - d['loss']:+.3f} from the default {d['loss']:.3f}" in ax.get_title()


def test_chapter_02_marks_this_setting_on_the_loss_curve_and_one_step_moves_it(tiny):
    model, x, y = tiny
    fig0, r0 = vrout.blend_figure(model, x, y, layer=2, weight=0.0)
    fig1, r1 = vrout.blend_figure(model, x, y, layer=2, weight=vrout.W_STEP)
    curve = fig1.axes[1]                                            # left: heatmap, right: the curve
    red = [c for c in curve.collections if len(c.get_facecolor()) and tuple(c.get_facecolor()[0][:3]) == (1.0, 0.0, 0.0)]
    assert len(red) == 1 and tuple(red[0].get_offsets()[0]) == pytest.approx((vrout.W_STEP, r1["loss"]))
    assert f"{r1['loss'] - r0['loss']:+.3f} from the default {r0['loss']:.3f}" in curve.get_title()


def test_chapter_02_default_marker_stays_visible_under_the_default_setting(tiny):
    model, x, y = tiny
    fig, r = vrout.blend_figure(model, x, y, layer=2, weight=0.0)  # the setting is the default: same point
    curve = fig.axes[1]
    red = next(c for c in curve.collections if len(c.get_facecolor()) and tuple(c.get_facecolor()[0][:3]) == (1.0, 0.0, 0.0))
    grey = next(c for c in curve.collections if c.get_label().startswith("default"))
    assert tuple(grey.get_offsets()[0]) == pytest.approx(tuple(red.get_offsets()[0]))
    assert grey.get_sizes()[0] > 2 * red.get_sizes()[0]          # a ring wider than the red dot ...
    assert len(grey.get_facecolor()) == 0 or grey.get_facecolor()[0][3] == 0  # ... and hollow, so both show


def test_chapter_02_heatmaps_label_their_axes_and_colour_scale(tiny):
    model, x, y = tiny
    tr = model(x, trace=True).trace
    fig = vrout.plot_patterns({0: tr["blocks.0.attn.pattern"][0].numpy()}, [str(int(t)) for t in x[0]])
    assert fig.axes[0].get_ylabel() and fig.axes[0].get_xlabel()
    assert fig.axes[-1].get_ylabel() == "attention weight"                    # the shared colorbar
    fig, _ = vrout.blend_figure(model, x, y, layer=1, tokens=[str(int(t)) for t in x[0]])
    assert fig.axes[0].get_xlabel() and fig.axes[0].get_ylabel()


# --- chapter 05 ----------------------------------------------------------------------------------------------------

def test_chapter_05_window_mask_has_no_colorbar_but_the_learned_weights_do():
    learned = {2: torch.full((5, 5), 0.5)}
    fig, _ = vdepth.window_figure(4, 2, learned)
    colorbars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert len(colorbars) == 1                                              # the right panel's, not the mask's
    fig, _ = vdepth.window_figure(4, 3, {})
    assert not [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]


# --- chapter 06 ----------------------------------------------------------------------------------------------------

def test_chapter_06_counts_memory_for_a_batch_with_tables_shared_by_it():
    # L = 3 (1 bank layer), d = 4, T = 2, |V| = 8, B = 2, 1 byte a number, by hand:
    # baseline 2·3·4 = 24 numbers a token × B·T = 4 tokens = 96; bank cache (2·3 − 1)·4 = 20 × 4 = 80, tables 1·8·4 = 32
    s = kv_summary(n_layers=3, d_model=4, context=2, vocab_size=8, bytes_per_number=1, batch=2)
    assert (s["baseline"], s["bank_cache"], s["bank_tables"], s["bank_total"]) == (96, 80, 32, 112)
    assert s["bank_saving"] == 96 - 112
    assert s["break_even_context"] == 4                                      # |V| / B
    at = kv_summary(n_layers=3, d_model=4, context=4, vocab_size=8, bytes_per_number=1, batch=2)
    assert at["bank_saving"] == 0
    with pytest.raises(ValueError, match="batch"):
        kv_summary(batch=0)


def test_chapter_06_readout_says_costs_more_instead_of_a_negative_saving():
    costs = vkv.kv_text(kv_summary(batch=1), 2048)
    saves = vkv.kv_text(kv_summary(batch=32), 2048)
    assert "saving -" not in costs and "costs 188.74 MB more" in costs
    assert "saves 201.33 MB" in saves and "break-even at T = |V|/B = 1024" in saves


def test_chapter_06_one_step_of_a_size_slider_doubles_the_memory_it_scales():
    w = vkv.kv_widget(batch=32)
    c = {x.description: x for x in _controls(w)}
    base = kv_summary(batch=32)
    for name, key, kwarg in (("context T", "baseline", "context"), ("batch B", "baseline", "batch"),
                             ("vocab |V|", "bank_tables", "vocab_size")):
        options = list(c[name].options)
        nxt = options[options.index(c[name].value) + 1]
        moved = kv_summary(**{"batch": 32, kwarg: nxt})
        assert moved[key] == 2 * base[key], name


def test_chapter_06_figure_names_this_setting_and_the_break_even_in_the_legend():
    fig, s = vkv.kv_figure(batch=32)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "this setting: T = 2048" in labels and "break-even T = |V|/B = 1024" in labels


# --- every widget: labels are never cut -------------------------------------------------------------------------

def test_every_cheap_widget_gives_its_labels_the_width_they_need(tiny):
    model, x, y = tiny
    widgets = [v00.stream_norm_widget(), vdepth.window_widget(4, {}), vkv.kv_widget(),
               vres.block_scale_widget(model, x, y, position=2, decode=str),
               vrout.blend_widget(model, x, y, layer=2)]
    for w in widgets:
        for c in _controls(w):
            assert c.style.description_width == label_style()["description_width"], c.description
