"""The rewrite (``sql/rewrite.py``) that points a statement at its resolved rows, through the
wire: the statement reads them under the name (or alias) it used."""

from __future__ import annotations

from .fix_answers import answer


async def test_a_reference_keeps_the_name_and_alias_the_statement_used(server):
    assert await answer(server, "SELECT items.name FROM items WHERE items.id = 7") == [
        ("item 7",)]
    assert await answer(server, "SELECT i.name FROM items AS i WHERE i.id = 8") == [
        ("item 8",)]
