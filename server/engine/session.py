"""The interpreter: Database and Session, the path of one statement.

parse (cached) -> gate -> plan (analysis) -> resolve -> materialize, rewrite and
run on the sidecar -> reply. The wire, the Python API and the agent tool all
call ``Session.execute``/``explain``/``preview``; none reaches further in.

Rules this module keeps:
- A missing required key fails before any resolver is called.
- Each distinct (resource, arguments) is resolved at most once per statement,
  whatever the query does with it: results are shared through a per-statement
  memo of futures. ``stable`` results are shared for one ``execute`` call,
  ``immutable`` ones for the Database's life, ``volatile`` ones never.
- Inside BEGIN, writes are staged and nothing fires; COMMIT fires them in
  order; ROLLBACK discards them. An error inside a transaction aborts it.
- The sidecar never holds a transaction across statements: each borrows a
  pooled connection, and anything a statement writes there is rolled back.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import hashlib
import itertools
import json
import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pglast import ast, enums, parse_sql
from pglast.parser import ParseError
from pydantic import ValidationError

from glove_scratchpad import errors
from glove_scratchpad.catalog import (
    AUDIT_COLUMNS,
    INSERT_SCHEMA,
    SYSTEM_SCHEMA,
    Audit,
    Catalog,
    EmbeddedSidecar,
    ExternalSidecar,
    Param,
    Pool,
    Sidecar,
    Step,
    StepResult,
    decode_row,
    encode_param,
    populate_sql,
    qualified,
    result_format,
    rows_params,
    shell_ddl,
)
from glove_scratchpad.resources import (
    Bindings,
    Fn,
    FnCatalog,
    Resource,
    define_resource,
)

from . import fns as fn_calls
from ..sql import gate
from ..sql.analysis import Plan, Reference, Value, analyze, deparse, renumber_params
from .policy import Policy
from .guard import Guard, Limits
from .result import Call, Notice, Result, ResultColumn, StagedWrite, Touched
from ..sql.rewrite import Rewritten, rewrite
from glove_scratchpad.wire import FieldDescription

__all__ = ["Database", "ParsedStatement", "Session", "parse"]

log = logging.getLogger(__name__)

PARSE_CACHE_SIZE = 4096  # distinct SQL texts whose parse trees are kept
PLAN_CACHE_SIZE = 4096
IMMUTABLE_CACHE_SIZE = 100_000  # immutable calls whose rows are kept (least recent go)

_DELETED = object()
# Column types whose text a pushed-down literal or text parameter holds is not the value
# itself: pydantic would keep it as str/UTF-8 bytes, so Postgres converts it instead.
_PARSED_BY_POSTGRES = frozenset(("bytea", "json", "jsonb"))
_SESSION_IDS = itertools.count(1)


def _decoded(result: Result) -> Result:
    """Fill ``rows`` with Python values decoded from the ``data_rows`` (text or binary)."""
    if result.data_rows and not result.rows:
        oids = tuple(f.type_oid for f in result.fields)
        formats = tuple(f.format for f in result.fields)
        result.rows = [decode_row(oids, r, formats) for r in result.data_rows]
    return result


@dataclass(frozen=True, slots=True)
class ParsedStatement:
    sql: str
    node: Any
    offset: int = 0  # where ``sql`` starts in the query string it came from


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def parse(sql: str) -> tuple[ParsedStatement, ...]:
    """The statements of a SQL text, each with its own text (positions relative to it)."""
    try:
        raw = parse_sql(sql)
    except ParseError as exc:
        message, index = exc.args[0], exc.args[1] if len(exc.args) > 1 else None
        raise errors.SyntaxError(
            message,
            position=index + 1 if isinstance(index, int) else None,
            hint="Check the statement against PostgreSQL's grammar.",
        ) from None
    if len(raw) == 1:
        return (ParsedStatement(sql, raw[0].stmt),)
    out = []
    for stmt in raw:
        end = stmt.stmt_location + stmt.stmt_len if stmt.stmt_len else len(sql)
        chunk = sql[stmt.stmt_location:end]
        text = chunk.strip().rstrip(";")
        offset = stmt.stmt_location + len(chunk) - len(chunk.lstrip())
        out.append(ParsedStatement(text, parse_sql(text)[0].stmt, offset))
    return tuple(out)


def _args_key(binding: dict[str, Any]) -> Any:
    """A hashable key of a call's arguments (JSON text only for unhashable values)."""
    key = tuple(sorted(binding.items()))
    try:
        hash(key)
    except TypeError:
        return json.dumps(binding, sort_keys=True, default=str)
    return key


def _statement_name(node: Any) -> str:
    name = type(node).__name__.removesuffix("Stmt")
    return "".join(" " + c if c.isupper() else c for c in name).strip().upper()


@dataclass
class View:
    """The resources one role sees, in a sidecar database of their own, with its caches."""

    visible: frozenset[str]
    database: str
    pool: Pool
    plans: dict[str, Plan] = field(default_factory=dict)  # by SQL text; see Session._plan
    # Describe results by (SQL, parameter types): resources never change while served.
    descriptions: dict[tuple[str, tuple[int, ...]], Any] = field(default_factory=dict)
    gated: set[str] = field(default_factory=set)  # SQL texts that passed the gate
    # Rewritten texts by (SQL, RETURNING): a plan's references always get the same CTEs.
    rewrites: dict[tuple[str, str | None], Rewritten] = field(default_factory=dict)


@dataclass
class _Request:
    """One client request (one ``execute`` call): the scope of ``stable`` results."""

    formats: tuple[int, ...] = ()  # result format codes the client asked for
    stable: dict[tuple[str, str], asyncio.Future[Any]] = field(default_factory=dict)


@dataclass
class _Statement:
    """One statement: its memo of calls, and what it touched and noticed."""

    request: _Request
    sql: str = ""
    planned: int = 0  # resolver calls decided so far, against the call budget
    memo: dict[tuple[str, str], asyncio.Future[Any]] = field(default_factory=dict)
    touched: dict[tuple[str, str, str], Touched] = field(default_factory=dict)
    notices: list[Notice] = field(default_factory=list)

    def touch(self, resource: str, verb: str, args: dict[str, Any], called: bool) -> Touched:
        key = (resource, verb, _args_key(args))
        t = self.touched.get(key)
        if t is None:
            t = self.touched[key] = Touched(resource, verb, dict(args))
        if called:
            t.calls += 1
        return t


class Database:
    """Resources served as one virtual database, over one sidecar."""

    def __init__(self, catalog: Catalog, resources: Sequence[Resource], writes: bool,
                 owns_catalog: bool, type_names: dict[int, str], limits: Limits,
                 fns: FnCatalog | None = None) -> None:
        self.catalog = catalog
        self.fns = fns if fns is not None else FnCatalog()
        self.limits = limits
        self.audit = Audit(catalog.pool)
        self.guard = Guard(limits, self.audit)
        self.type_names = type_names
        self.resources = {r.name: r for r in resources}
        self.writes = writes
        self._owns_catalog = owns_catalog
        self._immutable: dict[tuple[str, str], asyncio.Future[Any]] = {}
        self.main = View(frozenset(self.resources), catalog.database,
                         Pool(catalog.sidecar, catalog.database, user=catalog.agent_user))
        self._views: dict[frozenset[str], View] = {self.main.visible: self.main}
        self._view_lock = asyncio.Lock()
        self._default: Session | None = None

    @property
    def pool(self) -> Pool:
        return self.main.pool

    async def view(self, visible: frozenset[str]) -> View:
        """The sidecar database holding exactly these resources' shell tables.

        A role that may not see a resource gets a database without it, so it is
        absent from information_schema and pg_catalog, not merely refused.
        """
        async with self._view_lock:
            found = self._views.get(visible)
            if found is None:
                digest = hashlib.sha1(",".join(sorted(visible)).encode()).hexdigest()[:12]
                name = f"{self.catalog.database}_v{digest}"
                catalog = await Catalog.open(self.catalog.sidecar, database=name,
                                             owns_sidecar=False)
                try:
                    await catalog.install([r for n, r in self.resources.items() if n in visible],
                                          system=_system_templates(), fns=self.fns)
                finally:
                    await catalog.close()
                found = self._views[visible] = View(
                    visible, name, Pool(self.catalog.sidecar, name, user=catalog.agent_user))
            return found

    @classmethod
    async def create(
        cls,
        resources: Iterable[Resource] | None = None,
        *,
        writes: bool = False,
        sidecar_dsn: str | None = None,
        sidecar: Sidecar | None = None,
        sidecar_dir: str | Path | None = None,
        database: str | None = None,
        limits: Limits | None = None,
        fns: FnCatalog | Iterable[Fn] | None = None,
    ) -> Database:
        """Start (or find) the sidecar, install the resources' shell tables, and serve them.

        With no resources, the bundled demo set is served. ``sidecar`` shares an
        already started sidecar (tests share one per session); ``database``
        names the sidecar database to use in it. ``fns`` are the functions served
        as ``fn.<name>(…)``.
        """
        if resources is None:
            from glove_scratchpad.resources.demo import resources as demo

            resources = demo
        resources = list(resources)
        names = [r.name for r in resources]
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:
            raise ValueError(f"two resources are named {', '.join(sorted(dupes))}")
        catalog_fns = fns if isinstance(fns, FnCatalog) else FnCatalog(fns or ())
        owns_sidecar = sidecar is None
        if sidecar is None:
            sidecar = ExternalSidecar(sidecar_dsn) if sidecar_dsn else EmbeddedSidecar(sidecar_dir)
        catalog = await Catalog.open(sidecar, database=database, owns_sidecar=owns_sidecar)
        try:
            await catalog.install(resources, system=_system_templates(), fns=catalog_fns)
            for sql in Audit.ddl():
                await catalog.pool.execute(sql)
            type_names = await catalog.type_names()
        except BaseException:
            await catalog.close()
            raise
        return cls(catalog, resources, writes, owns_catalog=True, type_names=type_names,
                   limits=limits or Limits(), fns=catalog_fns)

    def session(self, *, writes: bool | None = None) -> Session:
        """A session that sees every resource."""
        return Session(self, self.main, Policy(writes=self.writes if writes is None else writes))

    async def open_session(self, policy: Policy) -> Session:
        """A session under a role's policy: its writes, visible resources and limits."""
        return Session(self, await self.view(policy.visible(self.resources)), policy)

    @property
    def default_session(self) -> Session:
        if self._default is None:
            self._default = self.session()
        return self._default

    async def execute(self, sql: str, params: Sequence[Any] | None = None) -> Result:
        return await self.default_session.execute(sql, params)

    async def explain(self, sql: str, params: Sequence[Any] | None = None) -> Result:
        return await self.default_session.explain(sql, params)

    def preview(self) -> list[StagedWrite]:
        return self.default_session.preview()

    def invalidate(self, resource: str) -> None:
        for key in [k for k in self._immutable if k[0] == resource]:
            del self._immutable[key]

    async def close(self) -> None:
        await self.audit.close()
        for view in self._views.values():
            await view.pool.close()
        if self._owns_catalog:
            await self.catalog.close()

    async def __aenter__(self) -> Database:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


_STAGED_COLUMNS = [("id", "bigint"), ("resource", "text"), ("verb", "text"),
                   ("statement", "text"), ("calls", "text"), ("status", "text")]
_RESOURCE_COLUMNS = [("name", "text"), ("description", "text"), ("verbs", "text"),
                     ("volatility", "text"), ("keys", "text"), ("primary_key", "text")]
# The session whose statement is running: the scratchpad views answer for it.
_CURRENT: contextvars.ContextVar[Session] = contextvars.ContextVar("glove_session")


def _staged_rows(b: Bindings) -> list[dict[str, Any]]:
    return [{"id": s.id, "resource": s.resource, "verb": s.verb, "statement": s.statement,
             "calls": s.summary, "status": s.status} for s in _CURRENT.get().staged]


def _resource_rows(b: Bindings) -> list[dict[str, Any]]:
    session = _CURRENT.get()
    return [{"name": r.name, "description": r.description, "verbs": ", ".join(r.verbs),
             "volatility": r.volatility, "keys": ", ".join(r.keys),
             "primary_key": ", ".join(r.primary_key)}
            for r in session.db.resources.values() if r.name in session.view.visible]


async def _call_rows(b: Bindings) -> list[dict[str, Any]]:
    session = _CURRENT.get()
    return await session.db.audit.read(None if session.policy.admin else session.id)


# The ``scratchpad`` schema's views: defined once, answering for the current session.
SYSTEM_RESOURCES = {r.name: r for r in (
    define_resource("staged", columns=_STAGED_COLUMNS, volatility="volatile",
                    description="The writes this session has staged in its open transaction.",
                    select=_staged_rows),
    define_resource("resources", columns=_RESOURCE_COLUMNS, volatility="volatile",
                    description="Every resource: its verbs, volatility and keys.",
                    select=_resource_rows),
    define_resource("calls", columns=AUDIT_COLUMNS, volatility="volatile",
                    description="The audit of tool calls: this session's (an "
                    "administrator's: every session's).", select=_call_rows),
)}


def _system_templates() -> list[Resource]:
    return list(SYSTEM_RESOURCES.values())


class Session:
    """One client's session: its transaction, staged writes and settings."""

    def __init__(self, db: Database, view: View, policy: Policy) -> None:
        self.db = db
        self.view = view
        self.policy = policy
        self.writes = policy.writes
        self.user = ""
        self.id = next(_SESSION_IDS)
        self.transaction = "idle"  # idle, open, failed
        self.read_only = False  # BEGIN READ ONLY or SET TRANSACTION READ ONLY: writes refused
        self.staged: list[StagedWrite] = []
        # Savepoints are marks in the staged list: (name, how many writes were staged).
        self.savepoints: list[tuple[str, int]] = []
        self.settings: dict[str, str] = {}
        self._overlay: dict[str, dict[tuple[Any, ...], Any]] = {}
        self._ids = itertools.count(1)

    # -- public API -------------------------------------------------------------

    @property
    def tx_status(self) -> str:
        """The transaction status as ReadyForQuery reports it: I (idle), T (open), E (failed)."""
        return {"idle": "I", "open": "T", "failed": "E"}[self.transaction]

    def fail(self) -> None:
        """An error outside a statement (Parse, Bind, a cancel) aborts an open transaction."""
        if self.transaction == "open":
            self.transaction = "failed"

    def lookup(self, schema: str | None, name: str) -> Resource | None:
        if schema == SYSTEM_SCHEMA:
            return SYSTEM_RESOURCES.get(name)
        if schema in (None, "public") and name in self.view.visible:
            return self.db.resources.get(name)
        return None

    def preview(self) -> list[StagedWrite]:
        """The writes staged in the open transaction, in the order COMMIT will fire them."""
        return list(self.staged)

    async def execute(self, sql: str, params: Sequence[Any] | None = None, *,
                      result_formats: Sequence[int] = (), decode: bool = True) -> Result:
        """Run one statement, or a BEGIN … COMMIT/ROLLBACK script.

        ``params`` are Python values, or ``Param``s as a client sent them.
        ``result_formats`` are the format codes of the result columns (the Bind
        rule: none, one for all, or one each); ``decode=False`` leaves the rows
        as Postgres encoded them, in ``Result.data_rows``.
        """
        statements = parse(sql)
        if not statements:
            return Result(command_tag="")
        if len(statements) > 1 and not _is_script(statements):
            raise errors.FeatureNotSupported(
                "several statements in one call are allowed only as a transaction script",
                hint="Send one statement per call, or wrap them in BEGIN; …; COMMIT;",
            )
        request = _Request(formats=tuple(result_formats))
        encoded = [encode_param(p) for p in params or ()]
        results = []
        for stmt in statements:
            result = await self._statement(stmt, encoded, request)
            results.append(_decoded(result) if decode else result)
        last = results[-1]
        if len(results) > 1:
            last.statements = results
        return last

    def new_request(self, formats: Sequence[int] = ()) -> _Request:
        """The scope of one client request (a Query message, or messages up to Sync)."""
        return _Request(formats=tuple(formats))

    async def run(self, stmt: ParsedStatement, params: Sequence[Param], request: _Request,
                  formats: Sequence[int] = ()) -> Result:
        """Run one parsed statement for the wire: rows stay as Postgres encoded them."""
        request.formats = tuple(formats)
        return await self._statement(stmt, list(params), request)

    async def describe(self, stmt: ParsedStatement, param_oids: Sequence[int] = ()
                       ) -> tuple[tuple[int, ...], tuple[Any, ...] | None]:
        """Parameter types and result columns of a statement, calling nothing."""
        node = stmt.node
        if isinstance(node, ast.VariableShowStmt):
            return (), (FieldDescription(node.name, type_oid=25),)
        query = node.query if isinstance(node, ast.ExplainStmt) else node
        if not isinstance(query, ast.SelectStmt | ast.InsertStmt | ast.UpdateStmt
                          | ast.DeleteStmt):
            return tuple(param_oids), None
        sql = stmt.sql if query is node else deparse(query)
        key = (sql, tuple(param_oids))
        cached = self.view.descriptions.get(key)
        if cached is None:
            async with self.view.pool.acquire() as conn:
                cached = await conn.describe(sql, param_oids)
            _keep(self.view.descriptions, key, cached)
        params, fields = cached
        if query is not node:
            return params, (FieldDescription("QUERY PLAN", type_oid=25),)
        if not isinstance(node, ast.SelectStmt) and not node.returningClause:
            fields = None
        return params, fields

    async def explain(self, sql: str, params: Sequence[Any] | None = None) -> Result:
        """EXPLAIN a statement: the plan, calling no resolver."""
        statements = parse(sql)
        if len(statements) != 1:
            raise errors.FeatureNotSupported("EXPLAIN takes one statement")
        stmt = statements[0]
        node = stmt.node.query if isinstance(stmt.node, ast.ExplainStmt) else stmt.node
        encoded = [encode_param(p) for p in params or ()]
        self._gate(stmt, encoded)
        return await self._explain(stmt.sql, node, encoded, stmt.node)

    # -- one statement ----------------------------------------------------------

    async def _statement(
        self, stmt: ParsedStatement, params: list[Any], request: _Request
    ) -> Result:
        token = _CURRENT.set(self)
        try:
            return await self._statement_as_current(stmt, params, request)
        finally:
            _CURRENT.reset(token)

    async def _statement_as_current(
        self, stmt: ParsedStatement, params: list[Any], request: _Request
    ) -> Result:
        node = stmt.node
        if isinstance(node, ast.TransactionStmt):
            return await self._transaction(node)
        if self.transaction == "failed":
            raise errors.InFailedSqlTransaction(
                "current transaction is aborted, commands ignored until end of transaction block",
                hint="ROLLBACK to end it; nothing it staged will fire.",
            )
        try:
            self._gate(stmt, params)
            try:
                async with asyncio.timeout(self._timeout()):
                    result = await self._dispatch(stmt, params, request)
            except TimeoutError:
                raise errors.QueryCanceled(
                    "canceling statement due to statement timeout",
                    hint="Narrow the statement (fewer calls, a smaller IN list), or raise "
                    "statement_timeout within the server's limit.") from None
            return self._bounded(result)
        except errors.SqlError:
            if self.transaction == "open":
                self.transaction = "failed"
            raise

    def _gate(self, stmt: ParsedStatement, params: list[Param]) -> None:
        """Layer 1: judge the statement's tree; a statement that passed once is remembered."""
        if stmt.sql in self.view.gated:
            return
        # A binary value of a text type is its UTF-8 text; any other stays bytes, which the
        # gate treats as unknown, never as NULL.
        values = [p.value if p.value is None or (p.format and p.oid not in _TEXT_OIDS)
                  else p.value.decode("utf-8", "replace") for p in params]
        gate.check(stmt.node, is_resource=lambda schema, name: self.lookup(schema, name)
                   is not None, params=values,
                   is_function=lambda schema, name: name in self.db.fns)
        # Parameter values matter to the gate only as setting names of these two.
        lowered = stmt.sql.lower()
        if len(self.view.gated) < PLAN_CACHE_SIZE and (not params or (
                "set_config" not in lowered and "current_setting" not in lowered)):
            self.view.gated.add(stmt.sql)

    async def unguarded(self, sql: str) -> Result:
        """Test-only: layer 1 switched off. The SQL goes to the sidecar as it is, as a
        statement that slipped past the gate would: as the agent role, in a read-only
        transaction that is rolled back. Layer 2 alone must stop it."""
        return self._result("", await self._pipeline([Step(sql)]))

    def _timeout(self) -> float:
        """Seconds this statement may take: the server's cap, lowered by role and SET."""
        limit = self.db.limits.statement_timeout
        if self.policy.statement_timeout:
            limit = min(limit, self.policy.statement_timeout)
        client = _duration(self.settings.get("statement_timeout", "0"))
        return min(limit, client) if client else limit

    def _bounded(self, result: Result) -> Result:
        """Cut a result at the row limit (with a NOTICE); refuse one too large to send."""
        limits = [n for n in (self.db.limits.row_limit, self.policy.row_limit) if n]
        rows = result.data_rows
        if limits and len(rows) > min(limits):
            n = min(limits)
            del rows[n:]
            if result.command_tag.startswith("SELECT"):
                result.command_tag = f"SELECT {n}"
            result.notices.append(Notice(
                f"result truncated to {n} rows (the row limit)",
                hint="Add WHERE or LIMIT to read the rows you need, or ORDER BY to choose "
                "which come first."))
        size = sum(len(r.raw_body) for r in rows)
        if size > self.db.limits.max_result_bytes:
            raise errors.ProgramLimitExceeded(
                f"the result is {size} bytes; at most {self.db.limits.max_result_bytes} may "
                "be sent", hint="Select fewer columns or rows.")
        return result

    async def _dispatch(
        self, stmt: ParsedStatement, params: list[Any], request: _Request
    ) -> Result:
        node = stmt.node
        if isinstance(node, ast.SelectStmt):
            if node.lockingClause:
                raise errors.FeatureNotSupported(
                    "SELECT … FOR UPDATE/SHARE is not supported: resources have no row locks",
                    hint="Drop the FOR UPDATE/SHARE clause.",
                )
            return await self._read(self._plan(stmt), params, _Statement(request, stmt.sql),
                                    request.formats)
        if isinstance(node, ast.InsertStmt | ast.UpdateStmt | ast.DeleteStmt):
            return await self._write(self._plan(stmt), params, _Statement(request, stmt.sql))
        if isinstance(node, ast.ExplainStmt):
            return await self._explain(stmt.sql, node.query, params, node)
        if isinstance(node, ast.VariableSetStmt | ast.VariableShowStmt):
            return await self._setting(node, stmt.sql)
        if isinstance(node, _POOL_RESETS):
            return self._pool_reset(node)
        raise errors.InsufficientPrivilege(
            f"{_statement_name(node)} is not allowed here",
            hint="Resources are defined by the server; this database answers SELECT, "
            "INSERT, UPDATE, DELETE, EXPLAIN and BEGIN/COMMIT/ROLLBACK. "
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
            "lists the resources.",
        )

    def _plan(self, stmt: ParsedStatement) -> Plan:
        """The statement's plan, cached by SQL text off the hot path of a repeated statement."""
        plans = self.view.plans
        plan = plans.get(stmt.sql)
        if plan is None:
            plan = analyze(stmt.sql, stmt.node, self.lookup)
            if self.db.fns:
                fn_calls.find_calls(stmt.sql, stmt.node)  # arguments not values: refused now
            _keep(plans, stmt.sql, plan)
        return plan

    def _pool_reset(self, node: Any) -> Result:
        """What connection pools send between clients; the wire drops its own state too."""
        if isinstance(node, ast.DiscardStmt):
            self.settings.clear()
            return Result("DISCARD " + node.target.name.removeprefix("DISCARD_"))
        if isinstance(node, ast.DeallocateStmt):
            return Result("DEALLOCATE ALL" if node.isall or not node.name else "DEALLOCATE")
        if isinstance(node, ast.ClosePortalStmt):
            return Result("CLOSE CURSOR ALL" if not node.portalname else "CLOSE CURSOR")
        if isinstance(node, ast.ListenStmt | ast.NotifyStmt):
            raise errors.FeatureNotSupported(
                "LISTEN and NOTIFY are not supported", hint="Poll a resource instead.")
        return Result("UNLISTEN")

    # -- transactions -------------------------------------------------------------

    async def _transaction(self, node: ast.TransactionStmt) -> Result:
        kind = node.kind
        k = enums.TransactionStmtKind
        if kind in (k.TRANS_STMT_BEGIN, k.TRANS_STMT_START):
            if self.transaction != "idle":
                return Result("BEGIN", notices=[Notice(
                    "there is already a transaction in progress", "WARNING", "25001")])
            self.transaction = "open"
            self.read_only = _read_only(node.options, self.settings.get(
                "default_transaction_read_only") == "on")
            return Result("BEGIN")
        if kind == k.TRANS_STMT_COMMIT:
            return await self._commit()
        if kind == k.TRANS_STMT_ROLLBACK:
            if self.transaction == "idle":
                return Result("ROLLBACK", notices=[Notice(
                    "there is no transaction in progress", "WARNING", "25P01")])
            discarded = len(self.staged)
            self._end_transaction()
            notes = [Notice(f"discarded {discarded} staged write{'s' if discarded != 1 else ''}")]
            return Result("ROLLBACK", notices=notes if discarded else [])
        if kind in (k.TRANS_STMT_SAVEPOINT, k.TRANS_STMT_RELEASE, k.TRANS_STMT_ROLLBACK_TO):
            return self._savepoint(kind, node.savepoint_name)
        if self.transaction == "open":
            self.transaction = "failed"
        raise errors.FeatureNotSupported(
            "PREPARE TRANSACTION is not supported",
            hint="A transaction here stages writes: ROLLBACK discards them all, COMMIT fires "
            "them in order.",
        )

    def _end_transaction(self) -> None:
        self.transaction = "idle"
        self.read_only = False
        self.staged = []
        self.savepoints = []

    def _savepoint(self, kind: Any, name: str) -> Result:
        """SAVEPOINT, RELEASE and ROLLBACK TO, over the staged list, as Postgres words them.

        Drivers nest transactions with savepoints (psycopg's ``conn.transaction()``
        inside a transaction, SQLAlchemy's ``begin_nested()``, asyncpg's nested
        ``transaction()``); SQLAlchemy's psycopg dialect does so on connect.
        """
        k = enums.TransactionStmtKind
        verb = {k.TRANS_STMT_SAVEPOINT: "SAVEPOINT", k.TRANS_STMT_RELEASE: "RELEASE SAVEPOINT",
                k.TRANS_STMT_ROLLBACK_TO: "ROLLBACK TO SAVEPOINT"}[kind]
        if self.transaction == "idle":
            raise errors.NoActiveSqlTransaction(
                f"{verb} can only be used in transaction blocks",
                hint="BEGIN first; a savepoint marks a point among the staged writes.")
        if self.transaction == "failed" and kind != k.TRANS_STMT_ROLLBACK_TO:
            raise errors.InFailedSqlTransaction(
                "current transaction is aborted, commands ignored until end of transaction block",
                hint="ROLLBACK, or ROLLBACK TO SAVEPOINT, to go on.")
        if kind == k.TRANS_STMT_SAVEPOINT:
            self.savepoints.append((name, len(self.staged)))
            return Result("SAVEPOINT")
        # The most recent savepoint of that name, as in Postgres (names may repeat).
        index = next((i for i in reversed(range(len(self.savepoints)))
                      if self.savepoints[i][0] == name), None)
        if index is None:
            if self.transaction == "open":
                self.transaction = "failed"
            raise errors.SqlError(f'savepoint "{name}" does not exist', sqlstate="3B001",
                                  hint="SAVEPOINT name creates one inside the transaction.")
        if kind == k.TRANS_STMT_RELEASE:
            del self.savepoints[index:]  # it and every later one; the writes stay staged
            return Result("RELEASE")
        # ROLLBACK TO keeps the savepoint itself, drops later ones and what they staged.
        mark = self.savepoints[index][1]
        discarded = len(self.staged) - mark
        del self.savepoints[index + 1:]
        del self.staged[mark:]
        self.transaction = "open"
        notes = [Notice(f"discarded {discarded} staged write{'s' if discarded != 1 else ''}")]
        return Result("ROLLBACK", notices=notes if discarded else [])

    async def _commit(self) -> Result:
        if self.transaction == "idle":
            return Result("COMMIT", notices=[Notice(
                "there is no transaction in progress", "WARNING", "25P01")])
        if self.transaction == "failed":
            self._end_transaction()
            return Result("ROLLBACK")
        staged, ctx = self.staged, _Statement(_Request(), "COMMIT")
        self._end_transaction()
        for i, write in enumerate(staged):
            try:
                await self._fire(write, ctx)
            except errors.SqlError as exc:
                write.status, write.error = "failed", exc.message
                for rest in staged[i + 1:]:
                    rest.status = "not run"
                detail = "; ".join(f"#{w.id} {w.summary}: {w.status}" for w in staged)
                raise errors.ExternalRoutineError(
                    f"COMMIT failed at staged write #{write.id} ({write.resource} {write.verb}):"
                    f" {exc.message}",
                    detail=detail,
                    hint="Writes before it fired and stay done; it and the writes after it did "
                    "not. The transaction is over: re-run what is left in a new one.",
                ) from None
        notices = [Notice(f"fired #{w.id}: {w.summary}") for w in staged]
        return Result("COMMIT", notices=notices, committed=staged,
                      touched=list(ctx.touched.values()))

    # -- reads --------------------------------------------------------------------

    async def _read(self, plan: Plan, params: list[Param], ctx: _Statement,
                    formats: Sequence[int] = ()) -> Result:
        rows = await self._resolve_all(plan.reads, params, ctx)
        return await self._run(plan, rows, params, ctx, formats=formats)

    def _check_keys(self, refs: Iterable[Reference], verb: str = "select") -> None:
        for ref in refs:
            resource = ref.resource
            if resource.resolver(verb) is None:
                raise _missing_verb(resource, verb)
            bound = {p.column for p in ref.predicates}
            for key in resource.keys:
                if key not in bound:
                    raise _missing_key(resource, key)

    async def _resolve_all(self, refs: Sequence[Reference], params: list[Any],
                           ctx: _Statement) -> dict[int, list[dict[str, Any]]]:
        self._check_keys(refs)
        estimate = sum(math.prod(len(p.values) for p in ref.predicates) for ref in refs)
        self.db.guard.check_budget(ctx.planned + estimate)
        results = await _gather(self._resolve_ref(ref, params, ctx) for ref in refs)
        return {ref.id: rows for ref, rows in zip(refs, results, strict=True)}

    async def _resolve_ref(self, ref: Reference, params: list[Any],
                           ctx: _Statement) -> list[dict[str, Any]]:
        resource: Resource = ref.resource
        bindings = await self._bindings(ref, params, ctx)
        ctx.planned += len(bindings)
        self.db.guard.check_budget(ctx.planned)
        results = await _gather(self._select(resource, b, ctx) for b in bindings)
        if len(results) == 1:
            rows = list(results[0])
        else:
            rows, seen = [], set()
            for part in results:
                for row in part:
                    key = _row_key(resource, row)
                    if key not in seen:
                        seen.add(key)
                        rows.append(row)
        rows = self._apply_overlay(resource, rows)
        # An empty scratchpad view (nothing staged) is an answer, not a filter to re-check.
        if not rows and ref.schema != SYSTEM_SCHEMA:
            # The values the calls were made with, not the $n or expression that gave them.
            args = " OR ".join(" AND ".join(f"{k} = {_sql_literal(v)}" for k, v in b.items())
                               for b in bindings if b)
            if not bindings:  # a NULL or an empty IN: nothing could match, nothing was called
                args = " AND ".join(f"{p.column} = {', '.join(v.sql for v in p.values)}"
                                    for p in ref.predicates) + " (NULL or no value: no call made)"
            ctx.notices.append(Notice(
                f'resource "{resource.name}" returned no rows'
                + (f" for {args}" if args else ""),
                hint=f"Re-check the filter values against the column descriptions "
                f"(\\d+ {resource.name}).",
            ))
        return rows

    async def _bindings(self, ref: Reference, params: list[Any],
                        ctx: _Statement) -> list[dict[str, Any]]:
        """Every call a reference makes: one per combination of its bound values."""
        columns: dict[str, list[Any]] = {}
        for pred in ref.predicates:
            column = ref.resource.column(pred.column)
            values: list[Any] = []
            for value in pred.values:
                for v in await self._evaluate(value, column, params, ctx):
                    if v is not None and v not in values:
                        values.append(v)
            if pred.column in columns:
                values = [v for v in columns[pred.column] if v in values]
            columns[pred.column] = values
        if any(not vs for vs in columns.values()):
            return []  # col = NULL, or an empty IN: no row can match, so nothing is called
        names = list(columns)
        return [dict(zip(names, combo, strict=True))
                for combo in itertools.product(*(columns[n] for n in names))]

    async def _evaluate(self, value: Value, column: Any, params: list[Any],
                        ctx: _Statement) -> list[Any]:
        """A pushed-down value, converted to the column's type (a list: IN gives several)."""
        if not value.is_set:
            raw: Any = None
            fast = False
            if value.is_const:
                raw, fast = value.const, True
            elif value.param is not None and value.param <= len(params):
                param = params[value.param - 1]
                if param.format == 0:
                    raw = None if param.value is None else param.value.decode()
                    fast = True
            if fast and column.pg_type in _PARSED_BY_POSTGRES:
                fast = False  # '\\x00ff' is two bytes and '{"a": 1}' an object, not text
            if fast:
                if raw is None:
                    return [None]
                try:
                    return [column.convert(raw)]
                except ValidationError:
                    pass  # let Postgres convert it, and word the error
        node, used = renumber_params(value.node)
        expr = deparse(node)
        if value.is_set and value.has_subquery:
            sql = f"SELECT (_gs_v)::{column.pg_type} FROM ({expr}) AS _gs_s(_gs_v)"
        elif value.is_set:
            # The array cast types a bare $n, as Postgres infers it for col = ANY($n).
            sql = (f"SELECT (_gs_v)::{column.pg_type}"
                   f" FROM unnest(({expr})::{column.pg_type}[]) AS _gs_s(_gs_v)")
        else:
            sql = f"SELECT ({expr})::{column.pg_type}"
        sub_params = [params[n - 1] for n in used if n <= len(params)]
        stmt = parse(sql)[0]
        # Binary where we can: text would follow the client's DateStyle, extra_float_digits…
        try:
            result = _decoded(await self._read(self._plan(stmt), sub_params, ctx,
                                               (result_format(column.pg_type),)))
        except errors.SqlError as exc:
            # A position in our own SELECT means nothing to the client: point at the value.
            if exc.position is not None:
                loc = getattr(value.node, "location", -1)
                exc.position = loc + 1 if isinstance(loc, int) and loc >= 0 else None
            raise
        if not value.is_set and len(result.rows) > 1:
            raise errors.CardinalityViolation(
                "more than one row returned by a subquery used as an expression",
                hint=f"Use {column.name} IN (SELECT …) to call once per value.",
            )
        out = []
        for (v,) in result.rows:
            try:
                out.append(column.convert(v) if v is not None else None)
            except ValidationError as exc:  # valid for Postgres, not for the tool (a Literal)
                about = f": {column.description}" if column.description else ""
                raise errors.InvalidParameterValue(
                    f'invalid value for column "{column.name}": {v!r}',
                    detail=exc.errors()[0]["msg"],
                    hint=f'Use a value column "{column.name}" accepts{about}.',
                    column_name=column.name,
                ) from None
        return out

    async def _select(self, resource: Resource, binding: dict[str, Any],
                      ctx: _Statement) -> list[dict[str, Any]]:
        """One call's rows: made once, by the first statement that needs them (the call's
        owner, in its own task); other references and statements await its future."""
        key = (resource.name, _args_key(binding))
        while True:
            fut = ctx.memo.get(key)
            owner = False
            if fut is None:
                cache = {"immutable": self.db._immutable, "stable": ctx.request.stable}.get(
                    resource.volatility)
                if resource.name in SYSTEM_RESOURCES:
                    cache = None
                fut = cache.get(key) if cache is not None else None
                if fut is None or (fut.done() and (fut.cancelled() or fut.exception())):
                    fut = asyncio.get_running_loop().create_future()
                    owner = True
                    if cache is not None:
                        cache[key] = fut
                        fut.add_done_callback(functools.partial(_forget_failure, cache, key))
                        if cache is self.db._immutable and len(cache) > IMMUTABLE_CACHE_SIZE:
                            del cache[next(iter(cache))]
                elif cache is self.db._immutable:
                    cache[key] = cache.pop(key)  # the most recently used is kept longest
                ctx.touch(resource.name, "select", binding, called=owner)
                ctx.memo[key] = fut
            if owner:
                rows = await _own(fut, self._call_select(resource, binding, ctx))
                break
            try:
                rows = await asyncio.shield(fut)  # a waiter's cancel is not the call's
                break
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not fut.cancelled() or task is None or task.cancelling():
                    raise  # this statement was cancelled
                # The owner was cancelled, not this statement: make the call here.
                if ctx.memo.get(key) is fut:
                    del ctx.memo[key]
        ctx.touch(resource.name, "select", binding, called=False).rows = len(rows)
        return rows

    async def _invoke(self, resource: Resource, verb: str, args: tuple[Any, ...],
                      arguments: Any, ctx: _Statement) -> Any:
        """One resolver call, under the guard's concurrency, timeout and audit."""
        fn = resource.resolver(verb)
        try:
            return await self.db.guard.call(
                resource.name, verb, lambda: fn(*args), arguments=arguments,
                user=self.user, session=self.id, statement=ctx.sql)
        except errors.SqlError:
            raise
        except Exception as exc:
            raise _resolver_failed(resource, verb, exc) from exc

    async def _call_select(self, resource: Resource, binding: dict[str, Any],
                           ctx: _Statement) -> list[dict]:
        b = Bindings({k: (v,) for k, v in binding.items()}, resource.name)
        raw = await self._invoke(resource, "select", (b,), binding, ctx)
        stamp = {k: binding[k] for k in resource.keys if k in binding}
        return resource.validate_rows(raw, stamp)

    # -- running on the sidecar ---------------------------------------------------

    def _materialize(self, plan: Plan, rows: dict[int, list[dict]], params: list[Param]
                     ) -> tuple[dict[int, int], list[Param]]:
        """The statement's arguments: its own parameters, then each reference's rows (see
        ``catalog.rows_params``); ``param_of`` is the first parameter of each reference."""
        if len(params) != plan.max_param:
            raise errors.ProtocolViolation(
                f"bind message supplies {len(params)} parameters, but prepared statement "
                f"requires {plan.max_param}",
                hint="Pass exactly one value per $n in the statement.",
            )
        args = list(params)
        param_of = {}
        for ref in plan.reads:
            param_of[ref.id] = len(args) + 1
            args.extend(map(encode_param, rows_params(ref.resource, rows[ref.id])))
        return param_of, args

    async def _run(self, plan: Plan, rows: dict[int, list[dict]], params: list[Param],
                   ctx: _Statement, *, returning: str | None = None,
                   prelude: Step | None = None, formats: Sequence[int] = ()) -> Result:
        param_of, args = self._materialize(plan, rows, params)
        calls = await fn_calls.substitute(self, plan, params, args, ctx) if self.db.fns else ()
        if calls:
            rw = rewrite(plan, param_of, returning=returning, replace=calls)
        else:  # the same plan and RETURNING always rewrite to the same text
            rewrites = self.view.rewrites
            rw = rewrites.get((plan.sql, returning))  # type: ignore[assignment]
            if rw is None:
                rw = rewrite(plan, param_of, returning=returning)
                _keep(rewrites, (plan.sql, returning), rw)
        main = Step(rw.sql, args, formats)
        steps = [prelude, main] if prelude is not None else [main]
        out = await self._pipeline(steps, write=plan.target is not None, rewritten=rw)
        return self._result(f"SELECT {len(out.rows)}", out, ctx)

    async def _pipeline(self, steps: list[Step], *, write: bool = False,
                        rewritten: Rewritten | None = None) -> StepResult:
        """Run steps on a pooled sidecar connection; the last step's result is returned."""
        # application_name changes no result; it is sent only to a statement that reads it.
        names = [n for n in self.settings if n != "application_name"
                 or any("application_name" in step.sql for step in steps)]
        if names:
            settings = Step(
                "SELECT " + ", ".join(f"set_config(${2 * i + 1}, ${2 * i + 2}, true)"
                                      for i in range(len(names))),
                [encode_param(x) for n in names for x in (n, self.settings[n])], rows=False)
            steps = [settings, *steps]
        async with self.view.pool.acquire() as conn:
            try:
                results = await conn.pipeline(steps, transaction="write" if write else "read")
            except errors.SqlError as exc:
                main = getattr(exc, "step", None) == len(steps) - 1
                if exc.position is not None:
                    exc.position = (rewritten.original_position(exc.position)
                                    if main and rewritten is not None else None)
                raise
        return results[-1]

    def _result(self, tag: str, out: StepResult, ctx: _Statement | None = None) -> Result:
        names = self.db.type_names
        columns = [ResultColumn(f.name, f.type_oid, names.get(f.type_oid, str(f.type_oid)))
                   for f in out.fields]
        return Result(
            command_tag=tag,
            columns=columns,
            fields=out.fields,
            data_rows=out.rows,
            notices=ctx.notices if ctx else [],
            touched=list(ctx.touched.values()) if ctx else [],
        )

    async def _setting(self, node: Any, sql: str) -> Result:
        """SET, RESET and SHOW: kept in the session, checked and applied by Postgres."""
        if isinstance(node, ast.VariableShowStmt):
            name = node.name
            if name == "all":
                step = Step("SELECT name, setting, short_desc AS description FROM pg_settings")
            else:
                step = Step("SELECT current_setting($1) AS " + _quote(name),
                            [encode_param(_SHOW_ALIASES.get(name, name))])
            return self._result("SHOW", await self._pipeline([step]))
        kind, name = node.kind, node.name
        k = enums.VariableSetKind
        result = Result("RESET" if sql.lstrip()[:5].upper() == "RESET" else "SET")
        if kind == k.VAR_SET_MULTI and name == "TRANSACTION" and self.transaction == "open":
            self.read_only = _read_only(node.args, self.read_only)
        if kind == k.VAR_SET_MULTI or name in _IGNORED_SETTINGS:
            return result  # SET TRANSACTION …, SESSION CHARACTERISTICS: nothing to keep
        if kind == k.VAR_RESET_ALL:
            changed = list(self.settings)
            self.settings.clear()
        elif kind in (k.VAR_SET_VALUE, k.VAR_SET_CURRENT):
            value = ", ".join(_setting_text(a) for a in node.args or ())
            if name == "client_encoding" and value.upper().replace("-", "") not in (
                    "UTF8", "UNICODE"):
                raise errors.FeatureNotSupported(
                    f'client_encoding "{value}" is not supported', hint="Use UTF8.")
            # Postgres checks the name and the value, and spells it canonically.
            out = await self._pipeline([Step("SELECT set_config($1, $2, true)",
                                             [encode_param(name), encode_param(value)])])
            self.settings[name] = out.rows[0].values[0].decode()
            changed = [name]
        else:  # RESET name, SET name TO DEFAULT
            self.settings.pop(name, None)
            changed = [name]
        reported = [n for n in changed if n.lower() in _REPORTED]
        if reported:
            out = await self._pipeline([Step(
                "SELECT " + ", ".join(f"current_setting(${i + 1})" for i in range(len(reported))),
                [encode_param(n) for n in reported])])
            values = out.rows[0].values
            result.parameters = {_REPORTED[n.lower()]: (v or b"").decode()
                                 for n, v in zip(reported, values, strict=True)}
        return result

    # -- writes -------------------------------------------------------------------

    async def _write(self, plan: Plan, params: list[Param], ctx: _Statement) -> Result:
        node = plan.node
        verb = {ast.InsertStmt: "insert", ast.UpdateStmt: "update",
                ast.DeleteStmt: "delete"}[type(node)]
        if not self.writes:
            raise errors.ReadOnlySqlTransaction(
                f"cannot execute {verb.upper()} in a read-only transaction",
                hint="This server does not allow writes: start it with --writes "
                "(Database.create(writes=True)) to INSERT, UPDATE and DELETE.",
            )
        if self.read_only or (self.transaction == "idle" and self.settings.get(
                "default_transaction_read_only") == "on"):
            raise errors.ReadOnlySqlTransaction(
                f"cannot execute {verb.upper()} in a read-only transaction",
                hint="The transaction is READ ONLY (BEGIN READ ONLY, SET TRANSACTION READ ONLY "
                "or default_transaction_read_only): end it, then write in a READ WRITE one.",
            )
        target = plan.target
        if target is None:
            rel = node.relation
            raise errors.InsufficientPrivilege(
                f'cannot {verb} relation "{rel.relname}": only resources can be written',
                hint="SELECT table_name FROM information_schema.tables WHERE table_schema = "
                "'public' lists the resources.",
            )
        resource: Resource = target.resource
        if resource.resolver(verb) is None or target.schema == SYSTEM_SCHEMA:
            raise _missing_verb(resource, verb)
        with_clause = getattr(node, "withClause", None)
        for cte in with_clause.ctes if with_clause else ():
            if not isinstance(cte.ctequery, ast.SelectStmt):
                raise errors.FeatureNotSupported(
                    "a data-modifying statement inside WITH is not supported",
                    hint="Make the INSERT, UPDATE or DELETE the statement itself; WITH may "
                    "hold SELECTs.",
                )
        if isinstance(node, ast.InsertStmt) and node.onConflictClause is not None:
            raise errors.FeatureNotSupported(
                "INSERT … ON CONFLICT is not supported on resources",
                hint="Read first, then INSERT only what is new.",
            )
        if verb == "insert":
            calls, rows = await self._plan_insert(plan, params, ctx)
            tag = f"INSERT 0 {len(rows)}"
        else:
            calls, rows = await self._plan_change(plan, verb, params, ctx)
            tag = f"{verb.upper()} {len(rows) if rows is not None else len(calls)}"
        write = StagedWrite(next(self._ids), resource.name, verb, plan.sql, calls)
        if self.transaction == "open":
            if calls:
                self.staged.append(write)
                ctx.notices.append(Notice(
                    f"staged #{write.id}: {write.summary} will be called at COMMIT",
                    hint="SELECT * FROM scratchpad.staged shows what is staged; ROLLBACK "
                    "discards it. Reads in this transaction do not see it until COMMIT.",
                ))
        elif calls:
            returned = await self._fire(write, ctx)
            if returned:
                rows = returned
        result = Result(tag, notices=ctx.notices, touched=list(ctx.touched.values()),
                        staged=list(self.staged))
        if plan.returning_span is not None:
            ret = await self._returning(plan, resource, target, rows or [], params,
                                        ctx.request.formats)
            result.columns, result.fields, result.data_rows = ret.columns, ret.fields, ret.data_rows
        return result

    async def _plan_insert(self, plan: Plan, params: list[Any], ctx: _Statement
                           ) -> tuple[list[Call], list[dict]]:
        resource: Resource = plan.target.resource  # type: ignore[union-attr]
        rows = await self._resolve_all(plan.reads, params, ctx)
        twin = Step(shell_ddl(resource, INSERT_SCHEMA)[0], rows=False, own=True)
        result = _decoded(await self._run(plan, rows, params, ctx, returning="RETURNING *",
                                          prelude=twin, formats=_read_formats(resource)))
        names = result.column_names
        given = {r.name for r in plan.node.cols} if plan.node.cols else set(names)
        inserted = [{k: v for k, v in zip(names, row, strict=True) if k in given or v is not None}
                    for row in result.rows]
        models = resource.validate_insert_rows(inserted)
        calls = [Call("insert", rows=tuple(models))] if models else []
        return calls, [_as_dict(m) for m in models]

    async def _plan_change(self, plan: Plan, verb: str, params: list[Any], ctx: _Statement
                           ) -> tuple[list[Call], list[dict] | None]:
        target: Reference = plan.target  # type: ignore[assignment]
        resource: Resource = target.resource
        bound = {p.column for p in target.predicates}
        identity = set(resource.keys) | set(resource.primary_key)
        direct = (
            plan.where_fully_bound and bool(target.predicates) and identity <= bound
            and all(v is not None for v in plan.set_values)
            # RETURNING needs the rows: read them first when the resource can be read.
            and (plan.returning_span is None or not (resource.primary_key and resource.select))
        )
        if direct:
            self._check_keys(plan.reads)
            await self._resolve_all(plan.reads, params, ctx)
            bindings = await self._bindings(target, params, ctx)
            changes: dict[str, Any] = {}
            for name, value in zip(plan.set_columns, plan.set_values, strict=True):
                column = _set_column(resource, name)
                changes[name] = (await self._evaluate(value, column, params, ctx))[0]
            if verb == "update":
                return [Call("update", changes=changes, bindings=b) for b in bindings], None
            return [Call("delete", bindings=b) for b in bindings], None
        if not (resource.primary_key and resource.select):
            cols = ", ".join(sorted(identity)) or "the columns the tool needs"
            raise errors.FeatureNotSupported(
                f'{verb.upper()} on resource "{resource.name}" needs its WHERE to bind {cols}'
                " with = or IN only",
                hint=f"Write {verb.upper()} … WHERE "
                + " AND ".join(f"{c} = …" for c in sorted(identity) or ["key"])
                + "; other predicates need a resource that declares primary_key and select.",
            )
        for name in plan.set_columns:
            _set_column(resource, name)
            if name in resource.primary_key:
                raise errors.FeatureNotSupported(
                    f'cannot change primary key column "{name}" of resource "{resource.name}"',
                    hint="DELETE the row and INSERT it with the new key.",
                )
        self._check_keys([target, *plan.reads])
        target_rows = await self._resolve_ref(target, params, ctx)
        rows = await self._resolve_all(plan.reads, params, ctx)
        unique = {tuple(r[k] for k in resource.primary_key): r for r in target_rows}
        shell = qualified(resource.name)
        prelude = Step(f"INSERT INTO {shell} SELECT * FROM {populate_sql(resource, 1)}",
                       [*map(encode_param, rows_params(resource, unique.values()))], rows=False)
        result = _decoded(await self._run(plan, rows, params, ctx, returning="RETURNING *",
                                          prelude=prelude, formats=_read_formats(resource)))
        changed = result.dicts()
        pk = resource.primary_key
        if verb == "update":
            calls = [Call("update", changes={c: r[c] for c in plan.set_columns},
                          bindings={k: r[k] for k in pk}) for r in changed]
        else:
            calls = [Call("delete", bindings={k: r[k] for k in pk}) for r in changed]
        return calls, changed

    async def _fire(self, write: StagedWrite, ctx: _Statement) -> list[dict]:
        """Make a write's calls, in order; returns the rows the resolvers gave back."""
        resource = self.db.resources[write.resource]
        returned: list[dict] = []
        for call in write.calls:
            args = call.bindings or {}
            ctx.touch(resource.name, call.verb, args if call.verb != "insert"
                      else {"rows": len(call.rows)}, called=True)
            b = Bindings({k: (v,) for k, v in args.items()}, resource.name)
            inputs: tuple[Any, ...] = {
                "insert": (list(call.rows),), "update": (dict(call.changes or {}), b),
                "delete": (b,)}[call.verb]
            arguments = ([_as_dict(r) for r in call.rows] if call.verb == "insert"
                         else {"changes": call.changes, **args} if call.verb == "update"
                         else args)
            try:
                out = await self._invoke(resource, call.verb, inputs, arguments, ctx)
            except errors.SqlError:
                write.status = "failed"
                raise
            finally:
                self._invalidate(resource.name)
            if isinstance(out, list | tuple) and out and call.verb != "delete":
                returned.extend(resource.validate_rows(list(out)))
            self._remember(resource, call, out)
        write.status = "fired"
        return returned

    def _invalidate(self, name: str) -> None:
        self.db.invalidate(name)

    # -- read-your-writes ---------------------------------------------------------

    def _remember(self, resource: Resource, call: Call, out: Any) -> None:
        pk = resource.primary_key
        if not pk:
            return
        overlay = self._overlay.setdefault(resource.name, {})
        if call.verb == "insert":
            rows = out if isinstance(out, list | tuple) and out else [_as_dict(r)
                                                                       for r in call.rows]
            for row in resource.validate_rows(list(rows)):
                if all(row.get(k) is not None for k in pk):
                    overlay[tuple(row[k] for k in pk)] = ("row", row)
            return
        bindings = call.bindings or {}
        if not all(k in bindings for k in pk):
            return
        key = tuple(bindings[k] for k in pk)
        if call.verb == "delete":
            overlay[key] = _DELETED
            return
        entry = overlay.get(key)
        changes = dict(call.changes or {})
        if isinstance(entry, tuple):
            kind, data = entry
            overlay[key] = (kind, {**data, **changes})
        else:
            overlay[key] = ("patch", changes)

    def _apply_overlay(self, resource: Resource, rows: list[dict]) -> list[dict]:
        overlay = self._overlay.get(resource.name)
        if not overlay:
            return rows
        pk = resource.primary_key
        out, seen = [], set()
        for row in rows:
            key = tuple(row.get(k) for k in pk)
            entry = overlay.get(key)
            seen.add(key)
            if entry is _DELETED:
                continue
            if isinstance(entry, tuple) and entry[0] == "patch":
                row = {**row, **entry[1]}
            out.append(row)
        for key, entry in overlay.items():
            if isinstance(entry, tuple) and entry[0] == "row" and key not in seen:
                out.append(dict(entry[1]))
        return out

    async def _returning(self, plan: Plan, resource: Resource, target: Reference,
                         rows: list[dict], params: list[Param], formats: Sequence[int],
                         ) -> Result:
        start, end = plan.returning_span  # type: ignore[misc]
        returning = plan.sql[start:end].strip()[len("RETURNING"):]
        n = plan.max_param + 1
        sql = f"SELECT {returning} FROM {populate_sql(resource, n, alias=target.alias)}"
        node, used = renumber_params(parse(sql)[0].node)
        all_args = [*params, *map(encode_param, rows_params(resource, rows))]
        sql, args = deparse(node), [all_args[i - 1] for i in used]
        out = await self._pipeline([Step(sql, args, formats)])
        return self._result("", out)

    # -- EXPLAIN ----------------------------------------------------------------

    async def _explain(self, sql: str, node: Any, params: list[Any], explain_node: Any) -> Result:
        for opt in getattr(explain_node, "options", None) or ():
            if opt.defname == "analyze":
                raise errors.FeatureNotSupported(
                    "EXPLAIN ANALYZE is not supported: it would run the statement",
                    hint="Use EXPLAIN without ANALYZE to see the plan; it calls nothing.",
                )
        if explain_node is not node:
            # The explained statement's plan, cached under the EXPLAIN's own text.
            plan = self.view.plans.get(sql)
            if plan is None:
                plan = self.view.plans[sql] = analyze(deparse(node), node, self.lookup)
        else:
            plan = self._plan(ParsedStatement(sql, node))
        inner_sql = plan.sql
        lines, refs = [], []
        for ref in plan.references:
            resource: Resource = ref.resource
            access = "write" if ref is plan.target else "read"
            args = {p.column: [v.sql for v in p.values] for p in ref.predicates}
            calls: Any = 1
            for p in ref.predicates:
                if any(v.is_set for v in p.values):
                    calls = "one per value"
                    break
                if isinstance(calls, int):
                    calls *= len(p.values)
            warnings = []
            verb = {"read": "select"}.get(access) or {
                ast.InsertStmt: "insert", ast.UpdateStmt: "update", ast.DeleteStmt: "delete"
            }[type(node)]
            if access == "write" and not isinstance(node, ast.InsertStmt):
                bound = {p.column for p in ref.predicates}
                identity = set(resource.keys) | set(resource.primary_key)
                if not (plan.where_fully_bound and ref.predicates and identity <= bound):
                    calls = f"one {verb} per matching row, after one select"
            if resource.resolver(verb) is None:
                warnings.append(f"{resource.name} has no {verb} (it supports: "
                                f"{', '.join(resource.verbs)})")
            missing = [k for k in resource.keys if k not in args]
            if (missing and not isinstance(node, ast.InsertStmt)) or (
                    missing and access == "read"):
                for key in missing:
                    warnings.append(f"missing required key {key}: add WHERE {key} = …")
            arg_text = " AND ".join(
                f"{c} = {v[0]}" if len(v) == 1 else f"{c} IN ({', '.join(v)})"
                for c, v in args.items()) or "none"
            lines.append(f"Resource {ref.label} ({resource.volatility}, {access}): "
                         f"arguments: {arg_text}; calls: {calls}")
            lines.extend(f"  WARNING: {w}" for w in warnings)
            refs.append({"resource": resource.name, "alias": ref.alias,
                         "volatility": resource.volatility, "access": access,
                         "arguments": args, "calls": calls, "warnings": warnings})
        if self.db.fns:
            lines.extend(fn_calls.explain_lines(inner_sql))
        # Unbound parameters plan as NULLs: EXPLAIN shows the plan's shape, not its values.
        args = (list(params) + [Param(None)] * plan.max_param)[:plan.max_param]
        out = await self._pipeline([Step(f"EXPLAIN {inner_sql}", args)])
        lines.extend(row.values[0].decode() for row in out.rows)
        result = Result("EXPLAIN", columns=[ResultColumn("QUERY PLAN", 25, "text")],
                        rows=[(line,) for line in lines])
        result.references = refs
        return result


# -- helpers ------------------------------------------------------------------------


async def _gather(coros: Iterable[Any]) -> list[Any]:
    """Run concurrently; the first failure cancels the rest and is raised as itself."""
    coros = list(coros)
    if len(coros) == 1:
        return [await coros[0]]
    try:
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(c) for c in coros]
    except BaseExceptionGroup as group:
        first = group.exceptions[0]
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise first from None
    return [t.result() for t in tasks]


# Settings a client sees in ParameterStatus, by lower-case name, spelled as Postgres does.
_REPORTED = {n.lower(): n for n in (
    "application_name", "client_encoding", "DateStyle", "default_transaction_read_only",
    "in_hot_standby", "integer_datetimes", "IntervalStyle", "is_superuser", "search_path",
    "server_encoding", "server_version", "session_authorization",
    "standard_conforming_strings", "TimeZone")}
_SHOW_ALIASES = {"transaction isolation level": "transaction_isolation"}
# Accepted and kept by nothing: a transaction here is virtual.
_IGNORED_SETTINGS = {"transaction_isolation", "default_transaction_isolation",
                     "transaction_read_only", "transaction_deferrable"}


_TEXT_OIDS = frozenset({19, 25, 1042, 1043})  # name, text, bpchar, varchar
_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def _duration(text: str) -> float:
    """Seconds of a Postgres duration setting as set_config spells it ("250ms", "5s", "0")."""
    text = text.strip()
    number = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    try:
        return float(number) * _UNITS.get(text[len(number):].strip(), 1e-3)
    except ValueError:
        return 0.0


def _setting_text(node: Any) -> str:
    if isinstance(node, ast.A_Const):
        value = _const_text(node)
        return value
    return deparse(node)


def _const_text(node: ast.A_Const) -> str:
    val = node.val
    for attr in ("sval", "ival", "fval", "boolval"):
        if hasattr(val, attr):
            return str(getattr(val, attr))
    return deparse(node)


_POOL_RESETS = (ast.DiscardStmt, ast.DeallocateStmt, ast.ClosePortalStmt, ast.UnlistenStmt,
                ast.ListenStmt, ast.NotifyStmt)


def _read_only(options: Any, default: bool) -> bool:
    """The READ ONLY / READ WRITE among a BEGIN's or SET TRANSACTION's options."""
    for opt in options or ():
        if isinstance(opt, ast.DefElem) and opt.defname == "transaction_read_only":
            return bool(getattr(opt.arg.val, "ival", 0))
    return default


def _is_script(statements: Sequence[ParsedStatement]) -> bool:
    k = enums.TransactionStmtKind
    first, last = statements[0].node, statements[-1].node
    return (
        isinstance(first, ast.TransactionStmt)
        and first.kind in (k.TRANS_STMT_BEGIN, k.TRANS_STMT_START)
        and isinstance(last, ast.TransactionStmt)
        and last.kind in (k.TRANS_STMT_COMMIT, k.TRANS_STMT_ROLLBACK)
    )


async def _own(fut: asyncio.Future[Any], call: Any) -> Any:
    """Run a shared call in its owner's task and publish its outcome on ``fut``.

    Inline, not a task of its own: a synchronous resolver then costs no trip
    through the event loop. If the owner is cancelled, so is the call, and
    another waiter makes it again."""
    try:
        out = await call
    except asyncio.CancelledError:
        fut.cancel()
        raise
    except BaseException as exc:
        fut.set_exception(exc)
        fut.exception()  # retrieved: the owner raises it, waiters may not exist
        raise
    fut.set_result(out)
    return out


def _keep(cache: dict[Any, Any], key: Any, value: Any) -> None:
    """Put ``value`` in a per-view cache of statements, the oldest going when it is full."""
    if len(cache) >= PLAN_CACHE_SIZE:
        cache.pop(next(iter(cache)))
    cache[key] = value


def _forget_failure(cache: dict, key: Any, fut: asyncio.Future) -> None:
    if (fut.cancelled() or fut.exception() is not None) and cache.get(key) is fut:
        del cache[key]


def _sql_literal(value: Any) -> str:
    if isinstance(value, bool | int | float):
        return str(value).lower() if isinstance(value, bool) else str(value)
    return "'" + str(value).replace("'", "''") + "'"


def _row_key(resource: Resource, row: dict[str, Any]) -> Any:
    if resource.primary_key:
        return tuple(row.get(k) for k in resource.primary_key)
    return json.dumps(row, sort_keys=True, default=str)


def _read_formats(resource: Resource) -> tuple[int, ...]:
    """Result formats for reading a resource's rows into Python (RETURNING *): binary
    where Postgres' text would depend on the client's settings."""
    return tuple(result_format(c.pg_type) for c in resource.columns)


def _as_dict(row: Any) -> dict[str, Any]:
    return row.model_dump(by_alias=True) if hasattr(row, "model_dump") else dict(row)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _set_column(resource: Resource, name: str) -> Any:
    column = resource.column(name)
    if column is None:
        raise errors.UndefinedColumn(
            f'column "{name}" of relation "{resource.name}" does not exist',
            hint=f"\\d {resource.name} lists its columns.",
        )
    return column


def _missing_key(resource: Resource, key: str) -> errors.SqlError:
    example = " AND ".join(f"{k} = '…'" for k in resource.keys)
    column = resource.column(key)
    about = f" ({column.description})" if column is not None and column.description else ""
    return errors.MissingRequiredKey(
        f'resource "{resource.name}" needs a value for its required key "{key}"{about}',
        detail=f"Required keys are the tool's arguments: {', '.join(resource.keys)}.",
        hint=f"Add it to the WHERE clause, e.g. SELECT * FROM {resource.name} WHERE {example}",
        table_name=resource.name,
        column_name=key,
    )


def _missing_verb(resource: Resource, verb: str) -> errors.SqlError:
    sql_verbs = ", ".join(v.upper() for v in resource.verbs)
    action = {"select": "read", "insert": "inserted into", "update": "updated",
              "delete": "deleted from"}[verb]
    return errors.WrongObjectType(
        f'resource "{resource.name}" cannot be {action}: it supports {sql_verbs}',
        hint=f"Use one of: {sql_verbs}.",
        table_name=resource.name,
    )


def _resolver_failed(resource: Resource, verb: str, exc: BaseException) -> errors.SqlError:
    log.info("resolver %s.%s failed", resource.name, verb, exc_info=exc)
    return errors.ExternalRoutineError(
        f'resource "{resource.name}" failed in {verb}: {type(exc).__name__}: {exc}'[:1000],
        hint="The tool behind this table reported the error; check the arguments against "
        f"the column descriptions (\\d+ {resource.name}), or try again.",
        table_name=resource.name,
    )
