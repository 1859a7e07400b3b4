"""A result past ``stream.STREAM_AT`` bytes is relayed to its client as it comes, on
every path a read's rows take to a socket: a simple Query, an Execute, a portal run of
the task and one answered in the transports' callbacks. The client cannot tell: the
same rows, description and tag; the row limit's cut and NOTICE; ``max_result_bytes``'s
error (after the rows sent), and the connection goes on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import psycopg
import pytest

from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits
from glove_scratchpad.server.net.sink import ClientSocket
from glove_scratchpad.stream import STREAM_AT

from ..engine.fix_cache import BIG, counting, serve

PAD = 100
WIDE = f"SELECT id, label, repeat('x', {PAD}) AS pad FROM big WHERE id <= $1 ORDER BY id"
ROW_BYTES = PAD + 20  # about: id, label and pad, each with its length word


@pytest.fixture
def relayed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many results were relayed as they came."""
    begun = [0]
    real = ClientSocket.rows_begin

    def counted(self: ClientSocket, description: bytes, source: Any) -> None:
        begun[0] += 1
        real(self, description, source)

    monkeypatch.setattr(ClientSocket, "rows_begin", counted)
    return begun


@pytest.fixture
async def served(sidecar: Any, monkeypatch: pytest.MonkeyPatch
                 ) -> AsyncIterator[tuple[Database, str]]:
    async with serve(sidecar, counting(monkeypatch),
                     Limits(cache_min_rows=20, row_limit=60_000,
                            max_result_bytes=4 * 1024 * 1024)) as pair:
        yield pair


def _expected(n: int) -> list[tuple[int, str, str]]:
    return [(i, f"label {i}", "x" * PAD) for i in range(1, n + 1)]


async def test_a_large_result_is_relayed_whole_on_each_path(
        served: tuple[Database, str], relayed: list[int]) -> None:
    _, dsn = served
    n = 3 * STREAM_AT // ROW_BYTES  # past STREAM_AT, under the row limit and max bytes
    conn = await asyncpg.connect(dsn)
    try:
        wide = await conn.prepare(WIDE)
        for _ in range(2):  # the full path (Execute), then compiled: a portal run
            assert [tuple(r) for r in await wide.fetch(n)] == _expected(n)
        assert relayed == [2]
        async with conn.transaction():  # a cursor's Execute with a row count: kept
            got = [tuple(r) async for r in wide.cursor(n, prefetch=5000)]
        assert got == _expected(n) and relayed == [2]
    finally:
        await conn.close()
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as pc:
        # The simple protocol: its RowDescription goes before the rows, once.
        cur = psycopg.AsyncClientCursor(pc)
        await cur.execute(WIDE.replace("$1", "%s"), (n,))
        assert await cur.fetchall() == _expected(n)
        assert [d.name for d in cur.description or ()] == ["id", "label", "pad"]
        assert cur.statusmessage == f"SELECT {n}"
        # libpq's prepared statements: Bind, Describe, Execute, Sync.
        for _ in range(2):
            cur = await pc.execute(WIDE.replace("$1", "%s"), (n,), prepare=True)
            assert await cur.fetchall() == _expected(n)
            assert [d.name for d in cur.description or ()] == ["id", "label", "pad"]
    assert relayed == [5]


async def test_a_relayed_result_is_cut_at_the_row_limit_and_refused_past_its_bytes(
        served: tuple[Database, str], relayed: list[int]) -> None:
    _, dsn = served
    conn = await asyncpg.connect(dsn)
    notices: list[str] = []
    conn.add_log_listener(lambda _c, msg: notices.append(msg.message))
    try:
        narrow = await conn.prepare("SELECT id, label FROM big ORDER BY id")
        for _ in range(2):
            assert [r["id"] for r in await narrow.fetch()] == list(range(1, 60_001))
        assert notices == ["result truncated to 60000 rows (the row limit)"] * 2
        wide = await conn.prepare(WIDE)
        for _ in range(2):
            with pytest.raises(asyncpg.ProgramLimitExceededError,
                               match="over 4194304 bytes, the most that may be sent"):
                await wide.fetch(BIG)
        # A cursor's rows are kept for its fetches: not past max_result_bytes either.
        async with conn.transaction():
            with pytest.raises(asyncpg.ProgramLimitExceededError,
                               match="the most that may be sent\n"):
                await (await wide.cursor(BIG)).fetch(10)
        assert await conn.fetchval("SELECT count(*) FROM big") == BIG  # it goes on
        assert relayed == [4]
    finally:
        await conn.close()
