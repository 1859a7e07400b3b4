"""COPY as the gate reads it (``sql/copy.py``), through the wire: ``COPY (query) TO STDOUT``
is the SELECT it names; a file or a program stays refused, and so does a WHERE on COPY
FROM, each with the statement to write instead."""

from __future__ import annotations

import psycopg

from ..fix_server import dsn
from .fix_answers import refusal


async def test_copy_of_a_query_to_stdout_is_that_select(server):
    async with await psycopg.AsyncConnection.connect(dsn(server), autocommit=True) as conn:
        cur = conn.cursor()
        async with cur.copy("COPY (SELECT id, name FROM items WHERE id = 3) TO STDOUT") as copy:
            data = b"".join([bytes(chunk) async for chunk in copy])
    assert data == b"3\titem 3\n"


async def test_a_file_is_refused_and_stdout_named_instead(server):
    error = await refusal(server, "COPY items TO '/tmp/items'")
    assert error.sqlstate == "42501"
    assert error.message_primary == "COPY to or from a file or program is not allowed"
    assert "TO STDOUT or FROM STDIN" in (error.message_hint or "")


async def test_copy_from_with_where_is_refused_for_insert_select(server):
    error = await refusal(server, "COPY items FROM STDIN WHERE id > 1")
    assert error.sqlstate == "0A000"
    assert error.message_primary == "COPY FROM with WHERE is not supported"
    assert "INSERT … SELECT … WHERE" in (error.message_hint or "")
