"""A session's virtual transaction (``engine/transaction.py``), through the wire: an error
aborts it until ROLLBACK, or until ROLLBACK TO a savepoint made before the error; a
savepoint rolled back to discards the writes staged after it."""

from __future__ import annotations

from .fix_session import session


async def test_an_error_aborts_the_transaction_until_rollback(server):
    async with session(server) as s:
        await s.tag("BEGIN")
        assert (await s.error("SELECT nope FROM items")).sqlstate == "42703"
        aborted = await s.error("SELECT 1")
        assert aborted.sqlstate == "25P02"
        assert aborted.message_hint == "ROLLBACK to end it; nothing it staged will fire."
        await s.tag("ROLLBACK")
        assert await s.rows("SELECT 1") == [(1,)]


async def test_rollback_to_a_savepoint_recovers_and_discards_what_followed_it(server):
    async with session(server) as s:
        await s.tag("BEGIN")
        await s.tag("INSERT INTO tasks (title) VALUES ('kept')")
        await s.tag("SAVEPOINT s")
        await s.tag("INSERT INTO tasks (title) VALUES ('dropped')")
        assert (await s.error("SELECT nope FROM items")).sqlstate == "42703"
        assert await s.tag("ROLLBACK TO SAVEPOINT s") == "ROLLBACK"
        assert s.notices == [("NOTICE", "discarded 1 staged write")]
        assert await s.rows("SELECT count(*) FROM scratchpad.staged") == [(1,)]
        await s.tag("ROLLBACK")
