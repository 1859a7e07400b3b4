"""JSON Schema to Postgres types, and any name as a SQL identifier.

Shared by the MCP bridge (tool schemas become columns), the OpenAPI bridge and
the function catalog (input schemas become named parameters). Pure functions, no I/O.

Rules: a schema comes from an upstream the user does not control, so every walk
of one is memoized (a node is resolved once however many ``anyOf`` reach it) and
bounded: ``$ref`` chains and nesting by depth, what one schema stands for expanded by
``MAX_SCHEMA_NODES`` (a "billion laughs" of references), and the whole walk by
``MAX_WALK_STEPS`` (``SchemaTooLarge`` past either). A name is never one Postgres
keeps for itself (a system column such as ``xmin``): it gets a trailing ``_``, as a
keyword does.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from ._resource import SYSTEM_COLUMNS, ResourceDefinitionError

__all__ = ["MAX_IDENTIFIER", "MAX_SCHEMA_NODES", "MAX_WALK_STEPS", "SYSTEM_COLUMNS",
           "SchemaTooLarge", "Walk", "json_type", "resolve", "schema_type", "snake", "sql_name",
           "walking"]

MAX_IDENTIFIER = 63  # NAMEDATALEN - 1: Postgres truncates longer names
_MAX_DEPTH = 16  # $ref chains followed before a schema counts as unknown
# Schema nodes one walk (one tool's schemas, one API's document) may visit, each once:
# far above what a real document needs (GitHub's whole REST API: under 300).
MAX_WALK_STEPS = 500_000
# Nodes one schema may stand for once its references are expanded (each path through
# its anyOf, oneOf and allOf counted; a cycle counted once): a real one stands for a few
# hundred, a schema of unions of references nested 20 deep for 8**20.
MAX_SCHEMA_NODES = 100_000
T = TypeVar("T")
_UNDER_WAY: Any = object()  # memoized while its own resolution is under way


class SchemaTooLarge(ResourceDefinitionError):
    """A schema past a limit of the walk: ``MAX_SCHEMA_NODES`` or ``MAX_WALK_STEPS``."""


class Walk:
    """One walk over schemas: what each node gave, what it stands for expanded, and the
    steps taken so far."""

    def __init__(self, steps: int = MAX_WALK_STEPS, nodes: int = MAX_SCHEMA_NODES) -> None:
        self.max_steps, self.max_nodes = steps, nodes
        self.steps = 0
        # id of a node (kept alive here, so that its id names it) -> (node, result, size)
        self.memo: dict[Any, tuple[Any, Any, int]] = {}

    def once(self, key: Any, node: Any, compute: Callable[[], tuple[T, int]],
             cycle: T) -> tuple[T, int]:
        """What ``compute`` gives for ``node`` (a value, and how many nodes it stands for
        expanded), computed once per walk; ``cycle`` when asked again while it is being
        computed (a cycle of references, which adds nothing)."""
        found = self.memo.get(key)
        if found is not None and found[0] is node:
            return (cycle, 1) if found[1] is _UNDER_WAY else (found[1], found[2])
        self.steps += 1
        if self.steps > self.max_steps:
            raise SchemaTooLarge(
                f"its schemas take more than {self.max_steps:,} steps to walk (the limit "
                "MAX_WALK_STEPS)")
        self.memo[key] = (node, _UNDER_WAY, 1)
        result, size = compute()
        if size > self.max_nodes:
            raise SchemaTooLarge(
                f"a schema of it stands for more than {self.max_nodes:,} nodes once its "
                "references are expanded (the limit MAX_SCHEMA_NODES): anyOf, oneOf or allOf "
                "of references, nested, multiply")
        self.memo[key] = (node, result, size)
        return result, size


_WALK: contextvars.ContextVar[Walk | None] = contextvars.ContextVar("glove_schema_walk",
                                                                   default=None)


@contextlib.contextmanager
def walking() -> Iterator[Walk]:
    """One walk's memo and bounds for every schema read inside it (a walk already under
    way goes on)."""
    walk = _WALK.get()
    if walk is not None:
        yield walk
        return
    walk = Walk()
    token = _WALK.set(walk)
    try:
        yield walk
    finally:
        _WALK.reset(token)


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
    if out in reserved or out in SYSTEM_COLUMNS:
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
    """A schema with local ``$ref`` followed and ``anyOf: [X, null]`` unwrapped to X.

    Memoized within a walk (``walking``; one of its own when none is under way)."""
    with walking() as walk:
        return dict(_sized(schema, root, depth, walk)[0])


def _sized(schema: Any, root: Mapping[str, Any], depth: int,
           walk: Walk) -> tuple[dict[str, Any], int]:
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return {}, 1
    # A $ref cycle says nothing more down there: {}.
    return walk.once(("resolve", id(schema), id(root)), schema,
                     lambda: _resolve(schema, root, depth, walk), {})


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int,
             walk: Walk) -> tuple[dict[str, Any], int]:
    schema, size = dict(schema), 1
    ref = schema.pop("$ref", None)
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, Mapping) else None
        found, n = _sized(target, root, depth + 1, walk)
        schema, size = {**found, **schema}, size + n
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            real = []
            for option in options:
                found, n = _sized(option, root, depth + 1, walk)
                size += n
                if found.get("type") != "null":
                    real.append(found)
            if len(real) == 1:
                schema = {**real[0], **{k: v for k, v in schema.items() if k != key}}
    return schema, size


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
