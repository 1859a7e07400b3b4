"""An MCP server of the tests' own (stdio) whose one tool, ``typed``, answers rows whose
values break the column types its table declares (``columns``: it has no output
schema, whose types the MCP client would check itself), as ``fix_answers.TYPED`` says
for each ``kind``: the MCP twin of the hostile API's ``/typed``.

Run: python tests/security/typed_mcp.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

# Run as a script: the fixture beside it is imported by its own name.
sys.path.insert(0, str(Path(__file__).parent))
from fix_answers import TYPED


def main() -> None:
    tool = types.Tool(
        name="typed", description="One row of the kind asked for.",
        annotations=types.ToolAnnotations(read_only_hint=True),
        input_schema={"type": "object", "properties": {"kind": {"type": "string"}},
                      "required": ["kind"]})

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        kind = str((params.arguments or {}).get("kind", "good"))
        row = {**TYPED["good"], **TYPED.get(kind, {})}
        return types.CallToolResult(content=[types.TextContent(
            type="text", text=json.dumps({"rows": [row]}))])

    server = Server("typed", on_list_tools=list_tools, on_call_tool=call_tool)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
