"""The minimal implementations that are the subject of the course. Imports nothing from the rest of vrs_edu."""
from .attention import CausalSelfAttention, attend, attention_pattern, causal_mask
from .depth import DepthRead, depth_short_swa, make_depth_mixer, short_swa
from .hooks import HookPoints
from .layers import RoPE, SeededInit, rms_norm
from .model import Block, ModelOutput, TinyGPT, TinyGPTConfig, Trace
from .value_residual import ValueResidual, mix_values
from .x0 import X0Injection, inject_x0

__all__ = [
    "CausalSelfAttention", "attend", "attention_pattern", "causal_mask", "DepthRead", "depth_short_swa",
    "make_depth_mixer", "short_swa", "HookPoints", "RoPE", "SeededInit", "rms_norm", "Block", "ModelOutput",
    "TinyGPT", "TinyGPTConfig", "Trace", "ValueResidual", "mix_values", "X0Injection", "inject_x0",
]
