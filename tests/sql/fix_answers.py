"""What the session's wire server (``tests/conftest.py``'s ``server``: the demo set and
``tests/net/fix_wire.py``'s ``items`` and ``slow``) answers one statement, for the tests of
server/sql's modules through the wire: its rows, or the error a client gets."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.errors import Diagnostic

from ..fix_server import dsn


async def answer(server: Any, sql: str, user: str = "agent") -> list[tuple[Any, ...]]:
    """The rows of ``sql`` (its command tag, if it has none), on a connection of its own."""
    async with await psycopg.AsyncConnection.connect(dsn(server, user), autocommit=True) as conn:
        cur = await conn.execute(sql)
        return await cur.fetchall() if cur.description else [(cur.statusmessage,)]


async def refusal(server: Any, sql: str) -> Diagnostic:
    """The error a client gets for ``sql``; the connection serves on after it."""
    async with await psycopg.AsyncConnection.connect(dsn(server), autocommit=True) as conn:
        try:
            await conn.execute(sql)
        except psycopg.Error as exc:
            cur = await conn.execute("SELECT 1")
            assert await cur.fetchall() == [(1,)]
            return exc.diag
    raise AssertionError(f"{sql!r} was not refused")
