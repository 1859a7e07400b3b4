"""Session: one client's session: who it is, its transaction and its settings.

A session is made per client connection (and per MCP session, and for the Python
API); its statements all run through its ``Runner`` (``runner.py``), whichever way
they come: the wire's ``run``, ``describe``, ``fast_read`` and ``answer_read``, the
Python API's and the agent tool's ``execute`` and ``explain``. None reaches further
in.

Rules:
- It holds the session's state alone: its identity (user, id, the client's
  connection), its transaction with its staged writes and its overlay, its settings,
  its temporary tables and cursors. Every statement gets a ``Statement`` of it
  (``statement``), which holds references to that state, never copies.
- The scratchpad views read the session's rows (``catalog.ViewSource``) here.
"""

from __future__ import annotations

import itertools
import secrets
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from typing import Any

from glove_scratchpad import errors
from glove_scratchpad.catalog import resource_row
from glove_scratchpad.resources import Resource
from glove_scratchpad.stream import RowSink
from glove_scratchpad.wire import FieldDescription, Param

from ..sql.parse import ParsedStatement, parse
from . import activity
from . import temp as temp_tables
from .answering import Done
from .context import Request
from .cursors import Cursors
from .overlay import Overlay
from .policy import Policy
from .result import Result, StagedWrite
from .runner import Runner
from .services import Services
from .session_settings import SessionSettings
from .staged import pending, staged_view_rows
from .statement import Endpoint, Statement, lookup
from .system_calls import approval_rows
from .transaction import Transaction
from .view import View

__all__ = ["ParsedStatement", "Session", "parse"]

# Session ids are random: unique across processes and restarts, which share the audit.
_SESSION_ID_BITS = 63


class Session:
    """One client's session: its transaction, staged writes and settings."""

    def __init__(self, services: Services, view: View, policy: Policy) -> None:
        self.services = services
        self.view = view
        self.policy = policy
        self.writes = policy.writes
        self.user = ""
        self.endpoint = Endpoint()  # the client's connection (the wire sets it)
        self.copy: Any = None  # its side of a COPY (``catalog.CopyChannel``; the wire sets it)
        self.sink: RowSink | None = None  # its socket, where rows may go as they come (too)
        self.id = secrets.randbits(_SESSION_ID_BITS) or 1
        # SET and SET LOCAL's values; the transaction marks them at its boundaries.
        self.session_settings = SessionSettings()
        self.tx = Transaction(self.session_settings)
        self.temp = temp_tables.TempTables()  # its temporary tables, on a pinned connection
        self.cursors = Cursors()  # DECLARE's, by name (pg_cursors reads ``cursor_rows``)
        # Fired writes, for a while, and the transaction's staged ones.
        self.overlay = Overlay(self.tx, services.limits.read_your_writes_s)
        self.write_ids: Iterator[int] = itertools.count(1)
        # What scratchpad.activity and pg_cancel_backend see (the wire sets pid and
        # canceller: its BackendKeyData's process id, and its own cancel).
        self.pid = 0
        self.canceller: Callable[[], None] | None = None
        self.backend_start = time.time()
        self.runner = Runner(self)  # every statement's way: its state, its activity
        services.sessions.add(self)

    # -- public API -------------------------------------------------------------

    @property
    def tx_status(self) -> str:
        """The transaction status as ReadyForQuery reports it: I (idle), T (open), E (failed)."""
        return self.tx.state._value_  # not ``value``: a property, a Python call per read

    @property
    def committing(self) -> bool:
        """Whether the statement running is a COMMIT (or END), which a cancel does not
        stop, as in Postgres. Asked only when a cancel comes: its text is parsed again
        then (a cached parse), unless too long to be parsed on the event loop."""
        from ..sql.parse import OFF_LOOP_BYTES

        runner = self.runner
        if runner.current is None or len(runner.query) > OFF_LOOP_BYTES:
            return False
        return any(s.commits for s in parse(runner.query))

    @property
    def settings(self) -> dict[str, str]:
        """The settings in effect (SET, SET LOCAL), sent with each statement: read only."""
        return self.session_settings.now

    @property
    def staged(self) -> list[StagedWrite]:
        return self.tx.staged

    def fail(self) -> None:
        """An error outside a statement (Parse, Bind, a cancel) aborts an open transaction."""
        self.tx.fail()

    def lookup(self, schema: str | None, name: str) -> Resource | None:
        """The resource a (schema, name) means to this session; or None."""
        return lookup(self.services, self.view, schema, name)

    def statement(self, request: Request | None = None, formats: Sequence[int] = ()
                  ) -> Statement:
        """The scope of one statement of this session (``Runner.statement``)."""
        return self.runner.statement(request, formats)

    def preview(self) -> list[StagedWrite]:
        """The writes COMMIT will send, in the order it fires them: each call with its
        rows, changes and bindings, a change to a row the transaction staged folded into
        the INSERT that stages it (``staged.pending``)."""
        return pending(self.tx.staged)

    async def execute(self, sql: str, params: Sequence[Any] | None = None, *,
                      result_formats: Sequence[int] = (), decode: bool = True) -> Result:
        """Run one statement, or a BEGIN … COMMIT/ROLLBACK script.

        ``params`` are Python values, or ``Param``s as a client sent them.
        ``result_formats`` are the format codes of the result columns (the Bind
        rule: none, one for all, or one each). ``decode`` is kept for callers
        that passed it: rows are decoded on first use of ``Result.rows``.
        """
        return await self.runner.execute(sql, params, result_formats)

    def new_request(self, *, simple: bool = False) -> Request:
        """The scope of one client request (a Query message, ``simple``, or messages up to
        Sync)."""
        return Request(copy=self.copy, simple=simple)

    def run(self, stmt: ParsedStatement, params: Sequence[Param], request: Request,
            formats: Sequence[int] = ()) -> Coroutine[Any, Any, Result]:
        """Run one parsed statement for the wire: rows stay as Postgres encoded them."""
        return self.runner.run(stmt, list(params), request, tuple(formats))

    def fast_read(self, stmt: ParsedStatement, params: list[Param], formats: tuple[int, ...]
                  ) -> Coroutine[Any, Any, Result] | None:
        """A compiled read's run outside a transaction block, ready to await; None: it
        takes ``run`` (``Runner.fast_read``)."""
        return self.runner.fast_read(stmt, params, formats)

    def answer_read(self, stmt: ParsedStatement, params: list[Param], formats: tuple[int, ...],
                    done: Done) -> Callable[[errors.SqlError | None], None] | None:
        """A compiled read's run started in the transports' callbacks, and what stops it;
        None: it takes ``fast_read`` or ``run`` (``Runner.answer_read``)."""
        return self.runner.answer_read(stmt, params, formats, done)

    async def describe(self, stmt: ParsedStatement, param_oids: Sequence[int] = ()
                       ) -> tuple[tuple[int, ...], tuple[Any, ...] | None]:
        """Parameter types and result columns of a statement, calling nothing (its gate
        first: ``Runner.describe``)."""
        return await self.runner.describe(stmt, param_oids)

    async def explain(self, sql: str, params: Sequence[Any] | None = None) -> Result:
        """EXPLAIN a statement: the plan, calling no resolver."""
        return await self.runner.explain(sql, params)

    # The scratchpad views read these (catalog.ViewSource).
    def staged_rows(self) -> list[dict[str, Any]]:
        return staged_view_rows(self.tx.staged, self.services.approvals.reason(self.tx))

    async def approval_rows(self) -> list[dict[str, Any]]:
        return await approval_rows(self.statement())

    def resource_rows(self) -> list[dict[str, Any]]:
        """One row per table this session sees: all it needs to call it (catalog/_views.py)."""
        visible = [r for r in self.services.resources.values() if r.name in self.view.visible]
        return [resource_row(r, visible) for r in visible]

    async def call_rows(self) -> list[dict[str, Any]]:
        return await self.services.audit.read(None if self.policy.admin else self.user)

    def cache_rows(self) -> list[dict[str, Any]]:
        return self.services.kept.rows(self.view.database, self.user, self.policy.admin)

    def cursor_rows(self) -> list[dict[str, Any]]:
        return self.cursors.rows()

    def describe_cursor(self, name: str) -> tuple[FieldDescription, ...]:
        """The columns of a cursor DECLARE made (a Describe of its portal); 34000 if none."""
        return self.cursors.find(name).fields

    def activity_rows(self) -> list[dict[str, Any]]:
        return activity.visible(self.services.sessions, self.user, self.policy.admin)

    def activity_row(self) -> dict[str, Any]:
        runner = self.runner
        return activity.activity_row(self.pid, self.user, self.tx.state, runner.current,
                                     runner.query, runner.query_start, self.backend_start)

    def close(self) -> None:
        """The client is gone: the session leaves scratchpad.activity."""
        self.services.sessions.discard(self)
        self.temp.close()
        self.cursors.end()

    def cancel_running(self) -> bool:
        """Cancel the statement running, as a CancelRequest would: whether a cancel could
        be sent (a session of the Python API has no connection to cancel)."""
        if self.canceller is None:
            return False
        self.canceller()
        return True

    async def journal_rows(self, txids: list[int]) -> list[dict[str, Any]]:
        return await self.services.journal.read(None if self.policy.admin else self.user,
                                                txids)
