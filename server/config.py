"""Server settings: command-line options over a TOML config file over defaults."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from .net.auth import User

__all__ = ["DEFAULT_PORT", "ServerConfig", "load_config"]

DEFAULT_PORT = 55432  # not 5432, so a local Postgres keeps its port


class ServerConfig(BaseModel):
    """Everything ``glove-scratchpad serve`` can be told."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    database: str = Field("scratchpad", description="The one database name served")
    resources: list[str] = Field(default_factory=list,
                                 description="Modules or .py files with a `resources` list")
    writes: bool = False
    sidecar_dsn: str | None = None
    sidecar_dir: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    startup_timeout: float = Field(10.0, description="Seconds to finish the start-up")
    shutdown_grace: float = Field(10.0, description="Seconds running statements get on SIGTERM")
    max_connections: int = 1000
    row_limit: int | None = Field(None, description="At most this many rows per result")
    max_result_bytes: int = 256 * 1024 * 1024
    call_budget: int = Field(1000, description="Resolver calls one statement may make")
    resolver_timeout: float = Field(60.0, description="Seconds per resolver call")
    resource_concurrency: int = Field(10, description="Calls of one resource at once")
    statement_timeout: float = Field(300.0, description="Seconds; SET can only lower it")
    require_tls: bool = Field(False, description="Refuse connections that do not use TLS")
    mcp_servers: list[dict[str, Any]] = Field(
        default_factory=list, description="[[mcp.servers]] tables: MCP servers served as tables")
    users: dict[str, User] = Field(default_factory=dict,
                                   description="[users.NAME] tables; none: loopback trust")


    def limits(self):  # type: ignore[no-untyped-def]
        from .engine.guard import Limits

        return Limits(self.row_limit, self.max_result_bytes, self.call_budget,
                      self.resolver_timeout, self.resource_concurrency, self.statement_timeout)


def load_config(path: str | Path | None, **overrides: Any) -> ServerConfig:
    """The config file (if any), with every non-None override applied on top."""
    data: dict[str, Any] = {}
    if path is not None:
        with open(path, "rb") as f:
            raw = tomllib.load(f)
        data.update(raw.get("server", {}))
        if "users" in raw:
            data["users"] = raw["users"]
        if "mcp" in raw:
            data["mcp_servers"] = raw["mcp"].get("servers", [])
    data.update({k: v for k, v in overrides.items() if v is not None})
    return ServerConfig.model_validate(data)
