"""Execute a chapter headless with nbclient, so that no cell waits on an idle kernel.

Why not plain ``nbclient.NotebookClient`` (which ``jupytext --execute`` and ``nbconvert --execute`` use): a widget
cell (``ipywidgets.interactive``) sends its callback's outputs to an Output widget. nbclient imitates the frontend
for that widget (``nbclient.output_widget.OutputWidget``) and, after every output it captures, sends the widget's
new state back to the kernel as a ``comm_msg`` on the *shell* socket (``sync_state``). It sends from the coroutine
that reads iopub while another coroutine is waiting on the same zmq.asyncio shell socket for the cell's
``execute_reply`` (``poll(timeout)`` with the cell timeout). A send and a pending poll on one zmq.asyncio socket can
miss the socket's edge-triggered wake-up (pyzmq issues #1203, #1558; nbclient issue #312 and PR #311 report the
same block with ipywidgets): the reply sits in the socket until the poll's timeout ends, and the cell then
"completes" — exactly at the timeout, with no error. That is the reported stall: 600 s after a widget cell in
chapters 04 and 07, kernel idle, exit status 0. Measured on a notebook of 40 ``interactive`` cells, each followed by
a one-line cell, 4 runs per client, cell timeout 20 s, on the shared 2-core machine: plain nbclient waited the whole
20 s after a widget cell 6 times (3 of 4 runs); without the echo, no wait over 0.03 s; with sliced reads alone, 12
lost wake-ups, each caught within 0.93 s.

So the client here:

* removes the cause: its Output-widget imitation keeps the captured outputs (stored in the notebook's widget state,
  as before) but sends nothing back to the kernel — no frontend exists to sync with, and nothing in the chapters
  reads an Output widget's outputs in the kernel;
* bounds any other lost wake-up: both channels are read in slices of at most ``POLL_SLICE_S`` seconds, and every
  new ``poll`` first asks the socket whether a message is already waiting, so a lost wake-up costs at most one
  slice instead of the cell timeout.

:func:`execute_notebook` is what ``make notebooks`` (``python -m vrs_edu.course.execute``), the bench and the
stall check (``python -m vrs_edu.bench stalls``) run.
"""
from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty

import nbformat
from nbclient import NotebookClient
from nbclient.output_widget import OutputWidget

POLL_SLICE_S = 1.0


class _HeadlessOutputWidget(OutputWidget):
    """nbclient's Output-widget imitation without the state echo on the shell socket (see the module docstring)."""

    def sync_state(self) -> None:
        pass


def _sliced(channel_get_msg):
    """Wrap a channel's async ``get_msg(timeout)`` so that it polls in slices of at most ``POLL_SLICE_S``."""
    async def get_msg(timeout: float | None = None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            step = POLL_SLICE_S if left is None else max(0.0, min(POLL_SLICE_S, left))
            try:
                return await channel_get_msg(timeout=step)
            except Empty:
                if left is not None and left <= POLL_SLICE_S:
                    raise
    return get_msg


class CourseNotebookClient(NotebookClient):
    """``NotebookClient`` that never sends on the shell socket while it waits for a reply, and reads both channels
    in short slices. Same options as ``NotebookClient``."""

    def __init__(self, nb, km=None, **kw):
        super().__init__(nb, km=km, **kw)
        self.widget_registry["@jupyter-widgets/output"]["OutputModel"] = _HeadlessOutputWidget

    async def async_start_new_kernel_client(self):
        kc = await super().async_start_new_kernel_client()
        for channel in (kc.shell_channel, kc.iopub_channel):
            channel.get_msg = _sliced(channel.get_msg)
        return kc


@dataclass
class CellWait:
    """How long the client took to see a cell's ``execute_reply`` after the kernel sent it (kernel timestamps and
    the client's clock: one machine)."""

    index: int
    wait_s: float
    after_widget: bool


@dataclass
class Execution:
    """One execution: its wall time (kernel start included) and the wait for every code cell's reply."""

    wall_s: float
    waits: list[CellWait] = field(default_factory=list)

    @property
    def longest(self) -> CellWait:
        return max(self.waits, key=lambda w: w.wait_s)


def execute_notebook(nb: nbformat.NotebookNode, cwd: str | Path, *, timeout: int | None = 900,
                     kernel_name: str = "python3", client_class: type[NotebookClient] = CourseNotebookClient,
                     ) -> Execution:
    """Execute ``nb`` in place (outputs, widget state and timings stored in it) in a fresh kernel started in
    ``cwd``; return the wall time and, for every code cell, how long the client waited for its reply.

    ``timeout``: seconds one cell may run (None: no limit). Raises ``nbclient.exceptions.CellExecutionError`` when
    a cell raises, ``CellTimeoutError`` past ``timeout``."""
    waits: list[CellWait] = []

    def on_cell_executed(cell, cell_index, execute_reply):
        sent = execute_reply["header"]["date"]
        seen = dt.datetime.now(dt.timezone.utc)
        # the outputs that arrived before the reply are already on the cell
        widget = any("application/vnd.jupyter.widget-view+json" in o.get("data", {})
                     for o in cell.get("outputs", []))
        waits.append(CellWait(cell_index, (seen - sent).total_seconds(), widget))

    client = client_class(nb, timeout=timeout, kernel_name=kernel_name, on_cell_executed=on_cell_executed,
                          resources={"metadata": {"path": str(cwd)}})
    t0 = time.perf_counter()
    client.execute()
    return Execution(time.perf_counter() - t0, waits)


def execute_paired(py: Path, timeout: int | None = None) -> Execution:
    """``make notebooks`` for one chapter: read the jupytext source ``py``, execute it (kernel ``python3``, in its
    folder) and write the paired ``.ipynb`` with outputs and widget state, as ``jupytext --sync --execute`` did."""
    import jupytext
    from jupytext.combine import combine_inputs_with_outputs

    nb = jupytext.read(py)
    ipynb = py.with_suffix(".ipynb")
    if ipynb.exists():   # keep the stored cell ids and notebook-only metadata, as `jupytext --sync` does
        nb = combine_inputs_with_outputs(nb, jupytext.read(ipynb))
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    run = execute_notebook(nb, py.parent, timeout=timeout)
    jupytext.write(nb, ipynb)
    return run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vrs_edu.course.execute", description=execute_paired.__doc__)
    ap.add_argument("sources", nargs="+", type=Path, help="chapter sources, notebooks/NN_name.py")
    args = ap.parse_args(argv)
    for py in args.sources:
        run = execute_paired(py)
        w = run.longest
        print(f"{py.name}: {run.wall_s:.1f} s; longest wait for a reply {w.wait_s:.3f} s (cell {w.index})",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
