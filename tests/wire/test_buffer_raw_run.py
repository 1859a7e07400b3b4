"""raw_run: the complete messages of the given types at the head of the buffer, as the
bytes they came in; what follows them (another type, or a message not yet whole) stays."""

from __future__ import annotations

import pytest

from glove_scratchpad.wire import (
    ClientConnection,
    CommandComplete,
    CopyData,
    CopyDone,
    LocalProtocolError,
    ReadyForQuery,
    RemoteProtocolError,
)
from glove_scratchpad.wire.buffer import ReceiveBuffer

COPY = frozenset(b"Hdc")
# CopyOutResponse: binary, two columns, each binary
OUT_RESPONSE = b"H\x00\x00\x00\x0b" + b"\x01" + b"\x00\x02" + b"\x00\x01\x00\x01"
ROWS = CopyData(b"1\t2\n").encode() + CopyData(b"").encode() + CopyDone().encode()
TAIL = CommandComplete("COPY 1").encode() + ReadyForQuery("I").encode()


@pytest.mark.parametrize(("data", "run", "left"), [
    (OUT_RESPONSE + ROWS + TAIL, OUT_RESPONSE + ROWS, TAIL),
    (b"d\x00\x00\x00\x06ab" + b"d\x00\x00\x00\x06x", b"d\x00\x00\x00\x06ab",
     b"d\x00\x00\x00\x06x"),
    (b"d\x00\x00\x00\x04" + b"d\x00\x00", b"d\x00\x00\x00\x04", b"d\x00\x00"),
    (TAIL + ROWS, b"", TAIL + ROWS),
    (b"", b"", b""),
])
def test_the_head_run_comes_as_it_came(data: bytes, run: bytes, left: bytes) -> None:
    buf = ReceiveBuffer()
    buf.feed(data)
    assert buf.raw_run(COPY) == run
    assert buf.raw_run(COPY) == b""  # nothing of the run is left
    assert bytes(buf._buf[buf._pos:]) == left


def test_a_bad_length_is_the_backend_s_error() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"d\x00\x00\x00\x02")
    with pytest.raises(RemoteProtocolError):
        buf.raw_run(COPY)


def test_a_client_connection_reads_runs_only_in_the_normal_phase() -> None:
    with pytest.raises(LocalProtocolError):
        ClientConnection().raw_run(COPY)
