"""Two ways into the interpreter: in process (``Session.execute``) and over the wire
(psycopg, async, against a real server on port 0).

A user reaches the product through the wire; most tests reach it through
``Database.execute``. A scenario here is written once and run through both ways,
which must report the same thing:

- ``await way.execute(sql, params)`` gives an ``Outcome``: the command tag, the column
  names, the rows as Python values, and the notices as (severity, message, hint);
- a refused or failed statement raises ``Failed``, whose ``error`` is
  (sqlstate, message, hint).

SQL is written with psycopg's ``%s`` placeholders; the in-process way turns them
into ``$n``. Each way is one session, so ids that count per session (staged writes)
start at 1 in both.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import psycopg

from glove_scratchpad import errors
from glove_scratchpad.server import Database

__all__ = ["WAYS", "Failed", "InProcess", "Outcome", "Way", "Wire", "open_way", "way_into"]

WAYS = ["in_process", "wire"]


@dataclass(frozen=True)
class Outcome:
    tag: str
    columns: list[str]
    rows: list[tuple[Any, ...]]
    notices: list[tuple[str, str, str | None]] = field(default_factory=list)


class Failed(Exception):
    """A statement's ErrorResponse, as either way reports it."""

    def __init__(self, sqlstate: str, message: str, hint: str | None,
                 notices: list[tuple[str, str, str | None]]) -> None:
        super().__init__(f"{sqlstate}: {message} (HINT: {hint})")
        self.error = (sqlstate, message, hint)
        self.notices = notices


class Way(Protocol):
    name: str

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> Outcome: ...

    async def close(self) -> None: ...


def dollar_params(sql: str) -> str:
    """psycopg's ``%s`` placeholders as ``$1``, ``$2``, … (``%%`` is a literal ``%``)."""
    parts = sql.split("%%")
    n = 0
    out = []
    for part in parts:
        pieces = part.split("%s")
        text = pieces[0]
        for piece in pieces[1:]:
            n += 1
            text += f"${n}{piece}"
        out.append(text)
    return "%".join(out)


class InProcess:
    """``Session.execute``: what tests/server reaches, and what the Python API is."""

    name = "in_process"

    def __init__(self, db: Database) -> None:
        self.session = db.session()

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> Outcome:
        try:
            r = await self.session.execute(dollar_params(sql), list(params))
        except errors.SqlError as e:
            raise Failed(e.sqlstate, e.message, e.hint, []) from e
        notices = [(n.severity, n.message, n.hint) for n in r.notices]
        return Outcome(r.command_tag, r.column_names, [tuple(row) for row in r.rows], notices)

    async def close(self) -> None:
        if self.session.tx_status != "I":  # as a dropped connection does
            await self.session.execute("ROLLBACK")


class Wire:
    """psycopg 3 (async, autocommit) over the wire: what a user's program reaches."""

    name = "wire"

    def __init__(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self.conn = conn
        self._notices: list[tuple[str, str, str | None]] = []
        conn.add_notice_handler(lambda d: self._notices.append(
            (d.severity_nonlocalized or "", d.message_primary or "", d.message_hint)))

    @classmethod
    async def connect(cls, dsn: str) -> Wire:
        return cls(await psycopg.AsyncConnection.connect(dsn, autocommit=True))

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> Outcome:
        self._notices.clear()
        cur = self.conn.cursor()
        try:
            await cur.execute(sql, list(params) or None, prepare=False)
        except psycopg.Error as e:
            notices, self._notices = self._notices, []
            d = e.diag
            raise Failed(d.sqlstate or "", d.message_primary or "", d.message_hint,
                         notices) from e
        names = [c.name for c in cur.description or ()]
        rows = await cur.fetchall() if cur.description is not None else []
        notices, self._notices = self._notices, []
        return Outcome(cur.statusmessage or "", names, [tuple(r) for r in rows], notices)

    async def close(self) -> None:
        await self.conn.close()


async def open_way(name: str, db: Database, dsn: str) -> Way:
    if name == "in_process":
        return InProcess(db)
    return await Wire.connect(dsn)


_databases = itertools.count()


@asynccontextmanager
async def way_into(name: str, sidecar: Any, resources: Sequence[Any], **create: Any
                   ) -> AsyncIterator[Way]:
    """A Database of ``resources`` on a sidecar database of its own, served on a free port
    with writes allowed, and one session into it the ``name`` way; all closed after.
    ``create``: Database.create's other keywords (limits, …)."""
    from ..fix_server import dsn, serving

    db = await Database.create(resources, writes=True, sidecar=sidecar,
                               database=f"way_{next(_databases)}", **create)
    try:
        async with serving(db, writes=True) as server:
            way = await open_way(name, db, dsn(server))
            try:
                yield way
            finally:
                await way.close()
    finally:
        await db.close()
