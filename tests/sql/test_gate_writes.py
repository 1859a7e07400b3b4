"""The gate judges a write's form before anything runs, through the wire: INSERT …
ON CONFLICT into a resource is refused (0A000, with the next step) already at Describe,
before a value is bound, and inside a WITH too; into the session's own temporary table
it is Postgres's, and runs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from pydantic import BaseModel

from glove_scratchpad.resources import define_resource
from glove_scratchpad.server import Database

from ..engine.fix_cache import database_name
from ..fix_server import dsn as dsn_of
from ..fix_server import serving

HINT = "Read first, then INSERT only what is new."


class Note(BaseModel):
    id: int | None = None
    title: str


@pytest.fixture
async def served(sidecar: Any) -> AsyncIterator[tuple[str, list[Any]]]:
    calls: list[Any] = []
    db = await Database.create([
        define_resource("notes", schema=Note, volatility="volatile", primary_key=["id"],
                        select=lambda b: [], insert=lambda rows: calls.append(rows))],
        writes=True, sidecar=sidecar, database=database_name())
    async with serving(db, writes=True) as server:
        yield dsn_of(server), calls
    await db.close()


@pytest.mark.parametrize("sql", [
    "INSERT INTO notes (title) VALUES ($1) ON CONFLICT DO NOTHING",
    "INSERT INTO notes (title) VALUES ($1) ON CONFLICT (id) DO UPDATE SET title = 'x'",
    "WITH n AS (INSERT INTO notes (title) VALUES ($1) ON CONFLICT DO NOTHING RETURNING id) "
    "SELECT * FROM n",
])
async def test_on_conflict_into_a_resource_is_refused_at_describe(
        served: tuple[str, list[Any]], sql: str) -> None:
    dsn, calls = served
    conn = await asyncpg.connect(dsn)
    try:
        with pytest.raises(asyncpg.FeatureNotSupportedError) as caught:
            await conn.prepare(sql)  # Parse and Describe: no value bound, nothing run
        assert caught.value.sqlstate == "0A000"
        assert caught.value.args[0] == "INSERT … ON CONFLICT is not supported on resources"
        assert caught.value.hint == HINT
    finally:
        await conn.close()
    assert calls == []


async def test_on_conflict_into_a_temporary_table_runs(
        served: tuple[str, list[Any]]) -> None:
    dsn, _ = served
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("CREATE TEMP TABLE seen (id int PRIMARY KEY, n int)")
        for _ in range(2):
            await conn.execute("INSERT INTO seen VALUES (1, 1) "
                               "ON CONFLICT (id) DO UPDATE SET n = seen.n + 1")
        assert await conn.fetchval("SELECT n FROM seen WHERE id = 1") == 2
    finally:
        await conn.close()
