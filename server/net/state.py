"""What the server shares with its connections: the one interface between them.

``Server`` (``server.py``) makes one ``ServerState`` and hands it to each
``ClientHandler`` (``connection.py``) it creates. A connection reaches the
server through this object alone, so the server imports the connection and
nothing imports the server.

Rules:
- The state holds the config, the Database, the TLS context, the parameters the
  sidecar reported, and the registry of live connections and their tasks.
- A connection is registered by its backend key (process id, secret) from the
  end of its start-up to its close. A CancelRequest must name both halves of
  the key, and it reaches no other connection.
- With ``--workers``, the low ``WORKER_BITS`` of a key's process id are the
  number of the worker that owns the connection: a CancelRequest accepted by
  another worker is handed to that one (``forward``), since every worker
  accepts on the same port.
- A connection's task is in ``tasks`` from its first byte to its close. The
  limit on connections counts these tasks, and a shutdown cancels them.
- This module imports no other module of ``net``.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import ssl
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..config import ServerConfig
    from ..engine.database import Database

__all__ = ["WORKER_BITS", "BackendKey", "Cancellable", "ServerState", "worker_of"]

BackendKey = tuple[int, bytes]  # (process id, secret), as BackendKeyData sends it
WORKER_BITS = 6  # the low bits of a backend key's process id: its worker (64 at most)
_WORKER_MASK = (1 << WORKER_BITS) - 1
Forward = Callable[[int, BackendKey], Awaitable[None]]  # (worker, key): hand a cancel over


def worker_of(process_id: int) -> int:
    """The worker that owns the connection a backend key's process id names."""
    return process_id & _WORKER_MASK


class Cancellable(Protocol):
    """What the registry needs of a connection."""

    @property
    def running(self) -> bool:
        """A statement is running: a cancel would stop it, and a shutdown waits for it."""
        ...

    def cancel(self) -> None:
        """Stop the running statement, if any; the connection goes on."""
        ...


def _process_ids() -> Iterator[int]:
    # Distinct across the servers of one host, so that a cancel reaches the right one.
    return itertools.count(os.getpid() % 10000 * 1000 + 1)


@dataclass(eq=False)
class ServerState:
    """The config, the Database, and the registry of live connections and tasks."""

    config: ServerConfig
    db: Database
    tls_context: ssl.SSLContext | None = None
    sidecar_parameters: dict[str, str] = field(default_factory=dict)
    connections: dict[BackendKey, Cancellable] = field(default_factory=dict)
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    process_ids: Iterator[int] = field(default_factory=_process_ids, repr=False)
    worker: int = 0  # this process's number among the workers
    forward: Forward | None = None  # hands a cancel to another worker (None: one process)

    def new_key(self, secret: bytes) -> BackendKey:
        return ((next(self.process_ids) << WORKER_BITS | self.worker) & 0x7FFFFFFF, secret)

    def register(self, key: BackendKey, connection: Cancellable) -> None:
        self.connections[key] = connection

    def forget(self, key: BackendKey) -> None:
        self.connections.pop(key, None)

    def cancel(self, key: BackendKey) -> None:
        """Route a CancelRequest to the connection whose key it names; else do nothing."""
        connection = self.connections.get((key[0], bytes(key[1])))
        if connection is not None:
            connection.cancel()

    async def route_cancel(self, key: BackendKey) -> None:
        """A CancelRequest as accepted: to this worker's connection, or to its worker's."""
        owner = worker_of(key[0])
        if self.forward is None or owner == self.worker:
            self.cancel(key)
        else:
            await self.forward(owner, key)

    def busy(self) -> list[Cancellable]:
        """The connections running a statement now."""
        return [c for c in self.connections.values() if c.running]
