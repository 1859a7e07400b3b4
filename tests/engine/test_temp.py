"""A session's temporary tables, through the wire: made from a volatile resource with one
call, read later with none, joined with resources, seen by no other session and gone
after a reconnect; a resource's name refused; ON COMMIT DROP; not undone by ROLLBACK
(a NOTICE says so); every other DDL still refused."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import psycopg
import pytest
from pydantic import BaseModel

from glove_scratchpad.resources import Bindings, define_resource
from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits

from ..fix_server import dsn as dsn_of
from ..fix_server import serving
from .fix_cache import database_name


class Pick(BaseModel):
    id: int
    label: str


class Task(BaseModel):
    id: int
    title: str


@pytest.fixture
async def served(sidecar: Any) -> AsyncIterator[tuple[str, list[int]]]:
    calls: list[int] = []

    def picks(b: Bindings) -> list[dict[str, Any]]:
        calls.append(1)
        return [{"id": i, "label": f"pick {i}"} for i in range(1, 501)]

    def tasks(b: Bindings) -> list[dict[str, Any]]:
        return [{"id": i, "title": f"task {i}"} for i in (1, 2, 3)]

    db = await Database.create([
        define_resource("picks", schema=Pick, volatility="volatile", select=picks),
        define_resource("tasks", schema=Task, volatility="volatile", select=tasks,
                        insert=lambda rows: None, primary_key=["id"]),
    ], writes=True, sidecar=sidecar, database=database_name(),
        limits=Limits(temp_table_limit_mb=1))
    async with serving(db, writes=True) as server:
        yield dsn_of(server), calls
    await db.close()


async def test_as_calls_once_and_later_reads_call_nothing(
        served: tuple[str, list[int]]) -> None:
    dsn, calls = served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = await conn.execute("CREATE TEMP TABLE mine AS SELECT id, label FROM picks")
        assert cur.statusmessage == "SELECT 500"
        assert len(calls) == 1
        for _ in range(3):
            cur = await conn.execute("SELECT count(*) FROM mine WHERE id % 2 = 0")
            assert await cur.fetchone() == (250,)
        assert len(calls) == 1
        cur = await conn.execute(
            "SELECT m.label, t.title FROM mine m JOIN tasks t ON t.id = m.id ORDER BY m.id")
        assert await cur.fetchall() == [(f"pick {i}", f"task {i}") for i in (1, 2, 3)]
        assert len(calls) == 1
        # The rows are the session's own: INSERT, UPDATE, DELETE, TRUNCATE, DROP.
        cur = await conn.execute("INSERT INTO mine VALUES (1000, 'extra')")
        assert cur.statusmessage == "INSERT 0 1"
        cur = await conn.execute("UPDATE mine SET label = 'x' WHERE id <= 10")
        assert cur.statusmessage == "UPDATE 10"
        cur = await conn.execute("DELETE FROM mine WHERE id > 100")
        assert cur.statusmessage == "DELETE 401"
        cur = await conn.execute("SELECT id, label INTO TEMP evens FROM mine WHERE id % 2 = 0")
        assert cur.statusmessage == "SELECT 50"
        await conn.execute("TRUNCATE mine")
        cur = await conn.execute("SELECT count(*) FROM mine")
        assert await cur.fetchone() == (0,)
        await conn.execute("DROP TABLE mine, evens")
        with pytest.raises(psycopg.errors.UndefinedTable):
            await conn.execute("SELECT * FROM mine")
    assert len(calls) == 1


async def test_columns_prepared_and_other_sessions(served: tuple[str, list[int]]) -> None:
    dsn, _ = served
    a = await asyncpg.connect(dsn)
    b = await asyncpg.connect(dsn)
    try:
        assert await a.execute("CREATE TEMP TABLE notes (id int PRIMARY KEY, body text "
                               "DEFAULT 'none')") == "CREATE TABLE"
        await a.execute("INSERT INTO notes (id) VALUES ($1)", 7)
        assert await a.fetch("SELECT id, body FROM notes WHERE id = $1", 7) == [(7, "none")]
        with pytest.raises(asyncpg.UndefinedTableError):
            await b.fetch("SELECT * FROM notes")
        with pytest.raises(asyncpg.UndefinedTableError):
            await b.fetch("SELECT id, body FROM notes WHERE id = $1", 7)
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await b.execute("DROP TABLE notes")
    finally:
        await a.close()
        await b.close()
    again = await asyncpg.connect(dsn)
    try:
        with pytest.raises(asyncpg.UndefinedTableError):
            await again.fetch("SELECT * FROM notes")
    finally:
        await again.close()


async def test_refusals_on_commit_and_rollback(served: tuple[str, list[int]]) -> None:
    dsn, _ = served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.DuplicateTable) as dup:
            await conn.execute("CREATE TEMP TABLE tasks (id int)")
        assert dup.value.diag.message_hint and "resource" in dup.value.diag.message_hint
        with pytest.raises(psycopg.errors.DuplicateTable):
            await conn.execute("CREATE TEMP TABLE picks AS SELECT 1 AS id")
        for sql in ("CREATE TABLE keep (id int)", "CREATE UNLOGGED TABLE keep (id int)",
                    "CREATE TEMP VIEW v AS SELECT 1", "SELECT 1 AS x INTO keep",
                    "CREATE TEMP TABLE f (id int REFERENCES tasks (id))",
                    "CREATE TEMP TABLE s (LIKE tasks)", "DROP TABLE tasks",
                    "TRUNCATE tasks", "CREATE TEMP TABLE public.x (id int)"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                await conn.execute(sql)
        await conn.execute("CREATE TEMP TABLE gone ON COMMIT DROP AS SELECT 1 AS id")
        with pytest.raises(psycopg.errors.UndefinedTable):
            await conn.execute("SELECT * FROM gone")
        # Temporary tables are not staged: ROLLBACK does not undo a change, and says so.
        await conn.execute("CREATE TEMP TABLE kept (id int)")
        notices: list[str] = []
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        await conn.execute("BEGIN")
        await conn.execute("INSERT INTO kept VALUES (1)")
        await conn.execute("ROLLBACK")
        assert any("ROLLBACK does not undo" in n for n in notices)
        cur = await conn.execute("SELECT id FROM kept")
        assert await cur.fetchall() == [(1,)]


async def test_size_limit_fails_the_statement_and_others_are_served(
        served: tuple[str, list[int]]) -> None:
    dsn, _ = served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute("CREATE TEMP TABLE big (t text)")
        await conn.execute("INSERT INTO big VALUES ('kept')")
        with pytest.raises(psycopg.errors.ConfigurationLimitExceeded) as over:
            # About 2.5 MB of rows that do not compress, over the 1 MB limit.
            await conn.execute(
                "INSERT INTO big SELECT md5(i::text) FROM generate_series(1, 40000) i")
        assert over.value.diag.message_hint and "DROP" in over.value.diag.message_hint
        assert "temp_table_limit_mb" in str(over.value)
        cur = await conn.execute("SELECT t FROM big")  # undone, the session goes on
        assert await cur.fetchall() == [("kept",)]
        with pytest.raises(psycopg.errors.ConfigurationLimitExceeded):
            await conn.execute("CREATE TEMP TABLE big2 AS SELECT md5(i::text) AS t "
                               "FROM generate_series(1, 40000) i")
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as other:
            cur = await other.execute("SELECT count(*) FROM tasks")
            assert await cur.fetchone() == (3,)
