"""The server: listens, owns the registry of live connections, shuts down gracefully.

Per-connection state lives in ``ClientHandler`` (``connection``). What the
connections share lives in one ``ServerState`` (``state``), which the server
makes and hands to each of them: the Database, the TLS context, the backend-key
registry that CancelRequest looks up, and the set of connection tasks a shutdown
waits for. A connection never sees the ``Server`` itself.

Rules:
- Each role's view of the resources is built before the first connection.
- The banner says how the server is reached and who may connect, in the words of
  the policy that start-up enforces (``startup.describe_auth``).
- With ``--workers``, each worker is one Server on the shared port
  (SO_REUSEPORT), with its own end of the cancel relay (``relay``).
- Once listening, a server advertises where it takes CancelRequests, and hands
  those for the other servers of its name to them (``peers``).
- A shutdown stops accepting at once. It gives running statements up to
  ``shutdown_grace`` seconds, then cancels every connection's task and waits
  for them all.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from typing import TYPE_CHECKING

from ..config import ANY_ADDRESS
from ..engine.policy import Policy
from . import peers, relay
from .connection import ClientHandler
from .startup import describe_auth
from .state import ServerState

if TYPE_CHECKING:
    from ..config import ServerConfig
    from ..engine.database import Database

__all__ = ["Server"]

log = logging.getLogger(__name__)

BUSY_POLL = 0.05  # seconds between looks at running statements during a shutdown's grace


def connect_line(config: ServerConfig, host: str, port: int) -> str:
    """A psql command that connects as the server requires: its first user (when it has
    users) and TLS (when it requires it)."""
    user = sorted(config.users)[0] if config.users else None
    if config.require_tls:
        who = f" user={user}" if user else ""
        return (f'psql "host={host} port={port} dbname={config.database}{who} '
                'sslmode=require"')
    return f"psql -h {host} -p {port} -d {config.database}" + (f" -U {user}" if user else "")


class Server:
    """A PostgreSQL-protocol server over one Database."""

    def __init__(self, config: ServerConfig, db: Database, *, worker: int = 0,
                 relay_dir: str | None = None) -> None:
        """``worker``/``relay_dir``: this process's number among ``config.workers``, and
        the directory of the workers' relay sockets."""
        self.config = config
        self.db = db
        tls: ssl.SSLContext | None = None
        if config.tls_cert and config.tls_key:
            tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            tls.load_cert_chain(config.tls_cert, config.tls_key)
        self.state = ServerState(config, db, tls, worker=worker)
        self._relay_dir = relay_dir
        if relay_dir is not None:
            self.state.forward = relay.forwarder(relay_dir, worker)
        self._relay: asyncio.AbstractServer | None = None
        self._server: asyncio.Server | None = None
        self.port = config.port

    async def start(self) -> None:
        async with self.db.pool.acquire() as conn:
            self.state.sidecar_parameters = dict(conn.parameters)
        # Each role's view of the resources is built now, not at its first connection.
        for user in self.config.users.values():
            await self.db.view(Policy.of(user).visible(self.db.resources))
        state = self.state
        if self._relay_dir is not None:
            self._relay = await relay.listen(self._relay_dir, state)
        self._server = await asyncio.get_running_loop().create_server(
            lambda: ClientHandler(state), self.config.host, self.config.port, backlog=1024,
            reuse_port=self.config.workers > 1 or None)
        self.port = self._server.sockets[0].getsockname()[1]
        await peers.advertise(state, self.db.catalog, peers.cancel_address(
            self.config.host, self.config.cancel_host, self.port))

    def banner(self) -> str:
        c = self.config
        writes = "writes allowed" if c.writes else "read-only (start with --writes to allow writes)"
        names = ", ".join(sorted(self.db.resources)) or "none"
        workers = f" ({c.workers} workers)" if c.workers > 1 else ""
        shared = ("  workers share the sidecar and nothing else: what a resolver keeps in "
                  "memory is each worker's own\n" if c.workers > 1 else "")
        host = c.host
        if host in ANY_ADDRESS:  # listening everywhere: a client names this machine
            host = "localhost"
            reach = " (listening on every address: from elsewhere, use this machine's)"
        else:
            reach = ""
        metrics = (f"  metrics:  http://{c.metrics_host}:{c.metrics_port}/metrics "
                   "(and /healthz, /readyz)\n" if c.metrics_port is not None else "")
        return (
            f"glove-scratchpad \"{c.name}\" serving database \"{c.database}\" on "
            f"{c.host or '*'}:{self.port}{workers}\n"
            f"  resources: {names}\n"
            f"  {writes}\n"
            f"  {describe_auth(c)}\n"
            f"{shared}{metrics}"
            f"  connect:  {connect_line(c, host, self.port)}{reach}\n"
        )

    async def shutdown(self) -> None:
        """Stop accepting, let running statements finish within the grace period, close."""
        if self._server is not None:
            self._server.close()
        await peers.withdraw(self.state, self.db.catalog)
        if self._relay is not None:
            self._relay.close()
        busy = self.state.busy()
        if busy:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.config.shutdown_grace):
                    while any(c.running for c in busy):
                        await asyncio.sleep(BUSY_POLL)
        tasks = self.state.tasks
        for task in list(tasks):
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1)
