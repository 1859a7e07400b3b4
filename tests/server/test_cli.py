"""The command line: serve a resources file, connect, shut down on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import asyncpg
import pytest

from glove_scratchpad.catalog import SidecarBusy
from glove_scratchpad.server.engine.database import Database

RESOURCES = '''
from pydantic import BaseModel
from glove_scratchpad.resources import define_resource

class Greeting(BaseModel):
    name: str
    text: str

resources = [define_resource(
    "greeting", schema=Greeting, keys=["name"], volatility="immutable",
    select=lambda b: [Greeting(name=b.one("name"), text=f"hello {b.one('name')}")],
)]
'''


async def _start(tmp_path: Path, *extra: str) -> tuple[asyncio.subprocess.Process, int]:
    config = tmp_path / "server.toml"
    config.write_text("[server]\nstartup_timeout = 1.0\nshutdown_grace = 5.0\n")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "glove_scratchpad.server.cli", "serve", "--port", "0",
        "--sidecar-dir", str(tmp_path / "pgdata"), "--config", str(config), *extra,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    assert proc.stdout is not None
    port = None
    async with asyncio.timeout(60):
        while port is None:
            line = (await proc.stdout.readline()).decode()
            assert line, "server exited before printing its banner"
            if "connect:" in line:
                assert "psql -h 127.0.0.1 -p" in line and "-d scratchpad" in line
                port = int(line.split(" -p ")[1].split()[0])
    return proc, port


async def test_serve_a_resources_file_and_stop_on_sigterm(tmp_path):
    module = tmp_path / "greetings.py"
    module.write_text(RESOURCES)
    proc, port = await _start(tmp_path, "--resources", str(module))
    try:
        conn = await asyncpg.connect(f"postgresql://anyone@127.0.0.1:{port}/scratchpad")
        assert await conn.fetchval("SELECT text FROM greeting WHERE name = 'ann'") == "hello ann"
        tables = await conn.fetch("SELECT table_name FROM information_schema.tables "
                                  "WHERE table_schema = 'glove'")
        assert [r[0] for r in tables] == ["greeting"]  # exactly the file's resources
        with pytest.raises(asyncpg.InvalidCatalogNameError) as info:
            await asyncpg.connect(f"postgresql://anyone@127.0.0.1:{port}/other")
        assert "scratchpad" in info.value.hint
        # A second server on the same data directory is refused, clearly.
        second = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "glove_scratchpad.server.cli", "serve", "--port", "0",
            "--sidecar-dir", str(tmp_path / "pgdata"),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        out, _ = await asyncio.wait_for(second.communicate(), 60)
        assert second.returncode != 0
        assert b"in use by another glove-scratchpad process" in out
        assert b"its own --sidecar-dir or a --sidecar-dsn" in out
        # In Python, the advice names the arguments as Python spells them.
        with pytest.raises(SidecarBusy) as busy:
            await Database.create(None, sidecar_dir=tmp_path / "pgdata")
        assert "its own sidecar_dir= or a sidecar_dsn=" in str(busy.value)
        assert "--sidecar" not in str(busy.value)
        # The start-up timeout closes a client that says nothing.
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        assert await asyncio.wait_for(reader.read(), 5) == b""
        writer.close()
        await conn.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 30)
    assert proc.returncode == 0
    postmaster = tmp_path / "pgdata" / "postmaster.pid"
    assert not postmaster.exists()  # the embedded sidecar was stopped


async def test_sigterm_lets_a_running_statement_finish(tmp_path):
    module = tmp_path / "slowres.py"
    module.write_text(
        "import asyncio\n"
        "from glove_scratchpad.resources import define_resource\n"
        "async def nap(b):\n"
        "    await asyncio.sleep(1.0)\n"
        "    return [{'n': 1}]\n"
        "resources = [define_resource('nap', columns=[('n', 'bigint')], volatility='volatile',"
        " select=nap)]\n")
    proc, port = await _start(tmp_path, "--resources", str(module))
    conn = await asyncpg.connect(f"postgresql://anyone@127.0.0.1:{port}/scratchpad")
    query = asyncio.ensure_future(conn.fetchval("SELECT n FROM nap"))
    await asyncio.sleep(0.3)
    os.kill(proc.pid, signal.SIGTERM)
    assert await asyncio.wait_for(query, 10) == 1
    await asyncio.wait_for(proc.wait(), 30)
    assert proc.returncode == 0
    with pytest.raises(OSError):
        await asyncpg.connect(f"postgresql://anyone@127.0.0.1:{port}/scratchpad", timeout=2)


async def test_serve_mcp_servers_named_in_the_config(tmp_path):
    config = tmp_path / "server.toml"
    config.write_text(
        "[server]\nstartup_timeout = 5.0\n\n"
        "[[mcp.servers]]\n"
        'namespace = "time"\n'
        f"command = {sys.executable!r}\n"
        'args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]\n\n'
        "[[mcp.servers]]\n"
        'namespace = "down"\n'
        'command = "/nonexistent/mcp-server"\n'
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "glove_scratchpad.server.cli", "serve", "--port", "0",
        "--sidecar-dir", str(tmp_path / "pgdata"), "--config", str(config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    assert proc.stdout is not None
    port = None
    async with asyncio.timeout(90):
        while port is None:
            line = (await proc.stdout.readline()).decode()
            assert line, "server exited before printing its banner"
            if "connect:" in line:
                port = int(line.split(" -p ")[1].split()[0])
    try:
        conn = await asyncpg.connect(f"postgresql://anyone@127.0.0.1:{port}/scratchpad")
        day = await conn.fetchval(
            "SELECT day_of_week FROM time_get_current_time WHERE timezone = 'UTC'")
        assert day in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
                       "Sunday")
        tables = {r[0] for r in await conn.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'glove'")}
        assert "time_get_current_time" in tables and "tasks" not in tables
        assert not any(t.startswith("down_") for t in tables)  # the down server fails alone
        await conn.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 30)
    assert proc.returncode == 0
