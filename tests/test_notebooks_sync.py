"""Each chapter is a jupytext pair: NN_slug.py (the source) and NN_slug.ipynb (executed, with outputs). The pair
must hold the same cells, and the .ipynb must be fully executed, or nbval would compare nothing."""
from pathlib import Path

import jupytext
import nbformat
import pytest

NB = Path(__file__).resolve().parents[1] / "notebooks"
PAIRS = sorted(NB.glob("[0-9][0-9]*_*.py"))


def _cells(nb):
    return [(c.cell_type, c.source.strip()) for c in nb.cells]


def test_every_source_has_its_notebook_and_back():
    py = {p.stem for p in NB.glob("[0-9][0-9]*_*.py")}
    ipynb = {p.stem for p in NB.glob("[0-9][0-9]*_*.ipynb")}
    assert py == ipynb, f"unpaired: .py only {sorted(py - ipynb)}, .ipynb only {sorted(ipynb - py)}"


@pytest.mark.parametrize("source", PAIRS, ids=lambda p: p.stem)
def test_pair_in_sync(source):
    py, nb = jupytext.read(source), jupytext.read(source.with_suffix(".ipynb"))
    a, b = _cells(py), _cells(nb)
    for i, (x, y) in enumerate(zip(a, b)):
        assert x == y, f"{source.stem}: cell {i} differs between .py and .ipynb — run `make notebooks`"
    assert len(a) == len(b), f"{source.stem}: {len(a)} cells in .py, {len(b)} in .ipynb — run `make notebooks`"


@pytest.mark.parametrize("source", PAIRS, ids=lambda p: p.stem)
def test_notebook_is_executed_with_python3_kernel(source):
    nb = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    unrun = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.execution_count is None]
    assert not unrun, f"{source.stem}: code cells {unrun} have no stored outputs — run `make notebooks`"
    errors = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
              and any(o.output_type == "error" for o in c.outputs)]
    assert not errors, f"{source.stem}: cells {errors} stored an error"
