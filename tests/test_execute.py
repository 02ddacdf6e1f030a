"""The headless executor (vrs_edu.course.execute): no cell can wait on an idle kernel after a widget cell.

The stall it prevents: nbclient echoes an Output widget's state to the kernel on the shell socket while it waits on
that socket for the cell's reply; the wake-up can be lost, and the reply is then read only when the poll's timeout
ends (measured with stock nbclient on a notebook of 40 widget cells: waits of exactly the cell timeout)."""
import asyncio
from queue import Empty

import nbformat
import pytest
from nbclient import NotebookClient

from vrs_edu.course import execute


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def monotonic(self):
        return self.now


def test_a_long_wait_is_read_in_slices_so_a_waiting_message_is_seen_within_one(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(execute.time, "monotonic", clock.monotonic)
    asked = []

    async def get_msg(timeout=None):        # the reply is already in the socket from the 3rd poll on
        asked.append(timeout)
        clock.now += timeout
        if len(asked) < 3:
            raise Empty
        return {"msg_type": "execute_reply"}

    msg = asyncio.run(execute._sliced(get_msg)(timeout=600))
    assert msg == {"msg_type": "execute_reply"}
    assert asked == [execute.POLL_SLICE_S] * 3      # never one poll of 600 s


def test_the_timeout_still_ends_the_wait(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(execute.time, "monotonic", clock.monotonic)
    asked = []

    async def get_msg(timeout=None):
        asked.append(timeout)
        clock.now += timeout
        raise Empty

    with pytest.raises(Empty):
        asyncio.run(execute._sliced(get_msg)(timeout=2.5))
    assert asked == pytest.approx([1.0, 1.0, 0.5])


def test_no_timeout_means_wait_for_ever_in_slices(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(execute.time, "monotonic", clock.monotonic)
    asked = []

    async def get_msg(timeout=None):
        asked.append(timeout)
        clock.now += timeout
        if len(asked) < 50:
            raise Empty
        return "reply"

    assert asyncio.run(execute._sliced(get_msg)(timeout=None)) == "reply"
    assert set(asked) == {execute.POLL_SLICE_S}


WIDGET_NB = [
    "import ipywidgets as W\n"
    "def show(n=3):\n"
    "    print('value', n)\n"
    "    return n * 2",
    "w = W.interactive(show, n=W.IntSlider(value=4, min=1, max=9))\ndisplay(w)",
    "print('next cell')",
]


def _run(client_class):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in WIDGET_NB])
    sent = []

    class Spy(client_class):
        async def async_start_new_kernel_client(self):
            kc = await super().async_start_new_kernel_client()
            send = kc.shell_channel.send
            kc.shell_channel.send = lambda msg: (sent.append(msg["header"]["msg_type"]), send(msg))[1]
            return kc

    run = execute.execute_notebook(nb, ".", timeout=120, client_class=Spy)
    return nb, sent, run


@pytest.mark.parametrize("client_class", [NotebookClient, execute.CourseNotebookClient], ids=["nbclient", "course"])
def test_widget_cell_sends_on_the_shell_socket_only_with_plain_nbclient(client_class):
    nb, sent, run = _run(client_class)
    assert ("comm_msg" in sent) is (client_class is NotebookClient)    # the cause, and its removal
    # either way the notebook keeps the widget's captured output in its widget state, and the next cell ran
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    outputs = [m["state"]["outputs"] for m in state.values() if m["model_name"] == "OutputModel"]
    assert any("value 4" in o.get("text", "") for out in outputs for o in out), outputs
    assert nb.cells[2].outputs[0]["text"] == "next cell\n"
    assert [w.after_widget for w in run.waits] == [False, True, False]


def test_make_notebooks_writes_the_pair_keeping_ids_and_collapsed_cells(tmp_path):
    import jupytext

    py = tmp_path / "ch.py"
    py.write_text('# ---\n# jupyter:\n#   jupytext:\n#     formats: ipynb,py:percent\n# ---\n\n'
                  '# %%\nprint(1 + 1)\n\n# %% [markdown]\n# text\n\n'
                  '# %% jupyter={"source_hidden": true} tags=["hide-input"]\nprint("solution")\n')
    jupytext.write(jupytext.read(py), tmp_path / "ch.ipynb")              # the stored pair, no outputs yet
    ids = [c.id for c in nbformat.read(tmp_path / "ch.ipynb", as_version=4).cells]
    source = py.read_text()

    execute.execute_paired(py)

    nb = nbformat.read(tmp_path / "ch.ipynb", as_version=4)
    assert [c.id for c in nb.cells] == ids                                # no churn of cell ids between runs
    assert nb.cells[0].outputs[0]["text"] == "2\n" and nb.cells[2].outputs[0]["text"] == "solution\n"
    assert nb.cells[2].metadata["jupyter"] == {"source_hidden": True}
    assert nb.cells[2].metadata["tags"] == ["hide-input"]
    assert py.read_text() == source                                       # the source of truth is not rewritten
