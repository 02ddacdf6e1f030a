"""A hook's edit changes exactly the tensor it was given and what is computed from it; a recorded trace never changes.

Known input: small models, one forward pass per hook point with the same edit made two ways — on a copy
(``t = t.clone(); t.mul_(0.5)``) and in place (``t.mul_(0.5)``). Expected: the two passes give identical logits and
identical traces, and the model's parameters are untouched (a depth mixer's weights hook is handed its parameter).
Before the fix, q_in, k_in and v_in were one tensor (an in-place edit of one moved the others and the logits), block
0's resid_pre was the embedding, an SVFormer layer's v was layer 0's V_1, and a trace kept views of live tensors.
"""
import pytest
import torch

from vrs_edu.nn import TinyGPT, TinyGPTConfig
from vrs_edu.nn.bert import BertConfig, MiniBert

SMALL = dict(vocab_size=40, d_model=32, n_layers=3, n_heads=2, block_size=16)
CONFIGS = {
    "baseline": {},
    "svformer": {"value_residual": "svformer"},
    "learnable": {"value_residual": "learnable"},
    "x0-qkv": {"x0_mode": "qkv"},
    "denseformer": {"depth_mixer": "denseformer"},
    "dca": {"depth_mixer": "dca"},
    "mudd": {"depth_mixer": "mudd"},
}


def copy_edit(t):
    t = t.clone()
    t.mul_(0.5)
    return t


def in_place_edit(t):
    t.mul_(0.5)
    return t


def params(model):
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def assert_same_pass(a, b, what):
    assert torch.equal(a[0], b[0]), f"{what}: outputs differ"
    assert a[1].keys() == b[1].keys()
    for name in a[1]:
        assert torch.equal(a[1][name], b[1][name]), f"{what}: trace {name} differs"


def gpt_pass(model, idx, hooks):
    out = model(idx, trace=True, hooks=hooks)
    return out.logits, out.trace.tensors


@pytest.mark.parametrize("variant", CONFIGS)
@torch.no_grad()
def test_in_place_and_copy_edits_agree_at_every_hook_point(variant):
    model = TinyGPT(TinyGPTConfig(**SMALL, **CONFIGS[variant]))
    idx = torch.randint(40, (2, 10), generator=torch.Generator().manual_seed(0))
    before = params(model)
    for name in gpt_pass(model, idx, None)[1]:
        a = gpt_pass(model, idx, {name: copy_edit})
        b = gpt_pass(model, idx, {name: in_place_edit})
        assert_same_pass(a, b, name)
        for n, p in model.named_parameters():
            assert torch.equal(p, before[n]), f"an in-place edit at {name} changed parameter {n}"


@torch.no_grad()
def test_q_in_edit_leaves_k_in_and_v_in_alone():
    """The reproduction: an in-place edit of Q's input must not reach K's and V's (they read the same stream)."""
    model = TinyGPT(TinyGPTConfig(**SMALL))
    idx = torch.randint(40, (2, 10), generator=torch.Generator().manual_seed(0))
    clean = model(idx, trace=True).trace
    tr = model(idx, trace=True, hooks={"blocks.2.attn.q_in": in_place_edit}).trace
    assert torch.equal(tr["blocks.2.attn.k_in"], clean["blocks.2.attn.k_in"])
    assert torch.equal(tr["blocks.2.attn.v_in"], clean["blocks.2.attn.v_in"])
    assert torch.equal(tr["blocks.2.attn.q_in"], 0.5 * clean["blocks.2.attn.q_in"])


def test_a_recorded_trace_never_changes():
    """Neither a training step on the parameters nor an in-place edit of one recorded tensor changes the others."""
    model = TinyGPT(TinyGPTConfig(**SMALL, depth_mixer="denseformer"))
    idx = torch.randint(40, (2, 10), generator=torch.Generator().manual_seed(0))
    tr = model(idx, trace=True).trace
    saved = {k: v.clone() for k, v in tr.tensors.items()}
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)
    tr["blocks.1.attn.q_in"].zero_()
    tr["embed"].zero_()
    for name, t in tr.tensors.items():
        if name not in ("blocks.1.attn.q_in", "embed"):
            assert torch.equal(t, saved[name]), name


def bert_pass(model, ids, mask, hooks):
    out = model(ids, mask, trace=True, hooks=hooks)
    return out.hidden, out.trace.tensors


@torch.no_grad()
def test_mini_bert_hooks_do_not_alias():
    model = MiniBert(BertConfig(vocab_size=50, d_model=32, n_layers=2, n_heads=2, d_mlp=64, max_positions=16)).eval()
    ids = torch.randint(50, (2, 8), generator=torch.Generator().manual_seed(0))
    mask = torch.ones(2, 8, dtype=torch.bool)
    before = params(model)
    for name in bert_pass(model, ids, mask, None)[1]:
        assert_same_pass(bert_pass(model, ids, mask, {name: copy_edit}),
                         bert_pass(model, ids, mask, {name: in_place_edit}), name)
    for n, p in model.named_parameters():
        assert torch.equal(p, before[n]), n
