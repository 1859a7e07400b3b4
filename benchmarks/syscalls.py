"""System calls per statement of one process, counted by ``strace -c`` during a pgbench
run: how often its event loop woke (``epoll_pwait``), read and wrote for each statement.

The profile section counts them for the server and for the byte relay over the same
lookups: a relay wakes once per message it forwards, and so should the server's fast
path. strace stops the process at every system call, so the run is slow; only the
counts are reported, never its time. Without strace (or without the right to trace),
nothing is counted and the rows say so.
"""

from __future__ import annotations

import asyncio
import shutil
import signal
from pathlib import Path

from .env import Endpoint
from .pgbench import PgbenchResult, pgbench

__all__ = ["KINDS", "count", "parse"]

# What each kind counts, by the system calls Linux and libuv use for it.
KINDS = {
    "waits": ("epoll_pwait", "epoll_wait", "epoll_pwait2"),
    "reads": ("read", "recvfrom", "recvmsg", "readv"),
    "writes": ("write", "sendto", "sendmsg", "writev"),
}
_ATTACHED = b"attached"  # strace's line on stderr once it traces every thread


def parse(table: str) -> dict[str, int]:
    """Calls by system call, from the summary ``strace -c`` writes."""
    calls: dict[str, int] = {}
    for line in table.splitlines():
        parts = line.split()
        # % time, seconds, usecs/call, calls, [errors], syscall
        if len(parts) >= 5 and parts[3].isdigit() and parts[-1] != "total":
            calls[parts[-1]] = calls.get(parts[-1], 0) + int(parts[3])
    return calls


async def count(ep: Endpoint, script: Path, pid: int, transactions: int, out: Path
                ) -> tuple[dict[str, float], PgbenchResult] | None:
    """Each kind's calls per statement of process ``pid`` over a ``-c 1 -M prepared``
    run of ``transactions`` statements of ``script``; None when strace cannot trace it."""
    strace = shutil.which("strace")
    if strace is None:
        return None
    tracer = await asyncio.create_subprocess_exec(
        strace, "-c", "-f", "-p", str(pid), "-o", str(out),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    assert tracer.stderr is not None
    try:
        line = await asyncio.wait_for(tracer.stderr.readline(), 10)
    except TimeoutError:
        line = b""
    if _ATTACHED not in line:  # not allowed to trace (ptrace_scope), or it failed
        if tracer.returncode is None:
            tracer.kill()
        await tracer.wait()
        return None
    try:
        result = await pgbench(ep, script, ["-t", str(transactions)], mode="prepared")
    finally:
        tracer.send_signal(signal.SIGINT)  # detach: it writes the summary, then exits
        await tracer.communicate()
    calls = parse(out.read_text()) if out.exists() else {}
    n = max(1, result.transactions)
    return {kind: sum(calls.get(c, 0) for c in names) / n
            for kind, names in KINDS.items()}, result
