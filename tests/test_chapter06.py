"""Chapter 06's computed prose (vrs_edu.chapters.ch06_what_v_reuse_buys.prose) and figures (vrs_edu.chapters.ch06_what_v_reuse_buys.figures): each sentence from a known
input, with its words chosen by the sign of the number it states; the head-reading steps on hand-made tensors; the
figures' named lines inside their axes and the widget's figure following a slider."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from vrs_edu.chapters.ch06_what_v_reuse_buys import prose as C  # noqa: E402
from vrs_edu.lab.kv_cache import measure  # noqa: E402
from vrs_edu.nn import TinyGPT, TinyGPTConfig  # noqa: E402
from vrs_edu.chapters.ch06_what_v_reuse_buys import figures as vkv  # noqa: E402


def _rows():
    # L = 3, d = 4, float32: baseline 2·3·4·4 = 96 B a token, SVFormer (3+1)·4·4 = 64, bank (6−1)·4·4 = 80,
    # tables 1 · |V| 8 · d 4 · 4 B = 128 B
    out = []
    for v, b, tab in (("baseline", 96, 0), ("svformer", 64, 0), ("bank", 80, 128)):
        for T in (2, 4):
            out.append({"variant": v, "T": T, "bytes_per_token": b, "cache_bytes": b * T, "table_bytes": tab,
                        "n_cached_v": 1, "n_layers": 3, "d_model": 4})
    return out


def test_per_token_reads_one_number_per_variant_and_refuses_a_cache_not_linear_in_t():
    assert C.per_token(_rows()) == {"baseline": 96, "svformer": 64, "bank": 80}
    bad = _rows() + [{**_rows()[0], "T": 8, "bytes_per_token": 95}]
    with pytest.raises(ValueError, match="must not depend on T"):
        C.per_token(bad)


def test_the_effect_sentence_states_bytes_shares_and_the_tables():
    s = C.cache_sentence(_rows())
    assert "baseline **96** bytes" in s and "SVFormer **64** (67%, 32 fewer)" in s
    assert "bank of values **80** (83%, 16 fewer)" in s and "0 KB of tables" in s


def test_the_saving_sentence_says_costs_breaks_even_saves_and_checks_the_sign_change():
    s = C.saving_sentence({4: -2048, 8: 0, 16: 4096}, 8, "a model")
    assert "costs 2.0 KB at T = 4, breaks even at T = 8, saves 4.0 KB at T = 16" in s
    assert "the sign changes at T = |V|, as the formula says" in s
    assert "saves -" not in s and "costs -" not in s
    wrong = C.saving_sentence({4: 1024, 16: 4096}, 8, "a model")      # saves below |V|: not the formula
    assert "**not** the sign change" in wrong


def test_the_loss_phrase_chooses_lower_or_higher_from_the_sign():
    assert C.loss_phrase({"mean": -0.014, "n_negative": 5, "n": 5}) == \
        "0.014 nats lower than the baseline's (5 of 5 seeds lower)"
    assert C.loss_phrase({"mean": 0.02, "n_negative": 1, "n": 5}).startswith("0.020 nats higher than")
    assert C.loss_phrase({"mean": 0.0, "n_negative": 2, "n": 5}).startswith("the same as")


def test_the_quality_sentence_says_a_cost_only_where_an_interval_lies_above_zero():
    lower = {"mean": -0.03, "ci": (-0.04, -0.02), "n_negative": 5, "n": 5}
    spans = {"mean": 0.01, "ci": (-0.01, 0.03), "n_negative": 2, "n": 5}
    above = {"mean": 0.05, "ci": (0.02, 0.08), "n_negative": 0, "n": 5}
    assert "no reuse is shown to cost loss" in C.quality_sentence({"svformer": lower, "bank": spans})
    assert "SVFormer costs loss here" in C.quality_sentence({"svformer": above, "bank": lower})
    assert C.quality_sentence({}) == "No quality result is made yet."


def test_the_quality_sentence_reads_svformer_as_the_stored_run_does_below_zero_yet_undecided():
    # the stored kjv runs: SVFormer -0.014 [-0.026, -0.003] with its cost claim undecided, the bank's gain reproduced
    sv = {"mean": -0.0143, "ci": (-0.0257, -0.0028), "n_negative": 5, "n": 5}
    bank = {"mean": -0.0320, "ci": (-0.0366, -0.0273), "n_negative": 5, "n": 5}
    tests = {"svformer": {"name": "svformer_cost", "direction": "positive", "verdict": "undecided"},
             "bank": {"name": "bank_loss", "direction": "negative", "verdict": "reproduced"}}
    text = C.quality_sentence({"svformer": sv, "bank": bank}, tests)
    assert ("SVFormer's final validation loss is 0.014 nats lower than the baseline's (5 of 5 seeds lower): its "
            "interval, -0.014 [-0.026, -0.003] nats, lies below 0, the opposite of the paper's expected cost; its "
            "declared one-sided test `svformer_cost`, which claims a cost, is **undecided** once we allow for the "
            "number of tests.") in text
    assert "`bank_loss`, which claims a lower loss, is **reproduced**" in text
    assert "neither reuse costs loss" not in text and text.endswith("no reuse is shown to cost loss.")
    # a cost is said only where the test claiming it is reproduced, never from an interval alone
    costly = dict(tests, svformer=dict(tests["svformer"], verdict="reproduced"))
    assert "SVFormer costs loss here, decided" in C.quality_sentence(
        {"svformer": {"mean": 0.02, "ci": (0.01, 0.03), "n_negative": 0, "n": 5}}, costly)


def test_the_context_sentence_and_the_answer_choose_their_words_from_the_numbers():
    assert "only a little" in C.context_sentence(0.993, 150)
    assert "strongly" in C.context_sentence(0.5, 150)
    a = C.answer(_rows(), 8, 2e-7, 0.993)
    assert "from **96** to **64** bytes per token" in a and "32 fewer (33%)" in a
    assert "break-even context is **8** tokens" in a and "output is the pattern" in a and "nearly" in a
    assert "output is not the pattern" in C.answer(_rows(), 8, 1e-3, 0.5)


def test_same_token_cosine_is_one_for_a_table_and_below_one_when_the_context_changes_a_value():
    idx = torch.tensor([[0, 1, 0, 1]])
    table = torch.randn(2, 6)
    v = table[idx].view(1, 4, 2, 3).transpose(1, 2)                  # (B, H, T, Dh): a pure table lookup
    assert C.same_token_value_cosine(v, idx) == pytest.approx(1.0)
    v2 = v.clone()
    v2[0, :, 2] = -v2[0, :, 2]                                        # token 0's second occurrence flipped
    assert C.same_token_value_cosine(v2, idx) == pytest.approx(0.0, abs=1e-6)   # (−1 for token 0, +1 for 1)/2
    with pytest.raises(ValueError, match="occurs at least twice"):
        C.same_token_value_cosine(v[:, :, :2], idx[:, :2])


def test_a_bank_layers_output_is_its_pattern_times_its_ov_table():
    cfg = TinyGPTConfig(vocab_size=11, d_model=8, n_layers=3, n_heads=2, block_size=8, x0_mode="bank")
    torch.manual_seed(0)
    model = TinyGPT(cfg).eval()
    x = torch.randint(0, 11, (2, 7))
    tr = model(x, trace=True).trace
    layer = cfg.resolved_x0_layers()[-1]
    ov = C.ov_tables(model.blocks[layer], cfg.n_heads)
    assert ov.shape == (2, 11, 8)
    rebuilt = C.output_from_table(tr[f"blocks.{layer}.attn.pattern"], ov, x)
    assert torch.allclose(rebuilt, tr[f"blocks.{layer}.attn.out"], atol=1e-6)
    with pytest.raises(ValueError, match="bank-of-values layer"):
        C.ov_tables(model.blocks[0], cfg.n_heads)
    loud = C.loudest_rows(ov, model.lm_head.weight.detach(), torch.arange(11.0), str, n_common=5, n_rows=3)
    assert len(loud["rows"]) == 3 and loud["mean_norm"] >= loud["quietest"]


def test_short_cuts_long_tokens():
    assert C.short("ab") == "'ab'" and C.short("x" * 30) == "'xxxxxxxxxxxx…"


# --- figures --------------------------------------------------------------------------------------------------


def test_the_effect_figure_puts_every_bar_and_label_inside_the_axes():
    cfg = TinyGPTConfig(vocab_size=16, d_model=8, n_layers=3, n_heads=2, block_size=8)
    fig = vkv.plot_cache_per_token(measure(cfg, [4, 8]))
    ax = fig.axes[0]
    widths = [p.get_width() for p in ax.patches]
    assert widths == [2 * 3 * 8 * 4, (3 + 1) * 8 * 4, (2 * 3 - 1) * 8 * 4]
    assert max(widths) * 1.3 < ax.get_xlim()[1]                      # room for the labels right of the bars
    plt.close(fig)


def test_the_break_even_line_is_inside_the_axes():
    fig = vkv.plot_break_even({50: -10, 100: 0, 200: 20}, {50: -10, 100: 0, 200: 20}, 100)
    lo, hi = fig.axes[0].get_xlim()
    assert lo < 100 < hi
    plt.close(fig)


def test_the_widget_figure_keeps_its_axis_and_moves_against_the_default():
    default = dict(n_layers=12, d_model=768, context=2048, vocab_size=32768, bytes_per_number=2, batch=32)
    at = vkv.kv_figure(**default, default=default)[0]
    moved = vkv.kv_figure(**{**default, "context": 4096}, default=default)[0]
    assert at.axes[0].get_xlim() == moved.axes[0].get_xlim()           # a fixed context axis: T's line moves
    grey = [l for l in moved.axes[0].lines if l.get_color() == "0.75" and len(l.get_xdata())]
    assert len(grey) == 3                                               # the default's three curves
    wider = vkv.kv_figure(**{**default, "d_model": 1024}, default=default)[0]
    base = [l for l in wider.axes[0].lines if l.get_color() == "tab:blue" and len(l.get_xdata()) > 1][0]
    ref = [l for l in wider.axes[0].lines if l.get_color() == "0.75" and len(l.get_xdata())][0]
    assert base.get_ydata()[0] == pytest.approx(ref.get_ydata()[0] * 1024 / 768)   # drawn above the default
    be = 32768 / 32
    lo, hi = at.axes[0].get_xlim()
    assert lo < be < hi and lo < 2048 < hi
    plt.close("all")


def test_the_saving_sentence_does_not_claim_a_sign_change_it_did_not_see():
    s = C.saving_sentence({64: -1024, 256: -512}, 2048, "a word model")
    assert "sign changes" not in s and "every context here is shorter than |V|" in s


def test_chapter_06_figures_are_readable_and_fit_the_page():
    from vrs_edu.viz.plots import apply_course_style, small_text

    with plt.rc_context():
        apply_course_style()
        cfg = TinyGPTConfig(vocab_size=16, d_model=8, n_layers=3, n_heads=2, block_size=8)
        figs = [vkv.plot_cache_per_token(measure(cfg, [4])), vkv.plot_break_even({5: -1, 20: 3}, {5: -1, 20: 3}, 8),
                vkv.kv_figure(batch=32)[0]]
        for fig in figs:
            assert small_text(fig) == [] and fig.get_size_inches()[0] <= 10.5
    plt.close("all")


def test_the_quality_sentence_words_a_negligible_or_out_of_regime_test_from_its_verdict():
    sv = {"mean": -0.0043, "ci": (-0.0070, -0.0016), "n_negative": 5, "n": 5}
    tests = {"svformer": {"name": "svformer_cost", "direction": "positive", "verdict": "negligible",
                          "effect_for_power": 0.028}}
    s = C.quality_sentence({"svformer": sv}, tests)
    assert "0.004 nats lower than the baseline's (5 of 5 seeds lower)" in s       # the sign in words, unsigned
    assert "-0.004 [-0.007, -0.002] nats, lies below 0, the opposite of the paper's expected cost" in s
    assert "`svformer_cost`, which claims a cost, is **negligible**: too small to matter" in s
    assert "within ±0.028 nats" in s                                                # the declared margin
    assert s.endswith("no reuse is shown to cost loss.") and "costs loss here" not in s     # negligible: no cost
    decided = C.quality_sentence({"svformer": sv}, {"svformer": {**tests["svformer"], "verdict": "contradicted"}})
    assert "is **contradicted** once we allow for the number of tests" in decided and "too small" not in decided
    bank = {"mean": -0.0320, "ci": (-0.0366, -0.0273), "n_negative": 5, "n": 5}
    oor = {"bank": {"name": "bank_loss", "direction": "negative", "verdict": "out of regime",
                    "would_be": "reproduced"}}
    assert ("`bank_loss`, which claims a lower loss, is **out of regime (would be: reproduced)**: out of regime — "
            "its premise fails; judged anyway it would be reproduced, and it is not counted.") in \
        C.quality_sentence({"bank": bank}, oor)


def test_the_depth_attention_sentence_takes_its_words_from_the_verdict():
    head = ("Depth-Attention's final validation loss is **0.023** nats lower than the baseline's (mean of 5 paired "
            "seeds), with the same 1,024 cache bytes per token: its read of V buys ")
    assert C.depth_attention_sentence(-0.023, 5, 1024, "reproduced") == head + "a lower loss at the same cache."
    assert C.depth_attention_sentence(-0.023, 5, 1024, "undecided") == \
        head + "no decided change in loss here (its loss test is undecided)."
    assert C.depth_attention_sentence(-0.023, 5, 1024, {"verdict": "negligible", "effect_for_power": -0.01}) == \
        head + ("no counted change in loss here: its loss test is too small to matter — its whole interval lies "
                "within ±0.01 nats, the smallest effect declared before the run.")
    assert C.depth_attention_sentence(-0.023, 5, 1024, {"verdict": "out of regime", "would_be": "reproduced"}) == \
        head + ("no counted change in loss here: its loss test is out of regime — its premise fails; judged anyway "
                "it would be reproduced.")


def test_live_test_judges_a_result_with_the_recipes_current_declarations():
    from types import SimpleNamespace as NS

    class Row(NS):
        def to_record(self):
            return {"name": self.test.name, "verdict": self.verdict}

    rows = [Row(test=NS(name="svformer_cost"), verdict="negligible"), Row(test=NS(name="x"), verdict="undecided")]
    assert C.live_test({"runs": {}}, lambda result: rows, "svformer_cost") == {"name": "svformer_cost",
                                                                              "verdict": "negligible"}
    assert C.live_test(None, lambda result: rows, "svformer_cost") is None
    assert C.live_test({}, lambda result: rows, "absent") is None


# ---------------------------------------------------------------------------------------------- 2026's designs

def _designs(diffs: dict[str, float], kv_share_bytes: int = 2048) -> dict:
    """A production-designs result by hand: each variant's paired final-loss difference, 5 seeds, ±0.004 interval."""
    names = ["baseline", *diffs]
    return {"settings": {"corpus": {"train": {"steps": 120}}}, "designs": {n: {"n_params": 1000 + i, "kv_bytes_per_token": {
                "float32": kv_share_bytes if n == "kv_share" else 4096, "bfloat16": 0}}
                        for i, n in enumerate(names)},
            "corpus": {"comparison": {n: {"paired_final": {"mean": m, "ci": [m - 0.004, m + 0.004], "n": 5,
                                                           "n_negative": 5 if m < 0 else 0}}
                                      for n, m in diffs.items()}}}


def _rec(name: str, verdict: str, form: str = "sign", would_be: str | None = None) -> dict:
    return {"name": name, "verdict": verdict, "form": form, "would_be": would_be, "effect_for_power": -0.01}


def test_the_designs_table_gives_bytes_differences_and_verdicts_in_the_designs_order():
    result = _designs({"kv_share": 0.002, "k_eq_v": -0.0005})
    judged = {"kv_share_no_worse": _rec("kv_share_no_worse", "reproduced", "equivalence"),
              "k_eq_v_no_worse": _rec("k_eq_v_no_worse", "out of regime", "equivalence", would_be="undecided")}
    columns, rows = C.designs_table(result, judged)
    assert columns[3] == "KV bytes / token" and [r[0] for r in rows] == ["baseline", "K = V",
                                                                        "KV shared by 2 layers (CLA)"]
    assert rows[0][4:] == ["—", "—"]
    assert rows[1][4] == "-0.001 [-0.005, +0.004]" and rows[1][5].endswith("out of regime (would be: undecided)")
    assert rows[2][3] == "2,048" and rows[2][5] == "kv_share_no_worse: reproduced"


def test_the_designs_sentence_names_the_smaller_cache_and_words_each_loss_by_its_verdict():
    result = _designs({"kv_share": 0.002, "k_eq_v": 0.001, "mhc": -0.03, "xsa": 0.01})
    judged = {"kv_share_no_worse": _rec("kv_share_no_worse", "reproduced", "equivalence"),
              "k_eq_v_no_worse": _rec("k_eq_v_no_worse", "undecided", "equivalence"),
              "mhc_loss": _rec("mhc_loss", "reproduced"), "xsa_loss": _rec("xsa_loss", "contradicted")}
    s = C.designs_sentence(result, judged)
    assert "Of the 4 designs only KV shared by 2 layers (CLA) (2,048 bytes, 50%) keeps a smaller cache than the " \
           "baseline's 4,096" in s and "at 120 steps of the toy:" in s
    assert "KV shared by 2 layers (CLA) costs no loss beyond ±0.01 nats" in s
    assert "mHC, 4 streams lowers it (reproduced)" in s     # a gain test is against 0, not against 0.01
    assert "K = V undecided" in s and "exclusive self-attention contradicted" in s
    none = C.designs_sentence(_designs({"k_eq_v": 0.0}, kv_share_bytes=4096), {})
    assert none.startswith("None of the designs keeps a smaller cache")


def _kv(late: str, share: str) -> dict:
    r2 = [0.8, 0.6, 0.5, 0.4, 0.3, 0.2]
    return {"thirds": {"early": [0, 1], "middle": [2, 3], "late": [4, 5]}, "k_eq_v": {"r2": {"k": r2}},
            "sharing": {"pairs": [[0, 1], [1, 2], [4, 5]], "loss": [[3.0, 3.2], [0.2, 0.3], [0.05, 0.09]]},
            "verdicts": [{"name": "late_v_from_k_free", "verdict": late, "mean": 0.557},
                         {"name": "late_shared_kv_free", "verdict": share, "mean": 1.366}]}


def test_the_post_hoc_sentence_reads_medians_the_cheapest_pair_and_its_moral_from_the_verdicts():
    s = C.post_hoc_sentence(_kv("contradicted", "contradicted"))
    assert "median R² of 0.80 in the first third, 0.50 in the middle and 0.30 in the last" in s
    assert "**+0.56** nats (contradicted" in s and "at least +0.070 nats (layer 5 reading layer 4)" in s
    assert s.endswith("Neither comes free to a model trained without it; what a model trained with it pays is the "
                      "toy runs' question above.")
    mixed = C.post_hoc_sentence(_kv("reproduced", "contradicted"))
    assert mixed.endswith("a shared cache does not come free after training; K = V would have cost this model no "
                          "more than ±0.05 nats.")
    assert C.post_hoc_sentence(_kv("undecided", "undecided")).endswith("Neither test is decided by these sequences.")


def test_the_removal_sentence_lets_a_no_worse_reading_count_only_when_the_check_is_reproduced():
    assert "does see the loss of 5 %" in C.removal_sentence({"verdict": "reproduced"})
    s = C.removal_sentence({"verdict": "undecided"})
    assert s.startswith("The set-up check is undecided: this toy does not reliably see") and "would say little" in s
