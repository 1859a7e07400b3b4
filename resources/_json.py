"""A value an upstream sent as JSON, as the value of its column: the one rule of HTTP
APIs' rows and MCP tools' rows.

Rules:

- A value is what the upstream sent, or an error: never converted to another type
  silently. The column's type says which JSON values it takes:

  | column | takes |
  | --- | --- |
  | boolean | ``true``, ``false`` |
  | bigint | a number without a fraction (``12``, ``12.0``) |
  | double precision, numeric | a number |
  | text | a string; a number or boolean as its JSON text (1) |
  | timestamptz, date, time | an ISO 8601 string (``2024-05-01T12:00:00Z``) |
  | uuid | a string (Postgres checks its form) |
  | jsonb, json, and any other | any JSON |

  (1) a union of scalars (an id given as a string or a number) maps to text.
- ``null`` is NULL here; whether the column may be NULL is its table's rule.
- Anything else (``"yes"`` for a boolean, ``true`` or ``" 12 "`` for a bigint, an
  epoch number for a timestamptz, an object for text) is 38000, naming the source,
  the field, the JSON type it sent and the column's type.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from typing import Any

from glove_scratchpad.errors import ExternalRoutineError

__all__ = ["AS_SENT", "json_type", "json_value"]

# ISO 8601's extended form, as APIs write it; a basic form (20240501) or an epoch given
# as a string is not one.
_DATE = r"\d{4}-\d{2}-\d{2}"
_TIME = r"\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|z|[+-]\d{2}(?::?\d{2})?)?"
_TIMESTAMP = re.compile(rf"{_DATE}(?:[Tt ]{_TIME})?")
_DATE_ONLY = re.compile(_DATE)
_TIME_ONLY = re.compile(_TIME)


def json_type(value: Any) -> str:
    """The JSON type of a value, as JSON Schema names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    return "object"


def _boolean(value: Any) -> Any:
    return value if type(value) is bool else _WRONG


def _integer(value: Any) -> Any:
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    return _WRONG


def _number(value: Any) -> Any:
    return value if type(value) in (int, float) else _WRONG


def _text(value: Any) -> Any:
    if type(value) is str:
        return value
    if type(value) in (int, float, bool):
        return json.dumps(value)
    return _WRONG


def _string(value: Any) -> Any:
    return value if type(value) is str else _WRONG


def _parsed(pattern: re.Pattern[str], parse: Callable[[str], Any]) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if type(value) is not str or not pattern.fullmatch(value.strip()):
            return _WRONG
        try:
            return parse(value.strip().replace("z", "Z").replace(",", "."))
        except ValueError:
            return _WRONG
    return check


_WRONG: Any = object()
_RULES: dict[str, Callable[[Any], Any]] = {
    "boolean": _boolean,
    "bigint": _integer, "integer": _integer, "smallint": _integer,
    "double precision": _number, "real": _number, "numeric": _number,
    "text": _text,
    "timestamp with time zone": _parsed(_TIMESTAMP, dt.datetime.fromisoformat),
    "timestamptz": _parsed(_TIMESTAMP, dt.datetime.fromisoformat),
    "date": _parsed(_DATE_ONLY, dt.date.fromisoformat),
    "time without time zone": _parsed(_TIME_ONLY, dt.time.fromisoformat),
    "uuid": _string,
}
# The Python type (as json.loads gives it) each column type takes as it is: a caller
# may skip json_value for a value of exactly this type (most of an API's values).
AS_SENT: dict[str, type] = {"boolean": bool, "bigint": int, "integer": int, "smallint": int,
                            "double precision": float, "real": float, "numeric": float,
                            "text": str, "uuid": str}
_WHAT = {"timestamp with time zone": "an ISO 8601 timestamp", "timestamptz":
         "an ISO 8601 timestamp", "date": "an ISO 8601 date", "time without time zone":
         "an ISO 8601 time"}


def json_value(value: Any, pg_type: str, *, source: str, field: str) -> Any:
    """``value``, sent by ``source`` (``API 'gh'``, ``MCP tool 'x'``) for ``field``, as
    the value of a ``pg_type`` column; 38000 when the column does not take it."""
    if value is None:
        return None
    rule = _RULES.get(pg_type)
    if rule is None:
        return value
    out = rule(value)
    if out is _WRONG:
        shown = json.dumps(value, ensure_ascii=False, default=str)
        raise ExternalRoutineError(
            f'{source} sent a JSON {json_type(value)} for the field "{field}", whose '
            f"column is {pg_type}: {shown[:200]}",
            detail=f"A {pg_type} column takes {_WHAT.get(pg_type, 'a JSON ' + _json(pg_type))}"
            "; the value is not converted.",
            hint="The upstream and its schema disagree: fix the schema (the document, or "
            "the tool's outputSchema) or the upstream; a jsonb column takes any value.")
    return out


def _json(pg_type: str) -> str:
    return {"boolean": "boolean", "bigint": "integer", "integer": "integer",
            "smallint": "integer", "text": "string, number or boolean",
            "uuid": "string"}.get(pg_type, "number")
