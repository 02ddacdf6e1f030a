"""Chapter 05's exercise, ShortSWA over depth for a whole depth stack (check_depth_swa_stack): the reference passes
on several seeds, each known mistake gets its own hint, and a learner's loop over layers passes and equals the
one-token read of the assignment on every token."""
import math

import torch

from vrs_edu.course.exercises import ch05
from vrs_edu.nn.shortswa import depth_short_swa

from exercise_spec import exercise_specs

EXERCISES = [(ch05.check_depth_swa_stack, ch05._ref_depth_swa_stack, ch05.STACK_MISTAKES)]
test_reference_passes, test_each_mistake_gets_its_own_hint = exercise_specs(EXERCISES)


def depth_swa_stack(X, window, w_q, w_k, w_v):
    """The chapter's worked solution: one layer at a time, every token at once."""
    out = []
    for l in range(X.size(0)):
        W = X[max(0, l - window + 1): l + 1]
        q = X[l] @ w_q.T
        k, v = W @ w_k.T, W @ w_v.T
        scores = torch.einsum("bte,kbte->btk", q, k) / math.sqrt(q.size(-1))
        a = scores.softmax(dim=-1)
        out.append(torch.einsum("btk,kbte->bte", a, v))
    return torch.stack(out)


def test_the_worked_solution_passes_and_is_the_one_token_read_on_every_token(capsys):
    assert ch05.check_depth_swa_stack(depth_swa_stack) is True
    assert "public checks passed" in capsys.readouterr().out
    g = torch.Generator().manual_seed(0)
    X, (wq, wk, wv) = torch.randn(7, 2, 3, 8, generator=g), torch.randn(3, 4, 8, generator=g).unbind(0)
    for K in (1, 2, 7, 9):                        # 7 and 9: the full window, every earlier layer
        z = depth_swa_stack(X, K, wq, wk, wv)
        assert torch.allclose(z, depth_short_swa(X, K, wq, wk, wv), atol=1e-5)
        for b in range(2):
            for t in range(3):
                assert torch.allclose(z[:, b, t], ch05._ref_depth_swa_one_token(X[:, b, t], K, wq, wk, wv),
                                      atol=1e-5)


def test_the_stub_gets_the_hint_and_is_not_graded(capsys):
    def stub(*args):
        raise NotImplementedError

    assert ch05.check_depth_swa_stack(stub) is False
    out = capsys.readouterr().out
    assert "not implemented yet" in out and "Hint: one layer l at a time" in out
    assert ch05.check_depth_swa_stack(ch05._ref_depth_swa_stack) is True
    assert "hidden checks" not in capsys.readouterr().out
