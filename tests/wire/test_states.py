"""The phases (``wire/states.py``): each side sends and accepts only the messages of its
phase; anything else is our error or the peer's, never sent or decoded."""

from __future__ import annotations

import pytest

from glove_scratchpad.wire import (
    AuthenticationOk,
    ClientConnection,
    DataRow,
    LocalProtocolError,
    Query,
    ReadyForQuery,
    RemoteProtocolError,
    StartupMessage,
    State,
    encode,
)

from .fix_codec import client_in, server_in


@pytest.mark.parametrize(
    ("state", "msg"),
    [
        (State.STARTUP, AuthenticationOk()),
        (State.AUTHENTICATING, DataRow([b"1"])),
        (State.AUTHENTICATING, ReadyForQuery()),
        (State.NORMAL, AuthenticationOk()),
        (State.NORMAL, Query("SELECT 1")),  # a frontend message
    ],
)
def test_server_refuses_to_send_out_of_phase(state, msg):
    conn = server_in(state)
    with pytest.raises(LocalProtocolError):
        conn.send(msg)
    assert conn.state is state


def test_client_refuses_to_send_out_of_phase():
    conn = ClientConnection()
    with pytest.raises(LocalProtocolError):
        conn.send(Query("SELECT 1"))
    conn.send(StartupMessage(parameters={"user": "u"}))
    with pytest.raises(LocalProtocolError):
        conn.send(Query("SELECT 1"))
    conn.receive_data(encode(AuthenticationOk()))
    conn.next_event()
    assert conn.send(Query("SELECT 1")) == b"Q\x00\x00\x00\x0dSELECT 1\x00"


def test_backend_message_out_of_phase_is_refused():
    conn = client_in(State.AUTHENTICATING)
    conn.receive_data(encode(DataRow([b"1"])))
    with pytest.raises(RemoteProtocolError, match="not allowed in state AUTHENTICATING"):
        conn.next_event()


def test_query_during_authentication_is_refused_on_its_type_byte():
    conn = server_in(State.AUTHENTICATING)
    conn.receive_data(b"Q")
    with pytest.raises(RemoteProtocolError, match="unexpected message type 'Q'"):
        conn.next_event()
