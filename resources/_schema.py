"""JSON Schema to Postgres types, and any name as a SQL identifier.

Shared by the MCP bridge (tool schemas become columns) and the function
catalog (input schemas become named parameters). Pure functions, no I/O.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_IDENTIFIER", "json_type", "resolve", "schema_type", "snake", "sql_name"]

MAX_IDENTIFIER = 63  # NAMEDATALEN - 1: Postgres truncates longer names
_MAX_DEPTH = 16  # $ref chains followed before a schema counts as unknown


def snake(name: str) -> str:
    """camelCase and other spellings as snake_case; other characters become ``_``."""
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    name = re.sub(r"[^a-z0-9_]+", "_", name.lower())
    return re.sub(r"_+", "_", name).strip("_")


def sql_name(text: str, *, fallback: str, taken: set[str] | None = None,
             reserved: frozenset[str] = frozenset()) -> str:
    """``text`` as a lower-case identifier a model can write unquoted.

    A name that is too long keeps a hash of the rest; one in ``reserved`` gets a
    trailing ``_``; one in ``taken`` gets ``_2``, ``_3``, … (and is added to it).
    """
    out = snake(text) or fallback
    if out[0].isdigit():
        out = "_" + out
    if out in reserved:
        out += "_"
    if len(out) > MAX_IDENTIFIER:
        digest = hashlib.sha1(out.encode()).hexdigest()[:8]
        out = out[: MAX_IDENTIFIER - 9].rstrip("_") + "_" + digest
    if taken is not None:
        base, n = out, 2
        while out in taken:
            suffix = f"_{n}"
            out = base[: MAX_IDENTIFIER - len(suffix)] + suffix
            n += 1
        taken.add(out)
    return out


def resolve(schema: Any, root: Mapping[str, Any], depth: int = 0) -> dict[str, Any]:
    """A schema with local ``$ref`` followed and ``anyOf: [X, null]`` unwrapped to X."""
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return {}
    schema = dict(schema)
    ref = schema.pop("$ref", None)
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, Mapping) else None
        schema = {**resolve(target, root, depth + 1), **schema}
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            real = [o for o in options if resolve(o, root, depth + 1).get("type") != "null"]
            if len(real) == 1:
                inner = resolve(real[0], root, depth + 1)
                schema = {**inner, **{k: v for k, v in schema.items() if k != key}}
    return schema


def json_type(schema: Mapping[str, Any]) -> str | None:
    """The one non-null JSON type a schema allows, or None."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    enum = schema.get("enum")
    if kind is None and isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
        kind = "string"
    if kind is None and "properties" in schema:
        kind = "object"
    return kind if isinstance(kind, str) else None


def schema_type(schema: Mapping[str, Any]) -> str:
    """string -> text (date-time -> timestamptz, date -> date), integer -> bigint,
    number -> double precision, boolean -> boolean, anything else -> jsonb."""
    kind = json_type(schema)
    if kind == "string":
        return {"date-time": "timestamp with time zone", "date": "date"}.get(
            str(schema.get("format")), "text"
        )
    return {"integer": "bigint", "number": "double precision", "boolean": "boolean"}.get(
        kind or "", "jsonb"
    )
