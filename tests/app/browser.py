"""Debian's chromium driven by Playwright, for the browser tests: one launch, one context, screenshots.

The `browser` and `page` fixtures in tests/app/conftest.py use these; a test module
that needs other flags (a resolver rule) or context options (JavaScript off) calls
them itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
# Flags that keep a headless chromium quiet and working in a container: no sandbox (no user namespaces),
# no background fetches, no GPU, and /tmp instead of a small /dev/shm.
FLAGS = ("--no-sandbox", "--disable-background-networking", "--disable-gpu", "--disable-dev-shm-usage")
VIEWPORT = {"width": 1280, "height": 900}


def playwright_or_skip() -> Any:
    """Playwright's sync API; skips the calling test module where chromium or Playwright is missing."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed", allow_module_level=True)
    return pytest.importorskip("playwright.sync_api")


@contextmanager
def chromium(*flags: str) -> Iterator[Any]:
    """A headless chromium with FLAGS and `flags`, closed on the way out."""
    with playwright_or_skip().sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=[*FLAGS, *flags], headless=True)
        try:
            yield browser
        finally:
            browser.close()


def new_context(browser: Any, timeout_ms: int = 30_000, **options: Any) -> Any:
    """A context 1280x900 (unless `options` say otherwise) whose waits give up after `timeout_ms`."""
    context = browser.new_context(**{"viewport": VIEWPORT, **options})
    context.set_default_timeout(timeout_ms)
    return context


def shoot(page: Any, folder: Path, name: str) -> dict[int, int]:
    """Full-page screenshots at 1280 and 400 px wide into `folder`, for a person to look at (never committed).

    Returns how wide the page scrolls at each width, for tests that check nothing scrolls sideways.
    """
    folder.mkdir(exist_ok=True)
    scrolls = {}
    for width in (1280, 400):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(folder / f"{name}-{width}.png"), full_page=True)
        scrolls[width] = page.evaluate("document.documentElement.scrollWidth")
    page.set_viewport_size(VIEWPORT)
    return scrolls
