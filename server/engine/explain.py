"""EXPLAIN: the plan of a statement, its calls and Postgres's own plan, calling nothing.

Rules:
- EXPLAIN resolves nothing and calls no tool.
- The answer is rows of text like any other result, so every client sees it.
- Unbound parameters plan as NULLs: EXPLAIN shows the plan's shape, not values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pglast import ast

from glove_scratchpad.catalog import Param, Step

from ..sql.analysis import analyze, deparse
from ..sql.explain import reference_lines
from ..sql.parse import ParsedStatement
from . import fns as fn_calls
from . import run as sidecar
from .result import Result

if TYPE_CHECKING:
    from .session import Session

__all__ = ["explain_statement"]


async def explain_statement(session: Session, sql: str, node: Any, params: list[Any],
                            explain_node: Any = None) -> Result:
    """The plan of ``node`` (the explained statement; ``sql`` is the text sent)."""
    if explain_node is not None and explain_node is not node:
        # The explained statement's plan, cached under the EXPLAIN's own text.
        plan = session.view.plans.get(sql)
        if plan is None:
            plan = session.view.plans[sql] = analyze(deparse(node), node, session.lookup)
    else:
        plan = session.plan(ParsedStatement(sql, node))
    lines, refs = reference_lines(plan, node)
    lines.extend(session.overlay.explain_lines(  # an INSERT's target is not read
        ref.resource.name for ref in plan.references
        if ref is not plan.target or not isinstance(node, ast.InsertStmt)))
    lines.extend(session.db.kept.explain_lines(session, list(plan.reads)))
    if session.db.fns:
        lines.extend(fn_calls.explain_lines(plan.sql, session.db.schemas.fns))
    args = (list(params) + [Param(None)] * plan.max_param)[:plan.max_param]
    out = await sidecar.pipeline(session, [Step(f"EXPLAIN {plan.sql}", args)])
    lines.extend(row.values[0].decode() for row in out.rows)
    return Result.text("EXPLAIN", ["QUERY PLAN"], [(line,) for line in lines],
                       references=refs)
