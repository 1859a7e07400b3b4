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
     "[[openapi.apis]] namespace = 'zoo' has no key 'headres'; did you mean headers or reads "
     "or spec_headers?"),
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


async def test_an_apis_requests_are_spans_under_their_calls(tmp_path: Path) -> None:
    """With --otlp-endpoint, a read of an API's table is a statement span, its call's span,
    and under that the HTTP request's: its method and status, never its URL's values."""
    import psycopg

    from ..fix_cli import cli_server
    from ..fix_otlp import otlp_receiver
    from ..fix_server import free_port

    port = free_port()
    async with api_served() as api:
        config = tmp_path / "glove.toml"
        config.write_text(f'[server]\nsidecar_dir = "{tmp_path / "pg"}"\nport = {port}\n\n'
                          f'[[openapi.apis]]\nnamespace = "t"\nspec = "{api.url}/openapi.json"\n'
                          'include = ["listThings", "getThing"]\n')
        with otlp_receiver() as (endpoint, spans):
            async with cli_server("--config", str(config), "--otlp-endpoint", endpoint,
                                  env={"OTEL_BSP_SCHEDULE_DELAY": "100"}):
                url = f"postgresql://agent@127.0.0.1:{port}/scratchpad"
                async with await psycopg.AsyncConnection.connect(url, autocommit=True) as c:
                    rows = await (await c.execute(
                        "SELECT name FROM t_list_things WHERE id = 3")).fetchall()
                    assert rows == [("thing 3",)]
                async with asyncio.timeout(20):
                    while not any(s.name.startswith("http ") for s in spans):
                        await asyncio.sleep(0.1)
    by_id = {s.span_id: s for s in spans}
    [request] = [s for s in spans if s.name.startswith("http ")]
    call = by_id[request.parent_span_id]
    assert call.name == "t_list_things select"
    assert by_id[call.parent_span_id].name == "SELECT"
    attributes = {a.key: a.value for a in request.attributes}
    assert attributes["http.request.method"].string_value == "GET"
    assert attributes["http.response.status_code"].int_value == 200
    assert b"/things/3" not in request.SerializeToString()
