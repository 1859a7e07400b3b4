"""A 10,000-row paged resource, served by a wire server of its own, for the portal tests.

``paged`` is a volatile resource whose select is a generator that asks its "upstream"
for one page of ``PAGE`` rows at a time, only when its rows are pulled; ``Upstream``
counts the pages asked for. Each call numbers itself, and every row carries its
call's number (``call``): rows of one call have one number, so a read that called
twice shows two. ``paged_server`` serves it (with the demo set) on the session's
sidecar, and gives the counter.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel, Field

from glove_scratchpad.resources import Bindings, define_resource
from glove_scratchpad.server import Database

from ..fix_server import serving

ROWS = 10_000
PAGE = 25  # rows per upstream page: a fetch of 10 needs the first page alone


class Paged(BaseModel):
    id: int = Field(description="Row number, from 1")
    label: str
    call: int = Field(description="The number of the call that gave the row")


@dataclass
class Upstream:
    """What the resource asked its upstream: calls made, pages asked for."""

    calls: int = 0
    pages: list[int] = field(default_factory=list)
    closed: int = 0  # generators closed before their end
    slow_page: int | None = None  # the page the upstream is slow to give, if one is
    slow_s: float = 0.0
    _numbers: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def reset(self) -> None:
        self.calls, self.pages, self.closed = 0, [], 0
        self.slow_page, self.slow_s = None, 0.0

    def select(self, b: Bindings) -> Iterator[dict[str, Any]]:
        number = next(self._numbers)
        self.calls += 1
        return self._rows(number)

    def _rows(self, number: int) -> Iterator[dict[str, Any]]:
        ended = False
        try:
            for page in range(ROWS // PAGE):
                self.pages.append(page)  # one request to the upstream
                if page == self.slow_page:
                    time.sleep(self.slow_s)  # a plain resolver: in a worker thread
                for i in range(page * PAGE + 1, (page + 1) * PAGE + 1):
                    yield {"id": i, "label": f"row {i}", "call": number}
            ended = True
        finally:
            if not ended:
                self.closed += 1


def paged_resource(upstream: Upstream) -> Any:
    return define_resource(
        "paged", schema=Paged, volatility="volatile", primary_key=["id"],
        description="Ten thousand rows, read from an upstream a page at a time",
        select=upstream.select)


@dataclass
class Served:
    server: Any
    upstream: Upstream

    @property
    def port(self) -> int:
        return int(self.server.port)

    @property
    def dsn(self) -> str:
        return f"postgresql://agent@127.0.0.1:{self.port}/scratchpad"


@pytest.fixture(scope="session")
async def paged_server(sidecar: Any) -> AsyncIterator[Served]:
    upstream = Upstream()
    db = await Database.create([paged_resource(upstream)], writes=True, sidecar=sidecar,
                               database="test_paged")
    async with serving(db, writes=True) as srv:
        yield Served(srv, upstream)
    await db.close()


@pytest.fixture
def paged(paged_server: Served) -> Served:
    paged_server.upstream.reset()
    return paged_server


def pages_for(rows: int) -> int:
    """The pages a read of the first ``rows`` rows asks for."""
    return -(-rows // PAGE)
