"""Chapter 02's norm-based view of attention (Kobayashi et al. 2020, arXiv 2004.10102): the readings it shows
(vrs_edu.chapters.ch02_qk_routes_v_carries.readout: attention_views, head_contributions, map_distance,
most_different_head, source_shares), checked by hand and against what a head writes on a small model; its two
figures and its schematic readable on the page; its exercise's checker naming a learner's mistakes on the page's
width. The widget is driven in tests/test_widgets_ch01_02.py."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from vrs_edu.chapters.ch02_qk_routes_v_carries import figures as F  # noqa: E402
from vrs_edu.chapters.ch02_qk_routes_v_carries import readout as R  # noqa: E402
from vrs_edu.course.checks import WIDTH, messages  # noqa: E402
from vrs_edu.course.exercises import ch02  # noqa: E402
from vrs_edu.nn import TinyGPT, TinyGPTConfig  # noqa: E402
from vrs_edu.nn.attribution import norm_map, transformed_values  # noqa: E402
from vrs_edu.viz import schematics as S  # noqa: E402
from vrs_edu.viz.plots import overlapping_text, small_text  # noqa: E402

from test_figure_style import PAGE_WIDTH_IN  # noqa: E402  (the book's column at 1280 px)

pytestmark = pytest.mark.usefixtures("course_style")   # tests/conftest.py


@pytest.fixture
def tiny():
    torch.manual_seed(0)
    model = TinyGPT(TinyGPTConfig(vocab_size=13, d_model=16, n_layers=3, n_heads=2, block_size=8, seed=3)).eval()
    x = torch.randint(13, (2, 8), generator=torch.Generator().manual_seed(1))
    return model, x


# --- the readings -------------------------------------------------------------------------------------------------

def test_a_heavy_weight_on_a_short_vector_loses_its_share_by_hand():
    # one layer, one sequence, one head, two sources; query 1 looks 0.8 at source 0, whose vector is short (norm 0.5),
    # and 0.2 at source 1 (norm 3): by the norms, 0.8 · 0.5 = 0.4 against 0.2 · 3 = 0.6
    weight = torch.tensor([[1.0, 0.0], [0.8, 0.2]]).view(1, 1, 1, 2, 2)
    f_norm = torch.tensor([0.5, 3.0]).view(1, 1, 1, 2)
    views = {"weight": weight, "norm": R.row_shares(weight * f_norm[..., None, :]), "f_norm": f_norm}
    torch.testing.assert_close(views["norm"][0, 0, 0, 1], torch.tensor([0.4, 0.6]))
    assert R.map_distance(weight, views["norm"])[0, 0, 0].item() == pytest.approx(0.5 * 0.8 / 2)   # row 0 agrees
    shares = R.source_shares(views, 0, 0, ["a", "b"])
    b, a = shares                                  # sorted by the size of the change: "b" +0.4, then "a" −0.2
    # "b": only query 1 can see it, which gives it 0.2 of its weight and 0.6 of its norm
    assert (b["token"], b["count"], b["weight"], b["norm"], b["f_norm"], b["f_norm_others"]) == \
        ("b", 1, pytest.approx(0.2), pytest.approx(0.6), 3.0, 0.5)
    # "a": queries 0 and 1, (1 + 0.8) / 2 of their weight and (1 + 0.4) / 2 of their norm
    assert (a["token"], a["weight"], a["norm"]) == ("a", pytest.approx(0.9), pytest.approx(0.7))
    with pytest.raises(ValueError, match=r"source_shares: expected 2 tokens \(one per position\), got 3"):
        R.source_shares(views, 0, 0, ["a", "b", "c"])


def test_map_distance_is_0_for_the_same_map_and_1_for_disjoint_sources():
    eye = torch.eye(3)
    assert R.map_distance(eye, eye).item() == 0.0
    assert R.map_distance(eye, eye.roll(1, dims=-1)).item() == 1.0


def test_most_different_head_is_the_argmax_of_the_distance():
    weight = torch.eye(4).expand(3, 1, 2, 4, 4).clone()          # (L = 3, B = 1, H = 2, T, T)
    norm = weight.clone()
    norm[2, 0, 1] = torch.eye(4).roll(1, dims=-1)                 # layer 2, head 1: no source in common
    norm[1, 0, 0] = 0.5 * (torch.eye(4) + torch.eye(4).roll(1, dims=-1))
    assert R.most_different_head({"weight": weight, "norm": norm}) == (2, 1)


def test_attention_views_are_the_instrument_s_maps_with_rows_of_one(tiny):
    model, x = tiny
    views = R.attention_views(model, x)
    L, H, (B, T) = 3, 2, x.shape
    assert views["weight"].shape == views["norm"].shape == (L, B, H, T, T) and views["f_norm"].shape == (L, B, H, T)
    torch.testing.assert_close(views["norm"].sum(-1), torch.ones(L, B, H, T))
    tr = model(x, trace=True).trace
    attn = model.blocks[1].attn
    f = transformed_values(tr["blocks.1.attn.v_mix"], attn.o_proj.weight, attn.n_heads)
    torch.testing.assert_close(views["norm"][1], R.row_shares(norm_map(tr["blocks.1.attn.pattern"], f)))
    torch.testing.assert_close(views["f_norm"][1], f.norm(dim=-1))


def test_head_contributions_sum_to_the_head_s_write_and_their_norms_are_the_norm_map(tiny):
    model, x = tiny
    with torch.no_grad():
        tr = model(x, trace=True).trace
        for l, block in enumerate(model.blocks):
            pattern, v = tr[f"blocks.{l}.attn.pattern"], tr[f"blocks.{l}.attn.v_mix"]
            writes = R.head_writes(model, tr, l)
            f = transformed_values(v, block.attn.o_proj.weight, block.attn.n_heads)
            for h in range(2):
                c = R.head_contributions(pattern, v, block.attn.o_proj.weight, h)
                assert c.shape == (2, 8, 8, 16)
                torch.testing.assert_close(c.sum(dim=2), writes[:, h], atol=1e-5, rtol=0)
                torch.testing.assert_close(c.norm(dim=-1), norm_map(pattern, f)[:, h], atol=1e-6, rtol=1e-5)


def test_head_contributions_refuses_a_head_or_shapes_that_do_not_fit_by_name(tiny):
    model, x = tiny
    tr = model(x, trace=True).trace
    pattern, v, w_o = tr["blocks.0.attn.pattern"], tr["blocks.0.attn.v_mix"], model.blocks[0].attn.o_proj.weight
    with pytest.raises(ValueError, match=r"head_contributions: expected head in 0\.\.1, got 2"):
        R.head_contributions(pattern, v, w_o, 2)
    with pytest.raises(ValueError, match=r"expected pattern \(B, H, T, T\) and v .* got pattern \(2, 2, 8, 8\) and "
                                         r"v \(2, 2, 7, 8\)"):
        R.head_contributions(pattern, v[:, :, :7], w_o, 0)
    with pytest.raises(ValueError, match=r"transformed_values: expected w_o of shape \(D, 2·8\)"):
        R.head_contributions(pattern, v, w_o[:, :8], 0)


# --- the figures ---------------------------------------------------------------------------------------------------

def test_the_weight_and_norm_figure_draws_two_maps_on_one_scale_readably():
    tokens = list("Keys and values ")
    rng = torch.Generator().manual_seed(0)
    weight, norm = (R.row_shares(torch.rand(16, 16, generator=rng).tril()) for _ in range(2))
    fig = F.plot_weight_vs_norm(weight, norm, tokens, layer=0, head=1)
    heatmaps = [ax for ax in fig.axes if ax.collections]
    assert len(fig.axes) == 3 and len(heatmaps) == 3             # two maps and their one colour bar
    assert [ax.get_title() for ax in fig.axes[:2]] == ["layer 0, head 1: weight α", "layer 0, head 1: norm ‖α f(x)‖"]
    assert [q.get_clim() for q in (fig.axes[0].collections[0], fig.axes[1].collections[0])] == [(0, 1), (0, 1)]
    assert "␣" in [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert small_text(fig) == [] and fig.get_size_inches()[0] <= PAGE_WIDTH_IN
    with pytest.raises(ValueError, match=r"plot_weight_vs_norm: expected weight and norm of shape \(16, 16\) for 16 "
                                         r"tokens, got \(16, 16\) and \(15, 15\)"):
        F.plot_weight_vs_norm(weight, norm[:15, :15], tokens, 0, 1)


def test_the_widget_figure_shows_the_chosen_view_and_the_vector_lengths(tiny):
    model, x = tiny
    views = R.attention_views(model, x)
    tokens = list("abcdefgh")
    for view in ("weight", "norm"):
        fig, r = F.norm_view_figure(views, 2, 1, view, tokens, batch=1)
        torch.testing.assert_close(r["map"], views[view][2, 1, 1])
        torch.testing.assert_close(r["f_norm"], views["f_norm"][2, 1, 1])
        assert r["distance"] == pytest.approx(float(R.map_distance(views["weight"][2, 1, 1], views["norm"][2, 1, 1])))
        assert fig.axes[0].get_title().startswith(f"layer 2, head 1: {view}")
        assert f"differ by {r['distance']:.2f}" in fig._suptitle.get_text()
        assert [p.get_height() for p in fig.axes[1].patches] == pytest.approx(r["f_norm"].tolist())
        assert small_text(fig) == [] and fig.get_size_inches()[0] <= PAGE_WIDTH_IN
    with pytest.raises(ValueError, match="norm_view_figure: expected view 'weight' or 'norm', got 'both'"):
        F.norm_view_figure(views, 0, 0, "both")
    with pytest.raises(ValueError, match=r"expected layer in 0\.\.2 and head in 0\.\.1, got layer 0 and head 2"):
        F.norm_view_figure(views, 0, 2)


def test_the_schematic_multiplies_the_weight_by_the_norm_readably_at_phone_width():
    fig = S.weight_times_norm()
    texts = " | ".join(t.get_text() for t in fig.findobj(Text))
    for label in ("Attention is not only a weight", "weight $\\alpha$", "(QK)", "(V, O)", "moved", "source 1",
                  "source 2", "short vector"):
        assert label in texts, label
    bars = {gid: [p.get_width() for p in fig.axes[0].patches if isinstance(p, Rectangle) and p.get_gid() == gid]
            for gid in ("weight", "norm", "moved")}
    (a1, a2), (n1, n2), (m1, m2) = bars["weight"], bars["norm"], bars["moved"]
    assert a1 > a2 and m1 < m2                                    # the weights and what is moved rank them oppositely
    assert m1 / m2 == pytest.approx((a1 * n1) / (a2 * n2))        # moved = weight × norm, drawn to scale
    assert fig.get_size_inches()[0] <= S.PHONE_WIDTH_IN
    assert small_text(fig) == [] and overlapping_text(fig) == []


# --- the exercise's checker ----------------------------------------------------------------------------------------

def test_a_learner_who_forgets_w_o_is_told_so(capsys):
    def contributions_of_the_values(pattern, v, w_o, head):
        return pattern[:, head].unsqueeze(-1) * v[:, head].unsqueeze(1)

    assert ch02.check_head_contributions(contributions_of_the_values) is False
    assert "multiply v by head h's columns of W_O first" in " ".join(capsys.readouterr().out.split())


def test_every_message_of_the_checker_fits_the_page(capsys):
    def raises(*args):
        raise NotImplementedError

    students = [m.fn for m in ch02.CONTRIBUTION_MISTAKES] + [raises, R.head_contributions]
    printed = []
    for student in students:
        ch02.check_head_contributions(student)
        out = capsys.readouterr().out
        assert messages(out), out
        printed += out.splitlines()
    assert not [line for line in printed if len(line) > WIDTH]
