"""Debian's Chromium, headless, driven by Selenium, for the console's tests.

The console is served by the test's own event loop, so every call into the browser
(which blocks until the page has loaded) runs in a thread: ``Browser`` is the async
face of one WebDriver. The browser starts with a fresh profile and nothing that
reaches out (no sync, no updates, no background networking), and keeps its console
log and its network log, so a test can say what ran and what was requested.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PAGE_TIMEOUT = 20  # seconds a page may take to load on a busy machine


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium with a profile of its own, quit after."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.fail("the console's tests need Debian's chromium and chromium-driver: "
                    "make test installs them (scripts/test-packages)")
    profile = tempfile.mkdtemp(prefix="console-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                 f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(PAGE_TIMEOUT)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


class Browser:
    """One browser, at one console, its calls made off the event loop."""

    def __init__(self, driver: Any, base: str) -> None:
        self.driver = driver
        self.base = base.rstrip("/")

    async def _run(self, fn: Any, *args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    async def get(self, path: str) -> None:
        await self._run(self.driver.get, self.base + path)

    async def find(self, css: str) -> Any:
        from selenium.webdriver.common.by import By

        return await self._run(self.driver.find_element, By.CSS_SELECTOR, css)

    async def all(self, css: str) -> list[Any]:
        from selenium.webdriver.common.by import By

        return list(await self._run(self.driver.find_elements, By.CSS_SELECTOR, css))

    async def text(self, css: str = "body") -> str:
        element = await self.find(css)
        return str(await self._run(lambda: element.text))

    async def type(self, css: str, text: str) -> None:
        element = await self.find(css)
        await self._run(element.clear)
        await self._run(element.send_keys, text)

    async def click(self, css: str) -> None:
        element = await self.find(css)
        await self._run(element.click)
        await self.settled()

    async def settled(self) -> None:
        """Wait for the page a click led to (a form's POST and its redirect)."""
        def ready() -> None:
            from selenium.webdriver.support.ui import WebDriverWait

            WebDriverWait(self.driver, PAGE_TIMEOUT).until(
                lambda d: d.execute_script("return document.readyState") == "complete")
        await self._run(ready)

    async def script(self, js: str, *args: Any) -> Any:
        return await self._run(self.driver.execute_script, js, *args)

    async def sign_in(self, user: str, password: str) -> None:
        """Sign in, and wait for the page the form led to: the old page stays complete
        until the POST's answer replaces it, so its button going stale is the sign."""
        await self.get("/sign-in")
        await self.type("#user", user)
        await self.type("#password", password)
        button = await self.find("#sign-in")
        await self._run(button.click)

        def replaced() -> None:
            from selenium.webdriver.support import expected_conditions
            from selenium.webdriver.support.ui import WebDriverWait

            WebDriverWait(self.driver, PAGE_TIMEOUT).until(
                expected_conditions.staleness_of(button))
        await self._run(replaced)
        await self.settled()

    async def cookies(self) -> dict[str, dict[str, Any]]:
        """The browser's cookies by name, asked off the event loop: the console serves
        the page in this loop, and a page still loading would wait for it."""
        return {c["name"]: c for c in await self._run(self.driver.get_cookies)}

    async def sign_out(self) -> None:
        await self._run(self.driver.delete_all_cookies)

    async def console_log(self) -> list[dict[str, Any]]:
        """What the page wrote to the browser's console (and the browser's own errors,
        a Content-Security-Policy refusal among them) since the last look."""
        return list(await self._run(self.driver.get_log, "browser"))

    async def requests(self) -> list[str]:
        """The URLs the browser asked for since the last look."""
        entries = await self._run(self.driver.get_log, "performance")
        urls = []
        for entry in entries:
            message = json.loads(entry["message"])["message"]
            if message["method"] == "Network.requestWillBeSent":
                urls.append(message["params"]["request"]["url"])
        return urls

    @property
    def url(self) -> str:
        return str(self.driver.current_url)
