"""``glove-scratchpad mcp`` with MCP servers behind it, driven by the SDK's own client.

``--config`` serves the file's ``[[mcp.servers]]`` and settings, as ``serve
--config`` does, and ``serverInfo`` carries the package's version.
"""

from __future__ import annotations

import asyncio
import sys
from importlib.metadata import version
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from glove_scratchpad.resources.demo import demo_resources
from glove_scratchpad.server.mcp_server import CATALOG_URI, create_server

CLI = [sys.executable, "-m", "glove_scratchpad.server.cli", "mcp"]


async def sql(client: Client, statement: str) -> tuple[str, bool]:
    result = await client.call_tool("execute_sql", {"sql": statement})
    return result.content[0].text, bool(result.is_error)


async def test_server_info_has_the_package_version(make_db) -> None:  # type: ignore[no-untyped-def]
    server = create_server(await make_db(demo_resources()))
    async with Client(server) as client:
        assert client.server_info.name == "glove-scratchpad"
        assert client.server_info.version == version("glove-scratchpad")


async def test_config_serves_its_mcp_servers(tmp_path: Path) -> None:
    config = tmp_path / "glove.toml"
    config.write_text(
        f"""\
[server]
writes = true
sidecar_dir = "{tmp_path / 'pg'}"

[[mcp.servers]]
namespace = "clock"
command = "python"
args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]

[[mcp.servers]]
namespace = "down"
command = "/nonexistent/bin/mcp-server"
"""
    )
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "--config", str(config)])
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with asyncio.timeout(90), Client(stdio_client(params, errlog=errlog)) as client:
            assert client.server_info.version == version("glove-scratchpad")
            tools = (await client.list_tools()).tools
            execute = next(t for t in tools if t.name == "execute_sql")
            # writes = true came from the file: execute_sql may write.
            assert execute.annotations is not None and not execute.annotations.read_only_hint
            # Exactly the configured server's tables: not the demo set, not the server that
            # is down.
            assert await sql(client, "SELECT name FROM scratchpad.resources ORDER BY name") == (
                "SELECT 2\nname\nclock_convert_time\nclock_get_current_time",
                False,
            )
            catalog = (await client.read_resource(CATALOG_URI)).contents[0]
            assert "clock_get_current_time" in catalog.text
            text, failed = await sql(
                client, "SELECT timezone FROM clock_get_current_time WHERE timezone = 'UTC'"
            )
            assert (text, failed) == ("SELECT 1\ntimezone\nUTC", False)
    log = (tmp_path / "stderr.log").read_text()
    assert "MCP server 'down' is not served" in log
    assert "restart glove-scratchpad once the server is up" in log
    assert "Traceback" not in log
    assert not (tmp_path / "pg" / "postmaster.pid").exists()  # the sidecar was stopped


async def test_a_bad_mcp_server_config_is_one_line_on_stderr(tmp_path: Path) -> None:
    config = tmp_path / "glove.toml"
    config.write_text('[[mcp.servers]]\nnamespace = "pg_x"\ncommand = "x"\n')
    proc = await asyncio.create_subprocess_exec(
        *CLI, "--config", str(config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2
    assert out == b""  # stdout is the protocol's
    assert b"would make table names start with pg_" in err
    assert b"Traceback" not in err
