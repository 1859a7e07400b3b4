"""The differential check's two sides: the server over the world's resources, and the
reference database of plain tables, on one sidecar.

``sides(sidecar, world)`` serves the world's HTTP API (``api.py``), starts a server
(port 0, writes allowed) over a Database of its own (the world's resources, and the
API's tables from its document), loads the reference (``CREATE DATABASE``, the
world's tables and rows), and gives an ``Oracle`` holding one psycopg connection to
each.

The reference connection never prepares a statement. psycopg prepares a text it has
run five times, and Postgres types a prepared statement's literals once, under the
settings of that moment: '2024-12-30' stays a timestamptz in the TimeZone it was
prepared under. The server parses a statement again under each session's settings,
so the reference must too. The server's connection prepares as psycopg likes.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psycopg

from glove_scratchpad.resources.openapi import OpenApiBridge
from glove_scratchpad.server import Database

from ..fix_http import http_served
from ..fix_server import dsn, serving
from .api import PEOPLE_PAGE, make_app
from .oracle import Oracle
from .world import COLUMNS, World

_names = itertools.count()


def _sidecar_dsn(sidecar: Any, database: str) -> str:
    return (f"host={sidecar.host} port={sidecar.port} user={sidecar.user} dbname={database}"
            + (f" password={sidecar.password}" if sidecar.password else ""))


async def _reference(sidecar: Any, world: World) -> str:
    """A database of plain tables holding the world's rows; its connection string."""
    name = f"differential_ref_{next(_names)}"
    async with await psycopg.AsyncConnection.connect(
            _sidecar_dsn(sidecar, "postgres"), autocommit=True) as admin:
        await admin.execute(f"DROP DATABASE IF EXISTS {name}")
        await admin.execute(f"CREATE DATABASE {name}")
    conninfo = _sidecar_dsn(sidecar, name)
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        for ddl in world.ddl():
            await conn.execute(ddl)
        for table, columns in COLUMNS.items():
            names = ", ".join(c for c, _ in columns)
            async with conn.cursor() as cur, cur.copy(
                    f"COPY {table} ({names}) FROM STDIN") as copy:
                for record in world.records(table):
                    await copy.write_row(record)
        await conn.execute("ANALYZE")
    return conninfo


@asynccontextmanager
async def sides(sidecar: Any, world: World) -> AsyncIterator[Oracle]:
    async with http_served(make_app(world)) as url:
        bridge = OpenApiBridge([{"namespace": "api", "spec": f"{url}/openapi.json",
                                 "max_page_size": PEOPLE_PAGE}], Path("."))
        try:
            async with _server(sidecar, world, await bridge.load()) as oracle:
                yield oracle
        finally:
            await bridge.aclose()


@asynccontextmanager
async def _server(sidecar: Any, world: World, apis: list[Any]) -> AsyncIterator[Oracle]:
    db = await Database.create([*world.resources(), *apis], writes=True, sidecar=sidecar,
                               database=f"differential_{next(_names)}")
    try:
        async with serving(db, writes=True) as server:
            reference = await _reference(sidecar, world)
            async with await psycopg.AsyncConnection.connect(dsn(server), autocommit=True) as s, \
                    await psycopg.AsyncConnection.connect(reference, autocommit=True,
                                                          prepare_threshold=None) as r:
                yield Oracle(s, r, world)
    finally:
        await db.close()
