"""The one read of ``pg_settings`` the gate allows, and the literals it is judged on. No I/O.

pgjdbc reads a setting with ``SELECT setting FROM pg_settings WHERE name = '…'``.
The view also shows every other setting, the paths of the server's files among
them, so the gate lets it be named only in that shape (``pinned_settings_read``).

Rules:
- A top-level SELECT, not a set operation, with no WITH, INTO, locking,
  grouping, windows, DISTINCT or VALUES, whose only FROM item is
  ``[pg_catalog.]pg_settings [alias]``.
- Its targets and ORDER BY are plain columns of ``SETTINGS_COLUMNS`` (not
  ``sourcefile``/``sourceline``, not ``*``); LIMIT/OFFSET are literals.
- Its WHERE is exactly ``name = '…'`` (either side) or ``name IN ('…', …)``,
  naming no secret setting. So the WHERE is the only expression evaluated on
  the view's rows, and no value of another setting can leak through an error.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pglast import ast, enums

__all__ = ["SETTINGS_COLUMNS", "literal", "pinned_settings_read"]


def literal(node: Any) -> str | None:
    """The text of a string (or number) literal, through casts; None for anything else."""
    while isinstance(node, ast.TypeCast):
        node = node.arg
    if isinstance(node, ast.A_Const) and not node.isnull:
        val = node.val
        if isinstance(val, ast.String):
            return val.sval
        if isinstance(val, ast.Integer):
            return str(val.ival)
        if isinstance(val, ast.Float):
            return val.fval
        if isinstance(val, ast.Boolean):
            return "on" if val.boolval else "off"
    return None


def _plain_column(node: Any, names: Iterable[str]) -> str:
    """The column a ColumnRef names when it is ``col`` or ``<alias>.col``; else ""."""
    if not isinstance(node, ast.ColumnRef):
        return ""
    fields: Any = node.fields or ()
    if len(fields) not in (1, 2) or not all(isinstance(f, ast.String | ast.A_Star)
                                            for f in fields):
        return ""
    if len(fields) == 2 and str(getattr(fields[0], "sval", "")) not in names:
        return ""
    last = fields[-1]
    return str(last.sval) if isinstance(last, ast.String) else "*"


# pg_settings columns a pinned read may name: not sourcefile/sourceline (a path), not *.
SETTINGS_COLUMNS = frozenset({
    "name", "setting", "unit", "category", "short_desc", "extra_desc", "context", "vartype",
    "source", "min_val", "max_val", "enumvals", "boot_val", "reset_val", "pending_restart",
})


def pinned_settings_read(node: Any, secret: frozenset[str]) -> Any:
    """The pg_settings RangeVar of ``SELECT cols FROM pg_settings WHERE name = '…'``, else None.

    Only plain columns are read and the WHERE is the only expression evaluated on
    the view's rows, so no value of another setting can leak through an error.
    """
    if (node.op != enums.SetOperation.SETOP_NONE or node.withClause or node.intoClause
            or node.lockingClause or node.groupClause or node.havingClause
            or node.windowClause or node.distinctClause or node.valuesLists
            or not node.fromClause or len(node.fromClause) != 1):
        return None
    rv = node.fromClause[0]
    if not (isinstance(rv, ast.RangeVar) and rv.relname == "pg_settings"
            and rv.schemaname in (None, "pg_catalog") and rv.catalogname is None):
        return None
    names = {"pg_settings", str(rv.alias.aliasname) if rv.alias else "pg_settings"}
    for target in node.targetList or ():
        if not isinstance(target, ast.ResTarget) or (
                _plain_column(target.val, names) not in SETTINGS_COLUMNS):
            return None
    for sort in node.sortClause or ():
        if _plain_column(sort.node, names) not in SETTINGS_COLUMNS:
            return None
    for limit in (node.limitCount, node.limitOffset):
        if limit is not None and literal(limit) is None:
            return None
    where: Any = node.whereClause
    col: Any
    values: list[Any]
    if not (isinstance(where, ast.A_Expr) and where.name and where.name[-1].sval == "="):
        return None
    if where.kind == enums.A_Expr_Kind.AEXPR_OP:
        col, values = where.lexpr, [where.rexpr]
        if _plain_column(col, names) != "name":
            col, values = where.rexpr, [where.lexpr]
    elif where.kind == enums.A_Expr_Kind.AEXPR_IN:
        col, values = where.lexpr, list(where.rexpr or ())
    else:
        return None
    if _plain_column(col, names) != "name" or not values:
        return None
    for value in values:
        text = literal(value)
        if text is None or text.lower() in secret:
            return None
    return rv

