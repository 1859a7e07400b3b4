"""A hostile MCP server of the tests' own (stdio): its tools' names, descriptions and
schemas are what an upstream the user does not control might list.

Run: python tests/security/hostile_mcp.py evil       (one of each hostile tool, and a
     good one) | python tests/security/hostile_mcp.py explosive (nothing but unions of
     references nested 20 deep, 8 options each: no tool can be mapped)
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

READ_ONLY = types.ToolAnnotations(read_only_hint=True)
# A comment that ends its quote where backslashes are not escapes, then runs DDL.
INJECTION = "x\\'; CREATE TABLE public.pwned_mcp AS SELECT current_user; --"


def explosive(depth: int = 20, options: int = 8) -> dict[str, Any]:
    """An output schema whose rows are unions of references, nested ``depth`` deep."""
    defs: dict[str, Any] = {f"d{depth}": {"type": "object", "properties": {"v": {
        "type": "string"}}}}
    for d in range(depth):
        defs[f"d{d}"] = {"anyOf": [{"$ref": f"#/$defs/d{d + 1}"} for _ in range(options)]
                         + [{"type": "null"}]}
    return {"type": "object", "$defs": defs, "properties": {"rows": {
        "type": "array", "items": {"$ref": "#/$defs/d0"}}}}


def evil_tools() -> list[types.Tool]:
    def tool(name: str, description: str, props: dict[str, Any],
             output: dict[str, Any] | None = None) -> types.Tool:
        return types.Tool(name=name, description=description, annotations=READ_ONLY,
                          input_schema={"type": "object", "properties": props},
                          output_schema=output)

    return [
        # Named so that its table, evil_b_list, is the name of an API's table too.
        tool("b_list", "Lists b.", {"q": {"type": "string"}}),
        tool("nul_text", "Reads\x00 text.", {"q": {"type": "string",
                                                     "description": "A\x00 query"}}),
        tool("system_columns", INJECTION, {n: {"type": "string"} for n in (
            "xmin", "ctid", "oid", "tableoid")}),
        tool("explosive", "Never mapped.", {"q": {"type": "string"}}, explosive()),
        tool("fine", "A tool with nothing odd.", {"q": {"type": "string"}}),
    ]


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "evil"
    tools = evil_tools() if mode == "evil" else [
        types.Tool(name=f"boom_{n}", annotations=READ_ONLY, description="Never mapped.",
                   input_schema={"type": "object"}, output_schema=explosive())
        for n in range(3)]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        return types.CallToolResult(content=[types.TextContent(
            type="text", text=f"{params.name}: {args.get('q', '')}")])

    server = Server("hostile", on_list_tools=list_tools, on_call_tool=call_tool)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
