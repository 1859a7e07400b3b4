"""The cancel relay between the workers of one server (``--workers``).

Every worker accepts on the same port, so a CancelRequest may reach a worker
that does not own the connection it names. That worker hands the key to the
owner over the owner's Unix socket in the workers' directory.

Rules:
- A relayed cancel is the backend key alone: ``RELAYED`` (process id, secret).
- The owner routes it exactly as it would a CancelRequest it accepted itself:
  a key it does not know cancels nothing.
- A cancel that cannot be handed over is logged, never raised: a client never
  hears about a cancel anyway.
"""

from __future__ import annotations

import asyncio
import logging
import os
import struct
from collections.abc import Callable, Coroutine
from typing import Any

from .state import BackendKey, ServerState

__all__ = ["RELAYED", "forwarder", "listen", "socket_path"]

log = logging.getLogger(__name__)

RELAYED = struct.Struct("!I4s")  # a backend key: process id, secret
RELAY_TIMEOUT = 2.0  # seconds to hand a cancel to another worker


def socket_path(directory: str, worker: int) -> str:
    return os.path.join(directory, f"worker-{worker}.sock")


async def listen(directory: str, state: ServerState) -> asyncio.AbstractServer:
    """This worker's end of the relay: cancels handed over by the others."""

    async def receive(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            data = await asyncio.wait_for(reader.readexactly(RELAYED.size), RELAY_TIMEOUT)
        except (asyncio.IncompleteReadError, TimeoutError, OSError):
            return
        finally:
            writer.close()
        process_id, secret = RELAYED.unpack(data)
        log.info("cancel request for worker %d handed over to it", state.worker)
        state.cancel((process_id, secret))

    path = socket_path(directory, state.worker)
    if os.path.exists(path):
        os.unlink(path)
    return await asyncio.start_unix_server(receive, path)


def forwarder(directory: str, worker: int
              ) -> Callable[[int, BackendKey], Coroutine[Any, Any, None]]:
    """The ``ServerState.forward`` of worker ``worker``: hand a key to its owner."""

    async def forward(owner: int, key: BackendKey) -> None:
        log.info("cancel request for worker %d received by worker %d: handing it over",
                 owner, worker)
        try:
            async with asyncio.timeout(RELAY_TIMEOUT):
                _, writer = await asyncio.open_unix_connection(socket_path(directory, owner))
                writer.write(RELAYED.pack(key[0], bytes(key[1])))
                await writer.drain()
                writer.close()
        except (OSError, TimeoutError):
            log.warning("could not hand a cancel request to worker %d", owner, exc_info=True)

    return forward
