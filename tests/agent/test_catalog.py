"""The catalog an agent reads: the full and compact preambles, the form chosen by size,
grouping at scale, and ``scratchpad.resources`` as one-statement discovery."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from mcp.types import Tool

from glove_scratchpad.catalog._views import resource_group, short_description
from glove_scratchpad.resources import define_resource
from glove_scratchpad.resources.demo import demo_resources
from glove_scratchpad.resources.mcp import McpConnection, tool_resource
from glove_scratchpad.server.agent import (
    FULL_LIMIT,
    LIST_LIMIT,
    catalog_form,
    execute_sql,
    explain_sql,
    preamble,
)


def tables(prefix: str, n: int, *, about: str = "Does one thing with a record") -> list:
    return [define_resource(f"{prefix}_tool_{i:02}", columns=[("id", "text"), ("v", "text")],
                            keys=["id"], volatility="stable", description=f"{about} ({i}).",
                            select=lambda b: []) for i in range(n)]


def test_the_compact_form_lists_each_table_in_one_line():
    text = preamble(demo_resources(), detail="compact")
    listed = re.findall(r"^- (\w+) \((.*?)\): (.*)$", text, re.M)
    assert listed == [
        ("emails", "insert", "An outbox: INSERT queues a message (recorded, never sent)."),
        ("images", "select; key: prompt", "Image generation: one generated picture per prompt."),
        ("tasks", "select, insert, update, delete", "The user's task list."),
        ("time", "select", "The current time; one row."),
        ("web", "select; key: query", "Web search over a small offline corpus."),
    ]
    assert "## Tables (5)" in text
    # No column is listed: the agent is sent to one statement for them.
    for column in ("to_addr", "snippet", "tomorrow", "Search terms"):
        assert column not in text
    assert "`SELECT * FROM scratchpad.resources WHERE name = 'emails'`" in text
    assert "`\\d emails`" in text and "information_schema.columns" in text
    assert len(text) < len(preamble(demo_resources(), detail="full"))


def test_the_full_form_stays_available_and_is_the_default_for_a_small_catalog():
    full = preamble(demo_resources(), detail="full")
    assert "### web\n" in full and "- snippet text: A short extract" in full
    assert preamble(demo_resources()) == full
    assert catalog_form(demo_resources()) == "full"
    with pytest.raises(ValueError, match="detail must be"):
        preamble(demo_resources(), detail="terse")  # type: ignore[arg-type]


def test_the_default_is_chosen_by_size_with_a_configurable_threshold():
    resources = demo_resources()
    full = preamble(resources, detail="full")
    compact = preamble(resources, detail="compact")
    assert len(full) <= FULL_LIMIT
    assert preamble(resources, full_limit=len(full)) == full
    assert preamble(resources, full_limit=len(full) - 1) == compact
    assert catalog_form(resources, full_limit=len(full) - 1) == "compact"
    many = demo_resources() + tables("crm", 30, about="A tool with a longer description " * 3)
    assert len(preamble(many, detail="full")) > FULL_LIMIT
    assert preamble(many) == preamble(many, detail="compact")
    assert preamble(many, full_limit=10**6) == preamble(many, detail="full")


def test_past_the_list_limit_tables_are_grouped_with_a_count():
    many = tables("crm", 30) + tables("billing", 25) + tables("maps", 3)
    assert len(many) > LIST_LIMIT
    text = preamble(many)
    assert catalog_form(many) == "compact, grouped"
    assert "## Tables: 58, in 3 groups" in text
    assert re.findall(r"^- (\w+): (\d+) tables? \((.*)\)$", text, re.M) == [
        ("billing", "25", "billing_tool_00, billing_tool_08, billing_tool_16, …"),
        ("crm", "30", "crm_tool_00, crm_tool_10, crm_tool_20, …"),
        ("maps", "3", "maps_tool_00, maps_tool_01, maps_tool_02"),
    ]
    assert ("`SELECT name, verbs, keys, description FROM scratchpad.resources WHERE namespace "
            "= 'billing' ORDER BY name`") in text
    assert "`SELECT * FROM scratchpad.search('words of the task')`" in text
    assert "crm_tool_07" not in text  # tables are found through the documented query
    # The limit is configurable.
    assert re.findall(r"^- crm_tool_07 ", preamble(many, detail="compact", list_limit=100),
                      re.M)


def test_a_tables_group():
    assert resource_group(define_resource("github_pr", columns=[("n", "bigint")],
                                          volatility="stable", select=lambda b: [])) == "github"
    assert resource_group(demo_resources()[0]) == "time"
    # An MCP table's group is its server's namespace, underscores and all.
    connection = McpConnection({"namespace": "my_srv", "command": "unused"})
    table = tool_resource(connection, Tool.model_validate({
        "name": "echo", "description": "Echo it back. Twice.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                        "required": ["text"]}}))
    assert table.name == "my_srv_echo" and resource_group(table) == "my_srv"
    assert short_description(table) == "Echo it back."
    # A declared group wins.
    assert resource_group(SimpleNamespace(group="tools", name="a_b", description="")) == "tools"  # type: ignore[arg-type]


def test_a_short_description_is_one_sentence_of_bounded_length():
    def about(text: str) -> str:
        return short_description(define_resource("t", columns=[("a", "text")],
                                                 volatility="stable", description=text,
                                                 select=lambda b: []))
    assert about("Finds things, e.g. files. Then more.") == "Finds things, e.g. files."
    long = about("word " * 60)
    assert long.endswith("word…") and len(long) <= 91
    assert about("") == ""


async def test_one_statement_gives_all_it_takes_to_call_a_table(make_db):
    forecast = define_resource(
        "forecast",
        columns=[{"name": "city", "pg_type": "text", "description": "City name"},
                 {"name": "days", "pg_type": "bigint", "description": "How many days"},
                 {"name": "units", "pg_type": "text", "description": "metric or imperial"},
                 {"name": "high", "pg_type": "double precision", "description": "Highest"}],
        keys=["city", "days"], filters=["units"], volatility="stable",
        description="Daily weather forecast.", select=lambda b: [])
    cities = define_resource("cities", columns=[("city", "text"), ("country", "text")],
                             volatility="immutable", select=lambda b: [])
    db = await make_db([*demo_resources(), forecast, cities])
    r = await db.execute("SELECT * FROM scratchpad.resources WHERE name = 'forecast'")
    assert r.command_tag == "SELECT 1"
    row = dict(zip([c.name for c in r.columns], r.rows[0], strict=True))
    assert row == {
        "name": "forecast",
        "description": "Daily weather forecast.",
        "verbs": "select",
        "volatility": "stable",
        "keys": "city, days",
        "primary_key": "",
        "namespace": "forecast",
        "filters": "units",
        "columns": "city text, required key: City name\n"
                   "days bigint, required key: How many days\n"
                   "units text, filter: metric or imperial\n"
                   "high double precision: Highest",
        "key_sources": row["key_sources"],
        "example": "SELECT * FROM forecast WHERE city = '…' AND days = 1",
    }
    city, days = row["key_sources"].split("\n")
    assert city.startswith("city: a value (city = …, or city IN (…) for one call per value")
    assert "JOIN forecast x ON x.city = t.col" in city
    assert city.endswith("; same-named columns: cities.city")
    assert days.startswith("days: ") and "same-named" not in days
    # Every column is described (types and descriptions), as \d and information_schema do.
    r = await db.execute("SELECT column_name, data_type FROM information_schema.columns "
                         "WHERE table_schema = 'scratchpad' AND table_name = 'resources' "
                         "ORDER BY ordinal_position")
    assert [name for name, _ in r.rows] == [
        "name", "description", "verbs", "volatility", "keys", "primary_key", "namespace",
        "filters", "columns", "key_sources", "example"]
    r = await db.execute("SELECT name FROM scratchpad.resources WHERE namespace = 'forecast'")
    assert r.rows == [("forecast",)]


async def test_every_example_statement_is_one_the_server_accepts(make_db):
    db = await make_db(demo_resources())
    r = await db.execute("SELECT name, example FROM scratchpad.resources ORDER BY name")
    examples = dict(r.rows)
    assert examples["tasks"].split("\n") == [
        "SELECT * FROM tasks",
        "INSERT INTO tasks (title) VALUES ('…') RETURNING *",
        "UPDATE tasks SET title = '…' WHERE id = 1",
        "DELETE FROM tasks WHERE id = 1",
    ]
    assert examples["emails"] == ("INSERT INTO emails (to_addr, subject) VALUES ('…', '…') "
                                  "RETURNING *")
    for name, text in examples.items():
        for sql in text.split("\n"):
            plan = await explain_sql(db, sql)  # calls nothing
            assert not plan.startswith("ERROR"), (name, sql, plan)
            assert f"Resource {name} " in plan, (sql, plan)


async def test_a_discovery_read_is_not_cut_but_other_long_values_are(make_db):
    wide = define_resource(
        "wide", columns=[{"name": f"c{i}", "pg_type": "text",
                          "description": f"Column {i}: " + "a long description " * 4}
                         for i in range(12)],
        volatility="stable", select=lambda b: [{f"c{i}": "x" * 600 for i in range(12)}])
    db = await make_db([wide])
    reply = await execute_sql(db, "SELECT * FROM scratchpad.resources WHERE name = 'wide'")
    assert "were cut" not in reply
    assert "c11 text: Column 11: " in reply and len(reply) > 1000
    assert "were cut" in await execute_sql(db, "SELECT c0 FROM wide")
    assert "were cut" in await execute_sql(
        db, "SELECT r.columns, w.c0 FROM scratchpad.resources r, wide w")
