"""Progress bars: one place decides whether a bar is drawn, so that tqdm's own off switch works for every bar.

tqdm documents ``TQDM_DISABLE=1`` as the way to switch bars off from the environment (CI, book builds, logs), but it
applies the variable only to arguments the caller leaves out, and reads it once, when tqdm is first imported. A call
such as ``tqdm(..., disable=not progress)`` therefore ignores it. Every bar of the package is made by
:func:`progress_bar` (or passes ``disable=bars_disabled(show)`` to tqdm), which honours the variable as tqdm reads it
(any non-empty value switches bars off) and reads it at call time, so a command that sets it after start-up, and
every process it starts, are covered too.
"""
from __future__ import annotations

import os

from tqdm.auto import tqdm

ENV = "TQDM_DISABLE"


def bars_disabled(show: bool = True) -> bool:
    """The ``disable=`` argument for a tqdm bar: True when the caller asked for no bar (``show=False``) or the
    environment switched bars off (``TQDM_DISABLE`` set to any non-empty value, as tqdm itself reads it)."""
    return not show or bool(os.environ.get(ENV))


def progress_bar(iterable=None, *, show: bool = True, **kwargs) -> tqdm:
    """A ``tqdm.auto`` bar (a widget in Jupyter, text on stderr elsewhere) that is drawn only when
    :func:`bars_disabled` allows it. ``kwargs`` go to tqdm (``desc``, ``total``, ``leave``...)."""
    return tqdm(iterable, disable=bars_disabled(show), **kwargs)
