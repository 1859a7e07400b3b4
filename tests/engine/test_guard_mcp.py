"""Retries and rate limits of MCP tools, from the configuration, over the wire.

``retries`` and ``rate`` of an ``[[mcp.servers]]`` table apply to each of its tools;
a tool's own ``[mcp.servers.tools.<name>]`` table overrides them. EXPLAIN shows them.
"""

from __future__ import annotations

import sys

from glove_scratchpad.resources.mcp import McpBridge, McpServerConfig, ToolOverride

from .fix_reliability import serve


async def _plan(conn, sql: str) -> str:
    cur = await conn.execute("EXPLAIN " + sql)
    return "\n".join(r[0] for r in await cur.fetchall())


async def test_a_servers_retries_and_rate_reach_its_tools_unless_a_tool_overrides(sidecar):
    config = McpServerConfig.model_validate({
        "namespace": "clock", "command": sys.executable,
        "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        "retries": 2, "rate": [5, 1],
        "tools": {"convert_time": {"verb": "select", "retries": 0, "rate": [1, 2]}},
    })
    assert config.tools["convert_time"] == ToolOverride(verb="select", retries=0, rate=(1, 2.0))
    async with McpBridge([config]) as bridge, serve(sidecar, bridge.resources) as served:
        assert bridge.failures == {}
        conn = await served.connect()
        plan = await _plan(conn, "SELECT * FROM clock_get_current_time WHERE timezone = 'UTC'")
        assert "Retries: up to 2, on TransientError or a timeout" in plan
        assert "Rate limit: 5 calls per 1 s, shared by every session" in plan
        plan = await _plan(conn, "SELECT * FROM clock_convert_time WHERE source_timezone = "
                           "'UTC' AND time = '12:00' AND target_timezone = 'Europe/Paris'")
        assert "Retries" not in plan
        assert "Rate limit: 1 call per 2 s, shared by every session" in plan
        cur = await conn.execute("SELECT day_of_week FROM clock_get_current_time "
                                 "WHERE timezone = 'UTC'")
        assert (await cur.fetchone())[0].endswith("day")
        await conn.close()
