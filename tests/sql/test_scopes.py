"""The scopes of a statement's analysis (``sql/scopes.py``), through the wire: a CTE of the
statement hides a resource of its name in the scopes it is visible in, and only there."""

from __future__ import annotations

from .fix_answers import answer


async def test_a_cte_of_a_resources_name_is_read_instead_of_the_resource(server):
    assert await answer(server, "WITH items AS (SELECT 1 AS id) SELECT id FROM items") == [
        (1,)]


async def test_outside_the_cte_the_name_is_the_resource_again(server):
    assert await answer(server, "SELECT (WITH items AS (SELECT 0 AS id) SELECT id FROM items),"
                                " name FROM items WHERE id = 9") == [(0, "item 9")]
