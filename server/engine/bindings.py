"""A reference's calls, from the values pushed down to it.

``resolve.bindings`` converts each value (in Postgres when it must: a sub-query, a
binary parameter, an expression) and ``calls_of`` makes the calls;
``bindings_now`` does the same without the sidecar, or says it cannot (the fast
path's, ``fast.py``).

Rules:
- One call per combination of the keys' values; a NULL or an empty IN on a key
  makes none (no row could match), as does a filter compared with NULL.
- A value converts in Python when it is a constant or a text parameter and the
  column takes its text as the value, or a binary parameter of a type whose cast
  to the column's changes nothing (an integer in the column's range, a float, a
  boolean, text, a uuid); else Postgres converts it, as its own cast would.
- Text of a date or time converts in Python only in the ISO form Postgres reads the
  same under every DateStyle, and a timestamptz only with its offset: otherwise the
  session's TimeZone and DateStyle decide, so Postgres reads it.
- A value compared with an integer column is never rounded. A number that is not
  a whole one in the column's range (``age > 33.5``, ``age < 1e20``) stays a
  ``Decimal`` (``exact``), and the tool is given the condition that is true of the
  same integers: ``age > 33``, ``age IS NOT NULL``; one no integer meets makes no
  call (``age = 33.5``), and a key never takes such a value.
"""

from __future__ import annotations

import decimal
import itertools
import math
import re
import struct
from collections.abc import Iterable, Sequence
from typing import Any

from pglast import ast
from pydantic import ValidationError

from glove_scratchpad.catalog import decode_value
from glove_scratchpad.resources import Column
from glove_scratchpad.wire import Param

from ..sql.analysis import Reference, Value
from .context import CallArgs

__all__ = ["bindings_now", "calls_of", "converted", "pushed"]

# Column types whose text a pushed-down literal or text parameter holds is not the value
# itself: pydantic would keep it as str/UTF-8 bytes, so Postgres converts it instead.
_PARSED_BY_POSTGRES = frozenset(("bytea", "json", "jsonb"))
COUNT = Column("limit", "bigint", py_type=int)  # a LIMIT or OFFSET, as a number
_POSTGRES = object()  # a binary parameter that only Postgres converts
# Binary parameters read here, by type OID, and the column types they cast to unchanged.
_INTEGERS = {"smallint": 2**15, "int2": 2**15, "integer": 2**31, "int": 2**31,
             "int4": 2**31, "bigint": 2**63, "int8": 2**63}
_INTEGER_SIZES = {21: 2, 23: 4, 20: 8}  # int2, int4, int8: bytes of a binary value
_FLOATS = frozenset(("double precision", "float8"))
# Text that Postgres reads as the same value whatever the session's DateStyle and
# TimeZone: ISO dates and times, and timestamps with their offset.
_ISO_DATE = r"\d{4}-\d{2}-\d{2}"
_ISO_TIME = r"\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?"
_ISO_OFFSET = r"(?:Z|[+-]\d{2}(?::\d{2})?)"
_ISO_STAMP = re.compile(f"{_ISO_DATE}[T ]{_ISO_TIME}")
_ISO_STAMP_TZ = re.compile(f"{_ISO_DATE}[T ]{_ISO_TIME}{_ISO_OFFSET}")
_SETTLED_TEXT = {
    "date": re.compile(_ISO_DATE),
    "time": re.compile(_ISO_TIME), "time without time zone": re.compile(_ISO_TIME),
    "timestamp": _ISO_STAMP, "timestamp without time zone": _ISO_STAMP,
    "timestamptz": _ISO_STAMP_TZ, "timestamp with time zone": _ISO_STAMP_TZ,
}
_SETTINGS_DEPENDENT = frozenset(("interval", "time with time zone", "timetz"))
_SAME = {16: frozenset(("boolean", "bool")), 25: frozenset(("text",)),
         1043: frozenset(("text",)), 700: _FLOATS, 701: _FLOATS,
         2950: frozenset(("uuid",))}


def bindings_now(ref: Reference, params: Sequence[Param]) -> list[CallArgs] | None:
    """``resolve.bindings`` when no value needs the sidecar (``converted``): the fast
    path's (``fast.py``); None otherwise."""
    values = {}
    for value, column in pushed(ref):
        got = converted(value, column, params)
        if got is None:
            return None
        values[id(value)] = got
    return calls_of(ref, values)


def pushed(ref: Reference) -> Iterable[tuple[Value, Column]]:
    """Every value pushed down to a reference's calls, with the column it converts to."""
    resource = ref.resource
    value: Value | None
    for pred in ref.predicates:
        column = resource.column(pred.column)
        for value in pred.values:
            yield value, column
    for cond in ref.conditions:
        column = resource.column(cond.column)
        for value in cond.values:
            yield value, column
    for value in (ref.limit, ref.offset):
        if value is not None:
            yield value, COUNT


def calls_of(ref: Reference, values: dict[int, list[Any]]) -> list[CallArgs]:
    """The calls of a reference, from its pushed-down values (by ``id``) converted."""
    columns: dict[str, list[Any]] = {}
    for pred in ref.predicates:
        found: list[Any] = []
        integer = _is_integer(ref, pred.column)
        for value in pred.values:
            for v in values[id(value)]:
                # A Decimal for an integer key is no integer (exact): no row holds it.
                if v is not None and v not in found and not (integer and _inexact(v)):
                    found.append(v)
        if pred.column in columns:
            found = [v for v in columns[pred.column] if v in found]
        columns[pred.column] = found
    if any(not vs for vs in columns.values()):
        return []  # col = NULL, or an empty IN: no row can match, so nothing is called
    where = _conditions(ref, values)
    if where is None:
        return []
    limit = _limit(ref, values)
    names = list(columns)
    return [CallArgs(dict(zip(names, combo, strict=True)), where, limit)
            for combo in itertools.product(*(columns[n] for n in names))]


def _conditions(ref: Reference, values: dict[int, list[Any]]
                ) -> dict[str, tuple[tuple[str, Any], ...]] | None:
    """The filters' conditions with their values; None when no row can match."""
    where: dict[str, list[tuple[str, Any]]] = {}
    for cond in ref.conditions:
        integer = _is_integer(ref, cond.column)
        if cond.op in ("is null", "is not null"):
            entry: tuple[str, Any] = (cond.op, None)
        else:
            found = [v for value in cond.values for v in values[id(value)]]
            if cond.op == "in":
                found = _distinct([v for v in found if v is not None
                                   and not (integer and _inexact(v))])
                if not found:
                    return None
                entry = ("in", found)
            elif not found or found[0] is None:
                return None  # a comparison with NULL is never true
            elif integer and _inexact(found[0]):
                bounds = integer_bounds(ref.resource.column(cond.column).pg_type)
                assert bounds is not None
                met = integer_condition(cond.op, found[0], bounds)
                if met is None:
                    return None
                entry = met
            else:
                entry = (cond.op, found[0])
        if entry not in where.setdefault(cond.column, []):
            where[cond.column].append(entry)
    return {c: tuple(conds) for c, conds in where.items()}


def _distinct(values: list[Any]) -> list[Any]:
    """Values once each, in order; jsonb's lists and objects among them, which a dict
    cannot key, compared one by one."""
    try:
        return list(dict.fromkeys(values))
    except TypeError:
        out: list[Any] = []
        for value in values:
            if value not in out:
                out.append(value)
        return out


def _inexact(value: Any) -> bool:
    """Of an integer column's values: a number that ``exact`` kept as a Decimal, which no
    value of the column equals."""
    return type(value) is decimal.Decimal


def _is_integer(ref: Reference, column: str) -> bool:
    found = ref.resource.column(column)
    return found is not None and integer_bounds(found.pg_type) is not None


def _limit(ref: Reference, values: dict[int, list[Any]]) -> int | None:
    """The LIMIT (plus OFFSET) that applies to this reference alone, as a number."""
    if ref.limit is None:
        return None
    total = 0
    for value in (ref.limit, ref.offset):
        if value is not None:
            got = values[id(value)]
            if not got or got[0] is None:
                return None  # LIMIT NULL / ALL: no limit
            total += max(0, int(got[0]))
    return total


def converted(value: Value, column: Any, params: Sequence[Any]) -> list[Any] | None:
    """A pushed-down value converted in Python, when it can be (a constant, a text
    parameter that converts, a binary one whose cast changes nothing); None when
    Postgres must convert it (``resolve.evaluate_value``)."""
    if value.is_set:
        return None
    if value.is_const:
        raw = value.const
    elif value.param is not None and value.param <= len(params):
        param = params[value.param - 1]
        if param.value is None:
            raw = None
        elif param.format == 0:
            raw = param.value.decode()
        else:
            raw = _binary(param, column.pg_type)
            if raw is _POSTGRES:
                return None
    else:
        return None
    pg_type = column.pg_type.lower()
    if pg_type in _PARSED_BY_POSTGRES or pg_type in _SETTINGS_DEPENDENT:
        return None  # '\\x00ff' is two bytes and '{"a": 1}' an object, not text
    if raw is None:
        return [None]
    settled = _SETTLED_TEXT.get(pg_type)
    if settled is not None and isinstance(raw, str) and not settled.fullmatch(raw.strip()):
        return None  # DateStyle and TimeZone decide what it means: Postgres reads it
    bounds = integer_bounds(pg_type) if column is not COUNT else None  # LIMIT 2.5 is 3
    if bounds is not None and _is_number(value.node):
        try:
            return [exact(decimal.Decimal(str(raw)), bounds)]
        except decimal.InvalidOperation:
            return None
    try:
        return [column.convert(raw)]
    except ValidationError:
        return None  # let Postgres convert it, and word the error


def integer_bounds(pg_type: str) -> tuple[int, int] | None:
    """The range of an integer column type; None for any other type."""
    bound = _INTEGERS.get(pg_type.lower())
    return None if bound is None else (-bound, bound - 1)


def exact(number: decimal.Decimal, bounds: tuple[int, int]) -> int | decimal.Decimal:
    """A number for an integer column: an int when it is a whole one in range, else the
    Decimal itself, which no value of the column equals."""
    if number.is_finite() and number == number.to_integral_value() and (
            bounds[0] <= number <= bounds[1]):
        return int(number)
    return number


def _is_number(node: Any) -> bool:
    """Whether a constant is a numeric literal (``33.5``, ``1e20``), not quoted text."""
    return isinstance(node, ast.A_Const) and isinstance(node.val, ast.Integer | ast.Float)


def integer_condition(op: str, number: decimal.Decimal, bounds: tuple[int, int]
                      ) -> tuple[str, Any] | None:
    """The condition on an integer column true of the same rows as ``column op number``,
    for a number no value of the column equals; None when no row can meet it."""
    low, high = bounds
    if number.is_nan():
        number = decimal.Decimal("Infinity")  # NaN sorts above every number
    floor = math.floor(number) if number.is_finite() else None
    ceil = math.ceil(number) if number.is_finite() else None
    if op == "=":
        return None
    if op == "<>":
        return ("is not null", None)
    if op in (">", ">="):
        # col > n is col >= ceil(n) when n is not whole, and so is col >= n.
        first = ceil if floor is not None else (high + 1 if number > 0 else low - 1)
        assert first is not None
        if first > high:
            return None
        return ("is not null", None) if first <= low else (">=", first)
    # col < n and col <= n are col <= floor(n).
    last = floor if floor is not None else (high + 1 if number > 0 else low - 1)
    assert last is not None
    if last < low:
        return None
    return ("is not null", None) if last >= high else ("<=", last)


def _binary(param: Param, pg_type: str) -> Any:
    """A binary parameter's value when its cast to ``pg_type`` changes nothing; else
    ``_POSTGRES``."""
    pg_type = pg_type.lower()
    raw = param.value
    assert raw is not None
    size = _INTEGER_SIZES.get(param.oid)
    if size is not None:  # int2, int4, int8: any integer column it fits
        bound = _INTEGERS.get(pg_type)
        if bound is None or len(raw) != size:
            return _POSTGRES  # Postgres casts it, or says the value is malformed
        value = int.from_bytes(raw, "big", signed=True)
        return value if -bound <= value < bound else _POSTGRES
    if pg_type not in _SAME.get(param.oid, ()):
        return _POSTGRES
    try:
        return raw.decode() if param.oid in (25, 1043) else decode_value(param.oid, raw, 1)
    except (ValueError, UnicodeDecodeError, struct.error):
        return _POSTGRES

