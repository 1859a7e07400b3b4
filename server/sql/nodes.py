"""What analysis finds, and the small tree helpers it and its users share. No I/O.

- ``Value``: one pushed-down value expression: a literal, a ``$n``, an
  expression over those, or a subquery the sidecar evaluates first (which may
  read CTEs and resources, and is how a join feeds a key: "one call per
  distinct ``t.title``").
- ``Predicate``: a column that fans out, one call per value: a required key
  (and, on a write target, a primary-key column).
- ``Condition``: a declared filter with its operator; it reaches the resolver
  as ``(op, value)`` and never fans out.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pglast import ast
from pglast.stream import RawStream

__all__ = [
    "NO_CONST",
    "SETTING_FUNCTIONS",
    "SET_CONFIG_PARAMS",
    "Condition",
    "Predicate",
    "Value",
    "call_arguments",
    "calls_among",
    "calls_any",
    "const_value",
    "deparse",
    "param_numbers",
    "params_among",
    "renumber_params",
    "set_config_calls",
    "walk",
]

NO_CONST = object()


@dataclass(frozen=True, slots=True)
class Value:
    """One pushed-down value expression."""

    sql: str
    node: Any = field(compare=False, repr=False)
    const: Any = field(default=NO_CONST, compare=False, repr=False)
    param: int | None = None
    is_set: bool = False  # IN (SELECT …), = ANY(array), a feed: a set of values
    has_subquery: bool = False
    source: str = ""  # what EXPLAIN says of where it comes from, when not its SQL

    @property
    def is_const(self) -> bool:
        return self.const is not NO_CONST

    @property
    def described(self) -> str:
        if self.source:
            return self.source
        if self.param is not None and self.sql == f"${self.param}":
            return f"parameter ${self.param}"
        return self.sql


@dataclass(frozen=True, slots=True)
class Predicate:
    """``column`` equals one of ``values`` (an IN list has several): one call each."""

    column: str
    values: tuple[Value, ...]


@dataclass(frozen=True, slots=True)
class Condition:
    """A declared filter: ``column op values``.

    ``op`` is one of ``=``, ``<>``, ``<``, ``<=``, ``>``, ``>=``, ``in`` (values: a
    list), ``like``, ``ilike``, ``is null``, ``is not null`` (no value)."""

    column: str
    op: str
    values: tuple[Value, ...] = ()


def deparse(node: Any) -> str:
    """A tree's SQL text, as pglast's ``RawStream`` writes it. A constant's, the value
    pushed down most often, is written here: the printer walks its tree with a visitor
    made per call, which costs far more than the text."""
    if isinstance(node, ast.A_Const):
        text = _const_sql(node)
        if text is not None:
            return text
    return RawStream()(node)


def _const_sql(node: ast.A_Const) -> str | None:
    """A constant's text exactly as ``RawStream`` writes it; None for a kind left to it
    (a bit string)."""
    if node.isnull:
        return "NULL"
    val = node.val
    if isinstance(val, ast.Integer):
        return str(val.ival)
    if isinstance(val, ast.Float):
        return str(val.fval)
    if isinstance(val, ast.String):
        return "'" + str(val.sval).replace("'", "''") + "'"
    if isinstance(val, ast.Boolean):
        return "TRUE" if val.boolval else "FALSE"
    return None


def walk(node: Any) -> Iterator[Any]:
    if isinstance(node, tuple | list):
        for item in node:
            yield from walk(item)
    elif isinstance(node, ast.Node):
        yield node
        for name in node:  # a node iterates over its __slots__
            yield from walk(getattr(node, name, None))


# The functions that read or change a setting: judged by the gate like SET and SHOW.
SETTING_FUNCTIONS = frozenset(("set_config", "current_setting"))


def calls_any(node: Any, names: frozenset[str]) -> bool:
    """Whether a tree calls a function of one of ``names``, in any schema and however
    its name is spelled (quoted, U&-escaped): by the name Postgres resolves."""
    return calls_among(walk(node), names)


def calls_among(nodes: Iterable[Any], names: frozenset[str]) -> bool:
    """``calls_any`` over a tree's nodes (``walk``), walked once for several questions."""
    return any(isinstance(n, ast.FuncCall) and (n.funcname or ())[-1].sval in names
               for n in nodes)


def call_arguments(call: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """A FuncCall's argument nodes by parameter name (``names``, in order), positional
    or named (``name => value``)."""
    args: dict[str, Any] = {}
    for i, arg in enumerate(call.args or ()):
        if isinstance(arg, ast.NamedArgExpr):
            args[str(arg.name)] = arg.arg
        elif i < len(names):
            args[names[i]] = arg
    return args


SET_CONFIG_PARAMS = ("setting_name", "new_value", "is_local")


def set_config_calls(node: Any) -> list[dict[str, Any]]:
    """The argument nodes of each ``set_config`` call in a tree, by parameter name."""
    return [call_arguments(n, SET_CONFIG_PARAMS) for n in walk(node)
            if isinstance(n, ast.FuncCall) and (n.funcname or ())[-1].sval == "set_config"]


def param_numbers(node: Any) -> set[int]:
    return params_among(walk(node))


def params_among(nodes: Iterable[Any]) -> set[int]:
    """``param_numbers`` over a tree's nodes (``walk``)."""
    return {n.number or 0 for n in nodes if isinstance(n, ast.ParamRef)}


def renumber_params(node: Any) -> tuple[Any, list[int]]:
    """A copy of ``node`` whose ``$n`` are renumbered 1..m; and the old numbers, in order."""
    node = copy.deepcopy(node)
    old = sorted(param_numbers(node))
    mapping = {n: i + 1 for i, n in enumerate(old)}
    for n in walk(node):
        if isinstance(n, ast.ParamRef):
            n.number = mapping[n.number or 0]
    return node, old


def const_value(node: Any) -> Any:
    if isinstance(node, ast.A_Const):
        if node.isnull:
            return None
        val = node.val
        if isinstance(val, ast.Integer):
            return val.ival
        if isinstance(val, ast.Float):
            return val.fval  # kept as text: the column type decides
        if isinstance(val, ast.Boolean):
            return val.boolval
        if isinstance(val, ast.String):
            return val.sval
    return NO_CONST
