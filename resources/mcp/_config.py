"""The configuration of MCP servers: ``[[mcp.servers]]`` tables as pydantic models.

``McpServerConfig`` is one server: how to reach it (stdio: ``command``/``args``/
``env``/``cwd``; or streamable HTTP: ``url``/``headers``), which of its tools
to serve, how long it may take, and its tools' ``retries`` and ``rate`` (each
tool's own, unless its ``ToolOverride`` gives others). ``ToolOverride`` and
``ColumnOverride`` reshape one tool's table where the defaults derived from its
schemas do not fit.

Rules:

- Every model forbids unknown keys, so a misspelt option is an error at start,
  not a silently ignored line.
- A namespace is a lower-case SQL identifier that cannot make table names start
  with ``pg_``.
- Exactly one transport: ``command`` or ``url``, and only that transport's
  options.
- ``command = "python"`` (or ``"python3"``) runs this server's own interpreter
  (``sys.executable``), whatever ``python`` is on PATH: a Python MCP server
  installed next to glove-scratchpad runs without naming its venv.
- Its headers, its URL's credentials and the values of ``env`` entries whose names
  say they are secrets are remembered (``glove_scratchpad.redaction``): redacted
  from whatever a tool answers.
- Every message a server sends is bounded by ``max_message_bytes`` (8 MiB unless
  set): an upstream is untrusted input.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PositiveFloat,
    PositiveInt,
    field_validator,
    model_validator,
)

from glove_scratchpad.redaction import SECRET_NAME, remember, remember_header, remember_url

from .._resource import MAX_RETRIES, Volatility

__all__ = ["MAX_MESSAGE_BYTES", "ColumnOverride", "McpServerConfig", "ToolOverride"]

# What one message of a server may weigh, unless its max_message_bytes says otherwise: far
# more than rows an agent reads, far less than would stall the server to parse.
MAX_MESSAGE_BYTES = 8 * 1024 * 1024

# Commands that mean "this interpreter": run as sys.executable.
_OWN_PYTHON = frozenset({"python", "python3"})

_NAMESPACE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")

_RETRIES = "Reads of a tool made again on a timeout or a transient error, with backoff"
_RATE = ("[calls, seconds]: at most that many calls of a tool per that many seconds, shared "
         "by every session; calls over it wait")

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
    retries: int | None = Field(default=None, ge=0, le=MAX_RETRIES, description=_RETRIES)
    rate: tuple[PositiveInt, PositiveFloat] | None = Field(default=None, description=_RATE)

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
    ``command = "python"`` or ``"python3"`` is this server's own interpreter.
    """

    model_config = ConfigDict(extra="forbid")

    namespace: str = Field(description="Prefix of the server's table names: <namespace>_<tool>")
    command: str | None = Field(
        default=None,
        description='The program of a stdio server; "python" or "python3" is the interpreter'
        " glove-scratchpad runs on (sys.executable)",
    )
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
    retries: int = Field(default=0, ge=0, le=MAX_RETRIES, description=_RETRIES)
    rate: tuple[PositiveInt, PositiveFloat] | None = Field(default=None, description=_RATE)
    max_message_bytes: int = Field(
        default=MAX_MESSAGE_BYTES,
        ge=4096,
        description="The longest message (one JSON-RPC line on stdio) the server may send;"
        " a longer one fails its call and ends the session",
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
        # Its credentials are secrets from now on, redacted from whatever a tool answers.
        for value in self.headers.values():
            remember_header(value)
        remember_url(self.url)
        remember(*(v for k, v in self.env.items() if SECRET_NAME.search(k)))
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"

    @property
    def program(self) -> str | None:
        """The program a stdio server runs: ``command``, with python as ``sys.executable``."""
        if self.command in _OWN_PYTHON and sys.executable:
            return sys.executable
        return self.command

    @property
    def where(self) -> str:
        """The command line or URL, for messages."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        return str(self.url)

    def serves(self, tool: str) -> bool:
        """Whether ``include`` and ``exclude`` let this tool through."""
        return (self.include is None or tool in self.include) and tool not in self.exclude
