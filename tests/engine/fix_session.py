"""One psycopg connection (autocommit) to the session's wire server (``tests/conftest.py``'s
``server``: the demo set and ``tests/net/fix_wire.py``'s ``items`` and ``slow``), whose
notices are kept, for the tests of one engine room through the wire."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg

from ..fix_server import dsn


class Session:
    """A client session: ``rows``, ``tag`` or ``error`` of one statement at a time, and
    the notices (severity, message) of the last one."""

    def __init__(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self.conn = conn
        self.notices: list[tuple[str | None, str | None]] = []
        conn.add_notice_handler(
            lambda d: self.notices.append((d.severity, d.message_primary)))

    async def rows(self, sql: str) -> list[tuple[Any, ...]]:
        self.notices.clear()
        cur = await self.conn.execute(sql)
        return await cur.fetchall()

    async def tag(self, sql: str) -> str | None:
        self.notices.clear()
        cur = await self.conn.execute(sql)
        return cur.statusmessage

    async def error(self, sql: str) -> psycopg.errors.Diagnostic:
        self.notices.clear()
        try:
            await self.conn.execute(sql)
        except psycopg.Error as exc:
            return exc.diag
        raise AssertionError(f"{sql!r} did not fail")


@asynccontextmanager
async def session(server: Any) -> AsyncIterator[Session]:
    async with await psycopg.AsyncConnection.connect(dsn(server), autocommit=True) as conn:
        yield Session(conn)
