"""A connection's phases (``net/phases.py``): the table of moves as data, and what each
phase does with what comes, over the wire.

The table: every phase is reached from the start and reaches the end, nothing leaves
the end, a statement runs only from READING, and a move the table does not allow is
caught at once. Over the wire, with a raw socket: message sequences answered as
Postgres answers them (an error drops what comes until Sync; a portal run; the normal
phase's CopyData ignored; Terminate). With psycopg: a cancel stops the statement that
runs and a second one does nothing; a cancel with nothing running cancels nothing;
a cancel of a COMMIT is ignored, and the COMMIT ends as it would have.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import psycopg
import pytest

from glove_scratchpad.server.net.phases import MOVES, RUNS, ImpossibleMove, Phase, check
from glove_scratchpad.wire import (
    Bind,
    BindComplete,
    CommandComplete,
    CopyData,
    DataRow,
    ErrorResponse,
    Execute,
    Parse,
    ParseComplete,
    Query,
    ReadyForQuery,
    RowDescription,
    Sync,
    Terminate,
)

from ..engine.fix_reliability import Notes, serve
from ..fidelity.rawclient import RawClient

LOOKUP = "SELECT id, name FROM items WHERE id = $1"


# -- the table ---------------------------------------------------------------------------


def _reached(start: Phase) -> set[Phase]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in MOVES[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_every_phase_is_reached_from_the_start_and_reaches_the_end():
    assert _reached(Phase.STARTING) == set(Phase)
    assert all(Phase.CLOSED in _reached(phase) for phase in Phase)
    assert MOVES[Phase.CLOSED] == frozenset()  # nothing leaves it
    assert all(Phase.CLOSED in MOVES[phase] for phase in Phase if phase is not Phase.CLOSED)


def test_the_task_runs_a_statement_only_from_reading_and_a_cancel_only_one_that_runs():
    assert [p for p in Phase if Phase.RUNNING in MOVES[p]] == [Phase.READING]
    assert [p for p in Phase if Phase.CANCELING in MOVES[p]] == [Phase.RUNNING]
    # A run answered in callbacks never meets a statement of the task's.
    assert not MOVES[Phase.ANSWERING] & RUNS
    assert all(Phase.ANSWERING not in MOVES[p] for p in RUNS)
    assert frozenset((Phase.RUNNING, Phase.CANCELING)) == RUNS


@pytest.mark.parametrize(("now", "to"), [
    (Phase.PARKED, Phase.RUNNING),  # a statement while the task waits for a request
    (Phase.ANSWERING, Phase.RUNNING),  # while callbacks answer a run
    (Phase.READING, Phase.CANCELING),  # a cancel with nothing running
    (Phase.STARTING, Phase.ANSWERING),  # before start-up ended
    (Phase.CLOSED, Phase.READING),  # after the end
])
def test_a_move_the_table_does_not_allow_is_caught_at_once(now, to):
    with pytest.raises(ImpossibleMove, match=f"from {now.name} to {to.name}"):
        check(now, to)


def test_a_move_the_table_allows_is_the_next_phase():
    assert [check(now, to) for now in Phase for to in MOVES[now]] == [
        to for now in Phase for to in MOVES[now]]


# -- over the wire: sequences of messages --------------------------------------------------

_ITEM_7 = [RowDescription, DataRow, CommandComplete]
SEQUENCES = {
    "an error drops what comes until Sync": (
        [Execute("nowhere", 0), Parse("", LOOKUP, ()), Bind("", "", (), (b"7",), ()),
         Execute("", 0), Sync()],
        [ErrorResponse, ReadyForQuery]),
    "Sync alone is ReadyForQuery": ([Sync()], [ReadyForQuery]),
    "a Query after an error and Sync runs": (
        [Bind("", "missing", (), (), ()), Sync(), Query("SELECT 1")],
        [ErrorResponse, ReadyForQuery, RowDescription, DataRow, CommandComplete,
         ReadyForQuery]),
    "a portal run, Bind, Execute and Sync together": (
        [Parse("item", LOOKUP, ()), Sync(), Bind("", "item", (), (b"7",), ()),
         Execute("", 0), Sync()],
        [ParseComplete, ReadyForQuery, BindComplete, DataRow, CommandComplete,
         ReadyForQuery]),
    "CopyData in the normal phase is ignored": (
        [CopyData(b"stray"), Query("SELECT id, name FROM items WHERE id = 7")],
        [*_ITEM_7, ReadyForQuery]),
}


@pytest.mark.parametrize("name", list(SEQUENCES))
async def test_a_sequence_of_messages_is_answered_as_postgres_answers_it(server, name):
    sent, expected = SEQUENCES[name]
    client = await RawClient.open("127.0.0.1", server.port)
    try:
        assert isinstance((await client.startup())[-1], ReadyForQuery)
        client.send(*sent)
        replies: list[Any] = []
        while len(replies) < len(expected):
            replies.append(await client.recv())
        assert [type(m) for m in replies] == expected
        assert [m.status for m in replies if isinstance(m, ReadyForQuery)] == [
            "I"] * expected.count(ReadyForQuery)
        client.send(Terminate())  # the end: nothing more is said
        assert await client.closed()
    finally:
        await client.close()


# -- over the wire: cancels ----------------------------------------------------------------


async def test_a_cancel_stops_the_statement_and_a_second_one_does_nothing(dsn):
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        running = asyncio.ensure_future(
            conn.execute("SELECT done FROM slow WHERE seconds = 30"))
        await asyncio.sleep(0.3)  # it runs: the call sleeps
        await conn.cancel_safe()
        await conn.cancel_safe()  # while the first is canceling
        with pytest.raises(psycopg.errors.QueryCanceled):
            await asyncio.wait_for(running, 10)
        # Nothing is left pending: the next statement runs to its end.
        cur = await conn.execute("SELECT done FROM slow WHERE seconds = 0.3")
        assert await cur.fetchall() == [(True,)]


async def test_a_cancel_with_nothing_running_cancels_nothing(dsn):
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.cancel_safe()
        await asyncio.sleep(0.1)
        cur = await conn.execute("SELECT done FROM slow WHERE seconds = 0.2")
        assert await cur.fetchall() == [(True,)]


async def test_a_cancel_of_a_commit_is_ignored_and_the_commit_ends_as_it_would_have(sidecar):
    notes = Notes(gate=threading.Event())
    async with serve(sidecar, [notes.resource()]) as served:
        conn = await served.connect()
        await conn.execute("BEGIN")
        await conn.execute("INSERT INTO notes (title) VALUES ('kept')")
        committing = asyncio.ensure_future(conn.execute("COMMIT"))
        try:
            assert await asyncio.to_thread(notes.entered.wait, 10)  # the write fires
            await conn.cancel_safe()
            # A cancel that stopped the COMMIT would answer within this second.
            done, _ = await asyncio.wait([committing], timeout=1.0)
            assert not done
        finally:
            assert notes.gate is not None
            notes.gate.set()
        cur = await asyncio.wait_for(committing, 10)
        assert cur.statusmessage == "COMMIT"
        assert notes.writes() == [("insert", ["kept"])]
        cur = await conn.execute("SELECT 1")  # and the connection goes on
        assert await cur.fetchall() == [(1,)]
