"""``--workers N``: N server processes on one port, sharing one sidecar.

The supervisor starts the sidecar (the embedded one, unless a DSN names one),
reserves the port, and starts N workers. Each worker is a whole server
(``cli.serve``): its own Database over the shared sidecar, listening on the
same port with SO_REUSEPORT, so the kernel spreads connections over them.

Rules:
- Workers share the server's name and resources, so they share its shell
  tables; the first to start builds them, the others find them built.
- A worker's number is in every backend key it hands out (``net.state``); a
  CancelRequest accepted by another worker is relayed to it (``net.relay``),
  over Unix sockets in a directory the supervisor makes and removes.
- The supervisor keeps the embedded sidecar alive: a postmaster that dies is
  restarted (``EmbeddedSidecar.restart_blocking``) by a thread that watches it;
  the workers reconnect by themselves, with backoff.
- Workers share nothing but the sidecar: what a resolver keeps in its process's
  memory, and the in-memory caches, are each worker's own. A resource that says it
  keeps its data in memory (``stateful=True``) is refused before any worker starts.
- The banner is printed once, when every worker is ready.
- SIGTERM or SIGINT to the supervisor is SIGTERM to every worker, each of which
  shuts down gracefully; one that has not ended after its grace is killed. A
  worker that dies stops the others too: the supervisor exits with its status.
  A worker whose supervisor is gone (killed) stops by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import socket
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from glove_scratchpad import metrics

from .config import ServerConfig
from .logs import say

__all__ = ["PortInUse", "Worker", "refuse_stateful", "run_workers"]

log = logging.getLogger(__name__)

KILL_AFTER = 5.0  # seconds past the shutdown grace before a worker is killed
READY_TIMEOUT = 300.0  # seconds for every worker to start (install, MCP servers)
SIDECAR_POLL = 0.25  # seconds between checks that the embedded sidecar's postmaster lives


@dataclass(frozen=True, slots=True)
class Worker:
    """What a worker process is told: its number, the relay, and the sidecar."""

    index: int
    relay_dir: str
    sidecar_dsn: str
    sidecar_owned: bool  # the embedded sidecar, started by the supervisor
    supervisor: int = 0  # its process id: a worker whose supervisor is gone stops


def refuse_stateful(config: ServerConfig) -> None:
    """ValueError when a resource to serve keeps its data in its process's memory: each
    worker would hold a copy of its own, and clients would see different data."""
    from glove_scratchpad.resources.demo import resources as demo

    from .loader import load_resources

    # Without --resources, a config of APIs or MCP servers serves those alone, not the demo.
    served = (load_resources(config.resources) if config.resources
              else [] if config.openapi_apis or config.mcp_servers else demo)
    stateful = [r.name for r in served if r.stateful]
    if stateful:
        names = ", ".join(f'"{n}"' for n in stateful)
        which = f"resource {names} keeps" if len(stateful) == 1 else f"resources {names} keep"
        raise ValueError(
            f"{which} their data in the server process's memory (stateful=True): with --workers "
            f"{config.workers} each worker would keep a copy of its own, and clients would "
            "see different data. Serve them with --workers 1, or keep their data outside "
            "the process (a database, a file, an API) and drop stateful=True.")


class PortInUse(ValueError):
    """The port to listen on is another process's: one line that says what to do."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(f"{host}:{port} is in use by another process: stop it, or give "
                         "this server another --port (0 picks a free one)")


async def _start_sidecar(config: ServerConfig) -> tuple[Any, str, bool]:
    """(the sidecar to stop at the end or None, its DSN, whether the cluster is ours)."""
    if config.sidecar_dsn:
        return None, config.sidecar_dsn, False
    from glove_scratchpad.catalog import Catalog, EmbeddedSidecar

    sidecar = EmbeddedSidecar(config.sidecar_dir)
    catalog = await Catalog.open(sidecar, owns_sidecar=False)  # creates its database
    await catalog.close()
    return sidecar, sidecar.dsn, True


def _keep_sidecar(sidecar: Any, stopping: threading.Event) -> None:
    """Restart the embedded sidecar whenever its postmaster dies, until ``stopping``."""
    while not stopping.wait(SIDECAR_POLL):
        if not sidecar.alive():
            try:
                sidecar.restart_blocking()
            except Exception:
                log.exception("could not restart the sidecar; trying again")


def _reserve_port(host: str, port: int) -> socket.socket:
    """A bound, not listening, SO_REUSEPORT socket: the port the workers will share."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    # SO_REUSEADDR as the workers' own listening sockets have it: a port whose last
    # connections are in TIME-WAIT can be bound again at once.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host or "0.0.0.0", port))
    return sock


def run_workers(config: ServerConfig, target: Callable[..., None], *,
                verbose: bool = False) -> int:
    """Run ``config.workers`` workers until SIGTERM or SIGINT; the exit status.

    ``target(config, worker, report, verbose)`` runs in each worker process (a
    module-level function: spawned processes import it); ``report.send`` takes
    ("ready", banner) or ("failed", message).
    """
    try:  # first: a port in use is one line, before a sidecar is started for nothing
        reserved = _reserve_port(config.host, config.port)
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        raise PortInUse(config.host, config.port) from None
    sidecar, dsn, owned = asyncio.run(_start_sidecar(config))
    relay_dir = tempfile.mkdtemp(prefix="glove-scratchpad-workers-")
    ready = threading.Event()  # every worker started
    operator = None
    if config.metrics_port is not None:
        # Every worker writes its metrics here; the supervisor's port reads them all.
        os.environ[metrics.MULTIPROCESS_ENV] = os.path.join(relay_dir, "metrics")
        os.mkdir(os.environ[metrics.MULTIPROCESS_ENV])
        operator = _operator_port(config, sidecar, dsn, ready)
    port = reserved.getsockname()[1]
    cfg = config.model_copy(update={"port": port}).model_dump()
    ctx = multiprocessing.get_context("spawn")
    procs: list[Any] = []
    reports: list[Any] = []
    stop_r, stop_w = socket.socketpair()

    def on_signal(signum: int, _frame: object) -> None:
        with contextlib.suppress(OSError):
            stop_w.send(b"x")

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    status = 0
    stopping = threading.Event()
    keeper = None
    if sidecar is not None:
        keeper = threading.Thread(target=_keep_sidecar, args=(sidecar, stopping),
                                  name="glove-scratchpad-sidecar", daemon=True)
        keeper.start()
    try:
        for i in range(config.workers):
            ours, theirs = ctx.Pipe(duplex=False)
            worker = Worker(i, relay_dir, dsn, owned, os.getpid())
            proc = ctx.Process(target=target, args=(cfg, worker, theirs, verbose),
                               name=f"glove-scratchpad-worker-{i}")
            proc.start()
            theirs.close()
            procs.append(proc)
            reports.append(ours)
        status = _supervise(procs, reports, stop_r, config, ready)
    finally:
        reserved.close()
        _stop_all(procs, config.shutdown_grace + KILL_AFTER)
        if operator is not None:
            operator.close()
            os.environ.pop(metrics.MULTIPROCESS_ENV, None)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        shutil.rmtree(relay_dir, ignore_errors=True)
        stopping.set()
        if keeper is not None:
            keeper.join()
        if sidecar is not None:
            asyncio.run(sidecar.stop())
    return status


def _operator_port(config: ServerConfig, sidecar: Any, dsn: str,
                   started: threading.Event) -> Any:
    """The workers' metrics and health port, served by the supervisor: ready once every
    worker has started, while the sidecar answers."""
    from .net.operator import OperatorPort

    def not_ready() -> str | None:
        if not started.is_set():
            return "the workers are starting"
        if sidecar is not None:
            return None if sidecar.alive() else "the sidecar's postmaster is not running"
        return asyncio.run(_answers(dsn))

    port = OperatorPort(config.metrics_host, config.metrics_port or 0, not_ready)
    port.start()
    return port


async def _answers(dsn: str) -> str | None:
    """None when the Postgres at ``dsn`` answers a statement, else why not."""
    import asyncpg

    try:
        conn = await asyncpg.connect(dsn, timeout=2)
        try:
            await conn.fetchval("SELECT 1", timeout=2)
        finally:
            await conn.close()
    except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
        return f"the sidecar does not answer ({type(exc).__name__})"
    return None


def _supervise(procs: list[Any], reports: list[Any], stop: socket.socket,
               config: ServerConfig, started: threading.Event) -> int:
    """Wait for every worker's banner, print it, then wait for a signal or a death."""
    pending = dict(enumerate(reports))
    banner = ""
    loop_deadline = READY_TIMEOUT
    waiting = [*pending.values(), stop, *(p.sentinel for p in procs)]
    while pending:
        ready = multiprocessing.connection.wait(waiting, timeout=loop_deadline)
        if not ready:
            say("the workers did not start in time", "refused", error=True)
            return 1
        for item in ready:
            if item is stop:
                return 0
            index = next((i for i, r in pending.items() if r is item), None)
            if index is None:  # a worker ended before it was ready
                return _died(procs)
            try:
                kind, text = pending[index].recv()  # the report that is ready
            except EOFError:
                waiting.remove(item)
                del pending[index]
                return _died(procs)
            if kind == "failed":
                say(text, "refused", error=True)
                return 2
            banner = banner or text
            waiting.remove(item)
            del pending[index]
    say(banner, "ready")
    started.set()
    ended = multiprocessing.connection.wait([stop, *(p.sentinel for p in procs)])
    if stop in ended:
        say("shutting down", "shutting_down")
        return 0
    return _died(procs)


def _died(procs: list[Any]) -> int:
    dead = [p for p in procs if p.exitcode is not None]
    for p in dead:
        log.error("worker %s ended with status %s: stopping the others", p.name, p.exitcode)
    return next((p.exitcode for p in dead if p.exitcode), 1) or 1


def _stop_all(procs: list[Any], patience: float) -> None:
    for p in procs:
        if p.is_alive() and p.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGTERM)
    for p in procs:
        p.join(patience)
        if p.is_alive():
            log.warning("worker %s did not stop in time: killing it", p.name)
            p.kill()
            p.join(5)
        if p.pid is not None:
            metrics.process_ended(p.pid)
