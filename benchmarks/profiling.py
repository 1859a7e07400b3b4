"""8. Where the time of one statement goes: CPU accounting and profiles of a point lookup.

- CPU per statement: a ``-c 1 -M prepared`` point-lookup run against the server and
  directly, with the CPU time of the server process and of the whole sidecar
  cluster (the postmaster, its live children, and the children it reaped) read
  before and after; through the server, both the lookup of ``items`` (a call per
  new id, then the in-memory cache) and of ``big`` (a kept call: its table, on the
  fast path of a prepared statement), and ``big`` again at 8 clients.
- System calls per statement (when strace may trace): the event loop's wake-ups,
  reads and writes of the server for ``big`` and ``items``, and of the byte relay for
  the same lookups (``syscalls.py``).
- py-spy (when installed): the running server sampled during each such run; self
  and inclusive time by function, and self time by component.
- cProfile: a second server process started under ``python -m cProfile`` for such a
  run, of ``items`` and of ``big``: the Python calls per statement, and the
  functions called at least once per statement, by total and cumulative time.

Each endpoint's point lookup (the server, direct, the profiled server) is checked
by ``checks.lookup`` before its timed run.
"""

from __future__ import annotations

import asyncio
import collections
import pstats
import re
import shutil
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import psutil

from . import checks, syscalls
from .env import REPO, Endpoint, Env
from .pgbench import LOOKUP_SCRIPT, PgbenchResult, lookup_script, pgbench, write_script
from .results import Section

NAME = "profile"
KEPT_CPU_US = 40  # server CPU per kept lookup (the fast path), at most
SPY_RATE = 1000  # samples per second
TOP = 15

# Self time by component: the first rule whose prefix starts the (shortened) file path wins.
_NET = "client connection (server/net: connection, portals, startup)"
_GUARD = "limits and audit (server/engine/guard.py, catalog/_audit.py)"
_KEEP = "kept calls (server/engine/cache.py, catalog/_cache.py)"
_CLIENT = "sidecar client (catalog/_client.py, _values.py)"
_ASYNC = "asyncio / uvloop (event loop, socket I/O in C)"
COMPONENTS = (
    ("glove_scratchpad/wire/", "wire codec (glove_scratchpad/wire)"),
    ("server/net/", _NET),
    ("server/engine/guard.py", _GUARD),
    ("catalog/_audit.py", _GUARD),
    ("server/engine/cache.py", _KEEP),
    ("catalog/_cache.py", _KEEP),
    ("server/engine/", "interpreter (server/engine: session, resolve, run, …)"),
    ("server/sql/", "parse, gate, analysis and rewrite (server/sql)"),
    ("server/", "other server code"),
    ("glove_scratchpad/", "other server code"),
    ("catalog/_client.py", _CLIENT),
    ("catalog/_values.py", _CLIENT),
    ("catalog/_rows.py", "rows as parameters (catalog/_rows.py)"),
    ("catalog/", "other catalog code"),
    ("pglast/", "pglast"),
    ("resources/", "resources (resolver call, row validation)"),
    ("pydantic", "pydantic"),
    ("asyncpg/", "asyncpg (audit writes, kept tables)"),
    ("json/", "json"),
    ("asyncio/", _ASYNC),
    ("uvloop/", _ASYNC),
)
_LIB = re.compile(r"^.*?(site-packages/|lib/python3\.\d+/)")
# The package maps glove_scratchpad.server (.catalog, .resources) to the top folders.
_LINKED = re.compile(r"^glove_scratchpad/(?=(?:server|catalog|resources)/)")
_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")


def _cluster_cpu(env: Env) -> float:
    """CPU seconds of the whole sidecar: postmaster, live children, reaped children."""
    procs = env.sidecar_processes()
    t = procs[0].cpu_times()
    total = t.user + t.system + t.children_user + t.children_system
    for p in procs[1:]:
        try:
            c = p.cpu_times()
        except psutil.Error:
            continue
        total += c.user + c.system
    return total


def _process_cpu(pid: int) -> float:
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


async def _cpu_run(env: Env, ep: Endpoint, script: Path, clients: int = 1, *,
                   pid: int | None = None) -> tuple[PgbenchResult, float, float]:
    """A ``-M prepared`` run: its result, then the CPU per statement of the process
    ``pid`` (the server's, unless given) and of the sidecar's cluster, in µs."""
    assert env.server_process is not None
    pid = env.server_process.pid if pid is None else pid
    server0, cluster0 = _process_cpu(pid), _cluster_cpu(env)
    result = await pgbench(ep, script, env.options.pgbench_length(clients), mode="prepared",
                           clients=clients, threads=min(2, clients))
    server1, cluster1 = _process_cpu(pid), _cluster_cpu(env)
    n = max(1, result.transactions)
    return result, (server1 - server0) / n * 1e6, (cluster1 - cluster0) / n * 1e6


def _short(path: str) -> str:
    """A file path from its package on (``server/session.py``, ``asyncio/streams.py``)."""
    path = path.replace(str(REPO) + "/", "")
    return _LINKED.sub("", _LIB.sub("", path))


def _parse_frame(frame: str) -> tuple[str, str]:
    m = _FRAME.match(frame.strip())
    return (m["func"], m["file"]) if m else (frame.strip(), "")


def _component(file: str) -> str:
    short = _short(file)
    for prefix, name in COMPONENTS:
        if short.startswith(prefix):
            return name
    return "other"


def _is_root(func: str, file: str) -> bool:
    """Frames every stack starts with (the interpreter, the command line, the runner)."""
    short = _short(file)
    return (
        func == "<module>"
        or short.startswith("<frozen")
        or short in ("runpy.py", "server/cli.py", "asyncio/runners.py")
    )


def summarize_spy(raw: str, statements: float) -> str:
    """Markdown tables from py-spy's raw (collapsed-stack) output."""
    self_t: collections.Counter[tuple[str, str]] = collections.Counter()
    incl: collections.Counter[tuple[str, str]] = collections.Counter()
    parts: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [_parse_frame(f) for f in stack.split(";") if f]
        if not frames:
            continue
        total += n
        self_t[frames[-1]] += n
        parts[_component(frames[-1][1])] += n
        for f in set(frames):
            incl[f] += n
    if not total:
        return "_py-spy recorded no samples._\n"
    per = 1e6 / SPY_RATE / max(statements, 1)  # µs of CPU per sample, per statement

    def table(counter: collections.Counter, title: str) -> list[str]:
        out = [f"| {title} | share | µs/statement |", "| --- | ---: | ---: |"]
        for key, n in counter.most_common(TOP):
            name = key if isinstance(key, str) else f"`{key[0]}` ({_short(key[1])})"
            out.append(f"| {name} | {100 * n / total:.1f}% | {n * per:.1f} |")
        return out

    lines = [
        f"{total:,} samples of on-CPU time at {SPY_RATE} Hz over ~{statements:,.0f} "
        f"statements ({total * per:.0f} µs of server CPU per statement, sampling included).",
        "",
        "Self time of `Runner.run` is native code under it (uvloop's loop: epoll, the "
        "recv(2) of every read, callback dispatch). A function's self time includes the "
        "C calls it makes: the send(2) of `transport.write` lands in `ClientHandler.write` "
        "(to the client) and `SidecarConnection.pipeline` (to the sidecar).",
        "",
    ]
    lines += ["Self time by component:", "", *table(parts, "component"), ""]
    lines += ["Self time by function:", "", *table(self_t, "function"), ""]
    incl_top = collections.Counter({k: v for k, v in incl.items() if not _is_root(*k)})
    lines += ["Inclusive time by function:", "", *table(incl_top, "function"), ""]
    return "\n".join(lines)


def summarize_cprofile(path: Path, statements: int) -> str:
    """Markdown tables of the functions a statement calls, by total and cumulative time."""
    stats = pstats.Stats(str(path))
    entries = []
    for (file, line, func), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if nc >= statements * 0.2:  # on the per-statement path, not start-up
            entries.append((func, file, line, nc, tt, ct))

    def table(key: int, title: str) -> list[str]:
        out = [f"| function | calls/statement | {title} µs/statement |", "| --- | ---: | ---: |"]
        for func, file, line, nc, tt, ct in sorted(entries, key=lambda e: -e[key])[:TOP]:
            value = tt if key == 4 else ct
            where = f"{_short(file)}:{line}" if file != "~" else "built-in"
            out.append(
                f"| `{func}` ({where}) | {nc / statements:.1f} | {value / statements * 1e6:.1f} |"
            )
        return out

    calls = sum(nc for _cc, nc, _tt, _ct, _callers in stats.stats.values())  # type: ignore[attr-defined]
    return "\n".join(
        [
            f"{calls / max(statements, 1):,.0f} Python calls per statement (every function "
            "call the profiler saw, built-ins included, over the statements it timed).",
            "",
            "By total (self) time:",
            "",
            *table(4, "self"),
            "",
            "By cumulative time (coroutines count each resumption as a call):",
            "",
            *table(5, "cumulative"),
            "",
        ]
    )


async def _py_spy(env: Env, script: Path, exe: str) -> str:
    assert env.server is not None
    seconds = 1 if env.options.smoke else max(2, int(env.options.duration))
    spy, out = await _spy(env, exe, seconds)
    bench = asyncio.create_task(
        pgbench(env.server, script, ["-T", str(seconds + 2)], mode="prepared")
    )
    _, err = await spy.communicate()
    result = await bench
    if spy.returncode != 0 or not out.exists():
        return f"_py-spy failed: {err.decode(errors='replace')[-500:]}_\n"
    return summarize_spy(out.read_text(), result.tps * seconds)


async def spy_statements(env: Env, exe: str, seconds: int,
                         once: Callable[[], Awaitable[None]]) -> str:
    """py-spy's tables (``summarize_spy``) of the server while ``once`` (one statement,
    its answer checked) runs again and again, for ``seconds``."""
    spy, out = await _spy(env, exe, seconds)
    statements = 0
    deadline = time.monotonic() + seconds + 10  # py-spy stops itself at ``seconds``
    while spy.returncode is None and time.monotonic() < deadline:
        await once()
        statements += 1
    _, err = await spy.communicate()
    if spy.returncode != 0 or not out.exists():
        return f"_py-spy failed: {err.decode(errors='replace')[-500:]}_\n"
    return summarize_spy(out.read_text(), statements)


async def _spy(env: Env, exe: str, seconds: int) -> tuple[asyncio.subprocess.Process, Path]:
    """py-spy recording the server for ``seconds``, and the file it writes."""
    assert env.server_process is not None
    out = env.workdir / "py-spy.txt"
    out.unlink(missing_ok=True)
    spy = await asyncio.create_subprocess_exec(
        exe,
        "record",
        "--pid",
        str(env.server_process.pid),
        "--duration",
        str(seconds),
        "--rate",
        str(SPY_RATE),
        "--nonblocking",
        "--format",
        "raw",
        "--output",
        str(out),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    return spy, out


async def _cprofile(env: Env, script: Path, table: str) -> tuple[str, PgbenchResult]:
    prof = env.workdir / "server.prof"
    proc, ep = await env.launch_server(
        "server-cprofile", env.server_command("bench_profile", profile=prof)
    )
    try:
        warm = "50" if env.options.smoke else "300"
        await pgbench(ep, script, ["-t", warm], mode="prepared")  # warm-up, not profiled
        await checks.lookup(ep, "prepared", env.workdir, table=table)
        proc.proc.send_signal(signal.SIGUSR1)  # start profiling
        await asyncio.sleep(0.2)
        result = await pgbench(ep, script, env.options.pgbench_length(), mode="prepared")
        proc.proc.send_signal(signal.SIGUSR2)  # stop, and write the stats
        for _ in range(100):
            if prof.exists() and prof.stat().st_size:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
    finally:
        await asyncio.to_thread(proc.stop)
    if not prof.exists():
        return "_cProfile wrote no profile._\n", result
    return summarize_cprofile(prof, result.transactions), result


async def _syscalls(env: Env, section: Section, items: Path, big: Path) -> None:
    """The event loop's wake-ups, reads and writes per statement (``syscalls.count``):
    the server's for ``big`` (the fast path) and ``items``, the byte relay's for the
    same lookups."""
    assert env.server is not None and env.server_process is not None
    assert env.relay is not None and env.relay_process is not None
    n = 200 if env.options.smoke else 3000
    counted = {}
    for name, ep, script, pid in (
            ("big", env.server, big, env.server_process.pid),
            ("items", env.server, items, env.server_process.pid),
            ("relay", env.relay, items, env.relay_process.pid)):
        found = await syscalls.count(ep, script, pid, n, env.workdir / f"strace_{name}.txt")
        if found is None:
            section.notes.append("System calls per statement: not counted (strace is not "
                                 "installed, or may not trace the server here).")
            return
        counted[name] = found[0]
    for kind, what in (("waits", "the event loop's wake-ups (`epoll_pwait`)"),
                       ("reads", "reads"), ("writes", "writes")):
        section.add(f"{what} per statement, `big`", "per statement",
                    server=counted["big"][kind], relay=counted["relay"][kind])
        section.add(f"{what} per statement, `items`", "per statement",
                    server=counted["items"][kind])
    section.notes.append(
        f"System calls per statement: `strace -c -f` attached to the process for {n:,} "
        "`-c 1` lookups (the byte relay's: of `items`, which it forwards to Postgres). "
        "A relay wakes once per message it forwards: once for the client's request, once "
        "for Postgres's reply.")


def py_spy_exe() -> str | None:
    local = Path(sys.executable).parent / "py-spy"
    return str(local) if local.exists() else shutil.which("py-spy")


async def run(env: Env) -> Section:
    section = Section(
        NAME,
        "Profile of one statement",
        "A `-c 1 -M prepared` point-lookup run. CPU per statement comes from the "
        "processes' CPU times; the sidecar's is the whole cluster's (postmaster, live and "
        "reaped children); the byte relay's is its own process's. Lower is better.",
        columns=["server", "direct", "relay"],
        ratios=[("server", "direct")],
    )
    assert env.server is not None
    script = write_script(env.workdir, "lookup", LOOKUP_SCRIPT)
    kept = write_script(env.workdir, "lookup_big", lookup_script(table="big"))
    await pgbench(env.server, kept, ["-t", "50"], mode="prepared")  # makes big's table
    assert env.relay is not None and env.relay_process is not None
    checked = [await checks.lookup(ep, "prepared", env.workdir)
               for ep in (env.server, env.direct, env.relay)]
    checked.append(await checks.lookup(env.server, "prepared", env.workdir, table="big")
                   + " (big)")
    via_server, server_cpu, cluster_server = await _cpu_run(env, env.server, script)
    via_kept, kept_cpu, cluster_kept = await _cpu_run(env, env.server, kept)
    via_direct, _, cluster_direct = await _cpu_run(env, env.direct, script)
    _, kept_cpu8, _ = await _cpu_run(env, env.server, kept, clients=8)
    # The floor: the byte relay's own CPU for the same lookups, which it only forwards.
    relay_pid = env.relay_process.pid
    _, relay_cpu, _ = await _cpu_run(env, env.relay, script, pid=relay_pid)
    _, relay_cpu8, _ = await _cpu_run(env, env.relay, script, clients=8, pid=relay_pid)
    section.add("latency", "ms", server=via_server.latency_ms, direct=via_direct.latency_ms)
    section.add("latency, `big` (a kept call, the fast path)", "ms",
                server=via_kept.latency_ms, direct=via_direct.latency_ms)
    section.add("server process CPU per statement", "µs", server=server_cpu)
    section.add("server process CPU per statement, `big`", "µs", server=kept_cpu)
    section.add("server process CPU per statement, `big`, c=8 `-j 2`", "µs", server=kept_cpu8)
    section.add("the byte relay's process CPU per statement", "µs", relay=relay_cpu)
    section.add("the byte relay's process CPU per statement, c=8 `-j 2`", "µs",
                relay=relay_cpu8)
    section.add("sidecar CPU per statement", "µs", server=cluster_server, direct=cluster_direct)
    section.add("sidecar CPU per statement, `big`", "µs", server=cluster_kept,
                direct=cluster_direct)
    section.check(f"server CPU per kept lookup (`big`, c=1, prepared) ≤ {KEPT_CPU_US} µs",
                  f"{kept_cpu:.0f} µs (the byte relay alone: {relay_cpu:.0f} µs)",
                  kept_cpu <= KEPT_CPU_US)
    await _syscalls(env, section, script, kept)
    print(
        f"  server CPU {server_cpu:.0f} µs/stmt ({kept_cpu:.0f} for big); sidecar CPU "
        f"{cluster_server:.0f} µs/stmt ({cluster_kept:.0f} for big; direct "
        f"{cluster_direct:.0f})",
        flush=True,
    )

    parts = []
    exe = py_spy_exe()
    if exe is not None:
        parts += [
            "### py-spy: the server sampled during a point-lookup run of `items`",
            "",
            await _py_spy(env, script, exe),
            "### py-spy: the server sampled during a point-lookup run of `big` (kept)",
            "",
            await _py_spy(env, kept, exe),
        ]
    else:
        parts += [
            "_py-spy is not installed (`.venv/bin/pip install py-spy`): "
            "only the cProfile view below._",
            "",
        ]
    for what, table, profiled in (("`items`", "items", script), ("`big` (kept)", "big", kept)):
        text, result = await _cprofile(env, profiled, table)
        parts += [
            f"### cProfile: a server started under `python -m cProfile`, a lookup of {what}",
            "",
            f"{result.transactions:,} statements at {result.latency_ms:.2f} ms each under "
            "the profiler (deterministic profiling inflates Python-heavy code); functions "
            "called at least once per statement.",
            "",
            text,
        ]
    section.extra = "\n".join(parts)
    checks.passed(section, [*checked, "lookups of the cProfile servers -M prepared (items, big)"])
    print("  profiles: " + ("py-spy, " if exe else "") + "cProfile", flush=True)
    return section
