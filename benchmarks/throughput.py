"""2. Throughput: the point lookup at 8, 32 and 128 clients (pgbench ``-j 2``).

Server vs direct Postgres vs the plain asyncio byte relay, each in prepared mode,
and at every client count the server with ``--workers 2`` (two processes on one
port, over the same sidecar), in the same run: the scaling curve of workers. Before each timed run,
``checks.lookup`` checks the answer with as many clients.
"""

from __future__ import annotations

import dataclasses

from . import checks
from .env import Env
from .pgbench import LOOKUP_SCRIPT, write_script
from .results import TIMES, Section, ratio, times

NAME = "throughput"
CLIENTS = (8, 32, 128)
SMOKE_CLIENTS = (8, 32)
CHECKED = (8, 32)
VS_DIRECT, VS_RELAY = 0.25, 0.75
VS_RELAY_RESOLVED = 0.25  # c=8, a new call each time: at least a quarter of the relay
WORKERS = 2
WORKER_CLIENTS = CLIENTS
VS_ONE_WORKER = 1.0  # two workers must beat one at c=8
SCALING_AT, SCALING = 32, 1.8  # and scale at c=32: at least 1.8x one worker


async def run(env: Env) -> Section:
    section = Section(
        NAME,
        "Throughput",
        "Statements per second (pgbench tps, without connection time), `-M prepared -j 2`, "
        "the point-lookup script. Higher is better.",
        columns=["server", "direct", "relay", "workers"],
        ratios=[("server", "direct"), ("server", "relay"), ("workers", "server")],
    )
    script = write_script(env.workdir, "lookup", LOOKUP_SCRIPT)
    checked = []
    workers_process, found = await env.launch_server(
        "workers", [*env.server_command(), "--workers", str(WORKERS)])
    workers = dataclasses.replace(found, name="workers")
    try:
        await _measure(env, section, script, checked, workers)
    finally:
        workers_process.stop()
    checks.passed(section, checked)
    return section


async def _measure(env: Env, section: Section, script, checked: list, workers) -> None:  # type: ignore[no-untyped-def]
    for clients in SMOKE_CLIENTS if env.options.smoke else CLIENTS:
        values = {}
        eps = [env.server, env.direct, env.relay]
        if clients in WORKER_CLIENTS:
            eps.append(workers)
        for ep in eps:
            assert ep is not None
            what, result = await checks.checked_pgbench(
                ep, script, env.workdir, env.options.pgbench_length(clients), clients=clients)
            checked.append(what)
            values[ep.name] = result.tps
        section.add(f"c={clients}", "tps", **values)
        print(
            f"  c={clients:<4} " + "  ".join(f"{k} {v:,.0f} tps" for k, v in values.items()),
            flush=True,
        )
        if clients in CHECKED:
            d = ratio(values["server"], values["direct"])
            r = ratio(values["server"], values["relay"])
            section.check(
                f"throughput at c={clients} ≥ {VS_DIRECT:g}{TIMES} direct",
                times(d),
                None if d is None else d >= VS_DIRECT,
            )
            section.check(
                f"throughput at c={clients} ≥ {VS_RELAY:g}{TIMES} the relay",
                times(r),
                None if r is None else r >= VS_RELAY,
            )
        if clients == CHECKED[0]:
            section.check(
                f"resolved lookup (a new call each time) at c={clients} ≥ "
                f"{VS_RELAY_RESOLVED:g}{TIMES} the relay",
                times(r),
                None if r is None else r >= VS_RELAY_RESOLVED,
            )
        w = ratio(values.get("workers"), values["server"])
        if clients == WORKER_CLIENTS[0]:
            section.check(
                f"throughput at c={clients} with --workers {WORKERS} > one worker's",
                times(w),
                None if w is None else w > VS_ONE_WORKER,
            )
        if clients == SCALING_AT:
            section.check(
                f"throughput at c={clients} with --workers {WORKERS} ≥ {SCALING:g}{TIMES} "
                "one worker's",
                times(w),
                None if w is None else w >= SCALING,
            )
