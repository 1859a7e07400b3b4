"""The portal run, through the wire: a prepared read whose calls are all cached, sent as
Bind, [Describe], Execute and Sync together (as asyncpg and libpq send each execution),
is answered in one pass, and the client gets what the messages one by one would give
it: the rows and their description, the sidecar's error (and the connection goes on),
the statement timeout, a client's cancel and ``pg_cancel_backend``, and its row in
``scratchpad.activity`` while it runs. A compiled read with a call to make is answered
in one pass by the connection's task, to the same answers, NOTICEs and errors. Inside a
transaction block it is not taken."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import psycopg
import pytest

from glove_scratchpad.resources import Bindings, define_resource
from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits
from glove_scratchpad.server.net import portal_run
from glove_scratchpad.server.net.callbacks import Answering

from ..engine.fix_cache import BIG, counting, database_name, serve
from ..fix_server import dsn as dsn_of
from ..fix_server import serving

LOOKUP = "SELECT id, label FROM big WHERE id = $1"


@pytest.fixture
def portal_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many portal runs were taken (answered in one pass: by the connection's task,
    or in the transports' callbacks)."""
    runs = [0, 0]  # all, and those answered in callbacks
    real, start = portal_run.in_task, Answering.start

    async def counted(h: Any, run: Any, pending: Any) -> bool:
        taken = await real(h, run, pending)
        runs[0] += taken
        return taken

    def answered(self: Answering, run: Any) -> bool:
        taken = start(self, run)
        runs[0] += taken
        runs[1] += taken
        return taken

    monkeypatch.setattr(portal_run, "in_task", counted)
    monkeypatch.setattr(Answering, "start", answered)
    return runs


@pytest.fixture
async def kept(sidecar: Any, monkeypatch: pytest.MonkeyPatch
               ) -> AsyncIterator[tuple[Database, str]]:
    async with serve(sidecar, counting(monkeypatch),
                     Limits(cache_min_rows=20, row_limit=50)) as pair:
        yield pair


async def test_a_prepared_lookup_is_one_portal_run_with_the_answers_of_the_full_path(
        kept: tuple[Database, str], portal_runs: list[int]) -> None:
    _, dsn = kept
    conn = await asyncpg.connect(dsn)  # Bind, Execute, Sync
    try:
        lookup = await conn.prepare(LOOKUP)
        assert await lookup.fetch(7) == [(7, "label 7")]  # the full path: compiled after
        for i in (8, 9, 100_000):
            assert await lookup.fetch(i) == [(i, f"label {i}")]
        assert portal_runs == [3, 3]  # each in the transports' callbacks
        # The row limit cuts it as it cuts any read, with its NOTICE.
        notices: list[Any] = []
        conn.add_log_listener(lambda _c, msg: notices.append(msg))
        many = await conn.prepare("SELECT id FROM big WHERE id <= $1 ORDER BY id")
        assert len(await many.fetch(10)) == 10
        assert [r["id"] for r in await many.fetch(60)] == list(range(1, 51))
        assert portal_runs[0] == 4
        await asyncio.sleep(0.05)
        assert ["row limit" in n.message for n in notices] == [True]
    finally:
        await conn.close()
    # libpq (psycopg's prepared statements): Bind, Describe, Execute, Sync.
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as pc:
        for i in range(1, 6):
            cur = await pc.execute("SELECT id, label FROM big WHERE id = %s", (i,), prepare=True)
            assert await cur.fetchall() == [(i, f"label {i}")]
            assert [d.name for d in cur.description or ()] == ["id", "label"]
    assert portal_runs[0] > 5


async def test_a_compiled_read_with_a_call_to_make_is_one_portal_run_of_the_task(
        sidecar: Any, monkeypatch: pytest.MonkeyPatch, portal_runs: list[int]) -> None:
    # A new id each time: the callbacks find its call not cached, and the task makes the
    # call and answers the run in one pass, as the messages one by one would.
    counts = counting(monkeypatch)
    async with serve(sidecar, counts) as (_, dsn):
        conn = await asyncpg.connect(dsn)
        try:
            lookup = await conn.prepare("SELECT label FROM item WHERE id = $1")
            assert await lookup.fetch(3) == [("label 3",)]  # the full path: compiled after
            assert portal_runs == [0, 0]
            for i in (4, 5, 6):
                assert await lookup.fetch(i) == [(f"label {i}",)]
            assert portal_runs == [3, 0]  # each by the task
            assert await lookup.fetch(5) == [("label 5",)]  # kept in memory: in callbacks
            assert portal_runs == [4, 1]
            notices: list[str] = []
            conn.add_log_listener(lambda _c, msg: notices.append(msg.message))
            for _ in range(2):  # no rows: its NOTICE, each time
                assert await lookup.fetch(BIG + 1) == []
            await asyncio.sleep(0.05)
            assert notices == [f'resource "item" returned no rows for id = {BIG + 1}'] * 2
            assert portal_runs == [6, 1]
            # The sidecar's error after the call, and the connection goes on.
            quotient = await conn.prepare(
                "SELECT label, 10 / $2::int AS q FROM item WHERE id = $1")
            assert await quotient.fetch(10, 5) == [("label 10", 2)]  # compiled after
            with pytest.raises(asyncpg.DivisionByZeroError):
                await quotient.fetch(11, 0)
            assert await quotient.fetch(12, 2) == [("label 12", 5)]
            assert portal_runs == [8, 1]
        finally:
            await conn.close()
        # libpq: Bind, Describe, Execute, Sync, with the portal's description.
        sql = "SELECT label FROM item WHERE id = %s"
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as pc:
            for i in (7, 8, 9):
                cur = await pc.execute(sql, (i,), prepare=True)
                assert await cur.fetchall() == [(f"label {i}",)]
                assert [d.name for d in cur.description or ()] == ["label"]
    assert portal_runs == [10, 1]  # psycopg's first execution sends its Parse with it
    assert counts.calls == {"item": 11}  # 3 to 12 and the missing id: each once


async def test_a_call_made_in_a_portal_run_of_the_task_times_out_and_is_canceled(
        sidecar: Any, portal_runs: list[int]) -> None:
    async def nap(b: Bindings) -> list[dict[str, Any]]:
        await asyncio.sleep(b.one("ms") / 1000)
        return [{"ms": b.one("ms"), "label": f"slept {b.one('ms')}"}]

    db = await Database.create(
        [define_resource("nap", columns=[("ms", "bigint"), ("label", "text")], keys=["ms"],
                         volatility="immutable", select=nap)],
        sidecar=sidecar, database=database_name())
    try:
        async with serving(db) as server:
            conn = await asyncpg.connect(dsn_of(server))
            try:
                lookup = await conn.prepare("SELECT label FROM nap WHERE ms = $1")
                assert await lookup.fetch(1) == [("slept 1",)]  # the full path: compiled
                await conn.execute("SET statement_timeout = '200ms'")
                with pytest.raises(asyncpg.QueryCanceledError, match="statement timeout"):
                    await lookup.fetch(5000)
                await conn.execute("RESET statement_timeout")
                with pytest.raises(TimeoutError):  # asyncpg sends a CancelRequest
                    await lookup.fetch(6000, timeout=0.3)
                assert await lookup.fetch(2) == [("slept 2",)]  # the connection goes on
                assert portal_runs == [3, 0]
            finally:
                await conn.close()
    finally:
        await db.close()


async def test_a_result_over_max_result_bytes_is_refused_in_callbacks_too(
        sidecar: Any, monkeypatch: pytest.MonkeyPatch, portal_runs: list[int]) -> None:
    # The run relays the sidecar's rows as they came when nothing is to be cut; a result
    # over the size limit still gets 54000, never its rows in part, and the connection
    # goes on.
    limits = Limits(cache_min_rows=20, max_result_bytes=2000)
    async with serve(sidecar, counting(monkeypatch), limits) as (_, dsn):
        conn = await asyncpg.connect(dsn)
        try:
            padded = await conn.prepare(
                "SELECT id, repeat(label, $2::int) AS l FROM big WHERE id = $1")
            assert await padded.fetch(1, 1) == [(1, "label 1")]  # the full path: compiled
            assert await padded.fetch(2, 100) == [(2, "label 2" * 100)]  # 700 bytes
            with pytest.raises(asyncpg.ProgramLimitExceededError, match="at most 2000"):
                await padded.fetch(3, 1000)
            assert await padded.fetch(4, 1) == [(4, "label 4")]
            assert portal_runs == [3, 3]
        finally:
            await conn.close()


async def test_the_sidecars_error_ends_the_run_and_the_connection_goes_on(
        kept: tuple[Database, str], portal_runs: list[int]) -> None:
    _, dsn = kept
    conn = await asyncpg.connect(dsn)
    try:
        quotient = await conn.prepare("SELECT label, 10 / $2::int AS q FROM big WHERE id = $1")
        assert await quotient.fetch(1, 5) == [("label 1", 2)]
        with pytest.raises(asyncpg.DivisionByZeroError):
            await quotient.fetch(2, 0)
        assert await quotient.fetch(3, 2) == [("label 3", 5)]
        assert portal_runs == [2, 2]  # the error, too, answered in callbacks
        # In a transaction block the messages are read one by one, to the same answer.
        async with conn.transaction():
            assert await quotient.fetch(4, 1) == [("label 4", 10)]
        assert portal_runs[0] == 2
    finally:
        await conn.close()


async def test_a_portal_run_held_up_in_the_sidecar_times_out_and_is_canceled(
        kept: tuple[Database, str], portal_runs: list[int]) -> None:
    db, dsn = kept
    conn = await asyncpg.connect(dsn)
    watcher = await asyncpg.connect(dsn)
    admin = await asyncpg.connect(db.catalog.sidecar.dsn, database=db.catalog.database)
    try:
        lookup = await conn.prepare("SELECT label FROM big WHERE id = $1")
        assert await lookup.fetch(1) == [("label 1",)]
        [(schema, table)] = await admin.fetch(  # the test's database keeps big's call only
            "SELECT schemaname, tablename FROM pg_tables WHERE schemaname LIKE '\\_gs\\_cache%'")
        async with admin.transaction():  # the kept table locked: reads of it wait
            await admin.execute(f'LOCK TABLE "{schema}"."{table}" IN ACCESS EXCLUSIVE MODE')
            await conn.execute("SET statement_timeout = '300ms'")
            with pytest.raises(asyncpg.QueryCanceledError, match="statement timeout"):
                await lookup.fetch(2)
            await conn.execute("RESET statement_timeout")
            pid = conn.get_server_pid()
            waiting = asyncio.ensure_future(lookup.fetch(3))
            async with asyncio.timeout(10):
                while not await watcher.fetch(
                        "SELECT 1 FROM scratchpad.activity WHERE pid = $1 AND state = 'active' "
                        "AND query = $2", pid, "SELECT label FROM big WHERE id = $1"):
                    await asyncio.sleep(0.05)
            assert await watcher.fetchval("SELECT pg_cancel_backend($1)", pid) is True
            with pytest.raises(asyncpg.QueryCanceledError, match="user request"):
                await waiting
        # The first in callbacks: its timer. Its sidecar connection closed, the pool may
        # have none idle, and the second took the task (either is stopped in the sidecar).
        assert portal_runs[0] == 2 and portal_runs[1] >= 1
        assert await lookup.fetch(4) == [("label 4",)]  # the lock gone, it goes on
        assert portal_runs[0] == 3
    finally:
        for c in (conn, watcher, admin):
            await c.close()


async def _kept_table(admin: asyncpg.Connection) -> str:
    [(schema, table)] = await admin.fetch(  # the test's database keeps big's call only
        "SELECT schemaname, tablename FROM pg_tables WHERE schemaname LIKE '\\_gs\\_cache%'")
    return f'"{schema}"."{table}"'


async def _waiting_on_lock(admin: asyncpg.Connection) -> int:
    """The sidecar's backends waiting for a lock (the kept table's, here)."""
    return await admin.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
        "AND pid <> pg_backend_pid()")


async def _locked_run(db: Database, dsn: str, gone: bool, portal_runs: list[int]) -> None:
    """A run held up by a lock, ended by the client's CancelRequest or by the client
    going away; the sidecar's backend stops waiting while the lock is still held."""
    conn = await asyncpg.connect(dsn)
    admin = await asyncpg.connect(db.catalog.sidecar.dsn, database=db.catalog.database)
    try:
        lookup = await conn.prepare(LOOKUP)
        assert await lookup.fetch(1) == [(1, "label 1")]
        table = await _kept_table(admin)
        async with admin.transaction():
            await admin.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
            if gone:
                waiting = asyncio.ensure_future(lookup.fetch(3))
                async with asyncio.timeout(10):
                    while not await _waiting_on_lock(admin):
                        await asyncio.sleep(0.05)
                watcher = await asyncpg.connect(dsn)  # it is active, as any statement is
                assert await watcher.fetch(
                    "SELECT state, query FROM scratchpad.activity WHERE pid = $1",
                    conn.get_server_pid()) == [("active", LOOKUP)]
                await watcher.close()
                conn.terminate()  # gone mid-run
                with pytest.raises(asyncpg.ConnectionDoesNotExistError):
                    await waiting
            else:  # asyncpg's timeout sends a CancelRequest, and the connection goes on
                with pytest.raises(TimeoutError):
                    await lookup.fetch(2, timeout=0.3)
            async with asyncio.timeout(10):
                while await _waiting_on_lock(admin):  # canceled, though the lock is held
                    await asyncio.sleep(0.05)
        assert portal_runs == [1, 1]  # it was answered in callbacks
        if not gone:
            assert await lookup.fetch(4) == [(4, "label 4")]
    finally:
        for c in (conn, admin):
            if not c.is_closed():
                await c.close()
    again = await asyncpg.connect(dsn)
    try:
        assert await again.fetch(LOOKUP, 5) == [(5, "label 5")]
    finally:
        await again.close()


async def test_a_clients_cancel_stops_a_run_answered_in_callbacks_in_the_sidecar(
        kept: tuple[Database, str], portal_runs: list[int]) -> None:
    await _locked_run(*kept, gone=False, portal_runs=portal_runs)


async def test_a_client_gone_mid_run_stops_it_in_the_sidecar(
        kept: tuple[Database, str], portal_runs: list[int]) -> None:
    await _locked_run(*kept, gone=True, portal_runs=portal_runs)


async def test_more_runs_than_idle_sidecar_connections_take_the_task_and_all_are_answered(
        kept: tuple[Database, str], portal_runs: list[int]) -> None:
    """Runs held up in the sidecar take its idle connections in callbacks; the others
    take their connections' tasks, and beyond the user's share of the pool's 16
    connections wait for one.
    Once the lock goes, every one is answered, each with its own row."""
    db, dsn = kept
    clients = [await asyncpg.connect(dsn) for _ in range(20)]
    admin = await asyncpg.connect(db.catalog.sidecar.dsn, database=db.catalog.database)
    try:
        lookups = [await c.prepare(LOOKUP) for c in clients]
        assert await lookups[0].fetch(1) == [(1, "label 1")]  # compiled now
        # All at once: the pool opens its 16 connections (a backend cannot start while
        # the kept table is locked).
        answers = await asyncio.gather(*(lookup.fetch(i + 1) for i, lookup in enumerate(lookups)))
        assert answers == [[(i + 1, f"label {i + 1}")] for i in range(20)]
        before = list(portal_runs)
        table = await _kept_table(admin)
        async with admin.transaction():
            await admin.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
            waiting = [asyncio.ensure_future(lookup.fetch(100 + i))
                       for i, lookup in enumerate(lookups)]
            # The pool's 16 connections but the 2 one user leaves to the others (its
            # sidecar_reserve) wait on the lock.
            async with asyncio.timeout(10):
                while await _waiting_on_lock(admin) < 16 - Limits().sidecar_reserve:
                    await asyncio.sleep(0.05)
            assert not any(w.done() for w in waiting)
        answers = await asyncio.wait_for(asyncio.gather(*waiting), 10)
        assert answers == [[(100 + i, f"label {100 + i}")] for i in range(20)]
        callbacks = portal_runs[1] - before[1]
        assert portal_runs[0] - before[0] == 20
        assert 1 <= callbacks <= 14  # some in callbacks, the rest (6 at least) in their tasks
    finally:
        for c in (*clients, admin):
            await c.close()
