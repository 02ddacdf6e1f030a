"""The minimal implementations that are the subject of the course. Imports nothing from the rest of vrs_edu."""
from vrs_edu.nn.attention import CausalSelfAttention, attend, attention_pattern, causal_mask
from vrs_edu.nn.depth import make_depth_mixer
from vrs_edu.nn.depth_mixer import DepthRead
from vrs_edu.nn.hooks import HookPoints
from vrs_edu.nn.layers import RoPE, SeededInit, rms_norm
from vrs_edu.nn.model import Block, ModelOutput, TinyGPT, TinyGPTConfig, Trace
from vrs_edu.nn.shortswa import depth_short_swa, short_swa
from vrs_edu.nn.value_residual import ValueResidual, mix_values
from vrs_edu.nn.x0 import X0Injection, inject_x0

__all__ = [
    "CausalSelfAttention", "attend", "attention_pattern", "causal_mask", "DepthRead", "depth_short_swa",
    "make_depth_mixer", "short_swa", "HookPoints", "RoPE", "SeededInit", "rms_norm", "Block", "ModelOutput",
    "TinyGPT", "TinyGPTConfig", "Trace", "ValueResidual", "mix_values", "X0Injection", "inject_x0",
]
