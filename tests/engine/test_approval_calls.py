"""Only an approver decides, never on its own role's request: 42501 for anyone else,
before anything of the request is read; ``scratchpad.approvals`` shows a role its own
requests, an approver every one."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from glove_scratchpad.server.engine.approval_rules import ApprovalRules

from ..approvals.fix_approvals import connect, one, pending, served


async def _ask(dsn: str) -> asyncio.Future:
    async def commit() -> None:
        async with await connect(dsn) as conn:
            await conn.execute("INSERT INTO emails (to_addr, body) VALUES ('a@x', 'hi')")
    return asyncio.ensure_future(commit())


async def test_the_agent_cannot_approve_or_deny(sidecar):
    async with served(sidecar) as (_db, sent, dsn):
        asking = await _ask(dsn("agent"))
        rid = await pending(dsn("ops"))
        for sql in ("SELECT scratchpad.approve(%s, 'me')", "SELECT scratchpad.deny(%s, 'x')",
                    "SELECT scratchpad.approve(%s)"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege) as caught:
                await one(dsn("agent"), sql, rid)
            assert caught.value.diag.message_hint
        # Not even a request that does not exist is told apart.
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            await one(dsn("agent"), "SELECT scratchpad.approve(999999, 'x')")
        # Nor inside a function call or an EXPLAIN.
        with pytest.raises(psycopg.Error):
            await one(dsn("agent"), "SELECT 1 WHERE scratchpad.approve(%s, 'x') IS NULL", rid)
        assert sent.emails == []
        assert await one(dsn("ops"), "SELECT status FROM scratchpad.approvals WHERE id = %s",
                         rid) == "pending"
        await one(dsn("ops"), "SELECT scratchpad.deny(%s, 'test over')", rid)
        with pytest.raises(psycopg.Error):
            await asyncio.wait_for(asking, 20)


async def test_an_approver_cannot_approve_its_own_request(sidecar):
    rules = ApprovalRules(require=["emails.insert"], approvers=["ops", "lead"], wait_s=30)
    async with served(sidecar, rules) as (_db, sent, dsn):
        asking = await _ask(dsn("ops"))
        rid = await pending(dsn("lead"))
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as caught:
            await one(dsn("ops"), "SELECT scratchpad.approve(%s, 'mine')", rid)
        assert "asked for this request" in str(caught.value)
        assert sent.emails == []
        await one(dsn("lead"), "SELECT scratchpad.approve(%s, 'ok')", rid)
        await asyncio.wait_for(asking, 20)
        assert len(sent.emails) == 1


async def test_each_role_sees_its_own_requests_and_an_approver_all(sidecar):
    rules = ApprovalRules(require=["emails.insert"], approvers=["ops"], wait_s=0.2)
    async with served(sidecar, rules) as (_db, _sent, dsn):
        for user in ("agent", "other"):
            with pytest.raises(psycopg.errors.QueryCanceled):
                await (await _ask(dsn(user)))
        assert await one(dsn("agent"), "SELECT array_agg(asked_by) FROM "
                         "scratchpad.approvals") == ["agent"]
        assert sorted(await one(dsn("ops"), "SELECT array_agg(asked_by) FROM "
                                "scratchpad.approvals")) == ["agent", "other"]
