"""The commit journal (``catalog/_journal.py``), through the wire: a write outside BEGIN is a
transaction of its own, one row of ``scratchpad.journal`` with its resource, verb,
arguments and ``fired`` once its tool answered. The write goes to the demo outbox, which
has no rows to read back, so the shared server's other tests see the same rows."""

from __future__ import annotations

import secrets

from ..sql.fix_answers import answer


async def test_a_write_is_journaled_fired(server):
    title = f"journal-{secrets.token_hex(4)}"
    insert = f"INSERT INTO emails (to_addr, subject) VALUES ('a@example.org', '{title}')"
    assert await answer(server, insert) == [("INSERT 0 1",)]
    rows = await answer(server, "SELECT seq, resource, verb, status, error FROM "
                                "scratchpad.journal WHERE arguments::text LIKE "
                                f"'%{title}%'")
    assert rows == [(1, "emails", "insert", "fired", None)]
