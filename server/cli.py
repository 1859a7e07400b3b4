"""The command line: ``glove-scratchpad serve``, ``mcp``, ``passwd``, ``ping`` and
``approvals`` (``approvals_cli``).

``serve --workers N`` hands the process to the supervisor (``supervisor``), which
runs N of these servers on one port. ``ping`` is the container health check
(``health``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import gc
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import DEFAULT_PORT, ENV_PREFIX, ServerConfig, load_config
from .health import ping, ready
from .logs import say

if TYPE_CHECKING:
    from .console import ConsolePort
    from .supervisor import Worker

__all__ = ["configure_logging", "main", "ping", "run_loop", "serve", "worker_main"]

SUPERVISOR_POLL = 1.0  # seconds between a worker's looks at its supervisor
READY_WAIT = 3.0  # seconds /readyz waits for the server's answer
MCP_SIDECAR = "sidecar-mcp"  # the MCP mode's embedded sidecar, beside serve's "sidecar"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="glove-scratchpad",
        description="An agent's tools as tables of one virtual PostgreSQL database.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="serve resources over the PostgreSQL protocol")
    s.add_argument("--resources", nargs="+", metavar="MODULE_OR_FILE",
                   help="modules or .py files whose `resources` list is served "
                        "(default: the bundled demo set)")
    s.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--port", type=int, help=f"port to listen on (default {DEFAULT_PORT})")
    s.add_argument("--cancel-host", help="the address other servers of this name on this "
                   "database reach this one at, to hand it a client's cancel (default: "
                   "--host, or this machine's address when --host is every address)")
    s.add_argument("--database", help="the database name served (default scratchpad)")
    s.add_argument("--name", help="the server's name (default glove): its schemas in the "
                                  "sidecar; servers with one name share their tables")
    s.add_argument("--take-over", action="store_true", default=None,
                   help="replace the tables of running servers of this name that serve other "
                        "resources, instead of being refused")
    s.add_argument("--workers", type=int, help="server processes on one port (default 1)")
    s.add_argument("--writes", action="store_true", default=None,
                   help="allow INSERT, UPDATE and DELETE on resources")
    s.add_argument("--sidecar-dsn", help="use this Postgres as the sidecar instead of the "
                                         "embedded one")
    s.add_argument("--sidecar-dir", help="data directory of the embedded sidecar")
    s.add_argument("--metrics-port", type=int, help="serve /metrics, /healthz and /readyz on "
                   "this port (default: none)")
    s.add_argument("--metrics-host", help="address of the metrics port (default 127.0.0.1)")
    s.add_argument("--console-port", type=int, help="serve the operator's web console on "
                   "this port (default: none; 0 picks a free one)")
    s.add_argument("--console-host", help="address of the web console (default 127.0.0.1)")
    s.add_argument("--log-format", choices=("text", "json"),
                   help="text (default), or one JSON object per event, with one per "
                   "statement's end")
    s.add_argument("--slow-statement-s", type=float, metavar="SECONDS",
                   help="log statements that take at least this long (default: none)")
    s.add_argument("--otlp-endpoint", metavar="URL", help="send OpenTelemetry spans "
                   "there (OTLP/HTTP, …/v1/traces; needs glove-scratchpad[otel])")
    s.add_argument("--config", help="a TOML config file")
    s.add_argument("-v", "--verbose", action="store_true")
    m = sub.add_parser("mcp", help="serve execute_sql and explain_sql as MCP tools (stdio, "
                                   "or streamable HTTP with --http)")
    m.add_argument("--resources", nargs="+", metavar="MODULE_OR_FILE",
                   help="modules or .py files whose `resources` list is served "
                        "(default: the bundled demo set)")
    m.add_argument("--writes", action="store_true", default=None,
                   help="allow INSERT, UPDATE and DELETE on resources")
    m.add_argument("--sidecar-dsn", help="use this Postgres as the sidecar instead of the "
                                         "embedded one")
    m.add_argument("--sidecar-dir", help="data directory of the embedded sidecar (default: "
                   "one of its own, beside serve's, so both run at once)")
    m.add_argument("--http", action="store_true",
                   help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    m.add_argument("--host", default="127.0.0.1", help="HTTP address (default 127.0.0.1)")
    m.add_argument("--port", type=int, help="HTTP port (default 55433; 0 picks a free one)")
    m.add_argument("--allowed-host", action="append", metavar="HOST",
                   help="a Host header to answer over HTTP besides loopback's and --host's "
                        "(repeat it; mcp_allowed_hosts)")
    m.add_argument("--allowed-origin", action="append", metavar="ORIGIN",
                   help="an Origin header to answer besides the allowed hosts' (repeat it; "
                        "mcp_allowed_origins)")
    m.add_argument("--config", help="a TOML config file, as for serve: its [[mcp.servers]], "
                                    "resources, writes, sidecar, limits and [users.NAME], who "
                                    "sign in over HTTP (its [server] host and port are the "
                                    "Postgres listener's, and unused here)")
    m.add_argument("-v", "--verbose", action="store_true")
    pw = sub.add_parser("passwd", help="print a SCRAM-SHA-256 verifier for a password, for "
                                       "the password of a [users.NAME] table")
    pw.add_argument("password", nargs="?", help="the password (default: read from stdin)")
    pg = sub.add_parser("ping", help="exit 0 if a server answers on HOST:PORT (a health check)")
    pg.add_argument("--host", default=None, help="default: $GLOVE_SCRATCHPAD_HOST or 127.0.0.1 "
                                                 "(0.0.0.0 means this machine)")
    pg.add_argument("--port", type=int, default=None,
                    help=f"default: $GLOVE_SCRATCHPAD_PORT or {DEFAULT_PORT}")
    pg.add_argument("--ready", action="store_true",
                    help="ask the metrics port's /readyz instead (the sidecar answers, the "
                    "catalog is installed)")
    pg.add_argument("--metrics-port", type=int, default=None,
                    help="with --ready: the metrics port (default: "
                    "$GLOVE_SCRATCHPAD_METRICS_PORT)")
    pg.add_argument("--metrics-host", default=None,
                    help="with --ready: its address (default: $GLOVE_SCRATCHPAD_METRICS_HOST "
                    "or 127.0.0.1)")
    from .approvals_cli import add_parser

    add_parser(sub)
    return p


async def serve(config: ServerConfig, *, ready: asyncio.Event | None = None,
                worker: Worker | None = None,
                report: Callable[[tuple[str, str]], None] | None = None) -> None:
    """Run the server until SIGTERM or SIGINT, then shut down gracefully.

    ``worker``: this process is one of ``--workers``, on the supervisor's sidecar;
    ``report`` gets ("ready", banner) instead of the banner being printed.
    """
    from glove_scratchpad.resources.mcp import McpBridge
    from glove_scratchpad.resources.openapi import OpenApiBridge

    from .engine.database import Database
    from .loader import load_fns, load_resources, sources
    from .net.server import Server

    resources = load_resources(config.resources) if config.resources else None
    fns = load_fns(config.resources) if config.resources else None
    bridge = McpBridge(config.mcp_servers)
    apis = OpenApiBridge(config.openapi_apis, Path(config.config_dir or "."))
    if config.openapi_apis or config.mcp_servers:
        resources = await sources(resources, apis, bridge)
    sidecar = None
    if worker is not None:
        from glove_scratchpad.catalog import ExternalSidecar

        sidecar = ExternalSidecar(worker.sidecar_dsn, owned=worker.sidecar_owned)
    # SIGTERM at any time stops the server, and the sidecar it started with it: during
    # start-up, by cancelling it (what started is stopped on the way out).
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    starting = asyncio.current_task()

    def on_signal() -> None:
        if not stop.is_set() and starting is not None and not serving:
            starting.cancel()
        stop.set()

    serving = False
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, on_signal)
    db: Database | None = None
    port = None
    if config.otlp_endpoint:
        from glove_scratchpad import traces

        traces.enable(config.otlp_endpoint)
    if config.metrics_port is not None:
        if worker is None:  # a worker's metrics are served by its supervisor
            port = _operator_port(config, loop, lambda: db)
        else:
            from glove_scratchpad import metrics

            metrics.enable()
    try:
        db = await Database.create(resources, writes=config.writes,
                                   sidecar_dsn=config.sidecar_dsn, sidecar=sidecar,
                                   sidecar_dir=config.sidecar_dir, limits=config.limits(),
                                   fns=fns, name=config.name, take_over=config.take_over,
                                   approvals=config.approvals)
    except asyncio.CancelledError:
        await bridge.aclose()
        await apis.aclose()
        if port is not None:
            port.close()
        if stop.is_set():
            return  # stopped while starting
        raise
    except BaseException:
        await bridge.aclose()
        await apis.aclose()
        if port is not None:
            port.close()
        raise
    serving = True
    db.workers = config.workers
    server = Server(config, db, worker=worker.index if worker else 0,
                    relay_dir=worker.relay_dir if worker else None)
    console: ConsolePort | None = None
    try:
        try:
            await server.start()
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            from .supervisor import PortInUse

            raise PortInUse(config.host, config.port) from None
        # What start-up built (modules, the catalog, parse trees) lives as long as the
        # process: keep it out of every collection, which would otherwise scan it all.
        banner = server.banner()
        if config.console_port is not None and worker is None:
            from .console import ConsolePort

            console = ConsolePort(config, server.port)
            await console.start()
            banner += f"  console:  {console.url}\n"
        gc.collect()
        gc.freeze()
        if report is not None:
            report(("ready", banner))
        else:
            say(banner, "ready")
        orphaned = None
        if worker is not None and worker.supervisor:
            orphaned = asyncio.ensure_future(_watch_supervisor(worker.supervisor, stop))
        if ready is not None:
            ready.set()
        await stop.wait()
        if worker is None:
            say("shutting down", "shutting_down")
        if orphaned is not None:
            orphaned.cancel()
        if console is not None:  # its connections are the server's clients: first
            await console.close()
        await server.shutdown()
    finally:
        if console is not None:
            await console.close()
        if port is not None:
            port.close()
        await db.close()
        await bridge.aclose()
        await apis.aclose()


def _operator_port(config: ServerConfig, loop: asyncio.AbstractEventLoop,
                   database: Callable[[], Any]) -> Any:
    """The metrics and health port of a one-process server, started now: ready once the
    database is made and its sidecar answers."""
    from .net.operator import OperatorPort

    def not_ready() -> str | None:
        db = database()
        if db is None:
            return "starting"
        check = asyncio.run_coroutine_threadsafe(db.not_ready(), loop)
        return check.result(READY_WAIT)

    port = OperatorPort(config.metrics_host, config.metrics_port or 0, not_ready)
    port.start()
    return port


async def _watch_supervisor(pid: int, stop: asyncio.Event) -> None:
    """A worker stops when its supervisor is gone (it would otherwise keep the port)."""
    import os

    while os.getppid() == pid:
        await asyncio.sleep(SUPERVISOR_POLL)
    stop.set()


def run_loop(coro: Coroutine[Any, Any, Any]) -> None:
    try:
        import uvloop
    except ImportError:
        asyncio.run(coro)
        return
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(coro)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "passwd":
        from .net.auth import make_verifier

        password = args.password if args.password is not None else sys.stdin.readline()
        print(make_verifier(password.rstrip("\n")))
        return 0
    if args.command == "ping":
        if not args.ready and (args.metrics_port or args.metrics_host):
            print("glove-scratchpad: --metrics-port and --metrics-host are for ping --ready",
                  file=sys.stderr)
            return 2
        return ready(args.metrics_host, args.metrics_port) if args.ready else ping(
            args.host, args.port)
    if args.command == "approvals":
        from .approvals_cli import run

        return run(args)
    configure_logging(args.verbose)
    if args.command == "mcp":
        return _mcp(args)
    if args.command == "serve":
        try:
            config = load_config(
                args.config, host=args.host, port=args.port, cancel_host=args.cancel_host,
                database=args.database,
                writes=args.writes, sidecar_dsn=args.sidecar_dsn, sidecar_dir=args.sidecar_dir,
                resources=args.resources, name=args.name, take_over=args.take_over,
                workers=args.workers, metrics_port=args.metrics_port,
                metrics_host=args.metrics_host, log_format=args.log_format,
                console_port=args.console_port, console_host=args.console_host,
                slow_statement_s=args.slow_statement_s, otlp_endpoint=args.otlp_endpoint,
            )
        except (OSError, ValueError) as exc:
            import os

            # The format the command line or the environment asked for (the file's is
            # what could not be read).
            fmt = args.log_format or os.environ.get(ENV_PREFIX + "LOG_FORMAT", "text")
            configure_logging(args.verbose, "json" if fmt == "json" else "text")
            say(str(exc), "refused", error=True)
            return 2
        configure_logging(args.verbose, config.log_format)
        from glove_scratchpad.catalog import NameInUse, NotOurs, SidecarBusy

        try:
            if config.console_port is not None:
                from .console import check_console

                check_console(config)
            if config.workers > 1:
                from .supervisor import refuse_stateful, run_workers

                refuse_stateful(config)
                return run_workers(config, worker_main, verbose=args.verbose)
            run_loop(serve(config))
        except (SidecarBusy, NameInUse, NotOurs, PermissionError, ValueError) as exc:
            say(_said(exc), "refused", error=True)
            return 2
    return 0


def worker_main(config: dict, worker: Worker, report: Any, verbose: bool) -> None:
    """One process of ``--workers``: a server that reports its banner (or its failure)."""
    settings = ServerConfig.model_validate(config)
    configure_logging(verbose, settings.log_format)
    try:
        run_loop(serve(settings, worker=worker, report=report.send))
    except Exception as exc:  # told to the supervisor, which says it once
        with contextlib.suppress(OSError):
            report.send(("failed", f"{type(exc).__name__}: {exc}"))
        raise SystemExit(2) from None


def configure_logging(verbose: bool, fmt: str = "text") -> None:
    """The log on stderr: lines, or one JSON object per event (``logs.py``)."""
    from .logs import configure

    configure(verbose, fmt)


def _mcp(args: argparse.Namespace) -> int:
    """``glove-scratchpad mcp``: stdout is the protocol on stdio, so nothing else goes there."""
    from glove_scratchpad.catalog import SidecarBusy
    from glove_scratchpad.resources import ResourceDefinitionError
    from glove_scratchpad.resources.mcp import McpServerConfig
    from glove_scratchpad.resources.openapi import OpenApiBridge

    from .loader import load_fns, load_resources
    from .mcp_http import check_listen
    from .mcp_server import DEFAULT_MCP_PORT, serve_mcp

    try:
        config = load_config(args.config, writes=args.writes, sidecar_dsn=args.sidecar_dsn,
                             sidecar_dir=args.sidecar_dir, resources=args.resources,
                             mcp_allowed_hosts=args.allowed_host,
                             mcp_allowed_origins=args.allowed_origin)
        if args.http:  # before anything starts: who could reach it, and sign in how
            check_listen(args.host, config.users)
        # Checked here, so that a mistake is one line on stderr, not a traceback.
        mcp_servers = [McpServerConfig.model_validate(s) for s in config.mcp_servers]
        apis = OpenApiBridge(config.openapi_apis, Path(config.config_dir or "."))
        with contextlib.redirect_stdout(sys.stderr):  # a resources module that prints
            resources = load_resources(config.resources) if config.resources else None
            fns = load_fns(config.resources) if config.resources else None
    except (OSError, ValueError) as exc:
        print(f"glove-scratchpad: {exc}", file=sys.stderr)
        return 2
    port = DEFAULT_MCP_PORT if args.port is None else args.port
    sidecar_dir = config.sidecar_dir
    if sidecar_dir is None and config.sidecar_dsn is None:
        # An embedded sidecar of its own, beside serve's: the MCP mode starts next to a
        # running server (make run) instead of being refused its data directory.
        from glove_scratchpad.catalog import default_data_dir

        sidecar_dir = str(default_data_dir().with_name(MCP_SIDECAR))
    try:
        run_loop(serve_mcp(resources, writes=config.writes, sidecar_dsn=config.sidecar_dsn,
                       sidecar_dir=sidecar_dir, http=args.http, host=args.host, port=port,
                       mcp_servers=mcp_servers, apis=apis, fns=fns, limits=config.limits(),
                       users=config.users, allowed_hosts=config.mcp_allowed_hosts,
                       allowed_origins=config.mcp_allowed_origins,
                       approvals=config.approvals))
    except asyncio.CancelledError:  # SIGTERM or SIGINT on stdio
        return 0
    except Exception as exc:
        # The sidecar is another's, or an API's entry is a mistake (a local document
        # that cannot be read, a hand table naming nothing).
        found = _find(exc, SidecarBusy) or _find(exc, ResourceDefinitionError)
        if found is None:
            raise
        print(f"glove-scratchpad: {_said(found)}", file=sys.stderr)
        return 2
    return 0


def _said(exc: BaseException) -> str:
    """The error for the command line: a busy sidecar names the flags, not the
    Python arguments its message names."""
    from glove_scratchpad.catalog import SidecarBusy

    if isinstance(exc, SidecarBusy):
        return exc.advice("--sidecar-dir", "--sidecar-dsn")
    return str(exc)


def _find(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """``exc`` or the first exception of that kind inside an exception group."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _find(inner, kind)
            if found is not None:
                return found
    return None


if __name__ == "__main__":
    sys.exit(main())
