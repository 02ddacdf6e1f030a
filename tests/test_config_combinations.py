"""Every configuration either works as described or is refused, naming both settings (issue 18, kind 4).

Known input: a 3-layer TinyGPT for value_residual × x0_mode × depth_mixer combinations. Expected: either
``TinyGPTConfig.validate`` raises a ValueError that names both conflicting settings, or every parameter of the built
model gets a nonzero gradient within three Adam steps (zero-initialised gates open after one step: MUDD's and DCA's
gamma, ShortSWA's and Vertical Attention's zero projections).

Validation is checked on every combination (it trains nothing). Training is checked on a pairwise sample
(:data:`PAIRWISE`): every pair of two settings' values occurs in it, so a part that two settings together leave
dead is found; the full product (330 trained models) took minutes of every test run.
"""
import itertools

import pytest
import torch

from vrs_edu.nn import TinyGPT, TinyGPTConfig
from vrs_edu.nn import depth, value_residual, x0

SMALL = dict(vocab_size=24, d_model=16, n_layers=3, n_heads=2, block_size=8)
IDX = torch.randint(24, (4, 8), generator=torch.Generator().manual_seed(0))
COMBOS = list(itertools.product(value_residual.MODES, x0.MODES, depth.MIXERS))


def pairwise(a: tuple, b: tuple, c: tuple) -> list[tuple]:
    """A covering sample of a × b × c in which every pair of values of two of the factors occurs: one row per
    (b, c) pair, with a's value ``a[(i + j) % len(a)]`` (i, j the indices of b's and c's values). For a fixed b value
    j runs over all of c, and for a fixed c value i over all of b, so each walks through all of a as long as
    len(b), len(c) >= len(a)."""
    if min(len(b), len(c)) < len(a):
        raise ValueError(f"the second and third factors need at least {len(a)} values, got {len(b)} and {len(c)}")
    return [(a[(i + j) % len(a)], y, z) for i, y in enumerate(b) for j, z in enumerate(c)]


PAIRWISE = pairwise(value_residual.MODES, x0.MODES, depth.MIXERS)


def dead_parameters(model: TinyGPT, steps: int = 3) -> list[str]:
    """Names of the parameters whose gradient stayed exactly zero (or None) at every one of ``steps`` steps."""
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    alive = set()
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        model(IDX, IDX).loss.backward()
        alive |= {n for n, p in model.named_parameters() if p.grad is not None and p.grad.abs().sum() > 0}
        opt.step()
    return [n for n, _ in model.named_parameters() if n not in alive]


def settings_named(message: str, vr: str, mode: str, mixer: str) -> int:
    """How many of the three settings the message names as ``name='value'``."""
    return sum(f"{k}={v!r}" in message for k, v in
               (("value_residual", vr), ("x0_mode", mode), ("depth_mixer", mixer)))


def test_the_pairwise_sample_holds_every_pair_of_two_settings():
    pairs = {(k, x, y) for row in PAIRWISE for k, (x, y) in enumerate(itertools.combinations(row, 2))}
    wanted = {(k, x, y) for k, (f, g) in enumerate(itertools.combinations(
        (value_residual.MODES, x0.MODES, depth.MIXERS), 2)) for x in f for y in g}
    assert pairs == wanted and len(PAIRWISE) == len(x0.MODES) * len(depth.MIXERS) < len(COMBOS)
    assert pairwise((1, 2), ("a", "b"), ("x", "y")) == [(1, "a", "x"), (2, "a", "y"), (2, "b", "x"), (1, "b", "y")]
    with pytest.raises(ValueError, match="at least 3 values"):
        pairwise((1, 2, 3), ("a", "b"), ("x", "y", "z"))


def test_every_combination_is_accepted_or_refused_naming_both_settings():
    for vr, mode, mixer in COMBOS:
        try:
            TinyGPTConfig(**SMALL, value_residual=vr, x0_mode=mode, depth_mixer=mixer).validate()
        except ValueError as e:
            assert settings_named(str(e), vr, mode, mixer) == 2, str(e)


@pytest.mark.parametrize("vr,mode,mixer", PAIRWISE, ids=lambda v: str(v))
def test_every_accepted_combination_trains_every_parameter(vr, mode, mixer):
    cfg = TinyGPTConfig(**SMALL, value_residual=vr, x0_mode=mode, depth_mixer=mixer)
    try:
        cfg.validate()
    except ValueError:
        pytest.skip("refused (the test above checks the message)")
    assert dead_parameters(TinyGPT(cfg)) == []


def test_the_reproduction_svformer_with_a_bank_is_refused():
    with pytest.raises(ValueError, match=r"value_residual='svformer' with x0_mode='bank' on layers \[3\]"):
        TinyGPTConfig(vocab_size=50, d_model=32, n_layers=4, n_heads=2, block_size=16, value_residual="svformer",
                      x0_mode="bank").validate()


@pytest.mark.parametrize("mode", [m for m in x0.MODES if m not in ("none", "bank")])
def test_svformer_with_x0_on_layer_zero_only_works(mode):
    """Layer 0 computes V_1 itself, so x0 there reaches every layer through V_1: accepted, and nothing is dead."""
    cfg = TinyGPTConfig(**SMALL, value_residual="svformer", x0_mode=mode, x0_layers=(0,))
    assert dead_parameters(TinyGPT(cfg)) == []


@pytest.mark.parametrize("over,named", [
    ({"value_residual": "resformer", "n_layers": 1}, "value_residual='resformer' with n_layers=1"),
    ({"depth_mixer": "shortswa", "depth_window": 1}, "depth_mixer='shortswa' with depth_window=1"),
])
def test_settings_that_would_change_nothing_are_refused(over, named):
    with pytest.raises(ValueError, match=named.replace("(", r"\(").replace(")", r"\)")):
        TinyGPTConfig(**{**SMALL, **over}).validate()


def test_shortswa_window_two_learns_every_projection():
    assert dead_parameters(TinyGPT(TinyGPTConfig(**SMALL, depth_mixer="shortswa", depth_window=2))) == []


@pytest.mark.parametrize("vr,mode,mixer", [c for c in PAIRWISE if c[2] in depth.ROUTERS], ids=lambda v: str(v))
def test_every_stream_a_router_builds_reaches_the_loss(vr, mode, mixer):
    """A router's weights for Q, K, V (and r) are slices of shared parameters, so a dead stream does not show as a
    parameter without gradient: here every hooked depth weight must itself move the loss."""
    cfg = TinyGPTConfig(**SMALL, value_residual=vr, x0_mode=mode, depth_mixer=mixer)
    try:
        cfg.validate()
    except ValueError:
        pytest.skip("refused (the test above checks the message)")
    model = TinyGPT(cfg)
    names = [n for n in model(IDX, trace=True).trace.names() if n.startswith("depth.")]
    kept = {}

    def keep(name):
        def fn(t):
            t.retain_grad()
            kept[name] = t
            return t
        return fn
    model(IDX, IDX, hooks={n: keep(n) for n in names}).loss.backward()
    assert [n for n, t in kept.items() if t.grad is None or t.grad.abs().sum() == 0] == []
