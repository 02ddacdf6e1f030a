"""Specifications of device selection and precision (vrs_edu.lab.device) and of train()'s device/compile options.

Written to hold on any machine: where a test needs "a machine without a GPU" (or with one) it says so by
monkeypatching what PyTorch reports, so CI with or without a GPU checks the same logic.
"""
import pytest
import torch

from vrs_edu import cli
from vrs_edu.lab import device as dev
from vrs_edu.lab.data import make_token_data
from vrs_edu.lab.options import RunOptions
from vrs_edu.lab.train import TrainConfig, train
from vrs_edu.nn import TinyGPT, TinyGPTConfig

TEXT = "the cat sat on the mat. the dog sat on the log. " * 40


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)


@pytest.fixture
def two_gpus(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: True)
    monkeypatch.delenv("LOCAL_RANK", raising=False)


def test_auto_picks_the_cpu_on_a_machine_without_a_gpu(no_gpu):
    assert dev.resolve_device("auto") == torch.device("cpu")
    assert dev.resolve_device(None) == torch.device("cpu")


def test_auto_picks_cuda_when_there_is_one_and_never_mps(two_gpus, monkeypatch):
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert dev.resolve_device("auto") == torch.device("cuda", 0)


def test_bare_cuda_under_torchrun_is_this_ranks_own_gpu(two_gpus, monkeypatch):
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert dev.resolve_device("cuda") == torch.device("cuda", 1)
    assert dev.resolve_device("cuda:0") == torch.device("cuda", 0)
    with pytest.raises(ValueError, match="cuda:2 was asked for, but this machine has 2 CUDA device"):
        dev.resolve_device("cuda:2")


def test_asking_for_cuda_without_a_gpu_is_a_clear_error(no_gpu):
    with pytest.raises(ValueError, match="'cuda' was asked for, but PyTorch sees no CUDA GPU"):
        dev.resolve_device("cuda")


def test_mps_only_when_asked_and_with_a_warning(monkeypatch, no_gpu):
    with pytest.raises(ValueError, match="no Apple MPS device"):
        dev.resolve_device("mps")
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert dev.resolve_device("auto") == torch.device("cpu")
    with pytest.warns(dev.DeviceWarning, match="may differ from the CPU numbers"):
        assert dev.resolve_device("mps") == torch.device("mps")


@pytest.mark.parametrize("bad", ["gpu", "tpu", "cuda:x", "cpu:1", ""])
def test_unknown_device_names_list_the_choices(bad):
    with pytest.raises(ValueError, match=r"device must be one of \('auto', 'cpu', 'cuda', 'mps'\)"):
        dev.resolve_device(bad)


def test_bf16_autocast_on_cuda_and_fp32_elsewhere(two_gpus):
    assert dev.autocast_dtype(torch.device("cuda", 0)) == torch.bfloat16
    assert dev.autocast_dtype(torch.device("cuda", 0), "fp32") is None
    assert dev.autocast_dtype(torch.device("cpu")) is None
    with pytest.raises(ValueError, match="'bf16' needs a CUDA GPU"):
        dev.autocast_dtype(torch.device("cpu"), "bf16")
    with pytest.raises(ValueError, match="precision must be one of"):
        dev.autocast_dtype(torch.device("cpu"), "fp16")


def test_the_command_line_refuses_cuda_without_a_gpu(no_gpu, capsys):
    code = cli.main(["train", "--preset", "tiny", "--steps", "1", "--device", "cuda"])
    assert code == 2
    assert "PyTorch sees no CUDA GPU" in capsys.readouterr().err


def _tiny(vocab):
    return TinyGPT(TinyGPTConfig(vocab_size=vocab, d_model=32, n_layers=2, n_heads=2, block_size=16))


def test_train_on_an_explicit_cpu_device_matches_the_default_and_leaves_the_model_home():
    data = make_token_data(TEXT, "char", block_size=16)
    cfg = TrainConfig(steps=4, batch_size=4, eval_every=2, eval_batches=1)
    h_default = train(_tiny(data.vocab_size), data, cfg, progress=False)
    model = _tiny(data.vocab_size)
    h_cpu = train(model, data, cfg, progress=False, device="cpu", precision="fp32")
    assert h_cpu.train_loss == h_default.train_loss and h_cpu.val_loss == h_default.val_loss
    assert next(model.parameters()).device == torch.device("cpu")


def test_compile_is_off_by_default_and_an_option_that_keeps_the_numbers():
    # The "eager" backend runs Dynamo's captured graphs without code generation (inductor takes over a minute to
    # compile on 2 cores): the same ops, so the same losses.
    data = make_token_data(TEXT, "char", block_size=16)
    cfg = TrainConfig(steps=3, batch_size=4, eval_every=3, eval_batches=1)
    h_plain = train(_tiny(data.vocab_size), data, cfg, progress=False)
    torch._dynamo.reset()
    h_compiled = train(_tiny(data.vocab_size), data, cfg, progress=False, options=RunOptions(compile="eager"))
    assert h_compiled.train_loss == pytest.approx(h_plain.train_loss, abs=1e-6)


def test_run_options_rejects_unknown_names_and_cannot_be_changed():
    with pytest.raises(TypeError, match="unexpected keyword argument 'gpu'"):
        RunOptions(gpu=True)
    options = RunOptions(device="cpu")
    with pytest.raises(AttributeError):   # frozen: a callee cannot change what its caller passes on
        options.device = "cuda"
