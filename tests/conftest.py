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


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for every browser test file: Playwright's sync API allows one running instance, so the
    fixture lives here, once, rather than in each file that uses it."""
    from playwright.sync_api import sync_playwright

    from test_browser import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()
