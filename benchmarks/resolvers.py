"""6. Resolver concurrency: 100 ms resolvers, concurrently or not.

- Ten independent references in one statement (``slow a1, …, slow a10`` with a
  different key each): resolved concurrently, it takes about 100 ms.
- An IN list of 50 values on one reference: one call per value. Under a
  per-resource concurrency limit of 10 it would take 500 ms; the figure shows what
  the server does, and ``slow_stats`` reports how many calls were in flight at once.

Every timed statement's count is checked (1, 1 and 50 rows), and the peak in flight
must lie between 1 and the statement's calls.
"""

from __future__ import annotations

import statistics
import time

from . import checks
from .bench_resources import SLOW_SECONDS
from .env import Env
from .results import Section

NAME = "resolver-concurrency"
LIMIT = 10  # the concurrency limit the reference assumes


def _ten() -> str:
    names = [f"a{i}" for i in range(1, 11)]
    return (
        "SELECT count(*) FROM "
        + ", ".join(f"slow {a}" for a in names)
        + " WHERE "
        + " AND ".join(f"{a}.k = {i}" for i, a in enumerate(names, 1))
    )


async def run(env: Env) -> Section:
    ms = SLOW_SECONDS * 1000
    section = Section(
        NAME,
        "Resolver concurrency",
        f"Each `slow` call sleeps {ms:g} ms. Median end-to-end time of one statement from "
        "an asyncpg client; *reference* is the ideal: one call's time when calls overlap "
        f"fully, and {50 // LIMIT} rounds for 50 calls under a limit of {LIMIT}. Lower is "
        "better.",
        columns=["server", "reference"],
        ratios=[("server", "reference")],
    )
    assert env.server is not None
    conn = await env.server.connect()
    repeats = 2 if env.options.smoke else 5
    # (label, statement, resolver calls, its count, the reference time)
    cases = [
        ("1 resolver call", "SELECT count(*) FROM slow WHERE k = 1", 1, 1, ms),
        ("10 independent references in one statement", _ten(), 10, 1, ms),
        (
            "IN fan-out of 50 values",
            "SELECT count(*) FROM slow WHERE k IN ("
            + ", ".join(str(i) for i in range(1, 51))
            + ")",
            50,
            50,
            ms * 50 / LIMIT,
        ),
    ]
    checked = []
    try:
        for label, sql, calls, count, reference in cases:
            checks.expect(f"{label}: count", await conn.fetchval(sql), count)  # and warm-up
            await conn.fetchval("SELECT peak FROM slow_stats")
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                got = await conn.fetchval(sql)
                times.append(time.perf_counter() - t0)
                checks.expect(f"{label}: count", got, count)
            peak = await conn.fetchval("SELECT peak FROM slow_stats")
            if not (isinstance(peak, int) and 1 <= peak <= calls):
                raise checks.WrongAnswer(f"{label}: slow_stats.peak is {peak!r}, not 1 to {calls}")
            checked.append(f"{label} (count {count}, peak {peak})")
            t = statistics.median(times) * 1000
            section.add(
                label,
                "ms",
                server=t,
                reference=reference,
                note=f"{calls} call{'s' if calls > 1 else ''}, at most {peak} in flight at once",
            )
            print(
                f"  {label}: {t:.1f} ms (reference {reference:.0f} ms), peak {peak} in flight",
                flush=True,
            )
            if calls == 50:
                section.notes.append(
                    f"The IN fan-out ran {peak} calls at once: "
                    + (
                        "the server has no per-resource concurrency limit yet, so a tool with a "
                        f"rate limit would see all {calls} calls together."
                        if peak > LIMIT
                        else f"a limit of {peak} applies."
                    )
                )
    finally:
        await conn.close()
    checks.passed(section, checked)
    return section
