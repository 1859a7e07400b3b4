"""A resolver's rows as statements read them, through the wire: checked column by column
(values already of their columns' types pass as they are, others are converted as the
model converts them), shaped by the model's own settings, and, when a cache keeps them,
a snapshot that the tool's later changes to its own dicts do not reach."""

from __future__ import annotations

import types
from collections import defaultdict
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from pydantic import BaseModel, ConfigDict

from glove_scratchpad.resources import Bindings, define_resource
from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits

from ..fix_server import dsn, fetch, serving
from .fix_cache import database_name

SPILL = 1000  # from this many rows, a call is copied into a table of its statement's
ROWS: dict[str, list[dict[str, Any]]] = {}


class Padded(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True)
    n: int
    label: str


class Reading(BaseModel):
    n: int
    i: int
    value: float
    note: str | None = None


def _resources() -> list[Any]:
    def rows_of(name: str) -> Any:
        def select(b: Bindings) -> list[dict[str, Any]]:
            return ROWS[name][: b.one("n")]
        return select

    return [
        define_resource("padded", schema=Padded, keys=["n"], volatility="volatile",
                        select=rows_of("padded"), inline=True),
        define_resource("readings", schema=Reading, keys=["n"], volatility="volatile",
                        select=rows_of("readings"), inline=True),
        define_resource("settled", schema=Reading, keys=["n"], volatility="immutable",
                        select=rows_of("settled"), inline=True),
        define_resource("archive", schema=Reading, keys=["n"], volatility="immutable",
                        select=counted(rows_of("archive")), inline=True),
    ]


archive_calls: list[int] = []  # the n of each call of "archive"


def counted(select: Any) -> Any:
    def call(b: Bindings) -> list[dict[str, Any]]:
        archive_calls.append(b.one("n"))
        return select(b)
    return call


@pytest.fixture(scope="module")
async def served(sidecar: Any) -> AsyncIterator[tuple[Database, str]]:
    db = await Database.create(_resources(), sidecar=sidecar, database=database_name(),
                               limits=Limits(spill_min_rows=SPILL))
    async with serving(db) as server:
        yield db, dsn(server)
    await db.close()


@pytest.fixture
def wire(served: tuple[Database, str]) -> str:
    return served[1]


@pytest.mark.parametrize("n", [3, 2 * SPILL])  # with the statement; spilled
async def test_a_models_settings_shape_its_rows_as_the_model_does(wire, n):
    ROWS["padded"] = [{"n": n, "label": f"  row {i}  "} for i in range(n)]
    got = await fetch(wire, "SELECT count(*), min(label), max(length(label)) FROM padded "
                      "WHERE n = %s", n)
    # str_strip_whitespace: the model strips, so the rows do; no value keeps its spaces.
    assert got == [(n, "row 0", len(f"row {n - 1}"))]


@pytest.mark.parametrize("n", [4, 2 * SPILL])
async def test_rows_of_their_columns_types_are_read_as_they_are(wire, n):
    ROWS["readings"] = [{"n": n, "i": i, "value": i / 4, "note": f"#{i}" if i % 3 else None}
                        for i in range(n)]
    got = await fetch(wire, "SELECT count(*), sum(i), sum(value), count(note), max(note) "
                      "FROM readings WHERE n = %s", n)
    assert got == [(n, n * (n - 1) // 2, n * (n - 1) / 8,
                    sum(1 for i in range(n) if i % 3), max(f"#{i}" for i in range(n) if i % 3))]


@pytest.mark.parametrize("n", [4, 2 * SPILL])
async def test_values_not_of_their_columns_types_are_converted(wire, n):
    # A key left out (filled from the statement's), numbers as strings, an int for a
    # float, one NULL where the column takes it; the rest as they are.
    ROWS["readings"] = [{"i": str(i), "value": i, "note": None if i % 2 else f"#{i}"}
                        for i in range(n)]
    got = await fetch(wire, "SELECT count(*), sum(i), sum(value), count(note), "
                      "min(n), pg_typeof(min(value))::text FROM readings WHERE n = %s", n)
    assert got == [(n, n * (n - 1) // 2, n * (n - 1) / 2, (n + 1) // 2, n,
                    "double precision")]


@pytest.mark.parametrize("n", [4, 2 * SPILL])
async def test_a_null_where_the_model_refuses_one_is_an_error_naming_it(wire, n):
    ROWS["readings"] = [{"n": n, "i": i, "value": 0.5, "note": None} for i in range(n)]
    ROWS["readings"][-1] = {"n": n, "i": None, "value": 0.5, "note": None}
    with pytest.raises(psycopg.errors.ExternalRoutineException) as err:
        await fetch(wire, "SELECT count(*) FROM readings WHERE n = %s", n)
    assert 'resource "readings" returned an invalid value for column "i"' in str(err.value)
    # The server goes on: the same resource answers once its rows are right.
    ROWS["readings"][-1] = {"n": n, "i": n - 1, "value": 0.5, "note": None}
    assert await fetch(wire, "SELECT count(*) FROM readings WHERE n = %s", n) == [(n,)]


@pytest.mark.parametrize("table", ["readings", "settled"])  # read at once; kept in memory
@pytest.mark.parametrize("n", [4, 2 * SPILL])
async def test_rows_that_are_mappings_but_not_dicts_are_read_as_dicts(wire, table, n):
    # A read-only mapping cannot be copied as a dict is; reading a defaultdict's column
    # that it lacks would add it (then the key's stamp would never be seen missing).
    ROWS[table] = [types.MappingProxyType({"n": n, "i": i, "value": 0.5, "note": None})
                   if i % 2 else defaultdict(str, {"i": i, "value": 0.5})
                   for i in range(n)]
    got = await fetch(wire, f"SELECT count(*), sum(i), sum(value), count(note), min(n) "
                      f"FROM {table} WHERE n = %s", n)
    assert got == [(n, n * (n - 1) // 2, n / 2, 0, n)]
    assert all("n" not in row for row in ROWS[table][::2])  # the tool's dicts unchanged


async def test_a_kept_answer_is_a_snapshot_the_tool_cannot_change_later(wire):
    ROWS["settled"] = [{"n": 3, "i": i, "value": 1.5, "note": None} for i in range(3)]
    sql = "SELECT sum(i), sum(value) FROM settled WHERE n = 3"
    assert await fetch(wire, sql) == [(3, 4.5)]
    # The tool changes the dicts it returned, in place: immutable, the call is not made
    # again, and its kept rows are the ones it gave then.
    for row in ROWS["settled"]:
        row["i"], row["value"] = 100, 100.0
    assert await fetch(wire, sql) == [(3, 4.5)]
    # Another statement over the same call, its rows made into parameters again.
    assert await fetch(wire, "SELECT i, value FROM settled WHERE n = 3 ORDER BY i") == [
        (0, 1.5), (1, 1.5), (2, 1.5)]


async def test_rows_meant_for_a_kept_table_are_not_kept_in_memory_when_it_fails(
        served, monkeypatch):
    db, dsn = served
    archive_calls.clear()
    n = db.kept.limits.cache_min_rows  # enough to be kept as a table
    ROWS["archive"] = [{"n": n, "i": i, "value": 1.0, "note": None} for i in range(n)]
    store = db.kept.stores[db.catalog.database]

    async def broken(*args: Any, **kwargs: Any) -> int:
        raise OSError("the sidecar is gone for a moment")

    monkeypatch.setattr(store, "make", broken)
    sql = "SELECT count(*), sum(i), sum(value) FROM archive WHERE n = %s"
    assert await fetch(dsn, sql, n) == [(n, n * (n - 1) // 2, float(n))]  # the rows answer
    # Checked, not copied (they were for the table): they are not kept in memory either,
    # so the tool's later change to its own dicts is not a cached answer's silent change.
    for row in ROWS["archive"]:
        row["value"] = 2.0
    monkeypatch.undo()
    assert await fetch(dsn, sql, n) == [(n, n * (n - 1) // 2, 2.0 * n)]
    assert archive_calls == [n, n]  # called again, and kept this time
    assert await fetch(dsn, sql, n) == [(n, n * (n - 1) // 2, 2.0 * n)]
    assert archive_calls == [n, n]
