"""One package per chapter: what only that chapter uses — its recipe(s), readouts, prose, figures.

A chapter's package imports ``nn``, ``lab`` and ``viz`` and, where it builds on them, *earlier* chapters' packages
(never a later one: ``tests/test_layering.py``). A notebook imports its own chapter's package (chapter 09, which
gathers the others, excepted). Each package's modules, where it has them:

* ``recipe.py`` — the ``vrs-edu reproduce`` recipe: the runs, the declared tests and their verdicts (a chapter's
  second recipe is named after it: ``depth_sweep.py``, ``recall.py``, ``v_over_depth.py``);
* ``readout.py`` — measurements on trained models or stored results (chapter 07's ``probes.py``, chapter 08's
  ``interventions.py``; ``model.py`` loads a chapter's real model);
* ``prose.py`` — the sentences and tables the chapter computes from its numbers (chapter 09's ``answers.py``);
* ``figures.py`` — its plots and widgets;
* ``previous_chapters.py`` — what the chapter's notebook takes from earlier chapters (04, 06, 07), so that the
  notebook imports its own package only.
"""
