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
