"""A request to an HTTP API, in the browser: the approver sees the exact requests COMMIT
will make (method, URL and body) and the changes, and approving sends each once."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from glove_scratchpad.resources.openapi import OpenApiBridge
from glove_scratchpad.server import Database
from glove_scratchpad.server.console import ConsolePort
from glove_scratchpad.server.engine.approval_rules import ApprovalRules

from ..fix_server import serving
from ..openapi.fix_api import Api, api_entry, api_served
from .fix_browser import Browser
from .fix_console import PASSWORDS, USERS
from .test_approvals import DECIDED_WITHIN, _pending

RULES = ApprovalRules(require=["t_list_things.*"], approvers=["ops"], wait_s=60)


@pytest.fixture(scope="module")
async def api() -> AsyncIterator[Api]:
    async with api_served() as served:
        yield served


@pytest.fixture(scope="module")
async def console(api: Api, sidecar: Any) -> AsyncIterator[tuple[ConsolePort, int]]:
    bridge = OpenApiBridge([api_entry(api)], Path("."))
    db = await Database.create(await bridge.load(), writes=True, sidecar=sidecar,
                               database="test_console_http", approvals=RULES)
    try:
        async with serving(db, users=USERS, writes=True, console_port=0) as server:
            port = ConsolePort(server.config, server.port)
            await port.start()
            try:
                yield port, server.port
            finally:
                await port.close()
    finally:
        await db.close()
        await bridge.aclose()


async def test_the_approver_sees_the_exact_requests_and_approving_sends_them_once(
        driver: Any, api: Api, console: tuple[ConsolePort, int]) -> None:
    port, server_port = console
    browser = Browser(driver, port.url.replace("localhost", "127.0.0.1"))
    await browser.get("/sign-in")
    await browser.sign_out()
    dsn = f"postgresql://agent:{PASSWORDS['agent']}@127.0.0.1:{server_port}/scratchpad"
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as agent:
        await agent.execute("BEGIN")
        await agent.execute("INSERT INTO t_list_things (name, kind) VALUES ('hammer', 'tool')")
        await agent.execute("UPDATE t_list_things SET name = 'renamed' WHERE id = 2")
        commit = asyncio.ensure_future(agent.execute("COMMIT"))
        try:
            await browser.sign_in("ops", PASSWORDS["ops"])
            rid = await _pending(browser)
            await browser.get(f"/approvals/{rid}")
            shown = [e.text for e in await browser.all("#writes pre.request")]
            assert shown == [f"POST {api.url}/things", f"PATCH {api.url}/things/2"]
            assert "hammer" in await browser.text("#writes .rows")
            assert "renamed" in await browser.text("#writes .changes")
            assert api.rec.count("/things", "POST") == 0  # nothing sent yet
            await browser.click("#approve")
            async with asyncio.timeout(DECIDED_WITHIN):
                await commit
        finally:
            if not commit.done():
                commit.cancel()
            with contextlib.suppress(BaseException):
                await commit
    assert api.rec.count("/things", "POST") == 1
    assert api.rec.count("/things/2", "PATCH") == 1
