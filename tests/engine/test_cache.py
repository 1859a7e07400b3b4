"""Kept calls, through the wire: a lasting call is materialized once as a sidecar table
that later statements of any session read in place of rows sent with them; its ttl,
a write through it, scratchpad.refresh and the size cap make it go; a restart leaves
no table behind."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import asyncpg
import psycopg
import pytest

from glove_scratchpad.catalog import cache_schema
from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits

from .fix_cache import BIG, database_name, resources


async def kept_tables(sidecar: Any, db: Database) -> list[str]:
    conn = await asyncpg.connect(sidecar.dsn, database=db.catalog.database)
    try:
        return [r[0] for r in await conn.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY 1",
            cache_schema(db.schemas))]
    finally:
        await conn.close()


async def test_point_lookups_on_a_kept_call_make_no_call_and_send_no_rows(served, counts):
    db, dsn = served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = await conn.execute("SELECT label FROM big WHERE id = %s", (4242,))
        assert await cur.fetchall() == [("label 4242",)]
        assert counts.calls == {"big": 1}
        assert counts.injected == 0  # even the first statement reads the table
        counts.injected = 0
        ids = random.Random(7).sample(range(1, BIG + 1), 1000)
        loop = asyncio.get_running_loop()
        started = loop.time()
        for i in ids:
            cur = await conn.execute("SELECT label FROM big WHERE id = %s", (i,),
                                     prepare=True)
            assert await cur.fetchall() == [(f"label {i}",)]
        elapsed = loop.time() - started
    assert counts.calls == {"big": 1}
    assert counts.injected == 0
    assert elapsed < 10, f"1,000 cached lookups took {elapsed:.1f} s"
    assert len(db.kept.entries) == 1
    assert next(iter(db.kept.entries.values())).hits == 1000


async def test_a_ttl_call_lasts_across_sessions_until_its_ttl(served, counts):
    _, dsn = served
    sql = "SELECT count(*), sum(price) FROM prices"
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as a:
        assert await (await a.execute(sql)).fetchall() == [(50, 1275.0)]
    await asyncio.sleep(1)
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as b:
        assert await (await b.execute(sql)).fetchall() == [(50, 1275.0)]
        assert counts.calls == {"prices": 1}
        assert counts.injected == 0
        await asyncio.sleep(1.1)
        assert await (await b.execute(sql)).fetchall() == [(50, 1275.0)]
        assert counts.calls == {"prices": 2}


async def test_a_write_through_the_resource_and_refresh_drop_its_kept_calls(served, counts):
    db, dsn = served
    sql = "SELECT price FROM prices WHERE sku = 7"
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute(sql)
        await conn.execute(sql)
        assert counts.calls == {"prices": 1}
        # The UPDATE reads the target's rows (a call of its own), then fires.
        await conn.execute("UPDATE prices SET price = 1 WHERE sku = 7")
        assert counts.calls["prices.update"] == 1
        assert not db.kept.entries
        before = counts.calls["prices"]
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute(sql)  # another session: the write's kept call is gone
        assert counts.calls["prices"] == before + 1
        await conn.execute(sql)
        assert counts.calls["prices"] == before + 1
        cur = await conn.execute("SELECT scratchpad.refresh(%s)", ("prices",))
        assert await cur.fetchall() == [("dropped 1 kept call of prices",)]
        await conn.execute(sql)
        assert counts.calls["prices"] == before + 2
        with pytest.raises(psycopg.errors.UndefinedTable):
            await conn.execute("SELECT scratchpad.refresh('nope')")


async def test_scratchpad_cache_lists_kept_calls_and_explain_says_what_is_kept(served, counts):
    db, dsn = served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute("SELECT * FROM big WHERE id = 1")
        await conn.execute("SELECT * FROM big WHERE id = 2")
        await conn.execute("SELECT * FROM small")
        await conn.execute("SELECT * FROM prices")
        cur = await conn.execute(
            "SELECT resource, arguments, rows, bytes > 0, made_at <= now(), "
            "expires_at IS NULL, hits FROM scratchpad.cache ORDER BY resource")
        assert await cur.fetchall() == [
            ("big", {}, BIG, True, True, True, 1),
            ("prices", {}, 50, True, True, False, 0),
            ("small", {}, 60, True, True, True, 0),
        ]
        cur = await conn.execute("EXPLAIN SELECT * FROM big WHERE id = 3")
        plan = "\n".join(r[0] for r in await cur.fetchall())
    assert "Cache: calls of big with 20 to 2000000 rows are kept" in plan
    assert "1 kept now (100000 rows in" in plan
    assert "SELECT scratchpad.refresh('big') drops them" in plan
    assert len(await kept_tables(db.catalog.sidecar, db)) == 3


async def test_a_call_above_the_row_limit_is_not_kept_and_explain_says_so(sidecar, counts):
    db = await Database.create(resources(counts, 300), sidecar=sidecar,
                               database=database_name(),
                               limits=Limits(cache_min_rows=20, cache_max_rows=100))
    try:
        await db.execute("SELECT * FROM big WHERE id = 1")
        await db.execute("SELECT * FROM big WHERE id = 2")
        assert counts.calls == {"big": 1}  # in memory still, sent with each statement
        assert counts.injected == 600
        assert not db.kept.entries
        plan = "\n".join(r[0] for r in (await db.explain("SELECT * FROM big")).rows)
        assert "a call gave 300 rows, above cache_max_rows: not kept" in plan
    finally:
        await db.close()


async def test_the_size_cap_evicts_the_least_recently_used(sidecar, counts):
    db = await Database.create(resources(counts, 2000), sidecar=sidecar,
                               database=database_name(),
                               limits=Limits(cache_min_rows=20, cache_bytes=150_000))
    try:
        await db.execute("SELECT * FROM big WHERE id = 1")  # ~150 kB with its index
        await db.execute("SELECT * FROM small")
        await db.execute("SELECT * FROM prices")
        kept = sorted(k[1] for k in db.kept.entries)
        assert "big" not in kept and kept == ["prices", "small"]
        await db.kept.reap(everything=True)
        assert len(await kept_tables(db.catalog.sidecar, db)) == 2
        await db.execute("SELECT * FROM big WHERE id = 1")
        assert counts.calls["big"] == 2  # evicted: called again
    finally:
        await db.close()


async def test_a_restart_leaves_no_kept_table(sidecar, counts):
    database = database_name()
    limits = Limits(cache_min_rows=20)
    first = await Database.create(resources(counts, 500), sidecar=sidecar,
                                  database=database, limits=limits)
    await first.execute("SELECT * FROM big WHERE id = 1")
    assert len(await kept_tables(sidecar, first)) == 1
    await first.close()
    assert await kept_tables(sidecar, first) == []  # a clean stop drops its own

    # A server that dies leaves its tables; the next one of the name sweeps them, and
    # leaves a running server's alone.
    crashed = await Database.create(resources(counts, 500), sidecar=sidecar,
                                    database=database, limits=limits)
    running = await Database.create(resources(counts, 500), sidecar=sidecar,
                                    database=database, limits=limits)
    await crashed.execute("SELECT * FROM big WHERE id = 1")
    await running.execute("SELECT * FROM small")
    assert len(await kept_tables(sidecar, crashed)) == 2
    for store in crashed.kept.stores.values():
        store.on_lost = None  # no reopening: this server is gone
        await store.conn.close()  # dies: its lock goes, its tables stay
    crashed.kept.stores.clear()
    restarted = await Database.create(resources(counts, 500), sidecar=sidecar,
                                      database=database, limits=limits)
    try:
        left = await kept_tables(sidecar, restarted)
        assert left == [next(iter(running.kept.entries.values())).name]
    finally:
        await restarted.close()
        await running.close()
        await crashed.close()
    assert await kept_tables(sidecar, restarted) == []


async def test_a_kept_table_is_indexed_and_analyzed_after_its_first_statement(served, counts):
    db, dsn = served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute("SELECT label FROM big WHERE id = 1")
    kept = next(iter(db.kept.entries.values()))
    conn = await asyncpg.connect(db.catalog.sidecar.dsn, database=db.catalog.database)
    try:
        for _ in range(100):  # ANALYZE runs in the background, after the statement
            analyzed = await conn.fetchval(
                "SELECT count(*) FROM pg_stats WHERE schemaname = $1 AND tablename = $2",
                cache_schema(db.schemas), kept.name)
            if analyzed:
                break
            await asyncio.sleep(0.05)
        assert analyzed == 2  # both columns have statistics
        plan = "\n".join(r[0] for r in await conn.fetch(
            f"EXPLAIN SELECT label FROM {kept.table} WHERE id = 4242"))
        assert "Index" in plan, plan
    finally:
        await conn.close()


async def _indexes(conn: psycopg.AsyncConnection[Any], want: int, resource: str = "plain"
                   ) -> str | None:
    """A resource's kept indexes as scratchpad.cache lists them, once there are ``want``
    (they are built in the background)."""
    listed = None
    for _ in range(200):
        cur = await conn.execute("SELECT indexes FROM scratchpad.cache WHERE resource = %s",
                                 (resource,))
        listed = (await cur.fetchone() or (None,))[0]
        if listed is not None and listed.count("(") >= want:
            break
        await asyncio.sleep(0.05)
    return listed


async def test_a_kept_table_with_no_key_is_indexed_for_its_lookups(served, counts):
    db, dsn = served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = await conn.execute("SELECT label FROM plain WHERE id = %s", (4242,))
        assert await cur.fetchall() == [("label 4242",)]
        assert await _indexes(conn, 1) == "(id)"
        await conn.execute("SELECT count(*) FROM plain WHERE a = 3 AND b BETWEEN 2 AND 5")
        assert await _indexes(conn, 2) == "(id); (a, b)"
        for sql in ("SELECT * FROM plain p JOIN small s ON s.id = p.c",  # a join's
                    "SELECT * FROM plain WHERE b = 2", "SELECT * FROM plain WHERE label = 'x'"):
            await conn.execute(sql)
        listed = await _indexes(conn, 4)
        assert listed == "(id); (a, b); (c); (b)"  # four at most: label gets none
        await conn.execute("SELECT * FROM plain WHERE a = 1")  # led by an index already
        assert await _indexes(conn, 4) == listed
    assert counts.calls["plain"] == 1
    kept = next(k for k in db.kept.entries.values() if k.resource == "plain")
    conn = await asyncpg.connect(db.catalog.sidecar.dsn, database=db.catalog.database)
    try:
        plan = "\n".join(r[0] for r in await conn.fetch(
            f"EXPLAIN SELECT label FROM {kept.table} WHERE id = 4242"))
        assert "Index" in plan, plan
    finally:
        await conn.close()


async def test_a_kept_table_is_never_indexed_on_its_key(served, counts):
    # Every row of one call of shelf holds that call's aisle: an index on it would cost
    # a build on every first materialization and serve no lookup.
    _, dsn = served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = await conn.execute("SELECT label FROM shelf WHERE aisle = 3 AND id = 7")
        assert await cur.fetchall() == [("label 7",)]
        assert await _indexes(conn, 1, "shelf") == "(id)"
        await conn.execute("SELECT count(*) FROM shelf WHERE aisle = 4")
        cur = await conn.execute("SELECT indexes FROM scratchpad.cache WHERE resource = "
                                 "'shelf' ORDER BY indexes NULLS FIRST")
        assert await cur.fetchall() == [(None,), ("(id)",)]  # aisle = 4's: none
    assert counts.calls["shelf"] == 2
