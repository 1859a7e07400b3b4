"""Session: one client's session, and the path of one statement through it.

parse (cached) -> gate -> check on the sidecar -> plan -> resolve -> run on the
sidecar -> reply; a read compiled for the fast path (``fast.py``), its calls all
cached, goes from the gate straight to the run, and one with a call to make goes
from the gate to the check (``fast_read``). The wire, the Python API and the
agent tool all call ``execute``/``run``/``describe``/``explain``/``preview``; none
reaches further in.

Rules:
- The gate (``sql.gate``) is the one judge of what may run: every way in
  (execute, run, describe, explain) passes it first, and this module keeps
  no list of its own. A kind the gate lets through reaches a branch here.
- A statement is checked by the sidecar against the shell tables before any
  tool is called, so the first error a client sees is the true one.
- Inside BEGIN, writes are staged and nothing fires; COMMIT fires them in
  order; ROLLBACK discards them. An error inside a transaction aborts it.
- The sidecar never holds a transaction across statements: each borrows a
  pooled connection, and anything a statement writes there is rolled back.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from pglast import ast, enums

from glove_scratchpad import errors, metrics, traces
from glove_scratchpad.catalog import (
    CURRENT_VIEW_SOURCE,
    encode_param,
    resource_row,
)
from glove_scratchpad.resources import Resource
from glove_scratchpad.stream import RowSink
from glove_scratchpad.wire import FieldDescription, Param

from ..sql import temp_tables as temp_gate
from ..sql.allowlist import backend_call, system_call
from ..sql.analysis import Plan, deparse
from ..sql.nodes import SETTING_FUNCTIONS, calls_any
from ..sql.parse import ParsedStatement, command_kind, is_script, parse
from ..sql.statement_kinds import statement_name
from . import activity, chains, fast, portal_parts, settings, sidecar, suggest, writes
from . import copy as copying
from . import fns as fn_calls
from . import restage as restaging
from . import temp as temp_tables
from .answering import Answer, Done
from .cache import system_call_name
from .context import Request, StatementContext, WorkedOut
from .cursors import Cursors
from .explain import explain_statement
from .explain_analyze import analyzing, explain_analyze
from .messages import quoted_value
from .overlay import Overlay
from .policy import Policy
from .prepared import Compiled, Prepared
from .result import Result, StagedWrite
from .result_limits import bounded, shown
from .services import Services
from .session_settings import SessionSettings
from .staged import pending, staged_view_rows
from .statement import Endpoint, Statement, known, lookup
from .statement_log import log_end, logs_ends
from .system_calls import approval_rows, run_system_call
from .timeouts import late_noticed, timed_out
from .transaction import Transaction, TxState
from .transaction_statements import transaction
from .view import View

__all__ = ["ParsedStatement", "Session", "parse"]

# Session ids are random: unique across processes and restarts, which share the audit.
_SESSION_ID_BITS = 63
_TEXT_OIDS = frozenset({19, 25, 1042, 1043})  # name, text, bpchar, varchar
_POOL_RESETS = (ast.DiscardStmt, ast.DeallocateStmt, ast.UnlistenStmt)
_CURSOR_STATEMENTS = (ast.DeclareCursorStmt, ast.FetchStmt, ast.ClosePortalStmt)


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
        # The last read the callbacks found not cached (``answer_read``): its text and
        # parameters, and the calls worked out for them, for the task's run of it.
        self._declined: tuple[str, list[Param]] | None = None
        self._worked_out: WorkedOut | None = None
        self.tx = Transaction(self.session_settings)
        self.temp = temp_tables.TempTables()  # its temporary tables, on a pinned connection
        self.cursors = Cursors()  # DECLARE's, by name (pg_cursors reads ``cursor_rows``)
        # Fired writes, for a while, and the transaction's staged ones.
        self.overlay = Overlay(self.tx, services.limits.read_your_writes_s)
        self._write_ids = itertools.count(1)
        self._numbers = itertools.count(1)  # its statements', in the log
        # What scratchpad.activity and pg_cancel_backend see (the wire sets pid and
        # canceller: its BackendKeyData's process id, and its own cancel).
        self.pid = 0
        self.canceller: Callable[[], None] | None = None
        self.backend_start = time.time()
        self.current: Statement | None = None  # the statement running, if one is
        self.query = ""  # the one running, else the last
        self.query_start: float | None = None
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

        if self.current is None or len(self.query) > OFF_LOOP_BYTES:
            return False
        return any(s.commits for s in parse(self.query))

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
        """The scope of one statement of this session (``statement.py``)."""
        return Statement(self.services, self.view, self.policy, self.user, self.id, self.tx,
                         self.session_settings, self.overlay, self._write_ids, self.endpoint,
                         request if request is not None else Request(), tuple(formats),
                         pid=self.pid, sink=self.sink, temp=self.temp)

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
        statements = parse(sql)
        if not statements:
            return Result(command_tag="")
        if len(statements) > 1 and not is_script(statements):
            raise errors.FeatureNotSupported(
                "several statements in one call are allowed only as a transaction script",
                hint="Send one statement per call, or wrap them in BEGIN; …; COMMIT;",
            )
        request = Request(simple=True)
        encoded = [encode_param(p) for p in params or ()]
        results = [await self._statement(stmt, encoded, request, tuple(result_formats))
                   for stmt in statements]
        last = results[-1]
        if len(results) > 1:
            last.statements = results
        return last

    def new_request(self, *, simple: bool = False) -> Request:
        """The scope of one client request (a Query message, ``simple``, or messages up to
        Sync)."""
        return Request(copy=self.copy, simple=simple)

    async def run(self, stmt: ParsedStatement, params: Sequence[Param], request: Request,
                  formats: Sequence[int] = ()) -> Result:
        """Run one parsed statement for the wire: rows stay as Postgres encoded them."""
        return await self._statement(stmt, list(params), request, tuple(formats))

    async def describe(self, stmt: ParsedStatement, param_oids: Sequence[int] = ()
                       ) -> tuple[tuple[int, ...], tuple[Any, ...] | None]:
        """Parameter types and result columns of a statement, calling nothing.

        The statement passes the gate first: nothing reaches the sidecar unjudged."""
        try:
            self._gate(stmt, None)
        except errors.UndefinedTable as exc:
            await suggest.hint_search(self.statement(), exc)
            raise
        node = stmt.node
        if isinstance(node, ast.VariableShowStmt):
            return (), (FieldDescription(node.name or "", type_oid=25),)
        if isinstance(node, _CURSOR_STATEMENTS):  # FETCH: the cursor's columns
            return tuple(param_oids), self.cursors.fields(node)
        backend = backend_call(node)
        if backend is not None:
            return activity.described(backend, node.targetList[0], tuple(param_oids))
        call = system_call(node, self.services.schemas.system)
        if call is not None:  # scratchpad.restage(txid[, force]), scratchpad.refresh(name)
            name = system_call_name(call)
            given = tuple(param_oids) or restaging.param_types(call, name)
            return given, (FieldDescription(name, type_oid=25),)
        query = node.query if isinstance(node, ast.ExplainStmt) else node
        if not isinstance(query, ast.SelectStmt | ast.InsertStmt | ast.UpdateStmt
                          | ast.DeleteStmt):
            return tuple(param_oids), None
        sql = stmt.sql if query is node else deparse(query)
        params, fields = await sidecar.check(
            self.statement(), sql, [Param(None, 0, oid) for oid in param_oids])
        if query is not node:
            return params, (FieldDescription("QUERY PLAN", type_oid=25),)
        if not isinstance(node, ast.SelectStmt) and not node.returningClause:
            fields = None
        return params, fields

    async def explain(self, sql: str, params: Sequence[Any] | None = None) -> Result:
        """EXPLAIN a statement: the plan, calling no resolver."""
        statements = parse(sql)
        if len(statements) != 1:
            raise errors.FeatureNotSupported(
                "EXPLAIN takes one statement", hint="Explain the statements one at a time.")
        stmt = statements[0]
        node = stmt.node.query if isinstance(stmt.node, ast.ExplainStmt) else stmt.node
        encoded = [encode_param(p) for p in params or ()]
        self._gate(stmt, encoded)
        return await explain_statement(self.statement(), stmt.sql, node, encoded)

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
        return activity.activity_row(self.pid, self.user, self.tx.state, self.current,
                                     self.query, self.query_start, self.backend_start)

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

    # -- one statement ----------------------------------------------------------

    def _statement(self, stmt: ParsedStatement, params: list[Any], request: Request,
                   formats: tuple[int, ...]) -> Coroutine[Any, Any, Result]:
        """One statement's run, in a span of its own when tracing is on (no coroutine of
        its own when it is off)."""
        if not traces.enabled():
            return self._measured(stmt, params, request, formats)
        return self._traced(stmt, params, request, formats)

    async def _traced(self, stmt: ParsedStatement, params: list[Any], request: Request,
                      formats: tuple[int, ...]) -> Result:
        with traces.statement(command_kind(stmt.node), stmt.sql, self.user, self.id,
                              traces.traceparent(self.settings)):
            return await self._measured(stmt, params, request, formats)

    async def _measured(self, stmt: ParsedStatement, params: list[Param],
                        request: Request, formats: tuple[int, ...]) -> Result:
        """One statement, counted (metrics), logged (its end) and run."""
        token = CURRENT_VIEW_SOURCE.set(self)
        started, outcome = time.perf_counter(), errors.CLASS_SUCCESSFUL_COMPLETION
        was_open = self.tx.state is not TxState.IDLE
        st: Statement | None = None
        try:
            node = stmt.node
            st = self.current = self.statement(request, formats)
            st.sql, st.prepared = stmt.sql, self.view.prepared(stmt.sql)
            self.query, self.query_start = stmt.sql, time.time()
            if isinstance(node, ast.TransactionStmt):
                self._gate(stmt, params, st.prepared)
                return shown(await transaction(st, node, self.cursors), self.settings)
            self.tx.check_not_failed()
            try:
                self._gate(stmt, params, st.prepared)
                work = self._fast(st, params) or self._dispatch(st, stmt, params)
                return await self._timed(st, work)
            except errors.SqlError as exc:
                self.tx.fail()
                await suggest.hint_search(st, exc)
                raise
        except errors.SqlError as exc:
            outcome = errors.sqlstate_class(exc.sqlstate)
            raise
        except asyncio.CancelledError:
            # canceled: by the client, a shutdown or a client gone
            outcome = errors.CLASS_OPERATOR_INTERVENTION
            raise
        finally:
            CURRENT_VIEW_SOURCE.reset(token)
            self._ended(stmt, st, outcome, started, was_open)

    def fast_read(self, stmt: ParsedStatement, params: list[Param], formats: tuple[int, ...]
                  ) -> Coroutine[Any, Any, Result] | None:
        """The run of a compiled read (``fast.py``) outside a transaction block, ready to
        await: from its calls' caches when they hold it, else the full path's read of its
        plan (``_planned``), without ``run``'s routing; None when it must take ``run``,
        and then nothing was counted. What ``run`` would do for it, this does: the gate's
        verdict (remembered), the call budget and the calls' touch, the statement timeout,
        the row limit, ``scratchpad.activity``, the metrics and the slow-statement log. A
        statement traced, or logged at its end, takes ``run``."""
        chosen = self._fast_statement(stmt, params, formats)
        if chosen is None:
            return None
        st, compiled = chosen
        try:
            work = self._fast(st, params)
        except errors.SqlError:
            return None  # over the call budget: ``run`` refuses it where Postgres would
        return self._fast_read(stmt, st, work or self._planned(st, stmt, compiled.plan, params))

    def answer_read(self, stmt: ParsedStatement, params: list[Param], formats: tuple[int, ...],
                    done: Done) -> Callable[[errors.SqlError | None], None] | None:
        """``fast_read``'s run from the calls' caches in the transports' callbacks
        (``answering.py``), started now on an idle sidecar connection; what it returns stops
        it (a cancel; None: the client is gone). None, with nothing counted: ``fast_read``
        (a call to make, which it hands over, or no idle connection), or ``run``."""
        chosen = (None if self._declined == (stmt.sql, params)
                  else self._fast_statement(stmt, params, formats))
        if chosen is None:
            return None
        st, compiled = chosen
        pool, owner = self.view.pool, st.user
        conn = pool.take_now(owner)
        if conn is None:
            return None
        worked: WorkedOut = {}
        try:
            found = fast.reads(st, compiled, params, worked)
        except errors.SqlError:
            found = None  # over the call budget: ``run`` refuses it where Postgres would
        if found is None:
            pool.give_back(conn, owner)
            self._declined, self._worked_out = (stmt.sql, params), worked
            return None
        started = time.perf_counter()
        self.current, self.query, self.query_start = st, stmt.sql, time.time()

        def end(outcome: str) -> None:  # outside a transaction block: nothing to abort
            self._ended(stmt, st, outcome, started, False)

        answer = Answer(st.timeout, done, lambda r: self._shaped(r, st), end)
        try:
            answer.abandon = sidecar.start(st, conn, compiled.plan, found[1], params, found[0],
                                           answer.replied)
        except Exception:  # our bug: nothing was sent
            pool.give_back(conn, owner)
            answer.stop(None)
            raise
        return answer.stop

    def _fast_statement(self, stmt: ParsedStatement, params: list[Param],
                        formats: tuple[int, ...]) -> tuple[Statement, Compiled] | None:
        """The statement of a fast read and its compiled plan, or None when it must take
        ``run``: a transaction block, traces or end-logging on, a text not gated or not
        compiled."""
        if (self.tx.state is not TxState.IDLE or traces.enabled() or logs_ends()
                or self.temp.pinned):
            return None
        prepared = self.view.prepared(stmt.sql)
        if not prepared.gated or prepared.compiled is None:
            return None
        st = self.statement(Request(), formats)
        st.sql, st.prepared = stmt.sql, prepared
        return st, prepared.compiled

    async def _fast_read(self, stmt: ParsedStatement, st: Statement,
                         work: Coroutine[Any, Any, Result]) -> Result:
        started, outcome = time.perf_counter(), errors.CLASS_SUCCESSFUL_COMPLETION
        self.current, self.query, self.query_start = st, stmt.sql, time.time()
        try:
            return await self._timed(st, work)
        except errors.SqlError as exc:
            self.tx.fail()
            outcome = errors.sqlstate_class(exc.sqlstate)
            raise
        except asyncio.CancelledError:
            outcome = errors.CLASS_OPERATOR_INTERVENTION
            raise
        finally:
            self._ended(stmt, st, outcome, started, False)

    async def _timed(self, st: Statement, work: Coroutine[Any, Any, Result]) -> Result:
        """A statement's work under its timeout; the result cut at the row limit, with
        the notices ``client_min_messages`` lets through."""
        try:
            async with asyncio.timeout(st.timeout) as limit:
                result = await work
        except TimeoutError:
            raise timed_out() from None
        return self._shaped(late_noticed(result, st.late_cancel, limit.expired()), st)

    def _shaped(self, result: Result, st: Statement) -> Result:
        """A result cut at the row limit, with the notices the client asked for; its rows
        counted for the statement's end line."""
        self.services.approvals.read(self.tx, result.touched)  # an untrusted read taints
        out = shown(bounded(result, self.services.limits, self.policy.row_limit),
                    self.settings)
        count = out.command_tag.rsplit(" ", 1)[-1]
        st.rows = int(count) if count.isdigit() else len(out.data_rows)
        return out

    def _ended(self, stmt: ParsedStatement, st: Statement | None, outcome: str,
               started: float, was_open: bool) -> None:
        """A statement's end: no longer current, and counted and logged as it ended."""
        self.current = None
        elapsed = time.perf_counter() - started
        slow = self.services.limits.slow_statement_s
        logged = logs_ends() or (slow is not None and elapsed >= slow)
        kind = command_kind(stmt.node) if logged or metrics.enabled() else ""
        if logged:
            log_end(f"{self.id}:{next(self._numbers)}", self.user, self.id, stmt.sql, kind, st,
                    outcome, elapsed, slow, self.services.limits.log_statement_text)
        if metrics.enabled():
            metrics.statement(kind, outcome, elapsed)
            now_open = self.tx.state is not TxState.IDLE
            if now_open is not was_open:
                metrics.transaction(1 if now_open else -1)

    def _fast(self, st: Statement, params: list[Param]) -> Coroutine[Any, Any, Result] | None:
        """The run of a compiled read whose calls are all cached (``fast.py``), or None;
        then ``st.worked_out`` holds the calls worked out for it, for the full path."""
        compiled = st.prepared.compiled if st.prepared is not None else None
        declined, self._declined = self._declined, None
        worked, self._worked_out = self._worked_out, None
        if compiled is None or declined == (st.sql, params) or self.temp.pinned:
            st.worked_out = worked  # the callbacks just found a call not cached: their calls
            return None
        found = fast.reads(st, compiled, params, worked := {})
        if found is None:
            st.worked_out = worked
            return None
        ctx, rows = found
        return sidecar.run(st, compiled.plan, rows, params, ctx, formats=st.formats)

    def _gate(self, stmt: ParsedStatement, params: list[Param] | None,
              prepared: Prepared | None = None) -> None:
        """Layer 1: judge the statement's tree; a statement that passed once is remembered.

        ``params`` None: the values are not known yet (Describe); what depends on them
        is judged again when they are (Execute)."""
        if prepared is None:
            prepared = self.view.prepared(stmt.sql)
        if prepared.gated:
            return
        # A binary value of a text type is its UTF-8 text; any other stays bytes, which the
        # gate treats as unknown, never as NULL.
        values = None if params is None else [
            p.value if p.value is None or (p.format and p.oid not in _TEXT_OIDS)
            else p.value.decode("utf-8", "replace") for p in params]
        temp_gate.check_known(stmt.node, known(self.services, self.view).with_temps(
            self.temp.names), params=values, values_later=params is None)
        if params is None or self.temp.names or temp_tables.is_temp_statement(stmt.node):
            return
        # Parameter values matter to the gate only as setting names of these two.
        if not params or not calls_any(stmt.node, SETTING_FUNCTIONS):
            prepared.gated = True

    async def _dispatch(self, st: Statement, stmt: ParsedStatement, params: list[Any]
                        ) -> Result:
        node = stmt.node
        services = self.services
        backend = backend_call(node)
        if backend is not None:  # SELECT pg_backend_pid(), pg_cancel_backend(pid): alone
            return await activity.answer(st, backend, node.targetList[0], params,
                                         services.sessions)
        call = system_call(node, services.schemas.system)
        if call is not None:  # the gate let it through alone: SELECT scratchpad.restage(…)
            return await run_system_call(st, call, params)
        if temp_tables.is_temp_statement(node):
            return await self._planned(st, stmt, st.plan(stmt), params)
        if isinstance(node, ast.SelectStmt | ast.InsertStmt | ast.UpdateStmt | ast.DeleteStmt):
            chain = chains.split(node, stmt.sql, params)
            if chain is not None:  # writes in its WITH: each a statement of its own
                await self._check(st, stmt, params)
                return await chains.run_parts(st, chain)
            return await self._planned(st, stmt, st.plan(stmt), params)
        if isinstance(node, ast.ExplainStmt) and analyzing(node):
            return await explain_analyze(st, node, params, self._planned)
        if isinstance(node, ast.ExplainStmt):
            return await explain_statement(st, stmt.sql, node.query, params, node)
        if isinstance(node, ast.CopyStmt):
            return await copying.run(st, stmt, params)
        if isinstance(node, ast.VariableSetStmt | ast.VariableShowStmt):
            return await settings.setting(st, node, stmt.sql)
        if isinstance(node, _CURSOR_STATEMENTS):
            return await self.cursors.run(st, stmt, params)
        if isinstance(node, _POOL_RESETS):
            if isinstance(node, ast.DiscardStmt) and node.target == enums.DiscardMode.DISCARD_ALL:
                await self.cursors.close_all(st)  # DISCARD ALL closes them, as CLOSE ALL
            return await settings.pool_reset(st, node)
        # The gate let through a kind with no branch here: our bug, not the client's.
        raise errors.InternalError(
            f"{statement_name(node)} passed the gate but has no branch that runs it",
            hint="Report this to the server's operator.")

    async def _planned(self, st: Statement, stmt: ParsedStatement, plan: Plan,
                       params: list[Param]) -> Result:
        """A SELECT, INSERT, UPDATE or DELETE of its plan: checked by the sidecar, then
        its references called and the statement run over their rows."""
        temp = temp_tables.writes_temp(stmt.node, self.temp)
        if (plan.references or self.services.fns) and not temp:  # else nothing to guard
            await self._check(st, stmt, params)
        ctx = StatementContext(st.request, stmt.sql, formats=st.formats)
        try:
            if isinstance(stmt.node, ast.SelectStmt) or temp:
                return await portal_parts.read(st, plan, params, ctx, st.formats)
            return await writes.write(st, plan, params, ctx)
        finally:
            if ctx.spilled:
                self.services.kept.discard(ctx.spilled)

    async def _check(self, st: Statement, stmt: ParsedStatement, params: list[Param]
                     ) -> None:
        """Postgres's own verdict on the client's statement, before any tool is called."""
        try:
            await sidecar.check(st, stmt.sql, params)
        except errors.UndefinedFunction as exc:
            raise fn_calls.explained(st, exc) from None
        except errors.UndefinedColumn as exc:
            raise quoted_value(exc, stmt.sql) from None
