"""One client connection: bytes to protocol events to session calls, and back.

The codec (``wire``) decides what the bytes mean. The session decides what a
statement does. This module only translates between them, for the simple and
the extended protocol. It is an ``asyncio.Protocol``: bytes go straight from the
transport into the codec, and one task per connection decodes and runs what
they say, statements included. So a statement costs no task of its own and no
hop through a queue. Start-up is ``startup``'s job; a text's parse within its
limits, ``statements``'s; the bookkeeping of statements and portals, ``portals``'s;
an Execute, and portals read in parts, ``suspended``'s; a portal run answered in one
pass, ``portal_run``'s, and in the transports' callbacks, ``callbacks``'s; our own
bugs, ``internal``'s. What the connection shares with the server is a
``ServerState`` (``state``).

Rules:
- The connection is in one phase at a time (``phases``: starting, reading, parked,
  answering in callbacks, running, canceling, closed), and moves only as the table
  of moves allows: what a cancel, a client gone or new bytes do follows from it.
- The connection reads and changes its transaction only through the session's
  API: ``session.tx_status`` for ReadyForQuery, and ``session.fail()`` when an
  error outside a statement (Parse, Bind, Describe, a cancel) must abort it.
- A client that disconnects mid-statement is noticed at once
  (``connection_lost``), and its statement is cancelled. So is one whose
  CancelRequest names it.
- A COMMIT is not canceled half-way, as in Postgres: a CancelRequest that names a
  connection whose session runs a COMMIT (``Session.committing``) is ignored. A
  client gone mid-COMMIT still cancels the connection's task, but the writes fire
  on in their own task (``engine.commit``) and end journaled.
- Output is buffered. It is written at Sync, at Flush, at the end of a simple
  Query, and at once on an error. A full transport pauses the writer until it
  drains. Input beyond ``READ_AHEAD`` unread bytes pauses reading.
- After an error in the extended protocol, messages are discarded until Sync. A
  refused FunctionCall is answered with ErrorResponse, then ReadyForQuery.
- A protocol violation by the client ends its connection with 08P01. Our own
  bug answers XX000 with a generic message, and the traceback goes to the log
  (``internal``). Neither disturbs any other connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from glove_scratchpad import errors, metrics
from glove_scratchpad.wire import (
    NEED_DATA,
    Bind,
    BindComplete,
    Close,
    CloseComplete,
    CommandComplete,
    CopyData,
    CopyDone,
    CopyFail,
    Describe,
    EmptyQueryResponse,
    ErrorResponse,
    Execute,
    FieldDescription,
    Flush,
    NoData,
    NoticeResponse,
    Param,
    ParameterDescription,
    ParameterStatus,
    Parse,
    ParseComplete,
    ProtocolError,
    Query,
    ReadyForQuery,
    RowDescription,
    ServerConnection,
    Sync,
    Terminate,
)

from ..engine.result import Notice, Result
from ..engine.session import ParsedStatement, Session
from . import portal_run, suspended
from . import portals as p
from .callbacks import Answering
from .internal import internal_error
from .phases import RUNS, ImpossibleMove, Phase, check
from .sink import ClientSocket, row_description
from .sink import Closed as _Closed
from .slots import address_of
from .startup import start_up
from .state import BackendKey, ServerState
from .statements import error_of, parsed

__all__ = ["ClientHandler"]

log = logging.getLogger(__name__)

T = TypeVar("T")
READ_AHEAD = 1024 * 1024  # unread bytes buffered before reading pauses
# Messages of the extended protocol, answered by ``answer_extended``; FunctionCall is
# refused.
_EXTENDED = frozenset((Bind, Execute, Describe, Parse, Close))
_BIND_COMPLETE = BindComplete()


class ClientHandler(ClientSocket):
    """Serves one client connection until it ends."""

    read_ahead = READ_AHEAD
    transport: asyncio.Transport | None  # CodecProtocol's; mypy cannot see that base class

    def __init__(self, state: ServerState) -> None:
        super().__init__(ServerConnection())
        self.state = state
        self.budget = state.pending  # the bytes of its messages half received count there
        self.task: asyncio.Task[None] | None = None
        self.key: BackendKey | None = None  # set once start-up sent BackendKeyData
        self.session: Session | None = None
        self.statements: dict[str, p.ClientStatement] = {}  # the client's, by name
        self.portals = suspended.Portals()
        self.phase = Phase.STARTING  # moves along ``phases.MOVES`` alone (``move``)
        self.peer: Any = None
        self.local: Any = None
        self.answering = Answering(self)  # its portal runs answered in callbacks

    @property
    def running(self) -> bool:
        """A statement runs in the task: a cancel would stop it, a shutdown waits for it."""
        return self.phase in RUNS

    def move(self, to: Phase) -> None:
        """The next phase, if the table allows it; else ``ImpossibleMove``: our bug."""
        self.phase = check(self.phase, to)

    # -- the transport's callbacks -----------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.peer = transport.get_extra_info("peername")
        self.local = transport.get_extra_info("sockname")
        self.task = asyncio.get_running_loop().create_task(self.serve())

    def connection_lost(self, exc: Exception | None) -> None:
        phase = self.phase
        if phase is Phase.ANSWERING:
            self.answering.stop(None)  # a client that went away stops what it was running
        super().connection_lost(exc)
        if phase in RUNS and self.task is not None:
            self.task.cancel()  # a client that went away cancels what it was running

    def data_received(self, data: bytes) -> None:
        self.received(data)
        self.on_bytes()

    def eof_received(self) -> bool:
        self.closed = True
        self.on_bytes()
        return False

    def on_bytes(self) -> None:
        """Bytes came (or the end): while the task is parked, a portal run is answered in
        callbacks if it can be (``callbacks``), else the task wakes; during one, they wait.
        Our bug here ends the connection with XX000 (``internal``)."""
        try:
            phase = self.phase
            if phase is Phase.ANSWERING:
                return
            if phase is Phase.PARKED and not self.closed:
                run = self.conn.portal_run()
                if run is not None and self.answering.start(run):
                    return
        except Exception as exc:
            self.evict(internal_error(exc, "in the transport's callbacks"))
        self.wake()

    def writable(self) -> bool:
        """Whether the transport takes more output now (else a writer waits to drain)."""
        return self._drained is None

    # -- output (and ``ClientSocket``'s) -----------------------------------------

    def send_error(self, err: errors.SqlError) -> None:
        # Any error aborts an open transaction, as in Postgres: also one raised by
        # Parse, Bind or Describe, which never reach the session's run.
        if self.session is not None:
            self.session.fail()
        self.send(ErrorResponse(err.as_fields()))

    def send_notices(self, notices: Sequence[Notice]) -> None:
        for n in notices:  # the session kept those its client_min_messages lets through
            self.send(NoticeResponse(n.as_fields()))

    def tx_status(self) -> str:
        return self.session.tx_status if self.session is not None else "I"

    # -- what start-up needs (``startup.Channel``) ---------------------------------

    async def read_event(self) -> Any:
        while (event := self.conn.next_event()) is NEED_DATA:
            if not await self.more_data():
                raise _Closed()
        return event

    async def start_tls(self, context: ssl.SSLContext) -> None:
        plain = self.transport
        assert plain is not None
        self.transport = await asyncio.get_running_loop().start_tls(
            plain, self, context, server_side=True)

    def uses_tls(self) -> bool:
        assert self.transport is not None
        return self.transport.get_extra_info("ssl_object") is not None

    # -- the connection's life ---------------------------------------------------

    async def serve(self) -> None:
        """The connection's task, from its first byte to its close."""
        task = asyncio.current_task()
        assert task is not None
        tasks = self.state.tasks
        tasks.add(task)
        metrics.connection(1)
        try:
            refused = self.state.slots.start(self, address_of(self.peer))
            if refused is not None:
                self.evict(refused)
                return
            await self._converse()
        except asyncio.CancelledError:
            pass  # shutdown (or a client gone mid-statement) ended this connection
        finally:
            if self.phase is Phase.ANSWERING:
                self.answering.stop(None)  # shut down: its reply would find no one
            self.move(Phase.CLOSED)
            metrics.connection(-1)
            if self.session is not None:
                self.state.slots.sign_out()
                self.session.close()
                self.portals.clear()  # the calls of portals read in parts end with it
                metrics.connection(-1, session=True)
                if self.session.tx_status != "I":
                    metrics.transaction(-1)  # its transaction ends with it
            tasks.discard(task)
            if self.key is not None:
                self.state.forget(self.key)
            if self.transport is not None:
                self.transport.close()
            # What it holds (a message half received) is freed now, not when a collection
            # finds the connection and its session, which refer to each other.
            self.conn = ServerConnection()

    async def _converse(self) -> None:
        try:
            try:
                async with asyncio.timeout(self.state.config.startup_timeout):
                    started = await start_up(self, self.state)
            except TimeoutError:
                log.info("start-up timeout from %s", self.peer)
                return
            finally:
                self.state.slots.started(self)
            if started is None:
                return
            self.session, self.key = started.session, started.key
            self.session.pid, self.session.canceller = started.key[0], self.cancel
            self.session.sink = self
            metrics.connection(1, session=True)
            self.state.register(started.key, self)
            self.move(Phase.READING)
            await self.main_loop()
        except (_Closed, ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        except ProtocolError as exc:
            await self._fatal(errors.ProtocolViolation(str(exc)))
        except Exception as exc:
            await self._fatal(internal_error(exc, "serving %s", self.peer))

    async def _fatal(self, err: errors.SqlError) -> None:
        """The error the connection ends with, if it can still be sent."""
        with contextlib.suppress(Exception):
            self.send(ErrorResponse(err.as_fields() | {"S": "FATAL", "V": "FATAL"}))
            await self.flush()

    # -- the normal phase --------------------------------------------------------

    async def main_loop(self) -> None:
        pending = p.Pending()
        synced = True  # at a request's first message, where a portal run may begin
        while True:
            if synced:
                if self.phase is Phase.ANSWERING or not self.conn.buffered:
                    await self._park()
                    continue
                run = self.conn.portal_run()  # Bind, [Describe], Execute, Sync, all here
                if run is not None:
                    if run is self.answering.declined or not self.answering.start(run):
                        await portal_run.in_task(self, run, pending)
                        pending = p.Pending()
                    continue
            msg = await self.read_event()
            kind = type(msg)
            synced = kind is Sync or kind is Query
            if kind in _EXTENDED:  # the most frequent: tested first
                await self.extended(msg, pending)
            elif kind is Terminate:
                return
            elif kind is Query:
                await self.simple_query(msg.sql)
            elif kind is Sync:
                pending = p.Pending()
                await self.sync()
            elif kind is Flush:
                await self.flush()
            elif kind in (CopyData, CopyDone, CopyFail):
                continue  # only reachable after a refused COPY: Postgres ignores them
            else:  # FunctionCall: refused, and its reply ends as a Query's does
                self.send_error(errors.FeatureNotSupported(
                    f"the {kind.__name__} message is not supported",
                    hint="Call the function in a SELECT."))
                await self.sync()

    async def _park(self) -> None:
        """Wait for a request's first bytes; a portal run may be answered meanwhile, in
        callbacks (``on_bytes``). A run answered so already keeps the task parked."""
        if self.phase is not Phase.ANSWERING:
            self.move(Phase.PARKED)
        try:
            if not await self.more_data():
                raise _Closed()
        finally:
            if self.phase is Phase.PARKED:
                self.move(Phase.READING)

    async def sync(self) -> None:
        """Sync: the end of a request, and of every portal outside a transaction block."""
        if self.tx_status() == "I":
            self.portals.clear()
        self.send(ReadyForQuery(self.tx_status()))
        await self.flush()

    async def run(self, stmt: ParsedStatement, params: list[Param], request: Any,
                  formats: Sequence[int], relay: Callable[[bytes], bytes] | None = None
                  ) -> Result:
        """Run one statement in the connection's task; a cancel stops it there.
        ``relay``: what goes before its rows, if they may be relayed as they come."""
        assert self.session is not None
        self.relaying(relay)
        try:
            return await self.cancellable(self.session.run(stmt, params, request, formats))
        finally:
            self.rows_head = None

    async def cancellable(self, work: Coroutine[Any, Any, T]) -> T:
        """Await a statement's run in the connection's task; a cancel stops it there."""
        assert self.session is not None and self.task is not None
        while self.task.cancelling():
            # Between statements nothing may be pending: a count left over (Python 3.11's
            # TaskGroup leaves one when a child fails late) would turn this statement's
            # cancel into the end of the connection.
            self.task.uncancel()
        try:
            self.move(Phase.RUNNING)
        except ImpossibleMove:
            work.close()  # never started: nothing to wait for
            raise
        try:
            result = await work
        except asyncio.CancelledError:
            # Ours alone (not also a shutdown's, or a client gone): the connection goes on.
            if (self.phase is Phase.CANCELING and not self.closed
                    and self.task.uncancel() == 0):
                self.session.fail()
                raise errors.QueryCanceled("canceling statement due to user request") from None
            raise
        finally:
            self.move(Phase.READING)
        return result

    def cancel(self) -> None:
        """A CancelRequest's: stop the statement running, unless it is a COMMIT."""
        phase = self.phase
        if phase is Phase.ANSWERING:
            self.answering.stop(errors.QueryCanceled("canceling statement due to user request"))
        elif (phase is Phase.RUNNING and self.task is not None and self.session is not None
              and not self.session.committing):  # its writes fire to the end, as in Postgres
            self.move(Phase.CANCELING)
            self.task.cancel()

    def send_result(self, result: Result, *, describe: bool) -> None:
        self.send_notices(result.notices)
        if describe and not self.relayed and (  # else it went before the rows
                result.fields or result.command_tag.startswith("SELECT")):  # 0 too
            self.send(RowDescription(tuple(result.fields)))
        self.send_rows(result.data_rows)
        for name, value in result.parameters.items():
            self.send(ParameterStatus(name, value))
        if result.command_tag:
            self.send(CommandComplete(result.command_tag))

    async def simple_query(self, sql: str) -> None:
        assert self.session is not None
        try:
            statements = await parsed(sql, self.state.config)
        except errors.SqlError as exc:
            statements = None
            self.send_error(exc)
        if statements is not None and not statements:
            self.send(EmptyQueryResponse())
        request = self.session.new_request(simple=True)
        for stmt in statements or ():
            try:
                result = await self.run(stmt, [], request, (), row_description)
            except errors.SqlError as exc:
                if exc.position is not None:
                    # psql points into the whole query string
                    exc = exc.replaced(position=exc.position + stmt.offset)
                self.send_error(exc)
                break
            except Exception as exc:
                self.send_error(error_of(exc, "running %r", stmt.sql[:200]))
                break
            p.forget(result.released, self.statements, self.portals)
            self.send_result(result, describe=True)
            await self.maybe_flush()
        # A simple Query replaces the unnamed statement and portal, and portals end with
        # their transaction (also one ended by a COMMIT or ROLLBACK sent here).
        self.statements.pop("", None)
        self.portals.pop("", None)
        if self.tx_status() == "I":
            self.portals.clear()
        self.send(ReadyForQuery(self.tx_status()))
        await self.flush()

    async def extended(self, msg: Any, pending: p.Pending) -> None:
        try:
            await self.answer_extended(msg, pending)
        except Exception as exc:
            self.failed(msg, exc)
            self.conn.start_error_recovery()  # the codec drops what comes until Sync
            await self.flush()

    def failed(self, msg: Any, exc: Exception) -> None:
        """The error of an extended-protocol message (called where it was caught): ours
        is XX000, with its traceback in the log; a recursion too deep is 54001."""
        if not isinstance(exc, errors.SqlError):
            exc = error_of(exc, "in %s", type(msg).__name__)
        self.send_error(exc)

    async def answer_extended(self, msg: Any, pending: p.Pending) -> None:
        kind = type(msg)
        if kind is Bind:
            p.bind(msg, self.statements, self.portals)
            self.send(_BIND_COMPLETE)
        elif kind is Execute:
            await suspended.execute(self, p.find_portal(self.portals, msg.portal), msg.max_rows,
                                    pending)
        elif kind is Parse:
            p.prepare(msg, self.statements, await parsed(msg.query, self.state.config))
            self.send(ParseComplete())
        elif kind is Describe:
            if msg.kind == "S":
                param_oids, fields = await self._describe(p.find_statement(self.statements,
                                                                           msg.name))
                self.send(ParameterDescription(param_oids))
                self.send(NoData() if fields is None else RowDescription(fields))
            elif msg.name not in self.portals and self.session is not None and msg.name:
                # A cursor DECLARE made is a portal too (psycopg describes it by name).
                self.send(RowDescription(self.session.describe_cursor(msg.name)))
            else:
                portal = p.find_portal(self.portals, msg.name)
                fields = (await self._describe(portal.statement))[1]
                self.send(NoData() if fields is None else portal.row_description(fields))
        elif kind is Close:
            if msg.kind == "S":
                self.statements.pop(msg.name, None)
            else:
                self.portals.pop(msg.name, None)
            self.send(CloseComplete())
        else:
            raise errors.ProtocolViolation(f"unexpected message {type(msg).__name__}")

    async def _describe(self, statement: p.ClientStatement
                        ) -> tuple[tuple[int, ...], tuple[FieldDescription, ...] | None]:
        if statement.described is None:
            if statement.stmt is None:
                statement.described = ((), None)
            else:
                assert self.session is not None
                statement.described = await self.session.describe(statement.stmt,
                                                                  statement.param_oids)
        return statement.described
