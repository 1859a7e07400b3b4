"""What the server shares with its connections (``net/state.py``), through raw sockets: the
registry of connections by their keys routes a CancelRequest to the connection whose key
(process id and secret) it names, and to no other."""

from __future__ import annotations

from glove_scratchpad.wire import (
    BackendKeyData,
    CancelRequest,
    CommandComplete,
    ErrorResponse,
    Query,
)

from ..fidelity.rawclient import RawClient


async def _cancel(server, key: BackendKeyData, secret: bytes) -> None:
    canceller = await RawClient.open("127.0.0.1", server.port)
    try:
        canceller.send(CancelRequest(key.process_id, secret))
        await canceller.writer.drain()
        assert await canceller.closed()  # the server ends a cancel's connection
    finally:
        await canceller.close()


async def test_a_cancel_reaches_only_the_connection_its_key_names(server):
    client = await RawClient.open("127.0.0.1", server.port)
    try:
        key = next(m for m in await client.startup() if isinstance(m, BackendKeyData))
        wrong = bytes(b ^ 0xFF for b in key.secret_key)

        client.send(Query("SELECT done FROM slow WHERE seconds = 1"))
        await _cancel(server, key, wrong)  # the right process id, another secret
        answered = await client.until_ready()
        assert CommandComplete("SELECT 1") in answered, answered
        assert not any(isinstance(m, ErrorResponse) for m in answered)

        client.send(Query("SELECT done FROM slow WHERE seconds = 30"))
        await _cancel(server, key, key.secret_key)
        error = next(m for m in await client.until_ready() if isinstance(m, ErrorResponse))
        assert error.code == "57014", error
    finally:
        await client.close()
