"""Kept calls, measured in process (``python -m benchmarks.kept_calls``): not yet a family
of ``python -m benchmarks``.

A key-less immutable 100,000-row resource (``big``, primary key ``id``): its first
statement (one call, materialized as a sidecar table) against binary COPY of the same
rows, then point lookups with random ids over psycopg, prepared, at one client and
eight concurrent ones, against the same lookup on a plain indexed table of the same
sidecar. Every lookup checks its answer. One Python client process drives both ends,
so at eight clients the direct figure is bound by the client, not by Postgres.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import asyncpg
import psycopg

from glove_scratchpad.catalog import EmbeddedSidecar
from glove_scratchpad.resources import Bindings, define_resource
from glove_scratchpad.server import Database
from glove_scratchpad.server.config import ServerConfig
from glove_scratchpad.server.net.server import Server

N = 100_000
ROWS = [{"id": i, "label": f"label {i}"} for i in range(1, N + 1)]
CALLS = {"n": 0}


def _big(b: Bindings) -> list[dict[str, Any]]:
    CALLS["n"] += 1
    return ROWS


async def lookups(dsn: str, sql: str, n: int = 3000) -> float:
    """Milliseconds per checked lookup, after a warm-up."""
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as c:
        rng = random.Random(1)
        for _ in range(200):
            await c.execute(sql, (rng.randint(1, N),), prepare=True)
        t = time.perf_counter()
        for _ in range(n):
            i = rng.randint(1, N)
            got = await (await c.execute(sql, (i,), prepare=True)).fetchall()
            if got != [(f"label {i}",)]:
                raise AssertionError(f"id {i}: {got}")
        return (time.perf_counter() - t) / n * 1000


async def throughput(dsn: str, sql: str, clients: int = 8, n: int = 1000) -> float:
    t = time.perf_counter()
    await asyncio.gather(*(lookups(dsn, sql, n) for _ in range(clients)))
    return clients * n / (time.perf_counter() - t)


async def main() -> None:
    sc = EmbeddedSidecar(temporary=True)
    await sc.start()
    try:
        res = define_resource("big", columns=[("id", "bigint"), ("label", "text")],
                              primary_key=["id"], volatility="immutable", select=_big,
                              inline=True)
        db = await Database.create([res], sidecar=sc, database="kb")
        t = time.perf_counter()
        await db.execute("SELECT label FROM big WHERE id = 1")
        first = (time.perf_counter() - t) * 1000
        srv = Server(ServerConfig(port=0), db)
        await srv.start()
        dsn = f"postgresql://agent@127.0.0.1:{srv.port}/scratchpad"
        direct = sc.dsn.replace("/scratchpad", "/kb")
        plain = await asyncpg.connect(sc.dsn, database="kb")
        await plain.execute("CREATE TABLE plain_big (id bigint PRIMARY KEY, label text)")
        t = time.perf_counter()
        await plain.copy_records_to_table(
            "plain_big", records=[(r["id"], r["label"]) for r in ROWS])
        copy = (time.perf_counter() - t) * 1000
        print(f"first materialization, 100,000 rows: {first:.0f} ms; binary COPY "
              f"(into an indexed table) {copy:.0f} ms; {first / copy:.2f}x")
        s = await lookups(dsn, "SELECT label FROM big WHERE id = %s")
        d = await lookups(direct, "SELECT label FROM plain_big WHERE id = %s")
        print(f"c=1, prepared: server {s:.3f} ms, direct {d:.3f} ms, {s / d:.2f}x; "
              f"calls of big: {CALLS['n']}")
        ts = await throughput(dsn, "SELECT label FROM big WHERE id = %s")
        td = await throughput(direct, "SELECT label FROM plain_big WHERE id = %s")
        print(f"c=8: server {ts:.0f}/s, direct {td:.0f}/s, {ts / td:.2f}x")
        await plain.close()
        await srv.shutdown()
        await db.close()
    finally:
        await sc.stop()


if __name__ == "__main__":
    asyncio.run(main())
