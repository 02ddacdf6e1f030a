"""Specifications of checkpoint/resume (vrs_edu.lab.train): an interrupted run, resumed from its last checkpoint,
ends exactly where an uninterrupted run with the same seed ends — same batches in the same order, same optimizer
moments — and a checkpoint refuses to resume a different run."""
import json

import pytest
import torch
from safetensors.torch import load_file, save_file

from vrs_edu import cli
from vrs_edu.lab.data import TokenData, associative_recall, make_token_data
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.train import TrainConfig, latest_checkpoint, load_checkpoint, run_key, train
from vrs_edu.nn import TinyGPT, TinyGPTConfig

TEXT = "the cat sat on the mat. the dog sat on the log. " * 40
CFG = TrainConfig(steps=12, batch_size=4, eval_every=4, eval_batches=2, warmup=3, decay_frac=0.5)


class Interrupted(Exception):
    """Stands in for a killed job (pre-emption, Ctrl-C, a time limit)."""


class InterruptingData(TokenData):
    """The same corpus, but the job "dies" when asked for batch number ``after + 1``."""

    def __init__(self, base: TokenData, after: int):
        super().__init__(base.train, base.val, base.tokenizer, base.block_size)
        self.calls, self.after = 0, after

    def batch(self, *args, **kwargs):
        self.calls += 1
        if self.calls > self.after:
            raise Interrupted
        return super().batch(*args, **kwargs)


def tiny_model(vocab, **kw):
    return TinyGPT(TinyGPTConfig(vocab_size=vocab, d_model=32, n_layers=2, n_heads=2, block_size=16, **kw))


@pytest.fixture(scope="module")
def data():
    return make_token_data(TEXT, "char", block_size=16)


@pytest.fixture(scope="module")
def straight(data):
    model = tiny_model(data.vocab_size, value_residual="learnable")
    return train(model, data, CFG, progress=False), model


def interrupt_then_resume(data, ckpt, stop_after=9, every=5):
    """Run until batch ``stop_after + 1`` is requested (checkpoint at step 5), then resume with a fresh model."""
    with pytest.raises(Interrupted):
        train(tiny_model(data.vocab_size, value_residual="learnable"), InterruptingData(data, stop_after), CFG,
              progress=False, checkpoint_dir=ckpt, checkpoint_every=every)
    resumed = tiny_model(data.vocab_size, value_residual="learnable")
    return train(resumed, data, CFG, progress=False, checkpoint_dir=ckpt, checkpoint_every=every, resume=True), resumed


def test_interrupt_and_resume_gives_the_same_run_as_a_straight_run(data, straight, tmp_path):
    (h_straight, m_straight) = straight
    h, m = interrupt_then_resume(data, tmp_path / "ck")
    # Steps 5..8 ran twice (before the interruption and after the resume); the history keeps the resumed ones.
    assert h.steps == list(range(CFG.steps))
    assert h.train_loss == h_straight.train_loss          # every step's loss, exactly: same batches, same moments
    assert h.val_loss == h_straight.val_loss and h.eval_steps == [4, 8, 12]
    assert h.coefficients == h_straight.coefficients
    for (name, a), b in zip(m_straight.state_dict().items(), m.state_dict().values()):
        assert torch.equal(a, b), name


def test_the_data_order_is_part_of_the_checkpoint(data, straight, tmp_path):
    # Control: put the generator back to its seed in the checkpoint, and the resumed run repeats the first batches
    # instead of continuing — its losses differ from the straight run's. So the test above would catch a resume
    # that forgot the generator state.
    ckpt = tmp_path / "ck"
    with pytest.raises(Interrupted):
        train(tiny_model(data.vocab_size, value_residual="learnable"), InterruptingData(data, 9), CFG,
              progress=False, checkpoint_dir=ckpt, checkpoint_every=5)
    rng = latest_checkpoint(ckpt) / "rng.safetensors"
    save_file({"generator": torch.Generator().manual_seed(CFG.seed).get_state()}, rng)
    h = train(tiny_model(data.vocab_size, value_residual="learnable"), data, CFG, progress=False,
              checkpoint_dir=ckpt, resume=True)
    assert h.train_loss[:5] == straight[0].train_loss[:5]
    assert h.train_loss[5:] != straight[0].train_loss[5:]


def test_the_checkpoint_holds_weights_optimizer_moments_and_generator(data, tmp_path):
    model = tiny_model(data.vocab_size)
    train(model, data, CFG, progress=False, checkpoint_dir=tmp_path, checkpoint_every=5)
    last = latest_checkpoint(tmp_path)
    assert last.name == "step-0000012" and sorted(p.name for p in tmp_path.glob("step-*")) == [last.name]
    moments = load_file(last / "optimizer.safetensors")
    n_params = len(list(model.parameters()))
    assert {k.split(".", 1)[1] for k in moments} == {"step", "exp_avg", "exp_avg_sq"}
    assert len(moments) == 3 * n_params
    assert float(moments["0.step"]) == CFG.steps
    state = json.loads((last / "state.json").read_text())
    assert state["step"] == 12 and state["history"]["steps"] == list(range(12))
    loaded, tok, meta = load_checkpoint(last)            # the weights are an ordinary checkpoint
    assert torch.equal(loaded.wte.weight, model.wte.weight) and tok.vocab_size == data.vocab_size


def test_resume_of_a_finished_run_trains_nothing_and_restores_it(data, tmp_path):
    model = tiny_model(data.vocab_size)
    h1 = train(model, data, CFG, progress=False, checkpoint_dir=tmp_path)
    again = tiny_model(data.vocab_size)
    h2 = train(again, data, CFG, progress=False, checkpoint_dir=tmp_path, resume=True)
    assert h2.train_loss == h1.train_loss and torch.equal(again.lm_head.weight, model.lm_head.weight)


def test_resume_works_for_masked_synthetic_tasks_too(tmp_path, monkeypatch):
    task = associative_recall(n_pairs=4, n_queries=2)
    cfg = TrainConfig(steps=8, batch_size=4, eval_every=4, eval_batches=2)
    make = lambda: TinyGPT(TinyGPTConfig(vocab_size=task.vocab_size, d_model=32, n_layers=2, n_heads=2,
                                         block_size=task.block_size))
    h_straight = train(make(), task, cfg, progress=False)
    real_make, calls = task.make, []

    def dies_at_batch_6(B, g):  # checkpoint at step 3, killed during step 6
        calls.append(B)
        if len(calls) > 5:
            raise Interrupted
        return real_make(B, g)

    monkeypatch.setattr(task, "make", dies_at_batch_6)
    with pytest.raises(Interrupted):
        train(make(), task, cfg, progress=False, checkpoint_dir=tmp_path, checkpoint_every=3)
    monkeypatch.setattr(task, "make", real_make)
    assert latest_checkpoint(tmp_path).name == "step-0000003"
    h = train(make(), task, cfg, progress=False, checkpoint_dir=tmp_path, resume=True)
    assert h.train_loss == h_straight.train_loss and h.val_acc == h_straight.val_acc


def test_a_checkpoint_refuses_to_resume_another_run(data, tmp_path):
    train(tiny_model(data.vocab_size), data, CFG, progress=False, checkpoint_dir=tmp_path)
    other = TrainConfig(**{**CFG.__dict__, "lr": 1e-3})
    with pytest.raises(ValueError, match=r"belongs to another run: \['train.lr: checkpoint 0.003 vs now 0.001'\]"):
        train(tiny_model(data.vocab_size), data, other, progress=False, checkpoint_dir=tmp_path, resume=True)
    with pytest.raises(ValueError, match=r"model.n_layers: checkpoint 2 vs now 3"):
        m = TinyGPT(TinyGPTConfig(vocab_size=data.vocab_size, d_model=32, n_layers=3, n_heads=2, block_size=16))
        train(m, data, CFG, progress=False, checkpoint_dir=tmp_path, resume=True)
    with pytest.raises(ValueError, match="resume=True needs a checkpoint_dir"):
        train(tiny_model(data.vocab_size), data, CFG, progress=False, resume=True)


def test_run_options_give_each_run_of_a_recipe_its_own_folder(data, tmp_path):
    # A recipe trains many runs; with a checkpoint root each gets a folder named by its description and a hash of
    # its configs and data, so a rerun with resume finds every run's own state.
    options = RunOptions(checkpoint_root=str(tmp_path), checkpoint_every=6)
    h_a = train(tiny_model(data.vocab_size), data, CFG, progress=False, desc="base s0", options=options)
    h_b = train(tiny_model(data.vocab_size, value_residual="resformer"), data, CFG, progress=False,
                desc="base s0", options=options)
    folders = sorted(p.name for p in tmp_path.iterdir())
    assert len(folders) == 2 and all(f.startswith("base-s0-") for f in folders)
    assert run_key(tiny_model(data.vocab_size), data, CFG, "base s0") in folders
    h_a2 = train(tiny_model(data.vocab_size), data, CFG, progress=False, desc="base s0",
                 options=RunOptions(checkpoint_root=str(tmp_path), resume=True))
    assert h_a2.train_loss == h_a.train_loss and h_a.train_loss != h_b.train_loss


def test_command_line_resume(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["train", "--preset", "tiny", "--steps", "6", "--device", "cpu", "--out", str(out)]
    assert cli.main(args + ["--checkpoint-every", "3"]) == 0
    first = json.loads((out / "config.json").read_text())["history"]
    assert latest_checkpoint(out / "training-state").name == "step-0000006"
    assert cli.main(args + ["--resume"]) == 0
    assert "resumed from step 6 of 6" in capsys.readouterr().out
    assert json.loads((out / "config.json").read_text())["history"]["train_loss"] == first["train_loss"]
    with pytest.raises(SystemExit):
        cli.main(["train", "--preset", "tiny", "--resume", "--bogus"])
    with pytest.raises(SystemExit) as exit_:   # refused before any work, with argparse's status 2
        cli.main(["train", "--preset", "tiny", "--resume"])
    assert exit_.value.code == 2
    assert "--resume and --checkpoint-every need --checkpoint-dir (or --out)" in capsys.readouterr().err


def _files(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_train_refuses_to_replace_a_run_unless_asked_to_and_then_says_what_it_replaces(tmp_path, capsys):
    # Before: `train --out DIR` on a folder holding a finished run replaced model.safetensors and deleted
    # training-state/step-0000005 without a word.
    out = tmp_path / "run"
    args = ["train", "--preset", "tiny", "--steps", "5", "--device", "cpu", "--quiet", "--out", str(out)]
    assert cli.main(args) == 0
    before = _files(out)
    assert "training-state/step-0000005/model.safetensors" in before
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        cli.main(args + ["--seed", "1"])
    assert exit_.value.code == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line == (f"vrs-edu train: error: argument --out: '{out}' holds a run (model.safetensors, config.json, "
                    "tokenizer.json, training-state/step-0000005); expected --resume to continue it or --force to "
                    "replace it, or another folder")
    assert _files(out) == before, "a refused command changed the run"
    with pytest.raises(SystemExit):
        cli.main(args + ["--resume", "--force"])
    assert "argument --force: replaces the run, --resume continues it" in capsys.readouterr().err
    assert cli.main(args + ["--seed", "1", "--force"]) == 0
    said = capsys.readouterr().out
    assert f"--force: replacing the run in {out}: model.safetensors, config.json, tokenizer.json, " \
           "training-state/step-0000005" in said
    after = _files(out)
    assert set(after) == set(before) and after["model.safetensors"] != before["model.safetensors"]
    assert json.loads(after["config.json"])["train"]["seed"] == 1


def test_a_checkpoint_dir_holding_a_training_state_is_not_restarted_silently(tmp_path, capsys):
    ckpt = tmp_path / "state"
    args = ["train", "--preset", "tiny", "--steps", "4", "--device", "cpu", "--quiet", "--checkpoint-dir", str(ckpt),
            "--checkpoint-every", "2"]
    assert cli.main(args) == 0
    with pytest.raises(SystemExit):
        cli.main(args)
    assert f"argument --checkpoint-dir: '{ckpt}' holds a run (step-0000004)" in capsys.readouterr().err
    assert cli.main(args + ["--resume"]) == 0


def _data_tree(root):
    return {str(p): p.stat().st_mtime_ns for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_reproduce_with_out_writes_nothing_into_the_repository(tmp_path, monkeypatch, capsys):
    # Before: `reproduce char-6x64 --quick --out DIR` wrote its model to the repository's
    # data/checkpoints/char-6x64.quick/ (and a full run its checkpoints to data/checkpoints/<recipe>...), whatever DIR.
    from vrs_edu.lab import experiments

    repo_data = experiments.CHECKPOINT_DIR.parent
    monkeypatch.chdir(tmp_path)   # the resume folder's default is relative to the working folder
    before = _data_tree(repo_data)
    out = tmp_path / "elsewhere"
    small = ["--set", "d_model=32", "--set", "batch_size=8"]   # where the files go does not depend on the width
    assert cli.main(["reproduce", "char-6x64", "--quick", "--out", str(out), "--device", "cpu", "--quiet",
                     "--checkpoint-every", "30", "--jobs", "1", *small]) == 0
    assert _data_tree(repo_data) == before, "a run sent elsewhere with --out wrote into data/"
    assert (out / "char-6x64.quick.json").exists()
    assert (out / "checkpoints" / "char-6x64.quick" / "model.safetensors").exists()
    assert list((out / "training-state").iterdir()), "the training state goes under --out too"
    assert not (tmp_path / "runs").exists()
    result = json.loads((out / "char-6x64.quick.json").read_text())
    assert result["checkpoint"] == str(out / "checkpoints" / "char-6x64.quick")
    # --checkpoint-dir, when given, takes the checkpoints (models and training state) instead
    ck = tmp_path / "ck"
    assert cli.main(["reproduce", "char-6x64", "--quick", "--out", str(out), "--device", "cpu", "--quiet",
                     "--checkpoint-dir", str(ck), "--jobs", "1", *small]) == 0
    assert (ck / "char-6x64.quick" / "model.safetensors").exists()
    assert _data_tree(repo_data) == before


def test_a_recipes_full_run_keeps_its_models_where_the_options_say(tmp_path, monkeypatch):
    # compare_variants writes the first seed's models of a full run; with RunOptions.models_dir they go there, not
    # into data/checkpoints/.
    from vrs_edu.lab import experiments

    monkeypatch.setattr(experiments, "CHECKPOINT_DIR", tmp_path / "repo-checkpoints")
    options = RunOptions(models_dir=str(tmp_path / "models"), settings={"steps": 2, "eval_every": 2,
                                                                        "eval_batches": 1}, progress=False)
    experiments.compare_variants("tiny", {"base": {}}, [0], metric_batches=1, checkpoint_as="ck", options=options)
    assert (tmp_path / "models" / "ck" / "base" / "model.safetensors").exists()
    assert not (tmp_path / "repo-checkpoints").exists()
