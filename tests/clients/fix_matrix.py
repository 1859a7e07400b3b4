"""The client matrix: three cases every real client runs, in each protocol mode it has.

- ``explain``: the plan rows come back, and the first names the resource;
- ``staged_write``: BEGIN; INSERT … (its NOTICE, with its HINT, reaches the client); ROLLBACK;
- ``error``: a missing key's SQLSTATE, message and HINT reach the client.

The Python drivers run them in tests/clients/test_matrix.py, the external programs
(psql, pgjdbc, node-postgres) in tests/external/test_matrix.py; both assert with
``check``. A client reports what it saw as a ``Seen``: the first column of every
row as text, the notices as (message, hint), the errors as (sqlstate, message, hint).

A driver's protocol mode is checked, not assumed: every client connects through
``Relay``, which reads what the client sends and records how each statement came
(a Query: ``simple``; a Parse of the unnamed statement: ``extended``; of a named
one: ``prepared``). Connections are told apart by their application_name.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import pytest

from .fix_clients import (
    MISSING_KEY_HINT,
    MISSING_KEY_MESSAGE,
    MISSING_KEY_SQL,
    MISSING_KEY_STATE,
    STAGED_HINT,
)

__all__ = ["CASES", "Case", "Relay", "Seen", "app_name", "check", "relay"]


@dataclass(frozen=True)
class Seen:
    rows: Any = field(default_factory=list)  # the first column of every row, as text
    notices: list[tuple[Any, ...]] = field(default_factory=list)  # (message, hint)
    errors: list[tuple[Any, ...]] = field(default_factory=list)  # (sqlstate, message, hint)


class _Plan:
    """EXPLAIN's rows: the resource's own line first, then Postgres' plan."""

    def __init__(self, resource: str) -> None:
        self.resource = resource

    def __eq__(self, rows: object) -> bool:
        return (isinstance(rows, list) and len(rows) > 1
                and all(isinstance(r, str) for r in rows)
                and rows[0].startswith(f"Resource {self.resource} "))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<plan rows, the first 'Resource {self.resource} …', then Postgres' plan>"


@dataclass(frozen=True)
class Case:
    name: str
    statements: tuple[str, ...]  # on one connection, in autocommit, one at a time
    expect: Seen


STAGED_INSERT = ("INSERT INTO emails (to_addr, subject) "
                 "VALUES ('matrix@example.org', 'from the client matrix')")

CASES = [
    Case("explain", ("EXPLAIN SELECT rank FROM web WHERE query = 'postgres'",),
         Seen(rows=_Plan("web"))),
    Case("staged_write", ("BEGIN", STAGED_INSERT, "ROLLBACK"),
         Seen(notices=[("staged #1: emails.insert(1 row) will be called at COMMIT", STAGED_HINT),
                       ("discarded 1 staged write", None)])),
    Case("error", (MISSING_KEY_SQL,),
         Seen(errors=[(MISSING_KEY_STATE, MISSING_KEY_MESSAGE, MISSING_KEY_HINT)])),
]


def app_name(driver: str, mode: str, case: Case) -> str:
    return f"matrix.{driver}.{mode}.{case.name}"


# -- the relay -----------------------------------------------------------------------

_SSL_REQUEST, _GSSENC_REQUEST, _CANCEL_REQUEST = 80877103, 80877104, 80877102


class _Reader:
    """Reads the frontend messages of one connection; records Query and Parse."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.buf = b""
        self.started = False
        self.app = ""
        self.broken = False

    def feed(self, data: bytes) -> None:
        if self.broken:
            return
        self.buf += data
        while True:
            if not self.started:
                if len(self.buf) < 8:
                    return
                (n,) = struct.unpack("!i", self.buf[:4])
                if len(self.buf) < n:
                    return
                body, self.buf = self.buf[4:n], self.buf[n:]
                self._untyped(body)
                if self.broken:
                    return
                continue
            if len(self.buf) < 5:
                return
            kind = self.buf[:1]
            (n,) = struct.unpack("!i", self.buf[1:5])
            if len(self.buf) < n + 1:
                return
            body, self.buf = self.buf[5:n + 1], self.buf[n + 1:]
            if kind == b"Q":
                self.relay.record(self.app, "simple", body.split(b"\0")[0].decode())
            elif kind == b"P":
                name, sql = body.split(b"\0")[:2]
                self.relay.record(self.app, "prepared" if name else "extended", sql.decode())

    def _untyped(self, body: bytes) -> None:
        (code,) = struct.unpack("!i", body[:4])
        if code in (_SSL_REQUEST, _GSSENC_REQUEST):
            return  # the test server answers N: the start-up message follows in the clear
        if code == _CANCEL_REQUEST or code >> 16 != 3:
            self.broken = True
            return
        words = body[4:].split(b"\0")
        params = dict(zip(words[::2], words[1::2], strict=False))
        self.app = params.get(b"application_name", b"").decode()
        self.started = True


class Relay:
    """A TCP relay in front of the wire server that notes how each statement was sent."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self.sent: dict[str, list[tuple[str, str]]] = {}  # app -> [(mode, sql)]
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    def record(self, app: str, mode: str, sql: str) -> None:
        self.sent.setdefault(app, []).append((mode, sql))

    def dsn(self, app: str) -> str:
        return (f"postgresql://agent@127.0.0.1:{self.port}/scratchpad"
                f"?sslmode=disable&application_name={quote(app)}")

    def modes(self, app: str, statements: tuple[str, ...]) -> list[list[str]]:
        """How each statement was sent by the connection(s) named app (a driver's own
        start-up queries may send one of them too, a BEGIN say)."""
        def norm(sql: str) -> str:
            return " ".join(sql.split()).rstrip(";").strip()

        sent = self.sent.get(app, [])
        return [sorted({m for m, sql in sent if norm(sql) == norm(s)}) for s in statements]

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        writers = [writer]
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
            writers.append(up_writer)
            parse = _Reader(self)
            await asyncio.gather(self._pipe(reader, up_writer, parse.feed),
                                 self._pipe(up_reader, writer, None))
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._tasks.discard(task)
            for w in writers:
                w.close()
                with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                    await w.wait_closed()

    @staticmethod
    async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, feed: Any) -> None:
        try:
            while data := await src.read(65536):
                if feed is not None:
                    feed(data)
                dst.write(data)
                await dst.drain()
        finally:
            with contextlib.suppress(ConnectionError, RuntimeError):
                if dst.can_write_eof():
                    dst.write_eof()


@pytest.fixture(scope="module")
async def relay(server: Any) -> AsyncIterator[Relay]:
    r = Relay(server.port)
    await r.start()
    yield r
    await r.close()


# -- the check -----------------------------------------------------------------------


def check(relay: Relay, driver: str, mode: str, case: Case, seen: Seen) -> None:
    app = app_name(driver, mode, case)
    assert app in relay.sent, f"no connection named {app} came through: {sorted(relay.sent)}"
    assert relay.modes(app, case.statements) == [[mode]] * len(case.statements), (
        f"{driver} in {mode} mode did not send the statements that way: {relay.sent[app]}")
    assert seen == case.expect, f"{driver} ({mode}) saw {seen}"
