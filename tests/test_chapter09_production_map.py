"""Chapter 09's production map (vrs_edu.chapters.ch09_the_four_answers.production_map): every design a 2026 model
ships named with its model and config field, each measured cell built from a stored result and its verdict, and
"not run yet" where a result is missing."""
from vrs_edu.chapters.ch09_the_four_answers.production_map import NOT_RUN, production_map


def _designs() -> dict:
    variants = {"baseline": 0.0, "k_eq_v": 0.003, "kv_share": -0.002, "mhc": -0.02}
    return {"designs": {n: {"kv_bytes_per_token": {"float32": 2048 if n == "kv_share" else 4096}} for n in variants},
            "corpus": {"comparison": {n: {"paired_final": {"mean": m, "ci": [m - 0.01, m + 0.01]}}
                                      for n, m in variants.items()}}}


def test_the_map_names_gemma_4_and_deepseek_v4_with_their_config_fields():
    _, rows = production_map(None, {}, None)
    fields = {r[0]: r[1] for r in rows}
    assert fields["Gemma 4 (global layers)"] == "`attention_k_eq_v`"
    assert fields["Gemma 4 (last layers)"] == "`num_kv_shared_layers`"
    assert fields["DeepSeek-V4"].startswith("`hc_mult`")
    assert all(r[4].startswith(f"toy: {NOT_RUN}") for r in rows)


def test_each_measured_cell_gives_the_difference_the_verdict_and_the_cache_share():
    judged = {"kv_share_no_worse": {"verdict": "reproduced"},
              "k_eq_v_no_worse": {"verdict": "out of regime", "would_be": "undecided"}}
    kv = {"verdicts": [{"name": "late_v_from_k_free", "verdict": "contradicted", "mean": 0.557},
                       {"name": "late_shared_kv_free", "verdict": "contradicted", "mean": 1.366}]}
    _, rows = production_map(_designs(), judged, kv)
    cells = {r[0]: r[4] for r in rows}
    assert cells["Gemma 4 (last layers)"] == ("toy: Δ loss -0.002 [-0.012, +0.008] nats (reproduced), cache 50% of "
                                              "the baseline's; SmolLM2 post hoc, last third: +1.37 nats "
                                              "(contradicted for 'no worse')")
    assert cells["Gemma 4 (global layers)"].startswith(
        "toy: Δ loss +0.003 [-0.007, +0.013] nats (out of regime (would be: undecided)), cache 100%")
    assert cells["DeepSeek-V4"] == (f"toy: Δ loss -0.020 [-0.030, -0.010] nats ({NOT_RUN}), cache 100% of the "
                                    "baseline's")
    assert cells["Gemma 3n, small Gemma 4 models"] == f"toy: {NOT_RUN}"


def test_a_cell_names_the_holm_corrected_p_so_an_interval_clear_of_0_can_read_undecided():
    judged = {"mhc_loss": {"verdict": "undecided", "p_holm": 0.089}}
    _, rows = production_map(_designs(), judged, None)
    cells = {r[0]: r[4] for r in rows}
    assert cells["DeepSeek-V4"] == ("toy: Δ loss -0.020 [-0.030, -0.010] nats (undecided, Holm p = 0.089), cache "
                                    "100% of the baseline's")
