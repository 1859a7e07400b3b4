"""The table of statement kinds, through the wire: each kind is described (Parse and
Describe, calling nothing) with the parameter types and columns Postgres would give,
runs after it; EXPLAIN of the Python API plans a read and a write, calling nothing."""

from __future__ import annotations

import asyncpg

from .fix_cache import serve

# (statement, its parameters' types, its columns: (name, type), then its run's rows)
DESCRIBED = [
    ("SELECT label FROM item WHERE id = $1", ["int8"], [("label", "text")], (3,),
     [("label 3",)]),
    ("UPDATE prices SET price = $1 WHERE sku = 1", ["float8"], [], (2.5,), []),
    ("UPDATE prices SET price = $1 WHERE sku = 1 RETURNING sku", ["float8"],
     [("sku", "int8")], (2.5,), [(1,)]),
    ("SHOW search_path", [], [("search_path", "text")], (), None),
    ("SET application_name = 'routes'", [], [], (), []),
    ("SELECT pg_backend_pid()", [], [("pg_backend_pid", "int4")], (), None),
    ("EXPLAIN SELECT label FROM item WHERE id = $1", ["int8"], [("QUERY PLAN", "text")],
     (3,), None),
    ("DISCARD ALL", [], [], (), []),
    ("BEGIN", [], [], (), []),
]


async def test_each_kind_is_described_then_runs(sidecar, counts):
    async with serve(sidecar, counts) as (_, dsn):
        conn = await asyncpg.connect(dsn)
        try:
            for sql, params, columns, args, rows in DESCRIBED:
                stmt = await conn.prepare(sql)
                assert counts.calls == {}, sql  # described, calling nothing
                assert [t.name for t in stmt.get_parameters()] == params, sql
                assert [(a.name, a.type.name) for a in stmt.get_attributes()] == columns, sql
                got = await stmt.fetch(*args)
                if rows is not None:
                    assert [tuple(r) for r in got] == rows, sql
                else:
                    assert got, sql  # a setting's value, a pid, a plan's lines
                counts.calls.clear()
        finally:
            await conn.close()


async def test_a_cursor_is_described_by_its_columns(sidecar, counts):
    async with serve(sidecar, counts) as (_, dsn):
        conn = await asyncpg.connect(dsn)
        try:
            async with conn.transaction():
                await conn.execute("DECLARE c CURSOR FOR SELECT id, label FROM small")
                fetch = await conn.prepare("FETCH 2 FROM c")
                assert [(a.name, a.type.name) for a in fetch.get_attributes()] == [
                    ("id", "int8"), ("label", "text")]
                assert [tuple(r) for r in await fetch.fetch()] == [(1, "s1"), (2, "s2")]
        finally:
            await conn.close()


async def test_the_python_apis_explain_plans_a_read_and_a_write_calling_nothing(
        sidecar, counts):
    async with serve(sidecar, counts) as (db, _):
        read = await db.explain("SELECT label FROM item WHERE id = 3")
        assert any("item" in line for (line,) in read.rows)
        write = await db.explain("UPDATE prices SET price = 2 WHERE sku = 1")
        assert any("prices" in line for (line,) in write.rows)
        assert counts.calls == {}
