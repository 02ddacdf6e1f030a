"""Chapter 04's exercise 4.2, the bank's per-token value table (``check_bank_table``): the reference passes on
several seeds, each known mistake gets its own hint, and the reference's table substituted for a toy model's V
gives the loss the chapter measures with it."""
import torch

from exercise_spec import exercise_specs
from vrs_edu.course.exercises import ch04

EXERCISES = [(ch04.check_bank_table, ch04._ref_bank_table, ch04.BANK_MISTAKES)]
test_reference_passes, test_each_mistake_gets_its_own_hint = exercise_specs(EXERCISES)


def test_a_table_of_the_values_own_tokens_explains_them_fully_and_the_fallback_is_the_mean():
    ids = torch.tensor([[0, 1, 1, 2], [2, 0, 0, 0]])
    mask = torch.tensor([[True, True, True, True], [True, True, False, False]])
    per_token = torch.randn(5, 2, 3)
    v = per_token[ids].permute(0, 2, 1, 3).clone()               # a value that is its token's row exactly
    v[1, :, 2:] = 100.0                                          # the padding's values must not count
    table, r2 = ch04._ref_bank_table(v, ids, mask, 5)
    assert r2 == 1.0 or abs(r2 - 1.0) < 1e-6
    assert torch.allclose(table[:3], per_token[:3], atol=1e-6)
    real = v.transpose(1, 2)[mask]                               # (6 real positions, H, Dh)
    assert torch.allclose(table[3], real.mean(0), atol=1e-6) and torch.allclose(table[4], table[3])


def test_the_table_substituted_for_v_runs_through_the_models_hook():
    from vrs_edu.nn import TinyGPT, TinyGPTConfig

    model = TinyGPT(TinyGPTConfig(vocab_size=30, n_layers=2, d_model=16, n_heads=2, block_size=8, seed=0))
    x = torch.randint(30, (3, 8), generator=torch.Generator().manual_seed(0))
    v = model(x, trace=True).trace["blocks.1.attn.v"]
    table, r2 = ch04._ref_bank_table(v, x, torch.ones_like(x, dtype=torch.bool), 30)
    assert 0.0 < r2 <= 1.0 + 1e-6
    swapped = model(x, x, hooks={"blocks.1.attn.v": lambda _: table[x].permute(0, 2, 1, 3)}).loss
    assert torch.isfinite(swapped) and swapped.item() != model(x, x).loss.item()   # context-free values differ
