"""One package per chapter: what only that chapter uses — its recipe(s), readouts, prose, figures.

A chapter's package imports ``nn``, ``lab`` and ``viz`` and, where it builds on them, *earlier* chapters' packages
(never a later one: ``tests/test_layering.py``). A notebook imports its own chapter's package (chapter 09, which
gathers the others, excepted). Each package's modules, where it has them:

* ``recipe.py`` — the ``vrs-edu reproduce`` recipe: the runs, the declared tests and their verdicts;
* ``readout.py`` — measurements on trained models or stored results;
* ``prose.py`` — the sentences and tables the chapter computes from its numbers;
* ``figures.py`` — its plots and widgets.
"""
