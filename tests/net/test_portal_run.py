"""The portal run, through the wire: a prepared read whose calls are all cached, sent as
Bind, [Describe], Execute and Sync together (as asyncpg and libpq send each execution),
is answered in one pass, and the client gets what the messages one by one would give
it: the rows and their description, the sidecar's error (and the connection goes on),
the statement timeout, a client's cancel and ``pg_cancel_backend``, and its row in
``scratchpad.activity`` while it runs. Inside a transaction block it is not taken."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import psycopg
import pytest

from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits
from glove_scratchpad.server.net.connection import ClientHandler

from ..engine.fix_kept import counting, serve

LOOKUP = "SELECT id, label FROM big WHERE id = $1"


@pytest.fixture
def portal_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many portal runs were taken (answered in one pass: by the connection's task,
    or in the transports' callbacks)."""
    runs = [0, 0]  # all, and those answered in callbacks
    real, answer = ClientHandler.portal_run, ClientHandler.answer

    async def counted(self: ClientHandler, run: Any, pending: Any) -> bool:
        taken = await real(self, run, pending)
        runs[0] += taken
        return taken

    def answered(self: ClientHandler, run: Any) -> bool:
        taken = answer(self, run)
        runs[0] += taken
        runs[1] += taken
        return taken

    monkeypatch.setattr(ClientHandler, "portal_run", counted)
    monkeypatch.setattr(ClientHandler, "answer", answered)
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
        assert portal_runs[0] == 2
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
        assert portal_runs[0] == 2
        assert await lookup.fetch(4) == [("label 4",)]  # the lock gone, it goes on
        assert portal_runs[0] == 3
    finally:
        for c in (conn, watcher, admin):
            await c.close()
