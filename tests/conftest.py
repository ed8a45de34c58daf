import pytest

from infercost import catalog


@pytest.fixture(scope="session")
def llama70():
    return catalog.model("llama-3.1-70b")


@pytest.fixture(scope="session")
def h100():
    return catalog.gpu("h100-sxm")
