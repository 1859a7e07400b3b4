"""A pending request survives a restart of its server: nothing fires while it is down or
as it starts, and an approval after the restart fires the writes once."""

from __future__ import annotations

import asyncio
import contextlib

import psycopg

from ..fix_server import serving
from .fix_approvals import RULES, Sent, connect, make, one, pending


async def test_a_request_pending_across_a_restart_fires_once_when_approved(sidecar):
    sent = Sent()
    db = await make(sidecar, sent, RULES, database="test_appr_restart")
    try:
        async with serving(db, writes=True, shutdown_grace=0.5) as server:
            dsn = f"postgresql://%s@127.0.0.1:{server.port}/scratchpad"
            conn = await connect(dsn % "agent")
            await conn.execute("BEGIN")
            await conn.execute("INSERT INTO emails (to_addr, body) VALUES ('a@x', 'once')")
            committing = asyncio.ensure_future(conn.execute("COMMIT"))
            rid = await pending(dsn % "ops")
        # The server stopped while the COMMIT waited: its client is told, nothing fired.
        with contextlib.suppress(psycopg.Error):
            await asyncio.wait_for(committing, 20)
        await conn.close()
    finally:
        await db.close()
    assert sent.emails == []
    db = await make(sidecar, sent, RULES, database="test_appr_restart")
    try:
        async with serving(db, writes=True) as server:
            dsn = f"postgresql://%s@127.0.0.1:{server.port}/scratchpad"
            row = await one(dsn % "ops", "SELECT to_jsonb(a) FROM scratchpad.approvals a "
                            "WHERE id = %s", rid)
            assert (row["status"], row["waiting"]) == ("pending", False)
            assert sent.emails == []
            said = await one(dsn % "ops", "SELECT scratchpad.approve(%s, 'after restart')",
                             rid)
            assert "fired" in said
            assert [e["body"] for e in sent.emails] == ["once"]
            row = await one(dsn % "ops", "SELECT to_jsonb(a) FROM scratchpad.approvals a "
                            "WHERE id = %s", rid)
            assert row["status"] == "fired"
            journal = await one(dsn % "agent", "SELECT array_agg(status) FROM "
                                "scratchpad.journal WHERE txid = %s", row["txid"])
            assert journal == ["fired"]  # the asker's own journal: fired as its role
    finally:
        await db.close()
    assert len(sent.emails) == 1
