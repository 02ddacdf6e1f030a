"""What students install holds no answers: the built wheel of vrs_edu contains no solution region and no input of
a hidden test. The teacher's sources (solutions and hidden tests) live in data/assignments/sources/, outside the
package; the grader reads them from there (or from --sources).

The wheel is built offline from a copy of the package with setuptools' own PEP 517 backend (the project's build
backend), as `pip wheel --no-deps .` would, without touching the working tree (no build/ or egg-info left in it).
"""
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from vrs_edu.course.assignments.build import make_copies
from vrs_edu.course.assignments.source import BEGIN, END, HIDDEN, SOURCES, discover, tags

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel_texts(tmp_path_factory) -> dict[str, str]:
    """{path in the wheel: its text} of a wheel built from this checkout."""
    tree = tmp_path_factory.mktemp("tree")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(ROOT / "vrs_edu", tree / "vrs_edu", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    run = subprocess.run([sys.executable, "-c", "from setuptools import build_meta as b; print(b.build_wheel('dist'))"],
                         cwd=tree, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    wheel = tree / "dist" / run.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as z:
        return {n: z.read(n).decode("utf-8", "replace") for n in z.namelist()}


def test_the_wheel_is_the_package(wheel_texts):
    assert "vrs_edu/course/assignments/grade.py" in wheel_texts and "vrs_edu/nn/attention.py" in wheel_texts


def _regions(text: str) -> list[list[str]]:
    """The bodies of every ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` region in ``text`` (marker lines that
    start a line, as the sources write them), without their ``### HINT:`` lines."""
    regions, body = [], None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(BEGIN):
            body = []
        elif s.startswith(END) and body is not None:
            regions.append(body)
            body = None
        elif body is not None and not s.startswith("### HINT:"):
            body.append(s)
    return regions


def test_the_wheel_holds_no_solution_region(wheel_texts):
    assert not [n for n in wheel_texts if "assignment_sources" in n or n.startswith("data/")]
    # The only region in the package is the one that documents the format (source.py), whose body is `...`.
    with_code = {n: r for n, text in wheel_texts.items() for r in _regions(text) if r not in ([], ["scores = ..."])}
    assert not with_code, f"solution regions with code in the wheel: {sorted(with_code)}"
    # ... and the same reading finds the sources' regions, which hold code
    in_sources = [r for a in discover(SOURCES) for c in a.read().cells for r in _regions(c.source)]
    assert len(in_sources) >= 6 and all(r and r != ["scores = ..."] for r in in_sources)


def test_the_wheel_holds_no_hidden_test_input(wheel_texts):
    everything = "\n".join(wheel_texts.values())
    checked = 0
    for assignment in discover(SOURCES):
        grader = make_copies(assignment)["grader"]
        shown = {line.strip() for c in grader.cells if HIDDEN not in tags(c) for line in c.source.splitlines()}
        for cell in (c for c in grader.cells if HIDDEN in tags(c)):
            assert cell.metadata["check"] not in everything, (assignment.name, cell.metadata["check"])
            for line in cell.source.splitlines():
                line = line.strip()
                if len(line) > 20 and line not in shown and not line.startswith(("import ", "from ", "#")):
                    checked += 1
                    assert line not in everything, f"{assignment.name}: hidden-test line in the wheel: {line}"
    assert checked > 20, "the test compared too few hidden-test lines to mean anything"
