"""Traces of an MCP server's tools: a read of a tool's table is a statement span, its
call's span, and under that the MCP request's (``mcp tools/call``), with the tool's name
and never the arguments' values. The agent's traceparent rides in ``application_name``
here, the convention of a driver that can set nothing else (as in Postgres, the value
is cut at 63 bytes, which leaves 8 for a word before the traceparent's 55)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg

from ..fix_cli import cli_server
from ..fix_otlp import otlp_receiver
from ..fix_server import free_port
from .conftest import python_server

TRACE_ID, PARENT_ID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"


async def test_an_mcp_tools_requests_are_spans_under_their_calls(tmp_path: Path) -> None:
    port = free_port()
    clock = python_server("mcp_server_time", "--local-timezone", "UTC")
    args = ", ".join(f'"{a}"' for a in clock["args"])
    config = tmp_path / "glove.toml"
    config.write_text(f'[server]\nsidecar_dir = "{tmp_path / "pg"}"\nport = {port}\n\n'
                      f'[[mcp.servers]]\nnamespace = "clock"\ncommand = "{clock["command"]}"\n'
                      f"args = [{args}]\n")
    with otlp_receiver() as (endpoint, spans):
        async with cli_server("--config", str(config), "--otlp-endpoint", endpoint,
                              env={"OTEL_BSP_SCHEDULE_DELAY": "100"}):
            url = (f"postgresql://agent@127.0.0.1:{port}/scratchpad?application_name="
                   f"agent%2000-{TRACE_ID}-{PARENT_ID}-01")
            async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
                rows = await (await conn.execute(
                    "SELECT timezone FROM clock_get_current_time WHERE timezone = "
                    "'Europe/Oslo'")).fetchall()
                assert rows == [("Europe/Oslo",)]
            async with asyncio.timeout(20):
                while not any(s.name.startswith("mcp ") for s in spans):
                    await asyncio.sleep(0.1)
    by_id = {s.span_id: s for s in spans}
    [request] = [s for s in spans if s.name.startswith("mcp ")]
    assert request.name == "mcp tools/call"
    call = by_id[request.parent_span_id]
    assert call.name == "clock_get_current_time select"
    statement = by_id[call.parent_span_id]
    assert statement.name == "SELECT"
    # The statement is the agent's: its parent is the span application_name named.
    assert statement.trace_id.hex() == TRACE_ID
    assert statement.parent_span_id.hex() == PARENT_ID
    attributes = {a.key: a.value for a in request.attributes}
    assert attributes["mcp.method.name"].string_value == "tools/call"
    assert attributes["gen_ai.tool.name"].string_value == "get_current_time"
    assert attributes["glove.status"].string_value == "ok"
    assert not any(b"Europe/Oslo" in s.SerializeToString() for s in spans)  # no value
