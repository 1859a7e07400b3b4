"""The MCP server mode serves the catalog in the form chosen by size, read through the
``mcp`` SDK's client: in process, and over stdio from ``glove-scratchpad mcp``."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from glove_scratchpad.resources import define_resource
from glove_scratchpad.resources.demo import demo_resources
from glove_scratchpad.server.agent import FULL_LIMIT, catalog_form, preamble
from glove_scratchpad.server.mcp_server import CATALOG_URI, create_server

CLI = [sys.executable, "-m", "glove_scratchpad.server.cli", "mcp"]

# 60 tables in three namespaces: past both the full form's size and the list limit.
MANY = '''
from glove_scratchpad.resources import define_resource

resources = [
    define_resource(f"{ns}_{i:02}", columns=[("id", "text"), ("body", "text")], keys=["id"],
                    volatility="stable", select=lambda b: [{"id": b.one("id"), "body": "ok"}],
                    description=f"Reads one {ns} record by its id, with all its fields.")
    for ns in ("crm", "billing", "docs") for i in range(20)
]
'''


def many_tables() -> list:
    namespace: dict = {}
    exec(MANY, namespace)
    return namespace["resources"]


async def read_catalog(client: Client) -> tuple[str, str, str | None]:
    listed = (await client.list_resources()).resources
    assert [str(r.uri) for r in listed] == [CATALOG_URI]
    text = (await client.read_resource(CATALOG_URI)).contents[0].text  # type: ignore[union-attr]
    return text, listed[0].description or "", client.instructions


async def test_a_large_catalog_is_served_compact_and_a_small_one_full(make_db):
    big = await make_db(many_tables())
    assert len(preamble(big, detail="full")) > FULL_LIMIT
    async with Client(create_server(big)) as client:
        text, about, instructions = await read_catalog(client)
        assert text == instructions == preamble(big, detail="compact")
        assert catalog_form(big) == "compact, grouped"
        assert "- billing: 20 tables (billing_00, billing_06, billing_13, …)" in text
        assert "groups (namespaces) with their counts" in about
        reply = await client.call_tool("execute_sql", {
            "sql": "SELECT name, keys FROM scratchpad.resources WHERE namespace = 'docs' "
                   "ORDER BY name LIMIT 2"})
        assert reply.content[0].text == "SELECT 2\nname\tkeys\ndocs_00\tid\ndocs_01\tid"  # type: ignore[union-attr]

    small = await make_db(demo_resources())
    async with Client(create_server(small)) as client:
        text, about, instructions = await read_catalog(client)
        assert text == instructions == preamble(small, detail="full")
        assert about.startswith("Every table (tool) with its columns")


async def test_the_form_and_its_limits_can_be_chosen(make_db):
    db = await make_db(demo_resources() + [
        define_resource(f"extra_{i}", columns=[("a", "text")], volatility="stable",
                        select=lambda b: []) for i in range(3)])
    async with Client(create_server(db, catalog="compact")) as client:
        text, about, _ = await read_catalog(client)
        assert text == preamble(db, detail="compact") and "## Tables (8)" in text
        assert about.startswith("Every table (tool) in one line")
    async with Client(create_server(db, full_limit=100)) as client:
        assert (await read_catalog(client))[0] == preamble(db, detail="compact")
    async with Client(create_server(db, catalog="compact", list_limit=5)) as client:
        text, about, _ = await read_catalog(client)
        assert "## Tables: 8, in 6 groups" in text and "- extra: 3 tables" in text
        assert about.startswith("The tables' groups")


async def test_glove_scratchpad_mcp_over_stdio_serves_the_compact_catalog(tmp_path: Path):
    module = tmp_path / "many.py"
    module.write_text(MANY)
    params = StdioServerParameters(command=CLI[0], args=[
        *CLI[1:], "--resources", str(module), "--sidecar-dir", str(tmp_path / "pg")])
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with asyncio.timeout(90), Client(stdio_client(params, errlog=errlog)) as client:
            text, _, instructions = await read_catalog(client)
            assert text == instructions == preamble(many_tables(), writes=False,
                                                    detail="compact")
            assert "## Tables: 60, in 3 groups" in text
            reply = await client.call_tool("execute_sql", {
                "sql": "SELECT columns, example FROM scratchpad.resources "
                       "WHERE name = 'crm_07'"})
            assert reply.content[0].text == (  # type: ignore[union-attr]
                "SELECT 1\ncolumns\texample\nid text, required key\\nbody text\t"
                "SELECT * FROM crm_07 WHERE id = '…'")
            reply = await client.call_tool("execute_sql", {
                "sql": "SELECT body FROM crm_07 WHERE id = 'a'"})
            assert reply.content[0].text == "SELECT 1\nbody\nok"  # type: ignore[union-attr]
    assert "Traceback" not in (tmp_path / "stderr.log").read_text()
