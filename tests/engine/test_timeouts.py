"""How long a statement may take (``engine/timeouts.py``), through the wire: a
``statement_timeout`` the session sets stops a statement waiting on a tool, with a HINT,
and the session serves on."""

from __future__ import annotations

from .fix_session import session


async def test_a_sessions_statement_timeout_stops_a_slow_call(server):
    async with session(server) as s:
        assert await s.tag("SET statement_timeout = '300ms'") == "SET"
        error = await s.error("SELECT done FROM slow WHERE seconds = 5")
        assert error.sqlstate == "57014"
        assert error.message_primary == "canceling statement due to statement timeout"
        assert "raise statement_timeout within the server's limit" in error.message_hint
        assert await s.rows("SELECT 1") == [(1,)]
