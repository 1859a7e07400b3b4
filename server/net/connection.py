"""One client connection: bytes to protocol events to session calls, and back.

The codec (``wire``) decides what the bytes mean; the session decides what a
statement does; this module only translates between them. It is an
``asyncio.Protocol``: bytes go straight from the transport into the codec, and
one task per connection decodes and runs what they say, statements included,
so a statement costs no task of its own and no hop through a queue.

Rules:
- A client that disconnects mid-statement is noticed at once (``connection_lost``)
  and its statement cancelled; so is one whose CancelRequest names it.
- Output is buffered and written at Sync, at Flush, at the end of a simple
  Query, and at once on an error; a full transport pauses the writer until it
  drains, and input beyond ``READ_AHEAD`` unread bytes pauses reading.
- After an error in the extended protocol, messages are discarded until Sync.
- A protocol violation by the client ends its connection with 08P01; our own
  bug answers XX000 with a generic message, and the traceback goes to the log.
  Neither disturbs any other connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pglast import ast

from glove_scratchpad import errors

from ..sql.analysis import param_numbers
from ..engine.policy import Policy
from .auth import SCRAM, ScramExchange
from glove_scratchpad.catalog import CodecProtocol, Param
from ..engine.result import Notice, Result
from ..engine.session import ParsedStatement, Session, parse
from glove_scratchpad.wire import (
    NEED_DATA,
    AuthenticationOk,
    AuthenticationSASL,
    AuthenticationSASLContinue,
    AuthenticationSASLFinal,
    BackendKeyData,
    Bind,
    BindComplete,
    CancelRequest,
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
    FunctionCall,
    GSSENCRequest,
    NegotiateProtocolVersion,
    NoData,
    NoticeResponse,
    ParameterDescription,
    ParameterStatus,
    Parse,
    ParseComplete,
    PortalSuspended,
    ProtocolError,
    Query,
    ReadyForQuery,
    RowDescription,
    SASLInitialResponse,
    SASLResponse,
    ServerConnection,
    SSLRequest,
    StartupMessage,
    Sync,
    Terminate,
)

if TYPE_CHECKING:
    from .app import Server

__all__ = ["ClientHandler"]

log = logging.getLogger(__name__)

READ_AHEAD = 1024 * 1024  # unread bytes buffered before reading pauses
FLUSH_AT = 256 * 1024  # bytes of buffered output that trigger a write mid-result
PROTOCOL_MINOR = 0  # we speak 3.0; newer minor versions are negotiated down
TX_STATUS = {"idle": "I", "open": "T", "failed": "E"}
# Start-up parameters a client may set, applied as if by SET (and nothing else).
STARTUP_SETTINGS = ("application_name", "DateStyle", "TimeZone", "IntervalStyle",
                    "extra_float_digits", "client_min_messages", "bytea_output",
                    "search_path", "statement_timeout")
_SEVERITY_RANK = {"DEBUG": 0, "LOG": 1, "INFO": 2, "NOTICE": 3, "WARNING": 4, "ERROR": 5}


class _Closed(Exception):
    """The client went away, or must be disconnected."""


@dataclass
class _Prepared:
    name: str
    stmt: ParsedStatement | None  # None: the empty query
    param_oids: tuple[int, ...]
    described: tuple[tuple[int, ...], tuple[FieldDescription, ...] | None] | None = None
    n_params: int = -1  # how many values a Bind must supply; -1: not counted yet
    rows: dict[tuple[int, ...], RowDescription] = field(default_factory=dict)  # by formats


@dataclass
class _Portal:
    prepared: _Prepared
    params: list[Param]
    formats: tuple[int, ...]
    result: Result | None = None
    sent: int = 0  # rows already sent, for Execute with max_rows
    done: bool = False


@dataclass
class _Pending:
    """Messages up to Sync: one client request, the scope of ``stable`` results."""

    request: Any = None
    notices: list[Notice] = field(default_factory=list)


class ClientHandler(CodecProtocol):
    """Serves one client connection until it ends."""

    read_ahead = READ_AHEAD

    def __init__(self, server: Server) -> None:
        super().__init__(ServerConnection())
        self.server = server
        self.task: asyncio.Task[None] | None = None
        self.out: list[bytes] = []
        self.out_size = 0
        self.process_id = server.next_process_id()
        self.secret = secrets.token_bytes(4)
        self.session: Session | None = None
        self.prepared: dict[str, _Prepared] = {}
        self.portals: dict[str, _Portal] = {}
        self.running = False  # a statement is running: a cancel would stop it
        self.cancel_requested = False
        self.discarding = False  # after an extended-protocol error, until Sync
        self.min_severity = "NOTICE"
        self.peer: Any = None

    # -- the transport's callbacks -----------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.peer = transport.get_extra_info("peername")
        self.task = asyncio.get_running_loop().create_task(self.server.serve_client(self))

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self.running and self.task is not None:
            self.task.cancel()  # a client that went away cancels what it was running

    # -- output ------------------------------------------------------------------

    def send(self, msg: Any) -> None:
        data = self.conn.send(msg)
        self.out.append(data)
        self.out_size += len(data)

    def send_rows(self, rows: Sequence[Any]) -> None:
        """Relayed rows: their bytes as the sidecar sent them, framed, in one piece.

        DataRow is always allowed in the normal phase, so the state machine has
        nothing to check per row.
        """
        if rows:
            data = b"".join([row.encode() for row in rows])
            self.out.append(data)
            self.out_size += len(data)

    async def flush(self) -> None:
        if self.out:
            self.write(b"".join(self.out))
            self.out.clear()
            self.out_size = 0
        await self.drain()

    def write(self, data: bytes) -> None:
        if self.closed:
            raise _Closed()
        self.transport.write(data)  # type: ignore[union-attr]

    async def drain(self) -> None:
        await super().drain()
        if self.closed:
            raise _Closed()

    async def maybe_flush(self) -> None:
        if self.out_size >= FLUSH_AT:
            await self.flush()

    def send_error(self, err: errors.SqlError) -> None:
        # Any error aborts an open transaction, as in Postgres: also one raised by
        # Parse, Bind or Describe, which never reach Session.run.
        if self.session is not None and self.session.transaction == "open":
            self.session.transaction = "failed"
        self.send(ErrorResponse(err.as_fields()))

    def send_notices(self, notices: Sequence[Notice]) -> None:
        floor = _SEVERITY_RANK.get(self.min_severity.upper(), 3)
        for n in notices:
            if _SEVERITY_RANK.get(n.severity, 3) >= floor:
                self.send(NoticeResponse(n.as_fields()))

    # -- the connection's life ---------------------------------------------------

    async def serve(self) -> None:
        try:
            try:
                async with asyncio.timeout(self.server.config.startup_timeout):
                    ok = await self.startup()
            except TimeoutError:
                log.info("start-up timeout from %s", self.peer)
                return
            if ok:
                await self.main_loop()
        except (_Closed, ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        except ProtocolError as exc:
            with contextlib.suppress(Exception):
                self.send(ErrorResponse({"S": "FATAL", "V": "FATAL", "C": "08P01",
                                         "M": str(exc)}))
                await self.flush()
        except Exception:
            log.exception("internal error serving %s", self.peer)
            with contextlib.suppress(Exception):
                self.send(ErrorResponse({"S": "FATAL", "V": "FATAL", "C": "XX000",
                                         "M": "internal error"}))
                await self.flush()
        finally:
            self.server.forget(self)
            if self.transport is not None:
                self.transport.close()

    async def _read_event(self) -> Any:
        while (event := self.conn.next_event()) is NEED_DATA:
            if not await self.more_data():
                raise _Closed()
        return event

    async def startup(self) -> bool:
        while True:
            msg = await self._read_event()
            if isinstance(msg, SSLRequest):
                tls = self.server.tls_context
                self.write(self.conn.answer_ssl(tls is not None))
                if tls is not None:
                    self.transport = await asyncio.get_running_loop().start_tls(
                        self.transport, self, tls, server_side=True)  # type: ignore[arg-type]
                continue
            if isinstance(msg, GSSENCRequest):
                self.write(self.conn.answer_gssenc(False))
                continue
            if isinstance(msg, CancelRequest):
                self.server.cancel(msg.process_id, msg.secret_key)
                return False
            if isinstance(msg, StartupMessage):
                return await self.accept(msg)

    def fatal(self, err: errors.SqlError) -> None:
        fields = err.as_fields()
        fields["S"] = fields["V"] = "FATAL"
        self.send(ErrorResponse(fields))

    async def accept(self, msg: StartupMessage) -> bool:
        config = self.server.config
        major, minor = msg.protocol_version >> 16, msg.protocol_version & 0xFFFF
        params = dict(msg.parameters)
        if major != 3:
            self.fatal(errors.FeatureNotSupported(
                f"unsupported frontend protocol {major}.{minor}: server supports 3.0"))
            await self.flush()
            return False
        unknown = tuple(k for k in params if k.startswith("_pq_."))
        if minor > PROTOCOL_MINOR or unknown:
            self.send(NegotiateProtocolVersion(PROTOCOL_MINOR, unknown))
        user = params.get("user", "")
        database = params.get("database") or user
        if not user:
            self.fatal(errors.SqlError("no PostgreSQL user name specified in startup packet",
                                       sqlstate="28000"))
            await self.flush()
            return False
        if database != config.database:
            self.fatal(errors.InvalidCatalogName(
                f'database "{database}" does not exist',
                hint=f"This server serves one database: connect to \"{config.database}\" "
                f"(for example: psql -h {config.host} -p {config.port} -d {config.database}).",
            ))
            await self.flush()
            return False
        policy = await self.authenticate(user)
        if policy is None:
            await self.flush()
            return False
        self.send(AuthenticationOk())
        self.session = await self.server.db.open_session(policy)
        self.session.user = user
        applied = await self.apply_startup_settings(params)
        status = self.server.parameter_status(user, applied, self.session.writes)
        for name, value in status.items():
            self.send(ParameterStatus(name, value))
        self.send(BackendKeyData(self.process_id, self.secret))
        self.send(ReadyForQuery("I"))
        await self.flush()
        self.server.register(self)
        return True

    async def authenticate(self, user: str) -> Policy | None:
        """SCRAM-SHA-256 against the configured users, or loopback trust when there are none."""
        config = self.server.config
        assert self.transport is not None
        if config.require_tls and self.transport.get_extra_info("ssl_object") is None:
            self.fatal(errors.SqlError(
                "this server requires TLS", sqlstate="28000",
                hint="Connect with sslmode=require (or verify-full)."))
            return None
        if not config.users:
            if self.server.trusts(self.peer, user):
                return Policy(writes=config.writes)
            self.fatal(errors.SqlError(
                f'no trust for user "{user}" from {self.peer[0] if self.peer else "?"}',
                sqlstate="28000",
                hint="Without configured users, only loopback connections are accepted."))
            return None
        known = config.users.get(user)
        exchange = ScramExchange(user, known.password if known else None)
        failed = errors.SqlError(f'password authentication failed for user "{user}"',
                                 sqlstate="28P01")
        self.send(AuthenticationSASL((SCRAM,)))
        await self.flush()
        first = await self._read_event()
        if not isinstance(first, SASLInitialResponse) or first.mechanism != SCRAM:
            self.fatal(failed)
            return None
        try:
            self.send(AuthenticationSASLContinue(exchange.first(first.data or b"")))
        except Exception:
            self.fatal(failed)
            return None
        await self.flush()
        final = await self._read_event()
        proof = exchange.final(final.data) if isinstance(final, SASLResponse) else None
        if proof is None or known is None:
            self.fatal(failed)
            return None
        self.send(AuthenticationSASLFinal(proof))
        return Policy.of(known)

    async def apply_startup_settings(self, params: dict[str, str]) -> dict[str, str]:
        """Start-up parameters change nothing that a SET could not."""
        wanted: dict[str, str] = {}
        for name, value in params.items():
            for known in STARTUP_SETTINGS:
                if name.lower() == known.lower():
                    wanted[known] = value
        options = params.get("options", "")
        tokens = options.replace("--", "-c ").split()
        for i, tok in enumerate(tokens):
            if tok == "-c" and i + 1 < len(tokens) and "=" in tokens[i + 1]:
                name, _, value = tokens[i + 1].partition("=")
                for known in STARTUP_SETTINGS:
                    if name.lower() == known.lower():
                        wanted[known] = value
        applied = {}
        assert self.session is not None
        for name, value in wanted.items():
            sql = f"SET {name} TO '" + value.replace("'", "''") + "'"
            try:
                result = await self.session.execute(sql)
            except errors.SqlError as exc:
                self.send(NoticeResponse({"S": "WARNING", "V": "WARNING", "C": exc.sqlstate,
                                          "M": f"start-up parameter {name} ignored: "
                                               f"{exc.message}"}))
                continue
            applied.update(result.parameters)
            if name == "client_min_messages":
                self.min_severity = value
        return applied

    # -- the normal phase --------------------------------------------------------

    async def main_loop(self) -> None:
        pending = _Pending()
        while True:
            msg = await self._read_event()
            if isinstance(msg, Terminate):
                return
            if self.discarding and not isinstance(msg, Sync):
                continue  # after an extended-protocol error, until Sync
            if isinstance(msg, Query):
                await self.simple_query(msg.sql)
            elif isinstance(msg, Sync):
                self.discarding = False
                pending = _Pending()
                if self.tx_status() == "I":
                    self.portals.clear()  # portals end with their transaction
                self.send(ReadyForQuery(self.tx_status()))
                await self.flush()
            elif isinstance(msg, Flush):
                await self.flush()
            elif isinstance(msg, CopyData | CopyDone | CopyFail):
                continue  # only reachable after a refused COPY: Postgres ignores them
            else:
                await self.extended(msg, pending)

    def tx_status(self) -> str:
        return TX_STATUS[self.session.transaction] if self.session else "I"

    async def run(self, stmt: ParsedStatement, params: list[Param], request: Any,
                  formats: Sequence[int]) -> Result:
        """Run one statement in the connection's task; a cancel stops it there."""
        assert self.session is not None and self.task is not None
        self.cancel_requested = False
        self.running = True
        try:
            return await self.session.run(stmt, params, request, formats)
        except asyncio.CancelledError:
            # Ours alone (not also a shutdown's, or a client gone): the connection goes on.
            if self.cancel_requested and not self.closed and self.task.uncancel() == 0:
                if self.session.transaction == "open":
                    self.session.transaction = "failed"
                raise errors.QueryCanceled("canceling statement due to user request") from None
            raise
        finally:
            self.running = False

    def cancel(self) -> None:
        if self.running and not self.cancel_requested and self.task is not None:
            self.cancel_requested = True
            self.task.cancel()

    def forget_state(self, stmt: ParsedStatement) -> None:
        """DISCARD, DEALLOCATE and CLOSE also drop the wire's statements and portals."""
        node = stmt.node
        if isinstance(node, ast.DiscardStmt):
            self.prepared.clear()
            self.portals.clear()
        elif isinstance(node, ast.DeallocateStmt):
            if node.isall or not node.name:
                self.prepared.clear()
            else:
                self.prepared.pop(node.name, None)
        elif isinstance(node, ast.ClosePortalStmt):
            if node.portalname:
                self.portals.pop(node.portalname, None)
            else:
                self.portals.clear()

    def send_result(self, result: Result, *, describe: bool) -> None:
        self.send_notices(result.notices)
        if describe and result.fields:
            self.send(RowDescription(tuple(result.fields)))
        self.send_rows(result.data_rows)
        for name, value in result.parameters.items():
            self.send(ParameterStatus(name, value))
            if name == "client_min_messages":
                self.min_severity = value
        if result.command_tag:
            self.send(CommandComplete(result.command_tag))

    async def simple_query(self, sql: str) -> None:
        assert self.session is not None
        try:
            statements = parse(sql)
        except errors.SqlError as exc:
            statements = None
            self.send_error(exc)
        if statements is not None and not statements:
            self.send(EmptyQueryResponse())
        request = self.session.new_request()
        for stmt in statements or ():
            try:
                result = await self.run(stmt, [], request, ())
            except errors.SqlError as exc:
                if exc.position is not None:
                    exc.position += stmt.offset  # psql points into the whole query string
                self.send_error(exc)
                break
            except Exception:
                log.exception("internal error running %r", stmt.sql[:200])
                self.send_error(errors.InternalError("internal error"))
                break
            self.forget_state(stmt)
            self.send_result(result, describe=True)
            if self.session.settings.get("client_min_messages"):
                self.min_severity = self.session.settings["client_min_messages"]
            await self.maybe_flush()
        # A simple Query replaces the unnamed statement and portal, and portals end with
        # their transaction (also one ended by a COMMIT or ROLLBACK sent here).
        self.prepared.pop("", None)
        self.portals.pop("", None)
        if self.tx_status() == "I":
            self.portals.clear()
        self.send(ReadyForQuery(self.tx_status()))
        await self.flush()

    async def extended(self, msg: Any, pending: _Pending) -> None:
        try:
            await self._extended(msg, pending)
        except errors.SqlError as exc:
            self.send_error(exc)
            self.discarding = True
            await self.flush()
        except Exception:
            log.exception("internal error in %s", type(msg).__name__)
            self.send_error(errors.InternalError("internal error"))
            self.discarding = True
            await self.flush()

    async def _extended(self, msg: Any, pending: _Pending) -> None:
        assert self.session is not None
        if isinstance(msg, Parse):
            if msg.name and msg.name in self.prepared:
                raise errors.SqlError(f'prepared statement "{msg.name}" already exists',
                                      sqlstate="42P05")
            statements = parse(msg.query)
            if len(statements) > 1:
                raise errors.SyntaxError(
                    "cannot insert multiple commands into a prepared statement",
                    hint="Prepare one statement at a time.")
            stmt = statements[0] if statements else None
            self.prepared[msg.name] = _Prepared(msg.name, stmt, tuple(msg.param_type_oids))
            self.send(ParseComplete())
        elif isinstance(msg, Bind):
            prepared = self._prepared(msg.statement)
            if msg.portal and msg.portal in self.portals:
                raise errors.SqlError(f'portal "{msg.portal}" already exists', sqlstate="42P03")
            oids = prepared.param_oids
            if prepared.n_params < 0:
                stmt_node = prepared.stmt.node if prepared.stmt else None
                prepared.n_params = max([len(oids), *param_numbers(stmt_node)])
            needed = prepared.n_params
            if len(msg.params) != needed:  # refused at Bind, as Postgres does, not at Execute
                raise errors.ProtocolViolation(
                    f"bind message supplies {len(msg.params)} parameters, but prepared "
                    f'statement "{msg.statement}" requires {needed}')
            # Where the client left a type open, the type Postgres inferred at Describe
            # (if it was asked) tells what a binary value is.
            inferred = prepared.described[0] if prepared.described else ()
            params = [
                Param(value, msg.param_format(i),
                      (oids[i] if i < len(oids) else 0)
                      or (inferred[i] if i < len(inferred) else 0))
                for i, value in enumerate(msg.params)
            ]
            self.portals[msg.portal] = _Portal(prepared, params, tuple(msg.result_formats))
            self.send(BindComplete())
        elif isinstance(msg, Describe):
            if msg.kind == "S":
                prepared = self._prepared(msg.name)
                param_oids, fields = await self._describe(prepared)
                self.send(ParameterDescription(param_oids))
                self.send(RowDescription(fields) if fields else NoData())
            else:
                portal = self._portal(msg.name)
                prepared = portal.prepared
                fields = (await self._describe(prepared))[1]
                if fields:
                    described = prepared.rows.get(portal.formats)
                    if described is None:
                        described = prepared.rows[portal.formats] = RowDescription(tuple(
                            _with_format(f, _fmt(portal.formats, i))
                            for i, f in enumerate(fields)))
                    self.send(described)
                else:
                    self.send(NoData())
        elif isinstance(msg, Execute):
            await self._execute(self._portal(msg.portal), msg.max_rows, pending)
        elif isinstance(msg, Close):
            if msg.kind == "S":
                self.prepared.pop(msg.name, None)
            else:
                self.portals.pop(msg.name, None)
            self.send(CloseComplete())
        elif isinstance(msg, FunctionCall):
            raise errors.FeatureNotSupported("the function call protocol is not supported",
                                             hint="Call the function in a SELECT.")
        else:
            raise errors.ProtocolViolation(f"unexpected message {type(msg).__name__}")

    def _prepared(self, name: str) -> _Prepared:
        prepared = self.prepared.get(name)
        if prepared is None:
            raise errors.SqlError(f'prepared statement "{name}" does not exist',
                                  sqlstate="26000")
        return prepared

    def _portal(self, name: str) -> _Portal:
        portal = self.portals.get(name)
        if portal is None:
            raise errors.SqlError(f'portal "{name}" does not exist', sqlstate="34000")
        return portal

    async def _describe(self, prepared: _Prepared
                        ) -> tuple[tuple[int, ...], tuple[FieldDescription, ...] | None]:
        if prepared.described is None:
            if prepared.stmt is None:
                prepared.described = ((), None)
            else:
                assert self.session is not None
                prepared.described = await self.session.describe(prepared.stmt,
                                                                 prepared.param_oids)
        return prepared.described

    async def _execute(self, portal: _Portal, max_rows: int, pending: _Pending) -> None:
        stmt = portal.prepared.stmt
        if stmt is None:
            self.send(EmptyQueryResponse())
            return
        if portal.done:
            tag = portal.result.command_tag if portal.result else "SELECT 0"
            self.send(CommandComplete(_with_count(tag or "SELECT 0", 0)))
            return
        if portal.result is None:
            assert self.session is not None
            if pending.request is None:
                pending.request = self.session.new_request()
            portal.result = await self.run(stmt, portal.params, pending.request, portal.formats)
            self.forget_state(stmt)
            self.send_notices(portal.result.notices)
            for name, value in portal.result.parameters.items():
                self.send(ParameterStatus(name, value))
        result = portal.result
        rows = result.data_rows
        start = portal.sent
        end = len(rows) if max_rows <= 0 else min(len(rows), start + max_rows)
        self.send_rows(rows[start:end])
        await self.maybe_flush()
        portal.sent = end
        # As Postgres: a fetch that filled max_rows suspends (it does not look ahead), and
        # a portal fetched in parts counts, in its tag, the rows of the last Execute only.
        chunked = bool(result.fields) and (max_rows > 0 or start > 0)
        if chunked and max_rows > 0 and end - start == max_rows:
            self.send(PortalSuspended())
            return
        portal.done = True
        if result.command_tag:
            tag = result.command_tag
            self.send(CommandComplete(_with_count(tag, end - start) if chunked else tag))


def _with_count(tag: str, count: int) -> str:
    """A command tag with its row count replaced ("INSERT 0 5" -> "INSERT 0 2")."""
    head, _, last = tag.rpartition(" ")
    return f"{head} {count}" if head and last.isdigit() else tag


def _fmt(formats: tuple[int, ...], i: int) -> int:
    if not formats:
        return 0
    return formats[0] if len(formats) == 1 else formats[i]


def _with_format(f: FieldDescription, fmt: int) -> FieldDescription:
    return FieldDescription(f.name, f.table_oid, f.column_attr, f.type_oid, f.type_size,
                            f.type_modifier, fmt)
