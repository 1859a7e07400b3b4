"""Schemas of an OpenAPI document -> the columns of a table, and JSON values -> rows.

Rules:

- A row is an object: its properties are columns. ``allOf`` merges its parts'
  properties (and their ``required``); ``oneOf`` and ``anyOf`` give the union of
  their options' properties, each nullable. A row that is not an object is one
  column, ``value``.
- A free-form object (``additionalProperties`` other than ``false``: a JSON store's
  records, FastAPI's ``dict``; or an object that declares no properties) is one
  jsonb column, ``value``, holding the whole object, beside a column for each
  property it declares: what the API gives and the document does not name is
  still there.
- Types: string -> text (``format: date-time`` -> timestamptz, ``date`` -> date),
  integer -> bigint, number -> double precision, boolean -> boolean; objects,
  arrays, unions of several types and schemas that say nothing -> jsonb. Nested
  objects stay jsonb however deep, so a recursive schema costs nothing.
- An enum is text with its values in the description; descriptions (or titles)
  are comments; a property is NOT NULL when it is ``required`` and not nullable.
- Names become lower-case SQL identifiers (camelCase -> snake_case), unique in
  their table; a keyword or a system column (``xmin``) gets a trailing ``_``.
- A document is untrusted: a part or option is shaped once per walk, and a walk
  takes at most ``MAX_WALK_STEPS`` steps (``resources._schema``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pglast.keywords import RESERVED_KEYWORDS, TYPE_FUNC_NAME_KEYWORDS

from .._schema import Walk, sql_name, walking
from ._spec import Schema

__all__ = ["Field", "column_name", "describe", "pg_type_of", "row_fields", "shape"]

MAX_ALLOF_DEPTH = 8  # allOf inside allOf followed this deep; past it, a part is jsonb
# Words a column cannot be named unquoted; such a column gets a trailing "_".
_KEYWORDS = frozenset(RESERVED_KEYWORDS) | frozenset(TYPE_FUNC_NAME_KEYWORDS)


def column_name(name: str, taken: set[str]) -> str:
    """A JSON name as a column name, unique among ``taken`` (which it joins)."""
    return sql_name(name, fallback="value", taken=taken, reserved=_KEYWORDS)


@dataclass(frozen=True, slots=True)
class Field:
    """One column of a row, and the JSON property it is read from."""

    prop: str  # the JSON property ("" for the whole value: a scalar row, a free-form object)
    column: str
    pg_type: str
    required: bool  # the API always gives it
    nullable: bool
    description: str


def _nullable(schema: Schema) -> bool:
    kind = schema.get("type")
    return bool(schema.get("nullable")) or (isinstance(kind, list) and "null" in kind) or any(
        isinstance(o, Mapping) and o.get("type") == "null"
        for key in ("oneOf", "anyOf") for o in schema.get(key) or ())


def _options(schema: Schema) -> list[Schema]:
    """The non-null options of a oneOf/anyOf."""
    out = []
    for key in ("oneOf", "anyOf"):
        for option in schema.get(key) or ():
            sub = schema.sub(option)
            if sub.get("type") != "null":
                out.append(sub)
    return out


def shape(schema: Schema, depth: int = 0) -> tuple[dict[str, Schema], set[str], bool]:
    """An object schema's properties (allOf merged, oneOf/anyOf united), the required ones,
    and whether it is free-form (``additionalProperties`` other than ``false``, here or in
    a part or option: it holds more than its properties).

    A part or option is shaped once per walk (``walking``), however many unions reach
    it: a document of nested unions of references costs its size, not its paths, and
    one whose paths are too many is ``SchemaTooLarge``."""
    with walking() as walk:
        return _shape(schema, depth, walk)[0]


_Shape = tuple[dict[str, Schema], set[str], bool]
_NOTHING: _Shape = ({}, set(), False)


def _part(schema: Schema, raw: object, depth: int, walk: Walk) -> tuple[_Shape, int]:
    """The shape of a part or option of ``schema``, as written in the document (``raw``),
    and how many nodes it stands for."""
    # A cycle of references adds nothing down there.
    return walk.once(("shape", id(raw)), raw, lambda: _shape(schema.sub(raw), depth, walk),
                     _NOTHING)


def _shape(schema: Schema, depth: int, walk: Walk) -> tuple[_Shape, int]:
    props: dict[str, Schema] = {}
    required: set[str] = set()
    for name, sub in (schema.get("properties") or {}).items():
        props[str(name)] = schema.sub(sub)
    size = 1 + len(props)
    required |= {str(r) for r in schema.get("required") or () if isinstance(r, str)}
    is_free = _free(schema)
    if depth < MAX_ALLOF_DEPTH:
        for part in schema.get("allOf") or ():
            (more, need, free), n = _part(schema, part, depth + 1, walk)
            size += n
            for name, sub in more.items():
                props.setdefault(name, sub)
            required |= need
            is_free = is_free or free
        options = [o for key in ("oneOf", "anyOf") for o in schema.get(key) or ()
                   if schema.sub(o).get("type") != "null"]
        if len(options) > 1 or (options and not props):
            for option in options:  # the union: each property may be absent
                (more, _, free), n = _part(schema, option, depth + 1, walk)
                size += n
                is_free = is_free or free
                for name, sub in more.items():
                    props.setdefault(name, sub)
    return (props, required, is_free), size


def _free(schema: Schema) -> bool:
    """Whether an object may hold properties it does not declare: ``additionalProperties``
    is ``true`` or a schema (``{}`` too, which says nothing of the values)."""
    more = schema.get("additionalProperties")
    return more is True or isinstance(more, Mapping)


def _single_type(schema: Schema) -> Schema:
    """A schema that is one type in the end: allOf of one part, a union of one option."""
    for _ in range(MAX_ALLOF_DEPTH):
        parts = schema.get("allOf")
        if isinstance(parts, list) and len(parts) == 1 and not schema.get("properties"):
            schema = schema.sub(parts[0])
            continue
        options = _options(schema)
        if len(options) == 1 and not schema.get("type"):
            schema = options[0]
            continue
        break
    return schema


def pg_type_of(schema: Schema) -> str:
    """The Postgres type of a value of this schema."""
    schema = _single_type(schema)
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if kind is None and isinstance(schema.get("enum"), list) and all(
            isinstance(v, str) for v in schema.get("enum") or ()):
        kind = "string"
    if kind is None:
        scalars = {o.get("type") for o in _options(schema)}
        if scalars and scalars <= {"string", "integer", "number", "boolean"}:
            # A union of scalars (an id as a string or a number): text holds each.
            kind = ("string" if "string" in scalars else "number" if "number" in scalars
                    else scalars.pop() if len(scalars) == 1 else "string")
    if kind == "string":
        return {"date-time": "timestamp with time zone", "date": "date"}.get(
            str(schema.get("format")), "text")
    return {"integer": "bigint", "number": "double precision", "boolean": "boolean"}.get(
        str(kind), "jsonb")


def describe(schema: Schema) -> str:
    """A column comment: the description (or title), with an enum's values."""
    inner = _single_type(schema)
    text = " ".join(str(schema.get("description") or inner.get("description")
                        or schema.get("title") or inner.get("title") or "").split())
    enum = inner.get("enum")
    if isinstance(enum, list) and enum:
        values = "one of: " + ", ".join(str(v) for v in enum if v is not None)
        text = f"{text} ({values})" if text else values
    return text


def row_fields(schema: Schema, taken: set[str] | None = None) -> list[Field]:
    """The columns of the rows a schema describes (``taken``: names already used)."""
    taken = set() if taken is None else taken
    schema = _single_type(schema)
    props, required, free = shape(schema)
    if not props:
        kind = "jsonb" if free else pg_type_of(schema)
        return [Field("", column_name("value", taken), kind, True, True, describe(schema))]
    out = []
    for name, sub in props.items():
        out.append(Field(name, column_name(name, taken), pg_type_of(sub), name in required,
                         _nullable(sub) or name not in required, describe(sub)))
    if free:  # the whole object: what it holds beyond the properties named above
        out.append(Field("", column_name("value", taken), "jsonb", True, True,
                         "The whole object, as the API gave it (its properties above, and "
                         "any others)"))
    return out
