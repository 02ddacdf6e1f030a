"""`vrs-edu reproduce value-residual --quick`, `bank-of-values --quick` and `recall --quick`: the result files have
the schema the chapters read, every number is finite and logged, and the chapters' plots draw from them. (The direction of the
effects is not tested: a quick run is too short to have one, and the full runs report whatever they find.)"""
import json
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from vrs_edu.cli import main  # noqa: E402
from vrs_edu.chapters.ch04_bank_of_values import readout as bank_readout  # noqa: E402
from vrs_edu.lab.analysis import VERDICTS  # noqa: E402
from vrs_edu.lab import x0_need  # noqa: E402
from vrs_edu.lab.experiments import load_results  # noqa: E402
from vrs_edu.chapters.ch04_bank_of_values import recipe as bov  # noqa: E402
from vrs_edu.chapters.ch03_value_residual import recall as rc  # noqa: E402
from vrs_edu.chapters.ch03_value_residual import recipe as vr  # noqa: E402
from vrs_edu.chapters.ch04_bank_of_values import figures as vbank  # noqa: E402
from vrs_edu.chapters.ch03_value_residual import figures as vvr  # noqa: E402

# Most tests here read the three quick files: a minute of training on 2 cores.
pytestmark = pytest.mark.slow
SEEDS = [0, 1]
# The schema does not depend on the width: a quarter of it and of the batch (one process: pytest's workers already
# hold the cores) make the three files in a third of the time.
SMALL = ["--set", "d_model=32", "--set", "batch_size=8"]
# The two corpus recipes also read 32-token windows instead of 64 (nor does the schema depend on the window); the
# recall task fixes its own sequence length.
SHORT = ["--set", "block_size=32"]
CORPUS_RECIPES = ("value-residual", "bank-of-values")


def _flags(name):
    return [*SMALL, *(SHORT if name in CORPUS_RECIPES else [])]


def _run(name, folder):
    assert main(["reproduce", name, "--quick", "--seeds", ",".join(map(str, SEEDS)), "--out", str(folder),
                 "--jobs", "1", *_flags(name)]) == 0
    return load_results(name, quick=True, out_dir=folder)


@pytest.fixture(scope="module")
def vr_result(tmp_path_factory):
    return _run("value-residual", tmp_path_factory.mktemp("vr"))


@pytest.fixture(scope="module")
def bov_result(tmp_path_factory):
    return _run("bank-of-values", tmp_path_factory.mktemp("bov"))


@pytest.fixture(scope="module")
def recall_result(tmp_path_factory):
    return _run("recall", tmp_path_factory.mktemp("recall"))


def _finite(xs):
    return all(isinstance(x, (int, float)) and math.isfinite(x) for x in xs)


def _check_common(result, name, parts, families=("primary",)):
    assert result["recipe"] == name and result["quick"] is True and result["seeds"] == SEEDS
    # the command that remakes it: the flags that change a number, not where or on how many cores it ran
    assert result["command"] == f"vrs-edu reproduce {name} --quick --seeds 0,1 " + " ".join(_flags(name))
    assert result["wall_time_s"] > 0 and result["cpu_time_s"] > 0
    assert {"torch", "vrs_edu", "threads"} <= set(result["environment"])
    for p, vs in parts.items():
        part = result[p]
        assert list(part["runs"]) == list(vs)
        assert set(part["step_seconds"]) == set(vs) and all(s > 0 for s in part["step_seconds"].values())
        for v, runs in part["runs"].items():
            assert [r["seed"] for r in runs] == SEEDS
            n_layers = part["configs"][v]["model"]["n_layers"]
            for r in runs:
                h = r["history"]
                assert len(h["train_loss"]) == vr.QUICK_STEPS and _finite(h["train_loss"])
                assert h["eval_steps"][-1] == vr.QUICK_STEPS and len(h["val_loss"]) == len(h["eval_steps"])
                assert _finite(h["val_loss"]) and _finite(h["val_acc"]) and h["wall_time_s"] > 0
                if "final_eval" in r:   # a corpus run: its final loss reads the whole validation split, once
                    assert r["curve_final_val_loss"] == h["val_loss"][-1] and math.isfinite(r["final_train_loss"])
                    assert r["final_eval"]["val_tokens"] > 0 and math.isfinite(r["final_val_loss"])
                else:
                    assert r["final_val_loss"] == h["val_loss"][-1]
                lm = r["layer_metrics"]
                for metric in ("entropy", "sink_mass", "sink_value_norm"):
                    assert len(lm[metric]) == n_layers and _finite(lm[metric])
                assert len(lm["oversmoothing"]) == n_layers + 1 and _finite(lm["oversmoothing"])
                for coef, traj in h["coefficients"].items():   # every coefficient logged at every evaluation
                    assert len(traj) == len(h["eval_steps"])
        comp = part["comparison"]
        for v in vs[1:]:
            assert _finite(comp[v]["paired_final"]["diffs"]) and len(comp[v]["paired_final"]["diffs"]) == 2
            assert _finite(comp[v]["paired_final"]["ci"])
            assert _finite(comp[v]["equal_time"]["paired"]["diffs"])
            assert len(comp[v]["sample_efficiency"]["per_seed"]) == 2
    # every declared test got a three-way verdict with its interval, Holm p and (when undecided) power
    assert result["verdicts"] and all(v["verdict"] in VERDICTS
                                      for v in result["verdicts"])
    assert {v["family"] for v in result["verdicts"]} >= set(families)


def test_value_residual_quick_result_schema(vr_result):
    _check_common(vr_result, "value-residual", {"corpus": [*vr.VARIANTS, *vr.WEAK_VARIANTS]})
    assert "recall" not in vr_result   # the recall task is its own recipe
    lam = vr.lambda_profiles(vr_result["corpus"]["runs"]["learnable"])
    assert [len(x) for x in lam] == [7, 7] and all(_finite(x) for x in lam)   # layers 1..7 of 8
    assert "summary" not in vr_result   # the retired two-way summary is no longer written
    cfg = vr_result["corpus"]["configs"]
    assert cfg["baseline"]["model"]["stream_start"] == "rmsnorm" and cfg["baseline_raw"]["model"]["stream_start"] == \
        "embedding"
    assert {v["name"] for v in vr_result["verdicts"]} == {t.name for t in vr.TESTS}
    # the saved file is plain JSON (tuples become lists, no objects)
    json.dumps(vr_result)


def test_bank_of_values_quick_result_schema(bov_result):
    _check_common(bov_result, "bank-of-values", {"corpus": list(x0_need.VARIANTS_V2)},
                  families=("ch04-setup", "ch04-loss", "ch04-size"))
    assert "recall" not in bov_result
    assert {v["name"] for v in bov_result["verdicts"]} == {t.name for t in bov.TESTS}
    # the x0 numbers whose premise fails on the language-model toys are stored as descriptions, with intervals
    assert [d["name"] for d in bov_result["descriptions"]] == [n for n, _ in bov.DESCRIBED]
    assert all(len(d["ci"]) == 2 for d in bov_result["descriptions"])
    assert bov_result["corpus"]["configs"]["qkv"]["model"]["qk_norm"] is True
    assert bov_result["corpus"]["configs"]["qkv"]["train"]["coef_opt"] == "official"
    for part in (bov_result["corpus"],):
        pl = part["beta_v_plateau"]
        assert pl["of"] == 2 * len(SEEDS) and 0 <= pl["reached"] <= pl["of"]
        t = part["coefficient_table"]
        assert t["layers"] == [6, 7] and t["seeds"] == SEEDS
        for name in ("alpha_q", "beta_q", "alpha_k", "beta_k", "alpha_v", "beta_v"):
            assert [len(row) for row in t[name]] == [2, 2] and all(_finite(row) for row in t[name])
    for r in bov_result["corpus"]["runs"]["baseline"]:
        a = r["ablation"]
        assert a["layers"] == list(range(8))
        assert all(len(a[s]) == 8 and _finite(a[s]) for s in "qkv")
    assert "ablation" not in bov_result["corpus"]["runs"]["qkv"][0]   # only the baselines are ablated
    assert "summary" not in bov_result


def test_recall_quick_result_schema(recall_result):
    _check_common(recall_result, "recall", {"recall": list(rc.VARIANTS)},
                  families=("recall", "recall-x0"))
    # the task's no-lookup reference and the accuracy of each query
    ref = recall_result["no_lookup_reference"]
    assert 0 < ref["acc"] < 1 and len(ref["acc_by_query"]) == rc.TASK["n_queries"]
    part = recall_result["recall"]
    for r in part["runs"]["baseline"]:
        assert len(r["layer_metrics"]["answer_acc_by_query"]) == rc.TASK["n_queries"]
    t = part["coefficient_table"]
    assert t["layers"] == [6, 7] and t["seeds"] == SEEDS
    cfg = part["configs"]
    assert all(cfg[v]["model"]["qk_norm"] is True for v in rc.VARIANTS)   # every variant: QK-norm
    assert cfg["resformer"]["model"]["value_residual"] == "resformer" and cfg["qkv"]["train"]["coef_opt"] == "official"
    assert {v["name"] for v in recall_result["verdicts"]} == {t.name for t in rc.TESTS}
    json.dumps(recall_result)


def test_steps_to_learn_is_the_interpolated_crossing_or_the_last_step():
    # reference loss 1.2 → "learned" at 0.6; the curve crosses it halfway between steps 200 and 300
    run = {"history": {"eval_steps": [100, 200, 300], "val_loss": [1.3, 0.8, 0.4]}}
    assert rc.steps_to_learn(run, 1.2, 300) == pytest.approx(250.0)
    never = {"history": {"eval_steps": [100, 200, 300], "val_loss": [1.3, 1.3, 1.3]}}
    assert rc.steps_to_learn(never, 1.2, 300) == 300.0


def test_recall_results_ignore_the_corpus_setting(recall_result, tmp_path, monkeypatch):
    # a synthetic task has one result file: VRS_EDU_CORPUS re-points the text recipes only
    (tmp_path / "recall.quick.json").write_text(json.dumps(recall_result))
    monkeypatch.setenv("VRS_EDU_CORPUS", "kjv")
    assert load_results("recall", quick=True, out_dir=tmp_path)["recipe"] == "recall"
    with pytest.raises(FileNotFoundError, match="--corpus kjv"):
        load_results("value-residual", quick=True, out_dir=tmp_path)


def test_quick_mode_writes_no_checkpoint(vr_result, bov_result, tmp_path):
    # checkpoints are only saved by full runs (seed 0); a quick file is named *.quick.json and loads as such
    with pytest.raises(FileNotFoundError, match="vrs-edu reproduce value-residual"):
        load_results("value-residual", out_dir=tmp_path)


def test_chapter_plots_draw_from_the_results(vr_result, bov_result, recall_result):
    both = {**vr_result, "recall": recall_result["recall"]}   # chapter 03 draws the two data sets side by side
    figs = [vvr.plot_loss_curves(both), vvr.plot_paired_curves(both),
            vvr.plot_layer_metrics(vr_result["corpus"]), vvr.plot_lambdas(vr_result["corpus"]),
            vbank.plot_betas({"corpus": bov_result["corpus"]["coefficient_table"],
                              "recall": recall_result["recall"]["coefficient_table"]}),
            vbank.plot_beta_trajectories(bov_result["corpus"]["runs"]["qkv"]),
            vbank.plot_ablation({"corpus": bank_readout.ablation_table(bov_result["corpus"]["runs"]["baseline"])},
                                deep_layers=[6, 7])]
    assert [len(f.axes) for f in figs] == [2, 2, 4, 2, 4, 3, 1]
    # the loss-curve panel has one line per variant, at the evaluation steps
    lines = figs[0].axes[0].get_lines()
    assert len(lines) == len(vr.VARIANTS) + len(vr.WEAK_VARIANTS) and list(lines[0].get_xdata()) == [10, 12]
    plt.close("all")
