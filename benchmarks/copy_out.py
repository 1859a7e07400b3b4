"""COPY TO STDOUT: binary COPY of a resource's 1M rows through the server, vs the same
COPY of a table holding those rows, straight from the sidecar.

Through the server, ``COPY (SELECT n, i, name, value FROM rows WHERE n = 1000000
ORDER BY i) TO STDOUT (FORMAT binary)`` is timed end to end from an asyncpg client
(``copy_from_query``): the resolver's rows are validated and spilled, the sidecar
copies them, and the server relays its CopyData as it comes. The reference is the same
COPY over an unlogged table of the same rows, on a direct connection to the sidecar.
``SELECT count(*)`` of the same rows through the server is timed too: the calls and
the spill that both pay, so that what is left is the COPY's own cost.
Each answer is checked: the bytes through the server equal the reference's (their
length and MD5), every time.
The server's peak memory is sampled (its RSS, every 20 ms) during its COPYs: relayed
as it comes, the COPY's output is never held whole.
"""

from __future__ import annotations

import asyncio
import hashlib
import statistics
import time

import psutil

from . import checks
from .bench_resources import make_rows
from .env import Env
from .results import TIMES, Section

NAME = "copy"
SIZE, SMOKE_SIZE = 1_000_000, 1_000
# The server's COPY less its SELECT count(*) of the same rows (the calls, the spill),
# against the sidecar's own COPY: that COPY, plus the write of the rows into the table
# the COPY reads (a COPY takes no parameters), plus the relay. Measured about 2.0.
TARGET_RATIO = 2.5
MAX_GROWTH_MB = 300.0  # the server's RSS during its COPY, above its RSS before it
MB = 1024 * 1024
_COLUMNS = "n, i, name, value"


class _Digest:
    """The bytes a COPY sends: their count and MD5, never kept."""

    def __init__(self) -> None:
        self.md5, self.size = hashlib.md5(usedforsecurity=False), 0

    async def write(self, data: bytes) -> None:
        self.md5.update(data)
        self.size += len(data)

    @property
    def answer(self) -> tuple[int, str]:
        return self.size, self.md5.hexdigest()


async def _copied(conn: object, query: str) -> tuple[float, tuple[int, str]]:
    digest = _Digest()
    t0 = time.perf_counter()
    await conn.copy_from_query(query, output=digest.write, format="binary")  # type: ignore[attr-defined]
    return time.perf_counter() - t0, digest.answer


async def _peak_rss(pid: int, stop: asyncio.Event) -> float:
    """The highest RSS of ``pid``, in MB, sampled until ``stop``."""
    proc, peak = psutil.Process(pid), 0
    while not stop.is_set():
        peak = max(peak, proc.memory_info().rss)
        await asyncio.sleep(0.02)
    return max(peak, proc.memory_info().rss) / MB


async def run(env: Env) -> Section:
    n = SMOKE_SIZE if env.options.smoke else SIZE
    section = Section(
        NAME, "COPY TO STDOUT",
        f"Time of a binary `COPY (SELECT … FROM rows WHERE n = {n:,}) TO STDOUT` through the "
        "server (end to end from an asyncpg client: calls, spill, the sidecar's COPY relayed), "
        "vs the same COPY of an unlogged table holding the same rows, straight from the "
        "sidecar; and the server's RSS during its COPY. Median of a few runs after a warm-up. "
        "Lower is better.",
        columns=["server", "count", "sidecar"], ratios=[("server", "sidecar")])
    assert env.server is not None and env.server_process is not None
    server, direct = await env.server.connect(), await env.direct.connect()
    ours = f"SELECT {_COLUMNS} FROM rows WHERE n = {n} ORDER BY i"
    theirs = f"SELECT {_COLUMNS} FROM copy_out_reference ORDER BY i"
    try:
        await direct.execute("DROP TABLE IF EXISTS copy_out_reference")
        await direct.execute("CREATE UNLOGGED TABLE copy_out_reference "
                             "(n bigint, i bigint, name text, value double precision)")
        await direct.copy_records_to_table(
            "copy_out_reference", records=[tuple(r.values()) for r in make_rows(n)],
            columns=["n", "i", "name", "value"])
        _, reference = await _copied(direct, theirs)
        _, answer = await _copied(server, ours)  # warm-up: the resolver builds its rows
        checks.expect(f"server: COPY ({ours}) bytes", answer, reference)
        before = psutil.Process(env.server_process.pid).memory_info().rss / MB
        stop = asyncio.Event()
        sampler = asyncio.create_task(_peak_rss(env.server_process.pid, stop))
        ours_s, theirs_s, counts = [], [], []
        count_sql = f"SELECT count(*) FROM rows WHERE n = {n}"
        for _ in range(2 if env.options.smoke else 3):
            seconds, answer = await _copied(server, ours)
            checks.expect(f"server: COPY ({ours}) bytes", answer, reference)
            ours_s.append(seconds)
            seconds, _ = await _copied(direct, theirs)
            theirs_s.append(seconds)
            t0 = time.perf_counter()
            checks.expect(f"server: {count_sql}", await server.fetchval(count_sql), n)
            counts.append(time.perf_counter() - t0)
        stop.set()
        peak = await sampler
        await direct.execute("DROP TABLE copy_out_reference")
    finally:
        await server.close()
        await direct.close()
    s, c = statistics.median(ours_s) * 1000, statistics.median(theirs_s) * 1000
    k = statistics.median(counts) * 1000
    section.add(f"{n:,} rows, binary ({reference[0] / MB:.0f} MB)", "ms", server=s, count=k,
                sidecar=c, note="count: the server's SELECT count(*) of the same rows")
    growth = peak - before
    section.add("server RSS during its COPY", "MB",
                note=f"{before:.0f} MB before, peak {peak:.0f} MB", server=peak)
    print(f"  {n:>9,} rows  server {s:.1f} ms  count {k:.1f} ms  sidecar {c:.1f} ms  "
          f"server RSS {before:.0f} "
          f"-> {peak:.0f} MB", flush=True)
    full = not env.options.smoke
    section.check(f"{n:,} rows binary COPY through the server, less its count(*), "
                  f"≤ {TARGET_RATIO:g}{TIMES} the sidecar's COPY",
                  f"{(s - k) / c:.1f}{TIMES}", s - k <= TARGET_RATIO * c if full else None)
    section.check(f"server RSS grows ≤ {MAX_GROWTH_MB:.0f} MB during the COPY",
                  f"{growth:.0f} MB", growth <= MAX_GROWTH_MB if full else None)
    checks.passed(section, [f"{n:,} rows: every COPY's bytes equal the sidecar's (MD5)"])
    return section
