"""The transaction statements and what ends with them (``engine/transaction_statements.py``),
through the wire: a cursor ends with its transaction unless declared WITH HOLD, and its
FETCH then says how to find those open."""

from __future__ import annotations

from .fix_session import session


async def test_a_cursor_ends_with_its_transaction_unless_held(server):
    async with session(server) as s:
        await s.tag("BEGIN")
        await s.tag("DECLARE c CURSOR FOR SELECT name FROM items")
        await s.tag("DECLARE h CURSOR WITH HOLD FOR SELECT name FROM items "
                    "WHERE id <= 2 ORDER BY id")
        assert await s.tag("COMMIT") == "COMMIT"
        gone = await s.error("FETCH c")
        assert (gone.sqlstate, gone.message_primary) == ("34000", 'cursor "c" does not exist')
        assert "SELECT name FROM pg_cursors" in gone.message_hint
        assert await s.rows("FETCH ALL FROM h") == [("item 1",), ("item 2",)]
        assert await s.tag("CLOSE h") == "CLOSE CURSOR"
