"""A session's settings under Postgres's transaction rules (``engine/session_settings.py``),
through the wire: SET LOCAL and ``set_config(…, true)`` last until the transaction ends, and
a SET in a transaction rolled back is undone."""

from __future__ import annotations

from .fix_session import session


async def test_set_local_and_set_config_local_end_with_the_transaction(server):
    async with session(server) as s:
        (before,) = await s.rows("SHOW application_name")
        await s.tag("BEGIN")
        await s.tag("SET LOCAL application_name = 'inside'")
        assert await s.rows("SHOW application_name") == [("inside",)]
        await s.tag("COMMIT")
        assert await s.rows("SHOW application_name") == [before]
        await s.tag("BEGIN")
        assert await s.rows("SELECT set_config('application_name', 'cfg', true)") == [("cfg",)]
        assert await s.rows("SHOW application_name") == [("cfg",)]
        await s.tag("COMMIT")
        assert await s.rows("SHOW application_name") == [before]


async def test_a_set_in_a_rolled_back_transaction_is_undone(server):
    async with session(server) as s:
        (before,) = await s.rows("SHOW application_name")
        await s.tag("BEGIN")
        await s.tag("SET application_name = 'undone'")
        await s.tag("ROLLBACK")
        assert await s.rows("SHOW application_name") == [before]
        await s.tag("BEGIN")
        await s.tag("SET application_name = 'kept'")
        await s.tag("COMMIT")
        assert await s.rows("SHOW application_name") == [("kept",)]
