"""The two wire errors (``wire/errors.py``): a message we cannot encode is our error and
nothing is sent; a peer's broken bytes are its error, SQLSTATE 08P01, and fail the
connection for good."""

from __future__ import annotations

import pytest

from glove_scratchpad.wire import (
    BackendKeyData,
    DataRow,
    Describe,
    ErrorResponse,
    Execute,
    LocalProtocolError,
    Parse,
    ProtocolError,
    Query,
    ReadyForQuery,
    RemoteProtocolError,
    State,
    Sync,
    encode,
)
from glove_scratchpad.wire.errors import PROTOCOL_VIOLATION

from .fix_codec import server_in


@pytest.mark.parametrize(
    "msg",
    [
        Query("a\0b"),
        Execute("", 2**31),
        Describe("X"),
        ReadyForQuery("Q"),
        BackendKeyData(1, b"abc"),
        ErrorResponse({"SC": "x"}),
        Parse("", "", (2**32,)),
        DataRow(["not bytes"]),  # type: ignore[list-item]
    ],
)
def test_unencodable_messages_raise_local_error(msg):
    with pytest.raises(LocalProtocolError):
        encode(msg)


def test_a_peers_broken_bytes_are_08P01_and_fail_the_connection_for_good():
    conn = server_in(State.NORMAL)
    conn.receive_data(b"z\x00\x00\x00\x04")  # no such frontend message
    with pytest.raises(RemoteProtocolError) as first:
        conn.next_event()
    assert first.value.sqlstate == PROTOCOL_VIOLATION == "08P01"
    assert isinstance(first.value, ProtocolError)
    conn.receive_data(encode(Sync()))  # good bytes after bad ones change nothing
    with pytest.raises(RemoteProtocolError):
        conn.next_event()
