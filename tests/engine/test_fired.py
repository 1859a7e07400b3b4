"""A write whose tool acted, over the wire: what it returns cannot make it fail.

The tool stores the note and returns a row that does not fit the table (an id of
the wrong type). The write happened: the statement succeeds with its count, a WARNING
says what did not fit, RETURNING shows the row as written, and the journal says
``fired`` (not ``failed``, nor left ``firing``), alone and inside BEGIN … COMMIT.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from glove_scratchpad.resources import define_resource

from .fix_reliability import serve


class Note(BaseModel):
    id: int | None = None
    title: str


@pytest.mark.parametrize("in_tx", [False, True], ids=["alone", "in a transaction"])
async def test_a_tool_that_acted_and_returned_a_wrong_row_fired(sidecar, in_tx):
    stored: list[str] = []

    def select() -> list[dict[str, Any]]:
        return [{"id": i, "title": t} for i, t in enumerate(stored, 1)]

    def insert(rows: list[Note]) -> list[dict[str, Any]]:
        stored.extend(r.title for r in rows)
        return [{"id": "not a number", "title": r.title} for r in rows]

    notes = define_resource("notes", schema=Note, volatility="volatile", select=select,
                            insert=insert)
    async with serve(sidecar, [notes]) as served:
        conn = await served.connect()
        if in_tx:
            await conn.execute("BEGIN")
        cur = await conn.execute("INSERT INTO notes (title) VALUES ('kept') RETURNING title")
        assert cur.statusmessage == "INSERT 0 1"
        assert await cur.fetchall() == [("kept",)]
        if in_tx:
            await conn.execute("COMMIT")
        assert stored == ["kept"]
        warnings = [m for s, m, _, _ in conn.notices if s == "WARNING"]
        assert len(warnings) == 1 and warnings[0].startswith(
            "notes insert fired, and what it returned does not fit the table"), warnings
        cur = await conn.execute("SELECT status FROM scratchpad.journal")
        assert await cur.fetchall() == [("fired",)]
