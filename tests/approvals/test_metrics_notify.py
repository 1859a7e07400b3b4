"""What an operator sees of approvals: the pending gauge, the decisions by outcome and the
time to decision; and each new request POSTed to ``notify`` as JSON."""

from __future__ import annotations

import asyncio
import json

import psycopg
import pytest

from glove_scratchpad.server.engine.approval_rules import ApprovalRules

from ..fix_metrics import counted
from .fix_approvals import connect, one, pending, served


async def _insert(dsn: str, body: str) -> None:
    async with await connect(dsn) as conn:
        await conn.execute("INSERT INTO emails (to_addr, body) VALUES ('m@x', %s)", (body,))


async def test_pending_decisions_and_time_to_decision_are_counted(sidecar, monkeypatch):
    sample = counted(monkeypatch)
    before = {o: sample("glove_approval_decisions_total", outcome=o)
              for o in ("approved", "denied")}
    timed = sample("glove_approval_decision_seconds_count")
    async with served(sidecar) as (_db, _sent, dsn):
        first = asyncio.ensure_future(_insert(dsn("agent"), "one"))
        rid = await pending(dsn("ops"))
        async with asyncio.timeout(10):  # counted once the request is stored
            while sample("glove_approvals_pending") != 1:  # this server's one request
                await asyncio.sleep(0.05)
        await one(dsn("ops"), "SELECT scratchpad.approve(%s, 'ok')", rid)
        await asyncio.wait_for(first, 20)
        second = asyncio.ensure_future(_insert(dsn("agent"), "two"))
        rid = await pending(dsn("ops"))
        await one(dsn("ops"), "SELECT scratchpad.deny(%s, 'no')", rid)
        with pytest.raises(psycopg.Error):
            await asyncio.wait_for(second, 20)
        assert sample("glove_approvals_pending") == 0
    assert sample("glove_approval_decisions_total", outcome="approved") == before["approved"] + 1
    assert sample("glove_approval_decisions_total", outcome="denied") == before["denied"] + 1
    assert sample("glove_approval_decision_seconds_count") == timed + 2


async def test_each_new_request_is_posted_to_notify(sidecar):
    posted: asyncio.Queue[dict] = asyncio.Queue()

    async def hook(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        posted.put_nowait(json.loads(await reader.readexactly(length)))
        writer.write(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    listener = await asyncio.start_server(hook, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    rules = ApprovalRules(require=["emails.insert"], approvers=["ops"], wait_s=30,
                          notify=f"http://127.0.0.1:{port}/hook")
    try:
        async with served(sidecar, rules) as (_db, _sent, dsn):
            asking = asyncio.ensure_future(_insert(dsn("agent"), "notified"))
            request = await asyncio.wait_for(posted.get(), 20)
            assert request["status"] == "pending" and request["asked_by"] == "agent"
            assert request["writes"][0]["rows"][0]["body"] == "notified"
            await one(dsn("ops"), "SELECT scratchpad.deny(%s, 'test over')", request["id"])
            with pytest.raises(psycopg.Error):
                await asyncio.wait_for(asking, 20)
    finally:
        listener.close()
        await listener.wait_closed()
