"""A Python resource's write that outlives ``resolver_timeout``, over the wire.

The tool got the call and goes on after the server stops waiting for it: its outcome
is unknown. It is journaled ``in doubt`` (the writes after it ``not run``), the client
gets 08007 saying it may have happened (never "try again"), and
``scratchpad.restage`` refuses it, saying why, until told ``force => true``; the
retry then carries the first attempt's idempotency key.
"""

from __future__ import annotations

import re
import threading
from dataclasses import replace

import asyncpg
import psycopg
import pytest

from glove_scratchpad.server.engine.guard import Limits

from .fix_reliability import Notes, serve

JOURNAL = ("SELECT seq, status, error, idempotency_key FROM scratchpad.journal "
           "WHERE txid = %s ORDER BY seq")
LIMITS = Limits(resolver_timeout=0.5)  # the tool is held until the test lets it go


@pytest.mark.parametrize("in_tx", [True, False], ids=["in a transaction", "alone"])
async def test_a_write_past_the_resolver_timeout_is_in_doubt(sidecar, in_tx):
    notes = Notes(gate=threading.Event())
    # Retries are a read's: a write that may have happened is never made again by itself.
    resource = replace(notes.resource(), retries=3)
    async with serve(sidecar, [resource], limits=LIMITS) as served:
        conn = await served.connect()
        insert = "INSERT INTO notes (title) VALUES ('maybe')"
        try:
            if in_tx:
                await conn.execute("BEGIN")
                await conn.execute(insert)
                await conn.execute("INSERT INTO notes (title) VALUES ('after')")
            with pytest.raises(psycopg.errors.TransactionResolutionUnknown) as info:
                await conn.execute("COMMIT" if in_tx else insert)
        finally:
            assert notes.gate is not None
            notes.gate.set()  # the tool goes on, and makes the note
        assert notes.writes() == [("insert", ["maybe"])]  # it was called, once
        error = info.value.diag
        assert 'resource "notes" insert did not answer within 0.5 s, so the write may have ' \
            "happened" in (error.message_primary or "")
        assert "try again" not in f"{error.message_primary} {error.message_hint}".lower()
        found = re.search(r"restage\((\d+), force => true\)", error.message_hint or "")
        assert found, error.message_hint
        txid = int(found.group(1))
        cur = await conn.execute(JOURNAL, [txid])
        (seq, status, journaled, key), *rest = await cur.fetchall()
        assert (seq, status) == (1, "in doubt") and journaled in (error.message_primary or "")
        assert [(s, st) for s, st, _, _ in rest] == ([(2, "not run")] if in_tx else [])
        assert notes.keys() == [key]

        with pytest.raises(psycopg.errors.InvalidTransactionState) as refused:
            await conn.execute("SELECT scratchpad.restage(%s)", [txid])
        assert "has a write in doubt, so nothing of it is staged again" in str(refused.value)
        cur = await conn.execute("SELECT count(*) FROM scratchpad.staged")
        assert await cur.fetchone() == (0,)

        if in_tx:
            conn.notices.clear()
            await conn.execute("SELECT scratchpad.restage(%s, force => %s)", [txid, True])
            assert conn.notices[0][0] == "WARNING" and "in doubt" in conn.notices[0][1]
            await conn.execute("COMMIT")
        else:  # asyncpg asks the parameters' types (bigint, boolean), and sends them binary
            other = await asyncpg.connect(served.dsn())
            try:
                said = await other.fetchval("SELECT scratchpad.restage($1, force => $2)",
                                            txid, True)
                assert said.startswith(f"staged 1 write of transaction {txid} again")
                await other.execute("COMMIT")
            finally:
                await other.close()
        assert [d for _, d in notes.writes()] == [["maybe"], ["maybe"]] + (
            [["after"]] if in_tx else [])
        assert notes.keys()[:2] == [key, key]
