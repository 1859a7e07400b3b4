"""The server's own functions run by their rooms (``engine/system_calls.py``), through the
wire: ``scratchpad.refresh`` says what it dropped, and names the view of kept calls for a
table it does not know; ``scratchpad.restage`` names the journal for a transaction not in
the caller's."""

from __future__ import annotations

from .fix_session import session


async def test_refresh_says_what_it_dropped(server):
    async with session(server) as s:
        assert await s.rows("SELECT scratchpad.refresh('items')") == [
            ("dropped 0 kept calls of items",)]
        error = await s.error("SELECT scratchpad.refresh('nope')")
        assert error.sqlstate == "42P01"
        assert error.message_primary == 'resource "nope" does not exist'
        assert error.message_hint == "SELECT resource FROM scratchpad.cache lists the kept calls."


async def test_restage_of_a_transaction_not_in_the_journal(server):
    async with session(server) as s:
        error = await s.error("SELECT scratchpad.restage(987654321)")
        assert error.sqlstate == "22023"
        assert error.message_primary == "transaction 987654321 is not in your journal"
        assert "scratchpad.journal" in error.message_hint
