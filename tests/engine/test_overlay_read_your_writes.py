"""A session reads its own fired writes, until the tool's rows show them or for a while.

A fired UPDATE, INSERT or DELETE is laid over the session's later reads of the
resource until a read returns the written row with the written values (or no
longer returns a deleted one), or until ``read_your_writes_s`` has passed. So a
change made by another path is seen once the write retires, and a read the overlay
changed says so in a NOTICE. In process and over the wire.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel

from glove_scratchpad.resources import Bindings, Resource, define_resource
from glove_scratchpad.server.engine.guard import Limits

from ..scenarios.fix_ways import WAYS, Way, way_into

WINDOW = 0.6  # seconds: the resources' read_your_writes_s, where they set one


class Note(BaseModel):
    id: int | None = None
    title: str


@dataclass
class Api:
    """A notes API. ``lagging``: writes are taken but reads show them only once
    ``catch_up`` runs (an eventually consistent API)."""

    rows: dict[int, str] = field(default_factory=lambda: {1: "first", 2: "second"})
    lagging: bool = False
    queued: list[Any] = field(default_factory=list)

    def apply(self, change: Any) -> None:
        if self.lagging:
            self.queued.append(change)
        else:
            change()

    def catch_up(self) -> None:
        for change in self.queued:
            change()
        self.queued.clear()

    def resource(self, name: str, window: float | None) -> Resource:
        def select(b: Bindings) -> list[Note]:
            return [Note(id=i, title=t) for i, t in sorted(self.rows.items())]

        def insert(rows: list[Note]) -> list[Note]:
            made = []
            for row in rows:
                new = max(self.rows, default=0) + 1
                self.apply(lambda new=new, title=row.title: self.rows.__setitem__(new, title))
                made.append(Note(id=new, title=row.title))
            return made

        def update(changes: dict[str, Any], b: Bindings) -> None:
            key = b.one("id")
            self.apply(lambda: self.rows.__setitem__(key, changes["title"]))

        def delete(b: Bindings) -> None:
            key = b.one("id")
            self.apply(lambda: self.rows.pop(key, None))

        return define_resource(name, schema=Note, primary_key=["id"], volatility="volatile",
                               select=select, insert=insert, update=update, delete=delete,
                               read_your_writes_s=window, inline=True)


@pytest.fixture(params=WAYS)
async def served(request: Any, sidecar: Any) -> AsyncIterator[tuple[Api, Way]]:
    api = Api()
    resources = [api.resource("notes", WINDOW), api.resource("raw", 0),
                 api.resource("plain", None)]
    async with way_into(request.param, sidecar, resources,
                        limits=Limits(read_your_writes_s=30)) as way:
        yield api, way


async def titles(way: Way, table: str = "notes") -> tuple[list[Any], list[Any]]:
    out = await way.execute(f"SELECT id, title FROM {table} ORDER BY id")
    return out.rows, [message for _, message, _ in out.notices]


async def test_a_write_the_tools_rows_show_retires_at_once(served):
    api, way = served
    await way.execute("UPDATE notes SET title = title || '+' WHERE id = 1")
    assert await titles(way) == ([(1, "first+"), (2, "second")], [])  # the tool shows it
    api.rows[1] = "reset"  # another path changes the data
    assert await titles(way) == ([(1, "reset"), (2, "second")], [])


async def test_a_write_the_tool_does_not_show_yet_is_laid_over_until_the_window(served):
    api, way = served
    api.lagging = True
    await way.execute("UPDATE notes SET title = 'changed' WHERE id = 1")
    await way.execute("DELETE FROM notes WHERE id = 2")
    await way.execute("INSERT INTO notes (title) VALUES ('third')")
    rows, notices = await titles(way)
    assert rows == [(1, "changed"), (3, "third")]
    [notice] = notices
    assert notice.startswith('reads of "notes" include this session\'s fired writes that '
                             "the tool's rows do not show yet: rows inserted by #3, "
                             "updated by #1, deleted by #2")
    await asyncio.sleep(WINDOW + 0.1)
    assert await titles(way) == ([(1, "first"), (2, "second")], [])  # exactly the tool's
    api.catch_up()
    assert await titles(way) == ([(1, "changed"), (3, "third")], [])


async def test_a_deletion_retires_when_a_read_no_longer_returns_the_row(served):
    api, way = served
    await way.execute("DELETE FROM notes WHERE id = 2")
    assert await titles(way) == ([(1, "first")], [])
    api.rows[2] = "back"  # made again by another path: seen at once
    assert await titles(way) == ([(1, "first"), (2, "back")], [])


async def test_read_your_writes_s_0_shows_the_tools_rows_as_they_are(served):
    api, way = served
    api.lagging = True
    await way.execute("UPDATE raw SET title = 'changed' WHERE id = 1")
    assert await titles(way, "raw") == ([(1, "first"), (2, "second")], [])


async def test_a_resource_without_its_own_window_takes_the_servers(served):
    api, way = served
    api.lagging = True
    await way.execute("UPDATE plain SET title = 'changed' WHERE id = 1")
    await asyncio.sleep(WINDOW + 0.1)  # past the resources' window, not the server's 30 s
    rows, notices = await titles(way, "plain")
    assert rows == [(1, "changed"), (2, "second")]
    assert [n.split(": rows ")[1] for n in notices] == ["updated by #1"]
    out = await way.execute("EXPLAIN SELECT * FROM plain")
    assert any(line.startswith("Overlay: reads of plain see this session's fired writes #1")
               for (line,) in out.rows)
