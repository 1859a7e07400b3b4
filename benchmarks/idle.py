"""6. Idle connections: many clients that finish the start-up, then say nothing.

Raw asyncio sockets send a StartupMessage and read until ReadyForQuery, then stay
open. Measured while they are all connected: the server's RSS (psutil), the
sidecar's memory (the sum of the RSS of every Postgres process; PSS too, since
RSS counts shared buffers once per process) and its client backends
(``pg_stat_activity``, over a direct connection).
"""

from __future__ import annotations

import asyncio
import struct
import time

import psutil

from .env import Endpoint, Env
from .results import Section

NAME = "idle-connections"
CLIENTS, SMOKE_CLIENTS = 1000, 50
MAX_BACKENDS, MAX_RSS_MB = 25, 300
MB = 1024 * 1024


def _startup(user: str, database: str) -> bytes:
    body = struct.pack("!i", 196608)  # protocol 3.0
    for k, v in (("user", user), ("database", database)):
        body += k.encode() + b"\0" + v.encode() + b"\0"
    body += b"\0"
    return struct.pack("!i", len(body) + 4) + body


async def _connect(ep: Endpoint) -> asyncio.StreamWriter:
    reader, writer = await asyncio.open_connection(ep.host, ep.port)
    writer.write(_startup(ep.user, ep.database))
    await writer.drain()
    while True:  # until ReadyForQuery
        kind, length = struct.unpack("!ci", await reader.readexactly(5))
        body = await reader.readexactly(length - 4)
        if kind == b"E":
            raise RuntimeError(f"start-up refused: {body!r}")
        if kind == b"Z":
            return writer


async def _open_all(ep: Endpoint, n: int) -> list[asyncio.StreamWriter]:
    gate = asyncio.Semaphore(64)  # below the server's listen backlog

    async def one() -> asyncio.StreamWriter:
        async with gate:
            return await _connect(ep)

    return list(await asyncio.gather(*(one() for _ in range(n))))


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
    writers = await _open_all(env.server, n)
    opened = time.perf_counter() - t0
    try:
        await asyncio.sleep(1.0)
        during, backends = _memory(env), await env.backends()
    finally:
        for w in writers:
            w.close()
        await asyncio.gather(*(w.wait_closed() for w in writers), return_exceptions=True)
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
    return section
