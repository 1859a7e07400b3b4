"""JSON Schema -> columns: names, Postgres types and comments for a tool's fields.

A tool's input and output schemas are JSON Schema. This module reads them: the
properties of an object (``$ref`` resolved), the items of an array, and what a
field's description, enum, format and default say, as a column comment. It
turns names into SQL identifiers and pairs each column with the JSON field it
stands for.

Rules:

- Every name becomes a lower-case SQL identifier of at most 63 characters; a
  column is never named like a reserved word (it gets a trailing ``_``).
- Types come from ``resources._schema.schema_type``: string -> text (format
  ``date-time`` -> timestamptz, ``date`` -> date), integer -> bigint, number ->
  double precision, boolean -> boolean, anything else -> jsonb.
- Of SQL this module knows only Postgres' reserved words.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pglast.keywords import RESERVED_KEYWORDS, TYPE_FUNC_NAME_KEYWORDS

from .._columns import Column
from .._resource import PG_TO_PY
from .._schema import json_type, resolve, sql_name

__all__ = [
    "JsonField",
    "column_of",
    "describe",
    "is_array",
    "items",
    "properties",
    "sql_identifier",
]

# Words a column cannot be named unquoted; such a column gets a trailing "_".
_KEYWORDS = frozenset(RESERVED_KEYWORDS) | frozenset(TYPE_FUNC_NAME_KEYWORDS)


def sql_identifier(name: str, *, taken: set[str] | None = None, column: bool = False) -> str:
    """``name`` as a lower-case SQL identifier (letters, digits, _; at most 63 characters).

    camelCase becomes snake_case and other characters ``_``. A name that is
    too long keeps a hash of the rest; a name in ``taken`` gets ``_2``, ``_3``,
    …; a column named like a reserved word gets a trailing ``_``.
    """
    return sql_name(name, fallback="value" if column else "tool", taken=taken,
                    reserved=_KEYWORDS if column else frozenset())


def describe(schema: Mapping[str, Any], *, optional_argument: bool = False) -> str:
    """A column comment: the description, then enum, format and (for arguments) default."""
    text = str(schema.get("description") or "").strip()
    extras = []
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        extras.append("one of: " + ", ".join(str(v) for v in enum))
    fmt = schema.get("format")
    if fmt and fmt not in ("date-time", "date"):
        extras.append(f"format: {fmt}")
    if optional_argument and schema.get("default") is not None:
        extras.append("default: " + json.dumps(schema["default"], ensure_ascii=False))
    if extras:
        text = f"{text} ({'; '.join(extras)})" if text else "; ".join(extras)
    if optional_argument:
        text = ("Optional argument. " + text).strip()
    return text


def properties(schema: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """An object schema's properties, each resolved against ``root``."""
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return {}
    return {str(name): resolve(sub, root) for name, sub in props.items()}


def is_array(schema: Mapping[str, Any]) -> bool:
    return json_type(schema) == "array"


def items(schema: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    """An array schema's item schema, resolved against ``root``."""
    return resolve(schema.get("items"), root)


@dataclass(frozen=True, slots=True)
class JsonField:
    """A column and the JSON field (argument or result property) it stands for."""

    column: str
    source: str | None  # None: the whole value (a row that is a scalar)
    pg_type: str

    @property
    def key(self) -> str:
        """The argument's name (argument fields always have one)."""
        assert self.source is not None
        return self.source


def column_of(name: str, pg_type: str, description: str = "") -> Column:
    """A ``Column`` of this Postgres type, with the Python type its values have."""
    return Column(
        name=name, pg_type=pg_type, description=description, py_type=PG_TO_PY.get(pg_type, Any)
    )
