"""Server settings: command-line options over environment variables over a TOML config
file over defaults.

Every scalar setting may come from ``GLOVE_SCRATCHPAD_<NAME>`` (``ENV_PREFIX``;
``GLOVE_SCRATCHPAD_SIDECAR_DSN``, ``GLOVE_SCRATCHPAD_WORKERS``, …), so a container is
configured by its environment alone. ``GLOVE_SCRATCHPAD_USER`` with
``GLOVE_SCRATCHPAD_PASSWORD`` (or ``GLOVE_SCRATCHPAD_PASSWORD_VERIFIER``) adds one
user, who signs in with that password from any address (and, given
``GLOVE_SCRATCHPAD_MCP_TOKEN``, with that bearer token to ``mcp --http``). A list
setting in ``LIST_SETTINGS`` is read from its variable as comma-separated values.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_origin

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .engine.approval_rules import ApprovalRules
from .net.auth import User

if TYPE_CHECKING:
    from .engine.guard import Limits

__all__ = ["ANY_ADDRESS", "DEFAULT_PORT", "ENV_PREFIX", "ServerConfig", "env_settings",
           "load_config"]

DEFAULT_PORT = 55432  # not 5432, so a local Postgres keeps its port
ENV_PREFIX = "GLOVE_SCRATCHPAD_"
ANY_ADDRESS = ("0.0.0.0", "::", "")  # a host that listens on every address
MAX_WORKERS = 64  # a worker's number travels in 6 bits of each backend key
LIST_SETTINGS = ("mcp_allowed_hosts", "mcp_allowed_origins")  # comma-separated in a variable


class ServerConfig(BaseModel):
    """Everything ``glove-scratchpad serve`` can be told."""

    # An error names the setting and the rule, never the value: some are secrets.
    model_config = ConfigDict(hide_input_in_errors=True)

    host: str = Field("127.0.0.1", description="The address to listen on (0.0.0.0: every "
                      "one)")
    port: int = Field(DEFAULT_PORT, description="The port clients connect to")
    cancel_host: str | None = Field(None, description="Where the other servers of this name "
                                    "reach this one to hand it a client's cancel (default: "
                                    "host, or this machine's address when host is every one)")
    name: str = Field("glove", description="The server's name: its schemas in the sidecar")
    take_over: bool = Field(False, description="Replace the tables of running servers of "
                            "this name that serve other resources, instead of being refused")
    workers: int = Field(1, ge=1, le=MAX_WORKERS,
                         description="Server processes on one port (SO_REUSEPORT)")
    database: str = Field("scratchpad", description="The one database name served")
    resources: list[str] = Field(default_factory=list,
                                 description="Modules or .py files with a `resources` list")
    writes: bool = Field(False, description="Allow INSERT, UPDATE and DELETE (else "
                         "read-only); a [users.NAME] table's writes overrides it for its user")
    sidecar_dsn: str | None = Field(None, description="A Postgres to use as the sidecar "
                                    "(postgresql://…) instead of the embedded one")
    sidecar_dir: str | None = Field(None, description="The embedded sidecar's data directory "
                                    "(default: the user's data directory)")
    tls_cert: str | None = Field(None, description="The TLS certificate (PEM) clients see")
    tls_key: str | None = Field(None, description="Its private key (PEM)")
    startup_timeout: float = Field(10.0, description="Seconds to finish the start-up")
    shutdown_grace: float = Field(10.0, description="Seconds running statements get on SIGTERM")
    max_connections: int = Field(1000, description="Client connections at once; more are "
                                 "refused with 53300")
    # Slots (server/net/slots.py) and the memory of messages half received.
    reserved_connections: int = Field(3, ge=0, description="Of max_connections, the sessions "
                                      "kept for admins ([users.NAME] admin = true)")
    max_startup_connections: int = Field(256, ge=1, description="Connections at once that "
                                         "have not finished their start-up; past them, the "
                                         "oldest is ended (53300)")
    max_startup_per_address: int = Field(128, ge=1, description="The same, from one client "
                                         "address; past them, a new one is refused (53300)")
    max_pending_bytes: int = Field(256 * 1024 * 1024, ge=1024 * 1024, description="Bytes held "
                                   "at once, server-wide, in client messages not yet received "
                                   "whole; a message past them ends its connection (53200)")
    row_limit: int | None = Field(None, description="At most this many rows per result")
    max_result_bytes: int = Field(256 * 1024 * 1024, description="Bytes at most in one "
                                  "result; a larger one is refused (54000)")
    max_statement_bytes: int = Field(256 * 1024, ge=1024, description="Bytes at most of one "
                                     "statement's text (a Query or Parse message); a longer "
                                     "one is refused (54000) before it is parsed")
    max_statement_nodes: int = Field(4000, ge=1000, description="Parts at most of one "
                                     "statement's parse tree (a constant, a name, an "
                                     "operator); more are refused (54001) before the "
                                     "statement is judged")
    call_budget: int = Field(1000, description="Resolver calls one statement may make")
    resolver_timeout: float = Field(60.0, description="Seconds per resolver call")
    resource_concurrency: int = Field(10, description="Calls of one resource at once")
    statement_timeout: float = Field(300.0, description="Seconds; SET can only lower it")
    call_row_cap: int = Field(1_000_000, description="Rows one tool call may give; the rest "
                              "are cut, with a NOTICE")
    cache_min_rows: int = Field(500, description="Rows a kept call needs to be materialized "
                                "as a sidecar table (fewer travel with each statement)")
    cache_max_rows: int = Field(2_000_000, description="Rows above which a call is not kept")
    cache_bytes: int = Field(256 * 1024 * 1024, description="Bytes of kept tables; the least "
                             "recently used go")
    spill_min_rows: int = Field(10_000, description="Rows from which a call that is not kept "
                                "reaches the sidecar by binary COPY, into a table dropped "
                                "when its statement ends")
    retention_days: float | None = Field(None, gt=0, description="Days the audit "
                                         "(scratchpad.calls) and the journal keep a row once "
                                         "it is final; unset: for ever")
    read_your_writes_s: float = Field(5.0, ge=0, description="Seconds at most that a "
                                      "session's fired write is laid over its reads, until "
                                      "the tool's rows show it; 0: never")
    require_tls: bool = Field(False, description="Refuse connections that do not use TLS")
    temp_table_limit_mb: int = Field(256, ge=1, description="Megabytes a session's "
                                     "temporary tables may hold together; a statement that "
                                     "would pass it fails (53400), and is undone")
    mcp_allowed_hosts: list[str] = Field(
        default_factory=list, description="Host headers `glove-scratchpad mcp --http` "
        "answers besides loopback's and its own address's (mcp.example.com, or with a port: "
        "10.0.0.7:55433); others get 421 (DNS rebinding)")
    mcp_allowed_origins: list[str] = Field(
        default_factory=list, description="Origin headers it answers besides those of the "
        "allowed hosts (https://app.example.com; a port of :* is any); others get 403")
    metrics_port: int | None = Field(None, ge=0, le=65535, description="The operator's HTTP "
                                     "port: /metrics, /healthz, /readyz (unset: none)")
    metrics_host: str = Field("127.0.0.1", description="Where the operator's port listens")
    # The operator's web console (server/console, docs/approvals.md).
    console_port: int | None = Field(None, ge=0, le=65535, description="The operator's web "
                                     "console: approvals, sessions, tool calls, resources; "
                                     "signing in as a [users.NAME] role (unset: none)")
    console_host: str = Field("127.0.0.1", description="Where the web console listens")
    log_format: Literal["text", "json"] = Field(
        "text", description="text: lines for people; json: one JSON object per event, with "
        "a line per statement's end (its id, user, kind, duration, calls and outcome)")
    slow_statement_s: float | None = Field(None, gt=0, description="Seconds from which a "
                                           "statement is logged as slow (unset: none is)")
    log_statement_text: Literal["normalized", "none"] = Field(
        "normalized", description="What a statement's end line says of its text: "
        "normalized (every constant a $n, as the traces have it: no value), or none")
    otlp_endpoint: str | None = Field(None, description="Where OpenTelemetry spans go "
                                      "(OTLP over HTTP: http://collector:4318/v1/traces); "
                                      "needs the otel extra (unset: no traces)")
    mcp_servers: list[dict[str, Any]] = Field(
        default_factory=list, description="[[mcp.servers]] tables: MCP servers served as tables")
    openapi_apis: list[dict[str, Any]] = Field(
        default_factory=list, description="[[openapi.apis]] tables: HTTP APIs described by "
        "OpenAPI documents, served as tables")
    config_dir: str | None = Field(None, description="The config file's folder: where "
                                   "relative paths in it (an API's spec) start")
    users: dict[str, User] = Field(default_factory=dict,
                                   description="[users.NAME] tables; none: loopback trust")
    # The fair share of the sidecar pool (docs/operations.md, "The sidecar pool").
    sidecar_share: float = Field(0.5, gt=0, le=1, description="The fraction of a sidecar "
                                 "pool that one user takes freely; beyond it, it leaves "
                                 "sidecar_reserve connections to the others (1: no share)")
    sidecar_reserve: int = Field(2, ge=0, description="Sidecar connections that a user "
                                 "beyond its share leaves free for the others")
    # [approvals] (docs/approvals.md): which writes a person approves before they fire.
    approvals: ApprovalRules = Field(default_factory=lambda: ApprovalRules(),
                                     description="[approvals]: writes that need a person's "
                                     "approval, untrusted resources, approvers, wait_s, notify")


    @field_validator("name")
    @classmethod
    def _is_a_name(cls, value: str) -> str:
        from glove_scratchpad.catalog import check_name

        return check_name(value)

    def limits(self) -> Limits:
        from .engine.guard import Limits

        return Limits(self.row_limit, self.max_result_bytes, self.call_budget,
                      self.resolver_timeout, self.resource_concurrency, self.statement_timeout,
                      self.call_row_cap, cache_min_rows=self.cache_min_rows,
                      cache_max_rows=self.cache_max_rows, cache_bytes=self.cache_bytes,
                      spill_min_rows=self.spill_min_rows, retention_days=self.retention_days,
                      read_your_writes_s=self.read_your_writes_s,
                      slow_statement_s=self.slow_statement_s,
                      log_statement_text=self.log_statement_text,
                      sidecar_share=self.sidecar_share, sidecar_reserve=self.sidecar_reserve,
                      temp_table_limit_mb=self.temp_table_limit_mb)


def env_settings(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings that ``GLOVE_SCRATCHPAD_*`` environment variables give."""
    environ = os.environ if environ is None else environ
    scalars = {name for name, field in ServerConfig.model_fields.items()
               if field.annotation in (str, int, float, bool, str | None, int | None,
                                       float | None) or get_origin(field.annotation) is Literal}
    found: dict[str, Any] = {}
    for key, value in environ.items():
        name = key[len(ENV_PREFIX):].lower() if key.startswith(ENV_PREFIX) else ""
        if name in scalars:
            found[name] = value
        elif name in LIST_SETTINGS:
            found[name] = [v.strip() for v in value.split(",") if v.strip()]
    user = environ.get(ENV_PREFIX + "USER")
    if user:
        from .net.auth import make_verifier

        verifier = environ.get(ENV_PREFIX + "PASSWORD_VERIFIER")
        password = environ.get(ENV_PREFIX + "PASSWORD")
        if not verifier and not password:
            raise ValueError(f"{ENV_PREFIX}USER needs {ENV_PREFIX}PASSWORD or "
                             f"{ENV_PREFIX}PASSWORD_VERIFIER")
        writes = str(found.get("writes", "")).lower() in ("1", "true", "yes", "on")
        found["users"] = {user: {"password": verifier or make_verifier(password or ""),
                                 "writes": writes}}
        if environ.get(ENV_PREFIX + "MCP_TOKEN"):
            found["users"][user]["mcp_token"] = environ[ENV_PREFIX + "MCP_TOKEN"]
    elif environ.get(ENV_PREFIX + "MCP_TOKEN"):
        raise ValueError(f"{ENV_PREFIX}MCP_TOKEN is the token of {ENV_PREFIX}USER: set that "
                         f"too (with {ENV_PREFIX}PASSWORD or {ENV_PREFIX}PASSWORD_VERIFIER)")
    return found


def load_config(path: str | Path | None, environ: Mapping[str, str] | None = None,
                **overrides: Any) -> ServerConfig:
    """The config file (if any), then the environment, then every non-None override."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            with open(path, "rb") as f:
                raw = tomllib.load(f)
        except FileNotFoundError:
            raise ValueError(f"no config file {path}: give --config the path of a TOML "
                             "file (examples/glove-scratchpad.toml is one)") from None
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"the config file {path} is not TOML: {exc}") from None
        from .keys import check_keys

        check_keys(raw, ServerConfig)  # a misspelt key is an error, not a default silently kept
        data.update(raw.get("server", {}))
        if "users" in raw:
            data["users"] = raw["users"]
        if "mcp" in raw:
            data["mcp_servers"] = raw["mcp"].get("servers", [])
        if "openapi" in raw:
            data["openapi_apis"] = raw["openapi"].get("apis", [])
        if "approvals" in raw:
            data["approvals"] = raw["approvals"]
        data["config_dir"] = str(Path(path).resolve().parent)
    env = env_settings(environ)
    if "users" in env:
        data["users"] = {**data.get("users", {}), **env.pop("users")}
    data.update(env)
    data.update({k: v for k, v in overrides.items() if v is not None})
    return ServerConfig.model_validate(data)
