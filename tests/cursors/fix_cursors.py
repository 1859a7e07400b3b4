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


class Pages:
    """The upstream: its page requests, counted."""

    def __init__(self) -> None:
        self.requests = 0

    def page(self, n: int) -> list[dict[str, Any]]:
        self.requests += 1
        start = n * PAGE
        return [{"id": i, "label": f"item {i}", "score": (i * 37) % 101 / 10}
                for i in range(start, min(start + PAGE, ITEMS))]

    def items(self, b: Bindings) -> Iterator[dict[str, Any]]:
        n = 0
        while True:
            rows = self.page(n)
            yield from rows
            if len(rows) < PAGE:
                return
            n += 1


def paged_resources(pages: Pages) -> list[Resource]:
    return [define_resource("items", schema=Item, select=pages.items, volatility="volatile",
                            description="10,000 items, read a page of 4 at a time")]


@asynccontextmanager
async def served(make_db: Any) -> AsyncIterator[tuple[str, Pages]]:
    """A server over the paged resource: its connection string and its upstream."""
    pages = Pages()
    db = await make_db(paged_resources(pages))
    async with serving(db, writes=True) as server:
        yield dsn(server), pages
