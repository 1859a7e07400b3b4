"""An MCP server's tools as functions (``_fns_mcp``): the real ``mcp-server-time`` from
PyPI, started over stdio as tests/mcp does, served as fn.time_* and called from SQL."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from glove_scratchpad import errors
from glove_scratchpad.resources import Fn, fns_from_mcp
from glove_scratchpad.resources.mcp import McpConnection, McpServerConfig
from glove_scratchpad.server import Database


def time_server(**extra: Any) -> McpServerConfig:
    if importlib.util.find_spec("mcp_server_time") is None:
        pytest.fail("the MCP server mcp_server_time is not installed: pip install mcp-server-time")
    return McpServerConfig(namespace="time", command=sys.executable,
                           args=["-m", "mcp_server_time", "--local-timezone", "UTC"], **extra)


@pytest.fixture(scope="module")
async def time_connection() -> AsyncIterator[McpConnection]:
    async with McpConnection(time_server()) as connection:
        yield connection


@pytest.fixture(scope="module")
async def time_fns(time_connection: McpConnection) -> list[Fn]:
    return await fns_from_mcp(time_connection)


@pytest.fixture(scope="module")
async def time_db(sidecar: Any, time_fns: list[Fn]) -> AsyncIterator[Database]:
    db = await Database.create([], sidecar=sidecar, database="test_fns_mcp", fns=time_fns)
    yield db
    await db.close()


async def test_each_tool_is_a_function(time_fns: list[Fn]) -> None:
    by_name = {f.name: f for f in time_fns}
    assert sorted(by_name) == ["time_convert_time", "time_get_current_time"]
    current = by_name["time_get_current_time"]
    assert current.read_only is True
    assert [(p.name, p.key, p.pg_type, p.required) for p in current.params] == [
        ("timezone", "timezone", "text", True)]
    assert current.summary().startswith(
        'Get current time in a specific timezone. (MCP tool "get_current_time" of server '
        '"time".) Arguments, named (x => …) or as one jsonb object (args): timezone text '
        "(required): IANA timezone name")
    convert = by_name["time_convert_time"]
    # "time" is a keyword where a named argument goes: the parameter is time_, the key time.
    assert [(p.name, p.key) for p in convert.params] == [
        ("source_timezone", "source_timezone"), ("time_", "time"),
        ("target_timezone", "target_timezone")]
    assert (await current.call({"timezone": "UTC"}))["timezone"] == "UTC"


async def test_the_origin_is_data_beside_the_description(time_fns: list[Fn],
                                                          time_db: Database) -> None:
    current = {f.name: f for f in time_fns}["time_get_current_time"]
    # The description users read names the tool and its server; a one-line summary is
    # cut from the tool's own words, kept apart.
    assert current.description == ('Get current time in a specific timezone. (MCP tool '
                                   '"get_current_time" of server "time".)')
    assert current.brief == "Get current time in a specific timezone."
    r = await time_db.execute("SELECT summary FROM scratchpad.search('current time zone') "
                              "WHERE name = 'fn.time_get_current_time'")
    assert r.rows == [("Get current time in a specific timezone.",)]


async def test_include_and_exclude_apply(time_connection: McpConnection) -> None:
    async with McpConnection(time_server(include=["convert_time"])) as only:
        assert [f.name for f in await fns_from_mcp(only)] == ["time_convert_time"]
    async with McpConnection(time_server(exclude=["convert_time"])) as rest:
        assert [f.name for f in await fns_from_mcp(rest)] == ["time_get_current_time"]


async def test_calling_the_tools_from_sql(time_db: Database) -> None:
    r = await time_db.execute("""
        SELECT fn.time_get_current_time(timezone => 'UTC')->>'timezone' AS tz,
               fn.time_convert_time(source_timezone => 'UTC', time_ => '12:00',
                                    target_timezone => 'Asia/Tokyo')->'target'->>'datetime'
                 AS tokyo""")
    assert r.rows[0][0] == "UTC"
    assert r.rows[0][1].endswith("T21:00:00+09:00")
    assert r.calls("fn.time_get_current_time") == 1
    # The same call as one JSON object, with the tool's own argument names.
    r = await time_db.execute("""
        SELECT fn.time_convert_time('{"source_timezone": "UTC", "time": "08:30",
                                      "target_timezone": "Europe/Paris"}')
               #>> '{target,timezone}'""")
    assert r.rows == [("Europe/Paris",)]
    r = await time_db.execute("""
        SELECT routine_name FROM information_schema.routines
         WHERE routine_schema = 'fn' ORDER BY 1""")
    assert r.rows == [("time_convert_time",), ("time_get_current_time",)]


async def test_a_tool_error_is_a_sql_error_naming_the_function(time_db: Database) -> None:
    session = time_db.session()
    with pytest.raises(errors.ExternalRoutineError) as caught:
        await session.execute("SELECT fn.time_get_current_time(timezone => 'Nowhere/Land')")
    exc = caught.value
    assert exc.sqlstate == "38000"
    assert exc.message.startswith('function fn.time_get_current_time failed: MCP tool '
                                  '"get_current_time" of server "time" failed: ')
    assert "Nowhere/Land" in exc.message
    assert exc.hint == ("The tool reported this error. Check the arguments against \\df+ "
                        "fn.time_get_current_time and try again.")
    r = await session.execute("SELECT fn.time_get_current_time(timezone => 'UTC')->>'timezone'")
    assert r.rows == [("UTC",)]
