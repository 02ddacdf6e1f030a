"""vrs_edu.viz.prose.declared_result in Korean names why an interval clear of 0 is still undecided (the Holm-corrected
p), as the English does."""
from vrs_edu.viz.prose import declared_result


def _result(values, verdict, ci):
    m = sum(values) / len(values)
    rec = {"name": "t", "verdict": verdict, "form": "sign", "effect_for_power": -0.01, "would_be": None,
           "mean": m, "ci": ci, "values": values, "p_holm": 0.0886, "family_size": 6}
    return {"verdicts": [rec]}


def test_an_interval_clear_of_zero_beside_undecided_names_the_holm_corrected_p_in_korean():
    r = _result([-0.06, -0.05, -0.07, -0.065, -0.07], "undecided", [-0.073, -0.053])
    assert declared_result(r, "t", lang="ko") == (
        "최종 손실이 기준선보다 0.063 nats 낮음, 95% 신뢰구간 [-0.073, -0.053], 시드 5개 중 5개에서 더 낮음; "
        "선언된 검정 `t`; 같은 검정 묶음의 검정 6개에 대한 Holm 보정 후 p = 0.089: 미정 — 이 시드들로는 결정되지 않음: "
        "구간은 0을 포함하지 않지만 Holm 보정 후 p = 0.089로 0.05 미만이 아님")
    r["verdicts"][0]["p_holm"] = 0.063                       # 0.063 reads 삼: 으로
    assert "p = 0.063으로 0.05 미만이 아님" in declared_result(r, "t", lang="ko")
    r["verdicts"][0]["ci"] = [-0.02, 0.01]                   # an interval across 0 needs no such sentence
    assert "포함하지 않지만" not in declared_result(r, "t", lang="ko")
    r["verdicts"][0]["family_size"] = 1
    assert "Holm" not in declared_result(r, "t", lang="ko")
