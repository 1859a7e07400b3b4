"""Real MCP servers bridged as tables, queried, joined and written through SQL."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from glove_scratchpad.errors import ExternalRoutineError, SqlError
from glove_scratchpad.resources import Resource
from glove_scratchpad.resources.mcp import McpBridge, McpToolError
from glove_scratchpad.server import Database

from .conftest import COMMITS

# The commits of a git_git_log text, one row each: (sha, message).
COMMITS_OF_LOG = (
    r"regexp_matches(text, 'Commit: (\w+)\nAuthor: [^\n]*\nDate: [^\n]*\nMessage: ([^\n]*)',"
    " 'g') AS m"
)


def tables(bridge: McpBridge) -> dict[str, Resource]:
    return {r.name: r for r in bridge.resources}


# -- shapes -------------------------------------------------------------------------------


def test_every_tool_is_a_table_named_after_its_server(bridge: McpBridge) -> None:
    names = set(tables(bridge))
    assert {
        "time_get_current_time",
        "time_convert_time",
        "git_git_log",
        "git_git_commit",
        "memory_create_entities",
        "memory_read_graph",
        "memory_search_nodes",
        "memory_relations",
        "everything_echo",
        "everything_get_sum",
        "everything_get_structured_content",
        "web_echo",
        "web_get_sum",
    } <= names
    # include/exclude
    assert "everything_trigger_long_running_operation" not in names
    assert {n for n in names if n.startswith("web_")} == {"web_echo", "web_get_sum"}


def test_read_only_tools_are_stable_selects_others_volatile_inserts(bridge: McpBridge) -> None:
    t = tables(bridge)
    now = t["time_get_current_time"]
    assert (now.verbs, now.volatility, now.keys) == (("select",), "stable", ("timezone",))
    log = t["git_git_log"]
    assert (log.verbs, log.keys) == (("select",), ("repo_path",))
    commit = t["git_git_commit"]
    assert (commit.verbs, commit.volatility) == (("insert",), "volatile")
    assert commit.keys == ("repo_path", "message")


def test_columns_follow_the_schemas(bridge: McpBridge) -> None:
    t = tables(bridge)
    types = {c.name: c.pg_type for c in t["time_get_current_time"].columns}
    assert types == {
        "timezone": "text",
        "datetime": "text",
        "day_of_week": "text",
        "is_dst": "boolean",
    }
    # No output schema: the text and the structured result, then every argument.
    log = {c.name: c.pg_type for c in t["git_git_log"].columns}
    assert log == {
        "text": "text",
        "result": "jsonb",
        "repo_path": "text",
        "max_count": "bigint",
        "start_timestamp": "text",
        "end_timestamp": "text",
    }
    # number -> double precision; camelCase -> snake_case
    assert {c.name: c.pg_type for c in t["everything_get_sum"].columns}["a"] == "double precision"
    entities = {c.name: c.pg_type for c in t["memory_create_entities"].columns}
    assert entities == {"name": "text", "entity_type": "text", "observations": "jsonb"}
    # reserved words get a trailing underscore
    assert [c.name for c in t["memory_relations"].columns][:3] == ["from_", "to_", "relation_type"]


def test_descriptions_become_comments(bridge: McpBridge) -> None:
    t = tables(bridge)
    weather = t["everything_get_structured_content"]
    assert weather.description.startswith("Returns structured content")
    assert 'MCP tool "get-structured-content" of server "everything"' in weather.description
    location = weather.column("location")
    assert location is not None
    assert "Choose city" in location.description
    assert "one of: New York, Chicago, Los Angeles" in location.description
    temperature = weather.column("temperature")
    assert temperature is not None and temperature.description == "Temperature in celsius"
    max_count = t["git_git_log"].column("max_count")
    assert max_count is not None and max_count.description == "Optional argument. default: 10"
    assert "One INSERT is one call" in t["memory_create_entities"].description


async def test_the_catalog_shows_the_tables(db: Database) -> None:
    r = await db.execute(
        "SELECT column_name, data_type, is_nullable FROM information_schema.columns"
        " WHERE table_name = 'time_convert_time' ORDER BY ordinal_position"
    )
    assert r.rows == [
        ("source", "jsonb", "YES"),
        ("target", "jsonb", "YES"),
        ("time_difference", "text", "YES"),
        ("source_timezone", "text", "NO"),
        ("time", "text", "NO"),
        ("target_timezone", "text", "NO"),
    ]


# -- time -----------------------------------------------------------------------------------


async def test_current_time(db: Database) -> None:
    r = await db.execute(
        "SELECT datetime::timestamptz, day_of_week, is_dst"
        " FROM time_get_current_time WHERE timezone = 'UTC'"
    )
    ((now, day, is_dst),) = r.rows
    assert abs(now - dt.datetime.now(dt.UTC)) < dt.timedelta(minutes=1)
    assert day == now.strftime("%A")
    assert is_dst is False


async def test_join_two_tools_of_one_server(db: Database) -> None:
    r = await db.execute(
        "SELECT n.timezone, c.time_difference, c.target->>'timezone'"
        " FROM time_get_current_time n"
        " JOIN time_convert_time c ON c.source_timezone = 'UTC' AND c.time = '12:00'"
        "   AND c.target_timezone = 'Asia/Tokyo'"
        " WHERE n.timezone IN ('UTC', 'Europe/Paris') ORDER BY 1"
    )
    assert r.rows == [("Europe/Paris", "+9.0h", "Asia/Tokyo"), ("UTC", "+9.0h", "Asia/Tokyo")]
    assert r.calls("time_get_current_time") == 2  # one call per IN value
    assert r.calls("time_convert_time") == 1


async def test_stable_reads_are_shared_within_one_request(db: Database) -> None:
    r = await db.execute(
        "BEGIN; SELECT datetime FROM time_get_current_time WHERE timezone = 'UTC';"
        " SELECT datetime FROM time_get_current_time WHERE timezone = 'UTC'; COMMIT"
    )
    first, second = r.statements[1], r.statements[2]
    assert first.rows == second.rows
    assert r.calls("time_get_current_time") == 1


# -- git --------------------------------------------------------------------------------------


async def test_git_log(db: Database, git_repo: Path) -> None:
    r = await db.execute(
        f"SELECT m[2] FROM git_git_log, {COMMITS_OF_LOG} WHERE repo_path = $1", [str(git_repo)]
    )
    assert [row[0] for row in r.rows] == COMMITS[::-1]


async def test_an_optional_argument_is_passed_and_shown(db: Database, git_repo: Path) -> None:
    r = await db.execute(
        f"SELECT max_count, m[2] FROM git_git_log, {COMMITS_OF_LOG}"
        " WHERE repo_path = $1 AND max_count = 1",
        [str(git_repo)],
    )
    assert r.rows == [(1, COMMITS[-1])]


async def test_git_status_and_branches(db: Database, git_repo: Path) -> None:
    r = await db.execute(
        "SELECT s.text LIKE '%working tree clean%', b.text LIKE '%main%'"
        " FROM git_git_status s JOIN git_git_branch b ON b.repo_path = s.repo_path"
        "  AND b.branch_type = 'local'"
        " WHERE s.repo_path = $1 AND b.repo_path = $1",
        [str(git_repo)],
    )
    assert r.rows == [(True, True)]


# -- memory, and two servers in one statement ------------------------------------------------


async def test_insert_from_git_into_memory(db: Database, git_repo: Path, memory_file: Path) -> None:
    r = await db.execute(
        "INSERT INTO memory_create_entities (name, entity_type, observations)"
        " SELECT 'commit ' || left(m[1], 7), 'commit', jsonb_build_array(m[2])"
        f" FROM git_git_log, {COMMITS_OF_LOG} WHERE repo_path = $1"
        " RETURNING name, entity_type, observations->>0",
        [str(git_repo)],
    )
    assert r.command_tag == "INSERT 0 3"
    assert [row[1:] for row in r.rows] == [("commit", m) for m in COMMITS[::-1]]
    assert all(row[0].startswith("commit ") for row in r.rows)
    assert r.calls("memory_create_entities", "insert") == 1  # all rows in one call
    assert r.calls("git_git_log") == 1

    found = await db.execute(
        "SELECT name, observations FROM memory_search_nodes WHERE query = 'lexer'"
    )
    assert [row[1] for row in found.rows] == [["Fix the lexer"]]
    graph = await db.execute(
        "SELECT e->>'name', e->>'entityType' FROM memory_read_graph,"
        " jsonb_array_elements(entities) AS e ORDER BY 1"
    )
    assert {row for row in graph.rows} >= {(row[0], "commit") for row in r.rows}
    # The server's own store (MEMORY_FILE_PATH reached it through env).
    stored = [json.loads(line) for line in memory_file.read_text().splitlines()]
    assert {e["name"] for e in stored if e.get("type") == "entity"} >= {row[0] for row in r.rows}


async def test_insert_relations_and_read_them_back(db: Database) -> None:
    await db.execute(
        "INSERT INTO memory_create_entities (name, entity_type, observations) VALUES"
        " ('Ada', 'person', '[\"wrote the parser\"]'), ('parser', 'module', '[]')"
    )
    r = await db.execute(
        "INSERT INTO memory_create_relations (from_, to_, relation_type)"
        " VALUES ('Ada', 'parser', 'wrote') RETURNING *"
    )
    assert r.rows == [("Ada", "parser", "wrote")]
    rel = await db.execute(
        'SELECT from_, relation_type, to_ FROM memory_relations WHERE names = \'["Ada", "parser"]\''
    )
    assert rel.rows == [("Ada", "wrote", "parser")]


async def test_a_rolled_back_insert_calls_nothing(db: Database) -> None:
    r = await db.execute(
        "BEGIN; INSERT INTO memory_create_entities (name, entity_type, observations)"
        " VALUES ('ghost', 'test', '[]'); ROLLBACK"
    )
    assert r.calls("memory_create_entities") == 0
    found = await db.execute("SELECT count(*) FROM memory_search_nodes WHERE query = 'ghost'")
    assert found.rows == [(0,)]
    r = await db.execute(
        "BEGIN; INSERT INTO memory_create_entities (name, entity_type, observations)"
        " VALUES ('ghost', 'test', '[]'); COMMIT"
    )
    assert r.calls("memory_create_entities", "insert") == 1
    found = await db.execute("SELECT count(*) FROM memory_search_nodes WHERE query = 'ghost'")
    assert found.rows == [(1,)]


async def test_a_missing_required_argument_fails_before_any_call(db: Database) -> None:
    with pytest.raises(SqlError) as info:
        await db.execute(
            "INSERT INTO memory_create_entities (name, entity_type, observations)"
            " VALUES ('named', 'test', '[]'), ('nameless', NULL, '[]')"
        )
    err = info.value
    assert err.sqlstate == "22023"
    assert 'required column "entity_type"' in err.message
    assert err.detail == "Row 2 of 2 has none; the tool was not called."
    found = await db.execute("SELECT count(*) FROM memory_search_nodes WHERE query = 'named'")
    assert found.rows == [(0,)]


# -- everything, over stdio and over HTTP ------------------------------------------------------


async def test_everything_over_stdio(db: Database) -> None:
    r = await db.execute("SELECT text FROM everything_echo WHERE message = 'hello'")
    assert r.rows == [("Echo: hello",)]
    r = await db.execute(
        "SELECT temperature, conditions, humidity"
        " FROM everything_get_structured_content WHERE location = 'Chicago'"
    )
    ((temperature, conditions, humidity),) = r.rows
    assert isinstance(temperature, float) and isinstance(humidity, float)
    assert isinstance(conditions, str) and conditions


async def test_everything_over_http_joined_with_stdio(db: Database) -> None:
    r = await db.execute(
        "SELECT w.text, s.text FROM web_echo w, everything_get_sum s"
        " WHERE w.message = 'over http' AND s.a = 2 AND s.b = 40.5"
    )
    assert r.rows == [("Echo: over http", "The sum of 2 and 40.5 is 42.5.")]


async def test_in_fans_out_to_one_call_per_value(db: Database) -> None:
    r = await db.execute(
        "SELECT message, text FROM web_echo WHERE message IN ('a', 'b', 'c') ORDER BY 1"
    )
    assert r.rows == [("a", "Echo: a"), ("b", "Echo: b"), ("c", "Echo: c")]
    assert r.calls("web_echo") == 3


# -- errors -----------------------------------------------------------------------------------


async def test_a_tool_error_names_the_tool(db: Database) -> None:
    with pytest.raises(McpToolError) as info:
        await db.execute("SELECT * FROM time_get_current_time WHERE timezone = 'Mars/Olympus'")
    err = info.value
    assert isinstance(err, ExternalRoutineError) and err.sqlstate == "38000"
    assert err.message.startswith('MCP tool "get_current_time" of server "time" failed:')
    assert "Mars/Olympus" in err.message
    assert err.hint and "time_get_current_time" in err.hint


async def test_a_tool_error_from_git(db: Database, tmp_path: Path) -> None:
    with pytest.raises(McpToolError, match='MCP tool "git_log" of server "git" failed'):
        await db.execute(
            "SELECT text FROM git_git_log WHERE repo_path = $1", [str(tmp_path / "not-a-repo")]
        )
    # The server is still fine.
    r = await db.execute("SELECT text FROM everything_echo WHERE message = 'still here'")
    assert r.rows == [("Echo: still here",)]


async def test_a_required_key_is_needed(db: Database) -> None:
    with pytest.raises(SqlError) as info:
        await db.execute("SELECT * FROM git_git_log")
    assert info.value.sqlstate == "22023"
    assert "repo_path" in info.value.message
