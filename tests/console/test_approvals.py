"""Approvals in the browser (issue 38, acceptance 1, 3 and 4): an agent's COMMIT of a
gated write waits; the approver signs in, opens the request, sees its rows and approves,
and the COMMIT returns with the tool called once. A denial fires nothing and the agent's
error carries the reason. The agent's own role is refused (42501) in the console as in
SQL, and a request whose text came from an untrusted page shows it as text."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from glove_scratchpad.server.engine.approval_rules import ApprovalRules

from .fix_browser import Browser
from .fix_console import PASSWORDS, Served, console_served
from .test_payload import shown_as_text

RULES = ApprovalRules(require=["emails.insert"], untrusted=["web"], approvers=["ops"],
                      wait_s=60)
DECIDED_WITHIN = 30.0  # seconds for a request to show, or a COMMIT to answer (busy cores)


@pytest.fixture(scope="module")
async def served(sidecar: Any) -> AsyncIterator[Served]:
    async with console_served(sidecar, "test_console_approvals", approvals=RULES) as s:
        yield s


@contextlib.asynccontextmanager
async def _committing(served: Served, sql: str, notices: list[str]
                      ) -> AsyncIterator[asyncio.Future[Any]]:
    """The agent's ``BEGIN; <sql>; COMMIT``, its COMMIT waiting in a task."""
    conn = await psycopg.AsyncConnection.connect(served.dsn("agent"), autocommit=True)
    conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
    await conn.execute("BEGIN")
    await conn.execute(sql)
    task = asyncio.ensure_future(conn.execute("COMMIT"))
    try:
        yield task
    finally:
        if not task.done():
            task.cancel()
        with contextlib.suppress(BaseException):
            await task
        await conn.close()


async def _pending(browser: Browser) -> str:
    """The pending request's id, once the approvals page lists it."""
    async with asyncio.timeout(DECIDED_WITHIN):
        while True:
            await browser.get("/")
            rows = await browser.all("#approvals tr.status-pending")
            if rows:
                return str(rows[0].get_attribute("data-id"))
            await asyncio.sleep(0.2)


async def test_an_approval_in_the_browser_fires_the_commit_once(browser: Browser,
                                                                served: Served) -> None:
    notices: list[str] = []
    sent = len(served.outbox.calls)
    async with _committing(served, "INSERT INTO emails (\"to\", subject, body) VALUES "
                           "('ann@example.com', 'Quarterly', 'The numbers are in')",
                           notices) as commit:
        await browser.sign_in("ops", PASSWORDS["ops"])
        rid = await _pending(browser)
        assert not commit.done()  # the COMMIT waits for a person
        assert len(served.outbox.calls) == sent  # and nothing was sent meanwhile
        await browser.click(f'#approvals tr[data-id="{rid}"] a.open')
        writes = await browser.text("#writes")
        assert "ann@example.com" in writes and "The numbers are in" in writes
        assert "emails" in writes
        assert "emails.insert" in await browser.text("#why")
        await browser.type("#approve-comment", "looks right")
        await browser.click("#approve")
        async with asyncio.timeout(DECIDED_WITHIN):
            await commit
        assert "approved" in await browser.text(".flash.ok")
        assert await browser.text("#decided-by") == "ops"
    assert served.outbox.calls[sent:] == [[{"to": "ann@example.com", "subject": "Quarterly",
                                            "body": "The numbers are in"}]]
    assert any("ops" in n for n in notices), notices  # the NOTICE names the approver


async def test_a_denial_fires_nothing_and_the_agent_gets_the_reason(browser: Browser,
                                                                    served: Served) -> None:
    sent = len(served.outbox.calls)
    async with _committing(served, "INSERT INTO emails (\"to\", subject, body) VALUES "
                           "('bob@example.com', 'Offer', 'Buy now')", []) as commit:
        await browser.sign_in("ops", PASSWORDS["ops"])
        rid = await _pending(browser)
        await browser.get(f"/approvals/{rid}")
        await browser.type("#deny-reason", "no marketing mail from agents")
        await browser.click("#deny")
        with pytest.raises(psycopg.Error) as denied:
            async with asyncio.timeout(DECIDED_WITHIN):
                await commit
        assert "no marketing mail from agents" in str(denied.value)
        assert await browser.text("#status") == "denied"
    assert len(served.outbox.calls) == sent


async def test_the_agent_role_cannot_approve_in_the_console(browser: Browser,
                                                            served: Served) -> None:
    sent = len(served.outbox.calls)
    async with _committing(served, "INSERT INTO emails (\"to\", subject, body) VALUES "
                           "('eve@example.com', 'Mine', 'Self-approved')", []) as commit:
        await browser.sign_in("agent", PASSWORDS["agent"])
        rid = await _pending(browser)  # its own request: it may see it
        await browser.get(f"/approvals/{rid}")
        await browser.click("#approve")
        refused = await browser.text(".flash.error")
        assert refused.startswith("42501:"), refused
        assert await browser.text("#status") == "pending"
        assert not commit.done()
        assert len(served.outbox.calls) == sent
        # The approver ends it, so the COMMIT does not wait out its time.
        await browser.sign_out()
        await browser.sign_in("ops", PASSWORDS["ops"])
        await browser.get(f"/approvals/{rid}")
        await browser.click("#deny")
        with pytest.raises(psycopg.Error):
            async with asyncio.timeout(DECIDED_WITHIN):
                await commit
    assert len(served.outbox.calls) == sent


async def test_an_untrusted_pages_text_in_a_request_is_shown_as_text(browser: Browser,
                                                                     served: Served) -> None:
    async with await psycopg.AsyncConnection.connect(served.dsn("agent"),
                                                     autocommit=True) as agent:
        # The session reads an untrusted page, then sends its text out.
        await agent.execute("SELECT text FROM web")
        await agent.execute("BEGIN")
        await agent.execute("INSERT INTO emails (\"to\", subject, body) "
                            "SELECT 'boss@example.com', 'Summary', text FROM web")
        staged = await (await agent.execute("SELECT approval FROM scratchpad.staged")
                        ).fetchall()
        assert staged[0][0]  # it needs approval, and says why
        task = asyncio.ensure_future(agent.execute("COMMIT"))
        try:
            await browser.sign_in("ops", PASSWORDS["ops"])
            rid = await _pending(browser)
            await browser.console_log()
            await browser.requests()
            await shown_as_text(browser, f"/approvals/{rid}")
            await browser.click("#deny")
        finally:
            with contextlib.suppress(psycopg.Error):
                async with asyncio.timeout(DECIDED_WITHIN):
                    await task


async def test_a_request_past_its_wait_is_approved_later_and_fires_once(
        driver: Any, sidecar: Any) -> None:
    quick = RULES.model_copy(update={"wait_s": 0.5})
    async with console_served(sidecar, "test_console_approvals_wait",
                              approvals=quick) as served:
        browser = Browser(driver, served.console.url.replace("localhost", "127.0.0.1"))
        await browser.get("/sign-in")
        await browser.sign_out()
        async with _committing(served, "INSERT INTO emails (\"to\", subject, body) VALUES "
                               "('cy@example.com', 'Later', 'When you can')", []) as commit:
            with pytest.raises(psycopg.Error) as waited:
                async with asyncio.timeout(DECIDED_WITHIN):
                    await commit
            assert waited.value.sqlstate == "57014"  # no decision in time: still pending
        assert served.outbox.calls == []
        await browser.sign_in("ops", PASSWORDS["ops"])
        rid = await _pending(browser)
        await browser.get(f"/approvals/{rid}")
        await browser.click("#approve")
        said = await browser.text(".flash.ok")  # the server's answer
        assert f"approved request {rid}: its 1 write fired" in said, said
        assert served.outbox.calls == [[{"to": "cy@example.com", "subject": "Later",
                                         "body": "When you can"}]]
        await browser.get(f"/approvals/{rid}")
        assert await browser.text("#status") == "fired"
