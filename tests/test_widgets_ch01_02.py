"""Chapter 01 and 02 widgets, without a browser: their figures report what the lab functions compute, and the
widgets build with one control per knob."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from vrs_edu.chapters.ch01_two_axes import readout as rs  # noqa: E402
from vrs_edu.chapters.ch02_qk_routes_v_carries import readout as rt  # noqa: E402
from vrs_edu.nn import TinyGPT, TinyGPTConfig  # noqa: E402
from vrs_edu.chapters.ch01_two_axes import figures as vres  # noqa: E402
from vrs_edu.chapters.ch02_qk_routes_v_carries import figures as vrout  # noqa: E402


@pytest.fixture
def setup():
    model = TinyGPT(TinyGPTConfig(vocab_size=13, d_model=16, n_layers=3, n_heads=2, block_size=8)).eval()
    g = torch.Generator().manual_seed(0)
    seq = torch.randint(13, (4, 9), generator=g)
    yield model, seq[:, :-1], seq[:, 1:]
    plt.close("all")


def decode(i):
    return "abcdefghijklm"[i]


def test_block_scale_figure_reports_the_scaled_run(setup):
    model, x, y = setup
    fig, r = vres.block_scale_figure(model, x, y, [0.0, 1.0, 2.0], position=4, decode=decode, k=5)
    expected = rs.scaled_blocks_prediction(model, x, y, [0.0, 1.0, 2.0], position=4, k=5)
    assert r == expected
    assert f"loss {expected['loss']:.3f}" in fig.axes[0].get_title()
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == [decode(i) for i in expected["top_ids"]]


def test_block_scale_widget_has_one_slider_per_block_from_0_to_2(setup):
    model, x, y = setup
    w = vres.block_scale_widget(model, x, y, position=4, decode=decode)
    sliders = w.children[:-1]
    assert [s.description for s in sliders] == ["block 0", "block 1", "block 2"]
    assert all((s.min, s.max, s.value) == (0.0, 2.0, 1.0) for s in sliders)
    assert w.kwargs == {"block_0": 1.0, "block_1": 1.0, "block_2": 1.0}


def test_blend_figure_reports_loss_and_pattern(setup):
    model, x, y = setup
    fig, r = vrout.blend_figure(model, x, y, layer=2, weight=0.5, temperature=2.0, head=1, tokens=list("abcdefgh"))
    expected = rt.blend_and_temperature(model, x, y, 2, 0.5, 2.0, head=1)
    assert r["loss"] == expected["loss"]
    torch.testing.assert_close(r["pattern"], expected["pattern"])
    assert f"loss {expected['loss']:.3f}" in fig.axes[0].get_title()
    assert model.blocks[2].attn.temperature == 1.0


def test_blend_widget_controls(setup):
    model, x, y = setup
    w = vrout.blend_widget(model, x, y, layer=2, head=1)
    assert w.kwargs == {"weight": 0.0, "temperature": 1.0, "head": 1}
    temp = w.children[1]
    assert (temp.min, temp.max, temp.base) == (-2, 2, 2)      # 2**-2 .. 2**2 = 0.25 .. 4
    assert w.children[2].max == 1


def test_static_plots_draw(setup):
    model, x, y = setup
    tr = model(x, trace=True).trace
    norms = tr.stack("resid")[:, 0].norm(dim=-1)
    fig = vres.plot_two_axes(norms, norms / norms.max(), list("abcdefgh"))
    assert len(fig.axes) == 4                                  # two heatmaps and their colour bars
    att = rs.direct_logit_attribution(model, x, 3, 2)
    assert "sum of the bars" in vres.plot_attribution(att, "c", "ab").axes[0].get_title()
    res = rt.frozen_routing(model, [(x, y)])
    fig = vrout.plot_layer_effects(res, ["uniform", "previous layer"])
    assert len(fig.axes[0].patches) == 3 + 2                   # "previous layer" has no bar at layer 0
    fig = vrout.plot_patterns({0: tr["blocks.0.attn.pattern"][0]}, list("abcdefgh"))
    assert len(fig.axes) == 2 + 1                              # two heads and their shared colour bar
    fig = vrout.plot_circuits(rt.qk_circuit(model, 0, 0)[:4, :4], rt.ov_circuit(model, 0, 0)[:4, :4], list("abcd"))
    assert len(fig.axes) == 4 and "row mean removed" in fig.axes[0].get_title()


def test_norm_view_widget_controls(setup):
    model, x, y = setup
    w = vrout.norm_view_widget(model, x, tokens=list("abcdefgh"), layer=2, head=1)
    assert w.kwargs == {"layer": 2, "head": 1, "view": "weight"}
    layer, head, view = w.children[:3]
    assert (layer.min, layer.max, head.min, head.max) == (0, 2, 0, 1)
    assert list(view.options) == ["weight", "norm"]


def test_every_step_of_the_norm_view_widget_draws_another_figure(setup):
    # the harness of tests/test_widget_callbacks.py: every control moved one step, to both ends and back, and every
    # move must reach the callback and draw a figure that differs from the one before it
    from test_widget_callbacks import drive

    model, x, y = setup
    made = drive(vrout.norm_view_widget(model, x, tokens=list("abcdefgh")))
    assert made == {"layer": 4, "head": 4, "read by": 4}     # a step, both ends (or options), back
