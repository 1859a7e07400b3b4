"""The command line with ``[[openapi.apis]]``: ``glove-scratchpad mcp --config`` serves
the API's tables to an MCP client (the SDK's own, over stdio), and a wrong entry stops
``serve`` and ``mcp`` with one line naming it, never a value it holds."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from .fix_api import api_served

CLI = [sys.executable, "-m", "glove_scratchpad.server.cli"]
ZOO = Path(__file__).with_name("zoo") / "swagger.yaml"


async def test_mcp_serves_an_apis_tables(tmp_path: Path) -> None:
    async with api_served() as api:
        config = tmp_path / "glove.toml"
        config.write_text(f'[server]\nsidecar_dir = "{tmp_path / "pg"}"\n\n'
                          f'[[openapi.apis]]\nnamespace = "t"\nspec = "{api.url}/openapi.json"\n'
                          'include = ["listThings", "getThing"]\n')
        params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "--config",
                                                             str(config)])
        with (tmp_path / "stderr.log").open("w") as errlog:
            async with asyncio.timeout(90), Client(stdio_client(params, errlog=errlog)) as client:
                result = await client.call_tool("execute_sql", {
                    "sql": "SELECT name FROM t_list_things WHERE id = 3"})
                assert (result.content[0].text, result.is_error) == (
                    "SELECT 1\nname\nthing 3", False)
    assert [p for m, p, _, _ in api.rec.requests] == ["/openapi.json", "/things/3"]
    assert not (tmp_path / "pg" / "postmaster.pid").exists()  # the sidecar was stopped


@pytest.mark.parametrize(("entry", "said"), [
    ('spec = "missing.yaml"', "could not read "),
    (f'spec = "{ZOO}"\nheadres = {{ Authorization = "Bearer sk-live-123" }}',
     "[[openapi.apis]] namespace = 'zoo': headres is not a key of it (see docs/openapi.md)"),
    (f'spec = "{ZOO}"\nheaders = {{ Authorization = "Bearer ${{GLOVE_NOT_SET}}" }}',
     "[[openapi.apis]] namespace = 'zoo': headers: the environment variable GLOVE_NOT_SET "
     "is not set"),
    (f'spec = "{ZOO}"\n[[openapi.apis.tables]]\nname = "x"\nselect = "GET /nothing"',
     "API 'zoo', table 'x': no operation 'GET /nothing' in the document"),
])
@pytest.mark.parametrize("command", ["serve", "mcp"])
async def test_a_wrong_entry_is_one_line(tmp_path: Path, command: str, entry: str,
                                         said: str) -> None:
    config = tmp_path / "glove.toml"
    config.write_text(f'[[openapi.apis]]\nnamespace = "zoo"\n{entry}\n')
    proc = await asyncio.create_subprocess_exec(
        *CLI, command, "--config", str(config), "--port", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2, err
    text = err.decode()
    assert said in text
    assert len(text.strip().splitlines()) == 1, text
    assert "sk-live-123" not in text and "Traceback" not in text
    if command == "mcp":
        assert out == b""  # stdout is the protocol's
