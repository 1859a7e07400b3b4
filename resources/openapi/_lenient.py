"""What a document says when it says little, or says it its own way: the type of a
parameter whose schema says nothing (text, as every value in a URL is) or names a type
Swagger does not have (httpbin's ``int``); the type of an answer with no schema, by the
media types the operation names; an enum's values, wherever they were said; the name
FastAPI made an operationId from. No I/O.
"""

from __future__ import annotations

import re

from ._schemas import pg_type_of
from ._spec import Operation, Parameter, Schema

__all__ = ["body_type", "fastapi_name", "param_type", "says_nothing", "with_values"]

# Swagger 2.0 types some documents spell their own way (httpbin's "int").
_TYPE_WORDS = {"int": "integer", "long": "integer", "float": "number", "double": "number",
               "bool": "boolean", "str": "string"}
# What says a schema is of some type: a parameter's schema without any is a URL's text.
_TYPED = ("type", "enum", "oneOf", "anyOf", "allOf", "properties", "format", "items")
# Media types whose body is bytes, not text: a GET with no schema that answers one of
# them is a bytea column.
_BINARY = ("application/octet-stream", "application/pdf", "application/zip", "image/",
           "audio/", "video/", "font/")


def param_type(p: Parameter) -> str:
    """A parameter's column type (an array parameter's: its items'); a parameter whose
    schema says nothing is text, as every value in a URL or a header is."""
    schema = p.schema.sub(p.schema.get("items")) if p.is_array else p.schema
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _TYPE_WORDS:
        schema = Schema({**schema.contents, "type": _TYPE_WORDS[kind]}, schema.resolver,
                        schema.ref)
    elif not any(k in schema.contents for k in _TYPED):
        return "text"
    return pg_type_of(schema)


def says_nothing(schema: Schema | None) -> bool:
    """Whether a response's schema is none, or one that says nothing of its type (``{}``,
    FastAPI's for a handler with no response model)."""
    return schema is None or not any(k in schema.contents for k in (
        *_TYPED, "additionalProperties", "required"))


def with_values(text: str, *described: str) -> str:
    """A description that keeps an enum's allowed values, wherever they were said."""
    if "one of: " in text:
        return text
    for said in described:
        at = said.find("one of: ")
        if at >= 0:
            values = said[at:].removesuffix(")")
            return f"{text} ({values})" if text else values
    return text


def body_type(op: Operation) -> str:
    """The column type of a GET's answer with no schema, by the media types it declares:
    jsonb (JSON, or nothing said), bytea (bytes), else text."""
    media = op.media
    if not media or any(m == "application/json" or m.endswith("+json") or m == "*/*"
                        for m in media):
        return "jsonb"
    if all(m.startswith(_BINARY) for m in media):
        return "bytea"
    return "text"


def fastapi_name(op: Operation) -> str | None:
    """The name FastAPI's operationId was made from (``<name>_<path>_<method>``, the path's
    every non-word character a ``_``), or None when it is not one of those."""
    op_id = op.operation_id or ""
    tail = re.sub(r"\W", "_", op.path) + "_" + op.method.lower()
    return op_id.removesuffix(tail) if op_id.endswith(tail) and len(op_id) > len(tail) \
        else None
