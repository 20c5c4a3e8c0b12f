"""Debian's chromium driven by Playwright, for the browser tests: one launch, one context, screenshots.

The `browser` and `page` fixtures in tests/app/conftest.py use these; a test module
that needs other flags (a resolver rule) or context options (JavaScript off) calls
them itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
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


def add_target_in_the_form(
    page: Any,
    base: str,
    kind: str,
    name: str,
    fields: dict[str, str],
    before_filling: Callable[[], None] = lambda: None,
) -> None:
    """From the overview, add a target of `kind` through the generated form: `fields` maps a selector to what
    is typed there; `before_filling` checks the form once its kind's options show. Ends on the target's page."""
    expect = playwright_or_skip().expect
    page.goto(base + "/")
    page.get_by_role("link", name="Add target").first.click()
    page.select_option("#kind", kind)
    page.wait_for_load_state()
    # Choosing a kind reloads the form with its options; on a loaded machine that takes more than expect's 5 s.
    expect(page.locator("legend", has_text=f"Options for {kind}")).to_be_visible(timeout=30_000)
    before_filling()
    page.fill("#name", name)
    for selector, value in fields.items():
        page.fill(selector, value)
    page.get_by_role("button", name="Add target").click()
    expect(page).to_have_url(f"{base}/targets/{name}")
