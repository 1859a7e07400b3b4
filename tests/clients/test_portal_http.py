"""asyncpg's cursor over an HTTP API's 10,000 items, paged by Link headers (the tests' own
FastAPI app, 100 items a page): the first ``fetch(10)`` asks for the first page (and the
one the paging reads ahead), each next fetch for the pages of its own rows, and the rows
equal the plain SELECT's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest

from ..openapi.api_app import ITEMS
from ..openapi.fix_api import Tables, api_served, tables_of

PATH = "/link/items"
PAGE = 100  # the API's most items a page (the tables' max_page_size)


@pytest.fixture(scope="module")
async def served(sidecar: Any) -> AsyncIterator[Tables]:
    async with api_served() as api, tables_of(api, sidecar) as tables:
        yield tables


def _pages(t: Tables) -> int:
    return sum(1 for m, p, _, _ in t.api.rec.requests if m == "GET" and p == PATH)


async def test_asyncpg_cursor_asks_an_api_for_the_pages_of_its_rows(served):
    t = served
    t.api.rec.reset()
    conn = await asyncpg.connect(t.dsn())
    try:
        plain = [r["n"] for r in await conn.fetch("SELECT n FROM t_link_items")]
        assert len(plain) == ITEMS and _pages(t) == ITEMS // PAGE
        t.api.rec.reset()
        async with conn.transaction():
            cur = await conn.cursor("SELECT n FROM t_link_items")
            first = await cur.fetch(10)
            # The first page, and perhaps the next one, which the paging asks for ahead of
            # its rows (whether it has yet is the read-ahead's timing).
            assert _pages(t) in (1, 2)
            second = await cur.fetch(290)  # rows 11 to 300: the pages of 300 rows
            assert _pages(t) in (300 // PAGE, 300 // PAGE + 1)
            rest = await cur.fetch(ITEMS)
        assert [r["n"] for r in first + second + rest] == plain
        assert _pages(t) == ITEMS // PAGE
    finally:
        await conn.close()
