"""The console in a real browser: signing in, the lists, cancelling a statement, and
refusing a state change that comes without its CSRF token."""

from __future__ import annotations

import asyncio
import contextlib

import httpx
import psycopg
import pytest

from .fix_browser import Browser
from .fix_console import PASSWORDS, Served

STARTED_WITHIN = 30.0  # seconds for a statement to show as active (generous: busy cores)


async def test_a_wrong_password_signs_nobody_in(browser: Browser) -> None:
    await browser.sign_in("ops", "not-the-password")
    assert "The role or the password is wrong." in await browser.text(".flash.error")
    await browser.get("/activity")
    assert browser.url.endswith("/sign-in")  # still signed out
    await browser.sign_in("nobody", "whatever")
    assert "The role or the password is wrong." in await browser.text(".flash.error")


async def test_sign_in_then_the_sessions_the_calls_and_the_resources(browser: Browser,
                                                                     served: Served) -> None:
    async with await psycopg.AsyncConnection.connect(served.dsn("agent"),
                                                     autocommit=True) as agent:
        await agent.execute("SELECT url FROM web")
        agent_pid = agent.info.backend_pid
        await browser.sign_in("ops", PASSWORDS["ops"])
        assert await browser.text("#who") == "signed in as ops"

        await browser.get("/activity")
        assert await browser.all("#live")  # the console's own script runs under its policy
        row = await browser.find(f'#sessions tr[data-pid="{agent_pid}"]')
        assert "agent" in row.text and "SELECT url FROM web" in row.text

    await browser.get("/calls")
    calls = await browser.text("#calls")
    assert "web" in calls and "select" in calls and "ok" in calls
    assert " ms" in calls  # its latency
    tools = {e.text for e in await browser.all("#calls td.tool")}
    assert tools == {"web"}  # the console's own reads of the views are not tool calls

    await browser.get("/resources")
    names = [e.text for e in await browser.all("#resources summary")]
    assert {"emails", "web", "slow"} <= set(names)


async def test_the_agent_sees_its_own_sessions_only(browser: Browser, served: Served) -> None:
    async with await psycopg.AsyncConnection.connect(served.dsn("ops"),
                                                     autocommit=True) as ops:
        await browser.sign_in("agent", PASSWORDS["agent"])
        await browser.get("/activity")
        pids = [int(e.get_attribute("data-pid")) for e in await browser.all("#sessions tr")
                if e.get_attribute("data-pid")]
        assert ops.info.backend_pid not in pids  # the server's rule, not the console's


@contextlib.asynccontextmanager
async def _running(served: Served, seconds: float):
    """An agent's statement that runs for ``seconds``, in a task; its pid."""
    conn = await psycopg.AsyncConnection.connect(served.dsn("agent"), autocommit=True)
    task = asyncio.ensure_future(conn.execute(f"SELECT * FROM slow WHERE seconds = {seconds}"))
    try:
        yield conn.info.backend_pid, task
    finally:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        await conn.close()


async def _shown_active(browser: Browser, pid: int) -> None:
    async with asyncio.timeout(STARTED_WITHIN):
        while True:
            await browser.get("/activity")
            rows = await browser.all(f'#sessions tr[data-pid="{pid}"].state-active')
            if rows:
                return
            await asyncio.sleep(0.2)


async def test_cancel_a_statement_from_the_sessions_page(browser: Browser,
                                                         served: Served) -> None:
    async with _running(served, 60) as (pid, task):
        await browser.sign_in("ops", PASSWORDS["ops"])
        await _shown_active(browser, pid)
        await browser.click(f'#sessions tr[data-pid="{pid}"] button.cancel')
        assert f"Statement of session {pid} cancelled." in await browser.text(".flash.ok")
        with pytest.raises(psycopg.errors.QueryCanceled):
            async with asyncio.timeout(STARTED_WITHIN):
                await task


async def test_a_state_change_without_its_csrf_token_is_refused(browser: Browser,
                                                                served: Served) -> None:
    async with _running(served, 60) as (pid, task):
        await browser.sign_in("ops", PASSWORDS["ops"])
        await _shown_active(browser, pid)
        # The form as another site would post it: without the token it cannot read.
        await browser.script("document.querySelectorAll('input[name=csrf]')"
                             ".forEach(e => e.remove())")
        await browser.click(f'#sessions tr[data-pid="{pid}"] button.cancel')
        assert "without its CSRF token" in await browser.text("#csrf-refused")
        await asyncio.sleep(0.5)
        assert not task.done()  # nothing was cancelled
        # A wrong token, and another site's Origin with the right one, are refused too.
        cookie = {name: c["value"] for name, c in (await browser.cookies()).items()}
        await browser.get("/activity")
        token = (await browser.find("input[name=csrf]")).get_attribute("value")
        async with httpx.AsyncClient(base_url=browser.base, cookies=cookie) as http:
            wrong = await http.post(f"/activity/{pid}/cancel", data={"csrf": "x" + token})
            assert wrong.status_code == 403
            foreign = await http.post(f"/activity/{pid}/cancel", data={"csrf": token},
                                      headers={"Origin": "http://evil.example"})
            assert foreign.status_code == 403
        assert not task.done()


async def test_the_session_cookie_is_out_of_the_pages_reach(browser: Browser) -> None:
    await browser.sign_in("ops", PASSWORDS["ops"])
    cookies = await browser.cookies()
    assert cookies["glove_console"]["httpOnly"] is True
    assert cookies["glove_console"]["sameSite"] == "Strict"
    assert "glove_console" not in await browser.script("return document.cookie")


async def test_signing_in_needs_the_forms_token(browser: Browser) -> None:
    async with httpx.AsyncClient(base_url=browser.base) as http:
        refused = await http.post("/sign-in", data={"user": "ops",
                                                    "password": PASSWORDS["ops"]})
        assert refused.status_code == 403
        assert "glove_console=" not in refused.headers.get("set-cookie", "")


async def test_every_answer_carries_the_policy_and_a_foreign_host_is_refused(
        browser: Browser) -> None:
    async with httpx.AsyncClient(base_url=browser.base) as http:
        for path in ("/sign-in", "/activity", "/static/console.js", "/nowhere"):
            answer = await http.get(path)
            policy = answer.headers["content-security-policy"]
            assert "script-src 'self';" in policy and "default-src 'none'" in policy, path
            assert "unsafe-inline" not in policy
            assert answer.headers["x-content-type-options"] == "nosniff"
        rebound = await http.get("/sign-in", headers={"Host": "evil.example"})
        assert rebound.status_code == 421
