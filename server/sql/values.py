"""Pushed-down values: which expressions read no row of the statement. No I/O.

Rules:
- A value is a literal, a ``$n``, a cast, an operator, function (not an
  aggregate or window), CASE, COALESCE, array or boolean expression over
  values, or a subquery that stands alone.
- A subquery stands alone when it names no column of the statement's rows; it
  may read the statement's CTEs, which depend on no row: such a value carries
  them with it (``WITH … SELECT * FROM (<subquery>)``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pglast import ast, enums, parser

from .allowlist import AGGREGATES
from .nodes import Value, const_value, deparse, walk

__all__ = ["ValueReader", "aggregates", "operator"]


def operator(node: Any) -> str | None:
    names = getattr(node, "name", None) or ()
    return names[-1].sval if names and isinstance(names[-1], ast.String) else None


def aggregates(node: Any) -> bool:
    """Whether an expression calls an aggregate or window function."""
    return any(isinstance(n, ast.FuncCall) and (
        n.over is not None or n.agg_star
        or (operator(ast.A_Expr(name=n.funcname)) or "").lower() in AGGREGATES)
        for n in walk(node))


class ValueReader:
    """Reads value expressions against the scopes of one statement."""

    def __init__(self, lookup: Callable[[str | None, str], Any]) -> None:
        self.lookup = lookup

    def value(self, node: Any, scope: Any, is_set: bool = False) -> Value | None:
        """``node`` as a pushdown value, or None when it reads the statement's rows."""
        if not self.is_value(node, scope):
            return None
        if self.reads_cte(node, scope):
            return self.subquery_value(ast.SelectStmt(targetList=(ast.ResTarget(val=node),)),
                                       scope, unnest=is_set)
        const = const_value(node)
        param = node.number if isinstance(node, ast.ParamRef) else None
        has_sub = any(isinstance(n, ast.SubLink) for n in walk(node))
        return Value(deparse(node), node, const, param, is_set, has_sub)

    def subquery_value(self, select: Any, scope: Any, unnest: bool = False) -> Value:
        """A subquery as a set of values, with the statement's CTEs it reads."""
        ctes = [c for s in reversed(list(scope.chain())) for c in s.with_nodes]
        body = deparse(select)
        if unnest:
            body = f"SELECT unnest(({body})) AS _gs_v"
        if ctes and self.reads_cte(select, scope):
            recursive = any(s.recursive for s in scope.chain())
            sql = (f"WITH {'RECURSIVE ' if recursive else ''}"
                   f"{', '.join(deparse(c) for c in ctes)} SELECT * FROM ({body}) AS _gs_q")
            node = parser.parse_sql(sql)[0].stmt
            return Value(sql, node, is_set=True, has_subquery=True,
                         source=f"the rows of ({deparse(select)})")
        node = parser.parse_sql(body)[0].stmt if unnest else select
        return Value(body, node, is_set=True, has_subquery=True)

    def reads_cte(self, node: Any, scope: Any) -> bool:
        return any(isinstance(n, ast.RangeVar) and n.schemaname is None
                   and scope.has_cte(n.relname) for n in walk(node))

    def is_value(self, node: Any, scope: Any) -> bool:
        if isinstance(node, ast.A_Const | ast.ParamRef | ast.SQLValueFunction):
            return True
        if isinstance(node, ast.TypeCast):
            return self.is_value(node.arg, scope)
        if isinstance(node, ast.A_Expr):
            parts = [x for x in (node.lexpr, node.rexpr) if x is not None]
            return all(self.is_value(x, scope) for p in parts
                       for x in (p if isinstance(p, list | tuple) else (p,)))
        if isinstance(node, ast.FuncCall):
            return node.over is None and not node.agg_star and not aggregates(node) and all(
                self.is_value(a.arg if isinstance(a, ast.NamedArgExpr) else a, scope)
                for a in node.args or ()
            )
        if isinstance(node, ast.A_ArrayExpr):
            return all(self.is_value(e, scope) for e in node.elements or ())
        if isinstance(node, ast.CaseExpr):
            parts = [node.arg, node.defresult] + [x for w in node.args or ()
                                                   for x in (w.expr, w.result)]
            return all(self.is_value(x, scope) for x in parts if x is not None)
        if isinstance(node, ast.CoalesceExpr | ast.MinMaxExpr | ast.BoolExpr):
            return all(self.is_value(x, scope) for x in node.args or ())
        if isinstance(node, ast.SubLink):
            return node.subLinkType in (
                enums.SubLinkType.EXPR_SUBLINK, enums.SubLinkType.ARRAY_SUBLINK
            ) and self.uncorrelated(node.subselect, scope)
        return False

    def uncorrelated(self, subselect: Any, scope: Any) -> bool:
        """Whether a subquery can be evaluated on its own, before the statement runs
        (with the statement's CTEs: they do not depend on any row)."""
        inner_names: set[str | None] = set()  # as the parser gives them, like a column's
        inner_resources: list[Any] = []
        opaque = False  # an inner relation whose columns are unknown here
        for n in walk(subselect):
            if isinstance(n, ast.RangeVar):
                assert n.relname is not None  # the grammar requires one
                inner_names.add(n.alias.aliasname if n.alias else n.relname)
                resource = self.lookup(n.schemaname, n.relname)
                if resource is None or (n.schemaname is None and scope.has_cte(n.relname)):
                    opaque = True
                else:
                    inner_resources.append(resource)
            elif isinstance(n, ast.RangeSubselect | ast.RangeFunction | ast.JoinExpr):
                opaque = True
                if n.alias is not None:
                    inner_names.add(n.alias.aliasname)
            elif isinstance(n, ast.CommonTableExpr):
                inner_names.add(n.ctename)
                opaque = True
        outer_cols = {c.name for r in scope.all_refs() for c in r.resource.columns}
        for n in walk(subselect):
            if not isinstance(n, ast.ColumnRef):
                continue
            fields = [f.sval for f in n.fields or () if isinstance(f, ast.String)]
            if len(fields) >= 2:
                if fields[-2] not in inner_names:
                    return False
            elif fields and fields[0] in outer_cols and not opaque and not any(
                r.column(fields[0]) is not None for r in inner_resources
            ):
                return False
        return True
