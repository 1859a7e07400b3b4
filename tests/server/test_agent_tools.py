"""The tool definitions and their OpenAI and Anthropic adapters."""

from __future__ import annotations

import json

from glove_scratchpad.server.agent import (
    EXECUTE_SQL,
    anthropic_tool,
    anthropic_tools,
    openai_tool,
    openai_tools,
    tool_definitions,
)


def test_both_tools_take_sql_and_optional_params():
    tools = tool_definitions()
    assert [t["name"] for t in tools] == ["execute_sql", "explain_sql"]
    for tool in tools:
        assert set(tool) == {"name", "description", "input_schema"}
        assert tool["description"]
        schema = tool["input_schema"]
        assert schema["type"] == "object"
        assert schema["required"] == ["sql"]
        assert schema["properties"]["sql"]["type"] == "string"
        params = schema["properties"]["params"]
        assert params["type"] == "array"
        assert "null" in params["items"]["type"]
        json.dumps(tool)  # plain JSON, nothing else


def test_definitions_are_fresh_copies():
    tool_definitions()[0]["input_schema"]["properties"].clear()
    assert "sql" in tool_definitions()[0]["input_schema"]["properties"]
    assert "sql" in EXECUTE_SQL["input_schema"]["properties"]


def test_openai_format():
    tools = openai_tools()
    assert [t["function"]["name"] for t in tools] == ["execute_sql", "explain_sql"]
    for tool, definition in zip(tools, tool_definitions(), strict=True):
        assert tool == {"type": "function", "function": {
            "name": definition["name"], "description": definition["description"],
            "parameters": definition["input_schema"]}}
    assert openai_tool(EXECUTE_SQL) == tools[0]


def test_anthropic_format():
    tools = anthropic_tools()
    assert tools == tool_definitions()  # the neutral definition is Anthropic's shape
    assert anthropic_tool(EXECUTE_SQL) == tools[0]
    assert anthropic_tool(EXECUTE_SQL) is not EXECUTE_SQL
