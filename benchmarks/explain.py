"""5. The pre-pass: latency of EXPLAIN on a five-resource join.

Through the wire (pgbench ``-c 1 -M simple``, an ``EXPLAIN …`` script) against the
server and, for reference, against five plain tables directly; and in process via
``Database.explain`` on the same sidecar, with the analysis alone (``analyze`` on a
cached parse) and an uncached pglast parse timed apart.
Each answer is checked (``checks.plan``): through the wire, one simple-protocol
``Query`` of the same EXPLAIN returns plan rows naming every resource, as does
``Database.explain``; ``analyze`` reads the five resources; pglast parses one statement.
"""

from __future__ import annotations

import statistics
import time

from pglast import parse_sql

from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.session import parse
from glove_scratchpad.server.sql.analysis import analyze

from . import bench_resources, checks
from .env import Env
from .pgbench import pgbench, write_script
from .results import Section

NAME = "explain"
TARGET_MS = 2.0
RESOURCES = ("customer", "orders", "product", "review", "shipment")


def _time(fn, n: int) -> float:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


async def run(env: Env) -> Section:
    section = Section(
        NAME,
        "The pre-pass: EXPLAIN on a five-resource join",
        "Latency of `EXPLAIN` over `customer ⋈ orders ⋈ product ⋈ review ⋈ shipment` with "
        "pushed-down keys (no resolver runs). Wire: pgbench average, `-c 1 -M simple`; "
        "direct: the same EXPLAIN over five plain tables. In process: median of "
        "`Database.explain`, and of its parts. Lower is better.",
        columns=["server", "direct"],
        ratios=[("server", "direct")],
    )
    sql = bench_resources.JOIN_SQL
    statement = f"EXPLAIN {sql};"
    script = write_script(env.workdir, "explain", statement + "\n")
    assert env.server is not None
    values = {}
    checked = []
    for ep in (env.server, env.direct):
        checked.append(await checks.explain_wire(ep, statement, RESOURCES))
        await pgbench(ep, script, ["-t", "20"], mode="simple")
        values[ep.name] = (
            await pgbench(ep, script, env.options.pgbench_length(), mode="simple")
        ).latency_ms
    wire = values["server"]
    section.add("EXPLAIN through the wire", "ms", **values)

    n = 30 if env.options.smoke else 300
    db = await Database.create(
        bench_resources.resources, sidecar=env.sidecar, database="bench_inproc"
    )
    try:
        checks.plan("Database.explain", (await db.explain(sql)).rows, RESOURCES)
        for _ in range(10):
            await db.explain(sql)
        samples = []
        for _ in range(n):
            t0 = time.perf_counter()
            await db.explain(sql)
            samples.append(time.perf_counter() - t0)
        in_process = statistics.median(samples) * 1000
        stmt = parse(sql)[0]
        lookup = db.default_session.lookup
        plan = analyze(stmt.sql, stmt.node, lookup)
        checks.expect("analyze: resources read", sorted(r.name for r in plan.reads),
                      sorted(RESOURCES))
        checks.expect("pglast: statements", len(parse_sql(sql)), 1)
        checked += ["Database.explain", "analyze", "pglast parse"]
        analysis = _time(lambda: analyze(stmt.sql, stmt.node, lookup), n)
        parsing = _time(lambda: parse_sql(sql), n)
    finally:
        await db.close()
    section.add("`Database.explain` in process", "ms", server=in_process)
    section.add("… of which `analyze()` (parse cached)", "ms", server=analysis)
    section.add("a pglast parse of the statement (uncached)", "ms", server=parsing)
    print(
        f"  wire {wire:.3f} ms (direct {values['direct']:.3f} ms)  in process "
        f"{in_process:.3f} ms  analyze {analysis:.3f} ms  parse {parsing:.3f} ms",
        flush=True,
    )
    section.check(
        f"EXPLAIN through the wire ≤ {TARGET_MS:g} ms", f"{wire:.2f} ms", wire <= TARGET_MS
    )
    section.check(
        f"EXPLAIN in process (`Database.explain`) ≤ {TARGET_MS:g} ms",
        f"{in_process:.2f} ms",
        in_process <= TARGET_MS,
    )
    checks.passed(section, checked)
    return section
