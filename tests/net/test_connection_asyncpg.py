"""The wire server through asyncpg: prepared statements, a pool, cancellation."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest


async def test_discovery_read_param_join_error_and_reuse(dsn):
    conn = await asyncpg.connect(dsn)
    try:
        tables = await conn.fetch("SELECT table_name FROM information_schema.tables "
                                  "WHERE table_schema = 'glove' ORDER BY 1")
        assert "items" in [r[0] for r in tables]
        row = await conn.fetchrow("SELECT name, price FROM items WHERE id = $1", 7)
        assert tuple(row) == ("item 7", 10.5)
        hits = await conn.fetch("SELECT title FROM web WHERE query = $1 ORDER BY rank",
                                "postgresql")
        assert hits and "PostgreSQL" in hits[0][0]
        joined = await conn.fetchval(
            "SELECT count(*) FROM items i JOIN tasks t ON t.id = i.id")
        assert joined == 3
        with pytest.raises(asyncpg.UndefinedColumnError):
            await conn.fetch("SELECT nope FROM items")
        assert await conn.fetchval("SELECT 41 + 1") == 42
    finally:
        await conn.close()


async def test_prepared_statement_reused(dsn):
    conn = await asyncpg.connect(dsn)
    try:
        stmt = await conn.prepare("SELECT name FROM items WHERE id = $1")
        assert [await stmt.fetchval(i) for i in (1, 2, 3)] == ["item 1", "item 2", "item 3"]
    finally:
        await conn.close()


async def test_staged_write_and_commit(dsn):
    conn = await asyncpg.connect(dsn)
    try:
        async with conn.transaction():
            await conn.execute("INSERT INTO emails (to_addr, subject) VALUES ($1, $2)",
                               "ann@example.org", "hello")
            staged = await conn.fetch("SELECT verb, status FROM scratchpad.staged")
            assert [tuple(r) for r in staged] == [("insert", "staged")]
        assert await conn.fetch("SELECT * FROM scratchpad.staged") == []
    finally:
        await conn.close()


async def test_pool_with_reset(dsn):
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=2)
    try:
        for _ in range(3):
            async with pool.acquire() as conn:
                assert await conn.fetchval("SELECT count(*) FROM items") == 100
    finally:
        await pool.close()


async def test_cancel_by_cancelling_the_task(dsn):
    conn = await asyncpg.connect(dsn)
    try:
        task = asyncio.ensure_future(conn.fetch("SELECT * FROM slow WHERE seconds = 30"))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await conn.fetchval("SELECT 1") == 1
    finally:
        await conn.close()


async def test_a_client_that_disconnects_mid_statement_cancels_its_work(dsn):
    from .fix_wire import CANCELLED

    conn = await asyncpg.connect(dsn)
    query = asyncio.ensure_future(conn.fetch("SELECT * FROM slow WHERE seconds = 31"))
    await asyncio.sleep(0.3)
    conn.terminate()  # the socket closes; no CancelRequest is sent
    with pytest.raises((asyncpg.ConnectionDoesNotExistError, asyncio.CancelledError)):
        await query
    async with asyncio.timeout(5):
        while 31 not in CANCELLED:
            await asyncio.sleep(0.05)


async def test_cancel_request_stops_the_resolver(dsn):
    from .fix_wire import CANCELLED

    conn = await asyncpg.connect(dsn)
    try:
        # asyncpg's timeout sends a CancelRequest, then raises TimeoutError.
        with pytest.raises(TimeoutError):
            await conn.fetch("SELECT * FROM slow WHERE seconds = 32", timeout=0.3)
        async with asyncio.timeout(5):
            while 32 not in CANCELLED:
                await asyncio.sleep(0.05)
        assert await conn.fetchval("SELECT 1") == 1
    finally:
        await conn.close()


async def test_read_only_settings_are_the_sessions_not_the_sidecars(dsn):
    # The sidecar runs every read read-only; the session says what it may do.
    conn = await asyncpg.connect(dsn)
    try:
        assert conn.get_settings().default_transaction_read_only == "off"  # --writes
        assert await conn.fetchval("SHOW default_transaction_read_only") == "off"
        assert await conn.fetchval("SHOW transaction_read_only") == "off"
        async with conn.transaction(readonly=True):
            assert await conn.fetchval("SHOW transaction_read_only") == "on"
        await conn.execute("SET default_transaction_read_only = on")
        assert await conn.fetchval("SHOW default_transaction_read_only") == "on"
        async with conn.transaction():
            assert await conn.fetchval("SHOW transaction_read_only") == "on"
    finally:
        await conn.close()


SET_CONFIG_ESCAPED = 'U&"\\0073et_config"'  # set_config, its name spelled in escapes


async def test_set_config_however_spelled_leaves_no_setting_behind(dsn):
    a, b = await asyncpg.connect(dsn), await asyncpg.connect(dsn)
    try:
        zone = await b.fetchval("SELECT current_setting('TimeZone')")
        for fn in ("set_config", SET_CONFIG_ESCAPED):
            await a.fetch(f"SELECT {fn}('TimeZone', 'Asia/Tokyo', false)")
            for _ in range(5):  # the pooled connection it ran on comes next
                assert await b.fetchval("SELECT current_setting('TimeZone')") == zone, fn
    finally:
        await a.close()
        await b.close()


async def test_the_gate_judges_set_config_however_spelled_with_each_value(dsn):
    conn = await asyncpg.connect(dsn)
    try:
        stmt = await conn.prepare(f"SELECT {SET_CONFIG_ESCAPED}($1, $2, false)")
        await stmt.fetch("TimeZone", "UTC")
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await stmt.fetch("work_mem", "64MB")
    finally:
        await conn.close()
