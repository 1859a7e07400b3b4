"""The sans-I/O connections (``wire/connection.py``): start-up with SSL and GSSENC
requests, CancelRequest, authentication's exchanges, and the discard until Sync after an
error."""

from __future__ import annotations

import pytest

from glove_scratchpad import wire
from glove_scratchpad.wire import (
    NEED_DATA,
    PROTOCOL_3_2,
    AuthenticationCleartextPassword,
    AuthenticationOk,
    AuthenticationSASL,
    AuthenticationSASLContinue,
    AuthenticationSASLFinal,
    BackendKeyData,
    Bind,
    ClientConnection,
    Describe,
    Execute,
    GSSENCRequest,
    GSSENCResponse,
    LocalProtocolError,
    Parse,
    PasswordMessage,
    Query,
    ReadyForQuery,
    RemoteProtocolError,
    SASLInitialResponse,
    SASLResponse,
    ServerConnection,
    SSLRequest,
    SSLResponse,
    StartupMessage,
    State,
    Sync,
    Terminate,
    encode,
    error_response,
)

from .fix_codec import STARTUP_BYTES, server_in
from .wire_tables import (
    KEY32,
    STARTUP,
    STARTUP_RESPONSE,
    STARTUP_SETTINGS,
)


def test_captured_startup_response():
    conn = ClientConnection(validate_rows=True)
    conn.send(StartupMessage(parameters={"user": "postgres", "database": "postgres"}))
    conn.receive_data(STARTUP_RESPONSE)
    events = []
    while (event := conn.next_event()) is not NEED_DATA:
        events.append(event)
    assert events[0] == AuthenticationOk() and conn.state is State.NORMAL
    assert {e.name: e.value for e in events[1:-2]} == STARTUP_SETTINGS
    assert events[-2] == BackendKeyData(11039, b"\xbcy\xb7\x1a")
    assert events[-1] == ReadyForQuery("I")
    assert b"".join(map(encode, events)) == STARTUP_RESPONSE  # and back, byte for byte


def test_ssl_then_gssenc_then_startup_in_one_buffer():
    conn = ServerConnection()
    conn.receive_data(encode(SSLRequest()) + encode(GSSENCRequest()) + STARTUP_BYTES)
    assert conn.next_event() == SSLRequest()
    assert conn.state is State.SSL_REQUESTED
    with pytest.raises(LocalProtocolError):
        conn.next_event()  # must answer first
    assert conn.answer_ssl(False) == b"N"
    assert conn.next_event() == GSSENCRequest()
    assert conn.answer_gssenc(False) == b"N"
    assert conn.next_event() == StartupMessage(parameters={"user": "u"})
    assert conn.state is State.AUTHENTICATING and conn.protocol_version == 196608


def test_ssl_accepted_then_startup():
    conn = ServerConnection()
    conn.receive_data(encode(SSLRequest()))
    conn.next_event()
    assert conn.answer_ssl(True) == b"S"
    conn.receive_data(encode(StartupMessage(PROTOCOL_3_2, {"user": "u"})))  # decrypted by caller
    assert conn.next_event().protocol_version == PROTOCOL_3_2
    assert conn.protocol_version == PROTOCOL_3_2


def test_unencrypted_data_after_ssl_request_is_refused():
    conn = ServerConnection()
    conn.receive_data(encode(SSLRequest()) + STARTUP_BYTES)
    conn.next_event()
    with pytest.raises(RemoteProtocolError, match="unencrypted"):
        conn.answer_ssl(True)
    assert conn.state is State.FAILED


@pytest.mark.parametrize(
    "packets",
    [
        [SSLRequest(), SSLRequest()],
        [GSSENCRequest(), GSSENCRequest()],
    ],
)
def test_encryption_request_only_once(packets):
    conn = ServerConnection()
    conn.receive_data(b"".join(map(encode, packets)))
    conn.next_event()
    conn.send(SSLResponse(False) if isinstance(packets[0], SSLRequest) else GSSENCResponse(False))
    with pytest.raises(RemoteProtocolError):
        conn.next_event()


def test_cancel_request_closes():
    conn = ServerConnection()
    conn.receive_data(STARTUP[3][1])
    assert conn.next_event() == wire.CancelRequest(1234, KEY32)
    assert conn.state is State.CLOSED
    with pytest.raises(LocalProtocolError):
        conn.next_event()


def test_client_ssl_negotiation():
    conn = ClientConnection()
    assert conn.send(SSLRequest()) == b"\x00\x00\x00\x08\x04\xd2\x16\x2f"
    assert conn.next_event() is NEED_DATA
    conn.receive_data(b"N")
    assert conn.next_event() == SSLResponse(False)
    conn.send(GSSENCRequest())
    conn.receive_data(b"G")
    assert conn.next_event() == GSSENCResponse(True)
    with pytest.raises(LocalProtocolError):
        conn.send(SSLRequest())  # not after encryption is set up


def test_client_refuses_unencrypted_bytes_after_ssl_yes():
    conn = ClientConnection()
    conn.send(SSLRequest())
    conn.receive_data(b"S" + encode(AuthenticationOk()))
    with pytest.raises(RemoteProtocolError, match="unencrypted"):
        conn.next_event()


def test_sasl_exchange_decodes_p_by_context():
    conn = server_in(State.AUTHENTICATING)
    conn.send(AuthenticationSASL(("SCRAM-SHA-256",)))
    conn.receive_data(encode(SASLInitialResponse("SCRAM-SHA-256", b"n,,n=,r=x")))
    assert conn.next_event() == SASLInitialResponse("SCRAM-SHA-256", b"n,,n=,r=x")
    conn.send(AuthenticationSASLContinue(b"r=xy,s=c2FsdA==,i=4096"))
    conn.receive_data(encode(SASLResponse(b"c=biws,r=xy,p=cA==")))
    assert conn.next_event() == SASLResponse(b"c=biws,r=xy,p=cA==")
    data = conn.send_many(
        [
            AuthenticationSASLFinal(b"v=dg=="),
            AuthenticationOk(),
            wire.ParameterStatus("server_version", "16.2"),
            BackendKeyData(7, b"abcd"),
            ReadyForQuery("I"),
        ]
    )
    assert data.startswith(b"R\x00\x00\x00\x0e\x00\x00\x00\x0cv=dg==R\x00\x00\x00\x08")
    assert data.endswith(b"Z\x00\x00\x00\x05I")
    assert conn.state is State.NORMAL


def test_password_message_without_request_is_refused():
    conn = server_in(State.AUTHENTICATING)
    conn.receive_data(encode(PasswordMessage("x")))
    with pytest.raises(RemoteProtocolError, match="unexpected password"):
        conn.next_event()


def test_one_password_per_request():
    conn = server_in(State.AUTHENTICATING)
    conn.send(AuthenticationCleartextPassword())
    conn.receive_data(encode(PasswordMessage("a")) * 2)
    assert conn.next_event() == PasswordMessage("a")
    with pytest.raises(RemoteProtocolError):
        conn.next_event()


def test_terminate_during_authentication():
    conn = server_in(State.AUTHENTICATING)
    conn.receive_data(encode(Terminate()))
    assert conn.next_event() == Terminate() and conn.state is State.CLOSED


def test_expect_password_by_name():
    conn = server_in(State.AUTHENTICATING)
    conn.expect_password("SASLResponse")
    conn.receive_data(b"p\x00\x00\x00\x06hi")
    assert conn.next_event() == SASLResponse(b"hi")
    with pytest.raises(LocalProtocolError):
        conn.expect_password("Kerberos")


def test_error_recovery_discards_until_sync():
    conn = server_in(State.NORMAL)
    batch = [Parse("", "SELEC 1"), Bind(), Describe("P"), Execute(), Sync(), Query("SELECT 2")]
    conn.receive_data(b"".join(map(encode, batch)))
    assert conn.next_event() == Parse("", "SELEC 1")
    conn.send(error_response("ERROR", "42601", 'syntax error at or near "SELEC"'))
    conn.start_error_recovery()
    assert conn.in_error_recovery
    assert conn.next_event() == Sync()
    assert not conn.in_error_recovery
    assert conn.next_event() == Query("SELECT 2")


def test_error_recovery_waits_for_sync_across_reads():
    conn = server_in(State.NORMAL)
    conn.start_error_recovery()
    data = encode(Bind()) + encode(Execute()) + encode(Sync())
    for i in range(len(data) - 1):
        conn.receive_data(data[i : i + 1])
        assert conn.next_event() is NEED_DATA
    conn.receive_data(data[-1:])
    assert conn.next_event() == Sync()


def test_error_recovery_passes_terminate_and_still_checks_types():
    conn = server_in(State.NORMAL)
    conn.start_error_recovery()
    conn.receive_data(encode(Execute()) + encode(Terminate()))
    assert conn.next_event() == Terminate()
    conn = server_in(State.NORMAL)
    conn.start_error_recovery()
    conn.receive_data(encode(Execute()) + b"z\x00\x00\x00\x04")
    with pytest.raises(RemoteProtocolError, match="unexpected message type 'z'"):
        conn.next_event()


def test_error_recovery_only_in_normal_phase():
    with pytest.raises(LocalProtocolError):
        server_in(State.AUTHENTICATING).start_error_recovery()


def test_client_gets_nothing_before_startup():
    conn = ClientConnection()
    assert conn.next_event() is NEED_DATA
    conn.receive_data(b"R")
    with pytest.raises(RemoteProtocolError):
        conn.next_event()
