"""Fuzz invariant: any bytes either decode into messages or raise
RemoteProtocolError (SQLSTATE 08P01) and fail the connection -- never
any other exception. Inputs: random bytes, valid messages followed by
garbage, and valid messages with bytes overwritten or cut off; fed in
random chunk sizes to connections parked in each phase."""

from __future__ import annotations

import os
from contextlib import suppress

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glove_scratchpad.wire import (
    NEED_DATA,
    AuthenticationOk,
    ClientConnection,
    DataRow,
    Message,
    PasswordMessage,
    RemoteProtocolError,
    SASLInitialResponse,
    SASLResponse,
    ServerConnection,
    SSLRequest,
    StartupMessage,
    State,
    encode,
)

from .wire_tables import BACKEND, BACKEND_AUTH, FRONTEND, PASSWORD, STARTUP

# WIRE_FUZZ_EXAMPLES=20000 for a long hunt; the default keeps the suite to seconds.
EXAMPLES = int(os.environ.get("WIRE_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FRONTEND_POOL = [b for _, b in STARTUP + PASSWORD + FRONTEND]
BACKEND_POOL = [b for _, b in BACKEND_AUTH + BACKEND]
KINDS = [None, PasswordMessage, SASLInitialResponse, SASLResponse]


@st.composite
def mutated(draw, pool: list[bytes]) -> bytes:
    """Valid messages with some bytes overwritten and maybe the tail cut off."""
    data = bytearray(b"".join(draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4))))
    for _ in range(draw(st.integers(1, 4))):
        data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    return bytes(data[: draw(st.integers(0, len(data)))]) + draw(st.binary(max_size=8))


def streams(pool: list[bytes]) -> st.SearchStrategy[bytes]:
    valid = st.lists(st.sampled_from(pool), max_size=4).map(b"".join)
    garbage = st.binary(max_size=64)
    return st.one_of(
        st.binary(max_size=200),
        st.tuples(valid, garbage).map(lambda t: t[0] + t[1]),
        mutated(pool),
    )


def check_failed(conn, exc: RemoteProtocolError) -> None:
    assert exc.sqlstate == "08P01"
    assert conn.state is State.FAILED
    with pytest.raises(RemoteProtocolError):
        conn.next_event()


def pump(conn, data: bytes, chunk: int, on_event) -> None:
    """Feed ``data`` in chunks, draining events; protocol errors end it."""
    try:
        for i in range(0, len(data), chunk):
            conn.receive_data(data[i : i + chunk])
            while conn.state is not State.CLOSED:
                on_event(conn)  # lets the test answer / steer before reading
                event = conn.next_event()
                if event is NEED_DATA:
                    break
                assert isinstance(event, Message)
                if isinstance(event, DataRow):
                    with suppress(RemoteProtocolError):  # lazy split: same invariant
                        event.values  # noqa: B018
    except RemoteProtocolError as exc:
        check_failed(conn, exc)


def server_at(start: State) -> ServerConnection:
    conn = ServerConnection()
    if start is not State.STARTUP:
        conn.receive_data(encode(StartupMessage(parameters={"user": "u"})))
        conn.next_event()
    if start is State.NORMAL:
        conn.send(AuthenticationOk())
    return conn


def client_at(start: State, validate: bool) -> ClientConnection:
    conn = ClientConnection(validate_rows=validate)
    conn.send(SSLRequest() if start is State.SSL_REQUESTED else StartupMessage())
    return conn


def server_steering(accept: bool, kind, recover: bool):
    def steer(conn: ServerConnection) -> None:
        if conn.state is State.SSL_REQUESTED:
            conn.answer_ssl(accept)
        elif conn.state is State.GSSENC_REQUESTED:
            conn.answer_gssenc(accept)
        elif conn.state is State.AUTHENTICATING:
            conn.expect_password(kind)
        elif conn.state is State.NORMAL and recover and not conn.in_error_recovery:
            conn.start_error_recovery()

    return steer


server_args = dict(
    start=st.sampled_from([State.STARTUP, State.AUTHENTICATING, State.NORMAL]),
    chunk=st.integers(1, 300),
    accept=st.booleans(),
    kind=st.sampled_from(KINDS),
    recover=st.booleans(),
)


@FUZZ
@given(data=st.binary(max_size=300), **server_args)
def test_server_random_bytes(start, data, chunk, accept, kind, recover):
    pump(server_at(start), data, chunk, server_steering(accept, kind, recover))


@FUZZ
@given(data=streams(FRONTEND_POOL), **server_args)
def test_server_valid_prefixes_and_mutations(start, data, chunk, accept, kind, recover):
    pump(server_at(start), data, chunk, server_steering(accept, kind, recover))


client_args = dict(
    start=st.sampled_from([State.SSL_REQUESTED, State.AUTHENTICATING]),
    chunk=st.integers(1, 300),
    validate=st.booleans(),
)


@FUZZ
@given(data=st.binary(max_size=300), **client_args)
def test_client_random_bytes(start, data, chunk, validate):
    pump(client_at(start, validate), data, chunk, lambda conn: None)


@FUZZ
@given(data=streams([encode(AuthenticationOk()), *BACKEND_POOL]), **client_args)
def test_client_valid_prefixes_and_mutations(start, data, chunk, validate):
    pump(client_at(start, validate), data, chunk, lambda conn: None)
