"""The MCP server mode, driven by the mcp SDK's own client: in process, over stdio and HTTP.

Each walk lists the tools, reads the catalog, reads through ``execute_sql``, stages a
write across calls (BEGIN, INSERT, the staged view, COMMIT: one statement each) and
gets an error with its HINT.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from glove_scratchpad.resources.demo import demo_resources
from glove_scratchpad.server.agent import preamble
from glove_scratchpad.server.mcp_server import CATALOG_URI, Sessions, create_server

CLI = [sys.executable, "-m", "glove_scratchpad.server.cli", "mcp"]


async def sql(client: Client, statement: str, tool: str = "execute_sql") -> tuple[str, bool]:
    result = await client.call_tool(tool, {"sql": statement})
    assert len(result.content) == 1
    return result.content[0].text, bool(result.is_error)


async def walk(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == ["execute_sql", "explain_sql"]
    assert tools[0].input_schema["required"] == ["sql"]
    assert tools[1].annotations is not None and tools[1].annotations.read_only_hint
    listed = (await client.list_resources()).resources
    assert [str(r.uri) for r in listed] == [CATALOG_URI]
    catalog = (await client.read_resource(CATALOG_URI)).contents[0]
    assert catalog.text == preamble(demo_resources(), writes=True)
    assert catalog.mime_type == "text/markdown"

    text, failed = await sql(client, "SELECT title FROM web WHERE query = 'postgresql' "
                                     "ORDER BY rank LIMIT 1")
    assert not failed
    assert text.startswith("SELECT 1\ntitle\nPostgreSQL")

    assert await sql(client, "BEGIN") == ("BEGIN", False)
    text, failed = await sql(client, "INSERT INTO emails (to_addr, subject) "
                                     "VALUES ('me@example.org', 'hello') RETURNING to_addr")
    assert not failed
    assert text.startswith("INSERT 0 1\nto_addr\nme@example.org\nNOTICE: staged #1")
    text, _ = await sql(client, "SELECT id, resource, verb, status FROM scratchpad.staged")
    assert text == "SELECT 1\nid\tresource\tverb\tstatus\n1\temails\tinsert\tstaged"
    text, failed = await sql(client, "COMMIT")
    assert not failed and text.startswith("COMMIT\nNOTICE: fired #1: emails.insert(1 row)\n"
                                          "DETAIL: scratchpad.journal txid ")

    text, failed = await sql(client, "SELECT * FROM web")
    assert failed
    assert text.startswith('ERROR 22023: resource "web" needs a value for its required key')
    assert "\nHINT: Add it to the WHERE clause, e.g. SELECT * FROM web WHERE query = '…'" in text

    text, failed = await sql(client, "SELECT * FROM web WHERE query = 'x'", "explain_sql")
    assert not failed and "Resource web (volatile, read)" in text


async def test_in_process(make_db):
    db = await make_db(demo_resources())
    server = create_server(db)
    async with Client(server) as client:
        await walk(client)
        with pytest.raises(MCPError, match="Unknown resource"):
            await client.read_resource("scratchpad://nothing")
        result = await client.call_tool("execute_sql", {"sql": "SELECT 1", "params": "oops"})
        assert result.is_error and '"params" must be an array' in result.content[0].text


async def test_sessions_are_kept_apart_and_forgotten_when_idle(make_db):
    db = await make_db(demo_resources())
    sessions = Sessions(db, idle_timeout=3600)
    async with sessions.lease("a") as a:
        await a.execute("BEGIN")
    async with sessions.lease("b") as b:
        assert b is not a and b.tx_status == "I"
    async with sessions.lease("a") as again:
        assert again is a and a.tx_status == "T"
    async with sessions.lease(None) as fresh:
        assert fresh is not a
    assert len(sessions) == 2
    sessions.idle_timeout = 0
    async with sessions.lease("c"):
        pass
    assert len(sessions) == 1  # a and b were idle too long


async def test_stdio(tmp_path: Path):
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "--writes",
                                                         "--sidecar-dir", str(tmp_path / "pg")])
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with asyncio.timeout(90), Client(stdio_client(params, errlog=errlog)) as client:
            await walk(client)
    log = (tmp_path / "stderr.log").read_text()
    assert "MCP server on stdio" in log  # logs went to stderr, the protocol was intact
    assert "Traceback" not in log
    assert not (tmp_path / "pg" / "postmaster.pid").exists()  # the sidecar was stopped


async def test_http(tmp_path: Path):
    proc = await asyncio.create_subprocess_exec(
        *CLI, "--writes", "--sidecar-dir", str(tmp_path / "pg"), "--http", "--port", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    try:
        async with asyncio.timeout(60):
            banner = (await proc.stdout.readline()).decode()
        assert banner.startswith("glove-scratchpad MCP server on http://127.0.0.1:"), banner
        url = banner.split(" on ")[1].strip()
        async with asyncio.timeout(60):
            async with Client(url) as client:
                assert client.protocol_version < "2026"  # a session, for transactions
                await walk(client)
            # A client pinned to the stateless protocol has no session: a transaction
            # cannot be left open across calls, and nothing it staged can fire.
            async with Client(url, mode="2026-07-28") as stateless:
                text, failed = await sql(stateless, "BEGIN")
                assert failed and text.startswith("ERROR 25000") and "in one call" in text
                text, failed = await sql(stateless, "BEGIN; INSERT INTO emails (to_addr, "
                                                    "subject) VALUES ('a@b.c', 'x'); COMMIT")
                assert not failed and "fired #1: emails.insert(1 row)" in text
                text, failed = await sql(stateless, "BEGIN; INSERT INTO emails (to_addr, "
                                                    "subject) VALUES ('a@b.c', 'x'); "
                                                    "SELECT * FROM nowhere; COMMIT")
                assert failed and text.startswith("ERROR 42P01")
                assert "nothing it staged fired" in text
    finally:
        proc.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            _, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    assert b"Traceback" not in err
    assert not (tmp_path / "pg" / "postmaster.pid").exists()


async def test_a_bad_resources_file_is_refused_on_stderr(tmp_path: Path):
    proc = await asyncio.create_subprocess_exec(
        *CLI, "--resources", str(tmp_path / "none.py"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2
    assert out == b""  # stdout is the protocol's
    assert b"no such file" in err


async def test_stdio_beside_a_running_server_on_the_default_sidecar(tmp_path: Path):
    """``make run`` holds the default sidecar directory; the MCP mode started beside it
    finds one of its own instead of being refused (and the client seeing only 'Connection
    closed')."""
    import os

    from ..fix_cli import cli_server

    cache = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    async with cli_server("--port", "0", env=cache):
        params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "--writes"],
                                       env={**os.environ, **cache})
        with (tmp_path / "stderr.log").open("w") as errlog:
            async with asyncio.timeout(90), Client(stdio_client(params, errlog=errlog)) as client:
                text, failed = await sql(client, "SELECT 1 AS one")
                assert (text.splitlines()[:3], failed) == (["SELECT 1", "one", "1"], False)
        assert "in use by another" not in (tmp_path / "stderr.log").read_text()
