"""Every ``vrs-edu reproduce`` recipe, by name: the one table the CLI, the benchmarks and ``vrs-edu rejudge`` read.

A recipe lives with the chapter that reports it (:mod:`vrs_edu.chapters`); the course's shared character model,
which chapters 01, 02, 07 and 09 load, lives in :mod:`vrs_edu.lab.char_model`. Adding a recipe = defining its
:class:`~vrs_edu.lab.experiments.Recipe` there and listing it here.
"""
from __future__ import annotations

from vrs_edu.chapters.ch03_value_residual import depth_sweep, recall, recipe as value_residual
from vrs_edu.chapters.ch04_bank_of_values import recipe as bank_of_values
from vrs_edu.chapters.ch05_depth_as_sequence import recipe as depth_mixers, v_over_depth
from vrs_edu.chapters.ch06_what_v_reuse_buys import recipe as production_designs
from vrs_edu.chapters.ch07_real_model import norms as encoder_norms
from vrs_edu.chapters.ch08_real_decoder import kv_designs as decoder_kv_designs
from vrs_edu.chapters.ch08_real_decoder import norms as decoder_norms, recipe as real_decoder
from vrs_edu.lab import char_model
from vrs_edu.lab.experiments import Recipe

RECIPES: dict[str, Recipe] = {r.name: r for r in (
    char_model.RECIPE, value_residual.RECIPE, depth_sweep.RECIPE, bank_of_values.RECIPE, recall.RECALL,
    recall.RECALL_RATES, recall.RECALL_TUNING, depth_mixers.RECIPE, v_over_depth.RECIPE, production_designs.RECIPE,
    real_decoder.RECIPE, encoder_norms.RECIPE, decoder_norms.RECIPE, decoder_kv_designs.RECIPE)}

# Which recipe's declarations judge a stored result again (``vrs-edu rejudge``), by the name it stores as "recipe".
JUDGES = {name: r.verdicts for name, r in RECIPES.items() if r.verdicts is not None}


def recipe_named(name: str) -> Recipe:
    """The recipe called ``name``. Raises ValueError naming the known recipes for any other name."""
    if name not in RECIPES:
        raise ValueError(f"recipe must be one of {sorted(RECIPES)}, got {name!r}")
    return RECIPES[name]
