"""Messages a server sends again and again keep their encodings."""

from __future__ import annotations

import pytest

from glove_scratchpad.wire import (
    BindComplete,
    FieldDescription,
    LocalProtocolError,
    ReadyForQuery,
    RowDescription,
)


def test_memoized_messages_encode_as_before_and_are_kept():
    fields = (FieldDescription("id", type_oid=20), FieldDescription("name", type_oid=25))
    first = RowDescription(fields).encode()
    assert RowDescription(fields) in RowDescription.memo
    again = RowDescription(tuple(fields)).encode()
    assert again is first  # the kept bytes, not a second encoding
    assert first[:1] == b"T" and int.from_bytes(first[1:5], "big") == len(first) - 1
    assert ReadyForQuery("T").encode() == b"Z\x00\x00\x00\x05T"
    assert BindComplete().encode() == b"2\x00\x00\x00\x04"


def test_an_unhashable_field_is_encoded_without_being_kept():
    fields = [FieldDescription("id", type_oid=20)]
    data = RowDescription(fields).encode()  # type: ignore[arg-type]
    assert data == RowDescription(tuple(fields)).encode()


def test_an_invalid_message_is_still_refused():
    with pytest.raises(LocalProtocolError):
        ReadyForQuery("X").encode()
    assert ReadyForQuery("X") not in ReadyForQuery.memo


def test_small_frontend_messages_are_decoded_once_per_body():
    from glove_scratchpad.wire import Execute, RemoteProtocolError, Sync
    from glove_scratchpad.wire._codec import decode_with

    body = Execute("portal_7", 10).encode()[5:]
    first = decode_with(Execute, body)
    assert first == Execute("portal_7", 10)
    assert decode_with(Execute, body) is first
    assert decode_with(Sync, b"") == Sync()
    for _ in range(2):  # a bad body is refused every time, never kept
        with pytest.raises(RemoteProtocolError):
            decode_with(Execute, body + b"x")
    assert body + b"x" not in Execute.decoded
