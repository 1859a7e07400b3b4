"""Resolved rows as statement parameters, and the SQL that turns them back into rows.

Rows travel with the statement that reads them, as text parameters, and become
typed rows in the sidecar: nothing is left behind when a statement fails, and no
DDL runs per statement. Two encodings, chosen by the resource's column types:

- Column arrays, one parameter per column, read by ``SELECT unnest($1::bigint[]),
  unnest($2::text[]), …``: when every column has a plain scalar type (numbers,
  text, booleans, dates and times, uuid, bytea, json, jsonb…). Postgres parses
  an array literal several times faster than JSON objects.
- One JSON array of objects, read by ``json_populate_recordset(NULL::<shell
  table>, $1::json)``: for anything else (arrays, composite and other types).

Either way each value reaches the column type's own input function as the same
text: its JSON text, a JSON string unquoted (json and jsonb columns take the JSON
text itself). So types, typmods and error messages are Postgres's own.
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import json
import math
import re
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Any

from pydantic_core import to_json

from glove_scratchpad.resources import Resource

from ._catalog import SERVED_SCHEMA, qualified, quote_ident

__all__ = ["populate_sql", "rows_params", "rows_to_json"]

# Types whose array literal's elements are the same text their input function reads
# in a JSON object field (normalised names: lower case, typmods dropped).
# fmt: off
_SCALAR_TYPES = frozenset((
    "bigint", "int8", "integer", "int", "int4", "smallint", "int2", "numeric", "decimal",
    "double precision", "float8", "real", "float4", "float", "money", "boolean", "bool",
    "text", "character varying", "varchar", "character", "char", "bpchar", "name",
    "date", "time", "time without time zone", "time with time zone", "timetz", "timestamp",
    "timestamp without time zone", "timestamp with time zone", "timestamptz", "interval",
    "uuid", "bytea", "inet", "cidr", "macaddr", "json", "jsonb"))
_FLOAT_TYPES = frozenset((
    "double precision", "float8", "real", "float4", "float", "numeric", "decimal"))
# fmt: on
_JSON_TYPES = frozenset(("json", "jsonb"))
# With a length (char alone is char(1)), these go as JSON: a typmod reaches an array's
# elements through an explicit cast, which cuts a value too long where input refuses it.
_LENGTH_TYPES = frozenset(("character varying", "varchar", "character", "char", "bpchar"))
# Types whose JSON is a string of _json_default's.
_PLAIN_TEXT = frozenset(
    (dt.datetime, dt.date, dt.time, dt.timedelta, decimal.Decimal, uuid.UUID, bytes, bytearray)
)
_NONE = type(None)
_FLOAT_TEXT = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


@lru_cache(maxsize=1024)
def _type_name(pg_type: str) -> str:
    return " ".join(re.sub(r"\([^)]*\)", "", pg_type).lower().split())


def _scalar(pg_type: str) -> bool:
    name = _type_name(pg_type)
    if name in _LENGTH_TYPES and ("(" in pg_type or name in ("character", "char")):
        return False
    return name in _SCALAR_TYPES


@lru_cache(maxsize=1024)
def _columnar(pg_types: tuple[str, ...]) -> bool:
    return all(map(_scalar, pg_types))


def _is_columnar(resource: Resource) -> bool:
    return _columnar(tuple(c.pg_type for c in resource.columns))


def populate_sql(
    resource: Resource, param: int, schema: str = SERVED_SCHEMA, alias: str = "_gs_rows"
) -> str:
    """A FROM item, named ``alias``: the typed rows of the parameters ``rows_params``
    made, the first of them ``$param``."""
    if not _is_columnar(resource):
        return (
            f"json_populate_recordset(NULL::{qualified(resource.name, schema)},"
            f" ${param}::json) AS {quote_ident(alias)}"
        )
    # unnest() in the select list: the arrays are zipped row by row as they are read,
    # never first copied into a tuplestore. The cast keeps a typmod (numeric(10,2)).
    columns = ", ".join(
        f"unnest(${param + i}::{c.pg_type}[])::{c.pg_type} AS {quote_ident(c.name)}"
        for i, c in enumerate(resource.columns)
    )
    return f"(SELECT {columns}) AS {quote_ident(alias)}"


def rows_params(resource: Resource, rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Rows as the text parameters ``populate_sql`` reads, in order."""
    rows = rows if isinstance(rows, list) else list(rows)
    if not _is_columnar(resource):
        return [rows_to_json(resource, rows)]
    return [_array(_column(rows, c.name), _type_name(c.pg_type)) for c in resource.columns]


def _column(rows: list[Mapping[str, Any]], name: str) -> list[Any]:
    try:
        return list(map(itemgetter(name), rows))
    except KeyError:  # a row without the column: NULL there
        return [row.get(name) for row in rows]


def _array(values: list[Any], type_name: str) -> str:
    """One column as an array literal: each element quoted, or NULL."""
    kinds = set(map(type, values))
    nulls = _NONE in kinds
    kinds.discard(_NONE)
    if type_name in _JSON_TYPES:
        return _literal(_texts(values, _ENCODER.encode, nulls), nulls)
    if kinds <= {str}:
        return _literal(values, nulls)
    if kinds <= {int} or kinds <= {bool} or (kinds <= {float} and type_name in _FLOAT_TYPES):
        # As JSON (floats: shortest round-trip digits, NaN and Infinity as strings), the
        # elements of an array whose null reads as NULL; made in one pass, not per value.
        text = to_json(values, inf_nan_mode="strings").decode()
        return "{" + text[1:-1] + "}"
    return _literal(_texts(values, _scalar_text, nulls), nulls)


def _texts(values: list[Any], text: Callable[[Any], str], nulls: bool) -> list[str | None]:
    if nulls:
        return [None if v is None else text(v) for v in values]
    return list(map(text, values))


def _literal(texts: list[str | None], nulls: bool) -> str:
    if not texts:
        return "{}"
    if not nulls:
        body = '","'.join(texts)  # type: ignore[arg-type]
        if "\\" not in body and body.count('"') == 2 * (len(texts) - 1):
            return '{"' + body + '"}'  # nothing to escape
    return "{" + ",".join(map(_element, texts)) + "}"


def _element(text: str | None) -> str:
    if text is None:
        return "NULL"
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _scalar_text(value: Any) -> str:
    """The text a scalar column's input function gets from the value's JSON."""
    if type(value) in _PLAIN_TEXT:
        return _json_default(value)  # the string json would have written
    text = _ENCODER.encode(value)
    return json.loads(text) if text.startswith('"') else text


# -- one JSON array of objects -------------------------------------------------------


def _json_default(value: Any) -> Any:
    if isinstance(value, enum.Enum):  # a str/int mix-in never gets here: json writes those
        return value.value
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return f"P{value.days}DT{value.seconds}.{value.microseconds:06d}S"
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return "\\x" + bytes(value).hex()
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"cannot serialise {type(value).__name__} for the sidecar")


_ENCODER = json.JSONEncoder(default=_json_default, ensure_ascii=False, separators=(",", ":"))


def _float_safe(
    rows: list[Mapping[str, Any]], float_columns: Sequence[str]
) -> list[Mapping[str, Any]]:
    # JSON has no Infinity or NaN; as strings, float8in reads them back exactly.
    out = []
    for row in rows:
        bad = {
            name: _FLOAT_TEXT[repr(v)]
            for name in float_columns
            if isinstance(v := row.get(name), float) and not math.isfinite(v)
        }
        out.append({**row, **bad} if bad else row)
    return out


def rows_to_json(resource: Resource, rows: Iterable[Mapping[str, Any]]) -> str:
    """Rows as one JSON array of objects (what ``populate_sql`` reads for a resource
    whose columns are not all scalar)."""
    rows = list(rows)
    floats = [c.name for c in resource.columns if c.pg_type in ("double precision", "real")]
    if floats:
        rows = _float_safe(rows, floats)
    return _ENCODER.encode(rows)
