"""The ``scratchpad`` views (``_views``): a table's group and one-line description come
from the resource's own data (``group``, ``brief``), never from its description's text."""

from __future__ import annotations

import psycopg

from glove_scratchpad.resources import define_resource

from ..fix_server import dsn, rows, serving


def _table(name: str, **kw):
    return define_resource(name, columns=[("id", "bigint")], volatility="stable",
                           select=lambda b: [], **kw)


async def test_a_tables_group_and_short_description_are_its_own_data(make_db):
    db = await make_db([
        # What a bridge makes: a description with its maker's notes, its group, its brief.
        _table("crm_notes", description="Notes of a customer. Made by the notes bridge.",
               brief="The notes, one per customer", group="sales"),
        # A description that only looks like an MCP tool's says nothing of its group.
        _table("crm_people", description='People. (MCP tool "people" of server "hr".)'),
    ])
    async with serving(db) as server, await psycopg.AsyncConnection.connect(
            dsn(server), autocommit=True) as conn:
        assert await rows(conn, "SELECT name, namespace, description FROM "
                          "scratchpad.resources WHERE name LIKE 'crm%' ORDER BY name") == [
            ("crm_notes", "sales", "Notes of a customer. Made by the notes bridge."),
            ("crm_people", "crm", 'People. (MCP tool "people" of server "hr".)')]
        found = await rows(conn, "SELECT name, namespace, summary FROM "
                           "scratchpad.search('notes customer') WHERE name = 'crm_notes'")
        assert found == [("crm_notes", "sales", "The notes, one per customer")]
