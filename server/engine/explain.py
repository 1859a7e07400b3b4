"""EXPLAIN: the plan of a statement, its calls and Postgres's own plan, calling nothing.

Rules:
- EXPLAIN resolves nothing and calls no tool.
- The answer is rows of text like any other result, so every client sees it.
- Unbound parameters plan as NULLs: EXPLAIN shows the plan's shape, not values.
- A write's requests are shown with the values the statement fixes: an INSERT's rows
  (when it reads no resource: the sidecar computes them, no tool is called), an UPDATE's
  or DELETE's keys bound by ``=`` and its SET's constants.
- A write says whether COMMIT will need a person's approval for it, and why
  (``approvals.explain_lines``): the rule, or the untrusted read, this statement's too.
"""

from __future__ import annotations

import contextlib
import inspect
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pglast import ast

from glove_scratchpad import errors
from glove_scratchpad.catalog import Step
from glove_scratchpad.resources import Bindings
from glove_scratchpad.wire import Param

from ..sql.analysis import analyze, deparse
from ..sql.explain import reference_lines
from ..sql.nodes import NO_CONST, const_value
from ..sql.parse import ParsedStatement
from . import chains, sidecar
from . import fns as fn_calls
from .bindings import bindings_now, converted
from .result import Result
from .writes import verb_of

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["explain_statement"]


def _limit_lines(st: Statement, refs: list[dict[str, Any]]) -> list[str]:
    """What the server's limits will do to this statement, so that the dry run says what
    the run will: the call budget it would exceed, the row limit that would cut it."""
    limits = st.services.limits
    budget = limits.call_budget
    counted = sum(r["calls"] for r in refs if isinstance(r["calls"], int))
    fed = [r["resource"] for r in refs
           if r["access"] == "read" and not isinstance(r["calls"], int)]
    lines = []
    if counted > budget:
        lines.append(f"WARNING: this plan makes {counted} resolver calls; the call budget is "
                     f"{budget} per statement, so running it is refused "
                     f"({errors.ProgramLimitExceeded.sqlstate}): narrow the "
                     "IN lists that fan out, or split the work into several statements")
    elif fed:
        lines.append(f"Call budget: {budget} per statement; the calls of "
                     f"{', '.join(dict.fromkeys(fed))} depend on the rows that feed them"
                     + (f", with {counted} more counted here" if counted else "")
                     + ": a run that needs more is refused before any call")
    rows = [n for n in (limits.row_limit, st.policy.row_limit) if n]
    if rows:
        lines.append(f"Row limit: a result is cut at {min(rows)} rows, with a NOTICE")
    if st.services.workers > 1 and refs:
        lines.append(f"Workers: this server is {st.services.workers} processes sharing only "
                     "the sidecar; what a resolver keeps in memory, and the calls cached in "
                     "memory, belong to the process serving this connection")
    return lines


SHOWN_CALLS = 3  # a reference's calls whose requests EXPLAIN shows, at most


def _values_rows(node: Any, resource: Any, params: list[Any]) -> list[dict[str, Any]]:
    """An INSERT … VALUES's rows as its text fixes them: constants and parameters (a
    JSON column's text as its JSON); a value the text does not fix is left out."""
    select = node.selectStmt
    if not isinstance(select, ast.SelectStmt) or not select.valuesLists:
        return []
    names = [c.name for c in node.cols] if node.cols else [c.name for c in resource.columns]
    rows = []
    for exprs in select.valuesLists:
        row: dict[str, Any] = {}
        for name, expr in zip(names, exprs, strict=False):
            arg = expr.arg if isinstance(expr, ast.TypeCast) else expr
            raw = const_value(arg)
            number = arg.number if isinstance(arg, ast.ParamRef) else None
            if number is not None and number <= len(params):
                param = params[number - 1]
                raw = None if param.value is None else NO_CONST if param.format else \
                    bytes(param.value).decode()
            column = resource.column(name)
            if raw is NO_CONST or column is None:
                continue
            if isinstance(raw, str) and column.pg_type in ("json", "jsonb"):
                with contextlib.suppress(ValueError):
                    raw = json.loads(raw)
            row[name] = raw
        rows.append(row)
    return rows


async def _write_requests(st: Statement, plan: Any, node: Any, params: list[Any],
                          explain: Callable[..., list[str]]) -> list[str]:
    """A write's requests, with the values its text fixes (the module's rules); where it
    fixes none, what its resource says of the verb alone."""
    verb = verb_of(node)
    if len(inspect.signature(explain).parameters) < 3:
        return explain(verb, None)  # a resource that says the verb alone
    ref = plan.target
    said: list[list[str]] = []
    try:
        if verb == "insert":
            said = [explain(verb, None, row) for row in _values_rows(node, ref.resource,
                                                                     params)]
        elif verb != "insert" and (calls := bindings_now(ref, params)):
            changes = {}
            for name, value in zip(plan.set_columns, plan.set_values, strict=True):
                column = ref.resource.column(name)
                got = None if value is None or column is None else converted(
                    value, column, params)
                if got is not None:
                    changes[name] = got[0]
            said = [explain(verb, Bindings(c.values(), ref.resource.name, c.where, c.limit),
                            changes if verb == "update" else None) for c in calls]
    except errors.SqlError:
        said = []  # a write the run would refuse: the run says why
    if not said:
        return explain(verb, None)
    lines = [line for lines in said[:SHOWN_CALLS] for line in lines]
    if len(said) > SHOWN_CALLS:
        lines.append(f"… and {len(said) - SHOWN_CALLS} more requests")
    return lines


async def _request_lines(st: Statement, plan: Any, node: Any, params: list[Any]
                         ) -> list[str]:
    """What each reference's resource says its calls would do (an HTTP API's requests),
    with the arguments the text fixes, calling nothing."""
    lines = []
    for ref in plan.references:
        explain = getattr(ref.resource, "explain", None)
        if explain is None:
            continue
        if ref is plan.target:
            said = await _write_requests(st, plan, node, params, explain)
        else:
            calls = bindings_now(ref, params)
            if calls is None:
                said = explain("select", None)
            else:
                said = [line for call in calls[:SHOWN_CALLS] for line in explain(
                    "select", Bindings(call.values(), ref.resource.name, call.where,
                                       call.limit))]
                if len(calls) > SHOWN_CALLS:
                    said.append(f"… and {len(calls) - SHOWN_CALLS} more calls")
        lines += [f"  {ref.label}: {line}" for line in said]
    return lines


async def explain_statement(st: Statement, sql: str, node: Any, params: list[Any],
                            explain_node: Any = None) -> Result:
    """The plan of ``node`` (the explained statement; ``sql`` is the text sent)."""
    if explain_node is not None and explain_node is not node:
        # The explained statement's plan, cached under the EXPLAIN's own text.
        prepared = st.view.prepared(sql)
        plan = prepared.plan
        if plan is None:
            plan = prepared.plan = analyze(deparse(node), node, st.lookup)
    else:
        plan = st.plan(ParsedStatement(sql, node))
    chain = chains.split(node, plan.sql, params)
    parts = [(None, plan, node)] if chain is None else await chains.explain_parts(st,
                                                                                 chain)
    lines: list[str] = []
    refs: list[dict[str, Any]] = []
    read: list[str] = []
    reads: list[Any] = []
    targets: list[tuple[Any, str]] = []  # the writes' (resource, verb), for their approval
    for header, part_plan, part_node in parts:
        part_lines, part_refs = reference_lines(part_plan, part_node)
        part_lines += await _request_lines(st, part_plan, part_node, params)
        if header is not None:
            lines.append(header)
            part_lines = ["  " + line for line in part_lines]
        lines += part_lines
        refs += part_refs
        read += [ref.resource.name for ref in part_plan.references  # an INSERT's target
                 if ref is not part_plan.target or not isinstance(part_node, ast.InsertStmt)]
        reads += part_plan.reads
        if part_plan.target is not None and not isinstance(part_node, ast.SelectStmt):
            targets.append((part_plan.target.resource, verb_of(part_node)))
    lines.extend(_limit_lines(st, refs))
    for target, verb in targets:
        lines.extend(st.services.approvals.explain_lines(st.tx, target, verb, read))
    lines.extend(st.overlay.explain_lines(read))
    lines.extend(st.services.kept.explain_lines(reads, st.view.database, st.view.visible,
                                                st.services.schemas.system, st.user))
    if st.services.fns:
        lines.extend(fn_calls.explain_lines(plan.sql, st.services.schemas.fns))
    args = (list(params) + [Param(None)] * plan.max_param)[:plan.max_param]
    out = await sidecar.pipeline(st, [Step(f"EXPLAIN {plan.sql}", args)])
    lines.extend((row.values[0] or b"").decode() for row in out.rows)  # never NULL
    return Result.text("EXPLAIN", ["QUERY PLAN"], [(line,) for line in lines],
                       references=refs)
