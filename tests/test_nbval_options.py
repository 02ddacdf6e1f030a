"""nbval, run with the project's options (the Makefile's NBVAL flags, the sanitize file, and the pytest plugin
vrs_edu.nbval_stderr that the course's environment loads in every pytest run), fails a notebook only when a lesson's printed result changes (or a cell raises): a warning or a progress bar that appears
on stderr (after a library upgrade, say) does not fail a cell whose numbers are unchanged, nor do the CPU-dependent digits of a
difference at float32 precision in a table row that prints its agreement beside it (chapter 05)."""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]

LIB = ("import os, sys, warnings\n"
       "def lib():\n"
       "    if os.environ.get('WARN'):\n"
       "        warnings.warn('default will change', FutureWarning)\n"
       "        sys.stderr.write('\\r 50%|#####     | 1/2\\r100%|##########| 2/2\\n')\n"
       "    return 1.2345\n")


def _cell(source: str, stdout: str, n: int):
    return nbformat.v4.new_code_cell(source, execution_count=n,
                                     outputs=[nbformat.v4.new_output("stream", name="stdout", text=stdout)])


def _nbval_flags() -> list[str]:
    """The NBVAL flags of the Makefile, as `make test` and `make nbval` pass them."""
    m = re.search(r"^NBVAL\s*:=\s*(.+)$", (ROOT / "Makefile").read_text(), flags=re.M)
    assert m, "the Makefile defines no NBVAL flags"
    return shlex.split(m.group(1))


@pytest.mark.slow
def test_only_a_changed_lesson_number_fails_a_notebook(tmp_path):
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = [
        _cell(LIB + "print(f'value {lib():.3f}')", "value 1.234\n", 1),        # warns and draws a bar when WARN=1
        _cell("print(f'twice {2 * lib():.3f}')", "twice 2.469\n", 2),          # the same, in a later cell
        _cell("print(f'lesson {lib() + 0.01:.3f}')", "lesson 1.234\n", 3),     # the result changed: must fail
        _cell("print('done'); lib(1)", "done\n", 4),                            # an exception: must fail
        # a table row's difference at float32 precision beside its agreement, stored from another CPU (measured:
        # 1.2e-07 on one machine, 2.4e-07 on another, chapter 05): the digits are not the lesson, the agreement is
        _cell("print(f'| (1) vs (3) | {lib() * 1e-7:.1e} | True |')", "| (1) vs (3) | 2.4e-07 | True |\n", 5),
        _cell("print(f'| (1) vs (3) | {lib() * 1e-7:.1e} | True |')", "| (1) vs (3) | 2.4e-07 | False |\n", 6),
        # the same size of number anywhere else is compared: a p-value, a learning rate, a loss difference
        _cell("print(f'p = {lib() * 1e-6:.1e}')", "p = 2.4e-06\n", 7),
        _cell("print(f'| lr | {lib() * 1e-5:.1e} |')", "| lr | 2.4e-05 |\n", 8),
    ]
    nbformat.write(nb, tmp_path / "demo.ipynb")
    (tmp_path / "tests").mkdir()
    shutil.copy(ROOT / "tests" / "nbval_sanitize.cfg", tmp_path / "tests")
    # No conftest.py is copied: the folder is outside the repository, as a teacher's copy would be; the
    # course's plugin comes with the environment (pyproject's pytest11 entry point).
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {**os.environ, "WARN": "1", "OMP_NUM_THREADS": "1"}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-p", "no:xdist",
                        *_nbval_flags(), "demo.ipynb"], cwd=tmp_path, env=env, capture_output=True, text=True)
    out = r.stdout + r.stderr
    results = {cell: status for status, cell in re.findall(r"^(PASSED|FAILED) demo\.ipynb::(Cell \d)", out,
                                                           flags=re.M)}
    assert results == {"Cell 0": "PASSED", "Cell 1": "PASSED", "Cell 2": "FAILED", "Cell 3": "FAILED",
                       "Cell 4": "PASSED", "Cell 5": "FAILED", "Cell 6": "FAILED", "Cell 7": "FAILED"}, out[-3000:]
    assert "lesson 1.244" in out, "the failure shows the changed number"
