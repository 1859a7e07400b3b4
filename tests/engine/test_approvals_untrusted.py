"""An untrusted read taints the session: its later writes need approval, EXPLAIN and
``scratchpad.staged`` say so and why (the resource and when it was read), and the request
carries the payload as data."""

from __future__ import annotations

import asyncio

import asyncpg
import psycopg
import pytest

from glove_scratchpad.server.engine.approval_rules import ApprovalRules

from ..approvals.fix_approvals import PAYLOAD, connect, one, pending, served

RULES = ApprovalRules(untrusted=["web"], approvers=["ops"], wait_s=30)
_INSERT = "INSERT INTO notes (text) SELECT body FROM web WHERE url = 'http://a.example/'"


async def _lines(conn, sql: str) -> list[str]:
    cur = await conn.execute(sql)
    return [r[0] for r in await cur.fetchall()]


async def test_a_write_after_an_untrusted_read_needs_approval_and_says_why(sidecar):
    async with served(sidecar, RULES) as (_db, sent, dsn), await connect(dsn("agent")) as conn:
        before = await _lines(conn, "EXPLAIN INSERT INTO notes (text) VALUES ('x')")
        assert "Approval: not needed" in before
        plan = await _lines(conn, "EXPLAIN " + _INSERT)
        said = next(line for line in plan if line.startswith("Approval:"))
        assert "needed" in said and "untrusted web" in said
        await conn.execute("BEGIN")
        await conn.execute(_INSERT)
        cur = await conn.execute("SELECT approval FROM scratchpad.staged")
        (why,) = await cur.fetchone()
        assert "untrusted web at 20" in why
        committing = asyncio.ensure_future(conn.execute("COMMIT"))
        rid = await pending(dsn("ops"))
        assert sent.notes == []
        request = await one(dsn("ops"), "SELECT to_jsonb(a) FROM scratchpad.approvals a "
                            "WHERE id = %s", rid)
        assert request["writes"][0]["rows"] == [{"text": PAYLOAD}]
        assert "untrusted web" in request["why"][0]["why"]
        await one(dsn("ops"), "SELECT scratchpad.approve(%s, 'checked')", rid)
        await asyncio.wait_for(committing, 20)
        assert sent.notes == [{"text": PAYLOAD}]
        # The taint lasts for the session: a later, plain write is gated too.
        plan = await _lines(conn, "EXPLAIN INSERT INTO notes (text) VALUES ('x')")
        assert any(line.startswith("Approval: needed") for line in plan)


@pytest.mark.parametrize("read", ["cursor", "portal"])
async def test_an_untrusted_read_through_a_cursor_or_a_portal_taints_too(sidecar, read):
    async with served(sidecar, RULES) as (_db, _sent, dsn), await connect(dsn("agent")) as conn:
        await conn.execute("BEGIN")
        if read == "cursor":
            await conn.execute("DECLARE c CURSOR FOR SELECT body FROM web "
                               "WHERE url = 'http://a.example/'")
            await conn.execute("FETCH 1 FROM c")
        else:  # a psycopg server-side cursor reads by DECLARE; asyncpg's by portals
            raw = await asyncpg.connect(dsn("agent"))
            try:
                async with raw.transaction():
                    cur = await raw.cursor("SELECT body FROM web WHERE url = 'http://a.example/'")
                    await cur.fetch(1)
                    plan = await raw.fetch("EXPLAIN INSERT INTO notes (text) VALUES ('x')")
                assert any(r[0].startswith("Approval: needed") for r in plan), plan
            finally:
                await raw.close()
            return
        plan = await _lines(conn, "EXPLAIN INSERT INTO notes (text) VALUES ('x')")
        assert any(line.startswith("Approval: needed") for line in plan), plan


async def test_another_session_is_not_tainted(sidecar):
    async with served(sidecar, RULES) as (_db, sent, dsn):
        async with await connect(dsn("agent")) as reader:
            await reader.execute("SELECT * FROM web WHERE url = 'http://a.example/'")
            async with await connect(dsn("agent")) as writer:
                await writer.execute("INSERT INTO notes (text) VALUES ('clean')")
        assert sent.notes == [{"text": "clean"}]


async def test_a_resource_defined_with_approval_is_gated(sidecar):
    async with served(sidecar, ApprovalRules(approvers=["ops"], wait_s=30)) as (_db, sent,
                                                                                  dsn):
        async with await connect(dsn("agent")) as conn:
            plan = await _lines(conn, "EXPLAIN INSERT INTO vault (text) VALUES ('s')")
            assert any("vault is defined with approval=True" in line for line in plan)
            doing = asyncio.ensure_future(conn.execute("INSERT INTO vault (text) VALUES ('s')"))
            rid = await pending(dsn("ops"))
            await one(dsn("ops"), "SELECT scratchpad.deny(%s, 'no')", rid)
            try:
                await asyncio.wait_for(doing, 20)
            except Exception as exc:
                assert "denied by ops: no" in str(exc)
            else:
                raise AssertionError("a denied write answered")
        assert sent.notes == []


async def test_a_cached_read_of_an_untrusted_resource_taints_too(sidecar):
    rules = ApprovalRules(untrusted=["feed"], approvers=["ops"], wait_s=30)
    async with served(sidecar, rules) as (_db, _sent, dsn):
        async with await connect(dsn("agent")) as first:
            for _ in range(2):
                await first.execute("SELECT item FROM feed WHERE item IS NOT NULL")
        async with await connect(dsn("agent")) as conn:
            plan = await _lines(conn, "EXPLAIN INSERT INTO notes (text) VALUES ('x')")
            assert "Approval: not needed" in plan
            for _ in range(2):  # its calls kept: answered from the cache
                await conn.execute("SELECT item FROM feed WHERE item IS NOT NULL")
            plan = await _lines(conn, "EXPLAIN INSERT INTO notes (text) VALUES ('x')")
            assert any("untrusted feed" in line for line in plan)


async def test_after_untrusted_deny_refuses_the_write(sidecar):
    rules = ApprovalRules(untrusted=["web"], after_untrusted="deny", approvers=["ops"])
    async with served(sidecar, rules) as (_db, sent, dsn):
        async with await connect(dsn("agent")) as conn:
            await conn.execute("SELECT * FROM web WHERE url = 'http://a.example/'")
            plan = await _lines(conn, "EXPLAIN INSERT INTO notes (text) VALUES ('x')")
            assert any(line.startswith("Approval: refused") for line in plan)
            with pytest.raises(psycopg.errors.InsufficientPrivilege) as caught:
                await conn.execute("INSERT INTO notes (text) VALUES ('x')")
            assert "untrusted web" in str(caught.value)
        assert sent.notes == []
        assert await one(dsn("ops"), "SELECT count(*) FROM scratchpad.approvals") == 0
