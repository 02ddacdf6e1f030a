"""The fused fast path (``F.scaled_dot_product_attention``) and the explicit, hooked path compute the same model.

Known input: one small TinyGPT per variant, built twice from the same seed (identical weights), one of them with the
fast path forbidden. Expected: the same logits and the same gradient for every parameter, up to fp32 rounding, for
every value-residual mode, every x0 mode and every depth mixer the config accepts.
"""
import itertools

import pytest
import torch
import torch.nn.functional as F

from vrs_edu.nn import TinyGPT, TinyGPTConfig
from vrs_edu.nn import depth, value_residual, x0
from vrs_edu.nn.attention import set_fast_path

SMALL = dict(vocab_size=40, d_model=32, n_layers=3, n_heads=2, block_size=16)


def accepted(**over):
    try:
        return TinyGPTConfig(**SMALL, **over).validate()
    except ValueError:
        return None   # a refused combination: tests/test_config_combinations.py checks why


COMBOS = [dict(value_residual=v, x0_mode=m, depth_mixer=d)
          for v, m, d in itertools.product(value_residual.MODES, x0.MODES, depth.MIXERS)]


def loss_and_grads(model, idx):
    out = model(idx, idx)
    model.zero_grad(set_to_none=True)
    out.loss.backward()
    return out.logits.detach(), {n: p.grad for n, p in model.named_parameters()}


def perturb(model, seed=1):
    """Move every parameter off its init (zero gates, unit coefficients) so that every path carries a signal."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=g))
    return model


@pytest.mark.parametrize("over", COMBOS, ids=lambda o: "-".join(o.values()))
def test_fast_and_explicit_paths_agree(over):
    cfg = accepted(**over)
    if cfg is None:
        pytest.skip("combination refused by TinyGPTConfig.validate")
    idx = torch.randint(SMALL["vocab_size"], (2, 12), generator=torch.Generator().manual_seed(0))
    fast = perturb(TinyGPT(cfg))
    slow = set_fast_path(perturb(TinyGPT(cfg)), False)
    logits_f, grads_f = loss_and_grads(fast, idx)
    logits_s, grads_s = loss_and_grads(slow, idx)
    torch.testing.assert_close(logits_f, logits_s, atol=1e-5, rtol=1e-4)
    for name, g in grads_s.items():
        if g is None:
            assert grads_f[name] is None, name
        else:
            torch.testing.assert_close(grads_f[name], g, atol=1e-5, rtol=1e-4, msg=lambda m: f"{name}: {m}")


def count_fused_calls(monkeypatch):
    calls = []
    real = F.scaled_dot_product_attention

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(F, "scaled_dot_product_attention", counting)
    return calls


def test_fused_kernel_runs_only_when_nobody_listens(monkeypatch):
    calls = count_fused_calls(monkeypatch)
    m = TinyGPT(TinyGPTConfig(**SMALL))
    idx = torch.zeros(1, 8, dtype=torch.long)
    m(idx)
    assert len(calls) == SMALL["n_layers"]            # training forward: one fused call per layer
    calls.clear()
    tr = m(idx, trace=True).trace
    assert calls == [] and tr["blocks.1.attn.pattern"].shape == (1, 2, 8, 8)
    m(idx, hooks={"blocks.0.mlp.out": lambda t: t})    # any patch: explicit path everywhere
    assert calls == []
    m.blocks[0].attn.temperature = 2.0                 # chapter 02's knob: only the explicit path has it
    m(idx)
    assert len(calls) == SMALL["n_layers"] - 1
    set_fast_path(m, False)
    calls.clear()
    m(idx)
    assert calls == []


def test_temperature_is_honoured_without_hooks():
    """temperature != 1 takes the explicit path: the logits equal those of the explicit path at that temperature."""
    idx = torch.randint(40, (1, 8), generator=torch.Generator().manual_seed(0))
    m = perturb(TinyGPT(TinyGPTConfig(**SMALL)))
    ref = set_fast_path(perturb(TinyGPT(TinyGPTConfig(**SMALL))), False)
    at_one = ref(idx).logits
    for model in (m, ref):
        model.blocks[1].attn.temperature = 4.0
    torch.testing.assert_close(m(idx).logits, ref(idx).logits, atol=1e-5, rtol=1e-4)
    assert (ref(idx).logits - at_one).abs().max() > 1e-3   # the knob moves the logits far more than the tolerance
