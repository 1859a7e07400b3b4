"""The server's own functions as statements of their own: which ``SELECT`` is one, and
what arguments each takes. No I/O.

Rules:
- ``SYSTEM_FUNCTIONS`` (``scratchpad.restage``, ``refresh``, ``approve``, ``deny``)
  are the server's own: each is a statement of its own, ``SELECT
  scratchpad.<name>(…)`` with nothing else (``system_call``), and is refused
  anywhere else (``refuse_system_function``).
- ``restage`` takes a transaction id (a number or ``$n``) and, named ``force``, a
  boolean or ``$n`` (or a boolean second argument), which it needs to stage a
  write in doubt again; ``refresh`` a table's name (a string or ``$n``).
- ``approve(id, comment)`` and ``deny(id, reason)`` (``DECISION_FUNCTIONS``) take
  a request id (a number or ``$n``) and, optionally, a string, NULL or ``$n``:
  an approver's decision (docs/approvals.md).
- Any of them may be cast (``$1::bigint``).
"""

from __future__ import annotations

from typing import Any, NoReturn

from pglast import ast

from glove_scratchpad import errors
from glove_scratchpad.names import SYSTEM_SCHEMA

__all__ = ["DECISION_FUNCTIONS", "SYSTEM_FUNCTIONS", "is_number_or_param", "lone_call",
           "refuse_system_function", "system_call"]

DECISION_FUNCTIONS = frozenset({"approve", "deny"})  # (request id, comment): an approver's
# The server's own functions, in schema scratchpad; each is a statement of its own.
SYSTEM_FUNCTIONS = frozenset({"restage", "refresh"}) | DECISION_FUNCTIONS


def _system_hint(schema: str) -> str:
    return (f"Call it alone, with a transaction id from {schema}.journal: "
            f"SELECT {schema}.restage(17)")


# A SELECT with any of these is not a system call alone.
_SELECT_CLAUSES = ("distinctClause", "intoClause", "fromClause", "whereClause", "groupClause",
                   "havingClause", "windowClause", "valuesLists", "sortClause", "limitOffset",
                   "limitCount", "lockingClause", "withClause", "larg", "rarg")


def lone_call(node: Any) -> tuple[Any, list[str], Any] | None:
    """(the call, its name's parts, its one argument or None) of ``SELECT f(…)`` when that
    is the whole statement (one column, no other clause, no window or aggregate)."""
    if not isinstance(node, ast.SelectStmt) or len(node.targetList or ()) != 1 or any(
            getattr(node, slot) for slot in _SELECT_CLAUSES):
        return None
    call = (node.targetList or ())[0].val
    if not isinstance(call, ast.FuncCall) or call.over or call.agg_star or call.agg_filter:
        return None
    names = [str(s.sval) for s in call.funcname or () if isinstance(s, ast.String)]
    args = list(call.args or ())
    arg = args[0].arg if len(args) == 1 and isinstance(args[0], ast.TypeCast) else (
        args[0] if len(args) == 1 else None)
    return call, names, arg


def is_number_or_param(arg: Any) -> bool:
    return isinstance(arg, ast.ParamRef) or (
        isinstance(arg, ast.A_Const) and isinstance(arg.val, ast.Integer))


def system_call(node: Any, schema: str = SYSTEM_SCHEMA) -> Any:
    """The call of ``SELECT scratchpad.<fn>(…)`` (``schema``: the server's system schema)
    when that is the whole statement (one column, no other clause), else None; refused
    unless its one argument is a number or ``$n`` (either may be cast)."""
    found = lone_call(node)
    if found is None:
        return None
    call, names, arg = found
    if len(names) != 2 or names[0] != schema or names[1] not in SYSTEM_FUNCTIONS:
        return None
    if names[1] in DECISION_FUNCTIONS:
        return _decision(call, schema, names[1])
    if names[1] == "restage" and len(call.args or ()) == 2:
        return _restage_forced(call, schema)
    if names[1] == "refresh":
        if not (isinstance(arg, ast.ParamRef) or (
                isinstance(arg, ast.A_Const) and isinstance(arg.val, ast.String))):
            raise errors.FeatureNotSupported(
                f"{schema}.refresh() takes one table's name: a string, or $1",
                hint=f"Call it alone: SELECT {schema}.refresh('items')")
        return call
    if not is_number_or_param(arg):
        raise errors.FeatureNotSupported(
            f"{schema}.restage() takes one transaction id: a number, or $1",
            hint=_system_hint(schema))
    return call


def _restage_forced(call: Any, schema: str) -> Any:
    """``restage(txid, force => b)`` (or ``restage(txid, b)``): a number or ``$n``, then a
    boolean or ``$n``, either of them cast or not."""
    txid, force = (a.arg if isinstance(a, ast.TypeCast) else a for a in call.args)
    if isinstance(force, ast.NamedArgExpr) and force.name == "force":
        force = force.arg.arg if isinstance(force.arg, ast.TypeCast) else force.arg
    if not is_number_or_param(txid) or not (isinstance(force, ast.ParamRef) or (
            isinstance(force, ast.A_Const) and isinstance(force.val, ast.Boolean))):
        raise errors.FeatureNotSupported(
            f"{schema}.restage() takes a transaction id (a number, or $1) and, named force, "
            "a boolean (true, false, or $2)",
            hint=f"SELECT {schema}.restage(17, force => true) stages a write in doubt again.")
    return call


def _decision(call: Any, schema: str, name: str) -> Any:
    """``approve(id [, comment])``, ``deny(id [, reason])``: a number or ``$n``, then a
    string, NULL or ``$n``, either of them cast or not."""
    args = [a.arg if isinstance(a, ast.TypeCast) else a for a in call.args or ()]
    if not 1 <= len(args) <= 2 or not is_number_or_param(args[0]) or (
            len(args) == 2 and not (isinstance(args[1], ast.ParamRef) or (
                isinstance(args[1], ast.A_Const) and (args[1].isnull or isinstance(
                    args[1].val, ast.String))))):
        raise errors.FeatureNotSupported(
            f"{schema}.{name}() takes a request id (a number, or $1) and a "
            f"{'comment' if name == 'approve' else 'reason'} (a string, or $2)",
            hint=f"Call it alone: SELECT {schema}.{name}(12, 'why')")
    return call


def refuse_system_function(what: str = "", schema: str = SYSTEM_SCHEMA) -> NoReturn:
    """``scratchpad.restage`` anywhere but alone (``what``: "EXPLAIN of " in EXPLAIN)."""
    raise errors.FeatureNotSupported(
        f"{what}{schema}.restage() is not supported: it is a statement of its own, that "
        "stages writes and calls no tool", hint=_system_hint(schema))
