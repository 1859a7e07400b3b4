"""One statement, one record: who runs it, in which view and transaction, under which
services, for how long, and the scope of its calls.

Rules:
- The runner makes one ``Statement`` per statement (``Runner.statement``); every
  room of the engine takes it, or a narrower part of it, never the session.
- It holds references, not copies: the session's transaction, overlay and
  counter of write ids are the session's own, so what a room stages or fires is
  the session's.
- Its timeout is computed once, when it starts, from the server's cap, the role's
  and the session's ``statement_timeout``; a SET inside it counts from the next.
- It is the scope of exactly-once: its memo holds one future per call identity, so
  however often the statement names a call, it is made once. It gathers what the
  statement touched and noticed, and the calls planned so far against the call
  budget. A part of it with calls of its own (a chain's part, the run of its plan,
  a COMMIT's writes, a cursor's reads) is a statement of its own (``part``), with
  the same session, request and timeout, and a scope of its own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

from glove_scratchpad.catalog import SYSTEM_VIEWS
from glove_scratchpad.resources import Resource
from glove_scratchpad.stream import RowSink

from ..sql.analysis import Plan, analyze
from ..sql.fn_calls import find_calls
from ..sql.known import Known
from ..sql.parse import ParsedStatement
from .context import CallArgs, CallKey, Request, WorkedOut, touch_key
from .cursor_view import PG_CURSORS
from .overlay import Overlay
from .policy import Policy
from .prepared import Prepared
from .result import Notice, Touched
from .services import Services
from .session_settings import SessionSettings
from .timeouts import timeout
from .transaction import Transaction
from .view import View

__all__ = ["Endpoint", "Statement", "known", "lookup"]


def known(services: Services, view: View) -> Known:
    """The names a view's statements may use, as the gate and the planner read them: made
    once per view (resources never change while they are served)."""
    found = view.known
    if found is None:
        visible = {n: r for n, r in services.resources.items() if n in view.visible}
        # pg_cursors: the session's own cursors, not the sidecar's.
        found = view.known = Known(services.schemas, visible, SYSTEM_VIEWS,
                                   {"pg_cursors": PG_CURSORS}, services.fns)
    return found


def lookup(services: Services, view: View, schema: str | None, name: str) -> Resource | None:
    """The resource a (schema, name) means in a view: a system view, a resource the view
    sees, or None."""
    found: Resource | None = known(services, view).resource(schema, name)
    return found


@dataclass(frozen=True, slots=True)
class Endpoint:
    """What a session's client connection is, as SHOW answers it (None: in process, no
    connection; the sidecar's value then)."""

    ssl: bool = False
    port: int | None = None
    max_connections: int | None = None


@dataclass(slots=True, kw_only=True)
class Statement:
    """One statement of a session: its identity, state, services and limits (made by
    ``Runner.statement``, by name)."""

    services: Services
    view: View
    policy: Policy
    user: str
    session_id: int
    tx: Transaction
    session_settings: SessionSettings  # the session's SET values, marked by ``tx``
    overlay: Overlay
    write_ids: Iterator[int]
    endpoint: Endpoint = Endpoint()
    request: Request = field(default_factory=Request)  # the scope of stable results
    formats: tuple[int, ...] = ()  # the result columns' format codes (the Bind rule)
    timeout: float = 0.0  # seconds it may take: set once, when it is made
    pid: int = 0  # the session's, as its BackendKeyData said (0: the Python API's)
    calls: int = 0  # tool calls it made (the log's statement event)
    called: list[str] = field(default_factory=list)  # the resources it called, in order
    rows: int | None = None  # rows its result gave or its write touched (the log's)
    # The tool calls running now, by a number of their own: (resource, verb, started).
    in_flight: dict[int, tuple[str, str, float]] = field(default_factory=dict)
    sql: str = ""  # the client's text
    # The view's record of that text, looked up once per statement (``View.prepared``).
    prepared: Prepared | None = None
    # Calls of its references that the fast path worked out from these parameters before
    # it declined the run (``fast.reads``): by the ``id`` of the reference they are of.
    worked_out: WorkedOut | None = None
    # Where the client's own read may relay its rows as they come (the wire's socket;
    # None: the Python API's, whose rows are always kept).
    sink: RowSink | None = None
    temp: Any = None  # the session's temporary tables (``temp.TempTables``)
    cursors: Any = None  # the session's cursors, DECLARE's (``cursors.Cursors``)
    # EXPLAIN ANALYZE of a read: what the sidecar statement of that plan starts with.
    explain: tuple[str, Any] | None = None  # (the prefix, the plan)
    # A cancel or the timeout arrived after a write outside BEGIN was sent: the write ran
    # to its end, and its outcome is the answer (``commit.fire_one``).
    late_cancel: bool = False
    # Its calls' scope (the module's rules): resolver calls decided so far, against the
    # call budget; one future per call identity, and the arguments of each; what it
    # touched (by ``touch_key``) and noticed.
    planned: int = 0
    memo: dict[CallKey, asyncio.Future[Any]] = field(default_factory=dict)
    call_args: dict[CallKey, CallArgs] = field(default_factory=dict)
    touched: dict[tuple[str, str, Any], Touched] = field(default_factory=dict)
    notices: list[Notice] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)  # its timeout counts from here
    timed: bool = True  # under the statement timeout (a COMMIT's writes are not)
    spilled: list[Any] = field(default_factory=list)  # tables of its own (kept.py's Kept)

    def __post_init__(self) -> None:
        self.timeout = self.timeout_now()

    def timeout_now(self) -> float:
        """The timeout the session's settings give now (a SET in this statement counts
        from the next one: ``timeout`` is this one's)."""
        return timeout(self.services.limits.statement_timeout, self.policy.statement_timeout,
                       self.settings)

    @property
    def settings(self) -> dict[str, str]:
        """The session's settings in effect (SET, SET LOCAL): read only."""
        return self.session_settings.now

    @property
    def writes(self) -> bool:
        return self.policy.writes

    def next_write_id(self) -> int:
        return next(self.write_ids)

    @property
    def known(self) -> Known:
        """The names this statement may use (``known``)."""
        return known(self.services, self.view)

    @property
    def lookup(self) -> Callable[[str | None, str], Resource | None]:
        """The resource a (schema, name) in the statement means, as this view sees it, or
        None: the view's record's own lookup, which the planner may call (it is data, not
        a way back into the engine)."""
        return self.known.resource

    def record(self, sql: str) -> Prepared:
        """The view's record of a text: the client's, looked up once per statement, or one
        of the statement's own (a chain's part, a function's arguments)."""
        if self.prepared is not None and sql == self.sql:
            return self.prepared
        return self.view.prepared(sql)

    def plan(self, stmt: ParsedStatement) -> Plan:
        """The statement's plan, kept with its text (``View.prepared``)."""
        prepared = self.record(stmt.sql)
        plan = prepared.plan
        if plan is None:
            plan = analyze(stmt.sql, stmt.node, self.known.resource)
            if self.services.fns:
                # Arguments that are not values: refused now.
                find_calls(stmt.sql, stmt.node, self.services.schemas.fns)
            prepared.plan = plan
        return plan

    def part(self, sql: str, *, request: Request | None = None, formats: tuple[int, ...] = (),
             timed: bool = True) -> Statement:
        """A part of this statement with calls of its own (the module's rules): ``sql`` its
        text, under ``request`` (this one's when None), its result columns in
        ``formats``."""
        part = _new(Statement)  # not ``__init__``: the timeout is this one's, not computed
        for name, value in zip(_SHARED, _shared(self), strict=True):
            setattr(part, name, value)
        part.sql, part.prepared, part.formats, part.timed = sql, None, formats, timed
        part.request = self.request if request is None else request
        part.planned, part.memo, part.call_args, part.touched = 0, {}, {}, {}
        part.notices, part.spilled, part.started = [], [], time.monotonic()
        return part

    def notice(self, notice: Notice) -> None:
        """Add a NOTICE once, however many reads of the statement give it."""
        if notice not in self.notices:
            self.notices.append(notice)

    def touch(self, resource: str, verb: str, args: dict[str, Any], called: bool,
              key: tuple[str, str, Any] | None = None) -> Touched:
        """The statement's record of a distinct call (``key``: ``touch_key`` of it, when
        it is known already), counted when it was ``called``."""
        if key is None:
            key = touch_key(resource, verb, args)
        t = self.touched.get(key)
        if t is None:
            t = self.touched[key] = Touched(resource, verb, dict(args))
        if called:
            t.calls += 1
        return t


# What a part shares with its statement: all but its text, its record, its request and
# formats, and its calls' scope (``Statement.part``).
_OWN = frozenset({"sql", "prepared", "request", "formats", "planned", "memo", "call_args",
                  "touched", "notices", "started", "timed", "spilled"})
_SHARED = tuple(f.name for f in fields(Statement) if f.name not in _OWN)
_shared = attrgetter(*_SHARED)
_new = object.__new__
