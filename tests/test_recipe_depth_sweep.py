"""The depth sweep and the recall recipes' new parts (issue 27): the trend of the gain with depth computed by hand,
the held-out learning-rate rules (recall's, and the depth sweep's per depth, issue 34), the depth sweep's
precondition that the tuned baseline does not get worse with depth, the rate sweep's second file joined to the
first, and one quick run of each."""
import json
import math
from dataclasses import replace
from functools import partial

import pytest

from vrs_edu.lab.analysis import VERDICTS
from vrs_edu.lab.experiments import run_recipe
from vrs_edu.lab.options import RunOptions
from vrs_edu.recipes import RECIPES
from vrs_edu.chapters.ch03_value_residual import depth_sweep as ds
from vrs_edu.chapters.ch03_value_residual import recall as rc


def _run(seed, loss, *, entropy=4.0, lam=None, r2=0.8, L=4):
    coefs = {} if lam is None else {f"blocks.{l}.value_residual.lambda_1": [0.5, lam[l - 1]] for l in range(1, L)}
    return {"seed": seed, "final_val_loss": loss,
            "history": {"eval_steps": [100, 200], "steps": list(range(200)), "coefficients": coefs},
            "coefficients": {k: v[-1] for k, v in coefs.items()},
            "layer_metrics": {"entropy": [entropy] * L, **{f"x0_r2_{s}": [r2] * L for s in "qkv"}}}


def _sweep_result(gain_per_doubling=-0.01):
    """Depths 4, 8, 16: learnable − baseline = gain_per_doubling · log2(L / 4) + 0.001 · seed, so the per-seed slope
    against log2(L) is exactly gain_per_doubling for every seed (sd 0: the trend test says it cannot decide)."""
    runs, configs = {}, {}
    for L in (4, 8, 16):
        runs[f"baseline_L{L}"] = [_run(s, 5.0, entropy=4.0 + 0.01 * s, L=L) for s in range(3)]
        runs[f"learnable_L{L}"] = [_run(s, 5.0 + gain_per_doubling * math.log2(L / 4) + 0.001 * s,
                                        lam=[0.5 + 0.01 * l for l in range(1, L)], L=L) for s in range(3)]
        for v in ("baseline", "learnable"):
            configs[f"{v}_L{L}"] = {"model": {"block_size": 64}, "train": {"steps": 200, "batch_size": 32}}
    return {"corpus": {"runs": runs, "configs": configs, "corpus_tokens": {"train": 10 ** 6}}}


def test_the_gain_trend_is_the_per_seed_slope_against_log2_depth():
    part = _sweep_result()["corpus"]
    assert ds.depths_in(part) == [4, 8, 16]
    # gains: L4 0 + 0.001 s, L8 -0.01 + 0.001 s, L16 -0.02 + 0.001 s → slope against log2 L = (2, 3, 4): -0.01
    assert ds.gain_trend(part) == pytest.approx([-0.01] * 3)
    # the uniform-causal entropy at T = 64 is 3.7539: a baseline at 4.0 (+ 0.01 per seed) nats sits 0.2461 (+ 0.01)
    # above it (not concentrated)
    assert ds.concentration(part)[8] == pytest.approx([0.2461, 0.2561, 0.2661], abs=1e-4)
    assert ds.deep_x0_r2_by_depth(part)[16] == pytest.approx([0.8] * 3)
    rows = {r.test.name: r for r in ds.verdicts(_sweep_result())}
    assert rows["gain_grows_with_depth"].verdict == "undecided" and "zero variance" in rows["gain_grows_with_depth"].reason
    assert rows["baseline_concentrated_L8"].verdict == "contradicted"
    assert {t.name for t in ds.tests([4, 8, 16])} == set(rows)


def _rising_result(baseline_per_doubling, gain_per_doubling):
    """Depths 4, 8, 16, seeds 0-2: baseline = 5.0 + baseline_per_doubling · log2(L / 4) + 0.001 · seed; learnable −
    baseline = (gain_per_doubling + 0.001 · seed) · log2(L / 4). Per-seed slopes against log2(L): the baseline's is
    baseline_per_doubling for every seed; the gain's gain_per_doubling + 0.001 · seed (sd 0.001)."""
    result = _sweep_result()
    runs = result["corpus"]["runs"]
    for L in (4, 8, 16):
        d = math.log2(L / 4)
        for s in range(3):
            runs[f"baseline_L{L}"][s]["final_val_loss"] = base = 5.0 + baseline_per_doubling * d + 0.001 * s
            runs[f"learnable_L{L}"][s]["final_val_loss"] = base + (gain_per_doubling + 0.001 * s) * d
    return result


def test_the_baseline_trend_precondition_gates_only_a_reproduced_growing_gain():
    p = ds.BASELINE_NOT_WORSE
    assert (p.direction, p.threshold, p.gates) == ("negative", ds.TREND_EFFECT, "reproduced")
    # the trend claim's smallest effect and the precondition's allowance are the one declared number
    assert {t.name: t for t in ds.TESTS}["gain_grows_with_depth"].effect_for_power == -ds.TREND_EFFECT == -0.005
    flat = _rising_result(0.0, -0.01)
    assert ds.baseline_trend(flat["corpus"]) == pytest.approx([0.0] * 3, abs=1e-12)
    assert ds.facts(flat)["baseline_not_worse_with_depth"] == pytest.approx(0.0, abs=1e-12)
    # gain slopes −0.010, −0.009, −0.008: mean −0.009, sd 0.001, 95 % CI −0.009 ± 4.303 · 0.001 / √3 = [−0.0115,
    # −0.0065]: below 0 and not inside ±0.005, so reproduced where the baseline is flat
    rows = {r.test.name: r for r in ds.verdicts(flat)}
    assert rows["gain_grows_with_depth"].mean == pytest.approx(-0.009)
    assert rows["gain_grows_with_depth"].verdict == "reproduced"
    # the old run's pattern: the baseline 0.012 nats worse per doubling (the stored 4-24-layer run: +0.0117)
    rising = _rising_result(0.012, -0.01)
    assert ds.facts(rising)["baseline_not_worse_with_depth"] == pytest.approx(0.012)
    row = {r.test.name: r for r in ds.verdicts(rising)}["gain_grows_with_depth"]
    assert row.verdict == "out of regime" and row.would_be == "reproduced"
    assert "baseline_not_worse_with_depth" in row.reason
    # the precondition guards only the reproduced reading: a gain that shrinks with depth stays contradicted
    shrinking = {r.test.name: r for r in ds.verdicts(_rising_result(0.012, +0.01))}["gain_grows_with_depth"]
    assert shrinking.verdict == "contradicted"


def _lr_tuning(losses):
    """A tuning part: ``{depth: {lr: [final val loss per tuning seed]}}`` as runs named by ``ds.tuning_name``."""
    return {"runs": {ds.tuning_name(L, lr): [{"seed": 100 + i, "final_val_loss": x} for i, x in enumerate(xs)]
                     for L, by in losses.items() for lr, xs in by.items()}}


def test_the_depth_sweep_rate_is_the_one_with_the_lowest_tuning_loss_at_each_depth():
    tuning = _lr_tuning({4: {1.5e-3: [4.50, 4.52], 3e-3: [4.45, 4.47], 6e-3: [4.48, 4.46]},      # means 4.51 4.46 4.47
                         16: {1.5e-3: [4.40, 4.42], 3e-3: [4.43, 4.43], 6e-3: [4.52, 4.48]},     # 4.41 4.43 4.50
                         8: {1.5e-3: [4.40, 4.40], 3e-3: [4.42, 4.42], 6e-3: [4.30, 4.30]}})
    assert ds.tuning_losses(tuning)[4] == pytest.approx({1.5e-3: 4.51, 3e-3: 4.46, 6e-3: 4.47})
    assert ds.choose_lrs(tuning) == {4: 3e-3, 8: 6e-3, 16: 1.5e-3}
    # a tie: the rate nearest the preset's 3e-3; 1.5e-3 and 6e-3 are equally near, so the smaller
    assert ds.choose_lrs(_lr_tuning({8: {3e-3: [4.4], 6e-3: [4.4]}})) == {8: 3e-3}
    assert ds.choose_lrs(_lr_tuning({8: {1.5e-3: [4.4], 3e-3: [4.5], 6e-3: [4.4]}})) == {8: 1.5e-3}


def test_the_depth_sweep_tuning_seeds_are_held_out():
    assert set(ds.TUNING_SEEDS).isdisjoint(ds.SEEDS) and min(ds.TUNING_SEEDS) >= 100
    with pytest.raises(ValueError, match=r"tuning_seeds must be disjoint from the evaluated seeds \(--seeds\) "
                                         r"\[0, 1, 100\]: \[100\] are in both"):
        ds.check_seeds([0, 1, 100], (100, 101))
    with pytest.raises(ValueError, match=r"tuning_seeds must be >= 100 .*\[4\]"):
        ds.check_seeds([0, 1, 2], (4, 100))
    ds.check_seeds([0, 1, 2, 3], ds.TUNING_SEEDS)        # the declared design passes
    # the recipe checks before it trains anything
    with pytest.raises(ValueError, match="tuning_seeds"):
        run_recipe(RECIPES["depth-sweep"], quick=True, seeds=[100, 1, 2], out_dir="/nonexistent/never-written")


def _tuning(learned_at):
    """A recall-tuning result: per lr, one run per seed whose loss falls from 1.3 to 0.01 at the given step (None:
    never), evaluated every 100 steps of 1,200; reference loss 1.2 (learned = 0.6)."""
    steps = list(range(100, 1201, 100))

    def run(at):
        return {"history": {"eval_steps": steps, "val_loss": [1.3 if at is None or s < at else 0.01 for s in steps]}}
    return {"no_lookup_reference": {"loss": 1.2}, "settings": {"train": {"steps": 1200}},
            "by_lr": {lr: [run(a) for a in ats] for lr, ats in learned_at.items()}}


def test_the_held_out_rate_rule_counts_learned_seeds_then_steps_then_prefers_the_larger_rate():
    # 3e-3 learns in 1 of 3 seeds, 1e-3 in 3 of 3: 1e-3
    assert rc.choose_lr(_tuning({"0.003": [500, None, None], "0.001": [400, 500, 600]})) == 1e-3
    # both learn everywhere; 3e-3 sooner (mean 300 vs 500 steps): 3e-3
    assert rc.choose_lr(_tuning({"0.003": [300, 300, 300], "0.001": [500, 500, 500]})) == 3e-3
    # a full tie: the larger rate, the preset's
    assert rc.choose_lr(_tuning({"0.003": [500] * 3, "0.001": [500] * 3})) == 3e-3
    assert set(rc.TUNING_SEEDS).isdisjoint(rc.SEEDS)


# The depth sweep's whole design (tuning per depth on held-out seeds, both variants at the chosen rate, the
# preconditions and verdicts of the depths run) on its smallest setting: 3 and 4 layers instead of 4, 8 and 16 (3 is
# the fewest with a λ1 slope: two layers after the first), a quarter of the width and batch, the default corpus, on
# 32-token windows (SHORT: the plumbing is the same at any window; the recall task fixes its own length).
SMALL_DEPTHS = (4, 3)
SMALL_SETTINGS = {"d_model": 32, "batch_size": 8}
SMALL = RunOptions(progress=False, settings=SMALL_SETTINGS)
SHORT = RunOptions(progress=False, settings={**SMALL_SETTINGS, "block_size": 32})


@pytest.fixture(scope="module")
def quick_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("quick")
    # The recall recipes on the same quarter width and batch: what these tests specify is the files' shape, the
    # rate sweep's join and the held-out rule, not what the full width learns (42 s -> 13 s idle).
    paths = {name: run_recipe(RECIPES[name], quick=True, seeds=[0, 1, 2] if name != "recall-tuning" else [100, 101, 102],
                              out_dir=out, options=SMALL) for name in ("recall", "recall-rates", "recall-tuning")}
    small = replace(RECIPES["depth-sweep"], fn=partial(ds.depth_sweep, depths=SMALL_DEPTHS))
    paths["depth-sweep"] = run_recipe(small, quick=True, seeds=[0, 1, 2], out_dir=out, options=SHORT)
    return {name: json.loads(p.read_text()) for name, p in paths.items()}


@pytest.mark.slow
def test_quick_runs_record_code_epochs_and_verdicts_of_every_kind(quick_results):
    d = quick_results["depth-sweep"]
    assert d["git"] is None or len(d["git"]["commit"]) == 40
    assert set(d["epochs_read"]["corpus"]) == {f"{v}_L{L}" for v in ("baseline", "learnable") for L in SMALL_DEPTHS}
    assert [m["n_layers"] for m in (d["corpus"]["configs"][f"baseline_L{L}"]["model"] for L in (3, 4))] == [3, 4]
    assert d["settings"]["depths"] == [3, 4]
    # the rate: tuned per depth on the held-out seeds, stored, and used by both variants at that depth
    assert {r["seed"] for runs in d["tuning"]["runs"].values() for r in runs} == set(ds.TUNING_SEEDS)
    assert set(d["tuning"]["runs"]) == {ds.tuning_name(L, lr) for L in SMALL_DEPTHS for lr in ds.TUNING_LRS}
    chosen = d["lr_tuning"]["chosen_lr"]
    assert chosen == {str(L): lr for L, lr in ds.choose_lrs(d["tuning"]).items()}
    assert all(d["corpus"]["configs"][f"{v}_L{L}"]["train"]["lr"] == chosen[str(L)]
               for v in ("baseline", "learnable") for L in SMALL_DEPTHS)
    assert {p["name"] for p in d["preconditions"]} == {p.name for p in ds.preconditions(SMALL_DEPTHS)}
    assert "baseline_not_worse_with_depth" in {p["name"] for p in d["preconditions"]}
    assert {v["name"] for v in d["verdicts"]} == {t.name for t in ds.tests(sorted(SMALL_DEPTHS))}
    assert all(v["verdict"] in VERDICTS for v in d["verdicts"])
    assert d["epochs_read"]["corpus"]["baseline_L4"] < 1            # 12 steps: every batch is new text
    r = quick_results["recall"]
    assert r["epochs_read"] == {"recall": {v: None for v in rc.VARIANTS}}     # a synthetic task has no epochs
    assert all("x0_removal_cost" in x for x in r["recall"]["runs"]["qkv"])
    assert all("x0_pressure" in x for x in r["recall"]["runs"]["baseline"])


def test_the_depth_sweep_needs_two_depths_a_value_residual_can_use():
    for bad in ((4,), (4, 4), (4, 2)):
        with pytest.raises(ValueError, match=r"depths must be at least two distinct numbers of layers >= 3, got"):
            ds.depth_sweep(True, [0, 1, 2], depths=bad)


@pytest.mark.slow
def test_the_recall_rate_sweep_joins_its_second_file_and_counts_only_with_three_arms(quick_results):
    r, rates = quick_results["recall"], quick_results["recall-rates"]
    alone = {v.test.name: v for v in rc.verdicts(r)}
    joined = {v.test.name: v for v in rc.verdicts(r, rates)}
    assert [a for a, _ in joined["recall_additive_criterion"].arms] == ["×1", "×0.25", "×4"]
    assert [a for a, _ in alone["recall_additive_criterion"].arms] == ["×1"]
    assert alone["recall_additive_criterion"].verdict not in ("reproduced", "contradicted")
    lrs = {x["name"]: x["lr"] for x in rates["recall"]["runs"]["qkv_lr4"][0]["optimizer"]}
    base = {x["name"]: x["lr"] for x in r["recall"]["runs"]["qkv"][0]["optimizer"]}
    assert lrs["x0_beta_gamma"] == pytest.approx(4 * base["x0_beta_gamma"])
    bad = {**rates, "task_settings": {**rates["task_settings"], "n_pairs": 3}}
    with pytest.raises(ValueError, match="another task"):
        rc.verdicts(r, bad)
    t = quick_results["recall-tuning"]
    assert t["chosen_lr"] in rc.TUNING_LRS and sorted(t["by_lr"]) == sorted(f"{lr:g}" for lr in rc.TUNING_LRS)
    with pytest.raises(ValueError, match="disjoint"):
        run_recipe(RECIPES["recall-tuning"], quick=True, seeds=[0, 1, 2])


def test_the_depth_figure_draws_each_depth_s_mean_gain_concentration_and_lambda_slope():
    import matplotlib
    matplotlib.use("Agg")
    from vrs_edu.chapters.ch03_value_residual.figures import plot_depth_sweep

    part = _sweep_result()["corpus"]
    fig = plot_depth_sweep(part)
    gain, conc, lam = fig.axes
    means = [line for line in gain.lines if line.get_color() == "C1"][0]
    assert list(means.get_xdata()) == [4, 8, 16]
    # the gains of the hand-made sweep: 0.001 s, -0.01 + 0.001 s, -0.02 + 0.001 s over seeds 0-2: means +0.001 ...
    assert list(means.get_ydata()) == pytest.approx([0.001, -0.009, -0.019])
    conc_means = [line for line in conc.lines if line.get_color() == "C1"][0]
    assert list(conc_means.get_ydata()) == pytest.approx([0.2561] * 3, abs=1e-4)
    lam_means = [line for line in lam.lines if line.get_color() == "C1"][0]
    assert list(lam_means.get_ydata()) == pytest.approx([0.01] * 3)      # λ1 = 0.5 + 0.01 · layer
    import matplotlib.pyplot as plt
    plt.close(fig)
