"""Fixtures shared by several test files."""
import pytest


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


def pytest_collection_modifyitems(config, items):
    """Long files first: every chapter under nbval, then the files with a slow or browser test, then the rest, each
    group in its collection order. `pytest -n 2 --dist loadfile` (make test) hands the files to its workers in this
    order, so the many short files fill the end and no single long file runs alone on one core while the other waits
    (measured on the 2-core machine, 2026-12-03: the long notebooks came last and held the tail)."""
    def group(path: str) -> int:
        return 0 if path.endswith(".ipynb") else 1 if path in long_files else 2

    long_files = {str(i.path) for i in items if i.get_closest_marker("slow") or i.get_closest_marker("browser")}
    items[:] = sorted(items, key=lambda i: group(str(i.path)))   # stable: in-file order kept
