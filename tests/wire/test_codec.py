"""The codec (``wire/_codec.py``): every message of the byte tables encodes to its bytes and
decodes from them, whole, a byte at a time and with trailing bytes, through a connection in
the phase it belongs to; captured answers decode and encode back byte for byte."""

from __future__ import annotations

import struct
from functools import partial

import pytest

from glove_scratchpad import wire
from glove_scratchpad.wire import (
    NEED_DATA,
    ClientConnection,
    CommandComplete,
    DataRow,
    FieldDescription,
    GSSENCResponse,
    Message,
    Query,
    ReadyForQuery,
    RemoteProtocolError,
    RowDescription,
    SSLRequest,
    SSLResponse,
    State,
    encode,
)

from .fix_codec import client_in, server_in
from .wire_tables import (
    BACKEND,
    BACKEND_AUTH,
    FRONTEND,
    PASSWORD,
    SELECT_1_RESPONSE,
    STARTUP,
    TEXT_COLUMNS_RESPONSE,
    frame,
)


def cases():
    """(id, message, bytes, factory of a connection that decodes it)."""
    for msg, data in STARTUP:
        yield msg, data, lambda: server_in(State.STARTUP)
    for msg, data in PASSWORD:
        yield msg, data, partial(server_in, State.AUTHENTICATING, type(msg))
    for msg, data in FRONTEND:
        yield msg, data, lambda: server_in(State.NORMAL)
    for msg, data in BACKEND_AUTH:
        yield msg, data, lambda: client_in(State.AUTHENTICATING)
    for msg, data in BACKEND:
        yield msg, data, lambda: client_in(State.NORMAL)


CASES = list(cases())
IDS = [f"{i}-{type(m).__name__}" for i, (m, _, _) in enumerate(CASES)]


# --- byte tables, both directions ---------------------------------------------------


@pytest.mark.parametrize(("msg", "data", "make"), CASES, ids=IDS)
def test_encode(msg, data, make):
    assert encode(msg) == data


@pytest.mark.parametrize(("msg", "data", "make"), CASES, ids=IDS)
def test_decode_whole(msg, data, make):
    conn = make()
    conn.receive_data(data)
    event = conn.next_event()
    assert event == msg
    assert type(event) is type(msg)
    if isinstance(msg, DataRow):
        assert event.values == msg.values and event.raw_body == data[5:]
    if conn.state not in (State.CLOSED, State.SSL_REQUESTED, State.GSSENC_REQUESTED):
        assert conn.next_event() is NEED_DATA


@pytest.mark.parametrize(("msg", "data", "make"), CASES, ids=IDS)
def test_decode_byte_by_byte(msg, data, make):
    conn = make()
    for i in range(len(data) - 1):
        conn.receive_data(data[i : i + 1])
        assert conn.next_event() is NEED_DATA
    conn.receive_data(data[-1:])
    assert conn.next_event() == msg


@pytest.mark.parametrize(("msg", "data", "make"), CASES, ids=IDS)
def test_decode_with_trailing_bytes(msg, data, make):
    conn = make()
    first_packet = conn.state is State.STARTUP
    # The start of a plausible next message: it must stay in the buffer.
    if first_packet:
        trailer = b"\x00\x00\x00"
    elif isinstance(conn, ClientConnection):
        trailer = b"Z\x00\x00"
    else:
        trailer = b"p\x00\x00" if conn.state is State.AUTHENTICATING else b"Q\x00\x00"
    conn.receive_data(data + trailer)
    assert conn.next_event() == msg
    if not first_packet and conn.state is not State.CLOSED:
        assert conn.next_event() is NEED_DATA
    assert conn.trailing_data == trailer


def test_whole_result_set_in_one_read():
    conn = client_in(State.NORMAL)
    conn.receive_data(SELECT_1_RESPONSE)
    events = [conn.next_event() for _ in range(5)]
    assert events == [
        RowDescription((FieldDescription("?column?", type_oid=23, type_size=4),)),
        DataRow([b"1"]),
        CommandComplete("SELECT 1"),
        ReadyForQuery("I"),
        NEED_DATA,
    ]


def test_captured_text_columns_with_null_and_empty():
    conn = client_in(State.NORMAL)
    conn.receive_data(TEXT_COLUMNS_RESPONSE)
    description, row = conn.next_event(), conn.next_event()
    assert [f.name for f in description.fields] == ["text", "text", "?column?"]
    assert {(f.type_oid, f.type_size, f.type_modifier) for f in description.fields} == {
        (25, -1, -1)
    }
    assert row.values == (None, b"", b"abc")
    assert encode(description) + encode(row) == TEXT_COLUMNS_RESPONSE[:-20]


def test_every_message_class_is_in_a_table():
    tabled = {type(m) for m, _, _ in CASES} | {SSLResponse, GSSENCResponse}
    classes = {
        obj
        for obj in vars(wire).values()
        if isinstance(obj, type) and issubclass(obj, Message) and obj is not Message
    }
    assert classes <= tabled, classes - tabled


# --- message helpers ----------------------------------------------------------------


def test_direct_decoders():
    assert wire.decode_frontend(ord("Q"), b"SELECT 1\x00") == Query("SELECT 1")
    assert wire.decode_backend(ord("Z"), b"I") == ReadyForQuery("I")
    assert wire.decode_startup(b"\x04\xd2\x16\x2f") == SSLRequest()
    with pytest.raises(RemoteProtocolError, match="invalid frontend message type 'z'"):
        wire.decode_frontend(ord("z"), b"")
    assert repr(DataRow([b"1"])) == "DataRow((b'1',))" and repr(NEED_DATA) == "NEED_DATA"


def test_length_words_are_big_endian_int32():
    # A guard on the table helper itself: the spec's framing.
    assert frame(b"Q", b"x\x00") == b"Q" + struct.pack(">i", 6) + b"x\x00"
