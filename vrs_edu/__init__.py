"""vrs_edu: the companion package of the Value Residual Streams course.

* ``vrs_edu.nn``: the library a learner reads: minimal, tested implementations (attention, value residual, x0
  injection, depth mixers, ShortSWA over depth, TinyGPT), one idea a file
* ``vrs_edu.lab``: the shared bench: data, training, one runner, metrics, statistics, results, ledger
* ``vrs_edu.viz``: shared style: plot style, prose rendering, controls, schematics
* ``vrs_edu.chapters``: one package per chapter: its recipes, readouts, prose and figures
* ``vrs_edu.recipes``: the table of every ``vrs-edu reproduce`` recipe
* ``vrs_edu.course``: book.toml, exercises' checkers, classroom assignments
"""
__version__ = "0.1.0"
