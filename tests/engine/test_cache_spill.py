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
from .fix_cache import Counts, database_name

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


async def cache_tables(db: Database) -> tuple[dict[str, int], list[str]]:
    """Each table of the cache schema with its count of rows; and the names the cache
    registry holds. Taken again when a table goes while it is counted."""
    conn = await asyncpg.connect(db.catalog.sidecar.dsn, database=db.catalog.database)
    schema = cache_schema(db.schemas)
    try:
        while True:
            try:
                async with conn.transaction(isolation="repeatable_read"):
                    names = [r[0] for r in await conn.fetch(
                        "SELECT tablename FROM pg_tables WHERE schemaname = $1", schema)]
                    counts = {n: await conn.fetchval(f'SELECT count(*) FROM "{schema}"."{n}"')
                              for n in names}
                    registered = [r[0] for r in await conn.fetch(
                        f'SELECT name FROM "{db.schemas.private}".cache_tables')]
                return counts, registered
            except asyncpg.UndefinedTableError:
                await asyncio.sleep(0.01)
    finally:
        await conn.close()


async def tables(db: Database) -> list[str]:
    return sorted((await cache_tables(db))[0])


async def ahead(db: Database) -> list[str]:
    """The empty tables made ahead for the next spill, once one is made."""
    for _ in range(50):
        counts, _ = await cache_tables(db)
        empty = sorted(n for n, c in counts.items() if not c)
        if empty:
            return empty
        await asyncio.sleep(0.05)
    return []


async def gone(db: Database) -> list[str]:
    """What spills left once their drops (in the background) are done: tables that
    hold rows, and a table or registry row without the other. The empty table made
    ahead for the next spill is neither."""
    for _ in range(50):
        counts, registered = await cache_tables(db)
        left = [n for n, c in counts.items() if c] + sorted(set(counts) ^ set(registered))
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


async def test_a_spill_takes_the_table_made_ahead_for_it(numbers_served, counts):
    db, dsn = numbers_served
    sql = "SELECT count(*), sum(i) FROM numbers WHERE n = %s"
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = await conn.execute(sql, (SPILL,))
        assert await cur.fetchall() == [(SPILL, SPILL * (SPILL + 1) // 2)]
        first = await ahead(db)
        assert len(first) == 1  # made after the spill, for the next one of its columns
        for n in (SPILL + 1, 3 * SPILL):
            cur = await conn.execute(sql, (n,))
            assert await cur.fetchall() == [(n, n * (n + 1) // 2)]
            assert await gone(db) == []
            now = await ahead(db)
            assert len(now) == 1 and now != first  # the one made ahead was taken
            first = now

    async def one(n: int) -> list[tuple[Any, ...]]:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            return await (await conn.execute(sql, (n,))).fetchall()

    # Spills at once: one takes the table made ahead, the others make their own; then
    # still one waits.
    sizes = [SPILL + k for k in range(4)]
    assert await asyncio.gather(*map(one, sizes)) == [[(n, n * (n + 1) // 2)] for n in sizes]
    assert await gone(db) == []
    assert len(await ahead(db)) == 1
    assert counts.injected == 0


async def test_closing_drops_the_table_made_ahead(sidecar, counts):
    def numbers(b: Bindings) -> list[dict[str, Any]]:
        return [{"n": b.one("n"), "i": i, "label": ""} for i in range(b.one("n"))]

    resource = define_resource(
        "numbers", columns=[("n", "bigint"), ("i", "bigint"), ("label", "text")],
        keys=["n"], volatility="volatile", select=numbers, inline=True)
    db = await Database.create([resource], sidecar=sidecar, database=database_name(),
                               limits=Limits(spill_min_rows=SPILL))
    try:
        async with serving(db) as server, await psycopg.AsyncConnection.connect(
                dsn(server), autocommit=True) as conn:
            cur = await conn.execute("SELECT count(*) FROM numbers WHERE n = %s", (SPILL,))
            assert await cur.fetchall() == [(SPILL,)]
            assert len(await ahead(db)) == 1
    finally:
        await db.close()
    conn = await asyncpg.connect(sidecar.dsn, database=db.catalog.database)
    try:
        assert await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = $1",
                                cache_schema(db.schemas)) == []
    finally:
        await conn.close()


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
