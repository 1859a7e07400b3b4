"""The console's fixtures: one server with its console, and one Chromium, per module."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from .fix_browser import Browser, chromium
from .fix_console import Served, console_served


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with chromium() as d:
        yield d


@pytest.fixture(scope="module")
async def served(sidecar: Any, request: pytest.FixtureRequest) -> AsyncIterator[Served]:
    name = "test_console_" + request.module.__name__.rpartition(".")[2]
    async with console_served(sidecar, name) as s:
        yield s


@pytest.fixture
async def browser(driver: Any, served: Served) -> AsyncIterator[Browser]:
    """The module's browser at the console, signed out, its logs read empty."""
    b = Browser(driver, served.console.url.replace("localhost", "127.0.0.1"))
    await b.get("/sign-in")
    await b.sign_out()
    await b.console_log()
    await b.requests()
    yield b
