"""A transaction reads its own writes, in process and over the wire.

Inside BEGIN, a read of a resource sees what the transaction staged: inserted rows
appear, updated rows show their new values, deleted rows are gone (matched by the
primary key; without one, only inserts are shown). Such a read says so in a NOTICE,
EXPLAIN says the overlay applies, and ROLLBACK drops it with the writes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from ..scenarios.fix_ways import WAYS, open_way
from .fix_reliability import Notes, serve

OVERLAID = ('reads of "notes" include this transaction\'s staged writes: 1 row inserted, '
            "1 row updated, 1 row deleted (by #1, #2, #3), not fired yet")


@pytest.fixture(params=WAYS)
async def world(request: Any, sidecar: Any) -> AsyncIterator[tuple[Notes, Any]]:
    notes = Notes()
    async with serve(sidecar, [notes.resource(), notes.resource("jot", pk=False)]) as served:
        way = await open_way(request.param, served.db, served.dsn("ann"))
        yield notes, way
        await way.close()


async def test_staged_insert_update_and_delete_are_read_until_rollback(world):
    notes, way = world
    await way.execute("BEGIN")
    await way.execute("INSERT INTO notes (title) VALUES ('third')")
    out = await way.execute("UPDATE notes SET body = 'changed' WHERE id = 1")
    assert out.tag == "UPDATE 1"
    out = await way.execute("DELETE FROM notes WHERE id = 2")
    assert out.tag == "DELETE 1"
    out = await way.execute("SELECT id, title, body FROM notes ORDER BY title")
    # The inserted row's id is the tool's to assign: NULL until COMMIT.
    assert out.rows == [(1, "first", "changed"), (None, "third", "")]
    [(severity, message, hint)] = out.notices
    assert (severity, message) == ("NOTICE", OVERLAID)
    assert "ROLLBACK discards them" in hint
    out = await way.execute("SELECT title FROM notes WHERE title = 'third'")
    assert out.rows == [("third",)]
    out = await way.execute("EXPLAIN SELECT * FROM notes")
    assert ("Overlay: reads of notes see this transaction's staged writes #1, #2, #3 "
            "(not fired yet)",) in out.rows
    await way.execute("ROLLBACK")
    out = await way.execute("SELECT id, title, body FROM notes ORDER BY id")
    assert out.rows == [(1, "first", ""), (2, "second", "")]
    assert out.notices == []
    out = await way.execute("EXPLAIN SELECT * FROM notes")
    assert not any("Overlay" in row[0] for row in out.rows)
    assert notes.writes() == []  # nothing fired


async def test_without_a_primary_key_only_inserts_are_read(world):
    notes, way = world
    await way.execute("BEGIN")
    await way.execute("INSERT INTO jot (title) VALUES ('staged')")
    out = await way.execute("SELECT title FROM jot ORDER BY title")
    assert out.rows == [("first",), ("second",), ("staged",)]
    [(_, message, _)] = out.notices
    assert message.startswith('reads of "jot" include this transaction\'s staged writes: '
                              "1 row inserted (by #1)")
    await way.execute("COMMIT")
    assert notes.writes() == [("insert", ["staged"])]
