"""The commit journal, restaging, and each user's own audit, over the wire.

- ``scratchpad.journal`` keeps one row per write of a COMMIT, journaled before it
  fires: ``firing`` is seen from another session of the same user while the tool
  runs, and ``fired``/``failed``/``not run`` after; ``result`` is what the tool
  returned, and the NOTICE of a fired write names its row.
- (A failed COMMIT's ``not run`` writes, and restaging them: test_commit.py.)
- A write found ``firing`` when a server starts is ``in doubt``; restage refuses it
  unless forced, and then its retry carries the same key.
- A user reads only their own calls and journal rows (an administrator: all),
  also after a restart, when session ids begin again.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import threading
from typing import Any

import asyncpg
import psycopg
import pytest

from glove_scratchpad.catalog import LIVE_LOCK

from .fix_reliability import Notes, Served, fresh_name, serve

JOURNAL = ("SELECT seq, resource, verb, status, arguments, result, idempotency_key, error "
           "FROM scratchpad.journal WHERE txid = %s ORDER BY seq")


def txid_of(detail: str | None) -> int:
    found = re.match(r"scratchpad\.journal txid (\d+), seq", detail or "")
    assert found, detail
    return int(found.group(1))


async def test_commit_journals_each_write_and_its_notice_names_the_row(sidecar):
    notes = Notes()
    async with serve(sidecar, [notes.resource()]) as served:
        conn = await served.connect()
        await conn.execute("BEGIN")
        await conn.execute("INSERT INTO notes (title) VALUES ('third')")
        await conn.execute("UPDATE notes SET body = 'edited' WHERE id = 1")
        conn.notices.clear()
        await conn.execute("COMMIT")
        (sev, message, detail, _), (_, message2, detail2, _) = conn.notices
        assert (sev, message) == ("NOTICE", "fired #1: notes.insert(1 row)")
        txid = txid_of(detail)
        assert detail.startswith(f"scratchpad.journal txid {txid}, seq 1; the tool returned: ")
        assert '"id": 3' in detail  # what the tool assigned
        assert message2.startswith("fired #2: notes.update(")
        assert detail2 == f"scratchpad.journal txid {txid}, seq 2"
        cur = await conn.execute(JOURNAL, [txid])
        (s1, r1, v1, st1, a1, res1, k1, e1), (s2, _, v2, st2, a2, _, k2, _) = \
            await cur.fetchall()
        assert (s1, r1, v1, st1, e1) == (1, "notes", "insert", "fired", None)
        assert a1 == {"rows": [{"id": None, "title": "third", "body": ""}]}
        assert res1 == [{"id": 3, "title": "third", "body": ""}]
        assert (s2, v2, st2, a2) == (2, "update", "fired", {"set": {"body": "edited"},
                                                             "where": {"id": 1}})
        assert notes.keys() == [k1, k2] and k1 != k2
        await conn.close()


async def test_a_write_reads_firing_from_another_session_while_its_tool_runs(sidecar):
    notes = Notes(gate=threading.Event())
    async with serve(sidecar, [notes.resource()]) as served:
        writer, watcher, other = (await served.connect("ann"), await served.connect("ann"),
                                  await served.connect("bob"))
        await writer.execute("BEGIN")
        await writer.execute("INSERT INTO notes (title) VALUES ('slow')")
        committing = asyncio.ensure_future(writer.execute("COMMIT"))
        assert await asyncio.to_thread(notes.entered.wait, 10)
        cur = await watcher.execute("SELECT txid, status FROM scratchpad.journal")
        [(txid, status)] = await cur.fetchall()
        assert status == "firing"
        cur = await other.execute("SELECT count(*) FROM scratchpad.journal")
        assert await cur.fetchone() == (0,)  # bob's journal is his own
        notes.gate.set()
        await committing
        cur = await watcher.execute("SELECT status FROM scratchpad.journal WHERE txid = %s",
                                    [txid])
        assert await cur.fetchall() == [("fired",)]
        for conn in (writer, watcher, other):
            await conn.close()


async def _commit_held(served: Served, notes: Notes, title: str) -> tuple[Any, Any]:
    """A connection whose COMMIT of one insert is firing, its tool call held by
    ``notes.gate``; and that COMMIT, to await once the gate is set."""
    conn = await served.connect()
    await conn.execute("BEGIN")
    await conn.execute("INSERT INTO notes (title) VALUES (%s)", [title])
    committing = asyncio.ensure_future(conn.execute("COMMIT"))
    assert await asyncio.to_thread(notes.entered.wait, 10)
    return conn, committing


async def test_a_write_firing_when_a_server_stops_is_in_doubt_and_keeps_its_key(sidecar):
    name = fresh_name()
    before = Notes(gate=threading.Event())
    async with serve(sidecar, [before.resource()], database=name) as first:
        conn, committing = await _commit_held(first, before, "maybe")
        # The server dies here, its tool call in flight: its hold on the name goes with it,
        # and the next one starts on its journal.
        await _lose_the_name(sidecar, name)
        after = Notes()
        async with serve(sidecar, [after.resource()], database=name) as second:
            again = await second.connect()
            cur = await again.execute("SELECT txid, status, idempotency_key "
                                      "FROM scratchpad.journal")
            [(txid, status, key)] = await cur.fetchall()
            assert status == "in doubt" and before.keys() == [key]
            with pytest.raises(psycopg.errors.InvalidTransactionState) as info:
                await again.execute("SELECT scratchpad.restage(%s)", [txid])
            assert "its server stopped while it ran" in (info.value.diag.message_detail or "")
            again.notices.clear()
            await again.execute("SELECT scratchpad.restage(%s, force => true)", [txid])
            [(severity, message, _, hint)] = again.notices
            assert severity == "WARNING" and "in doubt" in message and key in message
            assert "same idempotency key" in hint
            await again.execute("COMMIT")
            assert after.keys() == [key]  # the retry carries the first attempt's key
            await again.close()
        before.gate.set()
        await committing
        await conn.close()


async def test_each_user_reads_their_own_calls_also_after_a_restart(sidecar, monkeypatch):
    from glove_scratchpad.server.engine import session as session_module

    def new_process() -> None:
        # What a new process starts from: a counter of session ids, if there still were one.
        monkeypatch.setattr(session_module, "_SESSION_IDS", itertools.count(1), raising=False)

    name = fresh_name()
    new_process()
    async with serve(sidecar, [Notes().resource()], database=name) as first:
        ann, ann_too = await first.connect("ann"), await first.connect("ann")
        await ann.execute("SELECT * FROM notes WHERE id = 1")
        cur = await ann_too.execute("SELECT user_name, session FROM scratchpad.calls")
        [(user, ann_session)] = await cur.fetchall()  # the user's calls, from any session
        assert user == "ann"
        await ann.close()
        await ann_too.close()
    new_process()
    async with serve(sidecar, [Notes().resource()], database=name) as second:
        bob, root = await second.connect("bob"), await second.connect("root")
        await bob.execute("SELECT * FROM notes WHERE id = 2")
        cur = await bob.execute("SELECT user_name, session, resource FROM scratchpad.calls")
        [(user, bob_session, resource)] = await cur.fetchall()  # not ann's call
        assert (user, resource) == ("bob", "notes") and bob_session != ann_session
        cur = await root.execute("SELECT DISTINCT user_name FROM scratchpad.calls ORDER BY 1")
        assert await cur.fetchall() == [("ann",), ("bob",)]  # an administrator sees all
        await bob.close()
        await root.close()


async def _lose_the_name(sidecar, database: str) -> None:
    """What a server's death does to the database: its sessions end, its locks go."""
    admin = await asyncpg.connect(sidecar.dsn, database=database)
    try:
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
            "AND classid = $1::bigint::oid AND pid <> pg_backend_pid()", LIVE_LOCK)
        # pg_terminate_backend only signals: the lock goes when the backend has ended.
        async with asyncio.timeout(10):
            while await admin.fetchval(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                    "AND classid = $1::bigint::oid AND pid <> pg_backend_pid()", LIVE_LOCK):
                await asyncio.sleep(0.05)
    finally:
        await admin.close()


async def test_a_write_firing_in_a_running_server_is_not_in_doubt_for_another(sidecar):
    # Two servers of one name share the journal: a second one starting while the first
    # fires a write must leave it firing, or a restage would fire it twice.
    name = fresh_name()
    first_notes = Notes(gate=threading.Event())
    async with serve(sidecar, [first_notes.resource()], database=name) as first:
        conn, committing = await _commit_held(first, first_notes, "once")
        async with serve(sidecar, [Notes().resource()], database=name) as second:
            other = await second.connect()
            cur = await other.execute("SELECT status FROM scratchpad.journal")
            assert await cur.fetchall() == [("firing",)]
            await other.close()
        first_notes.gate.set()
        await committing
        cur = await conn.execute("SELECT status FROM scratchpad.journal")
        assert await cur.fetchall() == [("fired",)]
        assert len(first_notes.keys()) == 1
        await conn.close()
