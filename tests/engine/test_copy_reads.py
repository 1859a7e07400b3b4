"""COPY … TO STDOUT through the wire, read by the data tools that read Postgres by COPY:
psycopg's ``cursor.copy`` (text and binary), psql's ``\\copy``, ADBC, ConnectorX and
polars. Each answer equals the plain SELECT's."""

from __future__ import annotations

import asyncio
import csv
import io
import shutil
import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest

from ..fix_server import fetch

pytestmark = pytest.mark.asyncio

ONE = "SELECT id, name, price FROM items ORDER BY id"
JOIN = ("SELECT i.id, i.name, t.title FROM items i JOIN tasks t ON t.id = i.id "
        "WHERE t.id <= 3 ORDER BY i.id")


async def _copied(dsn: str, sql: str, *, binary: bool = False) -> list[tuple[Any, ...]]:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = conn.cursor()
        got = []
        fmt = " (FORMAT binary)" if binary else ""
        # The types the plain SELECT describes, to read the copied text or binary.
        described = await conn.execute(f"SELECT * FROM ({sql}) q LIMIT 0")
        assert described.description is not None
        async with cur.copy(f"COPY ({sql}) TO STDOUT{fmt}") as copy:
            copy.set_types([c.type_code for c in described.description])
            async for row in copy.rows():
                got.append(row)
        return got


@pytest.mark.parametrize("sql", [ONE, JOIN])
async def test_psycopg_copy_text_and_binary_equal_the_select(dsn: str, sql: str) -> None:
    plain = await fetch(dsn, sql)
    assert plain
    assert await _copied(dsn, sql) == plain
    assert await _copied(dsn, sql, binary=True) == plain


async def test_copy_of_a_resource_and_its_columns(dsn: str) -> None:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        out = b""
        async with conn.cursor().copy("COPY items (id, name) TO STDOUT (FORMAT csv, HEADER,"
                                      " DELIMITER ';', FORCE_QUOTE (name))") as copy:
            async for data in copy:
                out += bytes(data)
    lines = out.decode().splitlines()
    assert lines[0] == "id;name" and lines[1] == '1;"item 1"' and len(lines) == 101


@pytest.mark.skipif(shutil.which("psql") is None, reason="psql is not installed")
async def test_psql_backslash_copy_to_a_file(dsn: str, tmp_path: Path) -> None:
    for name, sql in (("one", ONE), ("join", JOIN)):
        out = tmp_path / f"{name}.csv"
        done = await asyncio.to_thread(
            subprocess.run, ["psql", dsn, "-c", f"\\copy ({sql}) TO '{out}' CSV HEADER"],
            capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        selected = await asyncio.to_thread(  # the plain SELECT, as psql writes CSV
            subprocess.run, ["psql", dsn, "--csv", "-c", sql],
            capture_output=True, text=True, timeout=30)
        rows = list(csv.reader(io.StringIO(out.read_text())))
        assert rows == list(csv.reader(io.StringIO(selected.stdout)))
        assert done.stdout.strip() == f"COPY {len(rows) - 1}"


@pytest.mark.parametrize("sql", [ONE, JOIN])
async def test_adbc_fetch_arrow_table(dsn: str, sql: str) -> None:
    dbapi = pytest.importorskip("adbc_driver_postgresql.dbapi")

    def read() -> Any:
        with dbapi.connect(dsn) as conn, conn.cursor() as cur:
            cur.execute(sql)
            return cur.fetch_arrow_table()

    table = await asyncio.to_thread(read)
    assert [tuple(r.values()) for r in table.to_pylist()] == await fetch(dsn, sql)


@pytest.mark.parametrize("sql", [ONE, JOIN])
async def test_connectorx_read_sql_arrow(dsn: str, sql: str) -> None:
    cx = pytest.importorskip("connectorx")
    table = await asyncio.to_thread(cx.read_sql, dsn, sql, return_type="arrow")
    assert [tuple(r.values()) for r in table.to_pylist()] == await fetch(dsn, sql)


@pytest.mark.parametrize("engine", ["connectorx", "adbc"])
@pytest.mark.parametrize("sql", [ONE, JOIN])
async def test_polars_read_database_uri(dsn: str, sql: str, engine: str) -> None:
    pl = pytest.importorskip("polars")
    frame = await asyncio.to_thread(pl.read_database_uri, sql, dsn, engine=engine)
    assert frame.rows() == await fetch(dsn, sql)
