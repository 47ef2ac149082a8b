"""Headless Debian Chromium driven by Playwright; the suite fails loudly if it cannot start."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("TAU_CHROMIUM", "/usr/bin/chromium"))
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


# Module scope: sync_playwright runs an event loop for as long as it is open, and a loop left
# running would break every later test that calls asyncio.run().
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.is_file():
        pytest.fail(
            f"{CHROMIUM} is missing: run hack/setup/30-chromium.sh (installs Debian's chromium)"
        )
    from playwright.sync_api import Error, sync_playwright

    with sync_playwright() as playwright:
        try:
            instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        except Error as error:
            pytest.fail(f"headless Chromium at {CHROMIUM} could not start: {error}")
        yield instance
        instance.close()


class Page:
    """A page that records every request and every script error."""

    def __init__(self, browser: Any) -> None:
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on(
            "console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None
        )

    def open(self, url: str) -> Any:
        self.page.goto(url)
        self.page.wait_for_selector("body[data-ready=true]", timeout=15_000)
        return self.page


@pytest.fixture
def page(browser: Any) -> Iterator[Page]:
    recorder = Page(browser)
    yield recorder
    recorder.page.close()
