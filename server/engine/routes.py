"""One table keyed by statement kind: how each kind runs, is described and is explained.

``kind_of`` names a statement's kind from its tree (and what it found: a backend
call, a system call); ``ROUTES`` maps the kind to its ``Route``. The runner
(``runner.py``) reads the table for a run, a Describe and the Python API's EXPLAIN;
no other module routes by kind.

Rules:
- The gate has judged the statement before any route is taken: a kind the gate lets
  through has a route here, or it is our bug (XX000 at its run).
- A read or write of resources is checked by the sidecar before any tool is called
  (``planned``), so the first error a client sees is the true one.
- A route that keeps the session's state (its cursors, its temporary tables) finds it
  on the statement (``Statement.cursors``, ``Statement.temp``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from pglast import ast, enums

from glove_scratchpad import errors
from glove_scratchpad.wire import FieldDescription, Param

from ..sql.allowlist import backend_call, system_call
from ..sql.analysis import Plan, deparse
from ..sql.parse import ParsedStatement
from ..sql.statement_kinds import statement_name
from . import activity, chains, portal_parts, settings, sidecar, writes
from . import copy as copying
from . import fns as fn_calls
from . import restage as restaging
from . import temp as temp_tables
from .cache import system_call_name
from .explain import explain_statement
from .explain_analyze import analyzing, explain_analyze
from .messages import quoted_value
from .result import Result
from .statement import Statement
from .system_calls import run_system_call
from .transaction_statements import transaction

__all__ = ["ROUTES", "Described", "Route", "kind_of", "planned"]

# Parameter types, and result columns (None: no rows), as a Describe answers them.
Described = tuple[tuple[int, ...], tuple[Any, ...] | None]
_RESOURCE_STATEMENTS = (ast.SelectStmt, ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt)
_CURSOR_STATEMENTS = (ast.DeclareCursorStmt, ast.FetchStmt, ast.ClosePortalStmt)
_POOL_RESETS = (ast.DiscardStmt, ast.DeallocateStmt, ast.UnlistenStmt)


@dataclass(frozen=True, slots=True)
class Route:
    """What one kind of statement does: ``run`` (given what ``kind_of`` found),
    ``describe`` (given the client's parameter types) and ``explain`` (the Python API's
    EXPLAIN). ``guarded``: it runs under the statement timeout, and not in a failed
    transaction, whose error aborts it (all but BEGIN, COMMIT and their kin)."""

    run: Callable[[Statement, ParsedStatement, list[Param], Any],
                   Coroutine[Any, Any, Result]]
    describe: Callable[[Statement, ParsedStatement, tuple[int, ...]], Awaitable[Described]]
    explain: Callable[[Statement, ParsedStatement, list[Param]], Awaitable[Result]]
    guarded: bool = True


def kind_of(node: Any, system: str) -> tuple[str, Any]:
    """A statement's kind, the key of ``ROUTES`` (``unrouted``: the gate let through a
    kind with no route), and what naming it found (a backend or system call)."""
    if isinstance(node, ast.TransactionStmt):
        return "transaction", None
    backend = backend_call(node)
    if backend is not None:  # SELECT pg_backend_pid(), pg_cancel_backend(pid): alone
        return "backend", backend
    call = system_call(node, system)
    if call is not None:  # the gate let it through alone: SELECT scratchpad.restage(…)
        return "system_call", call
    if temp_tables.is_temp_statement(node):
        return "temp", None
    if isinstance(node, _RESOURCE_STATEMENTS):
        return "resources", None
    if isinstance(node, ast.ExplainStmt):
        return ("explain_analyze" if analyzing(node) else "explain"), None
    if isinstance(node, ast.CopyStmt):
        return "copy", None
    if isinstance(node, ast.VariableSetStmt | ast.VariableShowStmt):
        return "setting", None
    if isinstance(node, _CURSOR_STATEMENTS):
        return "cursor", None
    if isinstance(node, _POOL_RESETS):
        return "pool_reset", None
    return "unrouted", None


# -- run ----------------------------------------------------------------------------

async def planned(st: Statement, stmt: ParsedStatement, plan: Plan, params: list[Param]
                  ) -> Result:
    """A SELECT, INSERT, UPDATE or DELETE of its plan: checked by the sidecar, then
    its references called and the statement run over their rows."""
    temp = temp_tables.writes_temp(stmt.node, st.temp)
    if (plan.references or st.services.fns) and not temp:  # else nothing to guard
        await check(st, stmt, params)
    ctx = st.part(stmt.sql, formats=st.formats)
    try:
        if isinstance(stmt.node, ast.SelectStmt) or temp:
            return await portal_parts.read(st, plan, params, ctx, st.formats)
        return await writes.write(st, plan, params, ctx)
    finally:
        if ctx.spilled:
            st.services.kept.discard(ctx.spilled)


async def check(st: Statement, stmt: ParsedStatement, params: list[Param]) -> None:
    """Postgres's own verdict on the client's statement, before any tool is called."""
    try:
        await sidecar.check(st, stmt.sql, params)
    except errors.UndefinedFunction as exc:
        raise fn_calls.explained(st, exc) from None
    except errors.UndefinedColumn as exc:
        raise quoted_value(exc, stmt.sql) from None


async def _run_transaction(st: Statement, stmt: ParsedStatement, params: list[Param],
                           found: Any) -> Result:
    return await transaction(st, stmt.node, st.cursors)


async def _run_backend(st: Statement, stmt: ParsedStatement, params: list[Param],
                       found: Any) -> Result:
    return await activity.answer(st, found, stmt.node.targetList[0], params,
                                 st.services.sessions)


async def _run_system_call(st: Statement, stmt: ParsedStatement, params: list[Param],
                           found: Any) -> Result:
    return await run_system_call(st, found, params)


async def _run_temp(st: Statement, stmt: ParsedStatement, params: list[Param],
                    found: Any) -> Result:
    return await planned(st, stmt, st.plan(stmt), params)


async def _run_resources(st: Statement, stmt: ParsedStatement, params: list[Param],
                         found: Any) -> Result:
    chain = chains.split(stmt.node, stmt.sql, params)
    if chain is not None:  # writes in its WITH: each a statement of its own
        await check(st, stmt, params)
        return await chains.run_parts(st, chain)
    return await planned(st, stmt, st.plan(stmt), params)


async def _run_explain_analyze(st: Statement, stmt: ParsedStatement, params: list[Param],
                               found: Any) -> Result:
    return await explain_analyze(st, stmt.node, params, planned)


async def _run_explain(st: Statement, stmt: ParsedStatement, params: list[Param],
                       found: Any) -> Result:
    return await explain_statement(st, stmt.sql, stmt.node.query, params, stmt.node)


async def _run_copy(st: Statement, stmt: ParsedStatement, params: list[Param],
                    found: Any) -> Result:
    return await copying.run(st, stmt, params)


async def _run_setting(st: Statement, stmt: ParsedStatement, params: list[Param],
                       found: Any) -> Result:
    return await settings.setting(st, stmt.node, stmt.sql)


async def _run_cursor(st: Statement, stmt: ParsedStatement, params: list[Param],
                      found: Any) -> Result:
    return await st.cursors.run(st, stmt, params)


async def _run_pool_reset(st: Statement, stmt: ParsedStatement, params: list[Param],
                          found: Any) -> Result:
    node = stmt.node
    if isinstance(node, ast.DiscardStmt) and node.target == enums.DiscardMode.DISCARD_ALL:
        await st.cursors.close_all(st)  # DISCARD ALL closes them, as CLOSE ALL
    return await settings.pool_reset(st, node)


async def _run_unrouted(st: Statement, stmt: ParsedStatement, params: list[Param],
                        found: Any) -> Result:
    # The gate let through a kind with no route here: our bug, not the client's.
    raise errors.InternalError(
        f"{statement_name(stmt.node)} passed the gate but has no branch that runs it",
        hint="Report this to the server's operator.")


# -- describe -----------------------------------------------------------------------

async def _no_rows(st: Statement, stmt: ParsedStatement, oids: tuple[int, ...]
                   ) -> Described:
    return oids, None


async def _describe_checked(st: Statement, stmt: ParsedStatement, oids: tuple[int, ...]
                            ) -> Described:
    """A read or write of resources (or EXPLAIN of one), as the sidecar describes it."""
    node = stmt.node
    query = node.query if isinstance(node, ast.ExplainStmt) else node
    if not isinstance(query, _RESOURCE_STATEMENTS):
        return oids, None
    sql = stmt.sql if query is node else deparse(query)
    params, fields = await sidecar.check(st, sql, [Param(None, 0, oid) for oid in oids])
    if query is not node:
        return params, (FieldDescription("QUERY PLAN", type_oid=25),)
    if not isinstance(node, ast.SelectStmt) and not node.returningClause:
        fields = None
    return params, fields


async def _describe_backend(st: Statement, stmt: ParsedStatement, oids: tuple[int, ...]
                            ) -> Described:
    found = backend_call(stmt.node)
    return activity.described(found, stmt.node.targetList[0], oids)


async def _describe_system_call(st: Statement, stmt: ParsedStatement,
                                oids: tuple[int, ...]) -> Described:
    # scratchpad.restage(txid[, force]), scratchpad.refresh(name)
    call = system_call(stmt.node, st.services.schemas.system)
    name = system_call_name(call)
    given = oids or restaging.param_types(call, name)
    return given, (FieldDescription(name, type_oid=25),)


async def _describe_setting(st: Statement, stmt: ParsedStatement, oids: tuple[int, ...]
                            ) -> Described:
    node = stmt.node
    if isinstance(node, ast.VariableShowStmt):
        return (), (FieldDescription(node.name or "", type_oid=25),)
    return oids, None


async def _describe_cursor(st: Statement, stmt: ParsedStatement, oids: tuple[int, ...]
                           ) -> Described:
    return oids, st.cursors.fields(stmt.node)  # FETCH: the cursor's columns


# -- the Python API's EXPLAIN ---------------------------------------------------------

async def _explain_plan(st: Statement, stmt: ParsedStatement, params: list[Param]
                        ) -> Result:
    """The plan of the statement, calling nothing (``explain.py``)."""
    return await explain_statement(st, stmt.sql, stmt.node, params)


async def _explain_explained(st: Statement, stmt: ParsedStatement, params: list[Param]
                             ) -> Result:
    """EXPLAIN of an EXPLAIN: the plan of the statement it explains."""
    return await explain_statement(st, stmt.sql, stmt.node.query, params)


def _route(run: Callable[[Statement, ParsedStatement, list[Param], Any],
                   Coroutine[Any, Any, Result]],
           describe: Callable[[Statement, ParsedStatement, tuple[int, ...]],
                              Awaitable[Described]] = _no_rows,
           explain: Callable[[Statement, ParsedStatement, list[Param]],
                             Awaitable[Result]] = _explain_plan,
           guarded: bool = True) -> Route:
    return Route(run, describe, explain, guarded)


ROUTES: dict[str, Route] = {
    "transaction": _route(_run_transaction, guarded=False),
    "backend": _route(_run_backend, _describe_backend),
    "system_call": _route(_run_system_call, _describe_system_call),
    "temp": _route(_run_temp, _describe_checked),
    "resources": _route(_run_resources, _describe_checked),
    "explain_analyze": _route(_run_explain_analyze, _describe_checked, _explain_explained),
    "explain": _route(_run_explain, _describe_checked, _explain_explained),
    "copy": _route(_run_copy),
    "setting": _route(_run_setting, _describe_setting),
    "cursor": _route(_run_cursor, _describe_cursor),
    "pool_reset": _route(_run_pool_reset),
    "unrouted": _route(_run_unrouted),
}
