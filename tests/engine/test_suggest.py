"""What a statement naming no table is told (``engine/suggest.py``), through the wire: the
HINT of 42P01 names the search by the statement's words, and the tables it finds."""

from __future__ import annotations

from .fix_session import session


async def test_an_unknown_tables_hint_names_the_search_and_its_best_matches(server):
    async with session(server) as s:
        error = await s.error("SELECT * FROM hundred_items")
    assert error.sqlstate == "42P01"
    assert error.message_primary == 'relation "hundred_items" does not exist'
    assert error.message_hint.startswith("SELECT * FROM scratchpad.search('hundred items')")
    assert "the best matches: items" in error.message_hint
