"""The bytes of ``COPY (query) TO STDOUT`` through the server, in text, csv and binary,
equal those a plain Postgres gives for tables holding the same rows (the differential
check's style: the reference is a database of plain tables on the same sidecar)."""

from __future__ import annotations

import itertools
from typing import Any

import psycopg
import pytest

from ..net.fix_wire import ITEMS, wire_resources

pytestmark = pytest.mark.asyncio

_names = itertools.count()

QUERIES = (
    "SELECT id, name, price FROM items WHERE id <= 40 ORDER BY id",
    "SELECT a.id, b.id, a.name || '\t\\\"x\"', NULL::text AS n FROM items a "
    "JOIN items b ON b.id = a.id + 1 ORDER BY a.id",
)
OPTIONS = ("", "(FORMAT csv, HEADER)", "(FORMAT binary)",
           "(FORMAT csv, HEADER true, DELIMITER '|', NULL 'nil', QUOTE '''', FORCE_QUOTE *)",
           "(FORMAT text, DELIMITER ',', NULL '-', ENCODING 'LATIN1')")


async def _reference(sidecar: Any) -> str:
    name = f"copy_ref_{next(_names)}"
    base = (f"host={sidecar.host} port={sidecar.port} user={sidecar.user}"
            + (f" password={sidecar.password}" if sidecar.password else ""))
    async with await psycopg.AsyncConnection.connect(base + " dbname=postgres",
                                                     autocommit=True) as admin:
        await admin.execute(f"DROP DATABASE IF EXISTS {name}")
        await admin.execute(f"CREATE DATABASE {name}")
    items = next(r for r in wire_resources() if r.name == "items")
    async with await psycopg.AsyncConnection.connect(base + f" dbname={name}",
                                                     autocommit=True) as conn:
        columns = ", ".join(f"{c.name} {c.pg_type}" for c in items.columns)
        await conn.execute(f"CREATE TABLE items ({columns})")
        async with conn.cursor().copy("COPY items (id, name, price) FROM STDIN") as copy:
            for item in ITEMS:
                await copy.write_row((item.id, item.name, item.price))
    return base + f" dbname={name}"


async def _bytes(dsn: str, sql: str) -> bytes:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        out = b""
        async with conn.cursor().copy(sql) as copy:
            async for data in copy:
                out += bytes(data)
        return out


async def test_copy_bytes_equal_a_plain_postgres(dsn: str, sidecar: Any) -> None:
    reference = await _reference(sidecar)
    for query in QUERIES:
        for options in OPTIONS:
            sql = f"COPY ({query}) TO STDOUT {options}"
            ours = await _bytes(dsn, sql)
            assert ours, sql
            assert ours == await _bytes(reference, sql), sql
    sql = "COPY items (id, name) TO STDOUT (FORMAT csv, HEADER)"
    assert await _bytes(dsn, sql) == await _bytes(reference, sql)
