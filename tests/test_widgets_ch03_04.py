"""Chapter 03 and 04 widgets, without a browser: the readouts compute what the sliders promise (checked against
models built to do the same thing by construction), leave the model as it was, and the widgets have their knobs."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from vrs_edu.chapters.ch04_bank_of_values import readout as bank_readout
from vrs_edu.lab import x0_need
from vrs_edu.chapters.ch03_value_residual import readout as value_residual_readout  # noqa: E402
from vrs_edu.lab.metrics import mean_loss  # noqa: E402
from vrs_edu.nn import TinyGPT, TinyGPTConfig  # noqa: E402
from vrs_edu.chapters.ch04_bank_of_values import figures as vbank  # noqa: E402
from vrs_edu.chapters.ch03_value_residual import figures as vvr  # noqa: E402

CFG = dict(vocab_size=13, d_model=16, n_layers=3, n_heads=2, block_size=8, seed=0)


@pytest.fixture
def batches():
    g = torch.Generator().manual_seed(0)
    seq = torch.randint(13, (2, 4, 9), generator=g)
    yield [(s[:, :-1], s[:, 1:]) for s in seq]
    plt.close("all")


def _perturb(model, seed=1):
    """Trained-looking weights: random, larger than the init, so that every path matters."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.ndim >= 2:
                p.add_(0.3 * torch.randn(p.shape, generator=g))
    return model


def test_lambda_readout_at_0_1_equals_the_same_weights_without_value_residual(batches):
    vr = _perturb(TinyGPT(TinyGPTConfig(**CFG, value_residual="resformer")))
    plain = TinyGPT(TinyGPTConfig(**CFG))
    missing, unexpected = plain.load_state_dict(vr.state_dict(), strict=False)
    assert not missing and all("lambda" in k for k in unexpected)
    r = value_residual_readout.lambda_readout(vr, batches, 0.0, 1.0)          # λ1 = 0: V_1 removed, V_n kept
    assert r["loss"] == pytest.approx(mean_loss(plain, batches), abs=1e-6)
    assert len(r["entropy"]) == 3


def test_lambda_readout_at_the_trained_values_is_the_model_and_restores_it(batches):
    vr = _perturb(TinyGPT(TinyGPTConfig(**CFG, value_residual="learnable")))
    with torch.no_grad():
        vr.blocks[1].value_residual.lambda_1.fill_(0.8)
        vr.blocks[2].value_residual.lambda_1.fill_(0.3)
    before = {k: v.clone() for k, v in vr.state_dict().items()}
    clean = mean_loss(vr, batches)
    r = value_residual_readout.lambda_readout(vr, batches, 1.0, 0.0)
    assert r["loss"] != pytest.approx(clean)
    assert all(torch.equal(before[k], v) for k, v in vr.state_dict().items()), "λ not restored"
    with value_residual_readout.lambdas_set_to(vr, 0.25, 0.75):
        assert vr.blocks[2].value_residual.lambda_1.item() == 0.25
        assert vr.blocks[2].value_residual.lambda_2.item() == 0.75
    assert vr.blocks[2].value_residual.lambda_1.item() == pytest.approx(0.3)


def test_lambda_readout_refuses_a_model_without_value_residual(batches):
    with pytest.raises(ValueError, match="no ResFormer value residual"):
        value_residual_readout.lambda_readout(TinyGPT(TinyGPTConfig(**CFG)), batches, 0.5, 0.5)


def test_lambda_widget_has_two_sliders_and_updates(batches):
    vr = _perturb(TinyGPT(TinyGPTConfig(**CFG, value_residual="resformer")))
    w = vvr.lambda_widget(vr, batches)
    sliders = {c.description: c for c in w.children if hasattr(c, "min")}
    assert set(sliders) == {"λ1 (V_1)", "λ2 (V_n)"}
    # the widget opens away from the trained 0.5/0.5 (V_1 removed), where its figure is not a flat line
    assert (sliders["λ1 (V_1)"].value, sliders["λ2 (V_n)"].value) == vvr.DEFAULT_LAMBDAS == (0.0, 1.0)
    assert all(s.min == 0.0 and s.max == 1.5 for s in sliders.values())
    sliders["λ1 (V_1)"].value = 0.5
    sliders["λ2 (V_n)"].value = 0.75
    assert w.result["loss"] == pytest.approx(value_residual_readout.lambda_readout(vr, batches, 0.5, 0.75)["loss"])


def test_lambda_figure_default_is_not_flat_and_a_slider_step_moves_the_line(batches):
    vr = _perturb(TinyGPT(TinyGPTConfig(**CFG, value_residual="resformer")))
    ys = lambda fig: list(fig.axes[0].get_lines()[1].get_ydata())
    default = ys(vvr.lambda_figure(vr, batches, *vvr.DEFAULT_LAMBDAS)[0])
    assert max(abs(y) for y in default) > 1e-4, "the default figure is a flat line at 0"
    stepped = ys(vvr.lambda_figure(vr, batches, vvr.DEFAULT_LAMBDAS[0] + 0.25, vvr.DEFAULT_LAMBDAS[1])[0])
    assert max(abs(a - b) for a, b in zip(default, stepped)) > 1e-4


def test_recall_panel_keeps_its_no_lookup_line_inside_the_axes():
    runs = [{"history": {"eval_steps": [0, 10, 20, 30], "val_loss": [2.0, 1.0, 0.2, 0.01]}}]
    part = {"runs": {"baseline": runs, "resformer": runs}, "no_lookup_reference": {"loss": 1.9}}
    fig = vvr.plot_loss_curves({"recall": part})
    lo, hi = fig.axes[0].get_ylim()
    assert lo < 1.9 < hi


def test_plot_loss_gains_draws_one_row_per_variant_and_the_papers_line():
    rows = [{"name": "resformer", "mean": -0.007, "ci": (-0.017, 0.003)},
            {"name": "svformer", "mean": -0.014, "ci": (-0.026, -0.003)}]
    fig = vvr.plot_loss_gains(rows, paper=-0.027)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["resformer", "svformer"]
    lo, hi = ax.get_xlim()
    assert lo < -0.027 and hi > 0.003
    with pytest.raises(ValueError, match="rows"):
        vvr.plot_loss_gains([])


def test_plot_loss_gains_draws_each_rows_negligible_band_at_its_declared_smallest_effect():
    rows = [{"name": "resformer", "mean": -0.007, "ci": (-0.017, 0.003), "margin": 0.027},
            {"name": "svformer", "mean": -0.014, "ci": (-0.026, -0.003), "margin": 0.01}]
    ax = vvr.plot_loss_gains(rows).axes[0]
    from matplotlib.collections import PolyCollection
    bands = [c.get_paths()[0].get_extents() for c in ax.collections if isinstance(c, PolyCollection)]
    assert [(round(b.x0, 3), round(b.x1, 3)) for b in bands] == [(-0.027, 0.027), (-0.01, 0.01)]
    lo, hi = ax.get_xlim()
    assert lo < -0.027 and hi > 0.027       # the widest band stays inside the axes
    assert "± its declared smallest effect (inside: negligible)" in ax.get_legend_handles_labels()[1]


def test_lambda_figure_draws_both_settings_with_their_losses(batches):
    vr = _perturb(TinyGPT(TinyGPTConfig(**CFG, value_residual="resformer")))
    fig, now, trained = vvr.lambda_figure(vr, batches, 0.0, 1.0)
    labels = [l.get_label() for l in fig.axes[0].get_lines()]
    assert f"{trained['loss']:.3f}" in labels[0] and f"{now['loss']:.3f}" in labels[1]


def _x0_model(betas=(0.3, -0.4, 1.2)):
    """A 3-layer qkv model (the x0 layer is layer 2) whose x0 layer reads some x0 on every path, with QK-norm as in
    chapter 04's runs."""
    m = _perturb(TinyGPT(TinyGPTConfig(**CFG, x0_mode="qkv", qk_norm=True)))
    with torch.no_grad():
        for s, b in zip("qkv", betas):
            getattr(m.blocks[2].x0, f"beta_{s}").fill_(b)
    return m


def test_beta_readout_factor_equals_setting_the_coefficient_by_hand(batches):
    m = _x0_model()
    r = bank_readout.beta_readout(m, batches, f_v=0.5, f_k=2.0)
    assert r["betas"]["v"] == pytest.approx([0.6]) and r["betas"]["k"] == pytest.approx([-0.8])
    assert r["betas"]["q"] == pytest.approx([0.3]) and r["layers"] == [2]
    assert [getattr(m.blocks[2].x0, f"beta_{s}").item() for s in "qkv"] == pytest.approx([0.3, -0.4, 1.2]), \
        "β not restored"
    # x0 share |β| / (|α| + |β|) with α = 1: v 0.6 / 1.6, k 0.8 / 1.8; the default v 1.2 / 2.2
    assert r["shares"]["v"] == pytest.approx([0.6 / 1.6]) and r["shares"]["k"] == pytest.approx([0.8 / 1.8])
    assert r["trained_shares"]["v"] == pytest.approx([1.2 / 2.2])
    with torch.no_grad():
        m.blocks[2].x0.beta_v.fill_(0.6)
        m.blocks[2].x0.beta_k.fill_(-0.8)
    assert r["loss"] == pytest.approx(mean_loss(m, batches), abs=1e-6)
    assert r["delta"] == pytest.approx(r["loss"] - r["trained_loss"])
    assert r["moved"][0] > 0, "a factor on β_k changes where the x0 layer looks"


def test_beta_readout_at_the_default_is_the_trained_model(batches):
    m = _x0_model()
    r = bank_readout.beta_readout(m, batches)
    assert r["delta"] == 0.0 and r["moved"] == [0.0] and r["shares"] == r["trained_shares"]
    assert r["loss"] == pytest.approx(mean_loss(m, batches), abs=1e-6)
    assert vbank.beta_text(r).splitlines()[0].endswith("(the default)")


def test_a_factor_on_beta_v_leaves_the_x0_layers_own_attention_alone(batches):
    # β_v changes the values, not q or k: the x0 layer's pattern (the last layer here) cannot move
    assert bank_readout.beta_readout(_x0_model(), batches, f_v=4.0)["moved"] == [0.0]


def test_attention_moved_is_the_total_variation_distance_by_hand():
    ref = [[torch.tensor([[[[1.0, 0.0], [0.5, 0.5]]]])]]            # one batch, one x0 layer, (B, H, T, T)
    new = [[torch.tensor([[[[1.0, 0.0], [0.0, 1.0]]]])]]
    # query 0: nothing moved; query 1: ½(|0 − 0.5| + |1 − 0.5|) = 0.5 of its mass; mean over queries 0.25
    assert bank_readout.attention_moved(new, ref) == [0.25]
    assert bank_readout.attention_moved(ref, ref) == [0.0]


def test_beta_sweep_is_zero_at_the_trained_factor_and_shares_grow_with_the_factor(batches):
    sweep = bank_readout.beta_sweep(_x0_model(), batches, factors=(0.5, 1.0, 2.0))
    for s in "qkv":
        assert sweep["delta"][s][1] == 0.0 and sweep["moved"][s][1] == 0.0 and len(sweep["delta"][s]) == 3
        assert sweep["share"][s][0] < sweep["share"][s][1] < sweep["share"][s][2]
    steps = bank_readout.step_changes(sweep)
    assert steps["v"]["share_up"] == pytest.approx(2.4 / 3.4 - 1.2 / 2.2)      # α_v = 1, β_v 1.2 → 2.4
    assert steps["q"]["delta_down"] == pytest.approx(sweep["delta"]["q"][0])


def test_beta_readout_refuses_other_x0_modes(batches):
    with pytest.raises(ValueError, match="x0_mode"):
        bank_readout.beta_readout(TinyGPT(TinyGPTConfig(**CFG, x0_mode="shared")), batches)


def test_beta_widget_has_three_factor_sliders_and_updates(batches):
    m = _x0_model()
    w = vbank.beta_widget(m, batches)
    sliders = {c.description: c for c in w.children if hasattr(c, "min")}
    assert set(sliders) == {"β_q ×", "β_k ×", "β_v ×"}
    assert all(s.value == 1.0 and s.base == 2 and s.step == 1 for s in sliders.values())
    assert [2.0 ** s.min for s in sliders.values()] == [1 / 16] * 3 and {s.max for s in sliders.values()} == {2}
    sliders["β_k ×"].value = 2.0
    assert w.result["delta"] == pytest.approx(bank_readout.beta_readout(m, batches, f_k=2.0)["delta"])


def test_beta_figure_marks_each_paths_setting_on_both_panels(batches):
    m = _x0_model()
    sweep = bank_readout.beta_sweep(m, batches, factors=(0.5, 1.0, 2.0))
    fig, now, _ = vbank.beta_figure(m, batches, f_q=0.5, sweep=sweep)
    for ax, key, scale in zip(fig.axes, ("delta", "moved"), (1.0, 100.0)):
        dots = sorted(float(v) for c in ax.collections for v in c.get_offsets()[0])
        expected = sorted([0.5, scale * sweep[key]["q"][0], 1.0, 0.0, 1.0, 0.0])
        assert dots == pytest.approx(expected), "q's dot at ×1/2 on its line, k's and v's at ×1 (no change)"
    assert f"Δ loss {now['delta']:+.4f} nats" in fig._suptitle.get_text()


def test_readouts_refuse_non_finite_slider_values_naming_the_argument(batches):
    vr = _perturb(TinyGPT(TinyGPTConfig(**CFG, value_residual="resformer")))
    with pytest.raises(ValueError, match="lambda_2 must be a finite number.*got nan"):
        value_residual_readout.lambda_readout(vr, batches, 0.5, float("nan"))
    x0 = _x0_model()
    with pytest.raises(ValueError, match="f_k .*must be a finite number >= 0, got inf"):
        bank_readout.beta_readout(x0, batches, f_k=float("inf"))
    with pytest.raises(ValueError, match="f_q .*got -1.0"):
        bank_readout.beta_readout(x0, batches, f_q=-1.0)
    with pytest.raises(ValueError, match="d_beta_k must be a finite number, got inf"):
        bank_readout.betas_shifted(x0, d_beta_k=float("inf"))
    assert x0.blocks[2].x0.beta_k.item() == pytest.approx(-0.4)   # nothing was changed before the error


def test_x0_removal_cost_equals_setting_that_beta_to_zero_by_hand(batches):
    m = _perturb(TinyGPT(TinyGPTConfig(**CFG, x0_mode="qkv")))
    with torch.no_grad():                       # a "trained" x0 layer: every path reads some x0
        for s, b in zip("qkv", (0.3, -0.4, 1.2)):
            getattr(m.blocks[2].x0, f"beta_{s}").fill_(b)
    trained = mean_loss(m, batches)
    cost = x0_need.x0_removal_cost(m, batches)
    assert [getattr(m.blocks[2].x0, f"beta_{s}").item() for s in "qkv"] == pytest.approx([0.3, -0.4, 1.2])
    with torch.no_grad():
        m.blocks[2].x0.beta_v.fill_(0.0)
    assert cost["v"] == pytest.approx(mean_loss(m, batches) - trained, abs=1e-6)
    assert cost["v"] != 0.0


def test_layer_metrics_plot_draws_the_uniform_causal_reference_on_the_entropy_panel_only():
    from vrs_edu.lab.metrics import uniform_causal_entropy
    metrics = {"entropy": [3.8, 3.9], "sink_mass": [0.05, 0.04], "sink_value_norm": [1.0, 0.9],
               "oversmoothing": [0.1, 0.2, 0.3]}
    part = {"runs": {"baseline": [{"layer_metrics": metrics}, {"layer_metrics": metrics}]}}
    ref = uniform_causal_entropy(64)
    fig = vvr.plot_layer_metrics(part, ("baseline",), entropy_reference=ref)
    flat = [[tuple(l.get_ydata()) for l in ax.get_lines() if l.get_label() == "uniform causal"] for ax in fig.axes]
    assert flat[0] == [(ref, ref)] and flat[1:] == [[], [], []]
    assert not [l for l in vvr.plot_layer_metrics(part, ("baseline",)).axes[0].get_lines()
                if l.get_label() == "uniform causal"]
    plt.close("all")


def test_recall_loss_panel_shows_the_no_lookup_reference_inside_its_limits():
    runs = [{"history": {"eval_steps": [10, 20, 30, 40], "val_loss": [2.0, 1.8, 1.7, 1.6]}} for _ in range(2)]
    result = {"recall": {"runs": {"baseline": runs}, "no_lookup_reference": {"loss": 1.257}}}
    ax = vvr.plot_loss_curves(result, parts=("recall",)).axes[0]
    ref = [l for l in ax.get_lines() if l.get_label() == "no-lookup reference"]
    assert len(ref) == 1 and tuple(ref[0].get_ydata()) == (1.257, 1.257)
    assert ax.get_ylim()[0] < 1.257 < ax.get_ylim()[1]      # the line is visible, not cut off below the curves
    plt.close("all")
