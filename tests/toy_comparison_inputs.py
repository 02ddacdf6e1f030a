"""A made-up chapter 08 decoder result and made-up toy records, shared by the files that specify
:func:`vrs_edu.chapters.ch08_real_decoder.readout.toy_comparison` (the English rows in test_real_decoder.py, the
Korean ones in test_korean_ch08_outputs.py), so that both languages are checked on the same inputs.

The decoder has 3 layers, the last third is layer 2: its entropies lie -2.0 and +0.5 nats from uniform at layers 1
and 2 (half below, not most: not concentrated), its last third's inputs have x0-R² 0.30, and Q's table costs least
(0.4 nats, K 0.7, V 2.0). The toys: chapter 03's baseline concentrates less than uniform (+0.09, contradicted),
chapter 04's deep inputs are mostly token identity (x0-R² 0.85) and V reads x0 more than Q (+0.06, out of regime)
and than K (+0.19, negligible).
"""


def toy_comparison_inputs() -> tuple[dict, dict]:
    """``(result, toys)``: a fresh made-up ``real-decoder`` result and ``{recipe: stored toy result}``."""
    thirds = {"early": [0], "middle": [1], "late": [2]}
    cell = lambda m: {"mean": m, "ci": [m - 0.1, m + 0.1]}  # noqa: E731
    result = {"thirds": thirds,
              "describe": {"entropy": [3.0, 2.0, 4.5], "uniform_entropy": 4.0},     # layers 1, 2: -2.0, +0.5
              "probes": {"x0_r2": {"input": [1.0, 0.7, 0.3]}},
              "per_third": {"Q table · late": cell(0.4), "K table · late": cell(0.7), "V table · late": cell(2.0),
                            "V := W_V·norm(x0) · late": cell(7.0), "V := V_1 · late": cell(6.0)}}
    rec = lambda name, m, v="reproduced": {"name": name, "mean": m, "verdict": v}  # noqa: E731
    toys = {"value-residual": {"verdicts": [rec("baseline_concentrated", 0.09, "contradicted"),
                                            rec("svformer_cost", -0.014, "undecided")]},
            "bank-of-values": {"verdicts": [rec("v_reads_x0_more_than_q", 0.06, "out of regime"),
                                            rec("v_reads_x0_more_than_k", 0.19, "negligible"),
                                            rec("substitute_loss", -0.016)],
                               "preconditions": [{"name": "deep_context", "value": 0.85}]}}
    return result, toys
