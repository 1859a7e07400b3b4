"""COMMIT as a request, decided through SQL: the agent's COMMIT waits, an approver's
``scratchpad.approve`` fires its writes once, a denial fires nothing and says why, and a
timeout leaves the request pending for a later approval that fires it once."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from glove_scratchpad.server.engine.approval_rules import ApprovalRules

from ..approvals.fix_approvals import RULES, connect, one, pending, served


async def _commit(dsn: str, notices: list[str], body: str = "hello") -> None:
    async with await connect(dsn, notices) as conn:
        await conn.execute("BEGIN")
        await conn.execute("INSERT INTO emails (to_addr, body) VALUES ('a@example.com', %s)",
                           (body,))
        await conn.execute("COMMIT")


async def test_commit_waits_and_an_approval_fires_it_once(sidecar):
    async with served(sidecar) as (_db, sent, dsn):
        notices: list[str] = []
        committing = asyncio.ensure_future(_commit(dsn("agent"), notices))
        rid = await pending(dsn("ops"))
        await asyncio.sleep(0.2)
        assert not committing.done() and sent.emails == []  # it waits; nothing fired
        writes = await one(dsn("ops"), "SELECT writes FROM scratchpad.approvals WHERE id = %s",
                           rid)
        assert writes[0]["resolver"] == "emails.insert"
        assert writes[0]["rows"] == [{"id": None, "to_addr": "a@example.com", "body": "hello"}]
        said = await one(dsn("ops"), "SELECT scratchpad.approve(%s, 'looks fine')", rid)
        assert "approved" in said
        await asyncio.wait_for(committing, 20)
        assert [e["body"] for e in sent.emails] == ["hello"]
        assert any("approved by ops" in n and "looks fine" in n for n in notices)
        row = await one(dsn("ops"), "SELECT to_jsonb(a) FROM scratchpad.approvals a "
                        "WHERE id = %s", rid)
        assert (row["status"], row["decided_by"], row["comment"]) == ("fired", "ops",
                                                                      "looks fine")
        assert row["txid"] is not None
        events = [e["event"] for e in row["history"]]
        assert events == ["asked", "approved", "firing", "fired"]
        journal = await one(dsn("agent"), "SELECT array_agg(status) FROM scratchpad.journal "
                            "WHERE txid = %s", row["txid"])
        assert journal == ["fired"]


async def test_a_denial_fires_nothing_and_carries_the_reason(sidecar):
    async with served(sidecar) as (_db, sent, dsn):
        committing = asyncio.ensure_future(_commit(dsn("agent"), []))
        rid = await pending(dsn("ops"))
        await one(dsn("ops"), "SELECT scratchpad.deny(%s, 'not to that address')", rid)
        with pytest.raises(psycopg.errors.ProhibitedSqlStatementAttemptedExt) as caught:
            await asyncio.wait_for(committing, 20)
        assert "not to that address" in str(caught.value)
        assert "denied by ops" in str(caught.value)
        assert caught.value.diag.message_hint
        await asyncio.sleep(0.2)
        assert sent.emails == []
        assert await one(dsn("agent"), "SELECT status FROM scratchpad.approvals "
                         "WHERE id = %s", rid) == "denied"


async def test_a_timeout_leaves_it_pending_and_a_later_approval_fires_it_once(sidecar):
    rules = ApprovalRules(require=["emails.insert"], approvers=["ops"], wait_s=0.5)
    async with served(sidecar, rules) as (_db, sent, dsn):
        with pytest.raises(psycopg.errors.QueryCanceled) as caught:
            await _commit(dsn("agent"), [])
        rid = await one(dsn("agent"), "SELECT max(id) FROM scratchpad.approvals")
        assert f"approval request {rid}" in str(caught.value)
        assert sent.emails == []
        # The same role follows it later, in another session.
        assert await one(dsn("agent"), "SELECT status FROM scratchpad.approvals "
                         "WHERE id = %s", rid) == "pending"
        said = await one(dsn("ops"), "SELECT scratchpad.approve(%s, 'late')", rid)
        assert "fired" in said
        assert [e["body"] for e in sent.emails] == ["hello"]
        with pytest.raises(psycopg.errors.InvalidTransactionState):
            await one(dsn("ops"), "SELECT scratchpad.approve(%s, 'again')", rid)
        assert len(sent.emails) == 1
        history = await one(dsn("ops"), "SELECT history FROM scratchpad.approvals "
                            "WHERE id = %s", rid)
        assert [e["event"] for e in history] == ["asked", "timed out", "approved", "firing",
                                                 "fired"]


async def test_a_write_outside_a_transaction_is_a_request_too(sidecar):
    async with served(sidecar) as (_db, sent, dsn):
        async def insert() -> None:
            async with await connect(dsn("agent")) as conn:
                await conn.execute("INSERT INTO emails (to_addr, body) VALUES ('b@x', 'alone')")

        doing = asyncio.ensure_future(insert())
        rid = await pending(dsn("ops"))
        assert sent.emails == []
        await one(dsn("ops"), "SELECT scratchpad.approve(%s, 'ok')", rid)
        await asyncio.wait_for(doing, 20)
        assert [e["body"] for e in sent.emails] == ["alone"]


async def test_writes_no_rule_gates_fire_as_before(sidecar):
    async with served(sidecar, RULES) as (_db, sent, dsn):
        async with await connect(dsn("agent")) as conn:
            await conn.execute("INSERT INTO notes (text) VALUES ('free')")
        assert sent.notes == [{"text": "free"}]
        assert await one(dsn("ops"), "SELECT count(*) FROM scratchpad.approvals") == 0


async def test_a_denial_after_a_timeout_drops_the_writes(sidecar):
    rules = ApprovalRules(require=["emails.insert"], approvers=["ops"], wait_s=0.3)
    async with served(sidecar, rules) as (_db, sent, dsn):
        with pytest.raises(psycopg.errors.QueryCanceled):
            await _commit(dsn("agent"), [], body="dropped")
        rid = await one(dsn("agent"), "SELECT max(id) FROM scratchpad.approvals")
        said = await one(dsn("ops"), "SELECT scratchpad.deny(%s, 'not now')", rid)
        assert "nothing of it fires" in said
        assert sent.emails == []
        row = await one(dsn("agent"), "SELECT to_jsonb(a) FROM scratchpad.approvals a "
                        "WHERE id = %s", rid)
        assert (row["status"], row["comment"], row["txid"]) == ("denied", "not now", None)
        assert [e["event"] for e in row["history"]] == ["asked", "timed out", "denied"]
