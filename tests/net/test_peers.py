"""Servers of one name on one database, as behind a balancer: a CancelRequest that
reaches a server which does not own the key it names is handed to the one that
does, at the address that server advertised; a handed-over key is never handed on.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from types import SimpleNamespace
from typing import Any

from glove_scratchpad.resources import define_resource
from glove_scratchpad.server import Database
from glove_scratchpad.server.config import ServerConfig
from glove_scratchpad.server.net import peers
from glove_scratchpad.server.net.state import HANDED_OVER, BackendKey, ServerState, instance_of
from glove_scratchpad.wire import (
    BackendKeyData,
    CancelRequest,
    ErrorResponse,
    Query,
    ReadyForQuery,
)

from ..fidelity.rawclient import RawClient
from ..fix_server import serving

DATABASE = "test_cancel_peers"
HEAVY = "SELECT count(*) FROM (SELECT generate_series(1, 300000000)) AS s"  # seconds


@asynccontextmanager
async def two_servers(sidecar: Any) -> AsyncIterator[list[Any]]:
    """Two servers of the default name on one database, on ports of their own."""
    notes = define_resource("notes", columns=[("id", "bigint")], volatility="volatile",
                            select=lambda b: [])
    async with AsyncExitStack() as stack:
        servers = []
        for _ in range(2):
            db = await Database.create([notes], sidecar=sidecar, database=DATABASE)
            stack.push_async_callback(db.close)
            servers.append(await stack.enter_async_context(serving(db)))
        yield servers


async def _running(server: Any) -> tuple[RawClient, BackendKeyData]:
    """A client of ``server`` running HEAVY, and its key."""
    client = await RawClient.open("127.0.0.1", server.port)
    started = await client.startup()
    assert isinstance(started[-1], ReadyForQuery), started
    key = next(m for m in started if isinstance(m, BackendKeyData))
    client.send(Query(HEAVY))
    await client.writer.drain()
    await asyncio.sleep(0.5)  # the sidecar is running it
    return client, key


async def _cancel(server: Any, process_id: int, secret: bytes) -> None:
    _, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(CancelRequest(process_id, secret).encode())
    await writer.drain()
    writer.close()


async def test_a_cancel_sent_to_another_server_of_the_name_reaches_its_owner(sidecar):
    async with two_servers(sidecar) as (owner, other):
        assert owner.db.catalog.instance != other.db.catalog.instance
        client, key = await _running(owner)
        assert instance_of(key.process_id) == owner.db.catalog.instance % 4096
        reply = asyncio.ensure_future(client.until_ready())
        try:
            async with asyncio.timeout(30):
                while not reply.done():  # one that arrives before the statement runs is lost
                    await _cancel(other, key.process_id, key.secret_key)
                    await asyncio.wait([reply], timeout=2)
            errors = [m for m in reply.result() if isinstance(m, ErrorResponse)]
            assert [e.fields["C"] for e in errors] == ["57014"], reply.result()
        finally:
            reply.cancel()
            await client.close()


async def test_a_handed_over_cancel_is_not_handed_on(sidecar):
    async with two_servers(sidecar) as (owner, other):
        client, key = await _running(owner)
        reply = asyncio.ensure_future(client.until_ready())
        try:
            # As if handed over by a third server: the other one keeps it to itself.
            await _cancel(other, key.process_id - HANDED_OVER, key.secret_key)
            assert not (await asyncio.wait([reply], timeout=1.5))[0]
            # A wrong secret is handed to the owner, and cancels nothing there.
            await _cancel(other, key.process_id, b"nope")
            assert not (await asyncio.wait([reply], timeout=1.5))[0]
            await _cancel(owner, key.process_id, key.secret_key)
            errors = [m for m in await asyncio.wait_for(reply, 10)
                      if isinstance(m, ErrorResponse)]
            assert [e.fields["C"] for e in errors] == ["57014"]
        finally:
            reply.cancel()
            await client.close()


async def test_without_the_registry_a_cancel_still_reaches_this_servers_workers():
    """The sidecar away (restarting): the key may be another worker's of this server."""

    class Registry:  # the registry's side of a Catalog, the sidecar gone
        async def cancel_addresses(self, low_bits: int, bits: int) -> list[str]:
            raise ConnectionRefusedError("the sidecar is restarting")

    handed: list[tuple[int, BackendKey]] = []

    async def relay(worker: int, key: BackendKey) -> None:
        handed.append((worker, key))

    db = SimpleNamespace(catalog=SimpleNamespace(instance=1))  # the Database's side
    state = ServerState(ServerConfig(), db, worker=0, forward=relay)  # type: ignore[arg-type]
    hand_over = peers.forwarder(state, Registry(), "127.0.0.1:1")  # type: ignore[arg-type]
    other_worker = (2 << 19) | (5 << 6) | 1  # instance 2, worker 1
    await hand_over((other_worker, b"key!"))
    assert handed == [(1, (other_worker, b"key!"))]


def test_the_advertised_address_is_one_the_other_servers_can_reach():
    try:
        machine = socket.gethostbyname(socket.gethostname())
    except OSError:  # a hostname that does not resolve: cancel_address falls back too
        machine = "127.0.0.1"
    assert peers.cancel_address("0.0.0.0", None, 55432) == f"{machine}:55432"  # a container
    assert peers.cancel_address("10.1.2.3", None, 55432) == "10.1.2.3:55432"
    assert peers.cancel_address("0.0.0.0", "glove-1.internal", 7) == "glove-1.internal:7"
    assert peers.cancel_address("::1", None, 7) == "[::1]:7"
