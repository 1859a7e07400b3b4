"""COMMIT, over the wire: its writes journaled, fired in order and reported, and the
writes it did not reach journaled ``not run``.

- A COMMIT whose write fails reports what fired, what failed and what did not run;
  ``scratchpad.restage(txid)`` stages again what did not fire, with its keys.
- A write outside BEGIN is a COMMIT of its own: a cancel or a statement timeout after
  its request left is too late (the write runs to its end, the client gets its true
  outcome and a NOTICE); before it left, the cancel stops it (57014, ``not run``).
- A Python resource's write that outlives ``resolver_timeout`` is journaled ``in doubt``
  (the writes after it ``not run``), the client gets 08007 saying it may have happened
  (never "try again"), and ``scratchpad.restage`` refuses it until told
  ``force => true``; the retry then carries the first attempt's idempotency key.

The journal's other rows: test_commit_journal.py; an HTTP API's write in doubt:
tests/openapi/test_http_in_doubt.py; a peer server killed while it fires:
tests/deploy/test_firing_peers.py.
"""

from __future__ import annotations

import asyncio
import re
import threading
from dataclasses import replace
from typing import Any

import asyncpg
import psycopg
import pytest

from glove_scratchpad import errors
from glove_scratchpad.server.engine.guard import Limits

from .fix_reliability import Notes, serve
from .fix_resources import Note, Recorder, notes

JOURNAL = ("SELECT seq, resource, verb, status, arguments, result, idempotency_key, error "
           "FROM scratchpad.journal WHERE txid = %s ORDER BY seq")
LAST = "SELECT status, error FROM scratchpad.journal ORDER BY txid DESC, seq DESC LIMIT 1"
IN_DOUBT = ("SELECT seq, status, error, idempotency_key FROM scratchpad.journal "
            "WHERE txid = %s ORDER BY seq")
LIMITS = Limits(resolver_timeout=0.5)  # the tool is held until the test lets it go


async def _stop(conn: psycopg.AsyncConnection[Any], how: str) -> None:
    """A CancelRequest now, or (``timeout``) nothing: the statement's timeout does it."""
    if how == "cancel":
        await conn.cancel_safe()


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
        cur = await conn.execute(IN_DOUBT, [txid])
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


@pytest.mark.parametrize("how", ["cancel", "timeout"])
async def test_a_cancel_after_the_request_left_is_too_late(sidecar, how):
    notes = Notes(gate=threading.Event())
    async with serve(sidecar, [notes.resource()]) as served:
        conn = await served.connect()
        if how == "timeout":
            await conn.execute("SET statement_timeout = '200ms'")
        running = asyncio.ensure_future(
            conn.execute("INSERT INTO notes (title) VALUES ('late') RETURNING id"))
        try:
            assert await asyncio.to_thread(notes.entered.wait, 10)  # the tool has it
            await _stop(conn, how)
            # A cancel that stopped the statement would answer within this second.
            await asyncio.wait([running], timeout=1.0)
        finally:
            assert notes.gate is not None
            notes.gate.set()
        cur = await running  # the write's own outcome, not 57014
        assert await cur.fetchall() == [(3,)]
        said = [m for _, m, _, _ in conn.notices if "came too late" in m]
        assert said == [f"the {'cancel request' if how == 'cancel' else 'statement timeout'}"
                        " came too late: the write had been sent, so it ran to its end and "
                        "this is its outcome"]
        await conn.execute("RESET statement_timeout")
        assert await (await conn.execute(LAST)).fetchall() == [("fired", None)]
        assert notes.writes() == [("insert", ["late"])]



@pytest.mark.parametrize("how", ["cancel", "timeout"])
async def test_a_cancel_before_the_request_left_stops_it(sidecar, how):
    notes = Notes()
    # One call an hour: the second write waits for the rate, unsent, until canceled.
    resource = replace(notes.resource(), rate=(1, 3600.0))
    async with serve(sidecar, [resource]) as served:
        conn = await served.connect()
        await conn.execute("INSERT INTO notes (title) VALUES ('first')")
        if how == "timeout":
            await conn.execute("SET statement_timeout = '300ms'")
        running = asyncio.ensure_future(
            conn.execute("INSERT INTO notes (title) VALUES ('held')"))
        if how == "cancel":
            await asyncio.sleep(0.3)  # the write is journaled and waits for the rate
            await _stop(conn, how)
        with pytest.raises(psycopg.errors.QueryCanceled):
            await asyncio.wait_for(running, 10)
        await conn.execute("RESET statement_timeout")
        assert await (await conn.execute(LAST)).fetchall() == [
            ("not run", "canceled before it was sent")]
        assert notes.writes() == [("insert", ["first"])]  # never called


async def test_restage_stages_what_a_failed_commit_did_not_fire(sidecar):
    notes = Notes(fail_on={"bad"})
    async with serve(sidecar, [notes.resource()]) as served:
        conn = await served.connect()
        await conn.execute("BEGIN")
        for title in ("good", "bad", "later"):
            await conn.execute("INSERT INTO notes (title) VALUES (%s)", [title])
        with pytest.raises(psycopg.errors.ExternalRoutineException) as info:
            await conn.execute("COMMIT")
        hint = info.value.diag.message_hint or ""
        txid = int(re.search(r"scratchpad\.restage\((\d+)\)", hint).group(1))
        cur = await conn.execute(JOURNAL, [txid])
        rows = await cur.fetchall()
        assert [r[3] for r in rows] == ["fired", "failed", "not run"]
        assert "the notes API refused" in rows[1][7]
        keys = [r[6] for r in rows]
        # The tool is fixed; the writes that did not fire are staged again, in a new
        # transaction, with their keys.
        notes.fail_on.clear()
        conn.notices.clear()
        cur = await conn.execute(f"SELECT scratchpad.restage({txid})")
        assert (await cur.fetchone())[0].startswith(f"staged 2 writes of transaction {txid}")
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        assert [n[1].split(" (")[0] for n in conn.notices] == [
            "staged #4 again: notes.insert(1 row)", "staged #5 again: notes.insert(1 row)"]
        cur = await conn.execute("SELECT id, status FROM scratchpad.staged")
        assert await cur.fetchall() == [(4, "staged"), (5, "staged")]
        await conn.execute("COMMIT")
        assert [d for v, d in notes.writes()] == [["good"], ["bad"], ["bad"], ["later"]]
        assert notes.keys() == [keys[0], keys[1], keys[1], keys[2]]
        # Nothing is left to stage: a second restage fires nothing twice.
        cur = await conn.execute("SELECT scratchpad.restage(%s)", [txid])
        assert (await cur.fetchone())[0].startswith("nothing to stage")
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            await conn.execute("SELECT scratchpad.restage(1) FROM notes")
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            await conn.execute("SELECT scratchpad.restage(987654321)")
        bob = await served.connect("bob")
        with pytest.raises(psycopg.errors.InvalidParameterValue):  # not bob's to restage
            await bob.execute(f"SELECT scratchpad.restage({txid})")
        await bob.close()
        await conn.close()


async def test_commit_failure_reports_fired_failed_and_not_run(make_db):
    rec = Recorder()
    db = await make_db([notes(rec, [Note(id=1, title="a"), Note(id=2, title="b")])])
    s = db.session()
    await s.execute("BEGIN")
    await s.execute("INSERT INTO notes (title) VALUES ('one')")
    await s.execute("DELETE FROM notes WHERE id = 2")
    await s.execute("UPDATE notes SET body = 'x' WHERE id = 1")
    await s.execute("INSERT INTO notes (title) VALUES ('four')")
    # Another session deletes note 1 meanwhile: at COMMIT the UPDATE's resolver raises.
    await db.session().execute("DELETE FROM notes WHERE id = 1")
    with pytest.raises(errors.ExternalRoutineError) as info:
        await s.execute("COMMIT")
    assert "#3" in info.value.message
    assert "fired" in info.value.detail and "failed" in info.value.detail
    assert "not run" in info.value.detail
    # the 4th never ran
    assert [w[0] for w in rec.writes] == ["delete", "insert", "delete", "update"]
    assert s.tx_status == "I"
