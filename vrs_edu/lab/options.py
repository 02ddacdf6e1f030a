"""Run options: how, where and at what size a command trains, as one frozen value passed down explicitly.

``vrs-edu train`` and ``vrs-edu reproduce`` build one :class:`RunOptions` from their flags and hand it down:
``run_recipe(name, options=...)`` -> the recipe function -> :func:`~vrs_edu.lab.experiments.compare_variants`
-> :func:`~vrs_edu.lab.train.train` (and to every worker of ``--jobs``, pickled with its task). Nothing is set
globally: a call that is given no options trains with the defaults.

Two kinds of option:

* how and where (the numbers do not depend on them, up to float rounding on another device): ``device``,
  ``precision``, ``compile``, checkpoints and resume, where the trained models go (``models_dir``: ``reproduce
  --out DIR`` sends them to ``DIR/checkpoints/``, so that a run sent elsewhere writes nothing into the repository),
  ``jobs``, ``progress``;
* at what size (they change the numbers): ``preset`` and ``settings``, the ``reproduce --preset``/``--set`` flags.
  :func:`~vrs_edu.lab.presets.scaled_run` applies them to a recipe's own preset; ``make_run(preset)`` never does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class RunOptions:
    device: str | torch.device | None = None  # auto | cpu | cuda | cuda:N | mps; None: wherever the model already is
    precision: str = "auto"               # auto (bf16 autocast on CUDA, fp32 elsewhere) | fp32 | bf16
    compile: bool | str = False           # True: torch.compile(model); a string: that torch.compile backend
    checkpoint_root: str | None = None    # each train() call checkpoints to its own folder under it
    models_dir: str | None = None         # where a recipe saves its trained models (None: data/checkpoints/)
    checkpoint_every: int | None = None   # steps between checkpoints (the last step is always written)
    resume: bool = False                  # continue from the last checkpoint, if there is one
    jobs: int = 1                         # worker processes for a recipe's independent runs (see lab/parallel.py)
    progress: bool = True                 # False: no progress bar in any train() call (the commands' --quiet)
    preset: str | None = None             # a recipe's runs at this preset instead of the recipe's own (--preset)
    settings: tuple[tuple[str, Any], ...] = ()   # (key, value) overrides applied last to every run (--set)

    def __post_init__(self):
        if isinstance(self.settings, dict):   # RunOptions(settings={"steps": 20000}) reads as it is written
            object.__setattr__(self, "settings", tuple(self.settings.items()))

    @property
    def overrides(self) -> dict[str, Any]:
        """``settings`` as a dict (the keywords :func:`~vrs_edu.lab.presets.make_run` takes)."""
        return dict(self.settings)
