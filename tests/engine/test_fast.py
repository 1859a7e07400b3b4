"""The fast path, through the wire: a repeated read whose calls are all cached (kept
tables, or rows in memory) goes from the gate straight to the sidecar, and gives the
answer the full path would, also after a refresh, a ttl, a staged write, an aborted
transaction, a SET, at the row limit, for a missing id (its NOTICE) and a refused value
(Postgres's error); a call that only Postgres can convert the arguments of, or an IN
list on a key, never takes it."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import asyncpg
import psycopg
import pytest

from glove_scratchpad.server.engine import fast, resolve
from glove_scratchpad.server.engine.guard import Limits
from glove_scratchpad.server.engine.prepared import VARIANTS, Variants
from glove_scratchpad.server.engine.view import PLAN_CACHE_SIZE

from .fix_cache import BIG, serve


@pytest.fixture
def fast_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many statements took the fast path."""
    runs = [0]
    real = fast.reads

    def counting(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        runs[0] += found is not None
        return found

    monkeypatch.setattr(fast, "reads", counting)
    return runs


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


async def test_a_keyed_lookup_answered_from_memory_calls_once_per_id(served, counts, full_runs):
    _, dsn = served
    sql = "SELECT label FROM item WHERE id = %s"
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        for i in (7, 8, 7, 8, 7):
            cur = await conn.execute(sql, (i,), prepare=True)
            assert await cur.fetchall() == [(f"label {i}",)]
        assert counts.calls == {"item": 2} and full_runs == [2]  # one per new id
        assert counts.injected == 5  # small calls' rows travel with each statement
        notices: list[str] = []
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        for _ in range(2):  # no rows: the full path, and its NOTICE, each time
            cur = await conn.execute(sql, (BIG + 1,), prepare=True)
            assert await cur.fetchall() == []
        assert notices == [f'resource "item" returned no rows for id = {BIG + 1}'] * 2
        for _ in range(2):  # a value the column refuses: Postgres words it, each time
            with pytest.raises(psycopg.errors.InvalidTextRepresentation):
                await conn.execute(sql, ("seven",), prepare=True)
    assert counts.calls == {"item": 3}


async def test_a_new_id_is_worked_out_once_and_called_with_its_own_value(
        served, counts, full_runs, monkeypatch):
    """A run the fast path declines (a new id: no cached call) hands the calls it worked
    out to the full path, which calls the tool with them and does not work them out
    again; a run with other parameters never gets another run's."""
    from glove_scratchpad.server.engine import bindings

    worked: list[Any] = []
    real = bindings.calls_of

    def counted(ref: Any, values: Any) -> Any:
        got = real(ref, values)
        worked.append([c.keys for c in got])
        return got

    monkeypatch.setattr(bindings, "calls_of", counted)
    monkeypatch.setattr(resolve, "calls_of", counted)
    _, dsn = served
    conn = await asyncpg.connect(dsn)
    try:
        lookup = await conn.prepare("SELECT label FROM item WHERE id = $1")
        assert await lookup.fetchval(3) == "label 3"  # the full path: compiled after
        worked.clear()
        for i in (4, 5, 4):  # Execute of one row: its messages read one by one
            assert await lookup.fetchval(i) == f"label {i}"
        assert counts.calls == {"item": 3} and full_runs == [3]  # 4 and 5 called, 4 kept
        # Each run's calls worked out once, with its own id (the last from the cache).
        assert worked == [[{"id": 4}], [{"id": 5}], [{"id": 4}]]
        worked.clear()
        for i in (6, 7, 6):  # a portal run: the callbacks decline it, the task runs it
            assert await lookup.fetch(i) == [(f"label {i}",)]
    finally:
        await conn.close()
    assert counts.calls == {"item": 5} and full_runs == [5]
    assert worked == [[{"id": 6}], [{"id": 7}], [{"id": 6}]]


async def test_binary_parameters_of_the_columns_type_take_it_and_others_do_not(
        served, counts, fast_runs):
    _, dsn = served
    conn = await asyncpg.connect(dsn)  # binary parameters, typed as Postgres inferred
    try:
        lookup = await conn.prepare("SELECT label FROM item WHERE id = $1")
        for i in (3, 3, 3):
            assert await lookup.fetchval(i) == f"label {i}"
        assert fast_runs == [2] and counts.calls == {"item": 1}
        several = await conn.prepare("SELECT label FROM item WHERE id IN (4, 5) ORDER BY id")
        for _ in range(2):  # an IN list on a key: several calls, never the fast path
            assert [r[0] for r in await several.fetch()] == ["label 4", "label 5"]
        assert fast_runs == [2] and counts.calls == {"item": 3}
    finally:
        await conn.close()
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as pconn:
        for _ in range(2):  # a binary float8 for a bigint key: Postgres casts it
            cur = await pconn.execute("SELECT label FROM item WHERE id = %b", (3.0,),
                                      prepare=True)
            assert await cur.fetchall() == [("label 3",)]
    assert fast_runs == [2] and counts.calls == {"item": 3}


async def test_a_ttl_ends_a_keyed_call_answered_from_memory(served, counts, full_runs):
    _, dsn = served
    sql = "SELECT price FROM quote WHERE sym = %s"
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        prices = []
        for _ in range(3):
            cur = await conn.execute(sql, ("ACME",), prepare=True)
            prices += [r[0] for r in await cur.fetchall()]
        await asyncio.sleep(1.1)
        cur = await conn.execute(sql, ("ACME",), prepare=True)
        prices += [r[0] for r in await cur.fetchall()]
    assert prices == [101.0, 101.0, 101.0, 102.0]
    assert counts.calls == {"quote": 2} and full_runs == [2]


async def test_a_flood_of_distinct_texts_does_not_stop_the_gate_remembering(served):
    db, dsn = served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        for i in range(PLAN_CACHE_SIZE + 10):  # literals: a new text each time
            await conn.execute(f"SELECT {i}")
        await conn.execute("SELECT label FROM small WHERE id = %s", (3,), prepare=True)
    assert db.main.prepared("SELECT label FROM small WHERE id = $1").gated


def test_a_records_variants_are_the_newest_sixteen() -> None:
    # Describe results and rewrites of one text: a bounded dict, the oldest going first.
    variants: Variants[int] = Variants()
    for i in range(VARIANTS + 4):
        assert variants.put((i,), i) == i
    assert list(variants) == [(i,) for i in range(4, VARIANTS + 4)]
    assert variants.get((3,)) is None and variants[(VARIANTS + 3,)] == VARIANTS + 3
