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
- A connection's task is in ``tasks`` from its first byte to its close. The
  limit on connections counts these tasks, and a shutdown cancels them.
- This module imports no other module of ``net``.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import ssl
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..config import ServerConfig
    from ..engine.database import Database

__all__ = ["BackendKey", "Cancellable", "ServerState"]

BackendKey = tuple[int, bytes]  # (process id, secret), as BackendKeyData sends it


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
    return itertools.count(os.getpid() % 100000 * 1000 + 1)


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

    def new_key(self, secret: bytes) -> BackendKey:
        return (next(self.process_ids) & 0x7FFFFFFF, secret)

    def register(self, key: BackendKey, connection: Cancellable) -> None:
        self.connections[key] = connection

    def forget(self, key: BackendKey) -> None:
        self.connections.pop(key, None)

    def cancel(self, key: BackendKey) -> None:
        """Route a CancelRequest to the connection whose key it names; else do nothing."""
        connection = self.connections.get((key[0], bytes(key[1])))
        if connection is not None:
            connection.cancel()

    def busy(self) -> list[Cancellable]:
        """The connections running a statement now."""
        return [c for c in self.connections.values() if c.running]
