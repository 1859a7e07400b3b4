"""One client connection: bytes to protocol events to session calls, and back.

The codec (``wire``) decides what the bytes mean. The session decides what a
statement does. This module only translates between them, for the simple and
the extended protocol. It is an ``asyncio.Protocol``: bytes go straight from the
transport into the codec, and one task per connection decodes and runs what
they say, statements included. So a statement costs no task of its own and no
hop through a queue. Start-up is ``startup``'s job; a text's parse within its
limits, ``statements``'s; the bookkeeping of statements and portals, ``portals``'s;
an Execute, and portals read in parts, ``suspended``'s.
What the connection shares with the server is a ``ServerState`` (``state``).

Rules:
- The connection reads and changes its transaction only through the session's
  API: ``session.tx_status`` for ReadyForQuery, and ``session.fail()`` when an
  error outside a statement (Parse, Bind, Describe, a cancel) must abort it.
- A client that disconnects mid-statement is noticed at once
  (``connection_lost``), and its statement is cancelled. So is one whose
  CancelRequest names it.
- A COMMIT is not canceled half-way, as in Postgres: a CancelRequest that
  names a connection running COMMIT is ignored. A client gone mid-COMMIT still
  cancels the connection's task, but the writes fire on in their own task
  (``engine.commit``) and end journaled.
- Output is buffered. It is written at Sync, at Flush, at the end of a simple
  Query, and at once on an error. A full transport pauses the writer until it
  drains. Input beyond ``READ_AHEAD`` unread bytes pauses reading.
- After an error in the extended protocol, messages are discarded until Sync. A
  refused FunctionCall is answered with ErrorResponse, then ReadyForQuery.
- A prepared read whose Bind, Describe (or none), Execute and Sync arrived together,
  outside a transaction block, is a portal run. When the session can answer it from
  its calls' caches, it is answered in one pass: in the transports' callbacks, the
  task left parked (``answer``: ``Session.answer_read``), or, with no idle sidecar
  connection, by the task (``portal_run``: ``Session.fast_read``). A compiled read
  with a call to make is answered in one pass by the task. Any other has its
  messages read one by one. The client cannot tell these apart but by their time.
- A protocol violation by the client ends its connection with 08P01. Our own
  bug answers XX000 with a generic message, and the traceback goes to the log.
  Neither disturbs any other connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from glove_scratchpad import errors, metrics
from glove_scratchpad.catalog import StepResult
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
    PortalRun,
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
from . import portals as p
from . import suspended
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
# Messages of the extended protocol, answered by ``_extended``; FunctionCall is refused.
_EXTENDED = frozenset((Bind, Execute, Describe, Parse, Close))
_BIND_COMPLETE = BindComplete()
_DESCRIBE_PORTAL, _EXECUTE = Describe("P", ""), Execute("", 0)  # a portal run's, decoded


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
        self.prepared: dict[str, p.Prepared] = {}
        self.portals = suspended.Portals()
        self.running = False  # a statement is running: a cancel would stop it
        self.cancel_requested = False
        self.committing = False  # the statement running is a COMMIT (END)
        self.peer: Any = None
        self.local: Any = None
        self.parked = False  # the task waits for a request's first bytes
        # A run answered in callbacks: what stops it, and the run; the last one declined.
        self.answering: Callable[[errors.SqlError | None], None] | None = None
        self.answered: PortalRun | None = None
        self.declined: PortalRun | None = None
        self._answer_head = self._head_of_answered  # bound once: asked of every run

    # -- the transport's callbacks -----------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.peer = transport.get_extra_info("peername")
        self.local = transport.get_extra_info("sockname")
        self.task = asyncio.get_running_loop().create_task(self.serve())

    def connection_lost(self, exc: Exception | None) -> None:
        stop, self.answering = self.answering, None
        if stop is not None:
            stop(None)  # a client that went away stops what it was running
        super().connection_lost(exc)
        if self.running and self.task is not None:
            self.task.cancel()  # a client that went away cancels what it was running

    def data_received(self, data: bytes) -> None:
        self.received(data)
        self._arrived()

    def eof_received(self) -> bool:
        self.closed = True
        self._arrived()
        return False

    def _arrived(self) -> None:
        """Bytes came (or the end): while the task is parked, a portal run is answered in
        callbacks if it can be (``answer``), else the task wakes; during one, they wait."""
        if self.answering is not None:
            return
        if self.parked and not self.closed:
            run = self.conn.portal_run()
            if run is not None and self.answer(run):
                return
        self.wake()

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
            await self.main_loop()
        except (_Closed, ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        except ProtocolError as exc:
            await self._fatal(errors.ProtocolViolation(str(exc)))
        except Exception:
            log.exception("internal error serving %s", self.peer)
            await self._fatal(errors.InternalError("internal error"))

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
                if self.answering is not None or not self.conn.buffered:
                    self.parked = True  # a portal run may be answered meanwhile (_arrived)
                    try:
                        if not await self.more_data():
                            raise _Closed()
                    finally:
                        self.parked = False
                    continue
                run = self.conn.portal_run()  # Bind, [Describe], Execute, Sync, all here
                if run is not None:
                    if run is self.declined or not self.answer(run):
                        await self.portal_run(run, pending)
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
        self.committing = stmt.commits
        self.relaying(relay)
        try:
            return await self.cancellable(self.session.run(stmt, params, request, formats))
        finally:
            self.rows_head = None

    async def portal_run(self, run: PortalRun, pending: p.Pending) -> bool:
        """Bind, [Describe], Execute and Sync that arrived together. A compiled read
        outside a transaction block (``Session.fast_read``) is answered in one pass
        (True); any other runs the decoded messages one by one, as if read so (False).
        The client gets the same messages either way."""
        self.conn.take(run)
        assert self.session is not None
        try:
            args = self._fast_args(run)
            work = None if args is None else self.session.fast_read(*args)
        except Exception as exc:  # our bug: an error of the run's, and the connection goes on
            self._failed(_EXECUTE, exc)
            await self.sync()
            return False
        if work is None:
            for msg in (run.bind, *((_DESCRIBE_PORTAL,) if run.describe else ()), _EXECUTE):
                try:
                    await self._extended(msg, pending)
                except Exception as exc:
                    self._failed(msg, exc)  # what recovery would drop is this run's rest
                    break
            await self.sync()
            return False
        self.relaying(self._run_head(run))
        try:
            outcome: Result | Exception = await self.cancellable(work)
        except Exception as exc:
            outcome = exc
        finally:
            self.rows_head = None
        self._send_run(run, outcome)
        await self.flush()
        return True

    def _send_run(self, run: PortalRun, outcome: Result | StepResult | Exception) -> None:
        """A fast read's messages: as Bind, [Describe], Execute and Sync would answer,
        read one by one (a ``StepResult``: the sidecar's reply, relayed). Like a relayed
        row, ReadyForQuery goes encoded: a message the normal phase always allows."""
        self.portals.clear()  # outside a transaction block, as at Sync
        if not self.relayed:  # else it went before the rows
            self.out.append(p.run_head(self.prepared[run.bind.statement], run))
        if isinstance(outcome, StepResult):
            self.send_rows(outcome.rows)
            self.out.append(p.tag_bytes(outcome.tag))
        elif isinstance(outcome, Exception):
            self._failed(_EXECUTE, outcome)
        else:
            self.send_notices(outcome.notices)
            self.send_rows(outcome.data_rows)
            self.out.append(p.tag_bytes(outcome.command_tag))
        self.out.append(p.READY_BYTES[self.tx_status()])

    def _run_head(self, run: PortalRun) -> Callable[[bytes], bytes]:
        return lambda _: p.run_head(self.prepared[run.bind.statement], run)

    def _head_of_answered(self, _: bytes) -> bytes:
        run = self.answered
        assert run is not None  # rows come after ``answer`` set it
        return p.run_head(self.prepared[run.bind.statement], run)

    def _fast_args(self, run: PortalRun) -> tuple[ParsedStatement, list[Param],
                                                  tuple[int, ...]] | None:
        """A portal run's statement, parameters and formats, if it may be a fast read."""
        prepared = p.fast_statement(self.prepared, run) if self.tx_status() == "I" else None
        if prepared is None or prepared.stmt is None:
            return None
        return prepared.stmt, p.params_of(prepared, run.bind), tuple(run.bind.result_formats)

    def answer(self, run: PortalRun) -> bool:
        """Start a portal run answered in the transports' callbacks: whether it started.
        Not while the transport's buffer is full: the task path waits for it to drain."""
        if self._drained is not None or self.session is None:
            return False
        self.relayed, self.rows_head = False, self._answer_head
        try:
            args = self._fast_args(run)
            stop = None if args is None else self.session.answer_read(*args, self._answered)
        except Exception:  # the task path reads it again, and answers with its error
            log.exception("internal error starting a portal run in callbacks")
            self.rows_head = None
            return False
        if stop is None:
            self.rows_head = None
            self.declined = run  # the task takes it, and need not ask again
            return False
        self.conn.take(run)
        self.answering, self.answered = stop, run
        return True

    def _answered(self, outcome: Result | StepResult | errors.SqlError) -> None:
        """A portal run answered in callbacks is over: its reply, in one write; then the
        next run that waits, or the task wakes."""
        run = self.answered
        self.answering = self.answered = self.rows_head = None
        assert run is not None
        try:
            self._send_run(run, outcome)
            if not self.closed:
                self.write(b"".join(self.out))
        except Exception:
            log.exception("internal error answering a portal run")
            self.transport.close()  # type: ignore[union-attr]  # the reply is lost, so is the client
        self.out.clear()
        self.out_size = 0
        if self.closed or self.conn.buffered:
            self._arrived()  # the next run that waits, answered so too; else the task wakes

    async def cancellable(self, work: Coroutine[Any, Any, T]) -> T:
        """Await a statement's run in the connection's task; a cancel stops it there."""
        assert self.session is not None and self.task is not None
        while self.task.cancelling():
            # Between statements nothing may be pending: a count left over (Python 3.11's
            # TaskGroup leaves one when a child fails late) would turn this statement's
            # cancel into the end of the connection.
            self.task.uncancel()
        self.cancel_requested = False
        self.running = True
        try:
            result = await work
        except asyncio.CancelledError:
            # Ours alone (not also a shutdown's, or a client gone): the connection goes on.
            if self.cancel_requested and not self.closed and self.task.uncancel() == 0:
                self.session.fail()
                raise errors.QueryCanceled("canceling statement due to user request") from None
            raise
        finally:
            self.running = self.committing = False
        return result

    def cancel(self) -> None:
        if self.answering is not None:
            self.answering(errors.QueryCanceled("canceling statement due to user request"))
            return
        if self.committing:
            return  # its writes fire to the end (like Postgres's COMMIT, not cancelable)
        if self.running and not self.cancel_requested and self.task is not None:
            self.cancel_requested = True
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
            p.forget(result.released, self.prepared, self.portals)
            self.send_result(result, describe=True)
            await self.maybe_flush()
        # A simple Query replaces the unnamed statement and portal, and portals end with
        # their transaction (also one ended by a COMMIT or ROLLBACK sent here).
        self.prepared.pop("", None)
        self.portals.pop("", None)
        if self.tx_status() == "I":
            self.portals.clear()
        self.send(ReadyForQuery(self.tx_status()))
        await self.flush()

    async def extended(self, msg: Any, pending: p.Pending) -> None:
        try:
            await self._extended(msg, pending)
        except Exception as exc:
            self._failed(msg, exc)
            self.conn.start_error_recovery()  # the codec drops what comes until Sync
            await self.flush()

    def _failed(self, msg: Any, exc: Exception) -> None:
        """The error of an extended-protocol message (called where it was caught): ours
        is XX000, with its traceback in the log; a recursion too deep is 54001."""
        if not isinstance(exc, errors.SqlError):
            exc = error_of(exc, "in %s", type(msg).__name__)
        self.send_error(exc)

    async def _extended(self, msg: Any, pending: p.Pending) -> None:
        kind = type(msg)
        if kind is Bind:
            p.bind(msg, self.prepared, self.portals)
            self.send(_BIND_COMPLETE)
        elif kind is Execute:
            await suspended.execute(self, p.find_portal(self.portals, msg.portal), msg.max_rows,
                                    pending)
        elif kind is Parse:
            p.prepare(msg, self.prepared, await parsed(msg.query, self.state.config))
            self.send(ParseComplete())
        elif kind is Describe:
            if msg.kind == "S":
                param_oids, fields = await self._describe(p.find_statement(self.prepared,
                                                                           msg.name))
                self.send(ParameterDescription(param_oids))
                self.send(NoData() if fields is None else RowDescription(fields))
            elif msg.name not in self.portals and self.session is not None and msg.name:
                # A cursor DECLARE made is a portal too (psycopg describes it by name).
                self.send(RowDescription(self.session.describe_cursor(msg.name)))
            else:
                portal = p.find_portal(self.portals, msg.name)
                fields = (await self._describe(portal.prepared))[1]
                self.send(NoData() if fields is None else portal.row_description(fields))
        elif kind is Close:
            if msg.kind == "S":
                self.prepared.pop(msg.name, None)
            else:
                self.portals.pop(msg.name, None)
            self.send(CloseComplete())
        else:
            raise errors.ProtocolViolation(f"unexpected message {type(msg).__name__}")

    async def _describe(self, prepared: p.Prepared
                        ) -> tuple[tuple[int, ...], tuple[FieldDescription, ...] | None]:
        if prepared.described is None:
            if prepared.stmt is None:
                prepared.described = ((), None)
            else:
                assert self.session is not None
                prepared.described = await self.session.describe(prepared.stmt,
                                                                 prepared.param_oids)
        return prepared.described
