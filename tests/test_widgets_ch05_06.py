"""Chapter 05 and 06 widgets, without a browser: their figures report what the plain functions compute, and the
widgets build with the controls the chapters describe."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from vrs_edu.nn.shortswa import depth_window_mask  # noqa: E402
from vrs_edu.lab.kv_cache import bov_saving, kv_bytes_per_token, kv_summary  # noqa: E402
from vrs_edu.lab.metrics import window_readout  # noqa: E402
from vrs_edu.chapters.ch05_depth_as_sequence import figures as vdepth  # noqa: E402
from vrs_edu.chapters.ch06_what_v_reuse_buys import figures as vkv  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_window_mask_is_the_causal_window():
    m = depth_window_mask(4, 2)
    assert m.tolist() == [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [0, 1, 1, 0, 0], [0, 0, 1, 1, 0], [0, 0, 0, 1, 1]]
    assert torch.equal(depth_window_mask(4, None), torch.ones(5, 5, dtype=torch.bool).tril())
    assert torch.equal(depth_window_mask(4, 1), torch.eye(5, dtype=torch.bool))
    with pytest.raises(ValueError, match="window must be >= 1"):
        depth_window_mask(4, 0)


def test_window_readout_reports_the_learned_weights_of_that_window():
    L = 8
    learned = {2: depth_window_mask(L, 2).float() * 0.5}
    learned[2][0, 0] = 1.0
    r = window_readout(L, 2, learned)
    assert r["n_sources"] == [1] + [2] * 8
    assert r["oldest_weight"] == pytest.approx(0.5)         # every deep read splits 0.5 / 0.5 over its window
    assert window_readout(L, 3, learned)["weights"] is None
    with pytest.raises(ValueError, match="1..L\\+1"):
        window_readout(L, 10)


def test_window_figure_and_widget():
    fig, r = vdepth.window_figure(8, 4, {})
    assert "K = 4" in fig.axes[0].get_title()
    assert r["n_sources"][-1] == 4
    w = vdepth.window_widget(8, {}, window=2)
    slider = w.children[0]
    assert (slider.min, slider.max, slider.value) == (1, 9, 2)


def test_heatmaps_draw_one_panel_per_mixer_and_per_stream():
    m = torch.full((5, 5), float("nan"))
    for l in range(5):
        m[l, : l + 1] = 1.0 / (l + 1)
    fig = vdepth.plot_mixers({"elcbert": m, "attnres": m, "shortswa-full": m})
    assert len([a for a in fig.axes if a.get_title()]) == 3
    fig = vdepth.plot_router_streams({"mudd": {"q": m, "k": m, "v": m}, "dca": {"q": m, "k": m, "v": m}})
    titles = [a.get_title() for a in fig.axes if a.get_title()]
    assert titles == ["mudd: Q input", "mudd: K input", "mudd: V input", "dca: Q input", "dca: K input",
                      "dca: V input"]


@pytest.mark.parametrize("n, shape", [(1, (1, 1)), (3, (1, 3)), (4, (2, 2)), (5, (2, 3)), (6, (2, 3)),
                                      (7, (3, 3))])
def test_mixer_heatmaps_leave_no_empty_panel(n, shape):
    """Chapter 05 draws 4 mixers: a 2 × 2 grid, not 2 × 3 with two empty frames. Every axes left in the figure is
    a heatmap (it holds an image) or a heatmap's colour bar; a grid slot with nothing to draw is removed."""
    m = torch.full((5, 5), float("nan"))
    for l in range(5):
        m[l, : l + 1] = 1.0 / (l + 1)
    assert vdepth.grid_shape(n) == shape
    fig = vdepth.plot_mixers({f"mixer{i}": m for i in range(n)})
    heatmaps = [a for a in fig.axes if a.images]
    colorbars = [a for a in fig.axes if a.get_label() == "<colorbar>"]
    assert len(heatmaps) == n and len(colorbars) == n
    assert len(fig.axes) == 2 * n, "an empty panel is left in the figure"
    rows = {round(a.get_position().y0, 3) for a in heatmaps}
    cols = {round(a.get_position().x0, 3) for a in heatmaps}
    assert (len(rows), len(cols)) == shape
    with pytest.raises(ValueError, match="weights"):
        vdepth.plot_mixers({})


def test_kv_summary_matches_the_formulas():
    s = kv_summary(n_layers=12, d_model=768, context=4096, vocab_size=32768, bytes_per_number=2)
    assert s["baseline"] == kv_bytes_per_token(12, 768, "baseline", 2) * 4096
    assert s["svformer"] == kv_bytes_per_token(12, 768, "svformer", 2) * 4096
    assert s["bank_total"] == kv_bytes_per_token(12, 768, "bank", 2) * 4096 + 4 * 32768 * 768 * 2
    assert s["bank_saving"] == bov_saving(4, 768, 4096, 32768) * 2
    assert s["break_even_context"] == 32768


def test_kv_widget_has_the_sliders_the_chapter_names():
    w = vkv.kv_widget()
    names = [c.description for c in w.children[:-1]]
    assert names == ["layers L", "width d", "context T", "vocab |V|", "batch B", "bytes/number"]
