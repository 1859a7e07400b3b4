"""What a result shows its client (``engine/result_limits.py``), through the wire: the notices that
``client_min_messages`` lets through, and no others."""

from __future__ import annotations

from .fix_session import session

STAGED = ("NOTICE", "staged #1: tasks.insert(1 row) will be called at COMMIT")


async def test_client_min_messages_filters_the_notices(server):
    async with session(server) as s:
        await s.tag("BEGIN")
        await s.tag("INSERT INTO tasks (title) VALUES ('seen')")
        assert s.notices == [STAGED]
        await s.tag("ROLLBACK")
        await s.tag("SET client_min_messages = warning")
        await s.tag("BEGIN")
        await s.tag("INSERT INTO tasks (title) VALUES ('unseen')")
        assert s.notices == []
        await s.tag("ROLLBACK")
