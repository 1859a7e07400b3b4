"""Cursor statements as the gate reads them (``sql/cursor_statements.py``), through the
wire: DECLARE's query is judged as the read it is, FETCH's direction is read as Postgres
reads it, and WHERE CURRENT OF is refused with the statement to write instead."""

from __future__ import annotations

import psycopg

from ..fix_server import dsn, rows
from .fix_answers import refusal


async def test_fetch_reads_its_direction(server):
    async with await psycopg.AsyncConnection.connect(dsn(server), autocommit=True) as conn:
        await conn.execute("BEGIN")
        await conn.execute("DECLARE c SCROLL CURSOR FOR "
                           "SELECT name FROM items WHERE id <= 5 ORDER BY id")
        assert await rows(conn, "FETCH FORWARD 2 FROM c") == [("item 1",), ("item 2",)]
        assert await rows(conn, "FETCH ABSOLUTE 5 FROM c") == [("item 5",)]
        assert await rows(conn, "FETCH PRIOR FROM c") == [("item 4",)]
        await conn.execute("ROLLBACK")


async def test_a_write_in_declares_with_is_refused(server):
    error = await refusal(server, "DECLARE c CURSOR FOR WITH x AS (INSERT INTO items "
                                  "(id, name, price) VALUES (1000, 'x', 1) RETURNING *) "
                                  "SELECT * FROM x")
    assert error.sqlstate == "0A000"
    assert error.message_primary == (
        "DECLARE CURSOR must not contain data-modifying statements in WITH")


async def test_where_current_of_is_refused_for_the_key(server):
    error = await refusal(server, "UPDATE items SET name = 'x' WHERE CURRENT OF c")
    assert error.sqlstate == "0A000"
    assert error.message_primary.startswith("WHERE CURRENT OF is not supported")
    assert error.message_hint == "Name the row by its key: UPDATE t SET … WHERE id = …."
