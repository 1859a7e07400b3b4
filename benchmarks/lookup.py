"""1. Point lookup: single-client latency, server vs direct Postgres (and the relay).

pgbench ``-c 1`` runs ``SELECT * FROM items WHERE id = :id`` with a random id, in
each protocol mode (simple, extended, prepared). Through the server ``items`` is
an immutable resource resolved in Python; directly it is a plain indexed table.
Before each timed run, ``checks.lookup`` checks the answer on that endpoint, in
that mode (and over ids 1-100 for the cached runs).
"""

from __future__ import annotations

from . import checks
from .env import Env
from .pgbench import LOOKUP_SCRIPT, lookup_script, pgbench, write_script
from .results import TIMES, Section, ratio, times

NAME = "point-lookup"
MODES = ("simple", "extended", "prepared")
TARGET_RATIO = 3.0
HOT = 100  # ids 1-100: the cached runs


async def run(env: Env) -> Section:
    section = Section(
        NAME,
        "Point lookup (1 client)",
        "Average latency per statement, pgbench `-c 1 -n`, script "
        "`\\set id random(1, 100000)` + `SELECT * FROM items WHERE id = :id;`. "
        "Lower is better.",
        columns=["server", "direct", "relay"],
        ratios=[("server", "direct"), ("server", "relay")],
    )
    script = write_script(env.workdir, "lookup", LOOKUP_SCRIPT)
    endpoints = [env.server, env.direct, env.relay]
    for ep in endpoints:  # warm-up: connections, pools, caches
        assert ep is not None
        await pgbench(ep, script, ["-t", "50"], mode="prepared")
    checked = []
    for mode in MODES:
        values = {}
        for ep in endpoints:
            assert ep is not None
            checked.append(await checks.lookup(ep, mode, env.workdir))
            result = await pgbench(ep, script, env.options.pgbench_length(), mode=mode)
            values[ep.name] = result.latency_ms
        section.add(f"latency, `-M {mode}`", "ms", **values)
        print(f"  {mode:<9} " + "  ".join(f"{k} {v:.3f} ms" for k, v in values.items()), flush=True)
    prepared = section.rows[-1].values
    # The same lookup over ids 1-100 only: after the warm-up, every one is in the
    # immutable cache, so no resolver runs (and nothing is audited).
    hot = write_script(env.workdir, "lookup_hot", lookup_script(1, HOT))
    values = {}
    for ep in (env.server, env.direct):
        assert ep is not None
        await pgbench(ep, hot, ["-t", "300"], mode="prepared")
        checked.append(await checks.lookup(ep, "prepared", env.workdir, high=HOT) + " (cached)")
        values[ep.name] = (
            await pgbench(ep, hot, env.options.pgbench_length(), mode="prepared")
        ).latency_ms
    section.add("latency, `-M prepared`, ids 1-100 only (cached)", "ms", relay=None, **values)
    print(
        f"  cached    server {values['server']:.3f} ms  direct {values['direct']:.3f} ms",
        flush=True,
    )
    r = ratio(prepared["server"], prepared["direct"])
    section.check(
        f"point lookup (c=1, prepared) ≤ {TARGET_RATIO:g}{TIMES} direct latency",
        times(r, 1),
        None if r is None else r <= TARGET_RATIO,
    )
    checks.passed(section, checked)
    return section
