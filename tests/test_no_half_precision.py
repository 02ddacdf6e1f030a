"""No chapter and no real-decoder recipe computes in half precision (issue 34).

bfloat16 and float16 CPU kernels round differently per instruction set (AMX, AVX512-BF16 or neither), so a chapter
output computed in them differs from machine to machine and nbval fails on some CPUs; chapter 08 once printed
"2.25 -> 3.00 nats" on one CPU and "2.24 -> 3.01" on another. Float32 everywhere a chapter or the real-decoder
recipe computes.

The check reads source text: a *cast* or a half-precision *mode* is flagged (``torch.bfloat16``, ``torch.float16``,
``torch.half``, ``.half()``, ``.bfloat16()``, ``autocast``, a dtype given as the string ``"bfloat16"`` /
``"float16"``); the bare word in prose ("float16" in a sentence about KV-cache bytes) is not. Comments are not
code, and are skipped.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9]*.py"))
RECIPE = ROOT / "vrs_edu" / "chapters" / "ch08_real_decoder" / "recipe.py"

HALF = re.compile(r"torch\.(bfloat16|float16|half)\b"           # the dtypes
                  r"|\.(half|bfloat16)\s*\("                     # the casting methods
                  r"|\bautocast\b"                               # torch.autocast / torch.cpu.amp.autocast
                  r"|dtype\s*=\s*[\"'](bfloat16|float16|half)[\"']"   # a dtype named by a string
                  r"|getattr\(\s*torch\s*,")                     # a dtype looked up by name (could be any)


def half_precision_lines(source: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of every code line of ``source`` that casts to or computes in half precision; the
    part of a line after ``#`` is a comment and is not read (a ``#`` inside a string is rare in this course's
    code and would only hide, never invent, a finding)."""
    out = []
    for i, line in enumerate(source.splitlines(), 1):
        code = line.split("#", 1)[0]
        if HALF.search(code):
            out.append((i, line.strip()))
    return out


def test_the_check_flags_every_half_precision_form():
    bad = ("live = copy.deepcopy(model).to(torch.bfloat16)\n"
           "y = x.half()\n"
           "w = w.bfloat16()\n"
           "z = x.to(dtype=torch.float16)\n"
           "h = torch.zeros(3, dtype=torch.half)\n"
           "with torch.autocast('cpu'):\n"
           "    pass\n"
           "m = load(dtype=getattr(torch, cfg['dtype']))\n")
    assert [n for n, _ in half_precision_lines(bad)] == [1, 2, 3, 4, 5, 6, 8]


def test_the_check_leaves_prose_comments_and_float32_alone():
    fine = ('say(f"{n} bytes per token, float16.")\n'
            "x = x.to(torch.float32)   # not torch.bfloat16: its rounding depends on the CPU\n"
            '# the cache holds float16 numbers\n'
            "y = x.float()\n")
    assert half_precision_lines(fine) == []


@pytest.mark.parametrize("path", [*CHAPTERS, RECIPE], ids=lambda p: p.name)
def test_no_half_precision_in_chapters_or_the_real_decoder_recipe(path):
    found = half_precision_lines(path.read_text(encoding="utf-8"))
    assert not found, (f"{path.relative_to(ROOT)} computes in half precision (float32 only: half-precision CPU "
                       "kernels round differently per instruction set): "
                       + "; ".join(f"line {n}: {line}" for n, line in found))


def test_there_are_chapters_to_check():
    assert len(CHAPTERS) >= 9 and RECIPE.is_file()
