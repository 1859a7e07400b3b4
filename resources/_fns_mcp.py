"""An MCP server's tools as functions: ``fns_from_mcp`` makes each tool one
``fn.<namespace>_<tool>(args jsonb, …)``, like the bridge's tables.

- The tool's input schema is the function's input; the server checks the arguments.
- The result is the tool's structured content, else its text (parsed when it is a
  JSON object or array). A tool reporting an error is a SQL error (38000) naming the
  tool, with a HINT that names the function (not a table).
- A tool that cannot be served as a function is left out, with a warning in the log.

The MCP package is imported only when a server's tools are made functions.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._fns import Fn, make_fn
from ._resource import ResourceDefinitionError
from ._schema import snake, sql_name

if TYPE_CHECKING:
    from .mcp import McpConnection

__all__ = ["fns_from_mcp"]

log = logging.getLogger(__name__)


class _McpCall:
    """The handler of one MCP tool's function."""

    def __init__(self, connection: McpConnection, tool: str, fn_name: str, read_only: bool
                 ) -> None:
        self.connection = connection
        self.tool = tool
        self.fn_name = fn_name
        self.read_only = read_only

    async def __call__(self, arguments: dict[str, Any]) -> Any:
        from .mcp import McpToolError
        from .mcp._values import maybe_json, result_text

        hint = (f"The tool reported this error. Check the arguments against \\df+ fn."
                f"{self.fn_name} and try again.")
        try:
            result = await self.connection.call_tool(
                self.tool, arguments, table="", retry=self.read_only)
        except McpToolError as exc:
            if exc.hint and "\\d+" in exc.hint:
                exc.hint = hint
            exc.fields.pop("table_name", None)
            raise
        text = result_text(result)
        if result.is_error:
            message = text
            if not message and result.structured_content is not None:
                message = json.dumps(result.structured_content, ensure_ascii=False)
            error = McpToolError(
                self.connection.namespace, self.tool, "",
                (message or "the tool reported an error without a message").strip(), hint=hint)
            error.fields.pop("table_name", None)
            raise error
        if result.structured_content is not None:
            return result.structured_content
        parsed = maybe_json(text)
        return parsed if parsed is not None else text


async def fns_from_mcp(connection: McpConnection) -> list[Fn]:
    """Every tool of one MCP server as a function named ``<namespace>_<tool>`` (snake_case).

    Connects (if not yet connected) and lists the tools; the server's
    ``include``/``exclude`` apply. The tool's input schema is the input; the
    server checks the arguments. The result is the tool's structured content,
    else its text (parsed when it is a JSON object or array). A tool reporting
    an error is a SQL error (38000) naming the tool.
    """
    config = connection.config
    tools = await connection.list_tools()
    taken: set[str] = set()
    out = []
    for tool in tools:
        if not config.serves(tool.name):
            continue
        name = sql_name(f"{config.namespace}_{snake(tool.name) or 'tool'}", fallback="tool",
                        taken=taken)
        read_only = bool(tool.annotations and tool.annotations.read_only_hint)
        title = tool.title or (tool.annotations.title if tool.annotations else None)
        brief = (tool.description or title or "").strip()
        if brief and not brief.endswith((".", "!", "?")):
            brief += "."
        about = (brief + " " if brief else "") + (
            f'(MCP tool "{tool.name}" of server "{config.namespace}".)')
        schema = tool.input_schema if isinstance(tool.input_schema, Mapping) else None
        try:
            out.append(make_fn(name, input=schema, description=about,
                               handler=_McpCall(connection, tool.name, name, read_only),
                               read_only=read_only, check_input=False, brief=brief))
        except ResourceDefinitionError as exc:
            log.warning("MCP server %r: tool %r is not served as a function: %s",
                        config.namespace, tool.name, exc)
    return out
