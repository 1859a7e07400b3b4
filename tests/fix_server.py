"""A wire server over a Database for a test: started on a free port, shut down after."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote

import asyncpg
import psycopg

from glove_scratchpad.server import Database
from glove_scratchpad.server.config import ServerConfig
from glove_scratchpad.server.net.server import Server


@asynccontextmanager
async def serving(db: Database, **config: Any) -> AsyncIterator[Server]:
    """``db`` served on a free port (``config``: ServerConfig's other fields)."""
    server = Server(ServerConfig(port=0, **config), db)
    await server.start()
    try:
        yield server
    finally:
        await server.shutdown()


def dsn(server: Server, user: str = "agent") -> str:
    """Where a client connects to ``server``."""
    return f"postgresql://{user}@127.0.0.1:{server.port}/scratchpad"


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now, at ``host``."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


async def fetch(dsn: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Every row of one statement, on a psycopg connection of its own (autocommit)."""
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        return await rows(conn, sql, *params)


async def rows(conn: psycopg.AsyncConnection[Any], sql: str, *params: Any) -> list[Any]:
    """Every row of one statement on ``conn``."""
    cur = await conn.execute(sql, params or None)
    return await cur.fetchall()


async def sidecar_database(sidecar: Any, database: str) -> str:
    """A database of its own on the session's sidecar (made once), as a ``--sidecar-dsn``
    for a server subprocess."""
    admin = await asyncpg.connect(sidecar.dsn, database="postgres")
    try:
        if not await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", database):
            await admin.execute(f"CREATE DATABASE {database}")
    finally:
        await admin.close()
    return f"postgresql://postgres@/{database}?host={quote(sidecar.host)}&port={sidecar.port}"
