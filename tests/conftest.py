"""Fixtures shared by several test files, and the order `make test` runs the files in."""
import json
from pathlib import Path

import pytest

DURATIONS = Path(__file__).with_name("durations.json")   # seconds per test file, written by --store-durations


@pytest.fixture(scope="module")
def real():
    """The pretrained MiniLM of chapter 07, or a skip naming how to install the real-model extra."""
    from vrs_edu.chapters.ch07_real_model.model import RealModelMissing, load_real_model

    try:
        return load_real_model()
    except RealModelMissing as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium for a browser test file, shared here rather than defined in each file: Playwright's sync
    API allows one running instance at a time. Module scope, not session: while the instance runs, its event loop
    is the running loop of the process, and `make test` runs the browser tests in the same pytest workers as the
    rest, whose `asyncio.run` (the grader's, the chapter executor's) must find none."""
    from playwright.sync_api import sync_playwright

    from test_browser import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def course_style():
    """The course's figure style for one test (a test file opts in with ``pytestmark =
    pytest.mark.usefixtures("course_style")``), undone after it, with every figure closed."""
    import matplotlib.pyplot as plt

    from vrs_edu.viz.plots import apply_course_style

    with plt.rc_context():
        apply_course_style()
        yield
    plt.close("all")


def pytest_addoption(parser):
    parser.addoption("--store-durations", action="store_true",
                     help="write each test file's seconds (setup, call and teardown of its tests, summed) to "
                          "tests/durations.json, which orders the files of the next runs, longest first")


def pytest_configure(config):
    if config.getoption("--store-durations") and not hasattr(config, "workerinput"):  # the controller adds them up
        config.pluginmanager.register(FileSeconds(), "vrs_edu_file_seconds")


def _file(nodeid: str) -> str:
    return nodeid.split("::")[0]


def pytest_collection_modifyitems(config, items):
    """Longest files first, by the seconds tests/durations.json records for them (a file it does not know counts 0
    and goes last), in-file order kept. `make test` hands whole files to its 2 workers in this order
    (``--dist loadfile --no-loadscope-reorder``): the longest first, each to the worker that is free, so the many
    short files fill the end and no long file runs alone on one core while the other waits (measured on the 2-core
    machine, 2026-12-03 and -04: ordered by number of tests, the one-test files of a minute came last and held the
    tail). Refresh the seconds with ``make test PYTEST_ARGS=--store-durations`` after adding a long test."""
    seconds = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    items[:] = sorted(items, key=lambda i: -seconds.get(_file(i.nodeid), 0.0))   # stable: in-file order kept


class FileSeconds:
    """Adds up the seconds of each file's tests as their reports reach the controller; writes them at the end."""

    def __init__(self):
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report):
        key = _file(report.nodeid)
        self.seconds[key] = self.seconds.get(key, 0.0) + report.duration

    def pytest_sessionfinish(self, session):
        ranked = dict(sorted(((k, round(v, 1)) for k, v in self.seconds.items()), key=lambda kv: -kv[1]))
        DURATIONS.write_text(json.dumps(ranked, indent=1) + "\n")
