"""Chapter 09's first answer reads the norm-based view (Kobayashi et al., arXiv 2004.10102 and 2109.07152): how much a
deep layer's weights alone mis-state what it moves, from the ``encoder-norms`` and ``decoder-norms`` results. Checked
on hand-made results whose per-layer means are known by construction, then on the stored runs."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from vrs_edu.chapters.ch09_the_four_answers import answers as A

RESULTS = Path(__file__).resolve().parents[1] / "data" / "results"
SPREAD = (-0.01, 0.0, 0.01)          # three sequences around each mean: zero-mean, so every mean is the one given


def _rows(values, spread=SPREAD, scale=None):
    """Per layer, three sequences around the given mean; ``scale`` varies the spread by layer so that differences
    between readings keep a variance."""
    return [[x + d * (1 + (scale or 0) * l) for d in spread] for l, x in enumerate(values)]


def _decoder(weight, norm, mixing, weight_mixing):
    """A ``decoder-norms`` result of 6 layers in thirds of 2 (late: layers 4 and 5)."""
    return {"per_layer": {"weight_share": _rows(weight), "norm_share": _rows(norm, (0.005, -0.01, 0.005)),
                          "mixing": _rows(mixing), "weight_mixing": _rows(weight_mixing, (0.0, 0.005, -0.005)),
                          "sink_heads": _rows([0.5] * 6, (0.0, 0.0, 0.0))},
            "thirds": {"early": [0, 1], "middle": [2, 3], "late": [4, 5]}}


def _encoder(weight, norm, mixing, weight_mixing, position=0.2):
    """An ``encoder-norms`` result of 6 layers (its last third: layers 4 and 5); the special tokens are ``position``
    of the tokens."""
    return {"per_layer": {"weight_share": _rows(weight), "norm_share": _rows(norm, (0.005, -0.01, 0.005)),
                          "position_share": _rows([position] * 6, (0.0, 0.0, 0.0)), "mixing": _rows(mixing),
                          "weight_mixing": _rows(weight_mixing, (0.0, 0.005, -0.005)),
                          "rho": _rows([-0.2] * 6, (-0.05, 0.0, 0.05))}}


# the decoder: a sink at layers 2-5 (weight share 0.6, above the 0.3 premise), at layer 4 its norm share 0.2, at 5
# 0.3; no sink at 0-1. Late mixing 0.1 and 0.2 against the weights' 0.9. Expected over layers 4-5: weight 0.6, norm
# 0.25, r 0.15, weights 0.9: the weights overstate the mixing by 75 points, the sink by 0.6 / 0.25 = 2.4×.
DEC = _decoder([0.1, 0.1, 0.6, 0.6, 0.6, 0.6], [0.1, 0.1, 0.2, 0.2, 0.2, 0.3], [0.5, 0.5, 0.3, 0.3, 0.1, 0.2],
               [0.9] * 6)
# the encoder: special tokens 20 % of the positions; at layer 4 they draw 0.5 of the weight (premise holds), at 5
# only 0.15 (out of regime); mixing 0.3 against 0.8 everywhere. Expected: judged 1 (layer 4), weight 0.5, norm 0.1.
ENC = _encoder([0.5] * 5 + [0.15], [0.1] * 6, [0.3] * 6, [0.8] * 6)


def test_the_deep_third_is_read_where_the_premise_holds_and_averaged_by_hand():
    ev = A.norm_view_evidence({"encoder": ENC, "decoder": DEC})
    d, e = ev["decoder"], ev["encoder"]
    assert d["layers"] == [4, 5] and d["judged"] == 2 and d["reproduced"] == 2
    assert (d["weight"], d["norm"], d["r"], d["weights"]) == pytest.approx((0.6, 0.25, 0.15, 0.9))
    assert d["mixing"].test.name == "mixing_below_weights_late" and d["mixing"].verdict == "reproduced"
    # layer 5's special tokens draw less weight than their share of the positions: out of regime, not averaged
    assert e["layers"] == [4, 5] and e["judged"] == 1 and e["reproduced"] == 1
    assert (e["weight"], e["norm"], e["r"], e["weights"]) == pytest.approx((0.5, 0.1, 0.3, 0.8))
    assert e["mixing"].test.name == "mixing_below_weights"


def test_weights_below_the_norms_read_understate_and_no_sink_is_said():
    # mixing above the weights' reading everywhere, and no layer with a sink (weight share 0.1 < 0.3)
    ev = A.norm_view_evidence({"decoder": _decoder([0.1] * 6, [0.1] * 6, [0.95] * 6, [0.5] * 6)})
    assert ev["decoder"]["judged"] == 0 and math.isnan(ev["decoder"]["weight"])
    s = A.norm_view_sentence(ev)
    assert "the weights say a token takes 50 %" in s and "95 %" in s and "first token" not in s
    assert A.norm_view_sentence({}) == ""


def test_the_sentence_speaks_of_the_decoder_when_there_is_one_and_cites_the_papers():
    s = A.norm_view_sentence(A.norm_view_evidence({"encoder": ENC, "decoder": DEC}))
    assert "the 30-layer decoder's last third (layers 4–5) the weights say a token takes 90 %" in s
    assert ("counting the residual too, 15 %. There the first token takes 60 % of the weight but 25 % of what the "
            "layer moves, at the 2 of those layers where it is a sink (the norm-based view") in s
    assert "the norms of what attention moves" not in s          # a result made before that reading: left out
    assert "2004.10102" in s and "2109.07152" in s and "2410.10781" in s
    assert "the encoder's last third" in A.norm_view_sentence(A.norm_view_evidence({"encoder": ENC}))


def test_the_stored_runs_give_question_1_its_norm_row():
    stored = {k: json.loads((RESULTS / f"{k}-norms.json").read_text()) for k in ("encoder", "decoder")}
    ev = A.norm_view_evidence(stored)
    for model in ("encoder", "decoder"):
        e = ev[model]
        assert e["judged"] >= 1 and e["reproduced"] == e["judged"], model
        assert e["r"] < e["weights"] - 0.5 and e["norm"] < e["weight"], model
    s = A.norm_view_sentence(ev)
    assert "the 30-layer decoder's last third" in s and "counting the residual too" in s


def test_the_attention_alone_splits_the_gap_into_the_values_norms_and_the_residual():
    # attention alone, by norms, 0.6 and 0.5 at the late layers: 0.55 against the weights' 0.9 and the mixing's 0.15
    dec = {**DEC, "per_layer": {**DEC["per_layer"], "attention_mixing": _rows([0.8] * 4 + [0.6, 0.5])}}
    ev = A.norm_view_evidence({"decoder": dec})
    assert ev["decoder"]["attention"] == pytest.approx(0.55)
    assert ("takes 90 % of its new state from its context; the norms of what attention moves (V and O), 55 %; "
            "counting the residual too, 15 %") in A.norm_view_sentence(ev)
