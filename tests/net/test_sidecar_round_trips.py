"""Round trips to the sidecar, counted by purpose (``glove_sidecar_round_trips``, read
from the operator's ``/metrics`` as Prometheus scrapes it). A new statement text is
checked with the sidecar once: Parse, Describe, Bind and Execute share the text's one
record, so its first execution makes one round trip of purpose ``describe``, and its
second none. A kept call's rows, a COMMIT's journal, the audit of a call, the kept
tables' upkeep and the catalog's own work are each counted under their purpose."""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import asyncpg
import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families

from glove_scratchpad.server.net.operator import OperatorPort

from ..engine.fix_cache import counting, serve
from ..fix_metrics import counted

PURPOSES = ("describe", "run", "populate", "audit", "journal", "cache", "other")


@pytest.fixture
async def scrape(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Callable[[str], Any]]:
    """The operator's port, started; gives ``round_trips(purpose)`` as /metrics says it."""
    counted(monkeypatch)
    port = OperatorPort("127.0.0.1", 0, lambda: None)
    port.start()

    def read(purpose: str) -> float:
        with urllib.request.urlopen(f"http://127.0.0.1:{port.port}/metrics") as reply:
            text = reply.read().decode()
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                if (s.name == "glove_sidecar_round_trips_total"
                        and s.labels.get("purpose") == purpose):
                    return s.value
        return 0.0

    async def round_trips(purpose: str) -> float:
        return await asyncio.to_thread(read, purpose)

    try:
        yield round_trips
    finally:
        port.close()


async def _described(round_trips: Callable[[str], Awaitable[float]],
                     run: Callable[[], Awaitable[Any]]) -> float:
    before = await round_trips("describe")
    await run()
    return await round_trips("describe") - before


async def test_asyncpg_describes_a_new_text_once_and_its_second_execution_not_at_all(
        dsn: str, scrape: Any) -> None:
    # A text of its own: no other test of the session has described it.
    sql = "SELECT name FROM items WHERE id = $1 AND name <> 'describe once: asyncpg'"
    conn = await asyncpg.connect(dsn)
    try:
        assert await _described(scrape, lambda: conn.fetchval(sql, 7)) == 1
        assert await conn.fetchval(sql, 7) == "item 7"
        # asyncpg's statement cache keeps it: Bind and Execute only
        assert await _described(scrape, lambda: conn.fetchval(sql, 8)) == 0
    finally:
        await conn.close()
    assert await scrape("run") > 0  # the reads themselves are counted too


async def test_psycopg_prepared_describes_a_new_text_once_and_its_second_execution_not_at_all(
        dsn: str, scrape: Any) -> None:
    sql = "SELECT name FROM items WHERE id = %s AND name <> 'describe once: psycopg'"
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:

        async def fetch(value: int) -> Any:
            cur = await conn.execute(sql, (value,), prepare=True)
            return await cur.fetchone()

        assert await _described(scrape, lambda: fetch(7)) == 1
        assert await fetch(7) == ("item 7",)
        assert await _described(scrape, lambda: fetch(8)) == 0


async def test_each_purpose_is_counted_where_its_exchange_is_made(
        sidecar: Any, scrape: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    before = {p: await scrape(p) for p in PURPOSES}
    async with serve(sidecar, counting(monkeypatch)) as (_, dsn):
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            # 60 rows, over cache_min_rows: a kept call, its table filled (populate), then
            # analyzed in the background (cache)
            cur = await conn.execute("SELECT count(*) FROM small")
            assert await cur.fetchone() == (60,)
            async with conn.transaction():  # a write fired at COMMIT: journaled
                await conn.execute("UPDATE prices SET price = 1 WHERE sku = 1")
        # the audit and the ANALYZE are written in the background: waited for, not timed
        for _ in range(100):
            if (await scrape("audit") > before["audit"]
                    and await scrape("cache") > before["cache"]):
                break
            await asyncio.sleep(0.1)
    after = {p: await scrape(p) for p in PURPOSES}
    assert [p for p in PURPOSES if after[p] <= before[p]] == []
