"""The start-up banner tells the truth about who may connect."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from types import SimpleNamespace

import asyncpg
import pytest

from glove_scratchpad.server.config import ServerConfig
from glove_scratchpad.server.net.auth import User, make_verifier
from glove_scratchpad.server.net.server import Server


def _banner(**config: object) -> str:
    # The banner reads the config and the resources' names, nothing else.
    return Server(ServerConfig(port=0, **config), SimpleNamespace(resources={})).banner()  # type: ignore[arg-type]


def test_without_users_only_loopback_is_trusted():
    banner = _banner()
    assert "no users configured: any user name may connect from loopback" in banner
    assert "users: " not in banner


def test_with_users_it_says_how_many_sign_in_and_how():
    users = {name: User(password=make_verifier("pw")) for name in ("a", "b")}
    banner = _banner(users=users, require_tls=True)
    assert "users: 2 configured; each signs in with its password (SCRAM-SHA-256)" in banner
    assert "TLS required" in banner and "no users" not in banner


async def test_serve_with_a_users_table_prints_it_and_enforces_it(tmp_path: Path):
    config = tmp_path / "server.toml"
    config.write_text(
        "[server]\nstartup_timeout = 2.0\nshutdown_grace = 5.0\n\n"
        f'[users.ann]\npassword = "{make_verifier("s3cret")}"\n\n'
        f'[users.bob]\npassword = "{make_verifier("hunter2")}"\n')
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "glove_scratchpad.server.cli", "serve", "--port", "0",
        "--sidecar-dir", str(tmp_path / "pgdata"), "--config", str(config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        async with asyncio.timeout(60):
            while not lines or "connect:" not in lines[-1]:
                line = (await proc.stdout.readline()).decode()
                assert line, "server exited before its banner:\n" + "".join(lines)
                lines.append(line)
        banner = "".join(lines)
        assert "  users: 2 configured; each signs in with its password (SCRAM-SHA-256)" in banner
        assert "no users" not in banner
        port = int(lines[-1].split(" -p ")[1].split()[0])
        # What it says is what start-up enforces: a password, even from loopback.
        with pytest.raises(asyncpg.InvalidPasswordError):
            await asyncpg.connect(f"postgresql://ann:wrong@127.0.0.1:{port}/scratchpad")
        conn = await asyncpg.connect(f"postgresql://ann:s3cret@127.0.0.1:{port}/scratchpad")
        assert await conn.fetchval("SELECT 1") == 1
        await conn.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 30)
    assert proc.returncode == 0
