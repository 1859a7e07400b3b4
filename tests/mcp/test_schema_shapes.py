"""Tool shapes, against a small real MCP server (fixtures/shapes_server.py)."""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from glove_scratchpad.catalog import Sidecar
from glove_scratchpad.resources.mcp import McpBridge, McpServerConfig, McpToolError, ToolOverride
from glove_scratchpad.server import Database

SHAPES = Path(__file__).parent / "fixtures" / "shapes_server.py"


@pytest.fixture(scope="module")
async def shapes(sidecar: Sidecar) -> AsyncIterator[tuple[McpBridge, Database]]:
    config = McpServerConfig(
        namespace="shapes",
        command=sys.executable,
        args=[str(SHAPES)],
        timeout=0.5,
        tools={
            "report": ToolOverride(rows="items.0.rows"),
            "enqueue": ToolOverride(batch="jobs"),
            "record": ToolOverride(table="shapes_records", description="Records things."),
        },
    )
    async with McpBridge([config]) as bridge:
        assert bridge.failures == {}
        db = await Database.create(
            resources=bridge.resources, writes=True, sidecar=sidecar, database="mcp_shapes"
        )
        try:
            yield bridge, db
        finally:
            await db.close()


@pytest.fixture
def db(shapes: tuple[McpBridge, Database]) -> Database:
    return shapes[1]


@pytest.fixture
def bridge(shapes: tuple[McpBridge, Database]) -> McpBridge:
    return shapes[0]


async def test_a_call_that_takes_too_long_times_out(db: Database) -> None:
    with pytest.raises(McpToolError, match=r"no answer within 0\.5 s") as info:
        await db.execute("SELECT result FROM shapes_nap WHERE seconds = 1.5")
    assert info.value.message.startswith('MCP tool "nap" of server "shapes" failed')
    r = await db.execute("SELECT result FROM shapes_nap WHERE seconds = 0")
    assert r.rows == [("awake",)]


async def test_json_schema_types_become_postgres_types(db: Database) -> None:
    r = await db.execute(
        "SELECT column_name, data_type, is_nullable FROM information_schema.columns"
        " WHERE table_name = 'shapes_events' ORDER BY ordinal_position"
    )
    assert r.rows == [
        ("name", "text", "YES"),
        ("starts_at", "timestamp with time zone", "YES"),
        ("day", "date", "NO"),
        ("kind", "text", "YES"),
        ("seats", "bigint", "YES"),
        ("price", "double precision", "YES"),
        ("online", "boolean", "YES"),
        ("tags", "jsonb", "YES"),
    ]


async def test_an_array_result_is_one_row_per_element(db: Database) -> None:
    r = await db.execute(
        "SELECT name, starts_at, day, kind, seats, price, online, tags"
        " FROM shapes_events WHERE day = '2030-05-01' ORDER BY starts_at"
    )
    assert r.rows == [
        (
            "Parsing in anger",
            dt.datetime(2030, 5, 1, 9, 30, tzinfo=dt.UTC),
            dt.date(2030, 5, 1),
            "talk",
            120,
            0.0,
            True,
            ["parsing"],
        ),
        (
            "Lexers by hand",
            dt.datetime(2030, 5, 1, 14, 0, tzinfo=dt.UTC),
            dt.date(2030, 5, 1),
            "workshop",
            20,
            49.5,
            False,
            ["lexing", "hands-on"],
        ),
    ]


async def test_an_optional_argument_echoed_by_the_result(db: Database) -> None:
    r = await db.execute(
        "SELECT name FROM shapes_events WHERE day = '2030-05-01' AND kind = 'workshop'"
    )
    assert r.rows == [("Lexers by hand",)]


async def test_enums_and_descriptions(bridge: McpBridge) -> None:
    events = next(r for r in bridge.resources if r.name == "shapes_events")
    kind = events.column("kind")
    assert kind is not None and kind.description == "one of: talk, workshop"
    name = events.column("name")
    assert name is not None and name.description == "What happens"
    assert events.description.startswith("The events of one day.")


async def test_rows_at_a_path(db: Database) -> None:
    r = await db.execute("SELECT id, label, size FROM shapes_report WHERE size = 3 ORDER BY id")
    assert r.rows == [(1, "cell 1", 3), (2, "cell 2", 3), (3, "cell 3", 3)]


async def test_odd_names_become_sql_identifiers(db: Database) -> None:
    r = await db.execute(
        "SELECT result FROM shapes_get_user_info WHERE user_id = 'u1' AND select_ = 'name'"
    )
    assert r.rows == [("u1:name",)]


async def test_each_inserted_row_is_one_call(db: Database, bridge: McpBridge) -> None:
    records = next(r for r in bridge.resources if r.name == "shapes_records")
    assert records.description.startswith("Records things.")
    r = await db.execute(
        "INSERT INTO shapes_records (name, count) VALUES ('a', 2), ('b', DEFAULT)"
        " RETURNING name, count, (result->>'count')::int, result->>'id' IS NOT NULL,"
        " text LIKE '{%'"
    )
    assert r.rows == [("a", 2, 2, True, True), ("b", None, 1, True, True)]
    assert r.calls("shapes_records", "insert") == 1  # one insert call, which calls the tool twice


async def test_a_batch_argument_takes_the_rows_of_one_statement(db: Database) -> None:
    r = await db.execute(
        "INSERT INTO shapes_enqueue (title, priority, queue) VALUES ('x', 1, 'fast'),"
        " ('y', 2, 'fast'), ('z', DEFAULT, 'slow') RETURNING title, priority, queue, id > 0"
    )
    assert sorted(r.rows) == [
        ("x", 1, "fast", True),
        ("y", 2, "fast", True),
        ("z", 0, "slow", True),
    ]


async def test_a_tool_error(db: Database) -> None:
    with pytest.raises(McpToolError) as info:
        await db.execute("SELECT * FROM shapes_fail WHERE reason = 'the disk is full'")
    assert info.value.sqlstate == "38000"
    assert 'MCP tool "fail" of server "shapes" failed' in info.value.message
    assert "the disk is full" in info.value.message
