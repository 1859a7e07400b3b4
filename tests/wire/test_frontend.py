"""Frontend messages (``wire/frontend.py``): the format-code rule, and malformed start-up
packets and messages refused as the peer's error, as Postgres refuses them."""

from __future__ import annotations

import pytest

from glove_scratchpad.wire import (
    Bind,
    LocalProtocolError,
    ReadyForQuery,
    RemoteProtocolError,
    ServerConnection,
    State,
    Sync,
    effective_format,
    encode,
    error_response,
)

from .fix_codec import server_in


def test_effective_format_rule():
    assert [effective_format((), i) for i in range(3)] == [0, 0, 0]
    assert [effective_format((1,), i) for i in range(3)] == [1, 1, 1]
    assert [effective_format((0, 1, 0), i) for i in range(3)] == [0, 1, 0]
    bind = Bind(param_formats=(1,), params=(b"a", b"b"), result_formats=(0, 1))
    assert bind.param_format(1) == 1 and bind.result_format(1) == 1


@pytest.mark.parametrize(
    ("packet", "match"),
    [
        (b"\x00\x00\x00\x08\x00\x02\x00\x00", "unsupported frontend protocol 2.0"),
        (b"\x00\x00\x00\x08\x04\xd2\x16\x31", "unsupported frontend protocol 1234.5681"),
        (b"\x00\x00\x00\x03", "invalid length of startup packet"),
        (b"\x00\x00\x27\x15", "invalid length of startup packet"),  # 10005: too long
        (b"\x00\x00\x00\x0c\x04\xd2\x16\x2f\x00\x00\x00\x00", "encryption request"),
        (b"\x00\x00\x00\x0f\x04\xd2\x16\x2e\x00\x00\x00\x01\x01\x02\x03", "cancel key"),
        (b"\x00\x00\x00\x0d\x00\x03\x00\x00user\x00", "NUL"),  # no terminator
        (b"\x00\x00\x00\x0e\x00\x03\x00\x00u\x00v\x00\x00\x00", "trailing"),
        (b"\x00\x00\x00\x0c\x00\x03\x00\x00\xff\x00\x00\x00", "UTF-8"),
    ],
)
def test_bad_startup_packets(packet, match):
    conn = ServerConnection()
    conn.receive_data(packet)
    with pytest.raises(RemoteProtocolError, match=match) as info:
        conn.next_event()
    assert info.value.sqlstate == "08P01"


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"Q\x00\x00\x00\x03", "invalid message length 3"),
        (b"S\x00\x00\x4e\x21", "invalid message length 20001"),  # Sync is small
        (b"Q\xff\xff\xff\xff", "invalid message length"),
        (b"Q\x00\x00\x00\x05x", "NUL"),
        (b"Q\x00\x00\x00\x06\xff\x00", "UTF-8"),
        (b"S\x00\x00\x00\x05\x00", "trailing"),
        (b"E\x00\x00\x00\x07p\x00\x00", "truncated"),
        (b"B\x00\x00\x00\x0e\x00\x00\x00\x00\x00\x01\xff\xff\xff\xfe", "value length -2"),
        (b"B\x00\x00\x00\x10\x00\x00\x00\x00\x00\x01\x00\x00\x00\x04\x00\x00", "truncated"),
        (
            b"B\x00\x00\x00\x1c\x00\x00\x00\x02\x00\x00\x00\x00\x00\x03"
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00",
            "2 parameter formats but 3 parameters",
        ),
        (b"D\x00\x00\x00\x06X\x00", "invalid kind"),
        (b"z", "unexpected message type 'z'"),
        (b"p\x00\x00\x00\x05\x00", "unexpected message type 'p'"),
        (b"P\x00\x00\x00\x0a\x00\x00\x00\x02\x00\x00", "truncated"),
    ],
)
def test_bad_frontend_messages(data, match):
    conn = server_in(State.NORMAL)
    conn.receive_data(data)
    with pytest.raises(RemoteProtocolError, match=match) as info:
        conn.next_event()
    assert info.value.sqlstate == "08P01"
    assert conn.state is State.FAILED
    with pytest.raises(RemoteProtocolError, match=match):
        conn.next_event()  # fail fast, forever
    conn.receive_data(encode(Sync()))
    with pytest.raises(RemoteProtocolError):
        conn.next_event()
    # The server may still report the violation, and nothing else.
    assert conn.send(error_response("FATAL", "08P01", "protocol violation")).startswith(b"E")
    with pytest.raises(LocalProtocolError):
        conn.send(ReadyForQuery())


def test_parameter_count_is_unsigned_like_postgres():
    params = tuple(b"x" for _ in range(40_000))
    conn = server_in(State.NORMAL)
    conn.receive_data(encode(Bind(params=params)))
    assert conn.next_event().params == params
