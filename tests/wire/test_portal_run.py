"""read_portal_run: Bind, [Describe portal], Execute and Sync of the unnamed portal, found
complete at the head of the buffer, or None for anything else (nothing consumed)."""

from __future__ import annotations

import pytest

from glove_scratchpad.wire import (
    AuthenticationOk,
    Bind,
    Describe,
    Execute,
    Flush,
    LocalProtocolError,
    Parse,
    ReadyForQuery,
    ServerConnection,
    StartupMessage,
    Sync,
    read_portal_run,
)

BIND = Bind("", "S1", (1,), (b"\x00\x00\x00\x07", None), (1,))
RUN = BIND.encode() + Describe("P", "").encode() + Execute("", 0).encode() + Sync().encode()


def test_the_whole_run_is_read_with_its_bind() -> None:
    run = read_portal_run(RUN + b"Q", 0)
    assert run is not None and run.bind == BIND and run.describe and run.end == len(RUN)
    without = BIND.encode() + Execute("", 0).encode() + Sync().encode()
    run = read_portal_run(b"xx" + without, 2)
    assert run is not None and not run.describe and run.end == 2 + len(without)


@pytest.mark.parametrize("data", [
    RUN[:-1],  # Sync not complete yet
    BIND.encode(),  # the Execute has not come
    Bind("p1", "S1", (), (), ()).encode() + Execute("p1", 0).encode() + Sync().encode(),
    BIND.encode() + Execute("", 10).encode() + Sync().encode(),  # a row count: suspends
    BIND.encode() + Describe("S", "S1").encode() + Execute("", 0).encode() + Sync().encode(),
    BIND.encode() + Execute("", 0).encode() + Flush().encode(),
    Parse("", "SELECT 1", ()).encode() + RUN,
    # Two formats for one parameter: the message-by-message path words the error.
    Bind("", "S1", (0, 1, 0), (b"1",), ()).encode() + Execute("", 0).encode()
    + Sync().encode(),
    b"B\x00\x00\x00\x03" + Execute("", 0).encode() + Sync().encode(),  # a length below 4
])
def test_anything_else_is_none(data: bytes) -> None:
    assert read_portal_run(data, 0) is None


def _in_normal_phase() -> ServerConnection:
    conn = ServerConnection()
    conn.receive_data(StartupMessage(parameters={"user": "u"}).encode())
    conn.next_event()
    conn.send(AuthenticationOk())
    conn.send(ReadyForQuery("I"))
    return conn


def test_a_connection_consumes_the_run_only_when_taken() -> None:
    conn = _in_normal_phase()
    conn.receive_data(RUN)
    run = conn.portal_run()
    assert run is not None and conn.buffered == len(RUN)  # looked at, not consumed
    assert isinstance(conn.next_event(), Bind)  # read one by one instead: the same bytes
    conn.receive_data(RUN)
    conn.next_event(), conn.next_event(), conn.next_event()  # Describe, Execute, Sync
    run = conn.portal_run()
    assert run is not None
    conn.receive_data(b"")  # fed again: the buffer compacts, and the run's offsets move
    with pytest.raises(LocalProtocolError):
        conn.take(run)
    run = conn.portal_run()
    assert run is not None
    conn.take(run)
    assert conn.buffered == 0
    conn.start_error_recovery()
    conn.receive_data(RUN)
    assert conn.portal_run() is None  # after an error, messages are dropped until Sync


def test_a_run_read_again_is_remembered_until_the_buffer_changes() -> None:
    conn = _in_normal_phase()
    conn.receive_data(RUN)
    first = conn.portal_run()
    assert first is not None and conn.portal_run() is first  # nothing changed: not re-read
    conn.take(first)
    other = Bind("", "S1", (1,), (b"\x00\x00\x00\x08", None), (1,))  # as long as BIND
    conn.receive_data(other.encode() + RUN[len(BIND.encode()):])
    second = conn.portal_run()
    assert second is not None and second.bind == other  # the new bytes, at the same offsets
    conn.next_event()  # the Bind read one by one: the head moved
    assert conn.portal_run() is None
