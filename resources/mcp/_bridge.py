"""Several MCP servers as one list of resources, one server's failure costing only its tables.

Rules:

- ``start`` connects to every server at once and lists their tools; a table is
  made from what a server lists at start, and from nothing else.
- A server that fails to start or to list its tools is left out: ``failures``
  says why, and a warning is logged. Its tables are not served for the life of
  the Database made from ``resources`` (a Database's tables are fixed when it
  is created), so its error's HINT says to restart once the server is up, and
  nothing retries it in the background.
- A server that started but goes down later keeps its tables: the next query
  that needs it starts (or reconnects to) it again (``McpConnection``).
- Two servers whose table names clash: the later one is left out.
- A tool list is the upstream's: comments lose the characters Postgres refuses
  (``_sources.scrubbed``), with a warning; ``by_server`` keeps each server's tables,
  so that a clash with another source's names both (``merge_sources``).
- ``aclose`` ends every session (stopping stdio servers).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from glove_scratchpad.errors import SqlError

from .._resource import Resource, ResourceDefinitionError
from .._sources import scrubbed
from ._config import McpServerConfig
from ._connection import McpConnection
from ._errors import McpServerUnavailable
from ._tool import mcp_resources

__all__ = ["McpBridge"]

log = logging.getLogger(__name__)


def _down_at_start_hint(namespace: str) -> str:
    """The HINT of a server that could not be reached at start: its tables are not served."""
    return (
        f"This server's tables ({namespace}_*) are not served: tables are made from the tools"
        " a server lists at start, and it could not be reached then. Check its command, args"
        " and env (or url and headers) in the configuration, then restart glove-scratchpad"
        " once the server is up."
    )


class McpBridge:
    """Several MCP servers as one list of resources.

    ``start`` connects to every server at once. A server that fails to start
    or to list its tools is left out until the next start (``failures`` says
    why, and a warning is logged); the others are served. ``aclose`` ends
    every session.

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
        self.by_server: dict[str, list[Resource]] = {}  # the tables of each server served

    async def start(self) -> list[Resource]:
        async def one(connection: McpConnection) -> list[Resource]:
            try:
                return await mcp_resources(connection)
            except Exception as exc:
                error: Exception = exc
                if isinstance(exc, McpServerUnavailable):
                    # Its own HINT promises a reconnect on the next query, but without
                    # tables no query will ever need it.
                    error = McpServerUnavailable(
                        connection.namespace,
                        exc.reason,
                        detail=exc.detail,
                        hint=_down_at_start_hint(connection.namespace),
                    )
                self.failures[connection.namespace] = error
                log.warning(
                    "MCP server %r is not served: %s",
                    connection.namespace,
                    error,
                    exc_info=not isinstance(error, SqlError | ResourceDefinitionError),
                )
                return []

        found = await asyncio.gather(*(one(c) for c in self.connections.values()))
        names: set[str] = set()
        self.resources = []
        self.by_server = {}
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
            resources = scrubbed(resources, f"MCP server {connection.namespace!r}")
            self.by_server[connection.namespace] = resources
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
