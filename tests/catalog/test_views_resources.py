"""The ``scratchpad`` views (``catalog/_views.py``), through the wire: ``scratchpad.resources``
describes each table an agent reads in one row: verbs, volatility, keys, columns and an
example statement."""

from __future__ import annotations

from ..sql.fix_answers import answer


async def test_one_row_describes_a_resource(server):
    (row,) = await answer(server, "SELECT name, description, verbs, volatility, keys, "
                                  "primary_key, columns, example FROM scratchpad.resources "
                                  "WHERE name = 'items'")
    assert row == ("items", "A hundred items", "select", "immutable", "", "id",
                   "id bigint: Item id\nname text\nprice double precision",
                   "SELECT * FROM items")
