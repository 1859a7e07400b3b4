"""The NOTICEs and comments a model reads when a read finds nothing, over the wire:
sentences, whatever the filter was (a value no call can take, none at all)."""

from __future__ import annotations

from typing import Any

import psycopg
from pydantic import BaseModel, Field

from glove_scratchpad.resources import Bindings, define_resource

from ..fix_server import serving


class Thing(BaseModel):
    id: int = Field(description="Required key: the thing's number.")
    label: str


def _things() -> list[Any]:
    def by_id(b: Bindings) -> list[Thing]:
        return [Thing(id=b.one("id"), label="x")] if b.one("id") == 1 else []

    return [define_resource("things", schema=Thing, keys=["id"], volatility="volatile",
                            select=by_id),
            define_resource("nothing", schema=Thing, volatility="volatile",
                            select=lambda b: [])]


async def _notices(dsn: str, sql: str) -> list[tuple[str, str | None]]:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        said: list[tuple[str, str | None]] = []
        conn.add_notice_handler(lambda d: said.append((d.message_primary or "",
                                                       d.message_hint)))
        await conn.execute(sql)
        return said


async def test_messages_read_as_sentences(make_db):
    db = await make_db(_things())
    async with serving(db) as server:
        dsn = f"postgresql://agent@127.0.0.1:{server.port}/scratchpad"
        # A value the key's type cannot hold: no call, and the notice says why.
        for sql in ("SELECT * FROM things WHERE id = 1.5",
                    "SELECT * FROM things WHERE id IN (1.5, 2.5)"):
            (message, hint), = await _notices(dsn, sql)
            assert message.startswith('resource "things" was not called: no row can match id')
            assert message.endswith(" (a NULL, an empty IN list, or a value its column's "
                                    "type cannot hold)")
            assert "  " not in message and "no call made" not in message
            assert hint == "Give each key one value of its column's type (\\d+ things shows "\
                "the types)."
        assert await _notices(dsn, "SELECT * FROM things WHERE id = 7") == [
            ('resource "things" returned no rows for id = 7',
             "Re-check the filter values against the column descriptions (\\d+ things).")]
        # No filter: nothing to re-check.
        assert await _notices(dsn, "SELECT * FROM nothing") == [
            ('resource "nothing" returned no rows', "The tool was called with no filter and "
             "had no rows to give; \\d+ nothing describes what it lists.")]
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            cur = await conn.execute("SELECT col_description('things'::regclass, 1)")
            # A description that says it is a key already is not told so twice.
            assert await cur.fetchall() == [("Required key: the thing's number.",)]
