"""MCP servers as tables: each tool of a server becomes one resource.

A server is configured by ``McpServerConfig`` (stdio: ``command``/``args``/
``env``; or streamable HTTP: ``url``/``headers``). ``McpConnection`` keeps one
session with it, and ``mcp_resources`` turns its tools into resources named
``<namespace>_<tool>``. ``McpBridge`` does this for several servers at once, so
that one server being down costs only its own tables.

The modules, in the order they depend on one another (none imports a later one):

- ``_config``: the ``[[mcp.servers]]`` models (``McpServerConfig``,
  ``ToolOverride``, ``ColumnOverride``);
- ``_errors``: ``McpToolError``, ``McpServerError``, ``McpServerUnavailable``;
- ``_schema``: JSON Schema -> columns (names, types, comments);
- ``_values``: argument values in, result rows out;
- ``_table``: one tool's schemas -> its table's plan (columns, keys, rows path);
- ``_stdio``: the stdio transport, every message within ``max_message_bytes``;
- ``_http``: the streamable HTTP client, its JSON answers within the same bound;
- ``_check``: a result against its tool's ``outputSchema``, off the event loop,
  its patterns on RE2;
- ``_session``: one live client session in a task of its own;
- ``_connection``: ``McpConnection``, a session started on first use and again
  after a failure;
- ``_tool``: one tool as one resource (``tool_resource``, ``mcp_resources``);
- ``_bridge``: ``McpBridge``, several servers at once.

Errors: a tool result with ``isError`` is ``McpToolError`` (SQLSTATE 38000)
naming the tool and giving its message. A server that cannot be reached is
``McpServerUnavailable`` naming the server; only its own tables fail. A server
that was served and went away is started (or reconnected to) again by the next
call; one that was down at start has no tables until the next start.

This package knows nothing of the sidecar or the wire; of SQL it knows only
Postgres' reserved words, which no column name may be.
"""

from ._bridge import McpBridge
from ._config import ColumnOverride, McpServerConfig, ToolOverride
from ._connection import McpConnection
from ._errors import McpServerError, McpServerUnavailable, McpToolError
from ._schema import sql_identifier
from ._tool import mcp_resources, tool_resource

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
