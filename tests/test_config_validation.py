"""TinyGPTConfig.validate() is the one place that refuses an invalid model config, before any module is built.

Known input: for every field of TinyGPTConfig, values of each kind it cannot take (wrong type, out of range,
unknown mode). Expected: ``TinyGPTConfig(**{field: value}).validate()`` itself raises a ValueError whose message
names the field, states what it allows, and shows the value given. A field added to the config without invalid
cases here fails ``test_every_field_has_invalid_cases``.
"""
import dataclasses
import math

import pytest

from vrs_edu.lab.presets import make_run
from vrs_edu.nn import TinyGPT, TinyGPTConfig

SIZE = ["a positive integer", 0, -1, 2.0, "64", True, None]
MODE = ["one of", "foo", "", None, 1]
BOOL = ["True or False", 1, "yes", None]

# field -> [what the message says it allows, invalid values...]; the other fields keep their (valid) defaults.
INVALID = {
    "vocab_size": SIZE,
    "d_model": SIZE,
    "n_layers": SIZE,
    "n_heads": SIZE + [3, 128],   # 3 does not divide 64; 128 heads of width 0.5
    "block_size": SIZE,
    "mlp_ratio": SIZE,
    "value_residual": MODE + ["ResFormer"],
    "neutreno_lambda": ["a finite number", math.nan, math.inf, "0.4", None, True],
    "x0_mode": MODE + ["QKV"],
    "x0_layers": ["layer indices in 0..5", (6,), (-1,), (1, 1), (2.0,), "5", 5, (True,)],
    "depth_mixer": MODE + ["hyper"],
    "depth_window": ["applies only to depth_mixer='shortswa'", 2],   # on the default residual mixer
    "tie_embeddings": BOOL,
    "stream_start": MODE + ["layernorm"],
    "qk_norm": BOOL,
    "x0_source": MODE + ["bigram"],
    "k_eq_v": BOOL,
    "kv_share": ["one donor layer per layer", (0, 0), (0, 0, 1, 1, 4, 4), (1, 1, 2, 3, 4, 5), (0, 0, 2, 2, 4, 6),
                 "0", 3, (0, 0, 2, 2, 4, 4.0), (0, 0, 2, 2, 4, True)],
    "value_embed": BOOL,
    "layer_embed": ["an integer >= 0", -1, 2.0, "8", None, True],
    "hyper_connections": ["an integer in 0..16", -1, 17, 4.0, "4", None, True],
    "hc_kind": MODE + ["HC"],
    "xsa": BOOL,
    "mlp_hidden": ["None (mlp_ratio · d_model) or a positive integer", 0, -1, 2.0, "64", True],
    "seed": ["an integer", 1.5, "0", None, True],
}

CASES = [(name, value, cases[0]) for name, cases in INVALID.items() for value in cases[1:]]


def test_every_field_has_invalid_cases():
    assert set(INVALID) == {f.name for f in dataclasses.fields(TinyGPTConfig)}


@pytest.mark.parametrize("name, value, allowed", CASES, ids=[f"{n}={v!r}" for n, v, _ in CASES])
def test_validate_refuses_every_invalid_value_naming_field_allowed_and_given(name, value, allowed):
    cfg = TinyGPTConfig(**{name: value})
    with pytest.raises(ValueError) as e:
        cfg.validate()
    message = str(e.value)
    assert name in message or (name == "n_heads" and "d_model/n_heads" in message), message
    assert allowed in message or "divisible" in message or "even for RoPE" in message, message
    assert repr(value) in message or str(value) in message, message


@pytest.mark.parametrize("over, message", [
    (dict(depth_mixer="shortswa", depth_window=0), r"depth_window K=0 must be in 1..n_layers \+ 1 = 1..7"),
    (dict(depth_mixer="shortswa", depth_window=8), r"depth_window K=8 must be in 1..n_layers \+ 1 = 1..7"),
    (dict(depth_mixer="shortswa", depth_window=2.0), r"depth_window K=2.0 must be in"),
    (dict(x0_mode="qkv", x0_layers=()), r"x0_layers must name at least one layer for x0_mode='qkv'"),
    (dict(d_model=96, n_heads=32), r"head dim d_model/n_heads = 3 must be even for RoPE \(n_heads in \[1, 2, 3, "),
    (dict(x0_source="random"), r"x0_source='random' needs an x0_mode that reads x0"),
])
def test_validate_refuses_values_that_depend_on_other_fields(over, message):
    with pytest.raises(ValueError, match=message):
        TinyGPTConfig(**over).validate()


def test_the_defaults_and_edge_values_pass():
    assert TinyGPTConfig().validate() == TinyGPTConfig()
    for over in (dict(depth_mixer="shortswa", depth_window=7), dict(depth_mixer="shortswa", depth_window=2),
                 dict(x0_mode="qkv", x0_layers=[0, 5]), dict(x0_layers=(5,)), dict(neutreno_lambda=0),
                 dict(seed=-3), dict(n_heads=32)):
        TinyGPTConfig(**over).validate()


def test_the_model_and_the_presets_refuse_with_the_same_message():
    # The case of the issue: depth_mixer="foo" used to pass validate() and fail later inside TinyGPT.
    with pytest.raises(ValueError) as by_validate:
        TinyGPTConfig(depth_mixer="foo").validate()
    with pytest.raises(ValueError) as by_model:
        TinyGPT(TinyGPTConfig(depth_mixer="foo"))
    with pytest.raises(ValueError) as by_preset:
        make_run("tiny", depth_mixer="foo")
    assert str(by_model.value) == str(by_validate.value) and str(by_validate.value) in str(by_preset.value)
