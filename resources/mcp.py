"""MCP servers as tables: each tool of a server becomes one resource.

A server is configured by ``McpServerConfig`` (stdio: ``command``/``args``/
``env``; or streamable HTTP: ``url``/``headers``). ``McpConnection`` keeps one
session with it, and ``mcp_resources`` turns its tools into resources named
``<namespace>_<tool>``. ``McpBridge`` does this for several servers at once, so
that one server being down costs only its own tables.

How a tool becomes a table:

- A tool whose ``annotations.readOnlyHint`` is true is a ``select`` resource.
  Its required arguments are required keys (``WHERE arg = …``), its optional
  ones optional columns, bound the same way. Its volatility is ``stable``: the
  tool promises to change nothing, so reusing its answer within one client
  request skips no effect, and a statement that reads it twice (a self-join, a
  subquery) sees one consistent answer, as with Postgres' own STABLE functions.
  An override can make it ``volatile`` or ``immutable``.
- Any other tool is a ``volatile`` ``insert`` resource: its arguments are the
  columns, each inserted row is one call, and the rows it returns come back as
  the created rows (``INSERT … RETURNING``). A tool whose only argument is an
  array of objects (``create_entities(entities=[…])``) is called once per
  statement instead, each row one element of that array (``batch``).
- The result columns come from the ``outputSchema``: an array (or an object
  whose only property is an array) gives one row per element, an object one
  row. Without an output schema the columns are ``text`` (the text content)
  and ``result`` (the structured content, or the text parsed when it is a JSON
  object or array). The argument columns follow, so that every argument is
  visible and can be bound in WHERE.
- JSON Schema types map to Postgres: string -> text (format ``date-time`` ->
  timestamptz, ``date`` -> date), integer -> bigint, number -> double
  precision, boolean -> boolean, anything else -> jsonb. Descriptions, enums
  (``one of: …``) and defaults become column comments; the tool's description
  becomes the table comment.
- ``ToolOverride`` changes any of this per tool: table name, verb, volatility,
  description, result columns, the path to the rows inside the result
  (``"entities"``, ``"items.0.rows"``) and the batch argument.

Errors: a tool result with ``isError`` is ``McpToolError`` (SQLSTATE 38000)
naming the tool and giving its message. A server that cannot be reached is
``McpServerUnavailable`` naming the server; only its own tables fail, and the
next call starts (or reconnects to) it again.

The SDK's transports and ``ClientSession`` are async context managers whose
task groups must be entered and left by one task, so every session lives in a
task of its own, which holds it open until it is closed. Callers send requests
through the session from their own tasks; a transport that fails cancels only
that owner task, never a caller.

This module knows nothing of the sidecar or the wire; of SQL it knows only
Postgres' reserved words, which no column name may be.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import decimal
import json
import logging
import os
import re
import uuid
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal, cast

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CONNECTION_CLOSED,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    CallToolResult,
    Implementation,
    Tool,
)
from pglast.keywords import RESERVED_KEYWORDS, TYPE_FUNC_NAME_KEYWORDS
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from glove_scratchpad.errors import (
    ExternalRoutineError,
    InvalidParameterValue,
    MissingRequiredKey,
    SqlError,
)

from ._columns import Column
from ._resource import (
    _PG_TO_PY,
    Bindings,
    Resource,
    ResourceDefinitionError,
    Volatility,
    define_resource,
)
from ._schema import json_type, resolve, schema_type, snake, sql_name

__all__ = [
    "ColumnOverride",
    "McpBridge",
    "McpConnection",
    "McpServerConfig",
    "McpServerError",
    "McpServerUnavailable",
    "McpToolError",
    "ToolOverride",
    "mcp_resources",
    "sql_identifier",
    "tool_resource",
]

log = logging.getLogger(__name__)

_NAMESPACE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
# Words a column cannot be named unquoted; such a column gets a trailing "_".
_KEYWORDS = frozenset(RESERVED_KEYWORDS) | frozenset(TYPE_FUNC_NAME_KEYWORDS)
_STDERR_LINES = 20  # lines of a stdio server's stderr kept for error messages

# The Postgres types a column override may name, and their canonical spelling.
_OVERRIDE_TYPES = {
    "text": "text",
    "bigint": "bigint",
    "integer": "integer",
    "int": "integer",
    "smallint": "smallint",
    "double precision": "double precision",
    "real": "real",
    "numeric": "numeric",
    "boolean": "boolean",
    "bool": "boolean",
    "date": "date",
    "timestamptz": "timestamp with time zone",
    "timestamp with time zone": "timestamp with time zone",
    "uuid": "uuid",
    "jsonb": "jsonb",
}


# -- configuration --------------------------------------------------------------------


class ColumnOverride(BaseModel):
    """One result column declared by hand."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(
        default="jsonb",
        description="Postgres type: text, bigint, double precision, "
        "boolean, date, timestamptz, numeric, uuid, jsonb, …",
    )
    description: str = ""
    source: str | None = Field(
        default=None,
        description="The JSON field the value comes from (default:"
        " the field whose column name this is, else the name itself)",
    )

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        canonical = _OVERRIDE_TYPES.get(" ".join(value.lower().split()))
        if canonical is None:
            raise ValueError(
                f"unknown column type {value!r}; use one of "
                + ", ".join(sorted(set(_OVERRIDE_TYPES)))
            )
        return canonical


class ToolOverride(BaseModel):
    """How one tool is served, where the defaults derived from its schemas do not fit."""

    model_config = ConfigDict(extra="forbid")

    table: str | None = Field(default=None, description="The table name, used as given")
    verb: Literal["select", "insert"] | None = None
    volatility: Volatility | None = None
    description: str | None = None
    rows: str | None = Field(
        default=None,
        description="Dotted path to the rows inside the result, e.g."
        ' "entities" or "items.0.rows"; "" for the whole result',
    )
    columns: dict[str, ColumnOverride] | None = Field(
        default=None,
        description="The result columns (name -> type, or name -> ColumnOverride),"
        " replacing the ones derived from the output schema",
    )
    batch: str | Literal[False] | None = Field(
        default=None,
        description="insert: the array argument each row becomes one element of, so that"
        " one INSERT is one call; False to call once per row (default: the tool's only argument"
        " when it is an array of objects)",
    )

    @field_validator("columns", mode="before")
    @classmethod
    def _type_alone(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {
                name: {"type": spec} if isinstance(spec, str) else spec
                for name, spec in value.items()
            }
        return value


class McpServerConfig(BaseModel):
    """One MCP server: how to reach it, and which of its tools to serve, how.

    Read from the configuration file's ``[[mcp.servers]]`` tables. ``env`` is
    added to a minimal inherited environment (HOME, PATH, USER, …).
    """

    model_config = ConfigDict(extra="forbid")

    namespace: str = Field(description="Prefix of the server's table names: <namespace>_<tool>")
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    tools: dict[str, ToolOverride] = Field(default_factory=dict)
    include: list[str] | None = Field(default=None, description="Serve only these tools")
    exclude: list[str] = Field(default_factory=list, description="Never serve these tools")
    timeout: float = Field(default=60.0, gt=0, description="Seconds one tool call may take")
    startup_timeout: float = Field(
        default=30.0, gt=0, description="Seconds the server may take to start"
    )

    @field_validator("namespace")
    @classmethod
    def _check_namespace(cls, value: str) -> str:
        if not _NAMESPACE.match(value):
            raise ValueError(
                f"namespace {value!r} must be a lower-case SQL identifier: a letter,"
                " then letters, digits or _, at most 40 characters"
            )
        if value == "pg" or value.startswith("pg_"):
            raise ValueError(
                f"namespace {value!r} would make table names start with pg_,"
                " which Postgres keeps for itself"
            )
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError(
                f"MCP server {self.namespace!r}: give command (stdio) or url"
                " (streamable HTTP), not both or neither"
            )
        if self.url is not None:
            if self.args or self.env or self.cwd:
                raise ValueError(
                    f"MCP server {self.namespace!r}: args, env and cwd go with command, not url"
                )
            if not self.url.startswith(("http://", "https://")):
                raise ValueError(f"MCP server {self.namespace!r}: url must be http(s)://…")
        elif self.headers:
            raise ValueError(f"MCP server {self.namespace!r}: headers go with url, not command")
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"

    @property
    def where(self) -> str:
        """The command line or URL, for messages."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        return str(self.url)

    def serves(self, tool: str) -> bool:
        """Whether ``include`` and ``exclude`` let this tool through."""
        return (self.include is None or tool in self.include) and tool not in self.exclude


# -- errors -----------------------------------------------------------------------------


class McpServerError(ExternalRoutineError):
    """An MCP server failed as a whole (not one tool call)."""

    def __init__(self, server: str, message: str, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.server = server


class McpServerUnavailable(McpServerError):
    """An MCP server could not be started or reached, or its connection was lost."""

    def __init__(self, server: str, reason: str, *, detail: str | None = None) -> None:
        super().__init__(
            server,
            f'MCP server "{server}" is unreachable: {reason}',
            detail=detail,
            hint=f"Only this server's tables ({server}_*) fail; it is started (or reconnected)"
            " again on the next query that needs it. If this persists, check its command, args"
            " and env (or url and headers) in the configuration.",
        )
        self.reason = reason


class McpToolError(ExternalRoutineError):
    """One tool call failed: the tool reported an error, or the call was refused."""

    def __init__(
        self,
        server: str,
        tool: str,
        table: str,
        message: str,
        *,
        detail: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(
            f'MCP tool "{tool}" of server "{server}" failed: {message}'[:2000],
            detail=detail,
            hint=hint
            or "The tool reported this error. Check the arguments against the column"
            f" descriptions (\\d+ {table}) and try again.",
            table_name=table,
        )
        self.server = server
        self.tool = tool


# -- names ------------------------------------------------------------------------------


def sql_identifier(name: str, *, taken: set[str] | None = None, column: bool = False) -> str:
    """``name`` as a lower-case SQL identifier (letters, digits, _; at most 63 characters).

    camelCase becomes snake_case and other characters ``_``. A name that is
    too long keeps a hash of the rest; a name in ``taken`` gets ``_2``, ``_3``,
    …; a column named like a reserved word gets a trailing ``_``.
    """
    return sql_name(name, fallback="value" if column else "tool", taken=taken,
                    reserved=_KEYWORDS if column else frozenset())


# -- JSON Schema -> columns -------------------------------------------------------------


def _describe(schema: Mapping[str, Any], *, optional_argument: bool = False) -> str:
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


def _properties(schema: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return {}
    return {str(name): resolve(sub, root) for name, sub in props.items()}


def _is_array(schema: Mapping[str, Any]) -> bool:
    return json_type(schema) == "array"


def _items(schema: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    return resolve(schema.get("items"), root)


@dataclass(frozen=True, slots=True)
class _Field:
    """A column and the JSON field (argument or result property) it stands for."""

    column: str
    source: str | None  # None: the whole value (a row that is a scalar)
    pg_type: str

    @property
    def key(self) -> str:
        """The argument's name (argument fields always have one)."""
        assert self.source is not None
        return self.source


def _column(name: str, pg_type: str, description: str = "") -> Column:
    return Column(
        name=name, pg_type=pg_type, description=description, py_type=_PG_TO_PY.get(pg_type, Any)
    )


# -- values -----------------------------------------------------------------------------


def _argument(value: Any, pg_type: str) -> Any:
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


def _cell(value: Any, pg_type: str) -> Any:
    """A result value ready for its column (text columns take any JSON, as text)."""
    if pg_type == "text" and value is not None and not isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return value


def _result_text(result: CallToolResult) -> str | None:
    parts = []
    for block in result.content:
        text = getattr(block, "text", None)
        if text is None:
            text = getattr(getattr(block, "resource", None), "text", None)
        if isinstance(text, str):
            parts.append(text)
    return "\n".join(parts) if parts else None


def _maybe_json(text: str | None) -> Any:
    if text is None or not text.lstrip().startswith(("{", "[")):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _step(node: Any, segment: str) -> Any:
    if isinstance(node, Mapping):
        return node.get(segment)
    if isinstance(node, list) and re.fullmatch(r"-?\d+", segment):
        index = int(segment)
        return node[index] if -len(node) <= index < len(node) else None
    return None


def _path(text: str | None) -> list[str]:
    return [p for p in (text or "").split(".") if p]


# -- one tool as one resource -----------------------------------------------------------


class _ToolTable:
    """The plan of one tool's table: its columns, and how rows and arguments map to JSON."""

    def __init__(
        self, connection: McpConnection, tool: Tool, override: ToolOverride, taken: set[str]
    ) -> None:
        self.connection = connection
        self.server = connection.config.namespace
        self.tool = tool
        self.override = override
        if override.table is not None:
            if override.table in taken:
                raise ResourceDefinitionError(
                    f"MCP server {self.server!r}, tool {tool.name!r}: table name"
                    f" {override.table!r} is already taken"
                )
            self.name = override.table
            taken.add(self.name)
        else:
            self.name = sql_identifier(f"{self.server}_{snake(tool.name) or 'tool'}", taken=taken)
        read_only = bool(tool.annotations and tool.annotations.read_only_hint)
        self.verb = override.verb or ("select" if read_only else "insert")
        self.volatility: Volatility = override.volatility or (
            "stable" if self.verb == "select" else "volatile"
        )

        in_schema = tool.input_schema if isinstance(tool.input_schema, Mapping) else {}
        in_props = _properties(in_schema, in_schema)
        in_required = [p for p in in_schema.get("required") or () if p in in_props]
        self.batch = self._batch_argument(in_props)

        # Argument columns. In batch mode, the array's item fields, then the other arguments.
        arg_specs: list[tuple[str, dict[str, Any], bool, bool]] = []  # source, schema, req, item
        if self.batch is not None:
            item = _items(in_props[self.batch], in_schema)
            item_required = set(item.get("required") or ())
            for source, sub in _properties(item, in_schema).items():
                arg_specs.append((source, sub, source in item_required, True))
        arg_specs += [
            (s, sub, s in in_required, False) for s, sub in in_props.items() if s != self.batch
        ]

        result_cols, self.result_fields, self.path = self._result_columns(
            {sql_identifier(s, column=True) for s, *_ in arg_specs}
        )
        result_index = {c.name: n for n, c in enumerate(result_cols)}
        taken = set(result_index)
        arg_cols: list[Column] = []
        self.arg_fields: list[_Field] = []
        self.item_columns: set[str] = set()
        self.keys: list[str] = []
        echoes: set[str] = set()
        for source, sub, required, in_item in arg_specs:
            name = sql_identifier(source, column=True)
            description = _describe(sub, optional_argument=not required)
            if name in result_index and name not in echoes:
                # An argument the result echoes (time's "timezone"): one column for both.
                echoes.add(name)
                echoed = result_cols[result_index[name]]
                pg_type = echoed.pg_type
                if not echoed.description and description:
                    result_cols[result_index[name]] = _column(name, pg_type, description)
            else:
                name = sql_identifier(source, column=True, taken=taken)
                pg_type = schema_type(sub)
                arg_cols.append(_column(name, pg_type, description))
            self.arg_fields.append(_Field(name, source, pg_type))
            if in_item:
                self.item_columns.add(name)
            if required:
                self.keys.append(name)
        if self.verb == "insert":
            arg_names = {c.name for c in arg_cols}
            self.columns = arg_cols + [c for c in result_cols if c.name not in arg_names]
        else:
            self.columns = result_cols + arg_cols

    def _batch_argument(self, in_props: Mapping[str, dict[str, Any]]) -> str | None:
        batch = self.override.batch
        if self.verb != "insert" or batch is False:
            if isinstance(batch, str):
                raise ResourceDefinitionError(
                    f"table {self.name!r}: batch applies to insert tables only"
                )
            return None
        if isinstance(batch, str):
            if batch not in in_props or not _is_array(in_props[batch]):
                arrays = [p for p, s in in_props.items() if _is_array(s)]
                raise ResourceDefinitionError(
                    f"table {self.name!r}: batch argument {batch!r} is not an array argument of"
                    f" tool {self.tool.name!r}; its array arguments are: "
                    + (", ".join(arrays) or "none")
                )
            return batch
        if len(in_props) == 1:
            ((only, schema),) = in_props.items()
            root = self.tool.input_schema
            if _is_array(schema) and _properties(_items(schema, root), root):
                return only
        return None

    def _result_columns(self, arg_names: set[str]) -> tuple[list[Column], list[_Field], list[str]]:
        """The result columns, the fields they come from, and the path to the rows."""
        override = self.override
        out_schema = (
            self.tool.output_schema if isinstance(self.tool.output_schema, Mapping) else None
        )
        path = _path(override.rows)
        if out_schema is None and override.rows is None and override.columns is None:
            # Unstructured: the text, and the structured content (or the text as JSON).
            used = set(arg_names)
            text = sql_identifier("text" if "text" not in used else "output_text", taken=used)
            result = sql_identifier(
                "result" if "result" not in used else "output_result", taken=used
            )
            self.text_columns: tuple[str, str] | None = (text, result)
            return (
                [
                    _column(text, "text", "The text the tool returned."),
                    _column(
                        result,
                        "jsonb",
                        "The structured result the tool returned (or its text,"
                        " when that is a JSON object or array).",
                    ),
                ],
                [],
                [],
            )
        self.text_columns = None
        row_schema: dict[str, Any] = {}
        label = "result"
        if out_schema is not None:
            root = out_schema
            node = resolve(out_schema, root)
            if override.rows is None:
                props = _properties(node, root)
                if len(props) == 1 and _is_array(next(iter(props.values()))):
                    path = list(props)
            for segment in path:
                if _is_array(node) and re.fullmatch(r"-?\d+", segment):
                    node = _items(node, root)
                else:
                    props = _properties(node, root)
                    if segment not in props:
                        raise ResourceDefinitionError(
                            f"table {self.name!r}: rows path {override.rows!r} does not match"
                            f" the output schema of tool {self.tool.name!r} ({segment!r} is not"
                            " among: " + (", ".join(props) or "no properties") + ")"
                        )
                    node = props[segment]
                    label = segment
            if _is_array(node):
                node = _items(node, root)
            row_schema = node
        derived: list[tuple[Column, _Field]] = []
        taken: set[str] = set()
        row_props = _properties(row_schema, self.tool.output_schema or {})
        if row_props:
            for prop, sub in row_props.items():
                name = sql_identifier(prop, column=True, taken=taken)
                pg_type = schema_type(sub)
                derived.append(
                    (_column(name, pg_type, _describe(sub)), _Field(name, prop, pg_type))
                )
        elif row_schema or out_schema is None:
            name = sql_identifier(label, column=True, taken=taken)
            pg_type = schema_type(row_schema) if row_schema else "jsonb"
            derived.append(
                (_column(name, pg_type, _describe(row_schema)), _Field(name, None, pg_type))
            )
        if override.columns is not None:
            by_name = {f.column: f for _, f in derived}
            cols, fields = [], []
            for name, spec in (override.columns or {}).items():
                if sql_identifier(name, column=True) != name:
                    raise ResourceDefinitionError(
                        f"table {self.name!r}: column {name!r} is not a lower-case SQL"
                        f" identifier; try {sql_identifier(name, column=True)!r}"
                    )
                known = by_name.get(name)
                source = spec.source or (known.source if known else name)
                description = spec.description or next(
                    (c.description for c, f in derived if f.column == name), ""
                )
                cols.append(_column(name, spec.type, description))
                fields.append(_Field(name, source, spec.type))
            return cols, fields, path
        return [c for c, _ in derived], [f for _, f in derived], path

    # -- the resource ---------------------------------------------------------------

    def resource(self) -> Resource:
        tool = self.tool
        description = self.override.description
        if description is None:
            title = tool.title or (tool.annotations.title if tool.annotations else None)
            description = (tool.description or title or "").strip()
        about = [description] if description else []
        about.append(f'(MCP tool "{tool.name}" of server "{self.server}".)')
        if self.verb == "insert" and self.batch is not None:
            about.append(
                f"One INSERT is one call: each row is one element of its"
                f' "{self.batch}" argument. RETURNING shows what the tool returned.'
            )
        elif self.verb == "insert":
            about.append("Each inserted row is one call; RETURNING shows what the tool returned.")
        return define_resource(
            self.name,
            columns=self.columns,
            keys=self.keys,
            volatility=self.volatility,
            description=" ".join(about),
            select=self.select if self.verb == "select" else None,
            insert=self.insert if self.verb == "insert" else None,
        )

    def rows_of(self, result: CallToolResult) -> list[dict[str, Any]]:
        """The rows of one tool result (an error result raises ``McpToolError``)."""
        text = _result_text(result)
        if result.is_error:
            message = text
            if not message and result.structured_content is not None:
                message = json.dumps(result.structured_content, ensure_ascii=False)
            raise McpToolError(
                self.server,
                self.tool.name,
                self.name,
                (message or "the tool reported an error without a message").strip(),
            )
        payload = result.structured_content
        if payload is None:
            payload = _maybe_json(text)
        if self.text_columns is not None:
            text_col, result_col = self.text_columns
            return [{text_col: text, result_col: payload}]
        node = payload
        for segment in self.path:
            node = _step(node, segment)
        items = node if isinstance(node, list) else [] if node is None else [node]
        rows = []
        for item in items:
            row = {}
            for f in self.result_fields:
                if f.source is None:
                    value = item
                else:
                    value = item.get(f.source) if isinstance(item, Mapping) else None
                row[f.column] = _cell(value, f.pg_type)
            rows.append(row)
        return rows

    async def select(self, bindings: Bindings) -> list[dict[str, Any]]:
        args = {
            f.key: _argument(bindings.one(f.column), f.pg_type)
            for f in self.arg_fields
            if bindings.has(f.column)
        }
        result = await self.connection.call_tool(self.tool.name, args, table=self.name, retry=True)
        rows = self.rows_of(result)
        # Postgres re-applies the WHERE to these rows: every bound argument must show in them.
        stamp = {f.column: args[f.key] for f in self.arg_fields if f.key in args}
        return [{**row, **{k: v for k, v in stamp.items() if row.get(k) is None}} for row in rows]

    async def insert(self, rows: Sequence[Any]) -> list[dict[str, Any]]:
        calls: list[tuple[dict[str, Any], dict[str, Any]]] = []  # (arguments, stamp)
        dicts = [r if isinstance(r, Mapping) else r.model_dump(by_alias=True) for r in rows]
        for n, row in enumerate(dicts, 1):
            for key in self.keys:
                if row.get(key) is None:
                    # Checked for every row before the first call: no call of this INSERT runs.
                    raise self._missing(key, n, len(dicts))

        def arguments(row: Mapping[str, Any], fields: Iterable[_Field]) -> dict[str, Any]:
            return {
                f.key: _argument(row[f.column], f.pg_type)
                for f in fields
                if row.get(f.column) is not None
            }

        if self.batch is not None:
            item_fields = [f for f in self.arg_fields if f.column in self.item_columns]
            other = [f for f in self.arg_fields if f.column not in self.item_columns]
            groups: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
            for row in dicts:
                shared = arguments(row, other)
                key = json.dumps(shared, sort_keys=True, default=str)
                groups.setdefault(key, (shared, []))[1].append(arguments(row, item_fields))
            for shared, items in groups.values():
                stamp = {f.column: shared[f.key] for f in other if f.key in shared}
                calls.append(({**shared, cast(str, self.batch): items}, stamp))
        else:
            for row in dicts:
                args = arguments(row, self.arg_fields)
                calls.append(
                    (args, {f.column: args[f.key] for f in self.arg_fields if f.key in args})
                )
        created: list[dict[str, Any]] = []
        for done, (args, stamp) in enumerate(calls):
            try:
                result = await self.connection.call_tool(self.tool.name, args, table=self.name)
                out = self.rows_of(result)
            except SqlError as exc:
                if done:
                    note = (
                        f"{done} of {len(calls)} calls of this INSERT had succeeded before"
                        " this one; they are not undone."
                    )
                    exc.detail = f"{exc.detail}\n{note}" if exc.detail else note
                raise
            created.extend(
                {**row, **{k: v for k, v in stamp.items() if row.get(k) is None}} for row in out
            )
        return created

    def _missing(self, key: str, row: int, rows: int) -> SqlError:
        column = next(c for c in self.columns if c.name == key)
        about = f" ({column.description})" if column.description else ""
        return MissingRequiredKey(
            f'INSERT into "{self.name}" needs a value for its required column "{key}"{about}',
            detail=f"Row {row} of {rows} has none; the tool was not called.",
            hint=f"Required columns are the tool's required arguments: {', '.join(self.keys)}."
            f" Give each of them: INSERT INTO {self.name} ({', '.join(self.keys)}) VALUES (…)",
            table_name=self.name,
            column_name=key,
        )


def tool_resource(
    connection: McpConnection,
    tool: Tool,
    override: ToolOverride | None = None,
    *,
    taken: set[str] | None = None,
) -> Resource:
    """One MCP tool as one resource, whose resolvers call it through ``connection``.

    ``taken`` holds table names already used (the new one is added to it).
    """
    return _ToolTable(
        connection, tool, override or ToolOverride(), taken if taken is not None else set()
    ).resource()


async def mcp_resources(server: McpConnection) -> list[Resource]:
    """The tools of one MCP server as resources named ``<namespace>_<tool>``.

    Connects (if not yet connected) and lists the tools. A tool the bridge
    cannot serve is left out with a warning, unless it has an override, whose
    mistakes are errors.
    """
    config = server.config
    tools = await server.list_tools()
    names = {t.name for t in tools}
    for kind, listed in (
        ("include", config.include or []),
        ("tools", list(config.tools)),
        ("exclude", config.exclude),
    ):
        for name in listed:
            if name not in names:
                log.warning(
                    "MCP server %r has no tool %r (named in its %s); it has: %s",
                    config.namespace,
                    name,
                    kind,
                    ", ".join(sorted(names)),
                )
    taken: set[str] = set()
    out = []
    for tool in tools:
        if not config.serves(tool.name):
            continue
        override = config.tools.get(tool.name)
        try:
            out.append(tool_resource(server, tool, override, taken=taken))
        except ResourceDefinitionError as exc:
            if override is not None:
                raise
            log.warning(
                "MCP server %r: tool %r is not served: %s", config.namespace, tool.name, exc
            )
    return out


# -- connections ------------------------------------------------------------------------


class _StderrTail:
    """What a stdio server writes to stderr: logged, and its last lines kept for errors."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.lines: deque[str] = deque(maxlen=_STDERR_LINES)
        self._partial = b""
        self._loop = asyncio.get_running_loop()
        self._read, self.write = os.pipe()
        os.set_blocking(self._read, False)
        self._loop.add_reader(self._read, self.drain)
        self._reading = True

    def drain(self) -> None:
        while self._reading:
            try:
                chunk = os.read(self._read, 65536)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._stop_reading()
                chunk = b"\n"
            *lines, self._partial = (self._partial + chunk).split(b"\n")
            self._partial = self._partial[-4096:]
            for raw in lines:
                line = raw.decode(errors="replace").rstrip()
                if line:
                    self.lines.append(line[:500])
                    log.debug("MCP server %s: %s", self.server, line)

    def tail(self) -> str:
        self.drain()
        return "\n".join(self.lines)

    def close_write_end(self) -> None:
        if self.write >= 0:
            os.close(self.write)
            self.write = -1

    def _stop_reading(self) -> None:
        if self._reading:
            self._reading = False
            self._loop.remove_reader(self._read)

    def close(self) -> None:
        self.drain()
        self._stop_reading()
        self.close_write_end()
        if self._read >= 0:
            os.close(self._read)
            self._read = -1


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (inner or list(exc.exceptions))[0]
    return exc


def _is_disconnect(exc: BaseException) -> bool:
    leaf = _leaf(exc)
    if isinstance(leaf, MCPError):
        return leaf.code == CONNECTION_CLOSED
    return isinstance(
        leaf,
        anyio.ClosedResourceError
        | anyio.BrokenResourceError
        | anyio.EndOfStream
        | OSError
        | httpx2.TransportError,
    )


async def _session_lost(client: Client, exc: BaseException) -> bool:
    """Whether a protocol error (not a tool's own) means the server dropped the session.

    An HTTP server that restarted answers calls in the old session with an HTTP
    error; one cheap request tells that apart from a single failed call.
    """
    leaf = _leaf(exc)
    if not isinstance(leaf, MCPError) or leaf.code in (
        INVALID_PARAMS,
        METHOD_NOT_FOUND,
        REQUEST_TIMEOUT,
    ):
        return False
    try:
        with anyio.fail_after(5):
            await client.list_tools()
    except Exception:
        return True
    return False


def _reason(exc: BaseException, config: McpServerConfig, *, starting: bool) -> str:
    leaf = _leaf(exc)
    if isinstance(leaf, FileNotFoundError) and config.command is not None and starting:
        return f"its command {config.command!r} was not found"
    if isinstance(leaf, PermissionError) and config.command is not None and starting:
        return f"its command {config.command!r} cannot be run (permission denied)"
    if isinstance(leaf, TimeoutError) and starting:
        return f"it did not finish starting within {config.startup_timeout:g} s ({config.where})"
    if isinstance(leaf, MCPError) and leaf.code == CONNECTION_CLOSED:
        if config.command is not None:
            return (
                "its process exited while starting"
                if starting
                else "its process exited or closed the connection"
            )
        return "the connection was closed"
    if isinstance(leaf, httpx2.HTTPStatusError):
        return f"{config.url} answered HTTP {leaf.response.status_code}"
    if isinstance(leaf, httpx2.TransportError):
        return (
            f"cannot connect to {config.url}: {leaf}"
            if starting
            else f"the connection to {config.url} failed: {leaf}"
        )
    return f"{type(leaf).__name__}: {leaf}"


class _Session:
    """One live MCP session, held open by a task of its own until it is closed."""

    def __init__(self, config: McpServerConfig) -> None:
        self.config = config
        self.client: Client | None = None
        self.broken = False
        self.failure: BaseException | None = None  # what ended it, when it ended by itself
        self.stderr: _StderrTail | None = None
        self.last_stderr = ""
        self._stop = asyncio.Event()
        self._transport_up = asyncio.Event()  # the process is spawned (or the HTTP client made)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self.config.transport == "stdio":
            self.stderr = _StderrTail(self.config.namespace)
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(
            self._own(ready), name=f"mcp server {self.config.namespace}"
        )
        try:
            async with asyncio.timeout(self.config.startup_timeout):
                self.client = await asyncio.shield(ready)
        except BaseException:
            await self.close()
            if ready.done() and not ready.cancelled():
                ready.exception()  # retrieved: the caller gets its own error
            raise

    async def _own(self, ready: asyncio.Future[Client]) -> None:
        try:
            async with AsyncExitStack() as stack:
                client = await stack.enter_async_context(await self._client(stack))
                if self.stderr is not None:
                    self.stderr.close_write_end()  # the server has its own copy now
                if not ready.done():
                    ready.set_result(client)
                await self._stop.wait()
        except BaseException as exc:
            if not isinstance(exc, asyncio.CancelledError):
                self.failure = exc
                log.info("MCP server %s: session ended: %r", self.config.namespace, _leaf(exc))
            if not ready.done():
                if isinstance(exc, asyncio.CancelledError):
                    ready.cancel()
                else:
                    ready.set_exception(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.broken = True
            if self.stderr is not None:
                self.stderr.close_write_end()

    async def _client(self, stack: AsyncExitStack) -> Client:
        config = self.config
        info = Implementation(name="glove-scratchpad", version=_version())
        if config.command is not None:
            assert self.stderr is not None
            params = StdioServerParameters(
                command=config.command, args=config.args, env=config.env or None, cwd=config.cwd
            )
            # stdio_client hands errlog to the subprocess as its stderr: a file descriptor does.
            transport: Any = stdio_client(params, errlog=cast(Any, self.stderr.write))
        else:
            http = httpx2.AsyncClient(
                headers=config.headers, timeout=httpx2.Timeout(30.0, read=300.0)
            )
            await stack.enter_async_context(http)
            transport = streamable_http_client(cast(str, config.url), http_client=http)
        # No session-wide read timeout: starting is bounded by startup_timeout, each call by
        # timeout (a slow server's imports must not count against its first call).
        return Client(_marked(transport, self._transport_up), cache=None, client_info=info)

    def stderr_tail(self) -> str:
        if self.stderr is not None:
            self.last_stderr = self.stderr.tail() or self.last_stderr
        return self.last_stderr

    async def close(self) -> None:
        self._stop.set()
        task = self._task
        if task is not None:
            if self.client is None and not task.done():
                # Still starting: stop it. Not while it spawns the server's process, though:
                # asyncio's subprocess transport never finishes when that is cancelled halfway.
                up = asyncio.ensure_future(self._transport_up.wait())
                await asyncio.wait([task, up], return_when=asyncio.FIRST_COMPLETED)
                up.cancel()
                await asyncio.wait([up])
                if not task.done():
                    task.cancel()
            await asyncio.wait([task])
            if not task.cancelled():
                task.exception()
        if self.stderr is not None:
            self.stderr_tail()
            self.stderr.close()
            self.stderr = None
        self.broken = True


@asynccontextmanager
async def _marked(transport: Any, up: asyncio.Event) -> AsyncIterator[Any]:
    """A transport that sets ``up`` once it is entered."""
    async with transport as streams:
        up.set()
        yield streams


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("glove-scratchpad")
    except Exception:
        return "0"


class McpConnection:
    """One MCP server's session, started on first use and again after a failure.

    Every call goes through the same session; when it fails (the process
    exits, the HTTP server goes away), the call fails with
    ``McpServerUnavailable`` and the next one starts a new session. A
    read-only call that finds the session gone is retried once on a new one.
    """

    def __init__(self, config: McpServerConfig | Mapping[str, Any]) -> None:
        self.config = (
            config
            if isinstance(config, McpServerConfig)
            else McpServerConfig.model_validate(config)
        )
        self._session: _Session | None = None
        self._lock = asyncio.Lock()
        self._attempts = 0
        self._last_failure: tuple[str, str | None] | None = None
        self._closed = False

    @property
    def namespace(self) -> str:
        return self.config.namespace

    async def connect(self) -> None:
        """Start the session now, rather than on first use."""
        await self._live()

    async def _live(self) -> _Session:
        if self._closed:
            raise McpServerUnavailable(self.namespace, "its connection was closed")
        session = self._session
        if session is not None and not session.broken:
            return session
        attempts = self._attempts
        async with self._lock:
            if self._closed:
                raise McpServerUnavailable(self.namespace, "its connection was closed")
            session = self._session
            if session is not None and not session.broken:
                return session
            if self._attempts != attempts and self._last_failure is not None:
                # A start this caller waited for has just failed: share its verdict.
                raise McpServerUnavailable(
                    self.namespace, self._last_failure[0], detail=self._last_failure[1]
                )
            self._session = None
            if session is not None:
                await session.close()
            self._attempts += 1
            fresh = _Session(self.config)
            try:
                await fresh.start()
            except Exception as exc:
                error = self._unavailable(exc, fresh, starting=True)
                self._last_failure = (error.reason, error.detail)
                raise error from None
            self._last_failure = None
            self._session = fresh
            return fresh

    def _unavailable(
        self, exc: BaseException, session: _Session, *, starting: bool
    ) -> McpServerUnavailable:
        cause = session.failure if session.failure is not None else exc
        reason = _reason(cause, self.config, starting=starting)
        tail = session.stderr_tail()
        detail = f"The server's last words on stderr:\n{tail}" if tail else None
        return McpServerUnavailable(self.namespace, reason, detail=detail)

    async def list_tools(self) -> list[Tool]:
        """Every tool of the server, all pages."""
        session = await self._live()
        client = cast(Client, session.client)
        tools: list[Tool] = []
        cursor: str | None = None
        try:
            for _ in range(1000):
                with anyio.fail_after(self.config.startup_timeout):
                    page = await client.list_tools(cursor=cursor)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
        except Exception as exc:
            if _is_disconnect(exc):
                session.broken = True
                raise self._unavailable(exc, session, starting=False) from None
            if isinstance(_leaf(exc), TimeoutError):
                raise McpServerUnavailable(
                    self.namespace,
                    f"it did not list its tools within {self.config.startup_timeout:g} s",
                ) from None
            raise McpServerError(
                self.namespace,
                f'MCP server "{self.namespace}" could not list its tools: {_leaf(exc)}',
                hint="Check that the server offers tools.",
            ) from None
        return tools

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any], *, table: str = "", retry: bool = False
    ) -> CallToolResult:
        """Call one tool; ``retry``: retry once on a new session if the session was lost.

        Only a call without side effects may be retried: a call cut off by a
        lost connection may have run.
        """
        for attempt in (1, 2):
            session = await self._live()
            client = cast(Client, session.client)
            try:
                return await client.call_tool(
                    name, dict(arguments), read_timeout_seconds=self.config.timeout
                )
            except Exception as exc:
                if _is_disconnect(exc):
                    error = self._unavailable(exc, session, starting=False)
                elif await _session_lost(client, exc):
                    leaf = cast(MCPError, _leaf(exc))
                    error = McpServerUnavailable(
                        self.namespace,
                        f"it no longer answers this session ({leaf.message}); it may have"
                        " restarted",
                    )
                else:
                    raise self._call_error(name, table, exc) from None
                session.broken = True
                if retry and attempt == 1:
                    continue
                raise error from None
        raise AssertionError("unreachable")

    def _call_error(self, tool: str, table: str, exc: BaseException) -> SqlError:
        leaf = _leaf(exc)
        if isinstance(leaf, MCPError):
            if leaf.code == REQUEST_TIMEOUT:
                return McpToolError(
                    self.namespace,
                    tool,
                    table,
                    f"no answer within {self.config.timeout:g} s",
                    hint="The tool may still be running. Try again, or raise the"
                    " server's timeout in the configuration.",
                )
            if leaf.code == INVALID_PARAMS:
                error = McpToolError(
                    self.namespace,
                    tool,
                    table,
                    f"invalid arguments: {leaf.message}",
                    detail=json.dumps(leaf.data, default=str)[:1000]
                    if leaf.data is not None
                    else None,
                )
                error.sqlstate = InvalidParameterValue.sqlstate  # type: ignore[misc]
                return error
            if leaf.code == METHOD_NOT_FOUND:
                return McpToolError(
                    self.namespace,
                    tool,
                    table,
                    leaf.message,
                    hint="The server no longer offers this tool; restart the"
                    " bridge to re-read its tools.",
                )
            return McpToolError(self.namespace, tool, table, f"{leaf.message} (code {leaf.code})")
        return McpToolError(self.namespace, tool, table, f"{type(leaf).__name__}: {leaf}")

    async def aclose(self) -> None:
        """End the session (stopping a stdio server); later calls fail as unreachable."""
        self._closed = True
        async with self._lock:
            session, self._session = self._session, None
            if session is not None:
                await session.close()

    async def __aenter__(self) -> McpConnection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


# -- several servers --------------------------------------------------------------------


class McpBridge:
    """Several MCP servers as one list of resources.

    ``start`` connects to every server at once. A server that fails to start
    or to list its tools is left out (``failures`` says why, and a warning is
    logged); the others are served. ``aclose`` ends every session.

        async with McpBridge(configs) as bridge:
            db = await Database.create(resources=bridge.resources, ...)
    """

    def __init__(self, servers: Iterable[McpServerConfig | Mapping[str, Any]]) -> None:
        configs = [
            s if isinstance(s, McpServerConfig) else McpServerConfig.model_validate(s)
            for s in servers
        ]
        seen: set[str] = set()
        for config in configs:
            if config.namespace in seen:
                raise ValueError(f"two MCP servers have the namespace {config.namespace!r}")
            seen.add(config.namespace)
        self.connections = {c.namespace: McpConnection(c) for c in configs}
        self.resources: list[Resource] = []
        self.failures: dict[str, Exception] = {}

    async def start(self) -> list[Resource]:
        async def one(connection: McpConnection) -> list[Resource]:
            try:
                return await mcp_resources(connection)
            except Exception as exc:
                self.failures[connection.namespace] = exc
                log.warning(
                    "MCP server %r is not served: %s",
                    connection.namespace,
                    exc,
                    exc_info=not isinstance(exc, SqlError | ResourceDefinitionError),
                )
                return []

        found = await asyncio.gather(*(one(c) for c in self.connections.values()))
        names: set[str] = set()
        self.resources = []
        for connection, resources in zip(self.connections.values(), found, strict=True):
            clash = sorted(names & {r.name for r in resources})
            if clash:
                self.failures[connection.namespace] = ResourceDefinitionError(
                    f"MCP server {connection.namespace!r}: table names already taken by another"
                    f" server: {', '.join(clash)}"
                )
                log.warning("%s", self.failures[connection.namespace])
                continue
            names.update(r.name for r in resources)
            self.resources.extend(resources)
        return self.resources

    async def aclose(self) -> None:
        await asyncio.gather(*(c.aclose() for c in self.connections.values()))

    async def __aenter__(self) -> McpBridge:
        try:
            await self.start()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
