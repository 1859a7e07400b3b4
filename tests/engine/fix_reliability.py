"""Tools that are slow, flaky and rate-limited, served over the wire for the reliability
tests (tests/engine/test_commit*.py, test_guard*.py and others, and
tests/behaviour/test_reliability_sidecar.py).

``serve(sidecar, resources)`` starts a ``Database`` on a sidecar database of its own
(or a named one: a second server on the same name is the first one restarted) and a
``Server`` on port 0, with three users: ``ann`` and ``bob`` write, ``root`` is an
administrator. ``connect(user)`` opens a psycopg connection (autocommit) whose
notices are kept in ``conn.notices`` as (severity, message, detail, hint); the ones
a test leaves open (a failed assertion) are closed when it ends.

``Notes`` is an in-memory notes API whose calls are recorded with the thread they
ran on and the ``CallContext`` they were given; ``fail_on`` makes an insert of that
title fail, ``gate`` makes inserts wait until it is set.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg
from pydantic import BaseModel, Field

from glove_scratchpad.resources import Bindings, CallContext, Resource, define_resource
from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits
from glove_scratchpad.server.net.auth import User, make_verifier
from glove_scratchpad.server.net.server import Server

from ..fix_server import serving

PASSWORDS = {"ann": "ann-pw", "bob": "bob-pw", "root": "root-pw"}
_names = itertools.count()


def users() -> dict[str, User]:
    return {"ann": User(password=make_verifier(PASSWORDS["ann"]), writes=True),
            "bob": User(password=make_verifier(PASSWORDS["bob"]), writes=True),
            "root": User(password=make_verifier(PASSWORDS["root"]), writes=True, admin=True)}


def fresh_name() -> str:
    return f"reliability_{next(_names)}"


@dataclass
class Served:
    db: Database
    server: Server
    opened: list[psycopg.AsyncConnection[Any]] = field(default_factory=list)

    def dsn(self, user: str = "ann") -> str:
        return (f"postgresql://{user}:{PASSWORDS[user]}@127.0.0.1:{self.server.port}"
                "/scratchpad")

    async def connect(self, user: str = "ann") -> psycopg.AsyncConnection[Any]:
        conn = await psycopg.AsyncConnection.connect(self.dsn(user), autocommit=True)
        notices: list[tuple[str, str, str | None, str | None]] = []
        conn.add_notice_handler(lambda d: notices.append(
            (d.severity_nonlocalized or "", d.message_primary or "", d.message_detail,
             d.message_hint)))
        conn.notices = notices  # type: ignore[attr-defined]
        self.opened.append(conn)
        return conn

    async def close(self) -> None:
        for conn in self.opened:
            await conn.close()


async def restarted(sidecar: Any, within: float = 10.0) -> int:
    """``sidecar.restarts`` once it is not 0, or 0 after ``within`` seconds. A new
    postmaster takes connections a moment before its restart is recorded."""
    deadline = time.monotonic() + within
    while sidecar.restarts == 0 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return int(sidecar.restarts)


@asynccontextmanager
async def serve(sidecar: Any, resources: list[Resource], *, database: str | None = None,
                limits: Limits | None = None) -> AsyncIterator[Served]:
    db = await Database.create(resources, writes=True, sidecar=sidecar,
                               database=database or fresh_name(), limits=limits)
    async with serve_db(db) as s:
        yield s


@asynccontextmanager
async def serve_db(db: Database) -> AsyncIterator[Served]:
    """``db`` served with writes and the test users, and closed after."""
    try:
        async with serving(db, writes=True, users=users()) as server:
            served = Served(db, server)
            try:
                yield served
            finally:
                await served.close()
    finally:
        await db.close()


class Note(BaseModel):
    id: int | None = Field(None, description="Note id, assigned by the API on INSERT")
    title: str
    body: str = ""


@dataclass
class Notes:
    """An in-memory notes API, recording each call (verb, input, thread, ctx)."""

    store: dict[int, Note] = field(default_factory=lambda: {
        1: Note(id=1, title="first"), 2: Note(id=2, title="second")})
    calls: list[tuple[str, Any, str, CallContext | None]] = field(default_factory=list)
    fail_on: set[str] = field(default_factory=set)
    gate: threading.Event | None = None
    entered: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _record(self, verb: str, data: Any, ctx: CallContext | None) -> None:
        with self.lock:
            self.calls.append((verb, data, threading.current_thread().name, ctx))

    def writes(self) -> list[tuple[str, Any]]:
        return [(v, d) for v, d, _, _ in self.calls if v != "select"]

    def keys(self) -> list[str | None]:
        return [c.idempotency_key for v, _, _, c in self.calls if v != "select" and c]

    def resource(self, name: str = "notes", pk: bool = True) -> Resource:
        def select(b: Bindings, ctx: CallContext) -> list[Note]:
            self._record("select", b.as_dict(), ctx)
            with self.lock:
                return list(self.store.values())

        def insert(rows: list[Note], ctx: CallContext) -> list[Note]:
            titles = [r.title for r in rows]
            self._record("insert", titles, ctx)
            if self.gate is not None:
                self.entered.set()
                assert self.gate.wait(30), "the test never opened the gate"
            if self.fail_on & set(titles):
                raise RuntimeError(f"the notes API refused {sorted(self.fail_on & set(titles))}")
            made = []
            with self.lock:
                for row in rows:
                    note = row.model_copy(update={"id": max(self.store, default=0) + 1})
                    self.store[note.id] = note  # type: ignore[index]
                    made.append(note)
            return made

        def update(changes: dict, b: Bindings, ctx: CallContext) -> None:
            self._record("update", (b.one("id"), changes), ctx)
            with self.lock:
                self.store[b.one("id")] = self.store[b.one("id")].model_copy(update=changes)

        def delete(b: Bindings, ctx: CallContext) -> None:
            self._record("delete", b.one("id"), ctx)
            with self.lock:
                self.store.pop(b.one("id"), None)

        return define_resource(name, schema=Note, primary_key=["id"] if pk else [],
                               volatility="volatile", select=select, insert=insert,
                               update=update, delete=delete)
