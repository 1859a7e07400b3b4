"""The errors of MCP servers and their tools, as SQL errors (SQLSTATE 38000).

- ``McpToolError``: one tool call failed (the tool reported an error, or the
  call was refused); it names the tool and its table.
- ``McpServerError``: a server failed as a whole; ``McpServerUnavailable``: it
  could not be started or reached, or its connection was lost. It names the
  server; only that server's tables fail.

Rules: every message names the server (and the tool); every HINT says what to
do next, and says only what is true of the situation it is raised in.
"""

from __future__ import annotations

from typing import Any

from glove_scratchpad.errors import ExternalRoutineError

__all__ = ["McpServerError", "McpServerUnavailable", "McpToolError"]


class McpServerError(ExternalRoutineError):
    """An MCP server failed as a whole (not one tool call)."""

    def __init__(self, server: str, message: str, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.server = server


class McpServerUnavailable(McpServerError):
    """An MCP server could not be started or reached, or its connection was lost.

    The default HINT is for a server whose tables are served: the next query
    that needs it starts (or reconnects to) it again. ``McpBridge`` replaces it
    for a server that was down at start, whose tables are not served.
    """

    def __init__(
        self, server: str, reason: str, *, detail: str | None = None, hint: str | None = None
    ) -> None:
        super().__init__(
            server,
            f'MCP server "{server}" is unreachable: {reason}',
            detail=detail,
            hint=hint
            or f"Only this server's tables ({server}_*) fail; it is started (or reconnected)"
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
