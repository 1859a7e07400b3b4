"""Start-up (``net/startup.py``), through a raw socket: encryption requests are answered
(no certificate: SSL refused, GSSENC always refused) and start-up goes on in the clear; a
database the server does not serve is one FATAL error naming the one it does; a start-up
parameter is applied as a SET would be."""

from __future__ import annotations

from glove_scratchpad.wire import (
    BackendKeyData,
    ErrorResponse,
    GSSENCRequest,
    GSSENCResponse,
    ParameterStatus,
    ReadyForQuery,
    SSLRequest,
    SSLResponse,
)

from ..fidelity.rawclient import RawClient


async def test_encryption_requests_are_refused_and_start_up_goes_on(server):
    client = await RawClient.open("127.0.0.1", server.port)
    try:
        client.send(SSLRequest())
        assert await client.recv() == SSLResponse(False)
        client.send(GSSENCRequest())
        assert await client.recv() == GSSENCResponse(False)
        messages = await client.startup()
        assert isinstance(messages[-1], ReadyForQuery)
        assert any(isinstance(m, BackendKeyData) for m in messages)
    finally:
        await client.close()


async def test_another_database_is_refused_naming_the_one_served(server):
    client = await RawClient.open("127.0.0.1", server.port)
    try:
        *_, error = await client.startup(database="elsewhere")
        assert isinstance(error, ErrorResponse) and error.severity == "FATAL"
        assert error.code == "3D000"
        assert error.message.startswith('database "elsewhere" does not exist')
        assert "scratchpad" in f"{error.message} {error.hint}"
        assert await client.closed()
    finally:
        await client.close()


async def test_a_start_up_parameter_is_applied(server):
    client = await RawClient.open("127.0.0.1", server.port)
    try:
        messages = await client.startup(application_name="mirror")
        assert ParameterStatus("application_name", "mirror") in messages
    finally:
        await client.close()
