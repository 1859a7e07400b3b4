"""A client's socket as the rest of the server reaches it, outside its conversation.

``ClientHandler`` (``connection``) is one. What it does here:

- Its output: messages buffered, written at a flush, and waited on while the
  transport's buffer is full.
- Rows relayed as they come (``stream.RowSink``): a client's own read whose result
  passes ``stream.STREAM_AT`` bytes has its rows written as the sidecar sends
  them, after what goes before them (``rows_head``: its RowDescription in a simple
  Query, a portal run's BindComplete and description, nothing for an Execute), and
  the sidecar's socket is read only while this one is not full.
- Its end when its start-up slot is wanted (``slots.Starting``), or when our bug in
  the transport's callbacks lost a reply (``internal``).

Rules:
- Rows are relayed only while the connection says so (``rows_head``, set for the
  statement it runs), and once per statement (``relayed``). Then what it would
  have sent before the rows is not sent again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from glove_scratchpad import errors
from glove_scratchpad.stream import CodecProtocol
from glove_scratchpad.wire import ErrorResponse, ServerConnection

__all__ = ["FLUSH_AT", "ClientSocket", "Closed", "nothing", "row_description"]


def row_description(body: bytes) -> bytes:
    """A relayed result's RowDescription, framed from the body the sidecar sent."""
    return b"T" + (len(body) + 4).to_bytes(4, "big") + body


def nothing(_: bytes) -> bytes:
    return b""  # an Execute's rows: a Describe, if any, answered already


FLUSH_AT = 256 * 1024  # bytes of buffered output that trigger a write mid-result


class Closed(Exception):
    """The client went away, or must be disconnected."""


class ClientSocket(CodecProtocol):
    """A client connection's socket: its output buffer, and the rows relayed to it."""

    def __init__(self, conn: ServerConnection) -> None:
        super().__init__(conn)
        self.out: list[bytes] = []
        self.out_size = 0
        # While set, the running statement's rows may be relayed as they come: what goes
        # before them, given their RowDescription's body.
        self.rows_head: Callable[[bytes], bytes] | None = None
        self.relayed = False  # they were: what went before them went too

    # -- output --------------------------------------------------------------------

    def send(self, msg: Any) -> None:
        data = self.conn.send(msg)
        self.out.append(data)
        self.out_size += len(data)

    def send_rows(self, rows: Sequence[Any]) -> None:
        """Relayed rows: their bytes as the sidecar sent them, framed, in one piece
        (DataRow is always allowed in the normal phase: no state to check per row)."""
        if rows:
            data = b"".join([row.encode() for row in rows])
            self.out.append(data)
            self.out_size += len(data)

    async def flush(self) -> None:
        if self.out:
            self.write(b"".join(self.out))
            self.out.clear()
            self.out_size = 0
        await self.drain()

    def write(self, data: bytes) -> None:
        if self.closed:
            raise Closed()
        self.transport.write(data)  # type: ignore[union-attr]

    async def drain(self) -> None:
        await super().drain()
        if self.closed:
            raise Closed()

    async def maybe_flush(self) -> None:
        if self.out_size >= FLUSH_AT:
            await self.flush()

    # -- rows relayed as they come ------------------------------------------------

    def relaying(self, head: Callable[[bytes], bytes] | None) -> None:
        """A statement starts: its rows may be relayed as they come, after ``head``."""
        self.relayed, self.rows_head = False, head

    def accepts(self) -> bool:
        return self.rows_head is not None and not self.relayed

    def rows_begin(self, description: bytes, source: CodecProtocol) -> None:
        head = self.rows_head
        assert head is not None
        self.relayed = True
        self.out.append(head(description))
        self.relay_from(source)  # the sidecar is read only as fast as the client reads
        if not self.closed:
            self.transport.write(b"".join(self.out))  # type: ignore[union-attr]
        self.out.clear()
        self.out_size = 0

    def rows(self, data: bytes) -> None:
        if not self.closed:
            self.transport.write(data)  # type: ignore[union-attr]

    def rows_end(self) -> None:
        self.relay_from(None)

    def evict(self, err: errors.SqlError) -> None:
        """End the connection at once with ``err``, said FATAL: one still in its start-up
        whose slot is wanted, or one whose reply our bug lost (``callbacks``)."""
        with contextlib.suppress(Exception):
            self.transport.write(ServerConnection().send(ErrorResponse(  # type: ignore[union-attr]
                err.as_fields() | {"S": "FATAL", "V": "FATAL"})))
        if self.transport is not None:
            self.transport.close()
