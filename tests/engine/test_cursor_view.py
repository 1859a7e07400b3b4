"""``pg_cursors`` (``engine/cursor_view.py``), through the wire: the session's own cursors,
as Postgres's view shows them, and none once they end."""

from __future__ import annotations

from .fix_session import session

VIEW = "SELECT name, statement, is_holdable, is_binary, is_scrollable FROM pg_cursors"


async def test_pg_cursors_shows_the_sessions_open_cursors(server):
    async with session(server) as s:
        await s.tag("BEGIN")
        await s.tag("DECLARE c SCROLL CURSOR FOR SELECT name FROM items")
        assert await s.rows(VIEW) == [
            ("c", "DECLARE c SCROLL CURSOR FOR SELECT name FROM items", False, False, True)]
        await s.tag("COMMIT")
        assert await s.rows(VIEW) == []
