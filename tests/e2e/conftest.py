"""Browser tests: the real server under uvicorn on a free loopback port, driven by Debian's Chromium."""

from __future__ import annotations

import os
import shutil

import pytest

from infercost.server_process import running_server

CHROMIUM = os.environ.get("INFERCOST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
COURSE_URL = "https://course.example/ai"






def pytest_collection_modifyitems(items):
    missing = not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM))
    for item in items:
        if "e2e" in str(item.fspath):
            item.add_marker(pytest.mark.browser)
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"no Chromium at {CHROMIUM}"))


@pytest.fixture(scope="session")
def server_url():
    with running_server(COURSE_URL) as (url, _):
        yield url


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Console:
    """Console errors, page errors and failed responses seen by a page."""

    def __init__(self, page):
        self.errors: list[str] = []
        page.on("console", lambda m: m.type in ("error", "warning") and self.errors.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        page.on("response", lambda r: r.status >= 400 and self.errors.append(f"HTTP {r.status} {r.url}"))


@pytest.fixture
def make_page(browser, server_url):
    """make_page(query="", width=1280, **context options) -> page, loaded and drawn; no console errors allowed."""
    contexts, consoles, allowed = [], [], []

    def make(query: str = "", width: int = 1280, height: int = 900, expect_errors: bool = False, **options):
        context = browser.new_context(viewport={"width": width, "height": height}, **options)
        contexts.append(context)
        page = context.new_page()
        console = Console(page)
        (allowed if expect_errors else consoles).append(console)
        page.console = console
        page.goto(server_url + query)
        wait_drawn(page)
        return page

    yield make
    for context in contexts:
        context.close()
    for console in consoles:
        assert console.errors == [], console.errors


def wait_drawn(page, timeout: float = 10_000):
    """Wait until the estimate on screen reflects the latest state."""
    page.wait_for_function(
        "() => window.infercost && window.infercost.rendered > 0 && window.infercost.rendered === window.infercost.state.getVersion()",
        timeout=timeout)
