"""Every mode is one ``Literal`` type, and the tuple the validators read is derived from it.

A mode's names are written once, as a ``Literal`` in its mechanism's module (``ValueResidualMode`` in
``nn/value_residual.py``, ``X0Mode`` and ``X0Source`` in ``nn/x0.py``, ``DepthMixerName`` in ``nn/depth.py``,
``StreamStart`` in ``nn/model.py``, ``CoefOpt`` in ``lab/train.py``). The config field is annotated with it, the
module's tuple (``MODES``, ``SOURCES``, ``MIXERS``, ``COEF_OPTS``) is ``get_args`` of it, and the config validator
refuses any other value with a message that names the field.
"""
import typing

import pytest

from vrs_edu.cli_args import parse_setting
from vrs_edu.lab.train import COEF_OPTS, CoefOpt, TrainConfig
from vrs_edu.nn import depth, model, value_residual, x0
from vrs_edu.nn.model import STREAM_STARTS, StreamStart, TinyGPTConfig

# field, its Literal, the tuple the validator reads, the config class
CASES = [
    ("value_residual", value_residual.ValueResidualMode, value_residual.MODES, TinyGPTConfig),
    ("x0_mode", x0.X0Mode, x0.MODES, TinyGPTConfig),
    ("x0_source", x0.X0Source, x0.SOURCES, TinyGPTConfig),
    ("depth_mixer", depth.DepthMixerName, depth.MIXERS, TinyGPTConfig),
    ("stream_start", StreamStart, tuple(STREAM_STARTS), TinyGPTConfig),
    ("coef_opt", CoefOpt, COEF_OPTS, TrainConfig),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("field,literal,names,cls", CASES, ids=IDS)
def test_the_tuple_is_the_literal_and_the_field_is_annotated_with_it(field, literal, names, cls):
    assert typing.get_origin(literal) is typing.Literal
    assert names == typing.get_args(literal)
    assert typing.get_type_hints(cls)[field] == literal
    assert getattr(cls(), field) in names            # the default is one of the names


def test_the_known_names_by_hand():
    # Written out here, so that a name dropped from a Literal (and so from every validator) fails this test.
    assert value_residual.MODES == ("none", "resformer", "learnable", "svformer", "neutreno")
    assert x0.MODES == ("none", "qkv", "shared", "substitute_v", "bank", "scale_v")
    assert x0.SOURCES == ("token", "random", "previous")
    assert depth.MIXERS == ("residual", "denseformer", "elcbert", "attnres", "shortswa", "dca", "mudd", "vertical",
                            "attnres_qkv", "depth_attention", "scalar_gain")
    assert set(depth.ROUTERS) <= set(depth.MIXERS)
    assert tuple(model.STREAM_STARTS) == ("rmsnorm", "embedding")
    assert COEF_OPTS == ("course", "official")


@pytest.mark.parametrize("field,literal,names,cls", CASES, ids=IDS)
@pytest.mark.parametrize("bad", ["no_such_mode", "", "NONE", 3])
def test_the_validator_refuses_a_value_outside_the_literal_naming_the_field(field, literal, names, cls, bad):
    with pytest.raises(ValueError, match=rf"^{field} must be one of \(") as e:
        cls(**{field: bad}).validate()
    assert repr(bad) in str(e.value)


@pytest.mark.parametrize("field,literal,names,cls", CASES, ids=IDS)
def test_the_command_line_takes_each_name_and_refuses_others_naming_the_field(field, literal, names, cls):
    for name in names:
        assert parse_setting(f"{field}={name}") == (field, name)
    with pytest.raises(Exception, match=rf"{field} takes one of {', '.join(names)}, got 'no_such_mode'"):
        parse_setting(f"{field}=no_such_mode")
