"""Wire connections parked in a phase, for the codec tests: a server past start-up (or
waiting for a password of a kind) and a client past authentication."""

from __future__ import annotations

from glove_scratchpad.wire import (
    AuthenticationOk,
    ClientConnection,
    Message,
    ServerConnection,
    StartupMessage,
    State,
    encode,
)

STARTUP_BYTES = encode(StartupMessage(parameters={"user": "u"}))


def server_in(state: State, expect: type[Message] | None = None) -> ServerConnection:
    conn = ServerConnection()
    if state is not State.STARTUP:
        conn.receive_data(STARTUP_BYTES)
        assert isinstance(conn.next_event(), StartupMessage)
    if state is State.NORMAL:
        conn.send(AuthenticationOk())
    if expect is not None:
        conn.expect_password(expect)
    assert conn.state is state
    return conn


def client_in(state: State) -> ClientConnection:
    conn = ClientConnection(validate_rows=True)
    conn.send(StartupMessage(parameters={"user": "u"}))
    if state is State.NORMAL:
        conn.receive_data(encode(AuthenticationOk()))
        assert conn.next_event() == AuthenticationOk()
    assert conn.state is state
    return conn
