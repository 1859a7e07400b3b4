"""3. Materialization: a statement over a volatile resource returning n rows, vs COPY.

Through the server, ``SELECT count(*) FROM rows WHERE n = <n>`` is timed end to
end from an asyncpg client: the resolver's rows are validated, then, below
``spill_min_rows`` (10,000), serialised to parameters (one array per column) and
turned back into typed rows by the sidecar; from it on, spilled: copied by binary
COPY into a table that only the statement reads, dropped after it (made ahead, after
the warm-up's spill of the same columns).
The physical limit is COPY of the same rows into an unlogged table of the same sidecar
(``copy_records_to_table``, asyncpg's binary COPY FROM STDIN), timed the same way,
each COPY right after one of the server's statements.
The resolver returns an already built list, so neither side pays for making rows.
Each answer is checked: every timed count and COPY tag, and once per size the count
and checksum of the rows through the server and in the COPY's table
(``checks.materialized``).
"""

from __future__ import annotations

import asyncio
import re
import statistics
import time
from operator import itemgetter

import asyncpg

from glove_scratchpad.catalog import encode_param, populate_sql, rows_params

from . import checks
from .bench_resources import make_rows
from .bench_resources import rows as rows_resource
from .env import Env
from .profiling import py_spy_exe, spy_statements
from .results import TIMES, Section, ratio, times

NAME = "materialization"
SPILL_MIN_ROWS = 10_000  # the server's default spill_min_rows
SIZES = (1_000, 10_000, 100_000, 1_000_000)
SMOKE_SIZES = (1_000,)
CHECKED = 100_000
TARGET_RATIO = 2.0
COLUMNS = ["n", "i", "name", "value"]
# Another client backend of the sidecar still running a statement: the server's work
# after its own statement (ANALYZE of a kept table, the drop of a spill table).
_BUSY = ("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
         " AND state = 'active' AND pid <> pg_backend_pid()")


def _repeats(n: int, smoke: bool) -> int:
    if smoke:
        return 2
    return 5 if n <= 100_000 else 2


async def run(env: Env) -> Section:
    section = Section(
        NAME,
        "Materialization",
        "Time of one statement whose resource returns n rows (`SELECT count(*) FROM rows "
        "WHERE n = …`, end to end from an asyncpg client), vs COPY of the same n rows "
        "into an unlogged table directly (`copy_records_to_table`). Median of a few runs "
        "after a warm-up, each server run followed by a COPY. Lower is better.",
        columns=["server", "COPY"],
        ratios=[("server", "COPY")],
    )
    section.notes.append(
        "The breakdown repeats, in this process, what the server does with the rows of one "
        "statement, step by step, on a direct connection for the sidecar's part: from 10,000 "
        "rows (`spill_min_rows`) the spill's binary COPY into a table made ahead (as the "
        "server has one after its first spill of these columns); below, "
        "`populate_sql` over the same parameters."
    )
    assert env.server is not None
    server = await env.server.connect()
    direct = await env.direct.connect()
    checked = []
    try:
        for n in SMOKE_SIZES if env.options.smoke else SIZES:
            sql = f"SELECT count(*) FROM rows WHERE n = {n}"
            # warm-up (the resolver builds its rows), and the rows' checksum
            checks.expect(f"server: {sql}", await server.fetchval(sql), n)
            await checks.materialized(server, "rows", n, "server")
            samples = []
            copy = CopyReference(direct, "copy_target", n)
            for _ in range(_repeats(n, env.options.smoke)):
                t0 = time.perf_counter()
                count = await server.fetchval(sql)
                samples.append(time.perf_counter() - t0)
                checks.expect(f"server: {sql}", count, n)
                await copy.sample()
            c = await copy.median_ms()
            checked.append(f"{n:,} rows: server count and checksum, COPY tag and checksum")
            s = statistics.median(samples) * 1000
            add_versus_copy(section, f"{n:,} rows", n, s, c)
            print(f"  {n:>9,} rows  server {s:.1f} ms  COPY {c:.1f} ms", flush=True)
    finally:
        await server.close()
        await direct.close()
    await _breakdown(env, section, SMOKE_SIZES[0] if env.options.smoke else CHECKED)
    await _profile(env, section, SMOKE_SIZES[0] if env.options.smoke else CHECKED)
    check_versus_copy(section, f"{CHECKED:,} rows",
                      f"{CHECKED:,} volatile rows (spilled), end to end, "
                      f"≤ {TARGET_RATIO:g}{TIMES} COPY",
                      TARGET_RATIO, digits=1)
    checks.passed(section, checked)
    return section


async def _profile(env: Env, section: Section, n: int) -> None:
    """py-spy's view of the server through statements of n rows, each count checked."""
    exe = py_spy_exe()
    if exe is None:
        section.extra = "_py-spy is not installed (`.venv/bin/pip install py-spy`)._\n"
        return
    assert env.server is not None
    sql = f"SELECT count(*) FROM rows WHERE n = {n}"
    server = await env.server.connect()

    async def once() -> None:
        checks.expect(f"server (py-spy): {sql}", await server.fetchval(sql), n)

    try:
        seconds = 1 if env.options.smoke else 4
        text = await spy_statements(env, exe, seconds, once)
    finally:
        await server.close()
    section.extra = f"### py-spy: the server sampled during `{sql}`\n\n{text}"


class CopyReference:
    """The reference: binary COPY (``copy_records_to_table``) of ``make_rows(n)`` into
    ``table``, emptied before each. Its samples are taken between the server's, so that
    both sides of a ratio see the same machine, each once the server's background work
    is over (else it would slow the reference, and flatter the ratio); every tag is
    checked, then the rows' count and checksum, and the table is emptied."""

    def __init__(self, direct: asyncpg.Connection, table: str, n: int) -> None:
        self.direct, self.table, self.n = direct, table, n
        self.records = [tuple(r[c] for c in COLUMNS) for r in make_rows(n)]
        self.samples: list[float] = []

    async def sample(self) -> None:
        for _ in range(1000):  # at most about 5 s
            if not await self.direct.fetchval(_BUSY):
                break
            await asyncio.sleep(0.005)
        await self.direct.execute(f"TRUNCATE {self.table}")
        t0 = time.perf_counter()
        tag = await self.direct.copy_records_to_table(
            self.table, records=self.records, columns=COLUMNS)
        self.samples.append(time.perf_counter() - t0)
        checks.expect(f"direct: COPY into {self.table}", tag, f"COPY {self.n}")

    async def median_ms(self) -> float:
        await checks.materialized(self.direct, self.table, self.n, "direct, after COPY")
        await self.direct.execute(f"TRUNCATE {self.table}")
        return statistics.median(self.samples) * 1000


def add_versus_copy(section: Section, label: str, n: int, server_ms: float,
                    copy_ms: float) -> None:
    """A row of n rows through the server against the COPY reference."""
    section.add(label, "ms", server=server_ms, COPY=copy_ms,
                note=f"{n / server_ms * 1000:,.0f} rows/s through the server")


def check_versus_copy(section: Section, label: str, target: str, limit: float,
                      digits: int) -> None:
    """The target that the row labelled ``label`` (``add_versus_copy``) takes at most
    ``limit`` times COPY; not measured when smoke sizes left that row out."""
    row = next((r for r in section.rows if r.label == label), None)
    r = ratio(row.values["server"], row.values["COPY"]) if row else None
    section.check(target, times(r, digits, "not measured (smoke sizes)"),
                  None if r is None else r <= limit)


def _timed(fn):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - t0) * 1000


async def _breakdown(env: Env, section: Section, n: int) -> None:
    """Where the time of n rows goes: validation, then the spill's COPY (from
    ``spill_min_rows`` on) or the parameters' encoding and the sidecar's reading."""
    raw = make_rows(n)
    # As the server checks a volatile call's rows: not copied, as no cache keeps them.
    validated, validate_ms = _timed(
        lambda: rows_resource.validate_rows(raw, {"n": n}, snapshot=False))
    checks.expect("validate_rows: rows", len(validated), n)
    section.add(f"… {n:,} rows: `validate_rows` (by the values' types, not copied)", "ms",
                server=validate_ms)
    if n >= SPILL_MIN_ROWS:
        await _spill_breakdown(env, section, n, validated, validate_ms)
        return
    texts, params_ms = _timed(lambda: rows_params(rows_resource, validated))
    encoded, encode_ms = _timed(lambda: [encode_param(t) for t in texts])
    checks.expect("encode_param: parameters", len(encoded), len(texts))
    # The server's own SQL (column arrays: no shell table needed); asyncpg sends the
    # parameters as text, then they are cast as the server's are.
    populate = re.sub(r"(\$\d+)::", r"\1::text::", populate_sql(rows_resource, 1))
    sql = f"WITH r AS (SELECT * FROM {populate}) SELECT count(*) FROM r"
    conn = await env.direct.connect()
    try:
        await conn.fetchval(sql, *texts)  # warm-up
        t0 = time.perf_counter()
        count = await conn.fetchval(sql, *texts)
        sidecar_ms = (time.perf_counter() - t0) * 1000
        checks.expect("direct: populate_sql's rows", count, n)
    finally:
        await conn.close()
    mb = sum(map(len, texts)) / 2**20
    how = "column arrays" if len(texts) > 1 else "JSON"
    section.add(
        f"… {n:,} rows: `rows_params`", "ms", server=params_ms, note=f"{mb:.1f} MB of {how}"
    )
    section.add(f"… {n:,} rows: `encode_param` (str to bytes)", "ms", server=encode_ms)
    section.add(
        f"… {n:,} rows: the sidecar's `populate_sql`",
        "ms",
        server=sidecar_ms,
        note="a direct connection, the same parameters",
    )
    print(
        f"  breakdown of {n:,} rows: validate {validate_ms:.0f} ms, params {params_ms:.0f} ms, "
        f"encode {encode_ms:.0f} ms, sidecar {sidecar_ms:.0f} ms",
        flush=True,
    )


async def _spill_breakdown(env: Env, section: Section, n: int, validated: list[dict],
                           validate_ms: float) -> None:
    """The spill's own step: binary COPY of the validated rows, each row's tuple made
    from its dict, into an empty unlogged table with no index (what
    ``CacheStore.spill`` does with the table it made ahead), on a direct connection."""
    conn = await env.direct.connect()
    try:
        await conn.execute("CREATE UNLOGGED TABLE spill_probe"
                           " (n bigint, i bigint, name text, value double precision)")
        t0 = time.perf_counter()
        async with conn.transaction():
            tag = await conn.copy_records_to_table(
                "spill_probe", records=map(itemgetter(*COLUMNS), validated), columns=COLUMNS)
        copy_ms = (time.perf_counter() - t0) * 1000
        checks.expect("direct: the spill's COPY", tag, f"COPY {n}")
        await checks.materialized(conn, "spill_probe", n, "direct, the spill's table")
        await conn.execute("DROP TABLE spill_probe")
    finally:
        await conn.close()
    section.add(f"… {n:,} rows: the spill's binary COPY (into a table made ahead)", "ms",
                server=copy_ms, note="a direct connection, the validated rows")
    print(f"  breakdown of {n:,} rows: validate {validate_ms:.0f} ms, spill COPY "
          f"{copy_ms:.0f} ms", flush=True)
