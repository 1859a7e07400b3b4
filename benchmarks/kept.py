"""4. Kept calls: statements that read a lasting call's sidecar table, and its first making.

- The kept point lookup: ``big`` is key-less and immutable (primary key ``id``), so
  its one call gives every row of ``items``, which the server materializes once as
  an indexed UNLOGGED table in the sidecar; later statements of every session read
  that table. pgbench ``-M prepared`` runs ``\\set id random(1, 100000)`` +
  ``SELECT * FROM big WHERE id = :id`` at 1 client (latency) and at 8 (``-j 2``,
  tps), against ``SELECT * FROM items WHERE id = :id`` directly and through the
  plain byte relay (the floor of any Python proxy). A warm-up run makes the table
  first.
- ``big_plain``: the same rows with no primary key and no key, under the same runs:
  its kept table gets its index from the statements' lookups (built in the
  background after the first), so it must be as fast as ``big``.
- ``big_ttl``: the same rows, ``stable`` with a ttl (``BENCH_BIG_TTL``, 2 s), under
  the same runs, and a few statements once its ttl has surely ended: its table
  goes when the ttl ends, and the next statement calls the resolver and
  materializes again (the other statements wait for it).
- The first materialization: ``SELECT count(*) FROM kept_rows WHERE n = …`` timed
  end to end from an asyncpg client, each run right after ``SELECT
  scratchpad.refresh('kept_rows')``, so that it calls the resolver, validates the
  rows, COPYs them (binary) into a new table, indexes it on the primary key ``i``,
  and counts (the table is analyzed after, in the background). The reference is
  binary COPY (``copy_records_to_table``) of the same rows into an existing,
  emptied unlogged table with the same primary key, each COPY right after one of
  the server's runs. Median of a few runs after a warm-up statement, which builds
  the resolver's list: neither side pays for making the rows.

Answers are checked (``benchmarks/checks.py``):
- before every timed lookup run, ``checks.lookup`` on that endpoint, with as many
  clients (pgbench's checking script, then full rows of a few ids);
- ``kept_stats``: ``big`` was called once in all; ``big_ttl`` no more than once per
  ttl begun over the span of its statements, and more than once when they span
  over twice the ttl (``checks.ttl_calls``); ``kept_rows`` once per statement after
  a refresh (the warm-ups included), and not for the checksum read after them;
- ``scratchpad.cache`` lists ``big``'s call with all its rows and the last
  ``kept_rows`` call with n rows, and each refresh dropped exactly one kept call
  (the statement before it was kept, not sent);
- every timed count and COPY tag, and once per size the count and checksum of the
  rows through the server (read from the kept table) and in the COPY's table
  (``checks.materialized``).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path

import asyncpg

from . import checks
from .bench_resources import BIG_TTL, ITEMS
from .env import Endpoint, Env
from .materialize import CopyReference, add_versus_copy, check_versus_copy
from .pgbench import LOOKUP_SCRIPT, lookup_script, pgbench, write_script
from .results import TIMES, Section, ratio, times

NAME = "kept-calls"
CLIENTS = (1, 8)
LATENCY_RATIO = 2.0  # the kept lookup at c=1: at most 2x direct latency
PLAIN_RATIO = 1.25  # big_plain (indexed for its lookups) against big (on its primary key)
VS_DIRECT = 0.25  # at c=8: at least a quarter of direct throughput
VS_RELAY = 0.5  # at c=8, one worker: at least half the byte relay's throughput
COPY_RATIO = 2.0  # a first materialization of CHECKED rows: at most 2x COPY
SIZES = (100_000, 1_000_000)
SMOKE_SIZES = (1_000, 10_000)
CHECKED = 100_000
WARM_UP = ["-t", "50"]
REFRESH = "SELECT scratchpad.refresh('kept_rows')"
COPY_TARGET = "kept_copy_target"  # made by Env, with the primary key (i)


def _repeats(n: int, smoke: bool) -> int:
    return 2 if smoke else 5 if n <= 100_000 else 3


async def run(env: Env) -> Section:
    section = Section(
        NAME,
        "Kept calls",
        "A lasting call's rows kept as an indexed UNLOGGED table of the sidecar. Point "
        f"lookups: pgbench `-M prepared`, `\\set id random(1, {ITEMS})` + `SELECT * FROM "
        "big WHERE id = :id` (`big`: key-less and immutable, one call of every row of "
        "`items`; `big_ttl`: the same, stable with a ttl) vs `SELECT * FROM items WHERE "
        "id = :id` directly and through the byte relay; latency at 1 client, statements "
        "per second at 8 (`-j 2`), "
        "after a warm-up that makes the table. First materialization: `SELECT count(*) "
        "FROM kept_rows WHERE n = …` right after `scratchpad.refresh('kept_rows')`, end to "
        "end from an asyncpg client (call, validation, binary COPY into a new table, its "
        "primary-key index built after the COPY, the count; ANALYZE follows in the "
        "background), vs binary COPY of "
        "the same rows into an existing unlogged table with the same primary key "
        "(`copy_records_to_table`; the index is kept up as the rows arrive). Median of a "
        "few runs, each server run followed by a COPY. Lower is better (tps: higher).",
        columns=["server", "direct", "relay", "COPY"],
        ratios=[("server", "direct"), ("server", "relay"), ("server", "COPY")],
    )
    assert env.server is not None
    checked: list[str] = []
    stats = await env.server.connect()
    try:
        big, _ = await _lookups(env, section, "big", "`big` (immutable)", checked,
                                relay=True)
        plain, _ = await _lookups(env, section, "big_plain",
                                  "`big_plain` (immutable, no primary key)", checked)
        _, seconds = await _lookups(
            env, section, "big_ttl", f"`big_ttl` (stable, ttl {BIG_TTL:g} s)", checked,
            expire=BIG_TTL,
        )
        await _lookup_calls(env, section, stats, seconds, checked)
        made = await _first_materializations(env, section, checked)
        got = (await _calls(stats))["kept_rows"]
        checks.calls("kept_stats: calls of kept_rows", got, made, made)
        section.add(
            "resolver calls of `kept_rows`",
            "",
            server=got,
            note="one per statement after a refresh, the warm-ups included",
        )
        checked.append(f"kept_rows called {got} time(s), one per first materialization")
    finally:
        await stats.close()
    _targets(section, big, plain)
    checks.passed(section, checked)
    return section


async def _lookups(
    env: Env, section: Section, resource: str, label: str, checked: list[str],
    *, relay: bool = False, expire: float | None = None
) -> tuple[dict[int, dict[str, float]], float]:
    """The point lookup of ``resource`` through the server and of ``items`` directly
    (and through the relay, when asked) at each client count; the figures, and the
    seconds from before its first statement through the server to after its last.
    ``expire``: its ttl, after which a few statements more must call it again, however
    fast the runs were."""
    assert env.server is not None and env.relay is not None
    plain = write_script(env.workdir, "lookup", LOOKUP_SCRIPT)
    runs: list[tuple[Endpoint, str, Path]] = [
        (env.server, resource, write_script(env.workdir, f"kept_{resource}",
                                            lookup_script(table=resource))),
        (env.direct, "items", plain),
        *([(env.relay, "items", plain)] if relay else []),
    ]
    started = last = time.monotonic()
    for ep, _, script in runs:  # warm-up; through the server, it makes the kept table
        await pgbench(ep, script, WARM_UP, mode="prepared")
    figures: dict[int, dict[str, float]] = {}
    for clients in CLIENTS:
        values = {}
        for ep, table, script in runs:
            what, result = await checks.checked_pgbench(
                ep, script, env.workdir, env.options.pgbench_length(clients),
                clients=clients, table=table)
            checked.append(what)
            if ep is env.server:
                last = time.monotonic()
            values[ep.name] = result.latency_ms if clients == 1 else result.tps
        figures[clients] = values
        if clients == 1:
            section.add(f"{label}: latency, c=1", "ms", **values)
            shown = "  ".join(f"{k} {v:.3f} ms" for k, v in values.items())
        else:
            section.add(f"{label}: tps, c={clients} `-j 2`", "tps", **values)
            shown = "  ".join(f"{k} {v:,.0f} tps" for k, v in values.items())
        print(f"  {resource:<8} c={clients:<2} {shown}", flush=True)
    if expire is not None:
        await asyncio.sleep(expire)
        await pgbench(env.server, runs[0][2], ["-t", "5"], mode="prepared")
        last = time.monotonic()
    return figures, last - started


async def _calls(conn: asyncpg.Connection) -> dict[str, int]:
    return {r["resource"]: r["calls"] for r in await conn.fetch(
        "SELECT resource, calls FROM kept_stats")}


async def _lookup_calls(
    env: Env, section: Section, conn: asyncpg.Connection, seconds: float, checked: list[str]
) -> None:
    """``big`` was called once; ``big_ttl`` once per ttl begun, or about; ``big``'s
    kept call holds all its rows."""
    calls = await _calls(conn)
    checks.calls("kept_stats: calls of big, a kept immutable call", calls["big"], 1, 1)
    checks.calls("kept_stats: calls of big_plain, a kept immutable call",
                 calls["big_plain"], 1, 1)
    indexed = await conn.fetchval(
        "SELECT indexes FROM scratchpad.cache WHERE resource = 'big_plain'")
    checks.expect("scratchpad.cache: the index of big_plain's kept table", indexed, "(id)")
    listed = await conn.fetch("SELECT rows, hits FROM scratchpad.cache WHERE resource = 'big'")
    checks.expect("scratchpad.cache: rows of big's kept call", [r["rows"] for r in listed],
                  [ITEMS])
    hits = listed[0]["hits"]
    least, most = checks.ttl_calls(seconds, BIG_TTL)
    checks.calls(
        f"kept_stats: calls of big_ttl over {seconds:.1f} s (ttl {BIG_TTL:g} s)",
        calls["big_ttl"],
        least,
        most,
    )
    section.add("resolver calls of `big`", "", server=calls["big"],
                note=f"{hits:,} statements read its kept table")
    section.add(
        "resolver calls of `big_ttl`",
        "",
        server=calls["big_ttl"],
        note=f"over {seconds:.1f} s of its statements, ttl {BIG_TTL:g} s: {least} to "
        f"{most} allowed",
    )
    checked.extend([
        f"big called once, its kept call listed with {ITEMS:,} rows",
        f"big_ttl called {calls['big_ttl']} time(s) ({least} to {most} allowed)",
    ])
    print(
        f"  calls: big {calls['big']} ({hits:,} reads of its table), big_ttl "
        f"{calls['big_ttl']} over {seconds:.1f} s ({least} to {most} allowed)",
        flush=True,
    )


async def _first_materializations(env: Env, section: Section, checked: list[str]) -> int:
    """Time each size's first materialization against COPY; the ``kept_rows`` calls made."""
    assert env.server is not None
    server = await env.server.connect()
    direct = await env.direct.connect()
    made = 0
    try:
        await server.fetchval(REFRESH)  # nothing kept from before
        for n in SMOKE_SIZES if env.options.smoke else SIZES:
            sql = f"SELECT count(*) FROM kept_rows WHERE n = {n}"
            # warm-up: the resolver builds its list (the statement makes a kept table)
            checks.expect(f"server: {sql}", await server.fetchval(sql), n)
            made += 1
            samples = []
            copy = CopyReference(direct, COPY_TARGET, n)
            for _ in range(_repeats(n, env.options.smoke)):
                # the statement before was kept: the refresh drops exactly its table
                dropped = await server.fetchval(REFRESH)
                checks.expect(f"server: {REFRESH}", dropped, "dropped 1 kept call of kept_rows")
                t0 = time.perf_counter()
                count = await server.fetchval(sql)
                samples.append(time.perf_counter() - t0)
                made += 1
                checks.expect(f"server: {sql}", count, n)
                await copy.sample()
            await checks.materialized(server, "kept_rows", n, "server, its kept table")
            listed = await server.fetch(
                "SELECT rows FROM scratchpad.cache WHERE resource = 'kept_rows'")
            checks.expect("scratchpad.cache: kept calls of kept_rows",
                          [r["rows"] for r in listed], [n])
            c = await copy.median_ms()
            checks.expect(f"server: {REFRESH}", await server.fetchval(REFRESH),
                          "dropped 1 kept call of kept_rows")
            checked.append(
                f"{n:,} rows: every count, the kept table's checksum and listing, "
                "COPY tag and checksum"
            )
            s = statistics.median(samples) * 1000
            add_versus_copy(section, f"first materialization, {n:,} rows", n, s, c)
            print(f"  first materialization {n:>9,} rows  server {s:.1f} ms  COPY {c:.1f} ms",
                  flush=True)
    finally:
        await server.close()
        await direct.close()
    return made


def _targets(section: Section, big: dict[int, dict[str, float]],
             plain: dict[int, dict[str, float]]) -> None:
    r = ratio(plain[1]["server"], big[1]["server"])
    section.check(
        f"kept point lookup with no primary key (`big_plain`, c=1) ≤ {PLAIN_RATIO:g}{TIMES} "
        "the latency of one with a primary key (`big`)",
        times(r),
        None if r is None else r <= PLAIN_RATIO,
    )
    r = ratio(big[1]["server"], big[1]["direct"])
    section.check(
        f"kept point lookup (`big`, c=1, prepared) ≤ {LATENCY_RATIO:g}{TIMES} direct latency",
        times(r),
        None if r is None else r <= LATENCY_RATIO,
    )
    r = ratio(big[8]["server"], big[8]["direct"])
    section.check(
        f"kept point lookup (`big`) at c=8 ≥ {VS_DIRECT:g}{TIMES} direct throughput",
        times(r),
        None if r is None else r >= VS_DIRECT,
    )
    r = ratio(big[8]["server"], big[8]["relay"])
    section.check(
        f"kept point lookup (`big`) at c=8, one worker, ≥ {VS_RELAY:g}{TIMES} the relay's "
        "throughput",
        times(r),
        None if r is None else r >= VS_RELAY,
    )
    check_versus_copy(
        section, f"first materialization, {CHECKED:,} rows",
        f"first materialization of {CHECKED:,} rows (`kept_rows`) ≤ {COPY_RATIO:g}{TIMES} COPY",
        COPY_RATIO, digits=2)
