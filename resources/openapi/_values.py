"""Values between SQL and an HTTP API: an argument as a request carries it, and an answer
that has no schema as the one column it is. No I/O.

Rules:

- **An IN list is not an array.** ``WHERE tag IN ('a', 'b')`` is a list of values
  (``Each``): one call per value, or one call with the list where the parameter takes
  one and the rows say which value they are of. ``WHERE names = '["x1", "x2"]'::jsonb``
  is one value, an array, sent whole in one call.
- **Arguments of every type.** What SQL gives (a jsonb value as lists and objects, a
  SQL array as a list, a date, a numeric) is sent as JSON (``as_json``):
  - a request body's property takes any JSON;
  - a query parameter takes a scalar; an array parameter a list of scalars (the name
    repeated); an object parameter an object of scalars (each property a parameter of
    its own, OpenAPI's default ``form`` style);
  - a path or header parameter takes a scalar, or a list of scalars joined by commas
    (OpenAPI's ``simple`` style: ``/status/200,201``).
  Anything else (an object in a path, a list of lists in a query) is 22023 naming the
  parameter and the JSON it was given, with a HINT; never a TypeError.
- **An answer with no schema** (``body_value``) is the value of its one column: jsonb
  takes the JSON the API sent (a body that is not JSON as a JSON string of its text,
  an empty body as NULL), text the body's text, bytea its bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx
from pydantic_core import to_jsonable_python

from glove_scratchpad import errors
from glove_scratchpad.redaction import redact_secrets

__all__ = ["Each", "as_json", "body_value", "distinct", "from_body", "query_value", "segment",
           "shown_body", "simple_value"]

SHOWN_BODY = 300  # characters of a request body EXPLAIN shows

_SCALARS = (str, int, float, bool)


class Each(list[Any]):
    """The values of an IN list: one call per value (never an array value itself)."""


def distinct(values: list[Any]) -> list[Any]:
    """The values of an IN list once each, in order (a list or an object among them too,
    which a set cannot hold)."""
    seen: dict[str, Any] = {}
    for value in values:
        seen.setdefault(json.dumps(as_json(value), sort_keys=True), value)
    return list(seen.values())


def as_json(value: Any) -> Any:
    """A value SQL gave, as JSON (dates, numerics and uuids as their text)."""
    return to_jsonable_python(value)


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _refused(where: str, value: Any, takes: str, column: str) -> errors.SqlError:
    return errors.InvalidParameterValue(
        f"{where} takes {takes}, not {_shown(value)}",
        hint=f"Give {column} a value of that shape (\\d+ the table says what each column "
        "takes), or an IN list for one call per value.")


def _scalar(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def query_value(value: Any, name: str, kind: str, column: str, where: str) -> Any:
    """A query parameter's value as httpx sends it: a scalar, a list of scalars (an array
    parameter, the name repeated), or a dict of scalars (an object, each property a
    parameter of its own)."""
    value = as_json(value)
    if isinstance(value, _SCALARS):
        return _scalar(value)
    if isinstance(value, list) and all(isinstance(v, _SCALARS) for v in value):
        if kind == "array" or isinstance(value, Each):
            return [_scalar(v) for v in value]
        raise _refused(f"{where}: the query parameter {name}", value, "one value", column)
    if isinstance(value, Mapping) and kind == "object" and all(
            isinstance(v, _SCALARS) for v in value.values()):
        return {str(k): _scalar(v) for k, v in value.items()}
    takes = {"array": "a list of scalars", "object": "an object of scalars"}.get(kind,
                                                                              "one value")
    raise _refused(f"{where}: the query parameter {name}", value, takes, column)


def simple_value(value: Any, name: str, location: str, column: str, where: str) -> str:
    """A path or header parameter's value as text: a scalar, or a list of scalars joined
    by commas."""
    value = as_json(value)
    if isinstance(value, _SCALARS):
        return _scalar(value)
    if isinstance(value, list) and value and all(isinstance(v, _SCALARS) for v in value):
        return ",".join(map(_scalar, value))
    raise _refused(f"{where}: the {location} parameter {name}", value,
                   "a scalar or a list of scalars", column)


def segment(where: str, name: str, value: Any) -> str:
    """A path parameter's value as one segment of the URL: every character but letters,
    digits and ``-._~`` percent-encoded (a ``/`` too), so that no value adds a segment;
    ``.``, ``..`` and the empty string, which would climb, stay or drop one once the URL
    is normalized, are refused."""
    text = simple_value(value, name, "path", name, where)
    if text in ("", ".", ".."):
        raise errors.InvalidParameterValue(
            f"{where}: the path parameter {name} cannot be {text!r}",
            detail="As a whole segment it would change which URL the request goes to.",
            hint=f"Give {name} the value of one item, as the API names it.")
    return quote(text, safe="")


def shown_body(body: Any) -> str:
    """A request body as EXPLAIN shows it: its JSON, every configured secret redacted,
    cut short."""
    text = redact_secrets(json.dumps(body, ensure_ascii=False, default=str))
    return text if len(text) <= SHOWN_BODY else text[:SHOWN_BODY - 3] + "..."


def body_value(response: httpx.Response, pg_type: str) -> Any:
    """The whole answer as the value of a column of ``pg_type`` (jsonb, text or bytea)."""
    if pg_type == "bytea":
        return response.content
    if not response.content.strip():
        return None
    if pg_type != "jsonb":
        return response.text.replace("\x00", "")  # text cannot hold NUL
    try:
        return response.json()
    except ValueError:
        return response.text.replace("\x00", "")  # a JSON string of what it said


def from_body(column: str, pg_type: str, response: httpx.Response, row: dict[str, Any]
              ) -> dict[str, Any]:
    """The one row of an answer with no schema: ``row`` (the arguments it was asked with)
    and the body as ``column``."""
    return {**row, column: body_value(response, pg_type)}
