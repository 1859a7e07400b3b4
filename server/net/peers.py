"""Cancels across the servers of one name on one database (behind a balancer).

A CancelRequest is a new connection, so a balancer may take it to a server that
does not own the key it names. That server finds the owner's address in the
registry (``Catalog.cancel_addresses``, by the instance number in the key) and
sends it the CancelRequest itself.

Rules:
- Each server advertises where CancelRequests reach it once it listens
  (``advertise``): ``--cancel-host`` (default ``--host``, or this machine's
  address when ``--host`` is every address) and its port; a shutdown withdraws
  it. A server that died leaves its address behind: cancels are handed to every
  address the key's instance bits match, at once, so a stale one delays none.
- A handed-over key has its process id's sign bit set (``state.HANDED_OVER``); its
  receiver routes it among its own workers only. An address that is this server's
  own (another worker's instance) goes to the worker relay instead.
- When the registry cannot be read (the sidecar away), a cancel goes to this
  server's workers, as it would without peers.
- A cancel that cannot be handed over is logged, never raised: a client never
  hears about a cancel anyway.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import TYPE_CHECKING

from glove_scratchpad.wire import CancelRequest

from ..config import ANY_ADDRESS
from .state import HANDED_OVER, INSTANCE_BITS, BackendKey, Peers, ServerState, instance_of

if TYPE_CHECKING:
    from glove_scratchpad.catalog import Catalog

__all__ = ["HAND_OVER_TIMEOUT", "advertise", "cancel_address", "forwarder", "withdraw"]

log = logging.getLogger(__name__)

HAND_OVER_TIMEOUT = 2.0  # seconds to hand a cancel to another server


def cancel_address(host: str, cancel_host: str | None, port: int) -> str:
    """Where the other servers reach this one: host:port ([v6]:port)."""
    name = cancel_host or host
    if name in ANY_ADDRESS:
        try:
            name = socket.gethostbyname(socket.gethostname())
        except OSError:
            name = "127.0.0.1"
    return f"[{name}]:{port}" if ":" in name else f"{name}:{port}"


async def advertise(state: ServerState, catalog: Catalog, address: str) -> None:
    """Record ``address`` in the registry, and hand over cancels from now on."""
    try:
        await catalog.advertise(address)
    except Exception:
        log.warning("could not record where this server takes cancel requests: the other "
                    "servers of its name cannot hand it theirs", exc_info=True)
        return
    state.peers = forwarder(state, catalog, address)


def forwarder(state: ServerState, catalog: Catalog, own: str) -> Peers:
    """The ``ServerState.peers`` of this server (advertised at ``own``): hand a key to
    the server of the name that owns it."""

    async def hand_over(key: BackendKey) -> None:
        try:
            addresses = await catalog.cancel_addresses(instance_of(key[0]), INSTANCE_BITS)
        except Exception:
            # The sidecar is away (restarting, say): the key may still be another
            # worker's of this server, which the relay reaches without it.
            log.warning("could not look up the server that owns a cancel request's key: "
                        "trying this server's workers", exc_info=True)
            await state.route_to_worker(key)
            return
        handed = (key[0] - HANDED_OVER, key[1])
        sends = []
        for address in dict.fromkeys(addresses):  # newest first; a stale one costs little
            if address == own:  # another worker of this server
                sends.append(state.route_to_worker(key))
            else:
                log.info("cancel request for another server: handing it to %s", address)
                sends.append(_send(address, handed))
        await asyncio.gather(*sends)

    return hand_over


async def withdraw(state: ServerState, catalog: Catalog) -> None:
    """Stop taking cancels from the other servers: this one is shutting down."""
    if state.peers is None:
        return
    state.peers = None
    try:
        async with asyncio.timeout(HAND_OVER_TIMEOUT):  # a sidecar gone delays no shutdown
            await catalog.advertise(None)
    except Exception:
        log.info("could not withdraw this server's cancel address", exc_info=True)


async def _send(address: str, key: BackendKey) -> None:
    host, _, port = address.rpartition(":")
    try:
        async with asyncio.timeout(HAND_OVER_TIMEOUT):
            _, writer = await asyncio.open_connection(host.strip("[]"), int(port))
            writer.write(CancelRequest(*key).encode())
            await writer.drain()
            writer.close()
    except (OSError, TimeoutError, ValueError):
        log.warning("could not hand a cancel request to %s", address, exc_info=True)
