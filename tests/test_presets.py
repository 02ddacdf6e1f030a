"""Specifications of the presets (vrs_edu.lab.presets): every preset is valid, impossible sizes fail with a message
naming the fields, and the sizes in the README's table come from formulas checked here by hand."""
import pytest

from vrs_edu.lab import presets as P
from vrs_edu.lab.presets import PRESETS, Preset, make_run
from vrs_edu.nn import TinyGPT, TinyGPTConfig
from vrs_edu.nn.attention import set_fast_path


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_builds_a_valid_model_and_training_config(name):
    p, mcfg, tcfg = make_run(name)
    assert mcfg.d_model % mcfg.n_heads == 0 and tcfg.steps >= 1
    assert P.model_for(p).num_params() > 0          # on the meta device: shapes only, no memory


def test_paper_scale_follows_the_papers_smallest_12_layer_shape_at_about_100M_parameters():
    p, mcfg, _ = make_run("paper-12x768")
    assert (mcfg.n_layers, mcfg.d_model, mcfg.n_heads, p.tokenizer) == (12, 768, 12, "bpe")
    # By hand: 12 blocks x (4 D^2 attention + 8 D^2 MLP) + 2 x V x D untied embedding and head
    #        = 12 x 12 x 768^2 + 2 x 8192 x 768 = 84,934,656 + 12,582,912 = 97,517,568.
    assert P.model_for(p).num_params() == 97_517_568


@pytest.mark.parametrize("override, message", [
    (dict(n_heads=3), r"d_model=64 is not divisible by n_heads=3"),
    (dict(d_model=100, n_heads=8), r"d_model=100 is not divisible by n_heads=8"),
    (dict(depth_mixer="shortswa", depth_window=14), r"depth_window K=14 must be in 1..n_layers \+ 1 = 1..13"),
    (dict(depth_mixer="shortswa", depth_window=0), r"depth_window K=0 must be in 1..n_layers \+ 1"),
    (dict(depth_window=4), r"depth_window applies only to depth_mixer='shortswa', not 'residual'"),
    (dict(depth_mixer="sideways"), r"depth_mixer must be one of"),
    (dict(d_model=96, n_heads=32), r"head dim d_model/n_heads = 3 must be even for RoPE"),
    (dict(n_layers=0), r"n_layers must be a positive integer, got 0"),
    (dict(steps=0), r"steps must be >= 1, got 0"),
    (dict(batch_size=0), r"batch_size must be >= 1, got 0"),
    (dict(eval_every=0), r"eval_every must be an integer >= 1, got 0"),
    (dict(eval_batches=0), r"eval_batches must be >= 1 or None"),
    (dict(lr=-1.0), r"lr must be > 0, got -1.0"),
    (dict(coef_lr=0), r"coef_lr must be > 0, got 0"),
])
def test_impossible_overrides_fail_in_make_run_naming_the_fields(override, message):
    with pytest.raises(ValueError, match=message):
        make_run("word-12x64", **override)


def test_a_window_of_exactly_depth_plus_one_is_the_full_memory_limit_and_allowed():
    _, mcfg, _ = make_run("word-12x64", depth_mixer="shortswa", depth_window=13)
    assert mcfg.depth_window == 13


def test_a_bad_preset_fails_where_it_is_defined():
    with pytest.raises(ValueError, match=r"preset 'bad': d_model=100 is not divisible by n_heads=8"):
        Preset("bad", "word", 2048, dict(d_model=100, n_layers=2, n_heads=8), dict(steps=10), "never runs")
    with pytest.raises(ValueError, match=r"preset 'bad': tokenizer must be one of"):
        Preset("bad", "sentencepiece", 2048, dict(d_model=64, n_layers=2, n_heads=4), dict(), "never runs")
    with pytest.raises(ValueError, match=r"preset 'bad': vocab_size must be >= 16 for a bpe tokenizer"):
        Preset("bad", "bpe", 0, dict(d_model=64, n_layers=2, n_heads=4), dict(), "never runs")


def test_training_flops_follow_6_N_plus_attention():
    # D=32, L=2, V=16, T=8: N_matmul = 2 x 12 x 32^2 + 16 x 32 = 25,088 (the embedding is a lookup, not counted);
    # attention adds 2 L T D = 1,024 per token; 6 x B T x (25,088 + 1,024) with B=4, T=8.
    m = TinyGPT(TinyGPTConfig(vocab_size=16, d_model=32, n_layers=2, n_heads=2, block_size=8))
    assert P.train_flops_per_step(m, 4) == 6 * 4 * 8 * (25_088 + 1_024)


def test_activation_memory_is_measured_and_grows_with_the_sequence():
    m = TinyGPT(TinyGPTConfig(vocab_size=16, d_model=32, n_layers=2, n_heads=2, block_size=32))
    a16, a32 = P.activation_bytes(m, 16, bf16=False), P.activation_bytes(m, 32, bf16=False)
    explicit = set_fast_path(TinyGPT(m.cfg), False)   # the hooked path: softmax(QKᵀ)V written out
    e16, e32 = P.activation_bytes(explicit, 16, bf16=False), P.activation_bytes(explicit, 32, bf16=False)
    # At least the fp32 logits kept for the loss (T x V x 4 bytes) and, on the explicit path, each block's (H, T, T)
    # attention pattern, which makes it grow faster than linearly in T.
    assert e16 >= 16 * 16 * 4 + 2 * 2 * 16 * 16 * 4
    assert e32 > 2 * e16 * 0.99
    assert a16 >= 16 * 16 * 4 and a32 < e32   # the fused kernel (training's path) keeps no T x T pattern
    assert all(p.grad is None for p in m.parameters())
    mem = P.training_memory(m, batch_size=8, world_size=2, act_bytes_per_seq=a32)
    assert mem["states"] == 16 * m.num_params() and mem["activations"] == 4 * a32


def test_time_estimates_are_flops_over_assumed_throughput():
    # 1e15 FLOP/step x 100 steps on a 400 TFLOP/s GPU at 25 % utilisation = 1e17 / 1e14 = 1000 s;
    # on 4 GPUs at 90 % scaling efficiency: 1000 / (4 x 0.9) s.
    assert P.estimated_seconds(1e15, 100, 400.0, mfu=0.25) == pytest.approx(1000.0)
    assert P.estimated_seconds(1e15, 100, 400.0, n_gpus=4, mfu=0.25, scaling=0.9) == pytest.approx(1000 / 3.6)


def test_the_command_line_sets_any_field_and_reports_impossible_ones(capsys):
    from vrs_edu import cli

    assert cli._parse_settings(["value_residual=resformer", "x0_layers=[1, 2]", "lr=0.001"]) == \
        {"value_residual": "resformer", "x0_layers": (1, 2), "lr": 0.001}
    # Refused while the arguments are read, before any work: argparse's exit status 2 and an error line naming the argument.
    for argv, message in [(["--set", "n_heads=3"], "d_model=32 is not divisible by n_heads=3"),
                          (["--set", "n_heads"], "argument --set: 'n_heads' is not KEY=VALUE")]:
        with pytest.raises(SystemExit) as exit_:
            cli.main(["train", "--preset", "tiny", *argv])
        assert exit_.value.code == 2
        assert message in capsys.readouterr().err
