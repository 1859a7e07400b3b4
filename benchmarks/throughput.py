"""2. Throughput: the point lookup at 8, 32 and 128 clients (pgbench ``-j 2``).

Server vs direct Postgres vs the plain asyncio byte relay, each in prepared mode.
Before each timed run, ``checks.lookup`` checks the answer with as many clients.
"""

from __future__ import annotations

from . import checks
from .env import Env
from .pgbench import LOOKUP_SCRIPT, pgbench, write_script
from .results import TIMES, Section, ratio, times

NAME = "throughput"
CLIENTS = (8, 32, 128)
SMOKE_CLIENTS = (8, 32)
CHECKED = (8, 32)
VS_DIRECT, VS_RELAY = 0.25, 0.75


async def run(env: Env) -> Section:
    section = Section(
        NAME,
        "Throughput",
        "Statements per second (pgbench tps, without connection time), `-M prepared -j 2`, "
        "the point-lookup script. Higher is better.",
        columns=["server", "direct", "relay"],
        ratios=[("server", "direct"), ("server", "relay")],
    )
    script = write_script(env.workdir, "lookup", LOOKUP_SCRIPT)
    checked = []
    for clients in SMOKE_CLIENTS if env.options.smoke else CLIENTS:
        values = {}
        for ep in (env.server, env.direct, env.relay):
            assert ep is not None
            checked.append(await checks.lookup(ep, "prepared", env.workdir, clients=clients))
            result = await pgbench(
                ep,
                script,
                env.options.pgbench_length(clients),
                clients=clients,
                threads=2,
                mode="prepared",
            )
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
    checks.passed(section, checked)
    return section
