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
- A key's process id is, from its high bits down: the low ``INSTANCE_BITS`` of
  the owning server's instance number (``Catalog.instance``), a count, and
  ``WORKER_BITS`` for its worker. It stays a positive 31-bit number.
- With ``--workers``, a CancelRequest accepted by a worker that does not own the
  connection is handed to the owner (``forward``), since every worker accepts on
  the same port.
- Servers of one name on one database (behind a balancer) hand a CancelRequest
  for another one's key to it (``peers``, at the address it advertised). A
  handed-over key has its process id's sign bit set, which no client key has:
  its receiver routes it among its own workers only, so a cancel crosses at most
  one server and never loops.
- A connection's task is in ``tasks`` from its first byte to its close. The
  limit on connections counts these tasks, and a shutdown cancels them.
- This module imports no other module of ``net`` but ``slots``.
"""

from __future__ import annotations

import asyncio
import itertools
import ssl
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from glove_scratchpad.stream import Budget

from .slots import Slots

if TYPE_CHECKING:
    from ..config import ServerConfig
    from ..engine.database import Database

__all__ = ["HANDED_OVER", "INSTANCE_BITS", "WORKER_BITS", "BackendKey", "Cancellable", "Peers",
           "ServerState", "instance_of", "worker_of"]

BackendKey = tuple[int, bytes]  # (process id, secret), as BackendKeyData sends it
WORKER_BITS = 6  # the low bits of a backend key's process id: its worker (64 at most)
COUNT_BITS = 13  # then a count of the worker's connections, wrapping
INSTANCE_BITS = 31 - COUNT_BITS - WORKER_BITS  # then the owning server's instance number
HANDED_OVER = 1 << 31  # subtracted from a key's process id handed over to another server
_WORKER_MASK = (1 << WORKER_BITS) - 1
Forward = Callable[[int, BackendKey], Awaitable[None]]  # (worker, key): hand a cancel over
Peers = Callable[[BackendKey], Awaitable[None]]  # hand a cancel to the server that owns it


def worker_of(process_id: int) -> int:
    """The worker that owns the connection a backend key's process id names."""
    return process_id & _WORKER_MASK


def instance_of(process_id: int) -> int:
    """The low ``INSTANCE_BITS`` of the instance number of the server that owns it."""
    return process_id >> (COUNT_BITS + WORKER_BITS)


class Cancellable(Protocol):
    """What the registry needs of a connection."""

    @property
    def running(self) -> bool:
        """A statement is running: a cancel would stop it, and a shutdown waits for it."""
        ...

    def cancel(self) -> None:
        """Stop the running statement, if any; the connection goes on."""
        ...


def _counts() -> Iterator[int]:
    return itertools.cycle(range(1, 1 << COUNT_BITS))


@dataclass(eq=False)
class ServerState:
    """The config, the Database, and the registry of live connections and tasks."""

    config: ServerConfig
    db: Database
    tls_context: ssl.SSLContext | None = None
    sidecar_parameters: dict[str, str] = field(default_factory=dict)
    connections: dict[BackendKey, Cancellable] = field(default_factory=dict)
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    counts: Iterator[int] = field(default_factory=_counts, repr=False)
    worker: int = 0  # this process's number among the workers
    forward: Forward | None = None  # hands a cancel to another worker (None: one process)
    peers: Peers | None = None  # hands a cancel to another server of the name
    slots: Slots = field(init=False)  # start-up and session slots, from the config
    pending: Budget = field(init=False)  # bytes of messages half received, server-wide

    def __post_init__(self) -> None:
        c = self.config
        self.slots = Slots(c.max_startup_connections, c.max_startup_per_address,
                           c.max_connections, c.reserved_connections)
        self.pending = Budget(c.max_pending_bytes)

    @property
    def instance(self) -> int:
        """This server's instance number among those of its name, as keys carry it."""
        return self.db.catalog.instance % (1 << INSTANCE_BITS)

    def new_key(self, secret: bytes) -> BackendKey:
        instance = self.instance
        count = next(self.counts)
        return (instance << (COUNT_BITS + WORKER_BITS) | count << WORKER_BITS | self.worker,
                secret)

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
        """A CancelRequest as accepted: to the server that owns its key (``peers``), else
        to this worker's connection or to its worker's."""
        process_id, secret = key
        if process_id < 0:  # handed over by another server: never on
            key = (process_id + HANDED_OVER, secret)
        elif self.peers is not None and instance_of(process_id) != self.instance:
            await self.peers(key)
            return
        await self.route_to_worker(key)

    async def route_to_worker(self, key: BackendKey) -> None:
        """A cancel for this server: to this worker's connection, or to its worker's."""
        owner = worker_of(key[0])
        if self.forward is None or owner == self.worker:
            self.cancel(key)
        else:
            await self.forward(owner, key)

    def busy(self) -> list[Cancellable]:
        """The connections running a statement now."""
        return [c for c in self.connections.values() if c.running]
