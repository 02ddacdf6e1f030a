"""pytest settings for every run in this repository, unit tests and nbval runs of the chapters alike.

nbval compares each cell's new outputs with the stored ones, stderr included: a library that starts to emit a
warning (a FutureWarning after an upgrade, say) or a progress bar would fail a cell whose printed numbers have not
changed. A notebook must fail only when a lesson's result changes, so stderr is left out of the comparison, with
the hook nbval documents for this ("Skipping certain output types"). What learners read stays clean by other means:
no committed notebook may hold stderr or a warning (tests/test_stored_outputs.py), and the book drops stderr and
stops on it (``nb_output_stderr`` in vrs_edu/course/sphinx/conf.py).
"""


def pytest_collectstart(collector):
    # nbval's notebook collector holds the output keys it does not compare; stream outputs are keyed by their name.
    if str(getattr(collector, "path", "")).endswith(".ipynb") and hasattr(collector, "skip_compare"):
        collector.skip_compare += ("stderr",)
