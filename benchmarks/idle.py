"""7. Idle connections: many clients that finish the start-up, then say nothing.

Raw asyncio sockets (``pgwire.SimpleClient``) send a StartupMessage and read until
ReadyForQuery, then stay open. Measured while they are all connected: the server's
RSS (psutil), the sidecar's memory (the sum of the RSS of every Postgres process;
PSS too, since RSS counts shared buffers once per process) and its client backends
(``pg_stat_activity``, over a direct connection). Then every idle client must still
answer: each looks up one item (a simple ``Query``), checked against ``items``.
"""

from __future__ import annotations

import asyncio
import time

import psutil

from . import checks
from .env import Endpoint, Env
from .pgwire import SimpleClient
from .results import Section

NAME = "idle-connections"
CLIENTS, SMOKE_CLIENTS = 1000, 50
MAX_BACKENDS, MAX_RSS_MB = 25, 300
MB = 1024 * 1024


GATE = 64  # connections opened (and checked) at once: below the server's listen backlog


async def _open_all(ep: Endpoint, n: int) -> list[SimpleClient]:
    """``n`` clients signed in; when one cannot be, those that were are closed, so that
    a failed run leaves no connection behind for the benchmarks after it."""
    gate = asyncio.Semaphore(GATE)

    async def one() -> SimpleClient:
        async with gate:
            return await SimpleClient.connect(ep)

    opened = await asyncio.gather(*(one() for _ in range(n)), return_exceptions=True)
    clients = [c for c in opened if isinstance(c, SimpleClient)]
    failed = [e for e in opened if isinstance(e, BaseException)]
    if failed:
        await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
        raise failed[0]
    return clients


async def _check_all(clients: list[SimpleClient]) -> None:
    """Every client, idle until now, looks up its own item: the row must be right."""
    gate = asyncio.Semaphore(GATE)

    async def one(i: int, client: SimpleClient) -> None:
        sql = f"SELECT * FROM items WHERE id = {i}"
        async with gate:
            answer = await client.query(sql)
        checks.expect(f"idle client {i}: {sql}", answer.rows, [checks.item_text(i)])

    await asyncio.gather(*(one(i, c) for i, c in enumerate(clients, 1)))


def _memory(env: Env) -> dict[str, float]:
    assert env.server_process is not None
    server = psutil.Process(env.server_process.pid)
    procs = env.sidecar_processes()
    rss = pss = 0
    for p in procs:
        try:
            info = p.memory_full_info()
        except psutil.Error:
            continue
        rss += info.rss
        pss += getattr(info, "pss", 0)
    return {
        "server_rss": server.memory_info().rss / MB,
        "sidecar_rss": rss / MB,
        "sidecar_pss": pss / MB,
        "sidecar_processes": len(procs),
    }


async def run(env: Env) -> Section:
    n = SMOKE_CLIENTS if env.options.smoke else CLIENTS
    section = Section(
        NAME,
        f"Idle connections ({n:,} clients)",
        "Raw sockets that complete the start-up handshake with the server and then stay "
        "idle. *before* is measured just before they connect, *idle* while all of them "
        "are connected.",
        columns=["before", "idle"],
    )
    assert env.server is not None
    before, backends_before = _memory(env), await env.backends()
    t0 = time.perf_counter()
    clients = await _open_all(env.server, n)
    opened = time.perf_counter() - t0
    try:
        await asyncio.sleep(1.0)
        during, backends = _memory(env), await env.backends()
        await _check_all(clients)  # after the measurements: they stay those of idle clients
    finally:
        await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
    section.add(
        "server RSS",
        "MB",
        before=before["server_rss"],
        idle=during["server_rss"],
        note=f"{(during['server_rss'] - before['server_rss']) * 1024 / n:.0f} KB per idle client",
    )
    section.add(
        "sidecar memory, sum of RSS",
        "MB",
        before=before["sidecar_rss"],
        idle=during["sidecar_rss"],
        note=f"{during['sidecar_processes']} Postgres processes",
    )
    section.add(
        "sidecar memory, sum of PSS", "MB", before=before["sidecar_pss"], idle=during["sidecar_pss"]
    )
    section.add(
        "sidecar client backends (all databases)",
        "",
        before=backends_before["total"],
        idle=backends["total"],
        note=f"{backends['server']} of them in the server's database",
    )
    section.add(
        f"time to open {n:,} connections",
        "ms",
        idle=opened * 1000,
        note=f"{n / opened:,.0f} start-ups/s, 64 at a time",
    )
    print(
        f"  {n} idle clients: server RSS {during['server_rss']:.0f} MB (before "
        f"{before['server_rss']:.0f} MB), sidecar backends {backends['total']}, sidecar RSS "
        f"{during['sidecar_rss']:.0f} MB",
        flush=True,
    )
    full = n >= CLIENTS
    section.check(
        f"{CLIENTS:,} idle clients: ≤ {MAX_BACKENDS} sidecar backends",
        f"{backends['total']}" + ("" if full else f" (with {n} clients)"),
        backends["total"] <= MAX_BACKENDS if full else None,
    )
    section.check(
        f"{CLIENTS:,} idle clients: ≤ {MAX_RSS_MB} MB server RSS",
        f"{during['server_rss']:.0f} MB" + ("" if full else f" (with {n} clients)"),
        during["server_rss"] <= MAX_RSS_MB if full else None,
    )
    checks.passed(section, [f"{n:,} idle clients, each its own lookup"])
    return section
