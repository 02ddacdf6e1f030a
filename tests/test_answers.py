"""Chapter 06's answers to the course's four questions come from result files, cite their chapter, and say which
command makes a missing file. Checked on small result files written here, with numbers known by construction."""
import json

from vrs_edu.lab.answers import course_answers
from vrs_edu.lab.recipes.depth_mixers import VARIANTS


def _stat(mean, lo, hi, n=3):
    return {"mean": mean, "ci": [lo, hi], "n": n}


def _claim(test, mean, lo, hi, verdict):
    return {"test": test, "stat": _stat(mean, lo, hi), "verdict": verdict}


def _matrix(L, source_weight):
    """Deep reads put `source_weight` on the embedding and the rest on the latest source."""
    m = [[None] * (L + 1) for _ in range(L + 1)]
    for l in range(L + 1):
        for j in range(l + 1):
            m[l][j] = 0.0
        m[l][0] += source_weight if l else 1.0
        m[l][l] += (1 - source_weight) if l else 0.0
    return m


def _depth_result(L=3):
    runs = {}
    for name in ("residual", "dca", "mudd", "vertical"):
        runs[name] = []
        for seed, loss in enumerate((5.0, 5.1)):
            delta = {"residual": 0.0, "dca": -0.02, "mudd": -0.01, "vertical": 0.01}[name] + 0.001 * seed
            w = {} if name == "residual" else {"q": _matrix(L, 0.1), "k": _matrix(L, 0.1),
                                               "v": _matrix(L, 0.6 if name != "vertical" else 0.05)}
            runs[name].append({"seed": seed, "final_val_loss": loss + delta, "train_cpu_s": 1.0, "depth_weights": w})
    counts = {n: {"n_params": 100, "extra": 0, "overhead": 0.0} for n in runs}
    return {"command": "vrs-edu reproduce depth-mixers", "wall_time_s": 60.0, "runs": runs,
            "parameter_counts": counts, "configs": {"residual": {"model": {"n_layers": L}}}}


def test_answers_cite_chapters_and_numbers(tmp_path):
    claims_vr = {"loss_gain_final": _claim("ResFormer − baseline final val loss: 95% CI below 0", -0.004, -0.01,
                                           0.002, "not reproduced")}
    claims_bov = {"v_tolerates_x0_substitution": _claim("ablation test", -0.2, -0.3, -0.1, "reproduced"),
                  "beta_v_exceeds_beta_q_and_beta_k": _claim("β test", 0.3, 0.1, 0.5, "reproduced")}
    (tmp_path / "value-residual.json").write_text(json.dumps(
        {"command": "vrs-edu reproduce value-residual", "wall_time_s": 10, "summary": {"corpus": claims_vr}}))
    (tmp_path / "bank-of-values.json").write_text(json.dumps(
        {"command": "vrs-edu reproduce bank-of-values", "wall_time_s": 20, "summary": {"corpus": claims_bov}}))
    (tmp_path / "depth-mixers.json").write_text(json.dumps(_depth_result()))
    answers = course_answers(tmp_path)
    assert [a["chapter"] for a in answers] == ["04", "03", "04", "05"]
    assert all(a["missing"] is None for a in answers)
    q1, q2, q3, q4 = (a["lines"] for a in answers)
    assert q1 == ["ablation test = -0.200 [95% CI -0.300, -0.100], n = 3 → reproduced"]
    assert q2[0].endswith("→ not reproduced") and "+0.002" in q2[0]
    assert "β test" in q3[0]
    assert q4[0].startswith("best mixer dca: Δ final val loss vs residual -0.020")
    assert "mixers whose interval lies below 0: dca, mudd" in q4[0]   # both seeds better by a fixed amount
    assert q4[1] == "dca: share of the deep reads' weight on the embedding — Q 0.100, K 0.100, V 0.600"
    assert q4[-1] == "V's input reads the embedding more than both Q's and K's in 2 of 3 routers"


def test_a_missing_file_names_its_command(tmp_path):
    answers = course_answers(tmp_path)
    assert all(a["lines"] == [] for a in answers)
    assert "vrs-edu reproduce depth-mixers" in answers[3]["missing"]
    assert answers[1]["command"] == "vrs-edu reproduce value-residual"


def test_every_recipe_variant_is_known_to_the_depth_answer():
    assert {"dca", "mudd", "vertical", "residual"} <= set(VARIANTS)
