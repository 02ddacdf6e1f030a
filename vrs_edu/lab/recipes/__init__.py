"""Reproduce recipes, one module per experiment. Importing this package registers every recipe with
:func:`vrs_edu.lab.experiments.recipe` (``vrs-edu reproduce list`` shows them)."""
import importlib
import pkgutil

for _mod in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_mod.name}")
