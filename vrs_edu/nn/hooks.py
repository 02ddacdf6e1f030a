"""Named hook points: read (trace) or replace (patch) any intermediate tensor of a forward pass.

Every interesting tensor in the course's models passes through ``hook(name, tensor)``. Names say what they hold,
as in TransformerLens (``blocks.3.attn.pattern``, ``blocks.3.resid_pre``). A caller can

* **trace**: record every tensor (detached) and read it afterwards, and
* **patch**: pass ``{name: fn}``; ``fn(tensor)`` returns the tensor to use instead (same shape).

A hook is handed a copy of the tensor, and the trace keeps copies: an edit, in place or not, changes exactly the
tensor at that point and what is computed from it, and a recorded tensor never changes after it is recorded.

Chapter 02's pattern swap is ``{"blocks.4.attn.pattern": lambda p: other_pattern}``.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

from torch import Tensor

HookFn = Callable[[Tensor], Tensor]
# What a module's ``hook=`` argument takes: ``hook(name, tensor) -> tensor`` (a HookPoints, a ScopedHook, no_hook).
Hook = Callable[[str, Tensor], Tensor]


class HookPoints:
    """Applies patches and records a trace during one forward pass.

    Args:
        hooks: mapping from hook-point name to a function ``tensor -> tensor`` of the same shape.
        record: keep a detached copy of every tensor that passes a hook point.
    Raises:
        ValueError: (from :meth:`check_all_used`) when a hook names a point the model does not have, and from a
            hook call when a patch returns a tensor of another shape.
    """

    def __init__(self, hooks: Mapping[str, HookFn] | None = None, record: bool = False):
        self.hooks = dict(hooks or {})
        self.record = record
        self.store: dict[str, Tensor] = {}
        self.used: set[str] = set()

    @property
    def active(self) -> bool:
        """True when someone listens (a trace or any patch): modules then take their explicit, hooked path."""
        return self.record or bool(self.hooks)

    def __call__(self, name: str, x: Tensor) -> Tensor:
        fn = self.hooks.get(name)
        if fn is not None:
            # The hook gets its own copy. Tensors at different points often share storage (q_in, k_in and v_in are
            # one tensor; block 0's resid_pre is the embedding; SVFormer's v is layer 0's V_1; a depth weight is a
            # parameter), so an in-place edit of the original would also change the others (and the model).
            y = fn(x.clone())
            if not isinstance(y, Tensor) or y.shape != x.shape:
                got = tuple(y.shape) if isinstance(y, Tensor) else type(y).__name__
                raise ValueError(f"hook for '{name}' must return a tensor of shape {tuple(x.shape)}, got {got}")
            x = y
            self.used.add(name)
        if self.record:  # a copy, not a view: nothing done later (a hook, an optimizer step) changes the record
            self.store[name] = x.detach().clone()
        return x

    def scoped(self, prefix: str) -> "ScopedHook":
        """A hook that prepends ``prefix + '.'`` to every name (a block calls ``hook('q', q)``)."""
        return ScopedHook(self, prefix)

    def check_all_used(self) -> None:
        unknown = sorted(set(self.hooks) - self.used)
        if unknown:
            raise ValueError(f"hooks name points this forward pass does not have: {unknown} "
                             f"(run with trace=True and look at trace.names() for the valid names)")


class ScopedHook:
    """``HookPoints`` seen from inside a sub-module: names are relative to ``prefix``."""

    def __init__(self, root: HookPoints, prefix: str):
        self.root, self.prefix = root, prefix

    @property
    def active(self) -> bool:
        return self.root.active

    def __call__(self, name: str, x: Tensor) -> Tensor:
        return self.root(f"{self.prefix}.{name}", x)

    def scoped(self, prefix: str) -> "ScopedHook":
        return ScopedHook(self.root, f"{self.prefix}.{prefix}")


def no_hook(name: str, x: Tensor) -> Tensor:  # noqa: ARG001 - same signature as HookPoints
    """The identity hook used when a module is called on its own."""
    return x


no_hook.scoped = lambda prefix: no_hook  # type: ignore[attr-defined]
no_hook.active = False  # type: ignore[attr-defined]  # nobody listens: modules may take their fused fast path
