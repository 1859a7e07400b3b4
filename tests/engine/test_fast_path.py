"""The fast path, through the wire: a prepared statement that reads kept calls alone goes
from the gate straight to the sidecar, and gives the answer the full path would, also
after a refresh, a ttl, a staged write, an aborted transaction, a SET, and at the row
limit; a statement whose call depends on its parameters never takes it."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import psycopg
import pytest

from glove_scratchpad.server import Database
from glove_scratchpad.server.engine import resolve
from glove_scratchpad.server.engine.guard import Limits

from .fix_kept import BIG, Counts, counting, serve


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counts:
    return counting(monkeypatch)


@pytest.fixture
async def served(sidecar: Any, counts: Counts) -> AsyncIterator[tuple[Database, str]]:
    async with serve(sidecar, counts) as pair:
        yield pair


@pytest.fixture
def full_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many reads took the full path (resolving their references)."""
    runs = [0]
    real = resolve.resolve_all

    async def counting(*args: Any, **kwargs: Any) -> Any:
        runs[0] += 1
        return await real(*args, **kwargs)

    monkeypatch.setattr(resolve, "resolve_all", counting)
    return runs


async def test_a_prepared_lookup_over_a_kept_call_goes_straight_to_the_sidecar(
        served, counts, full_runs):
    db, dsn = served
    conn = await asyncpg.connect(dsn)
    try:
        lookup = await conn.prepare("SELECT label FROM big WHERE id = $1")
        ids = random.Random(3).sample(range(1, BIG + 1), 300)
        for i in ids:
            assert await lookup.fetch(i) == [(f"label {i}",)]
        assert await lookup.fetch(BIG + 1) == []
    finally:
        await conn.close()
    assert counts.calls == {"big": 1} and counts.injected == 0
    assert full_runs == [1]  # the first Execute; the other 300 went straight through
    assert next(iter(db.kept.entries.values())).hits == 300  # the first made the table


async def test_a_refresh_and_a_ttl_send_it_back_to_the_full_path(served, counts, full_runs):
    _, dsn = served
    conn = await asyncpg.connect(dsn)
    try:
        total = await conn.prepare("SELECT count(*), sum(price) FROM prices")
        for _ in range(3):
            assert await total.fetch() == [(50, 1275.0)]
        assert counts.calls == {"prices": 1} and full_runs == [1]
        await conn.execute("SELECT scratchpad.refresh('prices')")
        for _ in range(3):
            assert await total.fetch() == [(50, 1275.0)]
        assert counts.calls == {"prices": 2} and full_runs == [2]  # a new table, compiled
        await asyncio.sleep(2.1)  # the ttl
        assert await total.fetch() == [(50, 1275.0)]
        assert counts.calls == {"prices": 3} and full_runs == [3]
    finally:
        await conn.close()


async def test_a_staged_write_is_read_not_skipped(served, counts):
    _, dsn = served
    sql = "SELECT price FROM prices WHERE sku = %s"
    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        for _ in range(2):
            cur = await conn.execute(sql, (7,), prepare=True)
            assert await cur.fetchall() == [(7.0,)]
        await conn.execute("UPDATE prices SET price = 1 WHERE sku = 7")  # staged
        cur = await conn.execute(sql, (7,), prepare=True)
        assert await cur.fetchall() == [(1.0,)]
        await conn.rollback()
        cur = await conn.execute(sql, (7,), prepare=True)
        assert await cur.fetchall() == [(7.0,)]
    assert "prices.update" not in counts.calls


async def test_an_aborted_transaction_refuses_it(served):
    _, dsn = served
    conn = await asyncpg.connect(dsn)
    try:
        lookup = await conn.prepare("SELECT label FROM big WHERE id = $1")
        assert await lookup.fetch(1) == [("label 1",)]
        tx = conn.transaction()
        await tx.start()
        assert await lookup.fetch(2) == [("label 2",)]
        with pytest.raises(asyncpg.DivisionByZeroError):
            await conn.fetch("SELECT 1 / 0")
        with pytest.raises(asyncpg.InFailedSQLTransactionError):
            await lookup.fetch(3)
        await tx.rollback()
        assert await lookup.fetch(3) == [("label 3",)]
    finally:
        await conn.close()


async def test_a_session_setting_travels_with_it_and_stays_in_the_session(served, full_runs):
    _, dsn = served
    sql = "SELECT current_setting('TimeZone') AS tz, count(*) FROM small"
    a, b = await asyncpg.connect(dsn), await asyncpg.connect(dsn)
    try:
        zone = (await a.fetchrow(sql))["tz"]
        assert zone != "Asia/Tokyo"
        await a.execute("SET TimeZone = 'Asia/Tokyo'")
        for _ in range(3):
            assert await a.fetch(sql) == [("Asia/Tokyo", 60)]
            assert await b.fetch(sql) == [(zone, 60)]  # the same pooled connections
        assert full_runs == [1]
        await a.execute("RESET TimeZone")
        assert await a.fetch(sql) == [(zone, 60)]
    finally:
        await a.close()
        await b.close()


async def test_the_row_limit_holds_on_it(sidecar, counts, full_runs):
    notices: list[str] = []
    async with (serve(sidecar, counts, Limits(cache_min_rows=20, row_limit=10)) as (_, dsn),
                await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn):
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        for _ in range(3):
            cur = await conn.execute("SELECT id FROM small ORDER BY id", prepare=True)
            assert await cur.fetchall() == [(i,) for i in range(1, 11)]
    assert full_runs == [1]
    assert notices == ["result truncated to 10 rows (the row limit)"] * 3


async def test_a_call_that_depends_on_a_parameter_never_takes_it(served, counts):
    _, dsn = served
    conn = await asyncpg.connect(dsn)
    try:
        # LIMIT reaches the lone reference: each limit is a call of its own, kept apart.
        first = await conn.prepare("SELECT id FROM big LIMIT $1")
        for n in (25, 30, 25, 30):
            assert len(await first.fetch(n)) == n
    finally:
        await conn.close()
    assert counts.calls == {"big": 2}  # the limits 25 and 30, each kept
