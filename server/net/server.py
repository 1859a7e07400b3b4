"""The server: listens, keeps the registry of live connections, shuts down gracefully.

Per-connection state lives in ``ClientHandler``; what is shared lives here: the
Database, the TLS context, the process-id/secret registry that CancelRequest
looks up, and the set of connection tasks a shutdown waits for.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import logging
import os
import ssl
from typing import Any

from ..engine.policy import Policy
from ..config import ServerConfig
from .connection import ClientHandler
from ..engine.session import Database
from glove_scratchpad.wire import ErrorResponse, ServerConnection

__all__ = ["Server"]

log = logging.getLogger(__name__)

# ParameterStatus values that describe this server rather than the sidecar.
_OURS = {"is_superuser": "off", "in_hot_standby": "off", "client_encoding": "UTF8"}
_REPORTED = ("application_name", "client_encoding", "DateStyle",
             "default_transaction_read_only", "in_hot_standby", "integer_datetimes",
             "IntervalStyle", "is_superuser", "server_encoding", "server_version",
             "session_authorization", "standard_conforming_strings", "TimeZone")


class Server:
    """A PostgreSQL-protocol server over one Database."""

    def __init__(self, config: ServerConfig, db: Database) -> None:
        self.config = config
        self.db = db
        self.tls_context: ssl.SSLContext | None = None
        if config.tls_cert and config.tls_key:
            self.tls_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            self.tls_context.load_cert_chain(config.tls_cert, config.tls_key)
        self._server: asyncio.Server | None = None
        self._ids = itertools.count(os.getpid() % 100000 * 1000 + 1)
        self._keys: dict[tuple[int, bytes], ClientHandler] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._sidecar_parameters: dict[str, str] = {}
        self.port = config.port

    async def start(self) -> None:
        async with self.db.pool.acquire() as conn:
            self._sidecar_parameters = dict(conn.parameters)
        # Each role's view of the resources is built now, not at its first connection.
        for user in self.config.users.values():
            await self.db.view(Policy.of(user).visible(self.db.resources))
        self._server = await asyncio.get_running_loop().create_server(
            lambda: ClientHandler(self), self.config.host, self.config.port, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]

    def banner(self) -> str:
        c = self.config
        trust = ("no users are configured: any user name may connect from loopback"
                 " without a password")
        writes = "writes allowed" if c.writes else "read-only (start with --writes to allow writes)"
        names = ", ".join(sorted(self.db.resources)) or "none"
        return (
            f"glove-scratchpad serving database \"{c.database}\" on {c.host}:{self.port}\n"
            f"  resources: {names}\n"
            f"  {writes}; {trust}\n"
            f"  connect:  psql -h {c.host} -p {self.port} -d {c.database}\n"
        )

    async def serve_client(self, handler: ClientHandler) -> None:
        """The task of one client connection, from its first byte to its close."""
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            if len(self._tasks) > self.config.max_connections:
                with contextlib.suppress(Exception):
                    handler.write(ServerConnection().send(ErrorResponse({
                        "S": "FATAL", "V": "FATAL", "C": "53300",
                        "M": "sorry, too many clients already"})))
                handler.transport.close()  # type: ignore[union-attr]
                return
            await handler.serve()
        except asyncio.CancelledError:
            pass  # shutdown (or a client gone mid-statement) ended this connection
        finally:
            self._tasks.discard(task)

    # -- the registry ------------------------------------------------------------

    def next_process_id(self) -> int:
        return next(self._ids) & 0x7FFFFFFF

    def register(self, handler: ClientHandler) -> None:
        self._keys[(handler.process_id, handler.secret)] = handler

    def forget(self, handler: ClientHandler) -> None:
        self._keys.pop((handler.process_id, handler.secret), None)

    def cancel(self, process_id: int, secret: bytes) -> None:
        handler = self._keys.get((process_id, bytes(secret)))
        if handler is not None:
            handler.cancel()

    def trusts(self, peer: Any, user: str) -> bool:
        """Without configured users: loopback and Unix-socket peers only."""
        if not peer or not isinstance(peer, tuple):
            return True  # a Unix socket
        try:
            return ipaddress.ip_address(peer[0]).is_loopback
        except ValueError:
            return False

    def parameter_status(self, user: str, applied: dict[str, str], writes: bool
                         ) -> dict[str, str]:
        values = {k: v for k, v in self._sidecar_parameters.items() if k in _REPORTED}
        values.update(_OURS)
        values["session_authorization"] = user
        values["default_transaction_read_only"] = "off" if writes else "on"
        values.setdefault("application_name", "")
        values.update(applied)
        return values

    # -- shutdown ----------------------------------------------------------------

    async def shutdown(self) -> None:
        """Stop accepting, let running statements finish within the grace period, close."""
        if self._server is not None:
            self._server.close()
        deadline = self.config.shutdown_grace
        busy = [h for h in self._keys.values() if h.running]
        if busy:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(deadline):
                    while any(h.running for h in busy):
                        await asyncio.sleep(0.05)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1)
