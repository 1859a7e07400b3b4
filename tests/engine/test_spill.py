"""Spilled calls, through the wire: a large call that is not kept reaches the sidecar by
binary COPY into a table that only its statement reads, dropped when it ends; a small
one travels with the statement as before."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import psycopg
import pytest

from glove_scratchpad.catalog import cache_schema
from glove_scratchpad.resources import Bindings, define_resource
from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits

from ..fix_server import dsn, serving
from .fix_kept import Counts, database_name

SPILL = 1000


@pytest.fixture
async def numbers_served(sidecar: Any, counts: Counts) -> AsyncIterator[tuple[Database, str]]:
    def numbers(b: Bindings) -> list[dict[str, Any]]:
        counts.call("numbers")
        return [{"n": b.one("n"), "i": i, "label": f"#{i}"} for i in range(1, b.one("n") + 1)]

    numbers_resource = define_resource(
        "numbers", columns=[("n", "bigint"), ("i", "bigint"), ("label", "text")],
        keys=["n"], volatility="volatile", select=numbers, inline=True)
    db = await Database.create([numbers_resource], sidecar=sidecar, database=database_name(),
                               limits=Limits(spill_min_rows=SPILL))
    async with serving(db) as server:
        yield db, dsn(server)
    await db.close()


async def tables(db: Database) -> list[str]:
    conn = await asyncpg.connect(db.catalog.sidecar.dsn, database=db.catalog.database)
    try:
        return [r[0] for r in await conn.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = $1", cache_schema(db.schemas))]
    finally:
        await conn.close()


async def registered(db: Database) -> list[str]:
    """The kept and spilled tables the cache registry names."""
    conn = await asyncpg.connect(db.catalog.sidecar.dsn, database=db.catalog.database)
    try:
        return [r[0] for r in await conn.fetch(
            f'SELECT name FROM "{db.schemas.private}".cache_tables')]
    finally:
        await conn.close()


async def gone(db: Database) -> list[str]:
    """The spilled tables left, or still registered, once their drops (in the
    background) are done."""
    for _ in range(50):
        left = await tables(db) + await registered(db)
        if not left:
            return left
        await asyncio.sleep(0.05)
    return left


async def test_a_large_call_is_copied_read_and_dropped(numbers_served, counts):
    db, dsn = numbers_served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = await conn.execute("SELECT count(*), sum(i), max(label) FROM numbers WHERE n = %s",
                                 (5000,))
        assert await cur.fetchall() == [(5000, 5000 * 5001 // 2, "#999")]
        assert counts.injected == 0
        assert await gone(db) == []  # the table and its registry row
        # Two spilled references in one statement, joined; then both go.
        cur = await conn.execute(
            "SELECT count(*) FROM numbers a JOIN numbers b ON b.i = a.i "
            "WHERE a.n = 3000 AND b.n = 4000")
        assert await cur.fetchall() == [(3000,)]
        assert counts.injected == 0
    assert counts.calls == {"numbers": 3}  # volatile: called by every statement
    assert await gone(db) == []
    assert not db.kept.entries  # nothing is kept


async def test_a_small_call_travels_with_its_statement(numbers_served, counts):
    db, dsn = numbers_served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = await conn.execute("SELECT count(*) FROM numbers WHERE n = %s", (SPILL - 1,))
        assert await cur.fetchall() == [(SPILL - 1,)]
    assert counts.injected == SPILL - 1
    assert await tables(db) == []


async def test_a_failing_statement_drops_its_spilled_table_too(numbers_served, counts):
    db, dsn = numbers_served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.DivisionByZero):
            await conn.execute("SELECT i / (i - 7) FROM numbers WHERE n = 2000")
    assert counts.injected == 0
    assert await gone(db) == []
