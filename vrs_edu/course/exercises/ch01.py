"""Chapter 01 exercises: the residual stream as a running sum, direct logit attribution, and the direct and total
effect of one block.

``check_<name>(fn, *, seed=0, edges=False, **kw)``: seed 0 gives the public cases; graders call with other seeds
and ``edges=True`` (one position, the smallest widths, float64). Extra keyword arguments go to
:func:`vrs_edu.course.checks.check_function` (``raise_on_fail``, ``quiet``).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from vrs_edu.chapters.ch01_two_axes.readout import (block_outputs, direct_and_total_effects, logit_contributions,
                                                    residual_stack, unembed)
from vrs_edu.course.checks import Mistake, check_function, in_float64, random_inputs, strong_write_model
from vrs_edu.i18n.language import in_language, resolve_language
from vrs_edu.nn.model import TinyGPT

# --- exercise 1: the depth stack from the embedding and each block's write ------------------------------------

def _stack_cases(seed: int, edges: bool = False):
    # (L, B, T, D); the edges: one block, one token, D = 1, in float64
    shapes = [(1, 1, 1, 1), (2, 1, 1, 3), (4, 2, 1, 2)] if edges else [(3, 2, 4, 8), (6, 1, 5, 16), (1, 3, 3, 4)]
    cases = []
    for i, (L, B, T, D) in enumerate(shapes):
        emb, outs = random_inputs(1000 * seed + i, (B, T, D), (L, B, T, D))
        cases.append((emb, outs))
    return in_float64(cases) if edges else cases


def _exclusive(emb, outs):  # stack[l] = emb + Σ_{j<l-1}: the last block's write never arrives
    shifted = torch.cat([torch.zeros_like(outs[:1]), outs[:-1]])
    return torch.cat([emb[None], emb[None] + shifted.cumsum(0)])


STACK_MISTAKES = [
    Mistake(lambda e, o: torch.cat([e[None], e[None] + o]),
            "each state is the embedding plus only its own block's write: the stream is a *running* sum — state l "
            "holds the embedding and every write before it (cumsum over the block axis)"),
    Mistake(lambda e, o: torch.cat([e[None], o]),
            "you returned what each block wrote, not the state after it: add the writes up (cumsum over axis 0)"),
    Mistake(lambda e, o: torch.cat([e[None], o]).cumsum(0) / torch.arange(1, len(o) + 2).view(-1, 1, 1, 1),
            "you averaged the writes: the residual adds them with unit weights (a sum, not a mean)"),
    Mistake(_exclusive, "off by one: state l must include the writes of blocks 0..l-1, so the last state contains "
            "every block's write"),
    Mistake(lambda e, o: torch.cat([e[None], o]).cumsum(1),
            "the running sum goes over depth (axis 0 of the stack), not over the batch (axis 1)"),
    Mistake(lambda e, o: torch.cat([e[None], o.cumsum(0)]),
            "the later states lack the embedding: it stays in the stream at every depth (stack[l] = embedding + "
            "the writes of blocks 0..l-1)"),
]


# The Korean hints of each list of mistakes, in the list's order (the Korean edition's checker names the same ones).
STACK_HINTS_KO = [
    "각 상태가 임베딩에 자기 블록의 쓰기만 더한 것입니다. 스트림은 *누적* 합입니다. 상태 l은 임베딩과 그 앞의 모든 "
    "쓰기를 담습니다(블록 축에 대한 cumsum)",
    "각 블록이 쓴 것을 돌려주었습니다. 그 뒤의 상태가 아닙니다. 쓰기를 더해 나가세요(축 0에 대한 cumsum)",
    "쓰기를 평균했습니다. 잔차는 가중치 1로 더합니다(평균이 아니라 합)",
    "하나 어긋났습니다. 상태 l은 블록 0..l-1의 쓰기를 포함해야 하므로, 마지막 상태에는 모든 블록의 쓰기가 들어 있습니다",
    "누적 합은 배치(축 1)가 아니라 깊이(스택의 축 0)를 따라 구합니다",
    "뒤쪽 상태에 임베딩이 빠졌습니다. 임베딩은 모든 깊이에서 스트림에 남아 있습니다(stack[l] = embedding + 블록 "
    "0..l-1의 쓰기)",
]
DLA_HINTS_KO = [
    "각 성분을 자기 RMS로 정규화했습니다. RMSNorm은 선형이 아닙니다. 모든 성분을 최종 상태(성분들의 합)의 RMS, 즉 "
    "모델이 나누는 수 하나로 나누세요",
    "최종 RMSNorm을 빠뜨렸습니다. 로짓은 w_U · RMSNorm(h_L)이므로 h_L = components.sum(0)일 때 rms(h_L) = "
    "sqrt(mean(h_L**2) + eps)로 나누세요",
    "최종 상태의 L2 노름으로 나누었습니다. RMSNorm은 제곱*평균*제곱근, 즉 norm / sqrt(D)로 나눕니다",
    "평균 제곱으로 나누었습니다. 제곱근을 취하세요(RMS = sqrt(mean(h**2) + eps))",
    "성분들의 RMS의 평균으로 나누었습니다. 성분들의 *합*의 RMS로 나누세요",
]
EFFECT_HINTS_KO = [
    "총 효과가 직접 효과와 같습니다. 총 효과는 순전파 *안에서* 쓰기를 없애므로(blocks.{layer}.attn.out과 "
    "blocks.{layer}.mlp.out에 0을 돌려주는 훅), 뒤쪽 블록 모두가 바뀐 스트림을 읽습니다",
    "직접 효과가 총 효과와 같습니다. 직접 효과는 최종 상태에서만 쓰기를 빼고(trace['resid_final']에서 블록의 "
    "attn.out + mlp.out을 뺌), 그다음 모델의 읽기를 적용합니다",
    "부호가 뒤집혔습니다. 효과는 쓰기를 없앤 손실에서 원래 손실을 뺀 값입니다(블록이 도움이 되었다면 양수)",
    "두 효과 모두에서 어텐션의 쓰기만 없앴습니다. 블록은 attn.out + mlp.out을 쓰므로, 최종 상태에서 둘 다 빼고 "
    "순전파에서도 둘 다 0으로 만드세요",
    "총 효과에서 어텐션의 쓰기만 없앴습니다. 블록은 attn.out + mlp.out을 쓰므로 둘 다 0으로 만드세요",
    "총 효과에서 MLP의 쓰기만 없앴습니다. 블록은 attn.out + mlp.out을 쓰므로 둘 다 0으로 만드세요",
    "직접 효과에서 최종 RMSNorm 뒤에 쓰기를 뺐습니다. 먼저 최종 상태에서 빼고, 남은 것에 읽기(노름, 그다음 언임베딩)를 "
    "적용하세요",
    "직접 효과에서 최종 RMSNorm을 빠뜨렸습니다. 모델은 최종 상태를 lm_head(RMSNorm(h))로 읽으며, 이 장의 "
    "unembed(model, h)가 그렇게 합니다",
    "직접 효과와 총 효과가 바뀌었습니다. 최종 상태에서만 뺀 효과를 먼저, 즉 (direct, total)을 돌려주세요",
    "두 손실을 돌려주었습니다. 변화가 아닙니다. 각각에서 원래 손실 model(x, y).loss를 빼세요",
]


def _in_language(mistakes: list[Mistake], hints_ko: list[str], lang: str | None) -> list[Mistake]:
    """``mistakes`` with their hints in ``lang`` (default: the running edition): the Korean ones from ``hints_ko``."""
    if resolve_language(lang) == "en":
        return list(mistakes)
    if len(hints_ko) != len(mistakes):
        raise ValueError(f"hints_ko: expected one hint per mistake ({len(mistakes)}), got {len(hints_ko)}")
    return [Mistake(m.fn, hint) for m, hint in zip(mistakes, hints_ko)]


def check_residual_stack(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 01.1: ``fn(embedding (B, T, D), outputs (L, B, T, D)) -> (L+1, B, T, D)`` with
    ``stack[0] = embedding`` and ``stack[l] = embedding + outputs[0] + ... + outputs[l-1]``."""
    lang = kw.pop("lang", None)
    kw.setdefault("stub_hint", in_language(
        "put the embedding in front of the block outputs along a new depth axis, then take a running sum along that "
        "axis", "새 깊이 축을 따라 블록 출력 앞에 임베딩을 놓고, 그 축을 따라 누적 합을 구하세요", lang))
    return check_function(in_language("residual stack", "잔차 스택", lang), fn, residual_stack,
                          _stack_cases(seed, edges), _in_language(STACK_MISTAKES, STACK_HINTS_KO, lang), lang=lang,
                          **kw)


# --- exercise 2: direct logit attribution ----------------------------------------------------------------------

def _rms(x, eps=1e-6):
    return (x.pow(2).mean(-1, keepdim=True) + eps).sqrt()


def _dla_cases(seed: int, edges: bool = False):
    shapes = [(1, 1), (2, 5), (4, 3)] if edges else [(7, 8), (13, 16), (3, 32)]     # (N, D); edges in float64
    cases = []
    for i, (N, D) in enumerate(shapes):
        comps, w = random_inputs(1000 * seed + i, (N, D), (D,))
        comps = comps * torch.linspace(0.5, 2.0, N).view(-1, 1)   # components of different sizes, as in a model
        cases.append((comps, w))
    return in_float64(cases) if edges else cases


DLA_MISTAKES = [
    Mistake(lambda c, w: (c / _rms(c)) @ w,
            "you normalised every component by its own RMS: RMSNorm is not linear — divide every component by the "
            "RMS of the final state (their sum), the one number the model divides by"),
    Mistake(lambda c, w: c @ w,
            "you left out the final RMSNorm: the logit is w_U · RMSNorm(h_L), so divide by rms(h_L) = "
            "sqrt(mean(h_L**2) + eps) with h_L = components.sum(0)"),
    Mistake(lambda c, w: c @ w / c.sum(0).norm(),
            "you divided by the L2 norm of the final state: RMSNorm divides by its root-*mean*-square, "
            "norm / sqrt(D)"),
    Mistake(lambda c, w: c @ w / c.sum(0).pow(2).mean(),
            "you divided by the mean square: take its square root (RMS = sqrt(mean(h**2) + eps))"),
    Mistake(lambda c, w: c @ w / _rms(c).mean(),
            "you divided by the average of the components' RMS: divide by the RMS of their *sum*"),
]


def check_logit_contributions(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 01.2: ``fn(components (N, D), unembed (D,)) -> (N,)``: each component's share of the logit
    ``unembed · RMSNorm(components.sum(0))``; the shares add up to the logit."""
    kw.setdefault("atol", 1e-4)
    lang = kw.pop("lang", None)
    kw.setdefault("stub_hint", in_language(
        "the final state is the sum of the components; its RMS is one number, and every component's share is its "
        "dot product with the unembedding row divided by it",
        "최종 상태는 성분들의 합입니다. 그 RMS는 수 하나이며, 각 성분의 몫은 언임베딩 행과의 내적을 그 수로 나눈 "
        "것입니다", lang))
    return check_function(in_language("logit contributions", "로짓 기여", lang), fn, logit_contributions,
                          _dla_cases(seed, edges), _in_language(DLA_MISTAKES, DLA_HINTS_KO, lang), lang=lang, **kw)


# --- exercise 3: the direct and the total effect of one block ------------------------------------------------------

def block_effect(model, x, y, layer: int) -> tuple[float, float]:
    """The reference: ``(direct, total)``, the loss change in nats when block ``layer``'s write is removed from the
    final state only (direct) or inside the forward pass (total), from the chapter's
    :func:`~vrs_edu.chapters.ch01_two_axes.readout.direct_and_total_effects`."""
    r = direct_and_total_effects(model, [(x, y)])
    return r["direct"][layer], r["total"][layer]


def _effect_model(seed: int, n_layers: int) -> TinyGPT:
    # large writes, so that its blocks visibly build on each other
    return strong_write_model(seed, n_layers, stream_start="embedding")


def _effect_cases(seed: int, edges: bool = False):
    # (n_layers, layer): an early block (direct and total differ), the last (they are equal) and a middle one
    plan = [(1, 0), (2, 1), (3, 0)] if edges else [(3, 0), (3, 2), (4, 1)]
    cases = []
    for i, (L, layer) in enumerate(plan):
        g = torch.Generator().manual_seed(1000 * seed + i)
        x, y = torch.randint(13, (2, 1 if edges else 8), generator=g), torch.randint(13, (2, 1 if edges else 8),
                                                                                   generator=g)
        cases.append((_effect_model(1000 * seed + i, L), x, y, layer))
    return cases


def _zero_write(layer: int, parts=("attn.out", "mlp.out")) -> dict:
    return {f"blocks.{layer}.{p}": (lambda t: torch.zeros_like(t)) for p in parts}


def _loss(model, x, y, hooks=None) -> float:
    return model(x, y, hooks=hooks or {}).loss.item()


def _direct(model, x, y, layer):
    out = model(x, y, trace=True)
    final = out.trace["resid_final"] - block_outputs(out.trace)[layer]
    return F.cross_entropy(unembed(model, final).flatten(0, 1), y.flatten()).item() - out.loss.item()


def _total(model, x, y, layer):
    return _loss(model, x, y, _zero_write(layer)) - _loss(model, x, y)


def _direct_attention_only(model, x, y, layer):   # only the attention's write taken from the final state
    out = model(x, y, trace=True)
    final = out.trace["resid_final"] - out.trace.layers("attn.out")[layer]
    return F.cross_entropy(unembed(model, final).flatten(0, 1), y.flatten()).item() - out.loss.item()


def _direct_norm_unapplied(model, x, y, layer):   # (h_L - y_l) read out by the unembedding alone, no final norm
    out = model(x, y, trace=True)
    h = model.lm_head(out.trace["resid_final"] - block_outputs(out.trace)[layer])
    return F.cross_entropy(h.flatten(0, 1), y.flatten()).item() - out.loss.item()


def _direct_without_norm(model, x, y, layer):   # the write subtracted after the final norm, from the logits' input
    out = model(x, y, trace=True)
    h = unembed(model, out.trace["resid_final"]) - model.lm_head(block_outputs(out.trace)[layer])
    return F.cross_entropy(h.flatten(0, 1), y.flatten()).item() - out.loss.item()


EFFECT_MISTAKES = [
    Mistake(lambda m, x, y, l: (_direct(m, x, y, l), _direct(m, x, y, l)),
            "your total effect equals your direct effect: the total removes the write *inside* the forward pass "
            "(hooks on blocks.{layer}.attn.out and blocks.{layer}.mlp.out that return zeros), so that every later "
            "block reads the changed stream"),
    Mistake(lambda m, x, y, l: (_total(m, x, y, l), _total(m, x, y, l)),
            "your direct effect equals your total effect: the direct one subtracts the write from the final state "
            "only (trace['resid_final'] minus the block's attn.out + mlp.out), then applies the model's read-out"),
    Mistake(lambda m, x, y, l: (-_direct(m, x, y, l), -_total(m, x, y, l)),
            "the signs are flipped: an effect is the loss without the write minus the clean loss (positive when "
            "the block helped)"),
    Mistake(lambda m, x, y, l: (_direct_attention_only(m, x, y, l),
                                _loss(m, x, y, _zero_write(l, ("attn.out",))) - _loss(m, x, y)),
            "you removed only the attention's write, in both effects: a block writes attn.out + mlp.out, so "
            "subtract both from the final state and zero both in the forward pass"),
    Mistake(lambda m, x, y, l: (_direct(m, x, y, l), _loss(m, x, y, _zero_write(l, ("attn.out",))) - _loss(m, x, y)),
            "your total removes only the attention's write: a block writes attn.out + mlp.out, zero both"),
    Mistake(lambda m, x, y, l: (_direct(m, x, y, l), _loss(m, x, y, _zero_write(l, ("mlp.out",))) - _loss(m, x, y)),
            "your total removes only the MLP's write: a block writes attn.out + mlp.out, zero both"),
    Mistake(lambda m, x, y, l: (_direct_without_norm(m, x, y, l), _total(m, x, y, l)),
            "your direct effect subtracts the write after the final RMSNorm: subtract it from the final state "
            "first, then apply the read-out (norm, then unembedding) to what is left"),
    Mistake(lambda m, x, y, l: (_direct_norm_unapplied(m, x, y, l), _total(m, x, y, l)),
            "your direct effect leaves out the final RMSNorm: the model reads its final state as "
            "lm_head(RMSNorm(h)), which the chapter's unembed(model, h) does"),
    Mistake(lambda m, x, y, l: block_effect(m, x, y, l)[::-1],
            "direct and total are swapped: return (direct, total), the final-state-only effect first"),
    Mistake(lambda m, x, y, l: tuple(e + _loss(m, x, y) for e in block_effect(m, x, y, l)),
            "you returned the two losses, not their changes: subtract the clean loss model(x, y).loss from each"),
]


def check_block_effect(fn, *, seed: int = 0, edges: bool = False, **kw) -> bool:
    """Exercise 01.3: ``fn(model, x (B, T), y (B, T), layer) -> (direct, total)``, the loss changes in nats when
    block ``layer``'s write is removed from the final state only, and inside the forward pass. Edges: one-layer
    models and one-token sequences, where the two effects are equal."""
    kw.setdefault("atol", 1e-4)
    kw.setdefault("graded", False)   # no classroom assignment holds this exercise (yet): no hidden checks
    lang = kw.pop("lang", None)
    kw.setdefault("stub_hint", in_language(
        "two losses minus the clean one: the final state minus the block's write, read out with the model's own norm "
        "and unembedding; and a forward pass whose hooks zero the block's write",
        "다음 두 손실에서 각각 원래 손실을 뺍니다: (1) 최종 상태에서 블록의 쓰기를 빼고 모델 자신의 노름과 "
        "언임베딩으로 읽은 손실, (2) 훅으로 블록의 쓰기를 0으로 만든 순전파의 손실", lang))
    return check_function(in_language("block effect", "블록 효과", lang), fn, block_effect, _effect_cases(seed, edges),
                          _in_language(EFFECT_MISTAKES, EFFECT_HINTS_KO, lang), lang=lang, **kw)
