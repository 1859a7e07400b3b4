"""``--workers 2``: two processes on one port; a CancelRequest cancels a running
statement whichever worker accepts it; SIGTERM stops every worker."""

from __future__ import annotations

import asyncio
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import psutil
import psycopg
import pytest

from glove_scratchpad.server.net.state import worker_of

from ..fix_cli import Running, cli_server
from .conftest import new_host

FIXTURE = str(Path(__file__).with_name("fix_resources.py"))


async def test_a_cancel_reaches_the_owner_whichever_worker_accepts_it():
    host = new_host()
    data = tempfile.mkdtemp(prefix="gsw-")  # short: the sidecar's socket path is in it
    try:
        async with cli_server("--workers", "2", "--host", host, "--port", "55432",
                              "--resources", FIXTURE, "--sidecar-dir", f"{data}/pg"
                              ) as running:
            await _cancels_reach_their_owner(running, host)
    finally:
        shutil.rmtree(data, ignore_errors=True)


async def _cancels_reach_their_owner(running: Running, host: str) -> None:
    proc, log = running.proc, running.log
    banner = running.banner
    assert "(2 workers)" in banner
    assert ("workers share the sidecar and nothing else: what a resolver keeps in memory "
            "is each worker's own") in banner
    workers = [p for p in psutil.Process(proc.pid).children()
               if "multiprocessing.spawn" in " ".join(p.cmdline())
               and "resource_tracker" not in " ".join(p.cmdline())]
    assert len(workers) == 2
    url = f"postgresql://agent@{host}:55432/scratchpad"
    seen: dict[str, int] = {"direct": 0, "handed over": 0}
    owners: set[int] = set()
    async with asyncio.timeout(90):
        for _ in range(40):
            async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
                owners.add(worker_of(conn.info.backend_pid))
                before = sum("handing it over" in line for line in log)
                running_read = asyncio.ensure_future(conn.execute("SELECT * FROM slow"))
                await asyncio.sleep(0.2)
                # A cancel that arrives before the statement runs cancels nothing
                # (as in Postgres): under load, send it again.
                while not running_read.done():
                    await conn.cancel_safe()
                    await asyncio.wait([running_read], timeout=2)
                with pytest.raises(psycopg.errors.QueryCanceled):
                    await running_read
                await asyncio.sleep(0.05)  # the log line of a relay, if any
                relayed = sum("handing it over" in line for line in log) > before
                seen["handed over" if relayed else "direct"] += 1
                assert (await (await conn.execute("SELECT 1")).fetchone()) == (1,)
                plan = [r[0] for r in await (await conn.execute(
                    "EXPLAIN SELECT * FROM notes")).fetchall()]
                assert any(line.startswith("Workers: this server is 2 processes "
                                           "sharing only the sidecar") for line in plan)
            if min(seen.values()) >= 2 and owners == {0, 1}:
                break
    assert owners == {0, 1}, seen  # the kernel spread the connections over both
    assert min(seen.values()) >= 2, seen  # cancels accepted by the owner and by the other
    proc.send_signal(signal.SIGTERM)
    async with asyncio.timeout(30):
        assert await proc.wait() == 0
    assert not any(w.is_running() and w.status() != psutil.STATUS_ZOMBIE for w in workers)


async def test_workers_refuse_a_resource_that_keeps_its_data_in_memory():
    """The demo's tasks and emails keep their rows in the process: two workers would each
    keep a copy, so the server does not start, and says why, before anything runs."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "glove_scratchpad.server.cli", "serve", "--workers", "2",
        "--port", "0", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    async with asyncio.timeout(60):
        out, err = await proc.communicate()
    assert proc.returncode == 2
    assert out == b""
    message = err.decode()
    assert message.startswith('glove-scratchpad: resources "tasks", "emails" keep their data '
                              "in the server process's memory (stateful=True): with "
                              "--workers 2 each worker would keep a copy of its own"), message
    assert "Traceback" not in message


async def test_workers_judge_only_the_resources_served(tmp_path):
    """A config that serves only an API's tables has none of the demo's stateful ones:
    two workers start."""
    zoo = Path(__file__).parents[1] / "openapi" / "zoo" / "swagger.yaml"
    config = tmp_path / "glove.toml"
    config.write_text(f'[[openapi.apis]]\nnamespace = "zoo"\nspec = "{zoo}"\n')
    data = tempfile.mkdtemp(prefix="gsw-")
    try:
        async with cli_server("--workers", "2", "--port", "0", "--config", str(config),
                              "--sidecar-dir", f"{data}/pg") as running:
            assert "(2 workers)" in running.banner
            assert not any("stateful" in line for line in running.log)
    finally:
        shutil.rmtree(data, ignore_errors=True)
