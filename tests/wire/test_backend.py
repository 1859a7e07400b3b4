"""Backend messages (``wire/backend.py``): the ErrorResponse helper, DataRow relayed raw and
split lazily or on arrival, and malformed backend input refused as the peer's error."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from glove_scratchpad.wire import (
    AuthenticationOk,
    ClientConnection,
    DataRow,
    LocalProtocolError,
    RemoteProtocolError,
    StartupMessage,
    State,
    encode,
    error_response,
)

from .fix_codec import client_in
from .wire_tables import (
    ERROR,
    frame,
)


def test_error_response_helper_and_properties():
    err = error_response("ERROR", "42P01", 'relation "nope" does not exist', position=15)
    assert err.fields == {
        "S": "ERROR",
        "V": "ERROR",
        "C": "42P01",
        "M": 'relation "nope" does not exist',
        "P": "15",
    }
    assert (err.severity, err.code, err.position, err.detail, err.hint) == (
        "ERROR",
        "42P01",
        15,
        None,
        None,
    )
    assert ERROR.message == 'relation "nope" does not exist' and ERROR.position == 15
    full = error_response("FATAL", "08P01", "bad", detail="d", hint="h", table_name="t")
    assert full.fields["D"] == "d" and full.fields["H"] == "h" and full.fields["t"] == "t"
    with pytest.raises(LocalProtocolError):
        error_response("ERROR", "XX000", "x", colour="red")


def test_raw_data_row_relay_is_header_plus_body():
    body = b"\x00\x02\x00\x00\x00\x02hi\xff\xff\xff\xff"
    row = DataRow.raw(body)
    assert encode(row) == b"D\x00\x00\x00\x10" + body
    assert row == DataRow([b"hi", None]) and hash(row) == hash(DataRow([b"hi", None]))
    assert row.values == (b"hi", None)
    with pytest.raises(FrozenInstanceError):
        row.values = ()  # type: ignore[misc]


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (b"\x00", "truncated column count"),
        (b"\x00\x01\x00\x00", "truncated column length"),
        (b"\x00\x01\x00\x00\x00\x05ab", "bad column length 5"),
        (b"\x00\x00x", "trailing"),
    ],
)
def test_raw_data_row_split_errors(body, match):
    row = DataRow.raw(body)
    assert repr(row) == f"DataRow.raw({body!r})"
    with pytest.raises(RemoteProtocolError, match=match):
        row.values  # noqa: B018


def test_lazy_data_row_reports_garbage_only_when_split():
    conn = ClientConnection()  # validate_rows=False: relay without looking
    conn.send(StartupMessage(parameters={"user": "u"}))
    conn.receive_data(encode(AuthenticationOk()) + frame(b"D", b"\x00\x05\x00"))
    conn.next_event()
    row = conn.next_event()
    assert isinstance(row, DataRow)
    with pytest.raises(RemoteProtocolError):
        row.values  # noqa: B018


def test_validated_data_row_fails_on_arrival():
    conn = client_in(State.NORMAL)
    conn.receive_data(frame(b"D", b"\x00\x01\xff\xff\xff\xfe"))
    with pytest.raises(RemoteProtocolError, match="column length"):
        conn.next_event()


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"R\x00\x00\x00\x08\x00\x00\x00\x07", "unsupported authentication request 7"),
        (b"R\x00\x00\x00\x06\x00\x00", "unsupported authentication request None"),
        (b"K\x00\x00\x00\x0b\x00\x00\x00\x01abc", "secret key length"),
        (b"Z\x00\x00\x00\x05Q", "transaction status"),
        (b"E\x00\x00\x00\x06SX", "NUL"),
        (b"T\x00\x00\x00\x0b\x00\x01a\x00\x00\x00\x00", "truncated"),
        (b"v\x00\x00\x00\x0c\x00\x00\x00\x00\xff\xff\xff\xff", "negative count"),
        (b"y\x00\x00\x00\x04", "invalid backend message type 'y'"),
    ],
)
def test_bad_backend_messages(data, match):
    conn = client_in(State.NORMAL)
    conn.receive_data(data)
    with pytest.raises(RemoteProtocolError, match=match):
        conn.next_event()
    with pytest.raises(RemoteProtocolError):
        conn.next_event()
