"""vrs_edu: the companion package of the Value Residual Streams course.

* ``vrs_edu.nn``: minimal, tested implementations (attention, value residual, x0 injection, depth mixers, TinyGPT)
* ``vrs_edu.lab``: data, training, metrics, reproduce recipes
* ``vrs_edu.viz``: plots and widgets (thin layers over plain functions)
* ``vrs_edu.course``: book.toml, exercises' checkers, classroom assignments
"""
__version__ = "0.1.0"
