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
pool, and new ones are retried as the one reconnect policy says
(``_access.reconnecting``). Nothing a statement did in the sidecar outlives it, so
running it again is always safe.

A reply is read by the task that awaits ``pipeline``, or, for a compiled read
answered in the transports' callbacks (``start``), by the socket's own callback:
the same reading (``_steps.Reply``) either way.

Parameters travel as the client sent them (bytes, format code, type OID) and
rows come back as Postgres encoded them, in the formats asked for: DataRow
bodies are relayed without being decoded. Only the Python API decodes them
(``values.decode_row``).

A client's own read may be relayed as it comes (a ``Stream``): once its rows
pass ``STREAM_AT`` bytes, they go on to the client's socket (a ``RowSink``)
instead of being kept, and the sidecar socket's reading stops while the
client's socket is full (``CodecProtocol.relay_from``). So a result the client
does not read is not read from the sidecar either: its memory is a socket's
buffers, whatever its size. Rows past the row limit are dropped there (counted),
and none go past ``max_bytes`` (the result is then refused, after them).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

from glove_scratchpad import errors, metrics
from glove_scratchpad.stream import CodecProtocol, Stream
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
    Describe,
    ErrorResponse,
    Execute,
    FieldDescription,
    NoData,
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

from ._access import lost
from ._sidecar import Sidecar
from ._steps import READY as _READY
from ._steps import ROW_DESCRIPTION as _ROW_DESCRIPTION
from ._steps import Reply, StatementKey, Step, StepResult

__all__ = ["SidecarConnection", "Step", "StepResult"]


log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 10.0  # seconds to open and authenticate a sidecar connection
MAX_PREPARED = 256  # statements kept prepared per sidecar connection
MAX_SEEN = 4096  # statements remembered as run once, so a second run prepares them
# Command tags of the statements a client's SQL may become; any other retires the
# connection that ran it (a PREPARE, SET or DECLARE that slipped past the gate).
PLAIN_TAGS = frozenset(("SELECT", "INSERT", "UPDATE", "DELETE", "EXPLAIN"))


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
        self._prepared: dict[StatementKey, str] = {}
        self._seen: dict[StatementKey, None] = {}  # run once, not prepared
        self._names = itertools.count(1)
        self._fields: dict[bytes, tuple[FieldDescription, ...]] = {}  # RowDescriptions seen
        self._reply: Reply | None = None  # ``start``'s, until it ends

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
        metrics.sidecar_round_trip("other")  # counted once, however many its auth takes
        self._send(StartupMessage(parameters={
            "user": user, "database": database, "application_name": application_name,
            "client_encoding": "UTF8", "default_transaction_read_only": "on",
            # String constants mean what they say whatever the sidecar's default.
            "standard_conforming_strings": "on",
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
        metrics.sidecar_round_trip("other")
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
                       parsed_under: tuple[Any, ...] = (),
                       stream: Callable[[], Stream] | None = None) -> list[StepResult]:
        """Run the steps in one round trip, inside a transaction that is rolled back.

        ``transaction``: "read" (READ ONLY), "write", or "implicit" (no BEGIN/ROLLBACK:
        the read-only transaction that ``Sync`` ends).
        ``parsed_under``: the settings the steps are parsed under (a first step sets
        them). A literal is typed when its statement is parsed ('2024-12-30' becomes
        a timestamptz in that TimeZone), so a statement prepared under other settings
        is another statement.
        ``stream``: makes the ``Stream`` of the last step's rows once they pass
        STREAM_AT bytes (its ``StepResult.stream``).
        Raises the first error, every field intact, with ``step`` set to its index.
        """
        reply = self._request(steps, transaction, parsed_under)
        reply.make = stream
        try:
            await self._drain()
            while not reply.ready:
                frames, ready = self._conn.frames_until(_READY)
                if not ready and not frames:
                    try:
                        await self._receive()
                    except errors.SqlError:
                        raise lost(reply.error) from None
                if reply.feed(frames) and reply.status != b"I":
                    # The error skipped our ROLLBACK: end the failed transaction now.
                    metrics.sidecar_round_trip("run")
                    self._send(Query("ROLLBACK"))
                    await self._drain_until_ready()
        except asyncio.CancelledError:
            self.broken = True  # mid-reply: never reuse this connection
            raise
        finally:
            if reply.stream is not None:
                reply.stream.end()
        return self._results(reply)

    def start(self, steps: Sequence[Step], parsed_under: tuple[Any, ...],
              done: Callable[[list[StepResult] | errors.SqlError], None],
              stream: Callable[[], Stream] | None = None) -> None:
        """``pipeline`` in the implicit transaction, answered from the socket's callbacks:
        ``done`` gets the results or the first error, once, when the reply is whole
        (or the connection is lost). No task waits for it; ``abandon`` stops listening."""
        reply = self._request(steps, "implicit", parsed_under)
        reply.make, self._reply = stream, reply
        socket, conn = self._socket, self._conn

        def arrived() -> None:
            frames, _ = conn.frames_until(_READY)
            try:
                reply.feed(frames)
            except Exception:  # a reply we cannot read: our bug, told as one
                log.exception("the sidecar's reply could not be read")
                socket.listener, self.broken = None, True
                self._end_stream()
                done(errors.InternalError("internal error"))
                return
            if reply.stream is not None and (reply.ready or socket.closed):
                self._end_stream()
            if reply.ready:
                socket.listener = None
                if reply.status != b"I":
                    self.broken = True  # an implicit transaction is over at Sync
                try:
                    outcome: list[StepResult] | errors.SqlError = self._results(reply)
                except errors.SqlError as exc:
                    outcome = exc
                done(outcome)
            elif socket.closed:
                socket.listener, self.broken = None, True
                done(lost(reply.error))

        socket.listener = arrived

    def abandon(self) -> None:
        """Stop listening for a reply ``start`` asked for: the connection is not reused."""
        self._socket.listener = None
        self.broken = True
        self._end_stream()

    def _end_stream(self) -> None:
        reply, self._reply = self._reply, None
        if reply is not None and reply.stream is not None:
            reply.stream.end()

    def _request(self, steps: Sequence[Step], transaction: str, parsed_under: tuple[Any, ...]
                 ) -> Reply:
        """Send the steps' messages in one write; the reply that will answer them."""
        metrics.sidecar_round_trip("run")
        parts: list[bytes] = []
        parsed: list[tuple[StatementKey, str]] = []
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
        return Reply(self, steps, wrapped, parsed)

    def _results(self, reply: Reply) -> list[StepResult]:
        """A whole reply's results; its first error raised."""
        if reply.error is not None:
            raise reply.error
        for step, result in zip(reply.steps, reply.results, strict=True):
            if not step.own and result.tag.partition(" ")[0] not in PLAIN_TAGS:
                self.broken = True  # whatever it left behind goes with the connection
        return reply.results

    def _evict(self, room: int) -> bytes:
        """Close the oldest prepared statements, to make room for ``room`` more."""
        closing = []
        while self._prepared and len(self._prepared) + room > MAX_PREPARED:
            key = next(iter(self._prepared))
            closing.append(Close("S", self._prepared.pop(key)))
        return _encoded(*closing)

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
                       before: Step | None = None
                       ) -> tuple[tuple[int, ...], tuple[FieldDescription, ...] | None]:
        """Parameter types and result columns of a statement, without running it.

        ``before`` runs first, in the same implicit transaction (the session's settings,
        set locally): a literal's type is fixed at parse time, so DateStyle decides
        whether ``'13/01/2024'`` is a date."""
        params: tuple[int, ...] = ()
        fields: tuple[FieldDescription, ...] | None = None
        error = None
        messages: list[Any] = []
        if before is not None:
            messages += [Parse("", before.sql, tuple(p.oid for p in before.params)),
                         Bind("", "", tuple(p.format for p in before.params),
                              tuple(p.value for p in before.params), ()), Execute("", 0)]
        try:
            metrics.sidecar_round_trip("describe")
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

    async def cancel_and_close(self) -> None:
        """Cancel what the sidecar may still run for this connection, then close it."""
        try:
            await self.cancel()
        finally:
            self.close_now()

    async def close(self) -> None:
        self.close_now()

    def close_now(self) -> None:
        with contextlib.suppress(Exception):
            self._send(Terminate())
            self._transport.close()
