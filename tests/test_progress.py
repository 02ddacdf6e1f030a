"""Progress bars can be switched off: tqdm's documented environment switch (TQDM_DISABLE=1) works for every bar the
package draws, and the commands that draw bars take --quiet / --no-progress."""
import re
from pathlib import Path

import pytest
import torch

from vrs_edu import cli
from vrs_edu.lab.data import induction_copy
from vrs_edu.lab.progress import bars_disabled
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.train import TrainConfig, train
from vrs_edu.nn import TinyGPT, TinyGPTConfig

PACKAGE = Path(__file__).resolve().parents[1] / "vrs_edu"
BAR = "%|"   # what every text tqdm bar draws between its percentage and the bar itself


def _train_a_few_steps(**kw) -> None:
    task = induction_copy(length=6, vocab_size=8)
    torch.manual_seed(0)
    m = TinyGPT(TinyGPTConfig(vocab_size=8, d_model=16, n_layers=1, n_heads=2, block_size=task.block_size))
    train(m, task, TrainConfig(steps=3, batch_size=2, eval_every=3, eval_batches=1), **kw)


def test_train_draws_its_bar_by_default(monkeypatch, capsys):
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    _train_a_few_steps()
    assert BAR in capsys.readouterr().err      # the control for the tests below: the bar is there to switch off


def test_TQDM_DISABLE_switches_trains_bar_off(monkeypatch, capsys):
    monkeypatch.setenv("TQDM_DISABLE", "1")
    _train_a_few_steps()                       # progress=True, the default
    assert BAR not in capsys.readouterr().err


def test_run_options_progress_false_switches_every_trains_bar_off(monkeypatch, capsys):
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    _train_a_few_steps(progress=True, options=RunOptions(progress=False))   # a recipe's ask; --quiet wins
    assert BAR not in capsys.readouterr().err


@pytest.mark.parametrize("env, show, disabled", [
    (None, True, False), (None, False, True), ("1", True, True), ("", True, False),
    ("0", True, True),    # tqdm itself reads any non-empty value as "disable" (bool("0") is True): so do we
])
def test_bars_disabled_reads_the_variable_as_tqdm_does(monkeypatch, env, show, disabled):
    if env is None:
        monkeypatch.delenv("TQDM_DISABLE", raising=False)
    else:
        monkeypatch.setenv("TQDM_DISABLE", env)
    assert bars_disabled(show) is disabled


@pytest.mark.parametrize("flag", ["--quiet", "--no-progress"])
def test_commands_that_train_take_the_quiet_flag(flag):
    p = cli.build_parser()
    assert p.parse_args(["train", flag]).quiet is True
    assert p.parse_args(["reproduce", "value-residual", flag]).quiet is True
    assert p.parse_args(["train"]).quiet is False


def test_train_command_with_quiet_draws_no_bar(monkeypatch, capsys):
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    assert cli.main(["train", "--preset", "tiny", "--steps", "3", "--device", "cpu", "--quiet"]) == 0
    out = capsys.readouterr()
    assert BAR not in out.err and "validation loss" in out.out
    assert cli.main(["train", "--preset", "tiny", "--steps", "3", "--device", "cpu"]) == 0
    assert BAR in capsys.readouterr().err      # the same command without the flag does draw it


def test_every_bar_in_the_package_goes_through_progress_bar():
    """A bar made with tqdm directly would decide ``disable`` on its own: the switch would not reach it."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "progress.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"^\s*(from|import)\s+tqdm\b|\btqdm(\.\w+)*\(", line.split("#")[0]):
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{n}: {line.strip()}")
    assert not offenders, "use vrs_edu.lab.progress.progress_bar instead:\n" + "\n".join(offenders)
