"""Exercise checkers: compare a learner's function with the reference on seeded random inputs, and when they
disagree, name the likely mistake.

The pattern (ARENA's): the learner writes ``def f(...)``, then calls ``check_<exercise>(f)``. The checker runs
``f`` and the reference on the same random inputs of several shapes. On a mismatch it tries each *known mistake*
(a deliberately wrong variant of the reference: mask in the wrong direction, missing scale, softmax over the wrong
axis...) and, if the learner's output matches one, prints that hint. For an exercise that is also a graded
assignment it ends with "public checks passed — hidden checks run when graded", so nobody mistakes local success for
the grade; the others end with "public checks passed".

A stub (a body of ``raise NotImplementedError`` or ``...``) is not an error: the checker says "not implemented yet"
and gives the exercise's first hint, so a chapter runs top to bottom before the learner has written anything.

With ``edges=True`` a checker runs its edge cases instead: one position (T = 1, where a causal mask leaves only
the diagonal), the smallest widths, and float64 inputs, whose dtype the result must keep. The assignments' hidden
checks use them (the public checks never do).

Every checker returns True/False and prints; with ``raise_on_fail=True`` (used by the grader) it raises
``CheckFailed`` instead. A printed message is wrapped to ``WIDTH`` (100) display columns at spaces, its continuation
lines indented by ``INDENT``, so a hint reads on the page without a sideways scroll; :func:`messages` joins a
printed message back into one line (the grader's report does).
"""
from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from vrs_edu.i18n.evidence import width
from vrs_edu.i18n.language import resolve_language
from vrs_edu.nn.model import TinyGPT, TinyGPTConfig

PASSED = "public checks passed — hidden checks run when graded"
PASSED_UNGRADED = "public checks passed"
WIDTH = 100       # columns of every printed check message (the course's page width)
INDENT = "    "   # the continuation lines of a wrapped message
MARKS = ("✗", "✓")
# check_function's own messages in each edition (a Mistake's hint is the chapter's, in its exercises module). The
# marks ✓/✗ and the checker's name stay, so that :func:`messages` and the grader read both editions alike.
MESSAGES = {
    "en": {"passed": PASSED, "passed_ungraded": PASSED_UNGRADED,
           "stub": "not implemented yet — write your code in place of the stub's body", "hint": "Hint",
           "case": "case {i}: {msg} [inputs: {inputs}]", "raised": "raised {error}",
           "dtype": "the result is {got} where the reference's is {expected}: compute in the inputs' dtype (no "
                    ".float(), no new tensor made without their dtype)",
           "shape": "expected a {expected}, got a {got}",
           "nan": "{n} of {total} values are NaN where the reference has none (a softmax over a row whose every "
                  "score is -inf gives NaN)",
           "differ": "values differ from the reference (largest difference {diff})",
           "value": "expected {expected}, got {got}", "tensor": "tensor of shape {shape}", "module": "a {name}"},
    "ko": {"passed": "공개 검사를 통과했습니다 — 숨은 검사는 채점할 때 실행됩니다", "passed_ungraded": "공개 검사를 통과했습니다",
           "stub": "아직 구현하지 않았습니다 — 스텁의 본문 자리에 코드를 작성하세요", "hint": "힌트",
           "case": "사례 {i}: {msg} [입력: {inputs}]", "raised": "예외가 발생했습니다: {error}",
           "dtype": "결과는 {got}인데 참조 구현은 {expected}입니다: 입력의 dtype으로 계산하세요 (.float()를 쓰지 "
                    "말고, 새 텐서도 입력의 dtype으로 만드세요)",
           "shape": "기대한 것은 {expected}, 받은 것은 {got}입니다",
           "nan": "값 {total}개 중 {n}개가 NaN인데 참조 구현에는 NaN이 없습니다 (모든 점수가 -inf인 행에 softmax를 "
                  "적용하면 NaN이 나옵니다)",
           "differ": "값이 참조 구현과 다릅니다 (최대 차이 {diff})",
           "value": "기대한 값은 {expected}, 받은 값은 {got}입니다", "tensor": "모양 {shape}의 텐서",
           "module": "{name} 모델"},
}


def wrap(message: str, columns: int = WIDTH) -> str:
    """``message`` wrapped at spaces to ``columns`` display columns; each of its lines (a hint is one) starts a new
    line, and every line after the first is indented by :data:`INDENT`. Words and numbers are never split (a single
    word longer than the line stays whole). Columns are counted as a terminal or the notebook's monospace output
    shows them (:func:`vrs_edu.i18n.evidence.width`): a Hangul syllable takes two, a control character none, so a
    Korean hint breaks where the page ends, not past it (``textwrap`` counts characters)."""
    lines: list[str] = []
    for part in message.split("\n"):
        line = ""
        for word in part.split():
            start = line or (INDENT if lines else "")
            joined = f"{start} {word}" if line else start + word
            if line and width(joined) > columns:
                lines.append(line)
                line = INDENT + word
            else:
                line = joined
        if line:
            lines.append(line)
    return "\n".join(lines)


def messages(printed: str) -> list[str]:
    """The check messages in ``printed`` (a checker's output), each joined back into one line: a line that starts
    with ✗ or ✓ opens a message, the indented lines after it continue it."""
    out: list[str] = []
    for line in printed.splitlines():
        if line.startswith(MARKS):
            out.append(line.strip())
        elif out and line.startswith(INDENT) and line.strip():
            out[-1] += " " + line.strip()
    return out


class CheckFailed(AssertionError):
    """A learner's function disagrees with the reference; the message holds the hint."""


#: A text of a checker in both editions: a plain string (the same in both), a pair ``(english, korean)``, or a
#: function of the edition (``"en"``/``"ko"``) returning the text. Names, stub hints and mistakes' hints take it.
Text = str | tuple[str, str] | Callable[[str], str]


def localized(text: Text, lang: str | None = None) -> str:
    """``text`` (a :data:`Text`) in ``lang`` (None: the running notebook's edition)."""
    lang = resolve_language(lang)
    if isinstance(text, tuple):
        if len(text) != 2:
            raise ValueError(f"text: expected a pair (english, korean), got {len(text)} items")
        return text[1] if lang == "ko" else text[0]
    return text(lang) if callable(text) else text


@dataclass
class Mistake:
    """A known wrong variant of the reference, and what to tell a learner whose output matches it (a
    :data:`Text`: one string, or the pair ``(english, korean)``)."""

    fn: Callable
    hint: Text


def with_hints(mistakes: Sequence[Mistake], hints_ko: Sequence[str]) -> list[Mistake]:
    """``mistakes`` whose hints become the pairs (their English hint, the Korean one of ``hints_ko``, in the same
    order): an exercise module keeps its English list (the tests read it) and gives the checker this one."""
    if len(hints_ko) != len(mistakes):
        raise ValueError(f"hints_ko: expected one hint per mistake ({len(mistakes)}), got {len(hints_ko)}")
    return [Mistake(m.fn, (localized(m.hint, "en"), ko)) for m, ko in zip(mistakes, hints_ko)]


def _close(a, b, atol: float) -> bool:
    # equal_nan: a mistake that produces NaN (a fully masked softmax row) must still be recognised as that mistake
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(_close(x, y, atol) for x, y in zip(a, b))
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        try:
            return abs(float(a) - float(b)) <= atol
        except (TypeError, ValueError):
            return False
    return a.shape == b.shape and torch.allclose(a.float(), b.float(), atol=atol, rtol=1e-4, equal_nan=True)


def _describe(x, lang: str = "en") -> str:
    if isinstance(x, torch.Tensor):
        return MESSAGES[lang]["tensor"].format(shape=tuple(x.shape))
    return type(x).__name__


def _case_inputs(reference: Callable, args: tuple, lang: str = "en") -> str:
    """The inputs of a failed case, named as the reference names its parameters, so the learner can rerun it:
    ``n_layers=8, variant='bank', x=tensor of shape (2, 5)``. Long reprs are cut at 40 characters."""
    try:
        names = list(inspect.signature(reference).parameters)
    except (TypeError, ValueError):   # a builtin without a signature: number the arguments
        names = []
    parts = []
    for j, a in enumerate(args):
        # a model prints as its class, not as its multi-line module tree
        text = _describe(a, lang) if isinstance(a, torch.Tensor) else \
            MESSAGES[lang]["module"].format(name=type(a).__name__) if isinstance(a, torch.nn.Module) else repr(a)
        parts.append(f"{names[j] if j < len(names) else f'arg{j}'}={text if len(text) <= 40 else text[:37] + '...'}")
    return ", ".join(parts)


def check_function(name: Text, student: Callable, reference: Callable, inputs: Sequence[tuple],
                   mistakes: Sequence[Mistake] = (), atol: float = 1e-5, raise_on_fail: bool = False,
                   quiet: bool = False, stub_hint: Text = "", graded: bool = True, lang: str | None = None) -> bool:
    """Run ``student(*args)`` and ``reference(*args)`` for every ``args`` in ``inputs`` and compare.

    Returns True when every case matches. Prints (and, with ``raise_on_fail``, raises) the first disagreement with
    a hint: "not implemented yet" with ``stub_hint`` for a stub (it raises NotImplementedError, whose own message
    wins when it has one, or returns None), a known mistake it matches, a shape problem, NaN where the reference
    has none, or the largest difference. ``graded``: whether hidden checks of this exercise run in an assignment
    (it decides the closing line). ``lang``: the edition of the messages (None: the running notebook's); ``name``,
    ``stub_hint`` and the mistakes' hints are :data:`Text`, so each edition reads its own.
    """
    lang = resolve_language(lang)
    say = MESSAGES[lang]
    name, stub_hint = localized(name, lang), localized(stub_hint, lang)

    def not_written(detail: str) -> bool:
        hint = detail or stub_hint
        return fail(say["stub"] + (f".\n{say['hint']}: {hint}" if hint else ""))

    def fail(msg: str) -> bool:
        text = f"✗ {name}: {msg}"
        if raise_on_fail:
            raise CheckFailed(" ".join(text.split()))
        print(wrap(text))
        return False

    def fail_case(i: int, args: tuple, msg: str) -> bool:   # names the inputs, so the learner can rerun the case
        return fail(say["case"].format(i=i, msg=msg, inputs=_case_inputs(reference, args, lang)))

    for i, args in enumerate(inputs):
        expected = reference(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
        try:
            got = student(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
        except NotImplementedError as e:
            return not_written(str(e))
        except Exception as e:  # the learner's code may raise anything; report it, don't crash the notebook
            return fail_case(i, args, say["raised"].format(error=f"{type(e).__name__}: {e}"))
        if got is None and expected is not None:   # a body of `...` or `pass`
            return not_written("")
        if _close(got, expected, atol):
            if isinstance(expected, torch.Tensor) and isinstance(got, torch.Tensor) and got.dtype != expected.dtype:
                return fail_case(i, args, say["dtype"].format(got=got.dtype, expected=expected.dtype))
            continue
        for m in mistakes:   # before the shape message: a known mistake may change the shape (averaged over depth)
            try:
                matches = _close(got, m.fn(*args), atol)
            except Exception:  # a mistake variant that cannot run on these inputs simply does not match
                matches = False
            if matches:
                return fail_case(i, args, localized(m.hint, lang))
        if isinstance(expected, torch.Tensor) and (not isinstance(got, torch.Tensor) or got.shape != expected.shape):
            return fail_case(i, args, say["shape"].format(expected=_describe(expected, lang),
                                                          got=_describe(got, lang)))
        if isinstance(expected, torch.Tensor) and got.isnan().any() and not expected.isnan().any():
            return fail_case(i, args, say["nan"].format(n=int(got.isnan().sum()), total=got.numel()))
        if isinstance(expected, torch.Tensor):
            diff = (got.float() - expected.float()).abs().max().item()
            return fail_case(i, args, say["differ"].format(diff=f"{diff:.3g}"))
        return fail_case(i, args, say["value"].format(expected=repr(expected), got=repr(got)))
    if not quiet:
        print(wrap(f"✓ {name}: {say['passed'] if graded else say['passed_ungraded']}"))
    return True


def in_float64(cases: Sequence[tuple]) -> list[tuple]:
    """``cases`` with every floating-point tensor in float64: a graded edge case (a function that hard-codes float32,
    ``.float()`` or a float32 constant tensor, returns the wrong dtype)."""
    return [tuple(a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in case)
            for case in cases]


def random_inputs(seed: int, *shapes: tuple[int, ...]) -> tuple[torch.Tensor, ...]:
    """Standard-normal tensors of the given shapes from a generator seeded with ``seed``."""
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(*s, generator=g) for s in shapes)


def strong_write_model(seed: int, n_layers: int, **config) -> TinyGPT:
    """The checkers' model for an exercise asked of a model (chapters 01 and 09): a TinyGPT with 13 tokens, width
    16, 2 heads and 8 positions whose block weights are 20 x the GPT-2 init, so that a block's write, or a swap
    inside it, visibly changes the loss. ``config``: other TinyGPTConfig fields (e.g. ``stream_start``)."""
    model = TinyGPT(TinyGPTConfig(vocab_size=13, d_model=16, n_layers=n_layers, n_heads=2, block_size=8, seed=seed,
                                  **config))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.startswith("blocks."):
                p.mul_(20.0)
    return model.eval()
