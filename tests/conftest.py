"""Fixtures shared by several test files."""
import pytest


@pytest.fixture(scope="module")
def real():
    """The pretrained MiniLM of chapter 07, or a skip naming how to install the real-model extra."""
    from vrs_edu.lab.real_model import RealModelMissing, load_real_model

    try:
        return load_real_model()
    except RealModelMissing as e:
        pytest.skip(str(e))
