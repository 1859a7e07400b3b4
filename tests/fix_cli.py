"""``glove-scratchpad serve`` as a user starts it: a process of its own, read until its
banner, stopped with SIGTERM (and found to end cleanly) after the test."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import psutil
import pytest

SERVE = [sys.executable, "-m", "glove_scratchpad.server.cli", "serve"]


@dataclass
class Running:
    """A server process, and the lines it wrote so far."""

    proc: asyncio.subprocess.Process
    out: list[str] = field(default_factory=list)  # stdout: the banner
    log: list[str] = field(default_factory=list)  # stderr: the log

    @property
    def banner(self) -> str:
        return "".join(self.out)


async def _lines(stream: asyncio.StreamReader, into: list[str]) -> None:
    while line := await stream.readline():
        into.append(line.decode(errors="replace"))


@contextlib.asynccontextmanager
async def cli_server(*args: str, env: dict[str, str] | None = None,
                     started: float = 60) -> AsyncIterator[Running]:
    """``serve`` with ``args`` (``env`` over this process's), yielded once its banner's
    connect line is out. After the test, a server still running gets SIGTERM and must
    end with status 0; one that does not end is killed with what it started."""
    proc = await asyncio.create_subprocess_exec(
        *SERVE, *args, env={**os.environ, **(env or {})},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    running = Running(proc)
    readers = [asyncio.ensure_future(_lines(proc.stdout, running.out)),
               asyncio.ensure_future(_lines(proc.stderr, running.log))]
    try:
        async with asyncio.timeout(started):
            while "connect:" not in running.banner:
                if proc.returncode is not None:
                    pytest.fail("the server ended: " + "".join(running.log[-20:]))
                await asyncio.sleep(0.1)
        yield running
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            async with asyncio.timeout(30):
                assert await proc.wait() == 0, "".join(running.log[-20:])
    finally:
        if proc.returncode is None:
            with contextlib.suppress(psutil.Error):
                for child in psutil.Process(proc.pid).children(recursive=True):
                    child.kill()
            proc.kill()
            await proc.wait()
        for reader in readers:
            reader.cancel()
