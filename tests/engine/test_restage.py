"""``scratchpad.restage(txid)`` (``engine/restage.py``), through the wire: it stages again
only what did not fire, so a transaction whose writes all fired stages nothing, and says so.
(A failed COMMIT's writes restaged: test_commit.py.) The write goes to the demo outbox,
which has no rows to read back, so the shared server's other tests see the same rows."""

from __future__ import annotations

import secrets

from .fix_session import session


async def test_a_transaction_that_fired_stages_nothing_again(server):
    title = f"restage-{secrets.token_hex(4)}"
    async with session(server) as s:
        await s.tag(f"INSERT INTO emails (to_addr, subject) VALUES ('a@example.org', '{title}')")
        ((txid,),) = await s.rows("SELECT txid FROM scratchpad.journal WHERE "
                                  f"arguments::text LIKE '%{title}%'")
        assert await s.rows(f"SELECT scratchpad.restage({txid})") == [
            (f"nothing to stage: every write of transaction {txid} has fired or is staged",)]
        assert await s.rows("SELECT count(*) FROM scratchpad.staged") == [(0,)]
