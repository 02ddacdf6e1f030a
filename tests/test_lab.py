"""Specifications of vrs_edu.lab: data, training, checkpoints, metrics and the command line."""
import json
import math

import pytest
import torch

from vrs_edu import cli
from vrs_edu.lab import metrics
from vrs_edu.lab.data import (associative_recall, induction_copy, load_corpus, make_token_data, train_tokenizer,
                              unigram_loss)
from vrs_edu.lab.train import TrainConfig, load_checkpoint, lr_factor, save_checkpoint, train
from vrs_edu.nn import TinyGPT, TinyGPTConfig

TEXT = "the cat sat on the mat. the dog sat on the log. " * 40


def tiny_model(vocab, **kw):
    return TinyGPT(TinyGPTConfig(vocab_size=vocab, d_model=32, n_layers=2, n_heads=2, block_size=16, **kw))


# --- data ------------------------------------------------------------------------------------------------------

def test_char_tokenizer_round_trip_and_split_is_deterministic():
    d1 = make_token_data(TEXT, "char", block_size=16)
    d2 = make_token_data(TEXT, "char", block_size=16)
    assert d1.tokenizer.decode(d1.train[:20]) == TEXT[:20]
    assert torch.equal(d1.val, d2.val) and len(d1.train) + len(d1.val) == len(TEXT)


@pytest.mark.parametrize("kind", ["word", "bpe"])
def test_subword_tokenizers_train_on_the_corpus(kind):
    tok = train_tokenizer(TEXT, kind, vocab_size=64)
    ids = tok.encode("the cat sat")
    assert len(ids) >= 3 and tok.decode(ids).replace(" ", "") == "thecatsat"


def test_default_corpus_is_the_python_reference_docs():
    text = load_corpus()
    assert "The \"assert\" statement" in text and len(text) > 300_000


def test_corpus_errors_name_the_file(tmp_path):
    empty, latin = tmp_path / "empty.txt", tmp_path / "latin1.txt"
    empty.write_text("  \n")
    latin.write_bytes("café".encode("latin-1"))
    with pytest.raises(ValueError, match="empty.txt is empty"):
        load_corpus(empty)
    with pytest.raises(ValueError, match="latin1.txt is not UTF-8"):
        load_corpus(latin)
    with pytest.raises(ValueError, match="shorter than one block|too short"):
        make_token_data("abc" * 10, "char", block_size=64)


def test_unigram_loss_of_a_two_symbol_corpus():
    # train "abababab..." -> p(a) = p(b) = 1/2 (add-one smoothing keeps them equal) -> loss = log 2 on any val.
    d = make_token_data("ab" * 200, "char", block_size=4, val_fraction=0.1)
    assert unigram_loss(d) == pytest.approx(math.log(2), abs=1e-6)


def test_associative_recall_answers_are_the_values_of_the_queried_keys():
    task = associative_recall(n_pairs=4, n_key_symbols=4, n_value_symbols=6, key_len=2, n_queries=2)
    x, y, mask = task.batch(3, torch.Generator().manual_seed(0))
    seq = torch.cat([x, y[:, -1:]], 1)
    for b in range(3):
        pairs = {tuple(seq[b, i * 3:i * 3 + 2].tolist()): seq[b, i * 3 + 2].item() for i in range(4)}
        answers = y[b][mask[b]].tolist()
        q0 = 4 * 3 + 1
        queried = [tuple(seq[b, q0 + j * 3:q0 + j * 3 + 2].tolist()) for j in range(2)]
        assert answers == [pairs[k] for k in queried]


def test_induction_copy_second_half_repeats_the_first():
    task = induction_copy(length=5, vocab_size=9)
    x, y, mask = task.batch(2, torch.Generator().manual_seed(1))
    seq = torch.cat([x, y[:, -1:]], 1)
    assert torch.equal(seq[:, :5], seq[:, 5:]) and mask.sum().item() == 2 * 4


# --- training --------------------------------------------------------------------------------------------------

def test_lr_schedule_warmup_constant_decay():
    cfg = TrainConfig(steps=100, warmup=10, decay_frac=0.3)
    assert lr_factor(0, cfg) == pytest.approx(0.1)
    assert lr_factor(9, cfg) == 1.0 and lr_factor(69, cfg) == 1.0
    assert lr_factor(99, cfg) == pytest.approx(1 - 0.9 * 29 / 30)


def test_training_reduces_loss_and_same_seed_repeats_exactly():
    data = make_token_data(TEXT, "char", block_size=16)
    cfg = TrainConfig(steps=40, batch_size=8, eval_every=20, eval_batches=2, seed=3)
    h1 = train(tiny_model(data.vocab_size), data, cfg, progress=False)
    h2 = train(tiny_model(data.vocab_size), data, cfg, progress=False)
    assert h1.train_loss == h2.train_loss
    assert h1.val_loss[-1] < math.log(data.vocab_size) - 1.0


def test_coefficients_are_logged_at_every_evaluation():
    data = make_token_data(TEXT, "char", block_size=16)
    cfg = TrainConfig(steps=20, batch_size=4, eval_every=10, eval_batches=1)
    h = train(tiny_model(data.vocab_size, value_residual="learnable"), data, cfg, progress=False)
    assert set(h.coefficients) == {"blocks.1.value_residual.lambda_1", "blocks.1.value_residual.lambda_2"}
    assert all(len(v) == 2 for v in h.coefficients.values())


def test_training_on_a_synthetic_task_scores_only_answers():
    task = induction_copy(length=6, vocab_size=8)
    m = TinyGPT(TinyGPTConfig(vocab_size=8, d_model=32, n_layers=2, n_heads=2, block_size=task.block_size))
    h = train(m, task, TrainConfig(steps=5, batch_size=4, eval_every=5, eval_batches=2), progress=False)
    assert math.isfinite(h.val_loss[-1]) and 0 <= h.val_acc[-1] <= 1


def test_a_vertical_attention_checkpoint_saved_with_the_old_name_loads(tmp_path):
    """Vertical Attention's query projection was saved as ``depth.pseudo_query.*`` before it was renamed
    ``depth.query_proj.*``: such a checkpoint loads into the new model, tensor for tensor (a one-time migration)."""
    from safetensors.torch import load_file, save_file

    data = make_token_data(TEXT, "char", block_size=16)
    m = tiny_model(data.vocab_size, depth_mixer="vertical")
    with torch.no_grad():
        for w in m.depth.query_proj:
            w.weight.normal_()   # trained-looking weights: zeros would load as zeros whatever the keys
    path = save_checkpoint(tmp_path / "ck", m, data.tokenizer, {})
    state = load_file(path / "model.safetensors")
    old = {k.replace("depth.query_proj.", "depth.pseudo_query."): v for k, v in state.items()}
    assert any(k.startswith("depth.pseudo_query.") for k in old)
    save_file(old, path / "model.safetensors")
    m2, _, _ = load_checkpoint(path)
    for (name, p), (_, q) in zip(m.state_dict().items(), m2.state_dict().items()):
        assert torch.equal(p, q), name


def test_checkpoint_round_trip_and_mismatch_errors(tmp_path):
    data = make_token_data(TEXT, "char", block_size=16)
    m = tiny_model(data.vocab_size, x0_mode="qkv")
    path = save_checkpoint(tmp_path / "ck", m, data.tokenizer, {"note": "test"})
    m2, tok, meta = load_checkpoint(path)
    idx = data.train[:16][None]
    assert torch.equal(m(idx).logits, m2(idx).logits) and tok.vocab_size == data.vocab_size
    assert meta["note"] == "test"
    cfg = json.loads((path / "config.json").read_text())
    cfg["model"]["n_layers"] = 3
    (path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="does not match its config"):
        load_checkpoint(path)
    cfg["model"]["n_layers"] = 2
    cfg["model"]["vocab_size"] = data.vocab_size + 1
    (path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="vocab_size|does not match"):
        load_checkpoint(path)
    with pytest.raises(FileNotFoundError, match="no model.safetensors"):
        load_checkpoint(tmp_path)


# --- metrics ---------------------------------------------------------------------------------------------------

def _pattern(rows):
    return torch.tensor(rows, dtype=torch.float).view(1, 1, len(rows), len(rows))


def test_attention_entropy_extremes():
    T = 4
    assert metrics.attention_entropy(torch.eye(T).view(1, 1, T, T)).item() == pytest.approx(math.log(T))
    sink = torch.zeros(T, T)
    sink[:, 0] = 1
    assert metrics.attention_entropy(sink.view(1, 1, T, T)).item() == pytest.approx(0.0, abs=1e-6)


def test_sink_mass_and_value_norm_ratio():
    p = _pattern([[1, 0, 0], [0.5, 0.5, 0], [0.2, 0.4, 0.4]])
    assert metrics.sink_mass(p) == pytest.approx((0.5 + 0.2) / 2)
    v = torch.tensor([[0.0, 1.0], [3.0, 4.0], [0.0, 5.0]]).view(1, 1, 3, 2)
    assert metrics.sink_value_norm(v) == pytest.approx(1 / 5)


def test_oversmoothing_identical_and_orthogonal():
    same = torch.ones(1, 3, 4)
    assert metrics.oversmoothing(same) == pytest.approx(1.0)
    assert metrics.oversmoothing(torch.eye(4).view(1, 4, 4)) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="T >= 2"):
        metrics.oversmoothing(torch.ones(1, 1, 4))


def test_substitution_ablation_equals_the_hand_patched_loss():
    data = make_token_data(TEXT, "char", block_size=16)
    m = tiny_model(data.vocab_size)
    batches = list(data.eval_batches("val", 4, 2))
    assert len(batches) == 2   # two batches of equal size: each must be patched with its own x0
    res = metrics.substitution_ablation(m, batches)
    clean, patched = [], []
    for x, y in batches:
        x0 = m(x, trace=True).trace["x0"]
        clean.append(m(x, y).loss.item())
        patched.append(m(x, y, hooks={"blocks.1.attn.k_in": lambda t, x0=x0: x0}).loss.item())
    assert res["clean"][0] == pytest.approx(sum(clean) / 2, abs=1e-5)
    assert res["k"][1] == pytest.approx((sum(patched) - sum(clean)) / 2, abs=1e-5)
    assert len(res["q"]) == len(res["v"]) == 2
    for wrong in ([{}], {"blocks.1.attn.k_in": None, "blocks.0.attn.k_in": None}):   # 1 for 2 batches; a dict
        with pytest.raises(ValueError, match=r"hooks_per_batch must be a list of one hooks dict per batch \(2\)"):
            metrics.mean_loss(m, batches, hooks_per_batch=wrong)


def test_layer_metrics_have_one_value_per_layer():
    data = make_token_data(TEXT, "char", block_size=16)
    m = tiny_model(data.vocab_size)
    lm = metrics.layer_metrics(m, list(data.eval_batches("val", 4, 1)))
    assert [len(lm[k]) for k in ("entropy", "sink_mass", "sink_value_norm", "oversmoothing")] == [2, 2, 2, 3]


# --- command line ----------------------------------------------------------------------------------------------
# In this process, through cli.main(argv): these tests read exit codes, output and files, not how a new interpreter
# starts (test_cli_validation runs `python -m vrs_edu.cli` as a subprocess), so each saves an interpreter and torch.

def test_cli_train_writes_a_loadable_checkpoint(tmp_path, capsys):
    assert cli.main(["train", "--preset", "tiny", "--steps", "5", "--out", str(tmp_path / "ck")]) == 0
    assert "validation loss" in capsys.readouterr().out
    model, tok, meta = load_checkpoint(tmp_path / "ck")
    assert meta["train"]["steps"] == 5 and tok is not None


def test_cli_unknown_preset_is_a_clear_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["train", "--preset", "huge"])
    assert exit_.value.code == 2 and "unknown preset 'huge'" in capsys.readouterr().err


# --- exercise checkers -----------------------------------------------------------------------------------------

def test_checker_names_the_mistake_when_printing_and_when_raising(capsys):
    from vrs_edu.course.checks import CheckFailed
    from vrs_edu.course.exercises.ch00 import check_stream_norms

    squared = lambda s: s.pow(2).sum(-1).mean(dim=(1, 2))  # noqa: E731
    assert check_stream_norms(squared) is False
    assert "squared norm" in capsys.readouterr().out
    with pytest.raises(CheckFailed, match="squared norm"):
        check_stream_norms(squared, raise_on_fail=True)
    assert check_stream_norms(lambda s: s.norm(dim=-1).mean(dim=(1, 2)), seed=5) is True
    assert "public checks passed — hidden checks run when graded" in capsys.readouterr().out


def test_scaled_run_replaces_a_recipes_preset_and_applies_settings_last():
    from vrs_edu.lab.options import RunOptions
    from vrs_edu.lab.presets import make_run, scaled_run

    options = RunOptions(preset="tiny", settings={"steps": 3, "value_residual": "resformer"})
    preset, mcfg, tcfg = scaled_run("word-8x64", options, steps=240, eval_every=20)
    assert preset.name == "tiny" and mcfg.n_layers == 2 and tcfg.steps == 3 and tcfg.eval_every == 20
    assert mcfg.value_residual == "resformer"
    assert make_run("word-8x64")[1].n_layers == 8  # make_run(preset) is always that preset
    assert scaled_run("word-8x64", RunOptions())[0].name == "word-8x64"   # no --preset: the recipe's own
    with pytest.raises(ValueError, match="unknown preset 'huge'"):
        scaled_run("word-8x64", RunOptions(preset="huge"))


@pytest.mark.slow
def test_cli_reproduce_at_another_scale_records_it(tmp_path):
    assert cli.main(["reproduce", "char-6x64", "--quick", "--preset", "tiny", "--set", "steps=4", "--set",
                     "eval_every=2", "--out", str(tmp_path), "--device", "cpu"]) == 0
    result = json.loads((tmp_path / "char-6x64.quick.json").read_text())
    assert result["scale"]["preset"] == "tiny" and result["scale"]["settings"] == {"steps": 4, "eval_every": 2}
    # the recorded command remakes these numbers: the flags that change them are in it, where files went is not
    assert result["command"] == ("vrs-edu reproduce char-6x64 --quick --preset tiny --set steps=4 --set eval_every=2"
                                 " --device cpu")


def test_provenance_names_command_date_time_threads_and_seeds():
    from vrs_edu.lab.experiments import provenance

    full = {"command": "vrs-edu reproduce value-residual", "date": "2026-11-29T19:18:00+00:00", "wall_time_s": 856.9,
            "cpu_time_s": 1689.6, "environment": {"threads": 2}, "seeds": [0, 1, 2]}
    assert provenance(full) == ("made by `vrs-edu reproduce value-residual` on 2026-11-29:\n    14.3 min wall time, "
                                "28.2 CPU-minutes, 2 torch thread(s), seeds [0, 1, 2]")   # over 100 columns: 2 lines
    short = {"command": "vrs-edu reproduce x --quick", "date": "2026-01-02", "wall_time_s": 41.3,
             "environment": {"threads": 1}}  # under 2 minutes: seconds; no CPU time or seeds recorded: not printed
    assert provenance(short) == "made by `vrs-edu reproduce x --quick` on 2026-01-02: 41 s wall time, 1 torch thread(s)"
    with pytest.raises(KeyError):
        provenance({"wall_time_s": 1.0})


def test_provenance_of_a_parallel_run_with_five_seeds_fits_the_page():
    # the value-residual full run of 2026-11-30: 16 runs at a time, 5 seeds — one details line would be 102 columns
    from vrs_edu.lab.experiments import provenance

    r = {"command": "vrs-edu reproduce value-residual --device cpu", "date": "2026-11-30T21:00:00+00:00",
         "wall_time_s": 213.5, "cpu_time_s": 2652.0, "environment": {"threads": 16, "jobs": 16},
         "seeds": [0, 1, 2, 3, 4]}
    text = provenance(r)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "16 runs at a time, 1 torch thread each" in text.replace("\n    ", " ")
    assert text.splitlines()[-1] == "    seeds [0, 1, 2, 3, 4]"
