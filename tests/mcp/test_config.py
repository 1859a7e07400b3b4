"""Configuration, names and the schema -> columns mapping (no server is started)."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.types import Tool, ToolAnnotations
from pydantic import ValidationError

from glove_scratchpad.resources import Resource, ResourceDefinitionError
from glove_scratchpad.resources.mcp import (
    McpBridge,
    McpConnection,
    McpServerConfig,
    ToolOverride,
    sql_identifier,
    tool_resource,
)

CONNECTION = McpConnection({"namespace": "srv", "command": "never-started"})


def make(
    name: str = "tool",
    *,
    read_only: bool = False,
    input: dict[str, Any] | None = None,
    output: dict[str, Any] | None = None,
    override: ToolOverride | None = None,
    description: str | None = None,
) -> Resource:
    tool = Tool(
        name=name,
        description=description,
        input_schema=input or {"type": "object", "properties": {}},
        output_schema=output,
        annotations=ToolAnnotations(read_only_hint=True) if read_only else None,
    )
    return tool_resource(CONNECTION, tool, override)


def columns(resource: Resource) -> dict[str, str]:
    return {c.name: c.pg_type for c in resource.columns}


# -- names ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "column", "expected"),
    [
        ("get-sum", False, "get_sum"),
        ("createEntities", False, "create_entities"),
        ("HTTPServer.Status", False, "http_server_status"),
        ("  spaced  out ", False, "spaced_out"),
        ("2fa", False, "_2fa"),
        ("from", True, "from_"),
        ("select", True, "select_"),
        ("from", False, "from"),
        ("entityType", True, "entity_type"),
        ("", True, "value"),
    ],
)
def test_sql_identifier(raw: str, column: bool, expected: str) -> None:
    assert sql_identifier(raw, column=column) == expected


def test_long_and_taken_names_stay_distinct() -> None:
    long = "x" * 100
    first = sql_identifier(long)
    assert len(first) == 63 and first == sql_identifier(long)
    assert first != sql_identifier("x" * 99 + "y")
    taken: set[str] = set()
    assert [
        sql_identifier("get-sum", taken=taken),
        sql_identifier("get_sum", taken=taken),
        sql_identifier("GetSum", taken=taken),
    ] == ["get_sum", "get_sum_2", "get_sum_3"]


# -- configuration ------------------------------------------------------------------------------


def test_a_server_has_one_transport() -> None:
    stdio = McpServerConfig(namespace="git", command="uvx", args=["mcp-server-git"])
    assert (stdio.transport, stdio.where) == ("stdio", "uvx mcp-server-git")
    http = McpServerConfig.model_validate(
        {"namespace": "web", "url": "https://example.com/mcp", "headers": {"X": "1"}}
    )
    assert http.transport == "http"
    for bad in (
        {"namespace": "x"},
        {"namespace": "x", "command": "a", "url": "http://b"},
        {"namespace": "x", "url": "http://b", "args": ["-v"]},
        {"namespace": "x", "command": "a", "headers": {"X": "1"}},
        {"namespace": "x", "url": "ftp://b"},
        {"namespace": "x", "comand": "typo"},
    ):
        with pytest.raises(ValidationError):
            McpServerConfig.model_validate(bad)


@pytest.mark.parametrize("namespace", ["Git", "1st", "pg", "pg_tools", "a-b", "x" * 41])
def test_a_namespace_is_a_plain_identifier(namespace: str) -> None:
    with pytest.raises(ValidationError, match="namespace"):
        McpServerConfig(namespace=namespace, command="x")


def test_overrides_from_a_config_table() -> None:
    config = McpServerConfig.model_validate(
        {
            "namespace": "memory",
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-memory"],
            "tools": {
                "read_graph": {
                    "rows": "entities",
                    "volatility": "volatile",
                    "columns": {
                        "name": "text",
                        "kind": {"type": "TimestampTZ", "source": "entityType"},
                    },
                }
            },
            "exclude": ["delete_entities"],
        }
    )
    override = config.tools["read_graph"]
    specs = override.columns or {}
    assert specs["name"].type == "text"
    assert (specs["kind"].type, specs["kind"].source) == ("timestamp with time zone", "entityType")
    with pytest.raises(ValidationError, match="unknown column type"):
        ToolOverride.model_validate({"columns": {"x": "text); DROP TABLE t; --"}})


def test_namespaces_are_unique_in_a_bridge() -> None:
    with pytest.raises(ValueError, match="namespace 'a'"):
        McpBridge([{"namespace": "a", "command": "x"}, {"namespace": "a", "command": "y"}])


# -- tools -> tables ---------------------------------------------------------------------------

ARGS = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to look for"},
        "limit": {"type": "integer", "default": 10},
        "since": {"type": "string", "format": "date-time"},
        "day": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]},
        "mode": {"type": "string", "enum": ["fast", "exact"]},
        "ratio": {"type": "number"},
        "deep": {"type": "boolean"},
        "filter": {"type": "object"},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "either": {"type": ["string", "integer"]},
    },
    "required": ["query"],
}


def test_a_read_only_tool_is_a_stable_select() -> None:
    r = make("search", read_only=True, input=ARGS, description="Searches things.")
    assert (r.name, r.verbs, r.volatility, r.keys) == (
        "srv_search",
        ("select",),
        "stable",
        ("query",),
    )
    assert columns(r) == {
        "text": "text",
        "result": "jsonb",
        "query": "text",
        "limit_": "bigint",
        "since": "timestamp with time zone",
        "day": "date",
        "mode": "text",
        "ratio": "double precision",
        "deep": "boolean",
        "filter": "jsonb",
        "ids": "jsonb",
        "either": "jsonb",
    }
    described = {c.name: c.description for c in r.columns}
    assert described["query"] == "What to look for"
    assert described["limit_"] == "Optional argument. default: 10"  # a reserved word
    assert described["mode"] == "Optional argument. one of: fast, exact"
    assert r.description == 'Searches things. (MCP tool "search" of server "srv".)'


def test_any_other_tool_is_a_volatile_insert_arguments_first() -> None:
    r = make(
        "send",
        input={
            "type": "object",
            "properties": {"to": {"type": "string"}, "body": {"type": "string"}},
            "required": ["to"],
        },
        output={"type": "object", "properties": {"id": {"type": "integer"}}},
    )
    assert (r.verbs, r.volatility, r.keys) == (("insert",), "volatile", ("to_",))
    assert list(columns(r)) == ["to_", "body", "id"]


def test_outputs_that_collide_with_arguments_are_renamed() -> None:
    r = make(
        "translate",
        read_only=True,
        input={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    )
    assert list(columns(r)) == ["output_text", "result", "text"]
    assert r.keys == ("text",)


def test_output_schema_shapes() -> None:
    item = {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "at": {"type": "string", "format": "date-time"}},
    }
    as_array = make("a", read_only=True, output={"type": "array", "items": item})
    assert columns(as_array) == {"id": "bigint", "at": "timestamp with time zone"}
    wrapped = make(
        "b",
        read_only=True,
        output={"type": "object", "properties": {"result": {"type": "array", "items": item}}},
    )
    assert columns(wrapped) == {"id": "bigint", "at": "timestamp with time zone"}
    one_row = make(
        "c",
        read_only=True,
        output={
            "type": "object",
            "$defs": {"Item": item},
            "properties": {
                "first": {"$ref": "#/$defs/Item"},
                "count": {"type": "integer"},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            },
        },
    )
    assert columns(one_row) == {"first": "jsonb", "count": "bigint", "note": "text"}
    scalars = make(
        "d",
        read_only=True,
        output={
            "type": "object",
            "properties": {"names": {"type": "array", "items": {"type": "string"}}},
        },
    )
    assert columns(scalars) == {"names": "text"}


def test_overrides() -> None:
    output = {
        "type": "object",
        "properties": {
            "page": {
                "type": "object",
                "properties": {
                    "items": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "entityName": {"type": "string"},
                                "score": {"type": "number"},
                            },
                        },
                    }
                },
            }
        },
    }
    r = make(
        "find",
        read_only=True,
        output=output,
        override=ToolOverride(
            table="hits", rows="page.items", volatility="volatile", description="Hits."
        ),
    )
    assert (r.name, r.volatility, r.description) == (
        "hits",
        "volatile",
        'Hits. (MCP tool "find" of server "srv".)',
    )
    assert columns(r) == {"entity_name": "text", "score": "double precision"}
    typed = make(
        "find",
        read_only=True,
        output=output,
        override=ToolOverride(
            rows="page.items", columns={"entity_name": "text", "score": "numeric"}
        ),
    )
    assert columns(typed) == {"entity_name": "text", "score": "numeric"}
    as_insert = make("find", read_only=True, override=ToolOverride(verb="insert"))
    assert (as_insert.verbs, as_insert.volatility) == (("insert",), "volatile")


def test_the_only_array_of_objects_argument_is_a_batch() -> None:
    entities = {
        "type": "object",
        "properties": {
            "entities": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "entityType": {"type": "string"}},
                    "required": ["name"],
                },
            }
        },
        "required": ["entities"],
    }
    r = make("create_entities", input=entities)
    assert (list(columns(r)), r.keys) == (["name", "entity_type", "text", "result"], ("name",))
    assert 'each row is one element of its "entities" argument' in r.description
    off = make("create_entities", input=entities, override=ToolOverride(batch=False))
    assert (list(columns(off)), off.keys) == (["entities", "text", "result"], ("entities",))


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (ToolOverride(rows="nope"), "rows path 'nope' does not match"),
        (ToolOverride(batch="query"), "not an array argument"),
        (ToolOverride(verb="select", batch="ids"), "insert tables only"),
        (ToolOverride(columns={"Bad Name": "text"}), "not a lower-case SQL identifier"),
    ],
)
def test_override_mistakes_are_definition_errors(override: ToolOverride, message: str) -> None:
    with pytest.raises(ResourceDefinitionError, match=message):
        make(
            "search",
            input=ARGS,
            output={"type": "object", "properties": {"x": {"type": "string"}}},
            override=override,
        )


def test_names_that_clash_after_sanitising_stay_apart() -> None:
    r = make(
        "lookup",
        read_only=True,
        input={
            "type": "object",
            "properties": {"userId": {"type": "string"}, "user_id": {"type": "integer"}},
        },
        output={"type": "object", "properties": {"user_id": {"type": "string"}}},
    )
    # The first argument shares the echoed result column; the second gets its own.
    assert columns(r) == {"user_id": "text", "user_id_2": "bigint"}


def test_a_batch_keeps_an_argument_named_like_an_item_field() -> None:
    r = make(
        "enqueue",
        input={
            "type": "object",
            "properties": {
                "jobs": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                },
                "name": {"type": "string", "description": "The queue"},
            },
        },
        override=ToolOverride(batch="jobs"),
    )
    assert list(columns(r))[:2] == ["name", "name_2"]
    queue = r.column("name_2")
    assert queue is not None and queue.description == "Optional argument. The queue"
