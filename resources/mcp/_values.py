"""Values between SQL and JSON: a tool's arguments in, its result's rows out.

Rules:

- An argument goes to the tool as JSON: a jsonb column's text is parsed,
  dates and times are ISO 8601, numerics are numbers, UUIDs strings.
- A result value is what the tool sent: of its column's JSON type (a text column
  takes a string, number or boolean), else an error naming the field
  (``resources._json``, the rule of HTTP rows too); never converted.
- A result's text is every text block (and embedded text resource) joined by
  newlines; it counts as JSON only when it is an object or an array.
- A rows path (``"items.0.rows"``) steps through objects by key and lists by
  index; a step that does not fit gives ``None``, never an error.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
import uuid
from collections.abc import Mapping
from typing import Any

from mcp.types import CallToolResult

from .._json import json_value

__all__ = ["argument", "cell", "maybe_json", "result_text", "split_path", "step"]


def argument(value: Any, pg_type: str) -> Any:
    """A bound or inserted value as the JSON the tool takes."""
    if pg_type in ("jsonb", "json") and isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def cell(value: Any, pg_type: str, *, source: str, field: str) -> Any:
    """A result value ready for its column, by the rule HTTP rows keep too
    (``resources._json``): of its column's JSON type, or an error naming the field."""
    return json_value(value, pg_type, source=source, field=field)


def result_text(result: CallToolResult) -> str | None:
    """The text of a tool result's content blocks, or None when it has none."""
    parts = []
    for block in result.content:
        text = getattr(block, "text", None)
        if text is None:
            text = getattr(getattr(block, "resource", None), "text", None)
        if isinstance(text, str):
            parts.append(text)
    return "\n".join(parts) if parts else None


def maybe_json(text: str | None) -> Any:
    """``text`` parsed, when it is a JSON object or array; else None."""
    if text is None or not text.lstrip().startswith(("{", "[")):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def step(node: Any, segment: str) -> Any:
    """One step of a rows path: a key of an object, or an index of a list."""
    if isinstance(node, Mapping):
        return node.get(segment)
    if isinstance(node, list) and re.fullmatch(r"-?\d+", segment):
        index = int(segment)
        return node[index] if -len(node) <= index < len(node) else None
    return None


def split_path(text: str | None) -> list[str]:
    """A dotted rows path as its segments (``""`` or None: the whole result)."""
    return [p for p in (text or "").split(".") if p]
