"""A pytest plugin (registered under ``pytest11`` in pyproject.toml, so it loads in every pytest run of the
environment the course installs): nbval leaves stderr out of the comparison.

nbval compares each cell's new outputs with the stored ones, stderr included: a library that starts to emit a
warning (a FutureWarning after an upgrade, say) or a progress bar would fail a cell whose printed numbers have not
changed. A notebook must fail only when a lesson's result changes, so stderr is skipped, with the hook nbval
documents for this ("Skipping certain output types"). What learners read stays clean by other means: no committed
notebook may hold stderr or a warning (tests/test_stored_outputs.py), and the book drops stderr and stops on it
(``nb_output_stderr`` in vrs_edu/course/sphinx/conf.py).

It is a plugin rather than a ``conftest.py`` so that it also holds for nbval runs outside this repository's folder
tree (a teacher's copy of a chapter, a temporary folder) made with the course's environment.
"""


def pytest_collectstart(collector):
    # nbval's notebook collector holds the output keys it does not compare; stream outputs are keyed by their name.
    if str(getattr(collector, "path", "")).endswith(".ipynb") and hasattr(collector, "skip_compare"):
        collector.skip_compare += ("stderr",)
