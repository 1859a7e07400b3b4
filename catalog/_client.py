"""The relay to the sidecar: statements run over our own protocol client.

Every statement a client sends finally runs here, as one pipeline in one round
trip: ``BEGIN READ ONLY`` (or ``READ WRITE``), the session's settings, any
preparatory statement, the statement itself, ``ROLLBACK``, ``Sync``. Nothing a
statement does in the sidecar outlives it, and no transaction is held across
client messages, so connections are pooled per statement.

A read that can change nothing a rollback would undo (``transaction="implicit"``:
the engine decides) skips the BEGIN and the ROLLBACK: its steps run in the
implicit transaction that ends at ``Sync``, where ``set_config(…, true)``
settings end too. Every connection starts with ``default_transaction_read_only``
on, so that transaction is read-only as well; a write asks for ``READ WRITE``.

Each connection keeps its statements prepared (named, by SQL text and parameter
types) from their second run on, so a repeated statement is parsed and analyzed
by Postgres once per connection, and a text with literals in it, run once, takes
the unnamed statement and is not kept. A prepared statement is the one thing a rollback
does not undo, so the other kind of leftover is guarded by the command tag: a
step whose tag is not that of a plain query (``SELECT``, ``INSERT``, ``UPDATE``,
``DELETE``, ``EXPLAIN``) retires its connection. Only the server's own steps
(``Step.own``) may run anything else.

A sidecar that goes away (its postmaster killed, a network gone) costs the
statements in flight a clean error: the backend's own 57P01, or 08006, each with
a HINT to run the statement again. Connections found closed are dropped from the
pool, and new ones are retried with backoff (``RECONNECT_WAIT``) while the
sidecar restarts. Nothing a statement did in the sidecar outlives it, so running
it again is always safe.

Parameters travel as the client sent them (bytes, format code, type OID) and
rows come back as Postgres encoded them, in the formats asked for: DataRow
bodies are relayed without being decoded. Only the Python API decodes them
(``values.decode_row``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import logging
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from glove_scratchpad import errors
from glove_scratchpad.stream import CodecProtocol
from glove_scratchpad.wire import (
    NEED_DATA,
    AuthenticationCleartextPassword,
    AuthenticationMD5Password,
    AuthenticationOk,
    AuthenticationSASL,
    AuthenticationSASLContinue,
    AuthenticationSASLFinal,
    BackendKeyData,
    Bind,
    BindTemplate,
    CancelRequest,
    ClientConnection,
    Close,
    DataRow,
    Describe,
    ErrorResponse,
    Execute,
    FieldDescription,
    NoData,
    Param,
    ParameterDescription,
    ParameterStatus,
    Parse,
    PasswordMessage,
    Query,
    ReadyForQuery,
    RowDescription,
    SASLInitialResponse,
    SASLResponse,
    StartupMessage,
    Sync,
    Terminate,
    decode_backend,
)

from ._sidecar import Sidecar

__all__ = ["Pool", "SidecarConnection", "Step", "StepResult", "lost"]

_Prepared = tuple[str, tuple[int, ...], tuple[Any, ...]]  # SQL, parameter types, settings

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 10.0  # seconds to open and authenticate a sidecar connection
MAX_PREPARED = 256  # statements kept prepared per sidecar connection
MAX_SEEN = 4096  # statements remembered as run once, so a second run prepares them
# Command tags of the statements a client's SQL may become; any other retires the
# connection that ran it (a PREPARE, SET or DECLARE that slipped past the gate).
PLAIN_TAGS = frozenset(("SELECT", "INSERT", "UPDATE", "DELETE", "EXPLAIN"))
# A sidecar restarting (embedded: well under a second) or a network blip is waited
# for this long, with exponential backoff between tries, before a statement fails.
RECONNECT_WAIT = 15.0
RECONNECT_FIRST, RECONNECT_MAX_DELAY = 0.05, 1.0
# Errors of a connection attempt worth another try: starting up, shutting down, gone.
RETRY_STATES = frozenset(("57P01", "57P02", "57P03", "08000", "08001", "08003", "08006"))
RETRY_HINT = ("The connection to the sidecar was lost (it is being restarted); nothing ran. "
              "Run the statement again in a moment.")


def lost(received: errors.SqlError | None = None) -> errors.SqlError:
    """The error a statement gets when its sidecar connection ends under it: the
    backend's own (57P01 …), if it said why, else 08006; as an ERROR, with a HINT."""
    if received is not None and received.sqlstate[:2] in ("57", "08"):
        return received.replaced(severity="ERROR", hint=received.hint or RETRY_HINT)
    return errors.ConnectionFailure("the connection to the sidecar was lost",
                                    hint=RETRY_HINT)


@dataclass(frozen=True, slots=True)
class Step:
    """One statement of a pipeline."""

    sql: str
    params: Sequence[Param] = ()
    result_formats: Sequence[int] = ()
    rows: bool = True  # Describe the portal and keep its rows
    own: bool = False  # the server's own SQL (not a client's): any command tag is fine


@dataclass(slots=True)
class StepResult:
    fields: tuple[FieldDescription, ...] = ()
    rows: list[DataRow] = field(default_factory=list)
    tag: str = ""


def _encoded(*msgs: object) -> bytes:
    return b"".join(m.encode() for m in msgs)  # type: ignore[attr-defined]


# Prepared on every connection when it opens; with the parts below, encoded once.
_CONSTANT = (("_gs_begin_ro", "BEGIN READ ONLY"), ("_gs_begin", "BEGIN READ WRITE"),
             ("_gs_rollback", "ROLLBACK"))
_BEGIN_READ = _encoded(Bind("", "_gs_begin_ro"), Execute())
_BEGIN_WRITE = _encoded(Bind("", "_gs_begin"), Execute())
_END = _encoded(Bind("", "_gs_rollback"), Execute(), Sync())
_EXECUTE = _encoded(Execute())
# The Binds of the statements prepared on any connection, by (name, parameter formats).
_BINDS: dict[tuple[str, tuple[int, ...]], BindTemplate] = {}
_DESCRIBE_EXECUTE = _encoded(Describe("P"), Execute())
_SYNC = _encoded(Sync())


_DATA_ROW, _ROW_DESCRIPTION, _COMMAND_COMPLETE = ord("D"), ord("T"), ord("C")
_ERROR, _READY, _PARSE_COMPLETE = ord("E"), ord("Z"), ord("1")
_STEP_ENDS = frozenset({_COMMAND_COMPLETE, ord("I"), ord("s")})  # also EmptyQuery, Suspended


class SidecarConnection:
    """One connection to the sidecar, speaking through the sans-I/O ClientConnection."""

    def __init__(self, socket: CodecProtocol) -> None:
        self._socket = socket
        self._transport: asyncio.Transport = socket.transport  # type: ignore[assignment]
        self._conn = socket.conn
        self.parameters: dict[str, str] = {}
        self.key: BackendKeyData | None = None
        self.broken = False
        self._sidecar: Sidecar | None = None
        # (SQL, parameter types, settings parsed under) -> name of the statement prepared
        # on this connection.
        self._prepared: dict[_Prepared, str] = {}
        self._seen: dict[_Prepared, None] = {}  # run once, not prepared
        self._names = itertools.count(1)
        self._fields: dict[bytes, tuple[FieldDescription, ...]] = {}  # RowDescriptions seen

    @classmethod
    async def connect(cls, sidecar: Sidecar, database: str, user: str | None = None,
                      application_name: str = "glove-scratchpad") -> SidecarConnection:
        async def open_() -> SidecarConnection:
            loop = asyncio.get_running_loop()
            conn = ClientConnection()
            if sidecar.host.startswith("/"):
                path = os.path.join(sidecar.host, f".s.PGSQL.{sidecar.port}")
                _, socket = await loop.create_unix_connection(lambda: CodecProtocol(conn),
                                                              path)
            else:
                _, socket = await loop.create_connection(lambda: CodecProtocol(conn),
                                                         sidecar.host, sidecar.port)
            self = cls(socket)
            self._sidecar = sidecar
            await self._startup(sidecar, database, user or sidecar.user, application_name)
            await self._prepare_constants()
            return self

        return await asyncio.wait_for(open_(), CONNECT_TIMEOUT)

    async def _startup(self, sidecar: Sidecar, database: str, user: str,
                       application_name: str) -> None:
        self._send(StartupMessage(parameters={
            "user": user, "database": database, "application_name": application_name,
            "client_encoding": "UTF8", "default_transaction_read_only": "on",
            **sidecar.parameters,
        }))
        scram = None
        while True:
            msg = await self._next()
            if isinstance(msg, AuthenticationOk):
                continue
            if isinstance(msg, AuthenticationCleartextPassword):
                self._send(PasswordMessage(sidecar.password or ""))
            elif isinstance(msg, AuthenticationMD5Password):
                inner = hashlib.md5(
                    ((sidecar.password or "") + sidecar.user).encode()).hexdigest()
                outer = hashlib.md5(inner.encode() + msg.salt).hexdigest()
                self._send(PasswordMessage("md5" + outer))
            elif isinstance(msg, AuthenticationSASL):
                import scramp

                mech = "SCRAM-SHA-256"
                scram = scramp.ScramClient([mech], sidecar.user, sidecar.password or "")
                self._send(SASLInitialResponse(mech, scram.get_client_first().encode()))
            elif isinstance(msg, AuthenticationSASLContinue):
                assert scram is not None
                scram.set_server_first(msg.data.decode())
                self._send(SASLResponse(scram.get_client_final().encode()))
            elif isinstance(msg, AuthenticationSASLFinal):
                assert scram is not None
                scram.set_server_final(msg.data.decode())
            elif isinstance(msg, ParameterStatus):
                self.parameters[msg.name] = msg.value
            elif isinstance(msg, BackendKeyData):
                self.key = msg
            elif isinstance(msg, ErrorResponse):
                raise errors.SqlError.from_fields(msg.fields)
            elif isinstance(msg, ReadyForQuery):
                return
        # unreachable

    async def _prepare_constants(self) -> None:
        self._send(*[Parse(name, sql) for name, sql in _CONSTANT], Sync())
        error = None
        while not isinstance(msg := await self._next(), ReadyForQuery):
            if isinstance(msg, ErrorResponse):
                error = errors.SqlError.from_fields(msg.fields)
        if error is not None:
            raise error

    def _send(self, *msgs: object) -> None:
        self._transport.write(self._conn.send_many(msgs))

    async def _drain(self) -> None:
        await self._socket.drain()

    async def _receive(self) -> None:
        """Wait for more bytes (the socket feeds them into the codec)."""
        if not await self._socket.more_data():
            self.broken = True
            raise lost()

    @property
    def closed(self) -> bool:
        """The sidecar ended this connection (its backend or postmaster is gone)."""
        return self._socket.closed

    async def _next(self) -> object:
        while (event := self._conn.next_event()) is NEED_DATA:
            await self._receive()
        return event

    async def pipeline(self, steps: Sequence[Step], *, transaction: str = "read",
                       parsed_under: tuple[Any, ...] = ()) -> list[StepResult]:
        """Run the steps in one round trip, inside a transaction that is rolled back.

        ``transaction``: "read" (READ ONLY), "write", or "implicit" (no BEGIN/ROLLBACK:
        the read-only transaction that ``Sync`` ends).
        ``parsed_under``: the settings the steps are parsed under (a first step sets
        them). A literal is typed when its statement is parsed ('2024-12-30' becomes
        a timestamptz in that TimeZone), so a statement prepared under other settings
        is another statement.
        Raises the first error, every field intact, with ``step`` set to its index.
        """
        parts: list[bytes] = []
        parsed: list[tuple[_Prepared, str]] = []
        if len(self._prepared) + len(steps) > MAX_PREPARED:
            parts.append(self._evict(len(steps)))
        wrapped = transaction != "implicit"
        if wrapped:
            parts.append(_BEGIN_READ if transaction == "read" else _BEGIN_WRITE)
        for step in steps:
            params = step.params
            key = (step.sql, tuple([p.oid for p in params]), parsed_under)
            name = self._prepared.get(key)
            if name is None:
                # Twice in one pipeline: prepared once.
                name = next((n for k, n in parsed if k == key and n), None)
            if name is None and key not in self._seen:
                # Seen once: the unnamed statement. A text with literals in it (what an
                # agent sends) may never come again; one that comes again is kept.
                self._seen[key] = None
                if len(self._seen) > MAX_SEEN:
                    del self._seen[next(iter(self._seen))]
                name = ""
                parts.append(Parse("", step.sql, key[1]).encode())
                parsed.append((key, name))
            elif name is None:
                name = f"_gs_{next(self._names)}"
                parts.append(Parse(name, step.sql, key[1]).encode())
                parsed.append((key, name))
            formats = tuple([p.format for p in params])
            template = _BINDS.get((name, formats))
            if template is None:
                if len(_BINDS) >= MAX_SEEN:
                    _BINDS.clear()
                template = _BINDS[name, formats] = BindTemplate("", name, formats)
            parts.append(template.encode(tuple([p.value for p in params]),
                                         tuple(step.result_formats)))
            parts.append(_DESCRIBE_EXECUTE if step.rows else _EXECUTE)
        parts.append(_END if wrapped else _SYNC)
        self._transport.write(b"".join(parts))
        try:
            await self._drain()
            results = await self._collect(steps, wrapped, parsed)
        except asyncio.CancelledError:
            self.broken = True  # mid-reply: never reuse this connection
            raise
        for step, result in zip(steps, results, strict=True):
            if not step.own and result.tag.partition(" ")[0] not in PLAIN_TAGS:
                self.broken = True  # whatever it left behind goes with the connection
        return results

    def _evict(self, room: int) -> bytes:
        """Close the oldest prepared statements, to make room for ``room`` more."""
        closing = []
        while self._prepared and len(self._prepared) + room > MAX_PREPARED:
            key = next(iter(self._prepared))
            closing.append(Close("S", self._prepared.pop(key)))
        return _encoded(*closing)

    async def _collect(self, steps: Sequence[Step], wrapped: bool,
                       parsed: Sequence[tuple[_Prepared, str]],
                       ) -> list[StepResult]:
        # Frames are read undecoded: rows pass through as they are, acknowledgements are
        # skipped, and only descriptions, tags, errors and ReadyForQuery are decoded.
        results = [StepResult() for _ in steps]
        index = -1 if wrapped else 0  # -1: the BEGIN
        error: errors.SqlError | None = None
        current = results[0] if results and not wrapped else None
        prepared = 0
        ready = False
        while not ready:
            frames, ready = self._conn.frames_until(_READY)
            if not ready and not frames:
                try:
                    await self._receive()
                except errors.SqlError:
                    raise lost(error) from None
            for kind, body in frames:
                if kind == _DATA_ROW:
                    if current is not None:
                        current.rows.append(DataRow.raw(body))
                elif kind in _STEP_ENDS:
                    if current is not None and kind == _COMMAND_COMPLETE:
                        current.tag = body[:-1].decode()
                    index += 1
                    current = results[index] if 0 <= index < len(results) else None
                elif kind == _ROW_DESCRIPTION:
                    if current is not None:
                        current.fields = self._describe_row(body)
                elif kind == _PARSE_COMPLETE:
                    key, name = parsed[prepared]
                    if name:
                        self._prepared[key] = name  # it exists now, whatever fails later
                    prepared += 1
                elif kind == _ERROR:
                    if error is None:
                        msg = decode_backend(kind, body)
                        error = errors.SqlError.from_fields(msg.fields)  # type: ignore[attr-defined]
                        error.step = index  # type: ignore[attr-defined]
                elif kind == _READY and body != b"I":
                    # The error skipped our ROLLBACK: end the failed transaction now.
                    self._send(Query("ROLLBACK"))
                    await self._drain_until_ready()
                # Anything else (BindComplete, CloseComplete, NoData, notices and parameter
                # statuses of our own BEGIN/ROLLBACK and settings) is nothing for the client.
        if error is not None:
            raise error
        return results

    def _describe_row(self, body: bytes) -> tuple[FieldDescription, ...]:
        fields = self._fields.get(body)
        if fields is None:
            fields = decode_backend(_ROW_DESCRIPTION, body).fields  # type: ignore[attr-defined]
            if len(self._fields) >= MAX_PREPARED:  # the oldest goes
                del self._fields[next(iter(self._fields))]
            self._fields[body] = fields
        return fields

    async def _drain_until_ready(self) -> None:
        while not isinstance(await self._next(), ReadyForQuery):
            pass

    async def describe(self, sql: str, param_oids: Sequence[int] = (),
                       settings: Sequence[tuple[str, str]] = ()
                       ) -> tuple[tuple[int, ...], tuple[FieldDescription, ...] | None]:
        """Parameter types and result columns of a statement, without running it.

        ``settings`` are set (locally, in the same implicit transaction) before it is
        parsed: a literal's type is fixed at parse time, so DateStyle decides whether
        ``'13/01/2024'`` is a date."""
        params: tuple[int, ...] = ()
        fields: tuple[FieldDescription, ...] | None = None
        error = None
        messages: list[Any] = []
        if settings:
            setter = "SELECT " + ", ".join(f"set_config(${2 * i + 1}, ${2 * i + 2}, true)"
                                           for i in range(len(settings)))
            values = tuple(x.encode() for pair in settings for x in pair)
            messages += [Parse("", setter, ()), Bind("", "", (), values, ()), Execute("", 0)]
        try:
            self._send(*messages, Parse("", sql, tuple(param_oids)), Describe("S"), Sync())
            await self._drain()
            while True:
                msg = await self._next()
                if isinstance(msg, ParameterDescription):
                    params = msg.type_oids
                elif isinstance(msg, RowDescription):
                    fields = msg.fields
                elif isinstance(msg, NoData):
                    fields = None
                elif isinstance(msg, ErrorResponse):
                    error = errors.SqlError.from_fields(msg.fields)
                elif isinstance(msg, ReadyForQuery):
                    break
        except BaseException:
            self.broken = True  # mid-reply: never reuse this connection
            raise
        if error is not None:
            raise error
        return params, fields

    async def cancel(self) -> None:
        """Ask the sidecar to cancel what this connection is running."""
        if self.key is None or self._sidecar is None:
            return
        sc = self._sidecar
        try:
            if sc.host.startswith("/"):
                _, w = await asyncio.open_unix_connection(
                    os.path.join(sc.host, f".s.PGSQL.{sc.port}"))
            else:
                _, w = await asyncio.open_connection(sc.host, sc.port)
            w.write(CancelRequest(self.key.process_id, self.key.secret_key).encode())
            await w.drain()
            w.close()
        except OSError:
            log.warning("could not send a cancel request to the sidecar", exc_info=True)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self._send(Terminate())
            self._transport.close()


class Pool:
    """Sidecar connections, borrowed one per statement; at most ``size`` at once."""

    def __init__(self, sidecar: Sidecar, database: str, size: int = 16,
                 user: str | None = None) -> None:
        self.sidecar, self.database, self.size = sidecar, database, size
        self.user = user
        self._idle: list[SidecarConnection] = []
        self._slots = asyncio.Semaphore(size)
        self._all: set[SidecarConnection] = set()
        self.parameters: dict[str, str] = {}

    async def connect(self) -> SidecarConnection:
        """A new connection; while the sidecar cannot be reached (restarting), tried
        again with exponential backoff and jitter for up to ``RECONNECT_WAIT``."""
        deadline = time.monotonic() + RECONNECT_WAIT
        delay = RECONNECT_FIRST
        while True:
            try:
                return await SidecarConnection.connect(self.sidecar, self.database, self.user)
            except (OSError, TimeoutError, errors.SqlError) as exc:
                if isinstance(exc, errors.SqlError) and exc.sqlstate not in RETRY_STATES:
                    raise
                if time.monotonic() + delay > deadline:
                    raise errors.ConnectionFailure(
                        f"could not connect to the sidecar: {exc}"[:1000],
                        hint="The sidecar is down or restarting, and the server keeps "
                        "trying. Run the statement again in a moment.") from exc
                log.info("the sidecar cannot be reached (%s): trying again", exc)
            await asyncio.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, RECONNECT_MAX_DELAY)

    def acquire(self) -> _Lease:
        """``async with pool.acquire() as conn``: a connection for one statement."""
        return _Lease(self)

    async def close(self) -> None:
        for conn in list(self._all):
            await conn.close()
        self._all.clear()
        self._idle.clear()


class _Lease:
    """One borrowing of a pooled connection (a plain class: this runs per statement)."""

    __slots__ = ("conn", "pool")

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.conn: SidecarConnection | None = None

    async def __aenter__(self) -> SidecarConnection:
        pool = self.pool
        await pool._slots.acquire()
        try:
            conn = pool._idle.pop() if pool._idle else None
            while conn is not None and conn.closed:  # its backend is gone (a restart)
                pool._all.discard(conn)
                await conn.close()
                conn = pool._idle.pop() if pool._idle else None
            if conn is None:
                conn = await pool.connect()
                pool.parameters = conn.parameters
                pool._all.add(conn)
        except BaseException:
            pool._slots.release()
            raise
        self.conn = conn
        return conn

    async def __aexit__(self, kind: type[BaseException] | None, *_: object) -> None:
        conn, pool = self.conn, self.pool
        assert conn is not None
        try:
            if kind is not None and issubclass(kind, asyncio.CancelledError) and conn.broken:
                await conn.cancel()  # the sidecar may still be running the statement
        finally:
            if conn.broken:
                pool._all.discard(conn)
                await conn.close()
            else:
                pool._idle.append(conn)
            pool._slots.release()

