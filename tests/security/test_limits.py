"""Limits: the call budget, the resolver timeout, per-resource concurrency, result size."""

from __future__ import annotations

import asyncio

import asyncpg
import psycopg
import pytest

from glove_scratchpad import errors
from glove_scratchpad.catalog._audit import AUDIT_DELAY
from glove_scratchpad.resources import define_resource
from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits

from .corpus import ATTACKS


def _probe(state: dict):
    async def select(b):
        state["running"] += 1
        state["peak"] = max(state["peak"], state["running"])
        try:
            await asyncio.sleep(b.one("k") / 1000)
        finally:
            state["running"] -= 1
        return [{"k": b.one("k"), "v": "x" * 100}]

    return define_resource("probe", columns=[("k", "bigint"), ("v", "text")], keys=["k"],
                           volatility="volatile", select=select)


@pytest.fixture
async def limited(sidecar):
    state = {"running": 0, "peak": 0}
    db = await Database.create(
        [_probe(state)], sidecar=sidecar, database="test_limits",
        limits=Limits(call_budget=5, resolver_timeout=0.5, resource_concurrency=2,
                      max_result_bytes=2000))
    yield db, state
    await db.close()


async def test_call_budget_is_checked_before_any_call(limited):
    db, state = limited
    with pytest.raises(errors.ProgramLimitExceeded) as info:
        await db.execute("SELECT * FROM probe WHERE k IN (1, 2, 3, 4, 5, 6)")
    assert "6 resolver calls" in info.value.message and "budget is 5" in info.value.message
    assert state["peak"] == 0


async def test_resolver_timeout(limited):
    db, _ = limited
    with pytest.raises(errors.ExternalRoutineError) as info:
        await db.execute("SELECT * FROM probe WHERE k = 2000")
    assert "timed out after 0.5 s" in info.value.message


async def test_concurrency_limit_per_resource(limited):
    db, state = limited
    r = await db.execute("SELECT count(*) FROM probe WHERE k IN (50, 51, 52, 53, 54)")
    assert r.rows == [(5,)]
    assert state["peak"] == 2


async def test_result_size_limit(limited):
    db, _ = limited
    r = await db.execute("SELECT v FROM probe WHERE k IN (1, 2)")
    assert len(r.rows) == 2
    with pytest.raises(errors.ProgramLimitExceeded):
        await db.execute("SELECT repeat(v, 30) FROM probe WHERE k = 1")


async def test_the_corpus_over_the_wire_leaves_the_session_and_others_usable(dsn):
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as attacker, \
            await psycopg.AsyncConnection.connect(dsn, autocommit=True) as bystander:
        for sql, _ in ATTACKS:
            with pytest.raises(psycopg.Error):
                await attacker.execute(sql)
        cur = await attacker.execute("SELECT name FROM items WHERE id = 1")
        assert await cur.fetchone() == ("item 1",)
        cur = await bystander.execute("SELECT count(*) FROM items")
        assert await cur.fetchone() == (100,)


async def test_audit_writes_in_batches_under_a_steady_stream_of_calls(limited, monkeypatch):
    """Calls that keep arriving while a batch is written wait for the next batch: the
    audit must not chase a busy server with one COPY per call."""
    db, _ = limited
    copies: list[int] = []
    copy = asyncpg.Pool.copy_records_to_table

    async def counting_copy(self, *args, **kwargs):
        copies.append(len(kwargs["records"]))
        return await copy(self, *args, **kwargs)

    monkeypatch.setattr(asyncpg.Pool, "copy_records_to_table", counting_copy)
    await db.execute("SELECT * FROM probe WHERE k = 1")
    await db.audit.flush()
    copies.clear()
    # A steady stream of statements, for a few batching delays.
    loop = asyncio.get_running_loop()
    end = loop.time() + 3 * AUDIT_DELAY
    n = 0
    while loop.time() < end:
        await db.execute("SELECT * FROM probe WHERE k = 1")
        n += 1
    assert n > 20
    assert len(copies) <= 4, f"{len(copies)} COPYs for {n} calls"
    calls = await db.execute("SELECT count(*) FROM scratchpad.calls WHERE resource = 'probe' "
                             f"AND session = {db.default_session.id}")
    assert calls.rows[0][0] == n + 1  # this session's calls: none lost
