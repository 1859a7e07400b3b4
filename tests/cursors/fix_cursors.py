"""A paged resource for the cursor tests: 10,000 items, read from an upstream a page at a
time, each page request counted (``Pages.requests``), and a server over it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

from pydantic import BaseModel

from glove_scratchpad.resources import Bindings, Resource, define_resource

from ..fix_server import dsn, serving

ITEMS = 10_000
PAGE = 4  # rows per upstream page: FETCH 10 needs exactly 3 pages


class Item(BaseModel):
    id: int
    label: str
    score: float


def item(i: int) -> dict[str, Any]:
    return {"id": i, "label": f"item {i}", "score": (i * 37) % 101 / 10}


class Pages:
    """The upstream: its page requests, counted."""

    def __init__(self, count: int = ITEMS) -> None:
        self.count = count
        self.requests = 0
        self.closed = 0  # reads that ended before the list did (their generator closed)

    def page(self, n: int) -> list[dict[str, Any]]:
        self.requests += 1
        start = n * PAGE
        return [item(i) for i in range(start, min(start + PAGE, self.count))]

    def items(self, b: Bindings) -> Iterator[dict[str, Any]]:
        n, ended = 0, False
        try:
            while True:
                rows = self.page(n)
                yield from rows
                if len(rows) < PAGE:
                    ended = True
                    return
                n += 1
        finally:
            self.closed += not ended


def paged_resources(pages: Pages) -> list[Resource]:
    return [define_resource("items", schema=Item, select=pages.items, volatility="volatile",
                            description="Items, read a page of 4 at a time")]


@asynccontextmanager
async def served(make_db: Any, count: int = ITEMS) -> AsyncIterator[tuple[str, Pages]]:
    """A server over the paged resource of ``count`` items: its connection string and its
    upstream."""
    pages = Pages(count)
    db = await make_db(paged_resources(pages))
    async with serving(db, writes=True) as server:
        yield dsn(server), pages
