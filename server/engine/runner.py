"""The statement runner: every statement of a session, whichever way it comes, runs here.

parse (cached) -> gate -> check on the sidecar -> plan -> resolve -> run on the
sidecar -> reply. A read compiled for the fast path (``fast.py``), its calls all
cached, goes from the gate straight to the run: awaited in the task (``fast_read``)
or answered in the transports' callbacks (``answer_read``); one with a call to make
goes from the gate to the check. The wire's simple and extended protocols, the
Python API and the agent tool all come through the session's ``execute``, ``run``,
``describe``, ``explain``, ``fast_read`` and ``answer_read``, which are this
object's.

Rules:
- The gate (``sql.gate``) is the one judge of what may run: every way in passes it
  first (``_gate``), and this module keeps no list of its own. A kind the gate lets
  through has a route in ``routes.ROUTES``, the one table by kind.
- One statement's bookkeeping is written once: it starts (``_begin``: it is the
  session's current statement, as ``scratchpad.activity`` shows it) and ends once
  (``Running.end``: no longer current, counted in the metrics and logged, given the
  SQLSTATE class of its outcome, ``outcome``), under its timeout (``_timed``) and cut
  at the row limit (``_shaped``).
- A read the callbacks decline, the task runs next: what the callbacks worked out
  for it goes across in one ``Handover``, taken once.
- Inside BEGIN, writes are staged and nothing fires; an error inside a transaction
  aborts it. The sidecar never holds a transaction across statements.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from glove_scratchpad import errors, metrics, traces
from glove_scratchpad.catalog import CURRENT_VIEW_SOURCE, ViewSource, encode_param
from glove_scratchpad.resources import Resource
from glove_scratchpad.stream import RowSink
from glove_scratchpad.wire import Param

from ..sql import temp_tables as temp_gate
from ..sql.nodes import SETTING_FUNCTIONS, calls_any
from ..sql.parse import ParsedStatement, command_kind, is_script, parse
from . import fast, sidecar, suggest
from . import temp as temp_tables
from .answering import Answer, Done
from .context import Request, WorkedOut
from .overlay import Overlay
from .policy import Policy
from .prepared import Compiled, Prepared
from .result import Result
from .result_limits import bounded, shown
from .routes import ROUTES, Described, kind_of, planned
from .services import Services
from .session_settings import SessionSettings
from .statement import Endpoint, Statement, known, lookup
from .statement_log import log_end, logs_ends
from .temp import TempTables
from .timeouts import late_noticed, timed_out
from .transaction import Transaction, TxState
from .view import View

__all__ = ["Handover", "Owner", "Runner", "Running", "outcome"]

_TEXT_OIDS = frozenset({19, 25, 1042, 1043})  # name, text, bpchar, varchar


def outcome(exc: BaseException | None) -> str:
    """The SQLSTATE class a statement ended with, as the metrics and the log say it: its
    error's, 57 when it was canceled (by the client, a shutdown or a client gone), else
    00 (our bug too: the client gets XX000, the statement is not the client's failure)."""
    if isinstance(exc, errors.SqlError):
        return errors.sqlstate_class(exc.sqlstate)
    if isinstance(exc, asyncio.CancelledError):
        return errors.CLASS_OPERATOR_INTERVENTION
    return errors.CLASS_SUCCESSFUL_COMPLETION


class Owner(ViewSource, Protocol):
    """What the runner reads of its session, never calling back into it: its identity,
    transaction and settings, of which it makes each ``Statement``; the scratchpad
    views read its rows."""

    services: Services
    view: View
    policy: Policy
    user: str
    id: int
    pid: int
    endpoint: Endpoint
    sink: RowSink | None
    tx: Transaction
    session_settings: SessionSettings
    overlay: Overlay
    write_ids: Iterator[int]
    temp: TempTables
    cursors: Any


@dataclass(slots=True)
class Handover:
    """A read the callbacks declined (a call to make), for the task's run of it next:
    its text and parameters, and the calls worked out for them (``fast.reads``)."""

    sql: str
    params: list[Param]
    worked_out: WorkedOut

    def of(self, sql: str, params: list[Param]) -> bool:
        return self.sql == sql and self.params == params


class Running:
    """One statement from its start to its end: the session's current one until then."""

    __slots__ = ("_runner", "_started", "_stmt", "_was_open", "st")

    def __init__(self, runner: Runner, stmt: ParsedStatement, was_open: bool) -> None:
        self._runner, self._stmt, self._was_open = runner, stmt, was_open
        self.st: Statement | None = None
        self._started = time.perf_counter()

    def begin(self, st: Statement) -> Running:
        """The statement is made: the session's current one, as the activity view shows."""
        self.st = st
        runner = self._runner
        runner.current, runner.query, runner.query_start = st, self._stmt.sql, time.time()
        return self

    def end(self, exc: BaseException | None = None) -> None:
        """No longer current; counted and logged as it ended (``exc``: its error, if it
        failed, as ``outcome`` classes it)."""
        code = outcome(exc)
        runner = self._runner
        runner.current = None
        session = runner.session
        elapsed = time.perf_counter() - self._started
        slow = runner.services.limits.slow_statement_s
        logged = logs_ends() or (slow is not None and elapsed >= slow)
        kind = command_kind(self._stmt.node) if logged or metrics.enabled() else ""
        if logged:
            log_end(f"{session.id}:{runner.next_number()}", session.user, session.id,
                    self._stmt.sql, kind, self.st, code, elapsed, slow,
                    runner.services.limits.log_statement_text)
        if metrics.enabled():
            metrics.statement(kind, code, elapsed)
            now_open = session.tx.state is not TxState.IDLE
            if now_open is not self._was_open:
                metrics.transaction(1 if now_open else -1)


class Runner:
    """The one way a session's statements run (the module's rules)."""

    def __init__(self, session: Owner) -> None:
        self.session = session
        self.services, self.view, self.temp = session.services, session.view, session.temp
        self.current: Statement | None = None  # the statement running, if one is
        self.query = ""  # the one running, else the last
        self.query_start: float | None = None
        self._handover: Handover | None = None
        self._numbers = 0  # the session's statements', in the log

    def next_number(self) -> int:
        self._numbers += 1
        return self._numbers

    @property
    def settings(self) -> dict[str, str]:
        """The session's settings in effect (SET, SET LOCAL): read only."""
        return self.session.session_settings.now

    def lookup(self, schema: str | None, name: str) -> Resource | None:
        return lookup(self.services, self.view, schema, name)

    def statement(self, request: Request | None = None, formats: Sequence[int] = ()
                  ) -> Statement:
        """One statement of the session (``statement.py``): references to its state."""
        s = self.session
        return Statement(
            services=s.services, view=s.view, policy=s.policy, user=s.user,
            session_id=s.id, tx=s.tx, session_settings=s.session_settings,
            overlay=s.overlay, write_ids=s.write_ids, endpoint=s.endpoint,
            request=request if request is not None else Request(), formats=tuple(formats),
            pid=s.pid, sink=s.sink, temp=s.temp, cursors=s.cursors)

    def _statement(self, stmt: ParsedStatement, request: Request, formats: Sequence[int],
                   prepared: Prepared | None = None) -> Statement:
        st = self.statement(request, formats)
        st.sql, st.prepared = stmt.sql, prepared or self.view.prepared(stmt.sql)
        return st

    # -- the Python API and the agent tool ------------------------------------------

    async def execute(self, sql: str, params: Sequence[Any] | None, formats: Sequence[int]
                      ) -> Result:
        """One statement, or a BEGIN … COMMIT/ROLLBACK script, of Python values (or
        ``Param``s as a client sent them)."""
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
        results = [await self.run(stmt, encoded, request, tuple(formats))
                   for stmt in statements]
        last = results[-1]
        if len(results) > 1:
            last.statements = results
        return last

    async def explain(self, sql: str, params: Sequence[Any] | None) -> Result:
        """EXPLAIN a statement: the plan, calling no resolver (its route's ``explain``)."""
        statements = parse(sql)
        if len(statements) != 1:
            raise errors.FeatureNotSupported(
                "EXPLAIN takes one statement", hint="Explain the statements one at a time.")
        stmt = statements[0]
        encoded = [encode_param(p) for p in params or ()]
        self._gate(stmt, encoded)
        route = ROUTES[kind_of(stmt.node, self.services.schemas.system)[0]]
        return await route.explain(self.statement(), stmt, encoded)

    # -- the wire -------------------------------------------------------------------

    async def describe(self, stmt: ParsedStatement, param_oids: Sequence[int]) -> Described:
        """Parameter types and result columns of a statement, calling nothing.

        The statement passes the gate first: nothing reaches the sidecar unjudged."""
        try:
            self._gate(stmt, None)
        except errors.UndefinedTable as exc:
            await suggest.hint_search(self.statement(), exc)
            raise
        route = ROUTES[kind_of(stmt.node, self.services.schemas.system)[0]]
        return await route.describe(self.statement(), stmt, tuple(param_oids))

    def run(self, stmt: ParsedStatement, params: list[Any], request: Request,
            formats: tuple[int, ...]) -> Coroutine[Any, Any, Result]:
        """One statement's run, in a span of its own when tracing is on (no coroutine of
        its own when it is off)."""
        if not traces.enabled():
            return self._measured(stmt, params, request, formats)
        return self._traced(stmt, params, request, formats)

    async def _traced(self, stmt: ParsedStatement, params: list[Any], request: Request,
                      formats: tuple[int, ...]) -> Result:
        session = self.session
        with traces.statement(command_kind(stmt.node), stmt.sql, session.user, session.id,
                              traces.traceparent(self.settings)):
            return await self._measured(stmt, params, request, formats)

    async def _measured(self, stmt: ParsedStatement, params: list[Param],
                        request: Request, formats: tuple[int, ...]) -> Result:
        """One statement: gated, routed by its kind, timed, and its end counted."""
        session = self.session
        token = CURRENT_VIEW_SOURCE.set(session)
        running = Running(self, stmt, session.tx.state is not TxState.IDLE)
        ended: BaseException | None = None
        try:
            st = self._statement(stmt, request, formats)
            running.begin(st)
            kind, found = kind_of(stmt.node, self.services.schemas.system)
            route = ROUTES[kind]
            if not route.guarded:  # BEGIN, COMMIT and their kin: in a failed one too
                self._gate(stmt, params, st.prepared)
                return shown(await route.run(st, stmt, params, found), self.settings)
            session.tx.check_not_failed()
            try:
                self._gate(stmt, params, st.prepared)
                work = self._fast(st, params) or route.run(st, stmt, params, found)
                return await self._timed(st, work)
            except errors.SqlError as exc:
                session.tx.fail()
                await suggest.hint_search(st, exc)
                raise
        except (errors.SqlError, asyncio.CancelledError) as exc:
            ended = exc
            raise
        finally:
            CURRENT_VIEW_SOURCE.reset(token)
            running.end(ended)

    def fast_read(self, stmt: ParsedStatement, params: list[Param], formats: tuple[int, ...]
                  ) -> Coroutine[Any, Any, Result] | None:
        """The run of a compiled read (``fast.py``) outside a transaction block, ready to
        await: from its calls' caches when they hold it, else the full path's read of its
        plan (``routes.planned``), without ``run``'s routing; None when it must take
        ``run``, and then nothing was counted. What ``run`` would do for it, this does: the
        gate's verdict (remembered), the call budget and the calls' touch, the statement
        timeout, the row limit, ``scratchpad.activity``, the metrics and the
        slow-statement log. A statement traced, or logged at its end, takes ``run``."""
        chosen = self._fast_statement(stmt, formats)
        if chosen is None:
            return None
        st, compiled = chosen
        try:
            work = self._fast(st, params)
        except errors.SqlError:
            return None  # over the call budget: ``run`` refuses it where Postgres would
        return self._fast_read(stmt, st, work or planned(st, stmt, compiled.plan, params))

    async def _fast_read(self, stmt: ParsedStatement, st: Statement,
                         work: Coroutine[Any, Any, Result]) -> Result:
        running = Running(self, stmt, False).begin(st)
        ended: BaseException | None = None
        try:
            return await self._timed(st, work)
        except errors.SqlError as exc:
            self.session.tx.fail()
            ended = exc
            raise
        except asyncio.CancelledError as exc:
            ended = exc
            raise
        finally:
            running.end(ended)

    def answer_read(self, stmt: ParsedStatement, params: list[Param], formats: tuple[int, ...],
                    done: Done) -> Callable[[errors.SqlError | None], None] | None:
        """``fast_read``'s run from the calls' caches in the transports' callbacks
        (``answering.py``), started now on an idle sidecar connection; what it returns stops
        it (a cancel; None: the client is gone). None, with nothing counted: ``fast_read``
        (a call to make, which it hands over, or no idle connection), or ``run``."""
        handed = self._handover
        chosen = None if handed is not None and handed.of(stmt.sql, params) else \
            self._fast_statement(stmt, formats)
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
            self._handover = Handover(stmt.sql, params, worked)
            return None
        running = Running(self, stmt, False).begin(st)  # outside a block: nothing to abort
        answer = Answer(st.timeout, done, lambda r: self._shaped(r, st), running.end)
        try:
            answer.abandon = sidecar.start(st, conn, compiled.plan, found[1], params, found[0],
                                           answer.replied)
        except Exception:  # our bug: nothing was sent
            pool.give_back(conn, owner)
            answer.stop(None)
            raise
        return answer.stop

    def _fast_statement(self, stmt: ParsedStatement, formats: tuple[int, ...]
                        ) -> tuple[Statement, Compiled] | None:
        """The statement of a fast read and its compiled plan, or None when it must take
        ``run``: a transaction block, traces or end-logging on, a text not gated or not
        compiled."""
        if (self.session.tx.state is not TxState.IDLE or traces.enabled() or logs_ends()
                or self.temp.pinned):
            return None
        prepared = self.view.prepared(stmt.sql)
        if not prepared.gated or prepared.compiled is None:
            return None
        return self._statement(stmt, Request(), formats, prepared), prepared.compiled

    def _fast(self, st: Statement, params: list[Param]) -> Coroutine[Any, Any, Result] | None:
        """The run of a compiled read whose calls are all cached (``fast.py``), or None;
        then ``st.worked_out`` holds the calls worked out for it, for the full path (the
        callbacks' ``Handover``, when they just declined it)."""
        handed, self._handover = self._handover, None
        if handed is not None and handed.of(st.sql, params):
            st.worked_out = handed.worked_out  # the callbacks found a call not cached
            return None
        compiled = st.prepared.compiled if st.prepared is not None else None
        if compiled is None or self.temp.pinned:
            return None
        worked: WorkedOut = {}
        found = fast.reads(st, compiled, params, worked)
        if found is None:
            st.worked_out = worked
            return None
        ctx, rows = found
        return sidecar.run(st, compiled.plan, rows, params, ctx, formats=st.formats)

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
        session = self.session
        self.services.approvals.read(session.tx, result.touched)  # an untrusted read taints
        out = shown(bounded(result, self.services.limits, session.policy.row_limit),
                    self.settings)
        count = out.command_tag.rsplit(" ", 1)[-1]
        st.rows = int(count) if count.isdigit() else len(out.data_rows)
        return out

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

