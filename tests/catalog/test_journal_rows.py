"""The commit journal (``catalog/_journal.py``), through the wire: a write outside BEGIN is a
transaction of its own, one row of ``scratchpad.journal`` with its resource, verb,
arguments and ``fired`` once its tool answered."""

from __future__ import annotations

import secrets

from ..sql.fix_answers import answer


async def test_a_write_is_journaled_fired(server):
    title = f"journal-{secrets.token_hex(4)}"
    assert await answer(server, f"INSERT INTO tasks (title) VALUES ('{title}')") == [
        ("INSERT 0 1",)]
    rows = await answer(server, "SELECT seq, resource, verb, status, error FROM "
                                "scratchpad.journal WHERE arguments::text LIKE "
                                f"'%{title}%'")
    assert rows == [(1, "tasks", "insert", "fired", None)]
